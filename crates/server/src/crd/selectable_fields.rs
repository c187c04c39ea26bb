//! A CRD version's `selectableFields` (apiextensions `validation.go`
//! `ValidateCustomResourceSelectableFields`) and the JSON paths they and
//! `x-kubernetes-validations[].fieldPath` name, resolved against the
//! schema as `schema/cel/validation.go` `ValidFieldPath` does (its
//! tokenizer, its errors).

use std::collections::HashSet;

use serde_json::Value;

use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind};

/// `MaxSelectableFields`.
const MAX_SELECTABLE_FIELDS: usize = 8;

/// The errors of `version`'s `selectableFields`, at `path`
/// (`spec.versions[0].selectableFields`).
pub fn validate(version: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(fields) = version
        .get("selectableFields")
        .and_then(Value::as_array)
        .filter(|fields| !fields.is_empty())
    else {
        return errors;
    };
    let Some(schema) = version
        .pointer("/schema/openAPIV3Schema")
        .filter(|schema| schema.is_object())
    else {
        // kube's text, "not" included.
        errors.push(FieldError::invalid(
            path,
            "",
            "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
        ));
        return errors;
    };
    let mut unique = HashSet::new();
    for (index, field) in fields.iter().enumerate() {
        let at = format!("{path}[{index}].jsonPath");
        let json_path = field.get("jsonPath").and_then(Value::as_str).unwrap_or("");
        if json_path.is_empty() {
            errors.push(FieldError::required(&at, ""));
            continue;
        }
        let (resolved, found) = match field_path(json_path, schema, false) {
            Ok(resolved) => resolved,
            Err(error) => {
                errors.push(FieldError::invalid(
                    &at,
                    json_path,
                    format!("is an invalid path: {error}"),
                ));
                continue;
            }
        };
        let root = resolved.split(['.', '[']).next().unwrap_or("");
        if root == "metadata" {
            errors.push(FieldError::invalid(
                &at,
                json_path,
                "must not point to fields in metadata",
            ));
        }
        let type_ = found.and_then(|s| s.get("type")).and_then(Value::as_str);
        if !matches!(type_, Some("string" | "boolean" | "integer")) {
            errors.push(FieldError::invalid(
                &at,
                json_path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        if !unique.insert(resolved) {
            errors.push(FieldError {
                kind: FieldErrorKind::Duplicate(quote(json_path)),
                field: at,
                detail: String::new(),
            });
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS {
        errors.push(FieldError {
            kind: FieldErrorKind::TooMany(unique.len() as i64, MAX_SELECTABLE_FIELDS as i64),
            field: path.to_string(),
            detail: String::new(),
        });
    }
    errors
}

/// `ValidFieldPath`: the field path `json_path` (`.spec.color`,
/// `.spec.labels['a.b']`) names under `schema`, as `field.Path` prints it,
/// and the schema found there (`None` under `additionalProperties: true`).
pub fn field_path<'a>(
    json_path: &str,
    schema: &'a Value,
    allow_array_notation: bool,
) -> Result<(String, Option<&'a Value>), String> {
    let tokens = tokens(json_path);
    let mut tokens = tokens.iter().map(String::as_str);
    let mut path = String::new();
    let mut current = Some(schema);
    while let Some(token) = tokens.next() {
        match token {
            "[" => {
                if !allow_array_notation {
                    return Err("array notation is not allowed".into());
                }
                let quoted = tokens.next().ok_or("unexpected end of JSON path")?;
                if quoted.len() < 2 || !quoted.starts_with('\'') || !quoted.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {quoted}"));
                }
                let name = unescape(&quoted[1..quoted.len() - 1])
                    .map_err(|error| format!("invalid string literal: {error}"))?;
                current = step(current, &name, &mut path)?;
                match tokens.next() {
                    Some("]") => {}
                    Some(other) => return Err(format!("expected ] but got {other}")),
                    None => return Err("unexpected end of JSON path".into()),
                }
            }
            "." => {
                let name = tokens.next().ok_or("unexpected end of JSON path")?;
                current = step(current, name, &mut path)?;
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok((path, current))
}

/// One accessor: a property where the schema has `properties`, a map key
/// where it has `additionalProperties`.
fn step<'a>(
    schema: Option<&'a Value>,
    name: &str,
    path: &mut String,
) -> Result<Option<&'a Value>, String> {
    let not_a_field = || "does not refer to a valid field".to_string();
    let schema = schema.ok_or_else(not_a_field)?;
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(name);
        return properties.get(name).map(Some).ok_or_else(not_a_field);
    }
    match schema.get("additionalProperties") {
        Some(additional @ Value::Object(_)) => {
            path.push_str(&format!("[{name}]"));
            Ok(Some(additional))
        }
        Some(Value::Bool(_)) => {
            path.push_str(&format!("[{name}]"));
            Ok(None)
        }
        _ => Err(not_a_field()),
    }
}

/// The `bufio.Scanner` split of `ValidFieldPath`: `.`, `[` and `]` alone,
/// single-quoted strings whole, the text between delimiters.
fn tokens(json_path: &str) -> Vec<String> {
    let bytes = json_path.as_bytes();
    let mut tokens = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let data = &bytes[start..];
        let mut length = data.len();
        if data[0] == b'\'' {
            if let Some(end) = (1..data.len()).find(|&i| data[i] == b'\'' && data[i - 1] != b'\\') {
                length = end + 1;
            }
        } else if let Some(i) = data.iter().position(|b| matches!(b, b'.' | b'[' | b']')) {
            length = if i == 0 { 1 } else { i };
        }
        tokens.push(String::from_utf8_lossy(&data[..length]).into_owned());
        start += length;
    }
    tokens
}

/// `unescapeSingleQuote`.
fn unescape(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = match chars.next() {
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('v') => '\u{b}',
            Some('\'') => '\'',
            Some('\\') => '\\',
            Some(other) => return Err(format!("invalid escape char \\{other}")),
            None => return Err("invalid escape char \\".into()),
        };
        out.push(escaped);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn version(fields: &[&str]) -> Value {
        json!({
            "name": "v1",
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "color": {"type": "string"},
                    "size": {"type": "integer"},
                    "ratio": {"type": "number"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                }},
            }}},
            "selectableFields": fields.iter().map(|f| json!({"jsonPath": f})).collect::<Vec<_>>(),
        })
    }

    fn messages(version: &Value) -> Vec<String> {
        validate(version, "spec.versions[0].selectableFields")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn fields_of_scalar_types_pass() {
        assert!(messages(&version(&[".spec.color", ".spec.size", ".spec.labels.a"])).is_empty());
    }

    #[test]
    fn kube_rules_and_messages() {
        let at = "spec.versions[0].selectableFields";
        let type_detail = "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.";
        let cases: Vec<(Vec<&str>, Vec<String>)> = vec![
            (vec![""], vec![format!("{at}[0].jsonPath: Required value")]),
            (
                vec!["spec.color"],
                vec![format!(
                    r#"{at}[0].jsonPath: Invalid value: "spec.color": is an invalid path: expected [ or . but got: spec"#
                )],
            ),
            (
                vec![".spec.nope"],
                vec![format!(
                    r#"{at}[0].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field"#
                )],
            ),
            (
                vec![".spec.labels['a']"],
                vec![format!(
                    r#"{at}[0].jsonPath: Invalid value: ".spec.labels['a']": is an invalid path: array notation is not allowed"#
                )],
            ),
            (
                vec![".spec."],
                vec![format!(
                    r#"{at}[0].jsonPath: Invalid value: ".spec.": is an invalid path: unexpected end of JSON path"#
                )],
            ),
            (
                vec![".spec.ratio"],
                vec![format!(
                    r#"{at}[0].jsonPath: Invalid value: ".spec.ratio": {type_detail}"#
                )],
            ),
            (
                vec![".spec"],
                vec![format!(
                    r#"{at}[0].jsonPath: Invalid value: ".spec": {type_detail}"#
                )],
            ),
            (
                vec![".spec.color", ".spec.color"],
                vec![format!(
                    r#"{at}[1].jsonPath: Duplicate value: ".spec.color""#
                )],
            ),
        ];
        for (fields, expected) in cases {
            assert_eq!(messages(&version(&fields)), expected, "{fields:?}");
        }
        let many: Vec<String> = (0..9).map(|i| format!(".spec.labels.k{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            messages(&version(&many)),
            [format!("{at}: Too many: 9: must have at most 8 items")]
        );
        let mut no_schema = version(&[".spec.color"]);
        no_schema.as_object_mut().unwrap().remove("schema");
        assert_eq!(
            messages(&no_schema),
            [format!(
                r#"{at}: Invalid value: "": selectableFields may only be set when version.schema.openAPIV3Schema is not included"#
            )]
        );
    }

    #[test]
    fn field_paths_resolve_as_kube_prints_them() {
        let schema = version(&[])["schema"]["openAPIV3Schema"].clone();
        assert_eq!(
            field_path(".spec.labels['a.b']", &schema, true).map(|(path, _)| path),
            Ok("spec.labels[a.b]".to_string())
        );
        assert_eq!(
            field_path(".spec['x\\q']", &schema, true).map(|(path, _)| path),
            Err("invalid string literal: invalid escape char \\q".to_string())
        );
        assert_eq!(
            field_path(".spec[color]", &schema, true).map(|(path, _)| path),
            Err("expected single quoted string but got color".to_string())
        );
    }
}
