//! `metadata.managedFields` entries (`managedfields/internal/managedfields.go`):
//! decoding, kube's identity of an entry (`BuildManagerIdentifier`), and
//! encoding in kube's order (`sortEncodedManagedFields`).

use serde_json::{json, Map, Value};

use super::fields_v1;
use super::set::Set;
use super::FieldManagerError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One manager's fields (a `ManagedFieldsEntry` decoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub manager: String,
    pub operation: Operation,
    pub api_version: String,
    pub time: Option<String>,
    pub subresource: String,
    pub set: Set,
}

impl Entry {
    /// Entries are one per identity: appliers by (manager, subresource),
    /// updaters by (manager, apiVersion, subresource).
    pub fn same_identity(&self, other: &Entry) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == Operation::Apply || self.api_version == other.api_version)
    }

    /// `BuildManagerIdentifier`: the entry's JSON without fields, time and
    /// (for appliers) apiVersion.
    pub fn identifier(&self) -> String {
        let mut out = format!(
            "{{\"manager\":{},\"operation\":\"{}\"",
            json!(self.manager),
            self.operation.as_str()
        );
        if self.operation == Operation::Update && !self.api_version.is_empty() {
            out.push_str(&format!(",\"apiVersion\":{}", json!(self.api_version)));
        }
        if !self.subresource.is_empty() {
            out.push_str(&format!(",\"subresource\":{}", json!(self.subresource)));
        }
        out.push('}');
        out
    }

    /// `printManager` in kube's conflict messages.
    pub fn describe(&self) -> String {
        let mut text = crate::status::go_quote(&self.manager);
        if !self.subresource.is_empty() {
            text.push_str(&format!(
                " with subresource {}",
                crate::status::go_quote(&self.subresource)
            ));
        }
        if self.operation == Operation::Update {
            text.push_str(&format!(" using {}", self.api_version));
        }
        text
    }

    fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("manager".into(), json!(self.manager));
        map.insert("operation".into(), json!(self.operation.as_str()));
        map.insert("apiVersion".into(), json!(self.api_version));
        if let Some(time) = &self.time {
            map.insert("time".into(), json!(time));
        }
        map.insert("fieldsType".into(), json!("FieldsV1"));
        map.insert("fieldsV1".into(), fields_v1::to_value(&self.set));
        if !self.subresource.is_empty() {
            map.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(map)
    }
}

/// Whether a request's managedFields asks for a reset (`isResetManagedFields`):
/// an empty list, or a list of one empty entry.
pub fn is_reset(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Array(entries)) => match entries.as_slice() {
            [] => true,
            [only] => only.as_object().is_some_and(Map::is_empty),
            _ => false,
        },
        _ => false,
    }
}

/// `decodeManagedFields`: every entry must be `Apply` or `Update`, name an
/// apiVersion and use FieldsV1. A later entry with the same identity wins.
pub fn decode(value: Option<&Value>) -> Result<Vec<Entry>, FieldManagerError> {
    let entries = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(entries)) => entries,
        Some(_) => {
            return Err(FieldManagerError::Entry(
                "managedFields is not a list".into(),
            ))
        }
    };
    let mut out: Vec<Entry> = Vec::with_capacity(entries.len());
    for (index, raw) in entries.iter().enumerate() {
        let text = |key: &str| raw.get(key).and_then(Value::as_str).unwrap_or_default();
        let operation = match text("operation") {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => {
                return Err(FieldManagerError::Entry(
                    "operation must be `Apply` or `Update`".into(),
                ))
            }
        };
        if text("apiVersion").is_empty() {
            return Err(FieldManagerError::Entry(
                "apiVersion must not be empty".into(),
            ));
        }
        match text("fieldsType") {
            "FieldsV1" => {}
            "" => {
                return Err(FieldManagerError::Entry(format!(
                    "missing fieldsType in managed fields entry {index}"
                )))
            }
            other => {
                return Err(FieldManagerError::Entry(format!(
                    "invalid fieldsType {other:?} in managed fields entry {index}"
                )))
            }
        }
        let set = match raw.get("fieldsV1") {
            None | Some(Value::Null) => Set::new(),
            Some(fields) => fields_v1::from_value(fields)?,
        };
        let entry = Entry {
            manager: text("manager").to_string(),
            operation,
            api_version: text("apiVersion").to_string(),
            time: raw.get("time").and_then(Value::as_str).map(str::to_string),
            subresource: text("subresource").to_string(),
            set,
        };
        match out
            .iter_mut()
            .find(|existing| existing.same_identity(&entry))
        {
            Some(existing) => *existing = entry,
            None => out.push(entry),
        }
    }
    Ok(out)
}

/// The managedFields list in kube's order: operation (Apply first), time,
/// manager, apiVersion, subresource. `None` when no entry is left.
pub fn encode(entries: &[Entry]) -> Option<Value> {
    let mut sorted: Vec<&Entry> = entries.iter().filter(|e| !e.set.is_empty()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(|p, q| {
        p.operation
            .as_str()
            .cmp(q.operation.as_str())
            .then_with(|| {
                // RFC 3339 seconds in UTC sort as text; no time sorts first.
                p.time
                    .as_deref()
                    .unwrap_or("")
                    .cmp(q.time.as_deref().unwrap_or(""))
            })
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    Some(Value::Array(
        sorted.into_iter().map(Entry::to_json).collect(),
    ))
}
