//! The CEL type of a schema: apiserver `pkg/cel/common/schemas.go`
//! `SchemaDeclType` (objects with their properties, maps from
//! `additionalProperties`, lists, strings by format — `byte` is bytes,
//! `duration` a duration, `date`/`date-time` timestamps —, `integer`,
//! `number`, `boolean`; `x-kubernetes-int-or-string` or format
//! `int-or-string` is `dyn`; an object keeps only its declared properties
//! even with `x-kubernetes-preserve-unknown-fields`; a schema of no type
//! is not exposed), names escaped as `pkg/cel/escaping.go` `Escape` does,
//! and type names assigned as `DeclType.MaybeAssignTypeName` does.
//!
//! Two sources: a CRD's schema as JSON (`openAPIV3Schema` being validated)
//! and a compiled [`Model`] (built-in kinds' OpenAPI, for admission
//! policies).

use std::sync::Arc;

use serde_json::Value;

use super::types::{Fields, Object, Type};
use crate::schema::{Model, NodeId, SchemaType};

use crate::cel_env::RESERVED;

/// `Escape`: the CEL name of a property, `None` when it has none.
pub fn escape(name: &str) -> Option<String> {
    let first = name.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
    {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            other => out.push(other),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// Whether CEL name `selected` reads property `property` (kube also finds
/// a reserved word's escaped form by the bare word).
fn names_property(selected: &str, property: &str) -> bool {
    match escape(property) {
        Some(escaped) => {
            escaped == selected
                || (RESERVED.contains(&selected) && escaped == format!("__{selected}__"))
        }
        None => false,
    }
}

/// The type of a CRD schema node given as JSON, named `name`;
/// `resource_root` for the root of the resource or of an embedded
/// resource. `None`: the schema is not exposed to CEL.
pub fn from_json(schema: &Value, name: &str, resource_root: bool) -> Option<Type> {
    if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return Some(Type::Dyn);
    }
    let schema = if resource_root {
        with_type_and_object_meta(schema)
    } else {
        schema.clone()
    };
    match text_of(&schema, "type") {
        "array" => {
            let items = schema.get("items").filter(|items| items.is_object())?;
            let embedded = items.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
            Some(Type::list(from_json(
                items,
                &format!("{name}.@idx"),
                embedded,
            )?))
        }
        "object" => {
            if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                let embedded =
                    additional.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
                let values = from_json(additional, &format!("{name}.@elem"), embedded)?;
                return Some(Type::map(Type::String, values));
            }
            Some(Type::Object(Object {
                name: Arc::from(name),
                fields: Arc::new(JsonFields {
                    name: name.to_string(),
                    schema,
                }),
            }))
        }
        "string" => Some(string_type(text_of(&schema, "format"))),
        "boolean" => Some(Type::Bool),
        "number" => Some(Type::Double),
        "integer" => Some(Type::Int),
        _ => None,
    }
}

fn text_of<'a>(schema: &'a Value, key: &str) -> &'a str {
    schema.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A string schema by its format.
fn string_type(format: &str) -> Type {
    match format {
        "byte" => Type::Bytes,
        "duration" => Type::Duration,
        "date" | "date-time" => Type::Timestamp,
        _ => Type::String,
    }
}

/// `WithTypeAndObjectMeta`: `kind`, `apiVersion` and `metadata.name` /
/// `metadata.generateName` are always readable at a resource's root.
fn with_type_and_object_meta(schema: &Value) -> Value {
    let is_type = |value: Option<&Value>, expected: &str| {
        value.and_then(|v| v.get("type")).and_then(Value::as_str) == Some(expected)
    };
    let properties = schema.get("properties");
    let property = |name: &str| properties.and_then(|p| p.get(name));
    let metadata = property("metadata");
    let meta_property = |name: &str| {
        metadata
            .and_then(|m| m.get("properties"))
            .and_then(|p| p.get(name))
    };
    if properties.is_some()
        && is_type(property("kind"), "string")
        && is_type(property("apiVersion"), "string")
        && is_type(metadata, "object")
        && metadata.and_then(|m| m.get("properties")).is_some()
        && is_type(meta_property("name"), "string")
        && is_type(meta_property("generateName"), "string")
    {
        return schema.clone();
    }
    let mut result = schema.clone();
    let string = serde_json::json!({"type": "string"});
    let mut props = properties
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    props.insert("kind".into(), string.clone());
    props.insert("apiVersion".into(), string.clone());
    props.insert(
        "metadata".into(),
        serde_json::json!({"type": "object", "properties": {"name": string, "generateName": string}}),
    );
    if let Some(object) = result.as_object_mut() {
        object.insert("properties".into(), Value::Object(props));
    }
    result
}

/// The properties of an object schema given as JSON.
#[derive(Debug)]
struct JsonFields {
    name: String,
    schema: Value,
}

impl Fields for JsonFields {
    fn field(&self, selected: &str) -> Option<Type> {
        let properties = self.schema.get("properties")?.as_object()?;
        let (property, schema) = properties
            .iter()
            .find(|(property, _)| names_property(selected, property))?;
        let embedded = schema.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
        from_json(schema, &format!("{}.{property}", self.name), embedded)
    }
}

/// The type of node `id` of a compiled model (built-in OpenAPI), named
/// `name`. `None`: not exposed.
pub fn from_model(model: &'static Model, id: NodeId, name: &str) -> Option<Type> {
    from_model_depth(model, id, name, 0)
}

fn from_model_depth(model: &'static Model, id: NodeId, name: &str, depth: usize) -> Option<Type> {
    // `$ref` chains end (the model resolved them); the bound guards a
    // definition that is its own reference.
    if depth > 32 {
        return Some(Type::Dyn);
    }
    let node = model.node(id);
    if node.int_or_string || node.format.as_deref() == Some("int-or-string") {
        return Some(Type::Dyn);
    }
    if node.reference.is_some() {
        let target = model.resolve(id)?;
        return from_model_depth(model, target, name, depth + 1);
    }
    match node.schema_type? {
        SchemaType::Array => Some(Type::list(from_model_depth(
            model,
            node.items?,
            &format!("{name}.@idx"),
            depth + 1,
        )?)),
        SchemaType::Object => {
            if let Some(additional) = node.additional_properties {
                let values =
                    from_model_depth(model, additional, &format!("{name}.@elem"), depth + 1)?;
                return Some(Type::map(Type::String, values));
            }
            Some(Type::Object(Object {
                name: Arc::from(name),
                fields: Arc::new(ModelFields {
                    name: name.to_string(),
                    model,
                    id,
                }),
            }))
        }
        SchemaType::String => Some(string_type(node.format.as_deref().unwrap_or(""))),
        SchemaType::Boolean => Some(Type::Bool),
        SchemaType::Number => Some(Type::Double),
        SchemaType::Integer => Some(Type::Int),
        SchemaType::Other => None,
    }
}

/// The properties of an object node of a compiled model.
#[derive(Debug)]
struct ModelFields {
    name: String,
    model: &'static Model,
    id: NodeId,
}

impl Fields for ModelFields {
    fn field(&self, selected: &str) -> Option<Type> {
        let properties = self.model.node(self.id).properties.as_deref()?;
        let property = properties
            .iter()
            .find(|property| names_property(selected, &property.name))?;
        from_model(
            self.model,
            property.node,
            &format!("{}.{}", self.name, property.name),
        )
    }
}
