//! apps/v1 ControllerRevision as `pkg/apis/apps/validation` checks it
//! (`ValidateControllerRevisionCreate`, `ValidateControllerRevisionUpdate`):
//! `data` required, `revision` not negative, `data` immutable.

use serde_json::Value;

use super::field;
use crate::status::FieldError;

/// `ValidateControllerRevision`.
pub fn controller_revision(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if !field::is_set(object, "data") {
        errors.push(field::required("data", "data is mandatory"));
    }
    field::nonnegative(object, "revision", "", &mut errors);
    errors
}

/// `ValidateControllerRevisionUpdate`.
pub fn controller_revision_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = controller_revision(object);
    let data = object.get("data").filter(|value| !value.is_null());
    if data != old.get("data").filter(|value| !value.is_null()) {
        errors.push(field::invalid_rendered(
            "data",
            &go_unknown(data),
            field::FIELD_IMMUTABLE,
        ));
    }
    errors
}

/// `%#v` of the internal `data`: the `runtime.Unknown` a RawExtension
/// converts to (its JSON bytes as Go prints a byte slice).
fn go_unknown(data: Option<&Value>) -> String {
    let Some(data) = data else {
        return "null".to_string();
    };
    let bytes: Vec<String> = data
        .to_string()
        .bytes()
        .map(|byte| format!("{byte:#x}"))
        .collect();
    format!(
        "runtime.Unknown{{TypeMeta:runtime.TypeMeta{{APIVersion:\"\", Kind:\"\"}}, Raw:[]uint8{{{}}}, ContentEncoding:\"\", ContentType:\"application/json\"}}",
        bytes.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestValidateControllerRevision`, `TestValidateControllerRevisionUpdate`.
    #[test]
    fn controller_revisions() {
        let revision = |data: Value, number: i64| json!({"metadata": {"name": "r", "namespace": "default"}, "data": data, "revision": number});
        assert!(controller_revision(&revision(json!({"a": 1}), 0)).is_empty());
        assert_eq!(
            texts(&controller_revision(&revision(Value::Null, -1))),
            [
                "data: Required value: data is mandatory",
                "revision: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
        let old = revision(json!({"a": 1}), 1);
        assert!(controller_revision_update(&revision(json!({"a": 1}), 2), &old).is_empty());
        assert_eq!(
            texts(&controller_revision_update(&revision(json!(1), 1), &old)),
            ["data: Invalid value: runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:\"\", Kind:\"\"}, Raw:[]uint8{0x31}, ContentEncoding:\"\", ContentType:\"application/json\"}: field is immutable"]
        );
    }
}
