//! `status.conditions` of a CRD (`apiextensions-apiserver/pkg/apihelpers`).

use serde_json::{json, Value};

/// A condition of `status.conditions` is `True`.
pub fn condition_true(crd: &Value, kind: &str) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|condition| {
                condition.get("type").and_then(Value::as_str) == Some(kind)
                    && condition.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

/// `SetCRDCondition`: appended when new; an existing one keeps its
/// lastTransitionTime unless its status changes.
pub fn set_condition(
    crd: &mut Value,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    let Some(map) = crd.as_object_mut() else {
        return;
    };
    let status_map = map.entry("status").or_insert_with(|| json!({}));
    if !status_map.is_object() {
        *status_map = json!({});
    }
    let conditions = &mut status_map["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let fresh = json!({
        "type": kind,
        "status": status,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    });
    match list
        .iter_mut()
        .find(|condition| condition.get("type").and_then(Value::as_str) == Some(kind))
    {
        Some(existing) if existing.get("status").and_then(Value::as_str) == Some(status) => {
            existing["reason"] = json!(reason);
            existing["message"] = json!(message);
        }
        Some(existing) => *existing = fresh,
        None => list.push(fresh),
    }
}
