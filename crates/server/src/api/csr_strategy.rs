//! The CertificateSigningRequest strategies
//! (`pkg/registry/certificates/certificates/strategy.go`): on create the
//! requesting user is recorded in the spec and the status cleared; the main
//! resource changes neither spec nor status; `/status` (the signer's) keeps
//! the spec and the Approved/Denied conditions; `/approval` (the approver's)
//! keeps the spec and the certificate. Both subresources keep the metadata
//! sent, and give conditions without timestamps `lastUpdateTime` and
//! `lastTransitionTime` (`populateConditionTimestamps`).

use serde_json::{json, Map, Value};

use crate::authn::UserInfo;
use crate::registry::ResourceDef;

pub fn is_certificate_signing_request(resource: &ResourceDef) -> bool {
    (resource.group, resource.kind) == ("certificates.k8s.io", "CertificateSigningRequest")
}

/// `csrStrategy.PrepareForCreate`: the spec's user fields are the
/// requester's (omitted when empty, as the v1 JSON omits them), the status
/// empty.
pub fn prepare_for_create(object: &mut Value, user: Option<&UserInfo>) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    map.insert("status".into(), json!({}));
    let spec = map.entry("spec").or_insert_with(|| json!({}));
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    for field in ["username", "uid", "groups", "extra"] {
        spec.remove(field);
    }
    let Some(user) = user else {
        return;
    };
    if !user.name.is_empty() {
        spec.insert("username".into(), json!(user.name));
    }
    if !user.uid.is_empty() {
        spec.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        spec.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        spec.insert("extra".into(), json!(user.extra));
    }
}

/// `PrepareForUpdate` of the main resource (`csrStrategy`), `/status`
/// (`csrStatusStrategy`) and `/approval` (`csrApprovalStrategy`), at `now`
/// (RFC 3339).
pub fn prepare_for_update(subresource: Option<&str>, old: &Value, new: &mut Value, now: &str) {
    let Some(map) = new.as_object_mut() else {
        return;
    };
    set_or_remove(map, "spec", old.get("spec"));
    match subresource {
        Some("status") => {
            for kind in ["Approved", "Denied"] {
                preserve_condition_instances(map, old, kind);
            }
            populate_condition_timestamps(map, old, now);
        }
        Some("approval") => {
            let status = map.entry("status").or_insert_with(|| json!({}));
            if !status.is_object() {
                *status = json!({});
            }
            if let Some(status) = status.as_object_mut() {
                set_or_remove(status, "certificate", old.pointer("/status/certificate"));
            }
            populate_condition_timestamps(map, old, now);
        }
        _ => set_or_remove(map, "status", old.get("status")),
    }
}

fn set_or_remove(map: &mut Map<String, Value>, field: &str, value: Option<&Value>) {
    match value {
        Some(value) => map.insert(field.to_string(), value.clone()),
        None => map.remove(field),
    };
}

fn conditions_mut(map: &mut Map<String, Value>) -> Option<&mut Vec<Value>> {
    map.get_mut("status")
        .and_then(|status| status.get_mut("conditions"))
        .and_then(Value::as_array_mut)
}

fn old_conditions(old: &Value) -> &[Value] {
    old.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn condition_field<'a>(condition: &'a Value, field: &str) -> &'a str {
    condition
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `preserveConditionInstances`: when the update has as many conditions of
/// `kind` as the old object, they are the old ones (an added or removed one
/// is left for validation to refuse).
fn preserve_condition_instances(map: &mut Map<String, Value>, old: &Value, kind: &str) {
    let old_of_kind: Vec<&Value> = old_conditions(old)
        .iter()
        .filter(|condition| condition_field(condition, "type") == kind)
        .collect();
    let Some(conditions) = conditions_mut(map) else {
        return;
    };
    let new_positions: Vec<usize> = conditions
        .iter()
        .enumerate()
        .filter(|(_, condition)| condition_field(condition, "type") == kind)
        .map(|(position, _)| position)
        .collect();
    if new_positions.len() != old_of_kind.len() {
        return;
    }
    for (position, old_condition) in new_positions.into_iter().zip(old_of_kind) {
        conditions[position] = old_condition.clone();
    }
}

/// `populateConditionTimestamps`: a missing `lastUpdateTime` is now; a
/// missing `lastTransitionTime` is the one of an old condition of the same
/// type and status, else now.
fn populate_condition_timestamps(map: &mut Map<String, Value>, old: &Value, now: &str) {
    let old_conditions = old_conditions(old);
    let Some(conditions) = conditions_mut(map) else {
        return;
    };
    for condition in conditions.iter_mut() {
        let kind = condition_field(condition, "type").to_string();
        let status = condition_field(condition, "status").to_string();
        let Some(condition) = condition.as_object_mut() else {
            continue;
        };
        let unset = |condition: &Map<String, Value>, field: &str| {
            condition
                .get(field)
                .is_none_or(|value| value.is_null() || value.as_str() == Some(""))
        };
        if unset(condition, "lastUpdateTime") {
            condition.insert("lastUpdateTime".into(), json!(now));
        }
        if unset(condition, "lastTransitionTime") {
            let earlier = old_conditions.iter().find_map(|old_condition| {
                let same = condition_field(old_condition, "type") == kind
                    && condition_field(old_condition, "status") == status;
                let time = condition_field(old_condition, "lastTransitionTime");
                (same && !time.is_empty()).then(|| time.to_string())
            });
            condition.insert(
                "lastTransitionTime".into(),
                json!(earlier.unwrap_or_else(|| now.to_string())),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-01-02T03:04:05Z";

    fn csr(conditions: Value, certificate: Option<&str>) -> Value {
        let mut status = json!({"conditions": conditions});
        if let Some(certificate) = certificate {
            status["certificate"] = json!(certificate);
        }
        json!({"metadata": {"name": "c", "labels": {"a": "b"}},
               "spec": {"signerName": "example.com/s", "usages": ["client auth"]},
               "status": status})
    }

    #[test]
    fn create_records_the_requester_and_clears_status() {
        let user = UserInfo {
            name: "alice".into(),
            uid: String::new(),
            groups: vec!["system:authenticated".into()],
            extra: Default::default(),
        };
        let mut object = json!({"spec": {"username": "mallory", "uid": "x", "request": "r"},
                                "status": {"certificate": "Zm9v"}});
        prepare_for_create(&mut object, Some(&user));
        assert_eq!(
            object,
            json!({"spec": {"request": "r", "username": "alice", "groups": ["system:authenticated"]},
                   "status": {}})
        );
    }

    #[test]
    fn the_main_resource_keeps_spec_and_status() {
        let old = csr(json!([]), None);
        let mut new = csr(
            json!([{"type": "Approved", "status": "True"}]),
            Some("Zm9v"),
        );
        new["spec"]["signerName"] = json!("other.io/x");
        new["metadata"]["labels"]["a"] = json!("c");
        prepare_for_update(None, &old, &mut new, NOW);
        assert_eq!(new["spec"], old["spec"]);
        assert_eq!(new["status"], old["status"]);
        assert_eq!(new["metadata"]["labels"]["a"], "c");
    }

    #[test]
    fn approval_changes_conditions_only_and_stamps_them() {
        let old = csr(
            json!([{"type": "Failed", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z"}]),
            None,
        );
        let mut new = csr(
            json!([{"type": "Failed", "status": "True"}, {"type": "Approved", "status": "True"}]),
            Some("Zm9v"),
        );
        new["spec"]["usages"] = json!(["server auth"]);
        prepare_for_update(Some("approval"), &old, &mut new, NOW);
        // A null status keeps the old certificate too.
        let signed = csr(json!([]), Some("Zm9v"));
        let mut cleared = csr(json!([]), None);
        cleared["status"] = Value::Null;
        prepare_for_update(Some("approval"), &signed, &mut cleared, NOW);
        assert_eq!(cleared["status"], json!({"certificate": "Zm9v"}));
        assert_eq!(new["spec"], old["spec"]);
        assert!(new["status"].get("certificate").is_none());
        let conditions = &new["status"]["conditions"];
        assert_eq!(conditions[0]["lastTransitionTime"], "2020-01-01T00:00:00Z");
        assert_eq!(conditions[0]["lastUpdateTime"], NOW);
        assert_eq!(conditions[1]["lastTransitionTime"], NOW);
        assert_eq!(conditions[1]["lastUpdateTime"], NOW);
    }

    #[test]
    fn status_keeps_approval_conditions_and_sets_the_certificate() {
        let approved = json!({"type": "Approved", "status": "True", "reason": "R",
                              "lastUpdateTime": "2020-01-01T00:00:00Z",
                              "lastTransitionTime": "2020-01-01T00:00:00Z"});
        let old = csr(json!([approved.clone()]), None);
        let mut new = csr(
            json!([{"type": "Approved", "status": "True", "reason": "changed"}]),
            Some("Zm9v"),
        );
        prepare_for_update(Some("status"), &old, &mut new, NOW);
        assert_eq!(new["status"]["conditions"], json!([approved]));
        assert_eq!(new["status"]["certificate"], "Zm9v");
    }
}
