//! Server-side apply and kubectl's client-side-apply annotation
//! (`internal/lastappliedmanager.go`, `lastappliedupdater.go`): a kubectl
//! server-side apply may take over fields that `kubectl apply` (client side)
//! set, when the annotation still matches the live object, and keeps the
//! annotation in step with what `kubectl` applies.

use serde_json::Value;

use super::set::Set;
use super::{walk, FieldManager, FieldManagerError};

/// `corev1.LastAppliedConfigAnnotation`.
pub const ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// `TotalAnnotationSizeLimitB`.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

fn last_applied(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(ANNOTATION))
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
}

impl FieldManager<'_> {
    /// Apply, with kube's `lastAppliedManager` and `lastAppliedUpdater`
    /// around it.
    pub fn apply_with_last_applied(
        &self,
        live: &Value,
        config: &Value,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<Value, FieldManagerError> {
        let mut object = match self.apply(live, config, manager, force, now) {
            Err(FieldManagerError::Conflicts(conflicts)) if manager.starts_with("kubectl") => {
                let Some(allowed) = self.allowed_from_last_applied(live) else {
                    return Err(FieldManagerError::Conflicts(conflicts));
                };
                let remaining: Vec<_> = conflicts
                    .into_iter()
                    .filter(|conflict| !allowed.has(&conflict.path))
                    .collect();
                if !remaining.is_empty() {
                    return Err(FieldManagerError::Conflicts(remaining));
                }
                self.apply(live, config, manager, true, now)?
            }
            other => other?,
        };
        if manager == "kubectl" && last_applied(&object).is_some() {
            set_last_applied(&mut object, build_last_applied(config));
        }
        Ok(object)
    }

    /// The fields of the annotation whose values still match the live object.
    fn allowed_from_last_applied(&self, live: &Value) -> Option<Set> {
        let text = last_applied(live)?;
        let applied: Value = serde_json::from_str(text).ok()?;
        if !applied.is_object() {
            return None;
        }
        let mut live = live.clone();
        if let Some(metadata) = live.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("managedFields");
        }
        let fields = walk::to_field_set(&self.schema, &applied);
        let comparison = walk::compare(&self.schema, &applied, &live);
        Some(
            fields
                .difference(&comparison.modified)
                .difference(&comparison.added)
                .difference(&comparison.removed),
        )
    }
}

/// `buildLastApplied`: the applied configuration without the annotation,
/// encoded as Go's `json.Encoder` does (sorted keys, HTML characters
/// escaped, a trailing newline).
fn build_last_applied(config: &Value) -> String {
    let mut config = config.clone();
    if let Some(annotations) = config
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(ANNOTATION);
    }
    let mut text = serde_json::to_string(&config).unwrap_or_default();
    if text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        text = text
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
            .replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029");
    }
    text.push('\n');
    text
}

/// `setLastApplied`: dropped instead when the annotations would be too large.
fn set_last_applied(object: &mut Value, value: String) {
    let Some(annotations) = object
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    annotations.insert(ANNOTATION.to_string(), Value::String(value));
    let total: usize = annotations
        .iter()
        .map(|(key, value)| key.len() + value.as_str().map_or(0, str::len))
        .sum();
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        annotations.remove(ANNOTATION);
    }
}
