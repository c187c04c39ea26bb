//! The rules on one entry of a CRD's `spec.versions` (apiextensions
//! `validation.go` `validateCustomResourceDefinitionVersion`), in kube's
//! order: `deprecationWarning`, the schema
//! (`validateCustomResourceDefinitionValidation`: the root rules of a
//! version with a status subresource, no `nullable` root, then the
//! structural rules, the defaults once the schema is structural, and the
//! OpenAPI rules), the subresources
//! (`ValidateCustomResourceDefinitionSubresources`), the printer columns
//! (`ValidateCustomResourceColumnDefinition`) and `selectableFields`.
//!
//! Where kube prints the whole root schema as a Go struct (the status
//! subresource's root rule) the value is `apiextensions.JSONSchemaProps{…}`.

use serde_json::Value;

use crate::status::{FieldError, FieldErrorKind};

/// `printerColumnDatatypes`, sorted as `sets.List` prints them.
const COLUMN_TYPES: &str = "boolean,date,integer,number,string";
const COLUMN_TYPE_LIST: &[&str] = &["boolean", "date", "integer", "number", "string"];
/// `customResourceColumnDefinitionFormats`, sorted.
const COLUMN_FORMATS: &[&str] = &[
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];
/// `allowedFieldsAtRootSchema` by their JSON names.
const ALLOWED_AT_STATUS_ROOT: &[&str] = &[
    "description",
    "type",
    "format",
    "title",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "required",
    "items",
    "properties",
    "externalDocs",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
];
/// The fields of `JSONSchemaProps` that are plain `bool`s (false is unset).
const PLAIN_BOOLS: &[&str] = &[
    "exclusiveMaximum",
    "exclusiveMinimum",
    "uniqueItems",
    "nullable",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
];
/// `allowedFieldsAtRootSchema` as kube prints the Go slice.
const ALLOWED_AT_STATUS_ROOT_GO: &str = "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]";

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Every rule `version` (the `index`th of `spec.versions`) breaks.
pub fn validate(version: &Value, index: usize) -> Vec<FieldError> {
    validate_with(version, index, false)
}

/// [`validate`], with kube's `suppressPerExpressionCost` when an update
/// left this version's schema unchanged (`versionsWithUnchangedSchemas`:
/// a schema accepted before is not refused for a rule's estimated cost).
pub fn validate_with(version: &Value, index: usize, unchanged_schema: bool) -> Vec<FieldError> {
    let path = format!("spec.versions[{index}]");
    let mut errors = Vec::new();
    deprecation_warning(version, &path, &mut errors);
    if let Some(schema) = version.pointer("/schema/openAPIV3Schema") {
        let status = version
            .pointer("/subresources/status")
            .is_some_and(|s| !s.is_null());
        schema_rules(
            schema,
            status,
            &format!("{path}.schema"),
            unchanged_schema,
            &mut errors,
        );
    }
    subresources(version, &format!("{path}.subresources"), &mut errors);
    columns(version, &path, &mut errors);
    errors.extend(super::selectable_fields::validate(
        version,
        &format!("{path}.selectableFields"),
    ));
    errors
}

/// `validateDeprecationWarning`.
fn deprecation_warning(version: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(warning) = version.get("deprecationWarning").filter(|w| !w.is_null()) else {
        return;
    };
    let warning = warning.as_str().unwrap_or("");
    let at = format!("{path}.deprecationWarning");
    let deprecated = version.get("deprecated").and_then(Value::as_bool) == Some(true);
    if !deprecated {
        errors.push(FieldError::invalid(
            &at,
            warning,
            "can only be set for deprecated versions",
        ));
        return;
    }
    if warning.len() > 256 {
        errors.push(FieldError::invalid(
            &at,
            warning,
            "must be <= 256 characters long",
        ));
    }
    if warning.is_empty() {
        errors.push(FieldError::invalid(
            &at,
            warning,
            "must not be an empty string",
        ));
    }
    // `unicode.IsPrint`: no control characters, no spaces but U+0020.
    if let Some((byte_index, _)) = warning
        .char_indices()
        .find(|(_, c)| c.is_control() || (c.is_whitespace() && *c != ' '))
    {
        errors.push(FieldError::invalid(
            &at,
            warning,
            format!("must only contain printable UTF-8 characters; non-printable character found at index {byte_index}"),
        ));
    }
}

/// `validateCustomResourceDefinitionValidation` for a v1 version's schema
/// (`path` is `spec.versions[i].schema`).
fn schema_rules(
    schema: &Value,
    status: bool,
    path: &str,
    unchanged_schema: bool,
    errors: &mut Vec<FieldError>,
) {
    let root = format!("{path}.openAPIV3Schema");
    if status {
        status_root(schema, path, errors);
    }
    if schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        errors.push(FieldError::forbidden(
            &format!("{root}.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let structural = super::structural_rules::validate(schema, &root);
    let is_structural = structural.is_empty();
    if is_structural {
        errors.extend(super::default_rules::validate(schema, &root));
    } else {
        errors.extend(structural);
    }
    errors.extend(super::openapi_rules::validate_with(
        schema,
        &root,
        is_structural,
        unchanged_schema,
    ));
}

/// With the status subresource on, the root may only hold what stays
/// valid once `properties[status]` is taken out of it.
fn status_root(schema: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(map) = schema.as_object() else {
        return;
    };
    let type_ = text(schema, "/type");
    if !type_.is_empty() && type_ != "object" {
        errors.push(FieldError::invalid(
            &format!("{path}.openAPIV3Schema.type"),
            type_,
            r#"only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
        ));
        return;
    }
    // Go's zero values: a plain bool false, a string empty, any other
    // (pointer, slice, map) field absent; `[]`, `{}` and `false` behind a
    // pointer count as set.
    let zero = |name: &str, value: &Value| match value {
        Value::Null => true,
        Value::Bool(flag) => !flag && PLAIN_BOOLS.contains(&name),
        Value::String(text) => text.is_empty(),
        _ => false,
    };
    let disallowed = map.iter().any(|(name, value)| {
        !zero(name, value) && !ALLOWED_AT_STATUS_ROOT.contains(&name.as_str())
    });
    if disallowed {
        errors.push(FieldError {
            kind: FieldErrorKind::Invalid("apiextensions.JSONSchemaProps{…}".into()),
            field: format!("{path}.openAPIV3Schema"),
            detail: format!("only {ALLOWED_AT_STATUS_ROOT_GO} fields are allowed at the root of the schema if the status subresource is enabled"),
        });
    }
}

/// `ValidateCustomResourceDefinitionSubresources`: the scale paths.
fn subresources(version: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(scale) = version
        .pointer("/subresources/scale")
        .filter(|s| s.is_object())
    else {
        return;
    };
    for (field, prefix, under) in [
        (
            "specReplicasPath",
            ".spec.",
            "should be a json path under .spec",
        ),
        (
            "statusReplicasPath",
            ".status.",
            "should be a json path under .status",
        ),
    ] {
        let at = format!("{path}.scale.{field}");
        let value = text(scale, &format!("/{field}"));
        if value.is_empty() {
            errors.push(FieldError::required(&at, ""));
        } else if let Some(error) = simple_json_path(value, &at) {
            errors.push(error);
        } else if !value.starts_with(prefix) {
            errors.push(FieldError::invalid(&at, value, under));
        }
    }
    let selector = text(scale, "/labelSelectorPath");
    if !selector.is_empty() {
        let at = format!("{path}.scale.labelSelectorPath");
        if let Some(error) = simple_json_path(selector, &at) {
            errors.push(error);
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            errors.push(FieldError::invalid(
                &at,
                selector,
                "should be a json path under either .spec or .status",
            ));
        }
    }
}

/// `validateSimpleJSONPath`.
fn simple_json_path(value: &str, at: &str) -> Option<FieldError> {
    if value.is_empty() {
        return Some(FieldError::invalid(at, value, "must not be empty"));
    }
    if !value.starts_with('.') {
        return Some(FieldError::invalid(
            at,
            value,
            "must be a simple json path starting with .",
        ));
    }
    None
}

/// `ValidateCustomResourceColumnDefinition` for each printer column.
fn columns(version: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(columns) = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
    else {
        return;
    };
    for (column_index, column) in columns.iter().enumerate() {
        let path = format!("{path}.additionalPrinterColumns[{column_index}]");
        if text(column, "/name").is_empty() {
            errors.push(FieldError::required(&format!("{path}.name"), ""));
        }
        match text(column, "/type") {
            "" => errors.push(FieldError::required(
                &format!("{path}.type"),
                format!("must be one of {COLUMN_TYPES}"),
            )),
            kind if COLUMN_TYPE_LIST.contains(&kind) => {}
            kind => errors.push(FieldError::invalid(
                &format!("{path}.type"),
                kind,
                format!("must be one of {COLUMN_TYPES}"),
            )),
        }
        let format = text(column, "/format");
        if !format.is_empty() && !COLUMN_FORMATS.contains(&format) {
            errors.push(FieldError::invalid(
                &format!("{path}.format"),
                format,
                format!("must be one of {}", COLUMN_FORMATS.join(",")),
            ));
        }
        // kube names the internal field: `JSONPath`.
        let at = format!("{path}.JSONPath");
        match text(column, "/jsonPath") {
            "" => errors.push(FieldError::required(&at, "")),
            json_path => errors.extend(simple_json_path(json_path, &at)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(version: Value) -> Vec<String> {
        validate(&version, 0)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn schema() -> Value {
        json!({"openAPIV3Schema": {"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
            "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        }}})
    }

    #[test]
    fn a_full_version_passes() {
        assert_eq!(
            messages(json!({
                "name": "v1", "served": true, "storage": true,
                "deprecated": true, "deprecationWarning": "use v2",
                "schema": schema(),
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                    "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [{"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}],
            })),
            Vec::<String>::new()
        );
    }

    #[test]
    fn kube_rules_and_messages() {
        let at = "spec.versions[0]";
        let cases: Vec<(Value, Vec<String>)> = vec![
            (json!({"deprecationWarning": "x"}), vec![
                format!(r#"{at}.deprecationWarning: Invalid value: "x": can only be set for deprecated versions"#),
            ]),
            (json!({"deprecated": true, "deprecationWarning": "a\tb"}), vec![
                format!(r#"{at}.deprecationWarning: Invalid value: "a\tb": must only contain printable UTF-8 characters; non-printable character found at index 1"#),
            ]),
            (json!({"subresources": {"scale": {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.replicas",
                "labelSelectorPath": ".metadata.labels"}}}), vec![
                format!(r#"{at}.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with ."#),
                format!(r#"{at}.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status"#),
                format!(r#"{at}.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status"#),
            ]),
            (json!({"subresources": {"scale": {}}}), vec![
                format!("{at}.subresources.scale.specReplicasPath: Required value"),
                format!("{at}.subresources.scale.statusReplicasPath: Required value"),
            ]),
            (json!({"additionalPrinterColumns": [{"name": "A", "type": "string", "jsonPath": "spec.a"}, {"name": "B", "type": "string"}]}), vec![
                format!(r#"{at}.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.a": must be a simple json path starting with ."#),
                format!("{at}.additionalPrinterColumns[1].JSONPath: Required value"),
            ]),
            (json!({"schema": {"openAPIV3Schema": {"type": "object", "nullable": true}}}), vec![
                format!("{at}.schema.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root"),
            ]),
            (json!({"subresources": {"status": {}}, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-validations": [{"rule": "true"}],
                "additionalProperties": false}}}), vec![
                format!("{at}.schema.openAPIV3Schema: Invalid value: apiextensions.JSONSchemaProps{{…}}: only {ALLOWED_AT_STATUS_ROOT_GO} fields are allowed at the root of the schema if the status subresource is enabled"),
                format!("{at}.schema.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root"),
            ]),
        ];
        for (version, expected) in cases {
            assert_eq!(messages(version.clone()), expected, "{version}");
        }
    }
}
