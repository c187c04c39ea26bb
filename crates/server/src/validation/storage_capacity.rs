//! storage.k8s.io/v1 CSIStorageCapacity and VolumeAttributesClass as
//! `pkg/apis/storage/validation` checks them (`ValidateCSIStorageCapacity`,
//! `ValidateCSIStorageCapacityUpdate`, `ValidateVolumeAttributesClass`,
//! `ValidateVolumeAttributesClassUpdate`).

use serde_json::Value;

use super::field;
use super::quota;
use super::selector;
use super::storage;
use crate::status::FieldError;

/// `ValidateCSIStorageCapacity`.
pub fn csi_storage_capacity(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(topology) = object.get("nodeTopology").filter(|value| !value.is_null()) {
        selector::validate(topology, "nodeTopology", &mut errors);
    }
    let class = field::str_at(object, "storageClassName");
    field::dns1123_subdomain("storageClassName", class, &mut errors);
    if let Some(capacity) = object.get("capacity").filter(|value| !value.is_null()) {
        quota::nonnegative_quantity(capacity, "capacity", &mut errors);
    }
    errors
}

/// `ValidateCSIStorageCapacityUpdate`: node topology and class name are immutable.
pub fn csi_storage_capacity_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = csi_storage_capacity(object);
    let topology = object.get("nodeTopology").filter(|value| !value.is_null());
    if topology != old.get("nodeTopology").filter(|value| !value.is_null()) {
        let rendered = topology.map_or(
            "null".to_string(),
            crate::validation::selector::go_label_selector,
        );
        errors.push(field::invalid_rendered(
            "nodeTopology",
            &rendered,
            field::FIELD_IMMUTABLE,
        ));
    }
    if let Some(error) = field::immutable_string(
        "storageClassName",
        field::str_at(object, "storageClassName"),
        field::str_at(old, "storageClassName"),
    ) {
        errors.push(error);
    }
    errors
}

/// `ValidateVolumeAttributesClass`: a driver name and at least one parameter.
pub fn volume_attributes_class(object: &Value) -> Vec<FieldError> {
    let mut errors = storage::provisioner(field::str_at(object, "driverName"), "driverName");
    let parameters = object.get("parameters");
    storage::parameters(parameters, "parameters", &mut errors);
    if parameters
        .and_then(Value::as_object)
        .is_none_or(|map| map.is_empty())
    {
        errors.push(field::required(
            "parameters",
            "must contain at least one key/value pair",
        ));
    }
    errors
}

/// `ValidateVolumeAttributesClassUpdate`: driver name and parameters cannot change.
pub fn volume_attributes_class_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if field::str_at(object, "driverName") != field::str_at(old, "driverName") {
        errors.push(field::forbidden(
            "driverName",
            "updates to driverName are forbidden.",
        ));
    }
    let parameters = |object: &Value| {
        object
            .get("parameters")
            .and_then(Value::as_object)
            .filter(|map| !map.is_empty())
            .cloned()
    };
    if parameters(object) != parameters(old) {
        errors.push(field::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestCSIStorageCapacityValidation`, `TestCSIStorageCapacityUpdateValidation`.
    #[test]
    fn csi_storage_capacities() {
        let capacity = |changes: Value| {
            let mut object = json!({"metadata": {"name": "c", "namespace": "default"},
                "storageClassName": "fast", "capacity": "1Gi",
                "nodeTopology": {"matchLabels": {"zone": "a"}}});
            if let (Some(object), Some(changes)) = (object.as_object_mut(), changes.as_object()) {
                object.extend(changes.clone());
            }
            object
        };
        assert!(csi_storage_capacity(&capacity(json!({}))).is_empty());
        assert!(
            csi_storage_capacity(&capacity(json!({"capacity": null, "nodeTopology": null})))
                .is_empty()
        );
        assert_eq!(
            texts(&csi_storage_capacity(&capacity(json!({"storageClassName": "Fast", "capacity": "-1"})))),
            [
                "storageClassName: Invalid value: \"Fast\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "capacity: Invalid value: \"-1\": must be greater than or equal to 0",
            ]
        );
        let old = capacity(json!({}));
        assert!(
            csi_storage_capacity_update(&capacity(json!({"capacity": "2Gi"})), &old).is_empty()
        );
        assert_eq!(
            texts(&csi_storage_capacity_update(
                &capacity(json!({"storageClassName": "slow", "nodeTopology": null})),
                &old
            )),
            [
                "nodeTopology: Invalid value: null: field is immutable",
                "storageClassName: Invalid value: \"slow\": field is immutable",
            ]
        );
    }

    /// Cases from kube's `TestValidateVolumeAttributesClass`, `TestValidateVolumeAttributesClassUpdate`.
    #[test]
    fn volume_attributes_classes() {
        let class = |driver: &str, parameters: Value| json!({"metadata": {"name": "v"}, "driverName": driver, "parameters": parameters});
        assert!(
            volume_attributes_class(&class("foo", json!({"kubernetes.io/foo-bar": "bar"})))
                .is_empty()
        );
        assert_eq!(
            texts(&volume_attributes_class(&class("", json!({})))),
            [
                "driverName: Required value",
                "parameters: Required value: must contain at least one key/value pair",
            ]
        );
        assert_eq!(
            texts(&volume_attributes_class(&class("invalid/foo/bar", json!({"": "a"})))),
            [
                "driverName: Invalid value: \"invalid/foo/bar\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                "parameters: Invalid value: \"\": field can not be empty.",
            ]
        );
        let old = class("foo", json!({"a": "b"}));
        assert!(volume_attributes_class_update(&old, &old).is_empty());
        assert_eq!(
            texts(&volume_attributes_class_update(
                &class("bar", json!({"a": "c"})),
                &old
            )),
            [
                "driverName: Forbidden: updates to driverName are forbidden.",
                "parameters: Forbidden: updates to parameters are forbidden.",
            ]
        );
    }
}
