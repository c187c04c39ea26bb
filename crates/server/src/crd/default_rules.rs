//! The defaults of a CRD's schema must be values the schema accepts and
//! keeps (apiextensions `pkg/apiserver/schema/defaulting/validation.go`
//! `ValidateDefaults`, run once the schema is structural): each `default`
//! is pruned with its node's schema (an embedded resource as a resource
//! root) and must come out unchanged (`must not have unknown fields`), the
//! embedded resources in it must have valid type and object metadata, and
//! it must pass value validation, with the failures under
//! `<node>.default`. The root is validated as an embedded resource;
//! `additionalProperties` are not followed (defaults are forbidden there).
//!
//! Not ported: defaults inside an embedded resource's `apiVersion`, `kind`
//! or `metadata` are checked against their own schema only, where kube
//! first wraps them into a surrounding object and checks the metadata that
//! results; CEL rules on defaults; kube's `requirePrunedDefaults` ratchet
//! for CRDs stored with unpruned defaults before 1.16.

use serde_json::{Map, Value};

use super::schema::prune_as;
use super::value_check::bad_value;
use crate::schema::compile_values;
use crate::status::{FieldError, FieldErrorKind};

const META_FIELDS: &[&str] = &["metadata", "kind", "apiVersion"];

/// Every failing default under `schema` (at `path`, e.g.
/// `spec.versions[0].schema.openAPIV3Schema`).
pub fn validate(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    walk(schema, path, true, false, &mut errors);
    errors
}

fn walk(
    s: &Value,
    path: &str,
    resource_root: bool,
    inside_meta: bool,
    errors: &mut Vec<FieldError>,
) {
    if !s.is_object() {
        return;
    }
    let embedded = resource_root
        || s.get("x-kubernetes-embedded-resource")
            .and_then(Value::as_bool)
            == Some(true);
    let inside_meta = inside_meta && !embedded;
    if let Some(default) = s.get("default").filter(|default| !default.is_null()) {
        check_default(
            s,
            default,
            embedded,
            inside_meta,
            &format!("{path}.default"),
            errors,
        );
    }
    if let Some(items) = s.get("items").filter(|items| items.is_object()) {
        walk(items, &format!("{path}.items"), false, inside_meta, errors);
    }
    let properties = s.get("properties").and_then(Value::as_object);
    for (name, property) in properties.map(sorted).unwrap_or_default() {
        let meta = inside_meta || (embedded && META_FIELDS.contains(&name.as_str()));
        walk(
            property,
            &format!("{path}.properties[{name}]"),
            false,
            meta,
            errors,
        );
    }
}

fn sorted(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

fn check_default(
    s: &Value,
    default: &Value,
    embedded: bool,
    inside_meta: bool,
    at: &str,
    errors: &mut Vec<FieldError>,
) {
    // The resource root is an embedded resource for these checks: its
    // schema is compiled marked as one (`embedded` is otherwise the flag).
    let compiled = match s.as_object() {
        Some(map)
            if embedded
                && map.get("x-kubernetes-embedded-resource") != Some(&Value::Bool(true)) =>
        {
            let mut marked = map.clone();
            marked.insert("x-kubernetes-embedded-resource".into(), Value::Bool(true));
            compile_values(&Value::Object(marked))
        }
        _ => compile_values(s),
    };
    // The default's own `default`s are not applied to it: kube validates
    // the value as written.
    if !inside_meta {
        let mut pruned = default.clone();
        prune_as(&mut pruned, &compiled, embedded);
        if &pruned != default {
            errors.push(FieldError {
                kind: FieldErrorKind::Invalid(bad_value(default)),
                field: at.to_string(),
                detail: "must not have unknown fields".into(),
            });
        }
        let meta_errors = super::embedded::validate(default, &compiled);
        if !meta_errors.is_empty() {
            errors.extend(meta_errors.into_iter().map(|error| under(at, error)));
            return;
        }
    }
    errors.extend(
        super::value_check::validate(default, &compiled)
            .into_iter()
            .map(|error| under(at, error)),
    );
}

/// A field error of the default's value moved under the default's path.
fn under(at: &str, mut error: FieldError) -> FieldError {
    error.field = match error.field.as_str() {
        "" | "<nil>" => at.to_string(),
        field if field.starts_with('[') => format!("{at}{field}"),
        field => format!("{at}.{field}"),
    };
    error
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
    fn valid_defaults_pass() {
        assert!(messages(json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "default": {"size": 1},
            "properties": {
                "size": {"type": "integer", "default": 3, "minimum": 1},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {"x": 1}},
                "pod": {"type": "object", "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true,
                        "default": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}},
            },
        }}}))
        .is_empty());
    }

    #[test]
    fn kube_rules_and_messages() {
        let spec = format!("{ROOT}.properties[spec]");
        let cases: Vec<(Value, Vec<String>)> = vec![
            (
                json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"size": {"type": "integer", "default": "big"}}}}}),
                vec![
                    // kube-openapi names the validated value "" at its root.
                    format!(
                        r#"{spec}.properties[size].default: Invalid value: "string":  in body must be of type integer: "string""#
                    ),
                ],
            ),
            (
                json!({"type": "object", "properties": {"spec": {"type": "object", "default": {"size": 1, "bogus": true},
                "properties": {"size": {"type": "integer"}}}}}),
                vec![format!(
                    r#"{spec}.default: Invalid value: map[string]interface {{}}{{"bogus":true, "size":1}}: must not have unknown fields"#
                )],
            ),
            (
                json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"size": {"type": "integer", "minimum": 2, "default": 1}}}}}),
                vec![format!(
                    r#"{spec}.properties[size].default: Invalid value: 1:  in body should be greater than or equal to 2"#
                )],
            ),
            (
                json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"pod": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "x-kubernetes-preserve-unknown-fields": true, "default": {"apiVersion": "v1"}}}}}}),
                vec![format!(
                    "{spec}.properties[pod].default.kind: Required value"
                )],
            ),
        ];
        for (schema, expected) in cases {
            assert_eq!(messages(schema.clone()), expected, "{schema}");
        }
    }
}
