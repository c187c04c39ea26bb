//! ConfigMap and Secret validation (`pkg/apis/core/validation/validation.go`
//! `ValidateConfigMap`, `ValidateConfigMapUpdate`, `ValidateSecret`,
//! `ValidateSecretUpdate`).

use base64::Engine;
use serde_json::Value;

use super::field::{self, key};
use crate::status::FieldError;

/// `core.MaxSecretSize`: the bound on a ConfigMap's or Secret's data, 1 MiB.
pub const MAX_SECRET_SIZE: usize = 1024 * 1024;

const IMMUTABLE_WHEN_SET: &str = "field is immutable when `immutable` is set";

/// `ValidateConfigMap`.
pub fn config_map(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let data = field::map_at(object, "data");
    let binary = field::map_at(object, "binaryData");
    let mut total = 0;
    for (name, value) in data.into_iter().flatten() {
        for message in field::config_map_key_errors(name) {
            errors.push(field::invalid(&key("data", name), name, message));
        }
        if binary.is_some_and(|binary| binary.contains_key(name)) {
            errors.push(field::invalid(
                &key("data", name),
                name,
                "duplicate of key present in binaryData",
            ));
        }
        total += value.as_str().map_or(0, str::len);
    }
    for (name, value) in binary.into_iter().flatten() {
        for message in field::config_map_key_errors(name) {
            errors.push(field::invalid(&key("binaryData", name), name, message));
        }
        total += decoded_len(value);
    }
    if total > MAX_SECRET_SIZE {
        // The whole object is the value: kube passes back "" as the path.
        errors.push(field::too_long("", MAX_SECRET_SIZE));
    }
    errors
}

/// `ValidateConfigMapUpdate` (its `ValidateConfigMap` follows).
pub fn config_map_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if is_immutable(old) {
        if !is_immutable(new) {
            errors.push(field::forbidden("immutable", IMMUTABLE_WHEN_SET));
        }
        for data in ["data", "binaryData"] {
            if empty_as_none(new.get(data)) != empty_as_none(old.get(data)) {
                errors.push(field::forbidden(data, IMMUTABLE_WHEN_SET));
            }
        }
    }
    errors.extend(config_map(new));
    errors
}

/// `reflect.DeepEqual` of two Go maps decoded from JSON: absent and `null`
/// are both a nil map (an empty `{}` is not, but omitempty never stores one).
fn empty_as_none(value: Option<&Value>) -> Option<&Value> {
    value.filter(|value| !value.is_null())
}

fn is_immutable(object: &Value) -> bool {
    object.get("immutable").and_then(Value::as_bool) == Some(true)
}

/// The length of a `[]byte` field's value as it is decoded (base64 in JSON).
fn decoded_len(value: &Value) -> usize {
    let text = value.as_str().unwrap_or_default();
    let padding = text.bytes().rev().take_while(|&byte| byte == b'=').count();
    (text.len() / 4 * 3 + (text.len() % 4).saturating_sub(1)).saturating_sub(padding)
}

fn decoded(value: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(value.as_str().unwrap_or_default())
        .unwrap_or_default()
}

/// `ValidateSecret`.
pub fn secret(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let data = field::map_at(object, "data");
    let mut total = 0;
    for (name, value) in data.into_iter().flatten() {
        for message in field::config_map_key_errors(name) {
            errors.push(field::invalid(&key("data", name), name, message));
        }
        total += decoded_len(value);
    }
    if total > MAX_SECRET_SIZE {
        errors.push(field::too_long("data", MAX_SECRET_SIZE));
    }
    let has = |name: &str| data.is_some_and(|data| data.contains_key(name));
    match field::str_at(object, "type") {
        "kubernetes.io/service-account-token" => {
            let account = object
                .pointer("/metadata/annotations/kubernetes.io~1service-account.name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if account.is_empty() {
                errors.push(field::required(
                    &key("metadata.annotations", "kubernetes.io/service-account.name"),
                    "",
                ));
            }
        }
        kind @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
            let data_key = if kind == "kubernetes.io/dockercfg" {
                ".dockercfg"
            } else {
                ".dockerconfigjson"
            };
            match data.and_then(|data| data.get(data_key)) {
                None => errors.push(field::required(&key("data", data_key), "")),
                Some(value) => {
                    if let Some(message) = json_object_error(&decoded(value)) {
                        errors.push(field::invalid(
                            &key("data", data_key),
                            "<secret contents redacted>",
                            message,
                        ));
                    }
                }
            }
        }
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            errors.push(field::required(&key("data", "username"), ""));
            errors.push(field::required(&key("data", "password"), ""));
        }
        "kubernetes.io/ssh-auth" => {
            let private_key = data.and_then(|data| data.get("ssh-privatekey"));
            if private_key.is_none_or(|value| decoded_len(value) == 0) {
                errors.push(field::required(&key("data", "ssh-privatekey"), ""));
            }
        }
        "kubernetes.io/tls" => {
            for name in ["tls.crt", "tls.key"] {
                if !has(name) {
                    errors.push(field::required(&key("data", name), ""));
                }
            }
        }
        _ => {}
    }
    errors
}

/// `json.Unmarshal(bytes, &map[string]interface{}{})`'s error, if any.
fn json_object_error(bytes: &[u8]) -> Option<String> {
    if let Some(syntax) = crate::decode_error::go_json_syntax_error(bytes) {
        return Some(syntax);
    }
    let kind = match serde_json::from_slice::<Value>(bytes).ok()? {
        Value::Null | Value::Object(_) => return None,
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
    };
    Some(format!(
        "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    ))
}

/// `ValidateSecretUpdate` (its `ValidateSecret` follows).
pub fn secret_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    errors.extend(field::immutable_string(
        "type",
        field::str_at(new, "type"),
        field::str_at(old, "type"),
    ));
    if is_immutable(old) {
        if !is_immutable(new) {
            errors.push(field::forbidden("immutable", IMMUTABLE_WHEN_SET));
        }
        if empty_as_none(new.get("data")) != empty_as_none(old.get("data")) {
            errors.push(field::forbidden("data", IMMUTABLE_WHEN_SET));
        }
    }
    errors.extend(secret(new));
    errors
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
