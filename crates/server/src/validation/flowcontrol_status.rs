//! `/status` writes of FlowSchema and PriorityLevelConfiguration
//! (`pkg/apis/flowcontrol/validation/validation.go`
//! `ValidateFlowSchemaStatusUpdate`, `ValidatePriorityLevelConfigurationStatusUpdate`):
//! each condition's type is set and no type appears twice. Both kinds'
//! status checks are the same function over their conditions.

use std::collections::BTreeSet;

use serde_json::Value;

use super::field::{self, child, index};
use crate::status::FieldError;

/// `ValidateFlowSchemaStatus` / `ValidatePriorityLevelConfigurationStatus`
/// of the object's `status`.
pub fn conditions_status(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let status = object.get("status").unwrap_or(&Value::Null);
    let conditions_path = child("status", "conditions");
    let mut types = BTreeSet::new();
    for (position, condition) in field::items_at(status, "conditions").iter().enumerate() {
        let condition_path = index(&conditions_path, position);
        let kind = field::str_at(condition, "type");
        if !types.insert(kind) {
            errors.push(field::duplicate(&child(&condition_path, "type"), kind));
        }
        if kind.is_empty() {
            errors.push(field::required(
                &child(&condition_path, "type"),
                "must not be empty",
            ));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Cases in the manner of kube's `TestValidateFlowSchemaStatus` and
    /// `TestValidatePriorityLevelConfigurationStatus`.
    #[test]
    fn condition_types_are_required_and_unique() {
        let object = |conditions: Value| json!({"metadata": {"name": "fs"}, "status": {"conditions": conditions}});
        assert!(conditions_status(&object(
            json!([{"type": "Dangling", "status": "True"}, {"type": "Other"}])
        ))
        .is_empty());
        assert!(conditions_status(&json!({"metadata": {"name": "fs"}})).is_empty());
        let errors: Vec<String> = conditions_status(&object(json!([
            {"type": "Dangling"},
            {"type": "Dangling"},
            {"status": "True"},
            {"type": ""},
        ])))
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            errors,
            [
                "status.conditions[1].type: Duplicate value: \"Dangling\"",
                "status.conditions[2].type: Required value: must not be empty",
                "status.conditions[3].type: Duplicate value: \"\"",
                "status.conditions[3].type: Required value: must not be empty",
            ]
        );
    }
}
