//! Field paths and `field.Error` constructors as kube's validation writes
//! them (`apimachinery/pkg/util/validation/field/{path,errors}.go`), and the
//! small `util/validation` checks every kind family shares.

use serde_json::{Map, Value};

use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind};

/// `field.Path.Child`.
pub fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// `field.Path.Index`.
pub fn index(path: &str, position: usize) -> String {
    format!("{path}[{position}]")
}

/// `field.Path.Key` (the key is printed as is, not quoted).
pub fn key(path: &str, name: &str) -> String {
    format!("{path}[{name}]")
}

/// `field.Invalid` of a string value (`%#v` quotes it).
pub fn invalid(path: &str, value: &str, detail: impl Into<String>) -> FieldError {
    FieldError::invalid(path, value, detail)
}

/// `field.Invalid` of a number (`%#v` prints it bare).
pub fn invalid_number(path: &str, value: i64, detail: impl Into<String>) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(value.to_string()),
        field: path.to_string(),
        detail: detail.into(),
    }
}

/// `field.Invalid` with a value already rendered as Go prints it.
pub fn invalid_rendered(path: &str, rendered: &str, detail: impl Into<String>) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(rendered.to_string()),
        field: path.to_string(),
        detail: detail.into(),
    }
}

pub fn required(path: &str, detail: impl Into<String>) -> FieldError {
    FieldError::required(path, detail)
}

pub fn forbidden(path: &str, detail: impl Into<String>) -> FieldError {
    FieldError::forbidden(path, detail)
}

pub fn not_supported(path: &str, value: &str, supported: &[&str]) -> FieldError {
    FieldError::not_supported(path, value, supported)
}

pub fn duplicate(path: &str, value: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Duplicate(quote(value)),
        field: path.to_string(),
        detail: String::new(),
    }
}

pub fn not_found(path: &str, value: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::NotFound(quote(value)),
        field: path.to_string(),
        detail: String::new(),
    }
}

pub fn too_long(path: &str, max: usize) -> FieldError {
    FieldError {
        kind: FieldErrorKind::TooLong(max),
        field: path.to_string(),
        detail: String::new(),
    }
}

/// `ValidateImmutableField` of a string field.
pub fn immutable_string(path: &str, new: &str, old: &str) -> Option<FieldError> {
    (new != old).then(|| invalid(path, new, FIELD_IMMUTABLE))
}

pub const FIELD_IMMUTABLE: &str = "field is immutable";

/// `validation.InclusiveRangeError(lo, hi)`.
pub fn inclusive_range_error(low: i64, high: i64) -> String {
    format!("must be between {low} and {high}, inclusive")
}

/// `apimachinery/pkg/api/validation.ValidateNonnegativeField`'s text.
pub const IS_NEGATIVE: &str = "must be greater than or equal to 0";

/// The string at `field` of an object, "" when absent or not a string.
pub fn str_at<'a>(object: &'a Value, field: &str) -> &'a str {
    object
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The object at `field`, when it is one.
pub fn map_at<'a>(object: &'a Value, field: &str) -> Option<&'a Map<String, Value>> {
    object.get(field).and_then(Value::as_object)
}

/// The items of the array at `field`; none when absent.
pub fn items_at<'a>(object: &'a Value, field: &str) -> &'a [Value] {
    object
        .get(field)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Whether `field` is set (present and not null), as a Go pointer is non-nil.
pub fn is_set(object: &Value, field: &str) -> bool {
    object.get(field).is_some_and(|value| !value.is_null())
}

/// `validation.IsValidPortNum`.
pub fn port_number_errors(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![inclusive_range_error(1, 65535)]
    }
}

/// `validation.IsValidPortName`.
pub fn port_name_errors(port: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if port.len() > 15 {
        errors.push("must be no more than 15 characters".to_string());
    }
    if port.is_empty()
        || !port
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
    {
        errors.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string(),
        );
    }
    if !port.bytes().any(|byte| byte.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)".to_string());
    }
    if port.contains("--") {
        errors.push("must not contain consecutive hyphens".to_string());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errors.push("must not begin or end with a hyphen".to_string());
    }
    errors
}

/// `validation.IsConfigMapKey`.
pub fn config_map_key_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push("must be no more than 253 characters".to_string());
    }
    if value.is_empty()
        || !value
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_'))
    {
        errors.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')".to_string());
    }
    errors.extend(chdir_prefix_errors(value));
    errors
}

/// `hasChDirPrefix`.
fn chdir_prefix_errors(value: &str) -> Vec<String> {
    if value == "." {
        vec!["must not be '.'".to_string()]
    } else if value == ".." {
        vec!["must not be '..'".to_string()]
    } else if value.starts_with("..") {
        vec!["must not start with '..'".to_string()]
    } else {
        Vec::new()
    }
}

/// `ValidateDNS1123Label(value, path)`.
pub fn dns1123_label(path: &str, value: &str, errors: &mut Vec<FieldError>) {
    for message in crate::names::dns1123_label(value) {
        errors.push(invalid(path, value, message));
    }
}

/// `ValidateDNS1123Subdomain(value, path)`.
pub fn dns1123_subdomain(path: &str, value: &str, errors: &mut Vec<FieldError>) {
    for message in crate::names::dns1123_subdomain(value) {
        errors.push(invalid(path, value, message));
    }
}

/// `unversionedvalidation.ValidateLabels(labels, path)`.
pub fn labels(path: &str, labels: Option<&Map<String, Value>>, errors: &mut Vec<FieldError>) {
    let Some(labels) = labels else { return };
    for (name, value) in labels {
        for message in crate::selector::is_qualified_name(name) {
            errors.push(invalid(path, name, message));
        }
        let text = value.as_str().unwrap_or_default();
        for message in crate::selector::is_valid_label_value(text) {
            errors.push(invalid(path, text, message));
        }
    }
}

/// `ValidateLabelName(name, path)`.
pub fn label_name(path: &str, name: &str, errors: &mut Vec<FieldError>) {
    for message in crate::selector::is_qualified_name(name) {
        errors.push(invalid(path, name, message));
    }
}

/// An integer field; `None` when absent or not an integer.
pub fn int_at(object: &Value, field: &str) -> Option<i64> {
    object.get(field).and_then(Value::as_i64)
}

/// `ValidateNonnegativeField` of an optional integer.
pub fn nonnegative(object: &Value, field: &str, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(value) = int_at(object, field) {
        if value < 0 {
            errors.push(invalid_number(&child(path, field), value, IS_NEGATIVE));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_as_kube() {
        assert_eq!(child("spec", "containers"), "spec.containers");
        assert_eq!(index("spec.containers", 2), "spec.containers[2]");
        assert_eq!(key("data", "a b"), "data[a b]");
        assert_eq!(child("", "data"), "data");
    }

    #[test]
    fn port_names_as_kube() {
        assert!(port_name_errors("http").is_empty());
        assert_eq!(
            port_name_errors("a--b"),
            vec!["must not contain consecutive hyphens"]
        );
        assert_eq!(port_name_errors("80").len(), 1);
        assert_eq!(port_name_errors("-ab").len(), 1);
        assert_eq!(port_name_errors("abcdefghijklmnop").len(), 1);
        assert_eq!(port_name_errors("HTTP").len(), 2);
    }

    #[test]
    fn config_map_keys_as_kube() {
        for good in ["a", "a.b", "A_B-c", ".a"] {
            assert!(config_map_key_errors(good).is_empty(), "{good}");
        }
        assert_eq!(config_map_key_errors("a b").len(), 1);
        assert_eq!(config_map_key_errors(".."), vec!["must not be '..'"]);
        assert_eq!(
            config_map_key_errors("..a"),
            vec!["must not start with '..'"]
        );
        assert_eq!(config_map_key_errors("").len(), 1);
        assert_eq!(config_map_key_errors(&"a".repeat(254)).len(), 1);
    }
}
