//! Type and object metadata of embedded resources
//! (`x-kubernetes-embedded-resource: true`), checked as kube's
//! `customResourceStrategy.Validate` does with
//! `apiextensions-apiserver/pkg/apiserver/schema/objectmeta/validation.go`
//! `Validate(nil, obj, structural, false)`: every object value whose schema
//! node is an embedded resource must have a string `apiVersion` that parses
//! as a group/version and a `kind` that is a DNS-1035 label up to case, and
//! its `metadata`, if present, passes `ValidateObjectMeta` with
//! `ValidatePathSegmentName` names (an empty name is allowed: kube sets
//! `fakename` before checking) and a namespace required only when given.
//!
//! Paths are kube's `field.Path`: `spec.template.kind`,
//! `spec.items[0].apiVersion`, `spec.byName[a].metadata.name`. kube walks Go
//! maps (random order); here keys come in the object's order.
//!
//! Not ported: the `metadata` unmarshal error of `GetObjectMeta` (a
//! non-object `metadata` is reported with encoding/json's wording, not
//! jsoniter's), metadata fields of the wrong type (kube's decoder drops them
//! before validation; here they are not looked at), the banned `v1 Event`
//! owner and the several-controllers check of `ownerReferences`, and
//! `ValidateManagedFields`.

use serde_json::{Map, Value};

use super::value_check::bad_value;
use crate::schema::{Model, NodeId};
use crate::status::{FieldError, FieldErrorKind};

/// `TotalAnnotationSizeLimitB`.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// The errors of every embedded resource in `object` (a custom resource
/// after defaulting and pruning) under `schema`.
pub fn validate(object: &Value, model: &Model) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(root) = model.schema_root() {
        walk("", object, model, root, &mut errors);
    }
    errors
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn walk(path: &str, value: &Value, model: &Model, id: NodeId, errors: &mut Vec<FieldError>) {
    let schema = model.node(id);
    match value {
        Value::Object(map) => {
            if model.values(id).embedded_resource {
                embedded_resource(path, map, errors);
            }
            let additional = super::schema::additional(model, id);
            for (key, field) in map {
                if let Some(property) = schema.property(key) {
                    walk(&child(path, key), field, model, property, errors);
                } else if let Some(additional) = additional {
                    walk(&format!("{path}[{key}]"), field, model, additional, errors);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.items {
                for (index, item) in items.iter().enumerate() {
                    walk(
                        &format!("{path}[{index}]"),
                        item,
                        model,
                        item_schema,
                        errors,
                    );
                }
            }
        }
        _ => {}
    }
}

fn invalid_value(field: String, value: &Value, detail: impl Into<String>) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(bad_value(value)),
        field,
        detail: detail.into(),
    }
}

/// `validateEmbeddedResource`.
fn embedded_resource(path: &str, map: &Map<String, Value>, errors: &mut Vec<FieldError>) {
    let api_version_path = child(path, "apiVersion");
    let kind_path = child(path, "kind");
    if !map.contains_key("apiVersion") {
        errors.push(FieldError::required(&api_version_path, ""));
    }
    if !map.contains_key("kind") {
        errors.push(FieldError::required(&kind_path, ""));
    }
    for (key, value) in map {
        match key.as_str() {
            "apiVersion" => match value.as_str() {
                None => errors.push(invalid_value(
                    api_version_path.clone(),
                    value,
                    "must be a string",
                )),
                Some("") => errors.push(FieldError::required(&api_version_path, "")),
                Some(api_version) => {
                    if api_version != "/" && api_version.matches('/').count() > 1 {
                        errors.push(FieldError::invalid(
                            &api_version_path,
                            api_version,
                            format!("unexpected GroupVersion string: {api_version}"),
                        ));
                    }
                }
            },
            "kind" => match value.as_str() {
                None => errors.push(invalid_value(kind_path.clone(), value, "must be a string")),
                Some("") => errors.push(FieldError::required(&kind_path, "")),
                Some(kind) => {
                    let problems = crate::names::dns1035_label(&kind.to_lowercase());
                    if !problems.is_empty() {
                        errors.push(FieldError::invalid(
                            &kind_path,
                            kind,
                            format!(
                                "may have mixed case, but should otherwise match: {}",
                                problems.join(",")
                            ),
                        ));
                    }
                }
            },
            "metadata" => metadata(&child(path, "metadata"), value, errors),
            _ => {}
        }
    }
}

/// `GetObjectMeta(x, false)` then `ValidateObjectMeta(meta,
/// len(meta.Namespace) > 0, path.ValidatePathSegmentName, path)`.
fn metadata(path: &str, value: &Value, errors: &mut Vec<FieldError>) {
    let empty = Map::new();
    let meta = match value {
        Value::Object(meta) => meta,
        Value::Null => &empty,
        other => {
            let type_name = match other {
                Value::Bool(_) => "bool",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                _ => "array",
            };
            errors.push(invalid_value(
                path.to_string(),
                other,
                format!("json: cannot unmarshal {type_name} into Go value of type v1.ObjectMeta"),
            ));
            return;
        }
    };
    let text = |name: &str| meta.get(name).and_then(Value::as_str).unwrap_or_default();

    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        // `IsValidPathSegmentPrefix`: only the characters, not `.`/`..`.
        for illegal in ["/", "%"] {
            if generate_name.contains(illegal) {
                errors.push(FieldError::invalid(
                    &child(path, "generateName"),
                    generate_name,
                    format!("may not contain '{illegal}'"),
                ));
            }
        }
    }
    let name = match text("name") {
        "" => "fakename",
        name => name,
    };
    for message in crate::names::path_segment(name) {
        errors.push(FieldError::invalid(&child(path, "name"), name, message));
    }
    let namespace = text("namespace");
    if !namespace.is_empty() {
        for message in crate::names::dns1123_label(namespace) {
            errors.push(FieldError::invalid(
                &child(path, "namespace"),
                namespace,
                message,
            ));
        }
    }
    if let Some(generation) = meta.get("generation").and_then(Value::as_i64) {
        if generation < 0 {
            errors.push(FieldError {
                kind: FieldErrorKind::Invalid(generation.to_string()),
                field: child(path, "generation"),
                detail: "must be greater than or equal to 0".into(),
            });
        }
    }
    labels(&child(path, "labels"), meta, errors);
    annotations(&child(path, "annotations"), meta, errors);
    owner_references(&child(path, "ownerReferences"), meta, errors);
    finalizers(&child(path, "finalizers"), meta, errors);
}

/// `v1validation.ValidateLabels`.
fn labels(path: &str, meta: &Map<String, Value>, errors: &mut Vec<FieldError>) {
    let Some(labels) = meta.get("labels").and_then(Value::as_object) else {
        return;
    };
    for (key, value) in labels {
        for message in crate::selector::is_qualified_name(key) {
            errors.push(FieldError::invalid(path, key, message));
        }
        let value = value.as_str().unwrap_or_default();
        for message in crate::selector::is_valid_label_value(value) {
            errors.push(FieldError::invalid(path, value, message));
        }
    }
}

/// `ValidateAnnotations`.
fn annotations(path: &str, meta: &Map<String, Value>, errors: &mut Vec<FieldError>) {
    let Some(annotations) = meta.get("annotations").and_then(Value::as_object) else {
        return;
    };
    let mut total = 0;
    for (key, value) in annotations {
        total += key.len() + value.as_str().map_or(0, str::len);
        for message in crate::selector::is_qualified_name(&key.to_lowercase()) {
            errors.push(FieldError::invalid(path, key, message));
        }
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errors.push(FieldError {
            kind: FieldErrorKind::TooLong(TOTAL_ANNOTATION_SIZE_LIMIT),
            field: path.to_string(),
            detail: String::new(),
        });
    }
}

/// `validateOwnerReference` for each reference: version, kind, name and
/// uid must not be empty.
fn owner_references(path: &str, meta: &Map<String, Value>, errors: &mut Vec<FieldError>) {
    let Some(references) = meta.get("ownerReferences").and_then(Value::as_array) else {
        return;
    };
    for reference in references {
        let text = |name: &str| {
            reference
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let api_version = text("apiVersion");
        // `schema.FromAPIVersionAndKind`: an unparsable apiVersion has no version.
        let version = match api_version.matches('/').count() {
            0 => api_version,
            1 => api_version
                .split_once('/')
                .map_or("", |(_, version)| version),
            _ => "",
        };
        if version.is_empty() {
            errors.push(FieldError::invalid(
                &child(path, "apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        for name in ["kind", "name", "uid"] {
            if text(name).is_empty() {
                errors.push(FieldError::invalid(
                    &child(path, name),
                    "",
                    "must not be empty",
                ));
            }
        }
    }
}

/// `ValidateFinalizers`.
fn finalizers(path: &str, meta: &Map<String, Value>, errors: &mut Vec<FieldError>) {
    let Some(list) = meta.get("finalizers").and_then(Value::as_array) else {
        return;
    };
    let finalizers: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
    for finalizer in &finalizers {
        for message in crate::selector::is_qualified_name(finalizer) {
            errors.push(FieldError::invalid(path, finalizer, message));
        }
    }
    if finalizers.contains(&"orphan") && finalizers.contains(&"foregroundDeletion") {
        errors.push(FieldError {
            kind: FieldErrorKind::Invalid(crate::go::fmt::sharp_v_strings(&finalizers)),
            field: path.to_string(),
            detail: "finalizer orphan and foregroundDeletion cannot be both set".into(),
        });
    }
}

#[cfg(test)]
#[path = "embedded_tests.rs"]
mod tests;
