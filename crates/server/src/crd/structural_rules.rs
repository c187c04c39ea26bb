//! The structural-schema rules a CRD's `openAPIV3Schema` must follow
//! (apiextensions `pkg/apiserver/schema/validation.go` `ValidateStructural`:
//! `validateStructuralInvariants`, `validateValueValidation`,
//! `validateNestedValueValidation`, the metadata invariants, and
//! `complete.go`'s completeness). The OpenAPI rules kube checks beside them
//! are in `openapi_rules.rs`, the defaults in `default_rules.rs`.
//! `apiextensions.k8s.io/v1` CRDs must be structural, so each failure is a
//! field error of the CRD, on kube's path and with kube's message, sorted by
//! message as kube sorts them.
//!
//! The wording after `must be a valid regular expression, but isn't:` is
//! the Rust `regex` crate's, not Go's.

use serde_json::{Map, Value};

use crate::status::{FieldError, FieldErrorKind};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Every rule `schema` (at `path`, e.g.
/// `spec.versions[0].schema.openAPIV3Schema`) breaks.
pub fn validate(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    invariants(schema, Level::Root, path, &mut errors);
    completeness(schema, path, &mut errors);
    errors.sort_by_cached_key(ToString::to_string);
    errors
}

fn text<'a>(schema: &'a Value, name: &str) -> &'a str {
    schema.get(name).and_then(Value::as_str).unwrap_or("")
}

fn flag(schema: &Value, name: &str) -> bool {
    schema.get(name).and_then(Value::as_bool) == Some(true)
}

fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn child(path: &str, name: &str) -> String {
    format!("{path}.{name}")
}

fn key(path: &str, name: &str) -> String {
    format!("{path}.properties[{name}]")
}

fn list<'a>(schema: &'a Value, name: &str) -> &'a [Value] {
    schema
        .get(name)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn forbidden(path: String, detail: &str) -> FieldError {
    FieldError::forbidden(&path, detail)
}

fn invalid_raw(path: String, rendered: String, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(rendered),
        field: path,
        detail: detail.to_string(),
    }
}

/// `validateStructuralInvariants`.
fn invariants(s: &Value, level: Level, path: &str, errors: &mut Vec<FieldError>) {
    if !s.is_object() {
        return;
    }
    let type_ = text(s, "type");
    let items = s.get("items").filter(|items| items.is_object());
    if type_ == "array" && items.is_none() {
        errors.push(FieldError::required(
            &child(path, "items"),
            "must be specified",
        ));
    }
    if let Some(items) = items {
        invariants(items, Level::Item, &child(path, "items"), errors);
    }
    for (name, property) in properties(s).into_iter().flatten() {
        invariants(property, Level::Field, &key(path, name), errors);
    }
    let embedded = flag(s, "x-kubernetes-embedded-resource");
    let preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
    let int_or_string = flag(s, "x-kubernetes-int-or-string");
    if let Some(additional) = s.get("additionalProperties") {
        if level == Level::Root {
            errors.push(forbidden(
                child(path, "additionalProperties"),
                "must not be used at the root",
            ));
        }
        if additional.is_object() {
            invariants(
                additional,
                Level::Field,
                &child(path, "additionalProperties"),
                errors,
            );
        }
        if embedded {
            errors.push(forbidden(
                child(path, "additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            ));
        }
    }
    if int_or_string && preserve {
        errors.push(invalid_raw(
            child(path, "x-kubernetes-preserve-unknown-fields"),
            "true".into(),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errors.push(invalid_raw(
            child(path, "x-kubernetes-embedded-resource"),
            "true".into(),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    value_validation(
        s,
        is_int_or_string_any_of(list(s, "anyOf")),
        list(s, "allOf")
            .first()
            .is_some_and(|first| is_int_or_string_any_of(list(first, "anyOf"))),
        path,
        errors,
    );
    if embedded && type_ != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        if type_.is_empty() {
            errors.push(FieldError::required(&child(path, "type"), detail));
        } else {
            errors.push(FieldError::invalid(&child(path, "type"), type_, detail));
        }
    } else if type_.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errors.push(FieldError::required(&child(path, "type"), detail));
    }
    if level == Level::Root && !type_.is_empty() && type_ != "object" {
        errors.push(FieldError::invalid(
            &child(path, "type"),
            type_,
            "must be object at the root",
        ));
    }
    let check_metadata = level == Level::Root || embedded;
    if let Some(fields) = properties(s) {
        if check_metadata {
            for name in ["kind", "apiVersion"] {
                if let Some(property) = fields.get(name) {
                    let found = text(property, "type");
                    if found != "string" {
                        errors.push(FieldError::invalid(
                            &child(&key(path, name), "type"),
                            found,
                            "must be string",
                        ));
                    }
                }
            }
        }
        if let Some(metadata) = fields.get("metadata") {
            metadata_invariants(
                metadata,
                check_metadata,
                level,
                &key(path, "metadata"),
                errors,
            );
        }
    }
    if embedded && !preserve && properties(s).is_none_or(Map::is_empty) {
        errors.push(FieldError::required(
            &child(path, "properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// `validateStructuralMetadataInvariants`: at the root, `metadata` may only
/// restrict `name` and `generateName`.
fn metadata_invariants(
    s: &Value,
    check_metadata: bool,
    level: Level,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let type_ = text(s, "type");
    if check_metadata && type_ != "object" {
        errors.push(FieldError::invalid(
            &child(path, "type"),
            type_,
            "must be object",
        ));
    }
    if level != Level::Root {
        return;
    }
    let Some(map) = s.as_object() else {
        return;
    };
    let names_only = properties(s).is_none_or(|fields| {
        !fields.is_empty()
            && fields
                .keys()
                .all(|name| name == "name" || name == "generateName")
    });
    let other = map
        .keys()
        .any(|name| !matches!(name.as_str(), "type" | "default" | "properties"));
    if other || !names_only {
        errors.push(forbidden(
            path.to_string(),
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
}

/// `anyOf: [{type: integer}, {type: string}]`, the int-or-string form kube
/// lets through.
fn is_int_or_string_any_of(any_of: &[Value]) -> bool {
    any_of.len() == 2
        && any_of[0] == serde_json::json!({"type": "integer"})
        && any_of[1] == serde_json::json!({"type": "string"})
}

/// `validateValueValidation`: the logic junctors' nested schemas and the
/// pattern.
fn value_validation(
    s: &Value,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    if !skip_any_of {
        for (index, nested) in list(s, "anyOf").iter().enumerate() {
            nested_value_validation(nested, false, &format!("{path}.anyOf[{index}]"), errors);
        }
    }
    for (index, nested) in list(s, "allOf").iter().enumerate() {
        nested_value_validation(
            nested,
            skip_first_all_of_any_of && index == 0,
            &format!("{path}.allOf[{index}]"),
            errors,
        );
    }
    for (index, nested) in list(s, "oneOf").iter().enumerate() {
        nested_value_validation(nested, false, &format!("{path}.oneOf[{index}]"), errors);
    }
    if let Some(not) = s.get("not").filter(|not| not.is_object()) {
        nested_value_validation(not, false, &child(path, "not"), errors);
    }
    if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
        if let Err(error) = regex::Regex::new(pattern) {
            errors.push(FieldError::invalid(
                &child(path, "pattern"),
                pattern,
                format!("must be a valid regular expression, but isn't: {error}"),
            ));
        }
    }
}

/// `validateNestedValueValidation`: under allOf/anyOf/oneOf/not only value
/// validations may appear.
fn nested_value_validation(v: &Value, skip_any_of: bool, path: &str, errors: &mut Vec<FieldError>) {
    if !v.is_object() {
        return;
    }
    value_validation(v, skip_any_of, false, path, errors);
    if let Some(items) = v.get("items").filter(|items| items.is_object()) {
        nested_value_validation(items, false, &child(path, "items"), errors);
    }
    for (name, property) in properties(v).into_iter().flatten() {
        nested_value_validation(property, false, &key(path, name), errors);
    }
    let undefined = "must be undefined to be structural";
    let empty = "must be empty to be structural";
    let false_ = "must be false to be structural";
    if !text(v, "type").is_empty() {
        errors.push(forbidden(child(path, "type"), empty));
    }
    if v.get("additionalProperties").is_some() {
        errors.push(forbidden(child(path, "additionalProperties"), undefined));
    }
    if v.get("default").is_some_and(|default| !default.is_null()) {
        errors.push(forbidden(child(path, "default"), undefined));
    }
    for name in ["title", "description"] {
        if !text(v, name).is_empty() {
            errors.push(forbidden(child(path, name), empty));
        }
    }
    for name in [
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if flag(v, name) {
            errors.push(forbidden(child(path, name), false_));
        }
    }
    if !list(v, "x-kubernetes-list-map-keys").is_empty() {
        errors.push(forbidden(child(path, "x-kubernetes-list-map-keys"), empty));
    }
    for name in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if v.get(name).is_some_and(|value| !value.is_null()) {
            errors.push(forbidden(child(path, name), undefined));
        }
    }
    if !list(v, "x-kubernetes-validations").is_empty() {
        errors.push(forbidden(child(path, "x-kubernetes-validations"), empty));
    }
    if properties(v).is_some_and(|fields| fields.contains_key("metadata")) {
        errors.push(forbidden(
            key(path, "metadata"),
            "must not be specified in a nested context",
        ));
    }
}

/// `validateStructuralCompleteness`: what a junctor names (a property, the
/// items) must also be specified outside of it.
fn completeness(s: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if !s.is_object() {
        return;
    }
    if let Some(items) = s.get("items").filter(|items| items.is_object()) {
        completeness(items, &child(path, "items"), errors);
    }
    for (name, property) in properties(s).into_iter().flatten() {
        completeness(property, &key(path, name), errors);
    }
    if let Some(additional) = s.get("additionalProperties").filter(|a| a.is_object()) {
        completeness(additional, &child(path, "additionalProperties"), errors);
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        for (index, nested) in list(s, junctor).iter().enumerate() {
            nested_completeness(
                s,
                nested,
                path,
                &format!("{path}.{junctor}[{index}]"),
                errors,
            );
        }
    }
    if let Some(not) = s.get("not").filter(|not| not.is_object()) {
        nested_completeness(s, not, path, &child(path, "not"), errors);
    }
}

/// The properties and items `nested` (at `nested_path`) names exist in the
/// structural node `s` (at `path`).
fn nested_completeness(
    s: &Value,
    nested: &Value,
    path: &str,
    nested_path: &str,
    errors: &mut Vec<FieldError>,
) {
    if let Some(items) = nested.get("items").filter(|items| items.is_object()) {
        match s.get("items").filter(|items| items.is_object()) {
            Some(structural) => nested_completeness(
                structural,
                items,
                &child(path, "items"),
                &child(nested_path, "items"),
                errors,
            ),
            None => errors.push(FieldError::required(
                &child(path, "items"),
                format!("because it is defined in {}", child(nested_path, "items")),
            )),
        }
    }
    for (name, property) in properties(nested).into_iter().flatten() {
        match properties(s).and_then(|fields| fields.get(name)) {
            Some(structural) => nested_completeness(
                structural,
                property,
                &key(path, name),
                &key(nested_path, name),
                errors,
            ),
            None => errors.push(FieldError::required(
                &key(path, name),
                format!("because it is defined in {}", key(nested_path, name)),
            )),
        }
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        for (index, deeper) in list(nested, junctor).iter().enumerate() {
            nested_completeness(
                s,
                deeper,
                path,
                &format!("{nested_path}.{junctor}[{index}]"),
                errors,
            );
        }
    }
    if let Some(not) = nested.get("not").filter(|not| not.is_object()) {
        nested_completeness(s, not, path, &child(nested_path, "not"), errors);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ROOT: &str = "spec.versions[0].schema.openAPIV3Schema";

    fn messages(schema: Value) -> Vec<String> {
        validate(&schema, ROOT)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_structural_schema_passes() {
        assert!(messages(json!({"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}},
            "spec": {"type": "object", "properties": {
                "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "pod": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                "mode": {"type": "string", "anyOf": [{"pattern": "^a"}, {"pattern": "^b"}]},
            }},
        }}))
        .is_empty());
    }

    #[test]
    fn kube_rules_and_messages() {
        let cases: Vec<(Value, Vec<String>)> = vec![
            (json!({"type": "object", "properties": {"spec": {"properties": {}}}}), vec![
                format!("{ROOT}.properties[spec].type: Required value: must not be empty for specified object fields"),
            ]),
            (json!({"type": "string"}), vec![
                format!(r#"{ROOT}.type: Invalid value: "string": must be object at the root"#),
            ]),
            (json!({"properties": {"a": {"type": "array"}}}), vec![
                format!("{ROOT}.properties[a].items: Required value: must be specified"),
                format!("{ROOT}.type: Required value: must not be empty at the root"),
            ]),
            (json!({"type": "object", "properties": {"a": {"type": "array", "items": {}}}}), vec![
                format!("{ROOT}.properties[a].items.type: Required value: must not be empty for specified array items"),
            ]),
            (json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}), vec![]),
            (json!({"type": "object", "additionalProperties": {"type": "string"}}), vec![
                format!("{ROOT}.additionalProperties: Forbidden: must not be used at the root"),
            ]),
            (json!({"type": "object", "properties": {"kind": {"type": "integer"}}}), vec![
                format!(r#"{ROOT}.properties[kind].type: Invalid value: "integer": must be string"#),
            ]),
            (json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}), vec![
                format!("{ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"),
            ]),
            (json!({"type": "object", "properties": {"e": {"type": "object", "x-kubernetes-embedded-resource": true}}}), vec![
                format!("{ROOT}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"),
            ]),
            (json!({"type": "object", "properties": {"a": {"type": "string"}},
                    "allOf": [{"properties": {"b": {"minLength": 1, "type": "string"}}}]}), vec![
                format!("{ROOT}.allOf[0].properties[b].type: Forbidden: must be empty to be structural"),
                format!("{ROOT}.properties[b]: Required value: because it is defined in {ROOT}.allOf[0].properties[b]"),
            ]),
            (json!({"type": "object", "properties": {"i": {"x-kubernetes-int-or-string": true,
                    "x-kubernetes-preserve-unknown-fields": true}}}), vec![
                format!("{ROOT}.properties[i].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"),
            ]),
        ];
        for (schema, mut expected) in cases {
            if schema.pointer("/properties/a/pattern").is_some() {
                let got = messages(schema);
                assert_eq!(got.len(), 1, "{got:?}");
                assert!(got[0].starts_with(&format!(
                    r#"{ROOT}.properties[a].pattern: Invalid value: "(": must be a valid regular expression, but isn't: "#
                )));
                continue;
            }
            expected.sort();
            assert_eq!(messages(schema.clone()), expected, "{schema}");
        }
    }
}
