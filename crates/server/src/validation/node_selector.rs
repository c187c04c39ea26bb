//! Core's node selector rules (`pkg/apis/core/validation/validation.go`
//! `ValidateNodeSelector` (with or without `allowInvalidLabelValueInRequiredNodeAffinity`),
//! `ValidateNodeSelectorTerm`, `ValidateNodeSelectorRequirement`,
//! `ValidateNodeFieldSelectorRequirement`), as resource.k8s.io validates
//! a ResourceSlice's and an allocation's node selector, a pod's node
//! affinity and a PersistentVolume's `nodeAffinity.required` are validated.

use serde_json::Value;

use super::field::{self, child, index};
use crate::status::FieldError;

/// `ValidateNodeSelector`: at least one term, each term's expressions and fields.
pub fn node_selector(selector: &Value, path: &str, errors: &mut Vec<FieldError>) {
    node_selector_with(selector, path, false, errors);
}

/// `ValidateNodeSelector` with its `allowInvalidLabelValueInRequiredNodeAffinity`
/// option: when set, the values of label requirements are not checked.
pub fn node_selector_with(
    selector: &Value,
    path: &str,
    allow_invalid_label_values: bool,
    errors: &mut Vec<FieldError>,
) {
    let terms_path = child(path, "nodeSelectorTerms");
    let terms = field::items_at(selector, "nodeSelectorTerms");
    if terms.is_empty() {
        errors.push(field::required(
            &terms_path,
            "must have at least one node selector term",
        ));
        return;
    }
    for (position, term) in terms.iter().enumerate() {
        node_selector_term(
            term,
            allow_invalid_label_values,
            &index(&terms_path, position),
            errors,
        );
    }
}

/// `ValidateNodeSelectorTerm`: label requirements (their values unchecked
/// when `allow_invalid_label_values`, as for preferred node affinity terms),
/// then field requirements.
pub fn node_selector_term(
    term: &Value,
    allow_invalid_label_values: bool,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let expressions_path = child(path, "matchExpressions");
    for (position, requirement) in field::items_at(term, "matchExpressions").iter().enumerate() {
        label_requirement(
            requirement,
            allow_invalid_label_values,
            &index(&expressions_path, position),
            errors,
        );
    }
    let fields_path = child(path, "matchFields");
    for (position, requirement) in field::items_at(term, "matchFields").iter().enumerate() {
        field_requirement(requirement, &index(&fields_path, position), errors);
    }
}

fn values(requirement: &Value) -> Vec<&str> {
    field::items_at(requirement, "values")
        .iter()
        .map(|value| value.as_str().unwrap_or_default())
        .collect()
}

/// `ValidateNodeSelectorRequirement`.
fn label_requirement(
    requirement: &Value,
    allow_invalid_label_values: bool,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let values = values(requirement);
    let values_path = child(path, "values");
    match field::str_at(requirement, "operator") {
        "In" | "NotIn" => {
            if values.is_empty() {
                errors.push(field::required(
                    &values_path,
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
        }
        "Exists" | "DoesNotExist" => {
            if !values.is_empty() {
                errors.push(field::forbidden(
                    &values_path,
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
        }
        "Gt" | "Lt" => {
            if values.len() != 1 {
                errors.push(field::required(
                    &values_path,
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                ));
            }
        }
        other => errors.push(field::invalid(
            &child(path, "operator"),
            other,
            "not a valid selector operator",
        )),
    }
    field::label_name(
        &child(path, "key"),
        field::str_at(requirement, "key"),
        errors,
    );
    if allow_invalid_label_values {
        return;
    }
    for (position, value) in values.iter().enumerate() {
        for message in crate::selector::is_valid_label_value(value) {
            errors.push(field::invalid(
                &index(&values_path, position),
                value,
                message,
            ));
        }
    }
}

/// `helper.HasInvalidLabelValueInNodeSelectorTerms`: whether a label
/// requirement of some term has a value that is not a valid label value.
pub fn has_invalid_label_value(selector: &Value) -> bool {
    field::items_at(selector, "nodeSelectorTerms")
        .iter()
        .flat_map(|term| field::items_at(term, "matchExpressions"))
        .flat_map(values)
        .any(|value| !crate::selector::is_valid_label_value(value).is_empty())
}

/// `ValidateNodeFieldSelectorRequirement`: only `metadata.name`, one node name.
fn field_requirement(requirement: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let values = values(requirement);
    let values_path = child(path, "values");
    match field::str_at(requirement, "operator") {
        "In" | "NotIn" => {
            if values.len() != 1 {
                errors.push(field::required(
                    &values_path,
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                ));
            }
        }
        other => errors.push(field::invalid(
            &child(path, "operator"),
            other,
            "not a valid selector operator",
        )),
    }
    let key = field::str_at(requirement, "key");
    if key != "metadata.name" {
        errors.push(field::invalid(
            &child(path, "key"),
            key,
            "not a valid field selector key",
        ));
        return;
    }
    for (position, value) in values.iter().enumerate() {
        field::dns1123_subdomain(&index(&values_path, position), value, errors);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn node_selectors_are_validated_as_core_validates_them() {
        let mut errors = Vec::new();
        node_selector(
            &json!({"nodeSelectorTerms": []}),
            "spec.nodeSelector",
            &mut errors,
        );
        assert_eq!(
            errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["spec.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term"]
        );
        let mut errors = Vec::new();
        node_selector(
            &json!({"nodeSelectorTerms": [{
                "matchExpressions": [
                    {"key": "zone", "operator": "In", "values": ["a"]},
                    {"key": "zone", "operator": "In"},
                    {"key": "zone", "operator": "Exists", "values": ["a"]},
                    {"key": "n", "operator": "Gt", "values": ["1", "2"]},
                    {"key": "bad key", "operator": "Near", "values": ["-x-"]},
                ],
                "matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["node-1"]},
                    {"key": "metadata.name", "operator": "In", "values": ["Node_1"]},
                    {"key": "spec.x", "operator": "Exists"},
                ],
            }]}),
            "spec.nodeSelector",
            &mut errors,
        );
        let p = "spec.nodeSelector.nodeSelectorTerms[0]";
        assert_eq!(
            errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                format!("{p}.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
                format!("{p}.matchExpressions[2].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
                format!("{p}.matchExpressions[3].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"),
                format!("{p}.matchExpressions[4].operator: Invalid value: \"Near\": not a valid selector operator"),
                format!("{p}.matchExpressions[4].key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
                format!("{p}.matchExpressions[4].values[0]: Invalid value: \"-x-\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
                format!("{p}.matchFields[1].values[0]: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
                format!("{p}.matchFields[2].operator: Invalid value: \"Exists\": not a valid selector operator"),
                format!("{p}.matchFields[2].key: Invalid value: \"spec.x\": not a valid field selector key"),
            ]
        );
    }
}
