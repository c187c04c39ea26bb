//! `persistentvolumeclaims/status` writes (`pkg/apis/core/validation/validation.go`
//! `ValidatePersistentVolumeClaimStatusUpdate`, `validatePersistentVolumeClaimResourceKey`,
//! as of kubernetes commit 000f26050b9b, with `RecoverVolumeExpansionFailure`
//! on as in 1.34): capacity and allocated resources are valid quantities,
//! `allocatedResourceStatuses` name `storage` (or a prefixed resource) with a
//! known resize state. Map entries are checked in name order (Go's order is random).

use serde_json::Value;

use super::field::{self, key};
use super::quota;
use crate::status::FieldError;

/// `resizeStatusSet`, sorted as `sets.List` prints it.
const RESIZE_STATUSES: [&str; 5] = [
    "ControllerResizeInProgress",
    "ControllerResizeInfeasible",
    "NodeResizeInProgress",
    "NodeResizeInfeasible",
    "NodeResizePending",
];

/// `ValidatePersistentVolumeClaimStatusUpdate` (ObjectMeta is the write
/// path's; the resourceVersion is always set by then).
pub fn claim_status_update(new: &Value) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = new.get("spec").unwrap_or(&null);
    let status = new.get("status").unwrap_or(&null);
    let mut errors = Vec::new();
    if field::items_at(spec, "accessModes").is_empty() {
        // kube spells this path with a capital S.
        errors.push(field::required("Spec.accessModes", ""));
    }
    for (name, quantity) in sorted(status, "capacity") {
        quota::basic_resource(quantity, &key("status.capacity", name), &mut errors);
    }
    let statuses_path = "status.allocatedResourceStatus";
    for (name, state) in sorted(status, "allocatedResourceStatuses") {
        errors.extend(resource_key(name, statuses_path));
        if !RESIZE_STATUSES.contains(&state.as_str().unwrap_or_default()) {
            // kube reports the key, not the state.
            errors.push(field::not_supported(statuses_path, name, &RESIZE_STATUSES));
        }
    }
    let allocated_path = "status.allocatedResources";
    for (name, quantity) in sorted(status, "allocatedResources") {
        let key_errors = resource_key(name, allocated_path);
        if !key_errors.is_empty() {
            errors.extend(key_errors);
            continue;
        }
        let quantity_path = key(allocated_path, name);
        let before = errors.len();
        quota::basic_resource(quantity, &quantity_path, &mut errors);
        if errors.len() == before {
            quota::resource_quantity_value("storage", quantity, &quantity_path, &mut errors);
        }
    }
    errors
}

/// `validatePersistentVolumeClaimResourceKey`: a qualified name; a native
/// resource may only be `storage`.
fn resource_key(name: &str, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    field::label_name(path, name, &mut errors);
    if errors.is_empty() && quota::is_native(name) && name != "storage" {
        errors.push(field::not_supported(path, name, &["storage"]));
    }
    errors
}

fn sorted<'a>(status: &'a Value, name: &str) -> Vec<(&'a str, &'a Value)> {
    let mut entries: Vec<(&str, &Value)> = field::map_at(status, name)
        .map(|map| {
            map.iter()
                .map(|(name, value)| (name.as_str(), value))
                .collect()
        })
        .unwrap_or_default();
    entries.sort_by(|left, right| left.0.cmp(right.0));
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors
            .iter()
            .map(|error| format!("{}: {}", error.field, error.body()))
            .collect()
    }

    fn claim(status: Value) -> Value {
        json!({"spec": {"accessModes": ["ReadWriteOnce"]}, "status": status})
    }

    /// Cases of `TestValidatePersistentVolumeClaimStatusUpdate`.
    #[test]
    fn resize_fields_are_kubes() {
        let good = claim(json!({"capacity": {"storage": "10Gi"},
            "allocatedResources": {"storage": "10Gi", "example.com/foo": "1"},
            "allocatedResourceStatuses": {"storage": "ControllerResizeInProgress"}}));
        assert!(claim_status_update(&good).is_empty());
        let bad = claim(json!({"capacity": {"storage": "-10Gi"},
            "allocatedResources": {"memory": "10Gi", "storage": "-500m"},
            "allocatedResourceStatuses": {"storage": "Resizing", "cpu": "NodeResizePending"}}));
        assert_eq!(
            messages(&claim_status_update(&bad)),
            [
                "status.capacity[storage]: Invalid value: -10737418240: must be a valid resource quantity",
                "status.allocatedResourceStatus: Unsupported value: \"cpu\": supported values: \"storage\"",
                "status.allocatedResourceStatus: Unsupported value: \"storage\": supported values: \"ControllerResizeInProgress\", \"ControllerResizeInfeasible\", \"NodeResizeInProgress\", \"NodeResizeInfeasible\", \"NodeResizePending\"",
                "status.allocatedResources: Unsupported value: \"memory\": supported values: \"storage\"",
                "status.allocatedResources[storage]: Invalid value: \"-500m\": must be greater than or equal to 0",
            ]
        );
        assert_eq!(
            messages(&claim_status_update(&json!({"spec": {}}))),
            ["Spec.accessModes: Required value"]
        );
    }
}
