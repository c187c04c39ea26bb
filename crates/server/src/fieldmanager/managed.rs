//! `metadata.managedFields` entries (`managedfields/internal/managedfields.go`):
//! decoding, kube's identity of an entry (`BuildManagerIdentifier`), and
//! encoding in kube's order (`sortEncodedManagedFields`).

use serde_json::{json, Map, Value};

use super::fields_v1;
use super::raw_fields;
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
    /// An empty Update entry, to move an entry out of its place.
    pub fn placeholder() -> Entry {
        Entry {
            manager: String::new(),
            operation: Operation::Update,
            api_version: String::new(),
            time: None,
            subresource: String::new(),
            set: Set::new(),
        }
    }

    /// Entries are one per identity: appliers by (manager, subresource),
    /// updaters by (manager, apiVersion, subresource).
    pub fn same_identity(&self, other: &Entry) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == Operation::Apply || self.api_version == other.api_version)
    }

    /// The entry without its fields (an identity, a conflict's manager).
    pub fn without_set(&self) -> Entry {
        Entry {
            manager: self.manager.clone(),
            operation: self.operation,
            api_version: self.api_version.clone(),
            time: self.time.clone(),
            subresource: self.subresource.clone(),
            set: Set::new(),
        }
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
        let mut text = crate::go::strconv::quote(&self.manager);
        if !self.subresource.is_empty() {
            text.push_str(&format!(
                " with subresource {}",
                crate::go::strconv::quote(&self.subresource)
            ));
        }
        if self.operation == Operation::Update {
            text.push_str(&format!(" using {}", self.api_version));
        }
        text
    }

    fn to_json(&self, fields: Value) -> Value {
        let mut map = Map::new();
        map.insert("manager".into(), json!(self.manager));
        map.insert("operation".into(), json!(self.operation.as_str()));
        map.insert("apiVersion".into(), json!(self.api_version));
        if let Some(time) = &self.time {
            map.insert("time".into(), json!(time));
        }
        map.insert("fieldsType".into(), json!("FieldsV1"));
        map.insert("fieldsV1".into(), fields);
        if !self.subresource.is_empty() {
            map.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(map)
    }
}

/// An entry whose fields may still be the live object's FieldsV1 object
/// (`raw`, canonical: see [`raw_fields`]); `entry.set` is empty until
/// [`Managed::decoded`] decodes it.
#[derive(Debug, Clone)]
pub struct Managed<'v> {
    pub entry: Entry,
    pub raw: Option<&'v Map<String, Value>>,
}

impl From<Entry> for Managed<'_> {
    fn from(entry: Entry) -> Self {
        Managed { entry, raw: None }
    }
}

impl Managed<'_> {
    /// The entry with its set decoded.
    pub fn decoded(&mut self) -> &mut Entry {
        if let Some(raw) = self.raw.take() {
            let decoded = fields_v1::read_map(raw);
            // A canonical FieldsV1 object always decodes.
            debug_assert!(decoded.is_ok(), "canonical FieldsV1 failed to decode");
            self.entry.set = decoded.unwrap_or_default();
        }
        &mut self.entry
    }

    /// Whether the entry owns nothing (a raw FieldsV1 object is never empty).
    pub fn is_empty(&self) -> bool {
        self.raw.is_none() && self.entry.set.is_empty()
    }

    fn fields_json(&self) -> Value {
        match self.raw {
            Some(raw) => Value::Object(raw.clone()),
            None => fields_v1::to_value(&self.entry.set),
        }
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
    let entries = decode_entries(value, false)?;
    Ok(entries.into_iter().map(|managed| managed.entry).collect())
}

/// [`decode`], keeping canonical FieldsV1 objects undecoded.
pub fn decode_lazy(value: Option<&Value>) -> Result<Vec<Managed<'_>>, FieldManagerError> {
    decode_entries(value, true)
}

fn decode_entries(
    value: Option<&Value>,
    keep_raw: bool,
) -> Result<Vec<Managed<'_>>, FieldManagerError> {
    let entries = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(entries)) => entries,
        Some(_) => {
            return Err(FieldManagerError::Entry(
                "managedFields is not a list".into(),
            ))
        }
    };
    let mut out: Vec<Managed<'_>> = Vec::with_capacity(entries.len());
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
        let (set, raw_fields) = match raw.get("fieldsV1") {
            None | Some(Value::Null) => (Set::new(), None),
            Some(Value::Object(fields)) if keep_raw && raw_fields::is_canonical_map(fields) => {
                (Set::new(), Some(fields))
            }
            Some(fields) => (fields_v1::from_value(fields)?, None),
        };
        let entry = Entry {
            manager: text("manager").to_string(),
            operation,
            api_version: text("apiVersion").to_string(),
            time: raw.get("time").and_then(Value::as_str).map(str::to_string),
            subresource: text("subresource").to_string(),
            set,
        };
        let managed = Managed {
            entry,
            raw: raw_fields,
        };
        match out
            .iter_mut()
            .find(|existing| existing.entry.same_identity(&managed.entry))
        {
            Some(existing) => *existing = managed,
            None => out.push(managed),
        }
    }
    Ok(out)
}

/// The managedFields list in kube's order: operation (Apply first), time,
/// manager, apiVersion, subresource. `None` when no entry is left.
pub fn encode(entries: &[Entry]) -> Option<Value> {
    let entries: Vec<Managed<'_>> = entries.iter().cloned().map(Managed::from).collect();
    encode_lazy(&entries)
}

/// [`encode`] with raw FieldsV1 objects copied as they are.
pub fn encode_lazy(entries: &[Managed<'_>]) -> Option<Value> {
    let mut sorted: Vec<&Managed<'_>> = entries.iter().filter(|e| !e.is_empty()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(|p, q| {
        let (p, q) = (&p.entry, &q.entry);
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
        sorted
            .into_iter()
            .map(|managed| managed.entry.to_json(managed.fields_json()))
            .collect(),
    ))
}
