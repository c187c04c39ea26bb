//! What a schema allows in a value ([`Shape`]), and the strict-error list
//! both walks fill.

use crate::go::strconv::quote as go_quote;
use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::openapi::OpenApi;

/// Most strict errors `sigs.k8s.io/json` keeps.
pub(super) const MAX_ERRORS: usize = 100;

/// Definitions kube decodes with a custom `UnmarshalJSON` (nothing inside is
/// checked), whatever their schema says.
const OPAQUE_DEFINITIONS: &[&str] = &[
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
];

const REF_PREFIX: &str = "#/definitions/";

/// What a schema says about the keys a value may hold.
#[derive(Clone, Copy)]
pub(super) enum Shape<'a> {
    /// A Go struct: only these properties; with `preserve`, unknown keys are
    /// kept (a CRD schema's `x-kubernetes-preserve-unknown-fields`).
    Struct {
        properties: Option<&'a Map<String, Value>>,
        preserve: bool,
    },
    /// A Go map: any key, values of this schema.
    Map(&'a Value),
    /// A slice of this schema.
    List(&'a Value),
    /// Not looked into (scalars, custom unmarshallers, free-form JSON).
    Opaque,
    /// `map[string]interface{}` all the way down: only duplicates count.
    Any,
}

pub(super) fn shape<'a>(openapi: &'a OpenApi, schema: &'a Value) -> Shape<'a> {
    let mut schema = schema;
    // Follow `$ref` chains (bounded: definitions may refer to each other).
    for _ in 0..8 {
        let Some(name) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix(REF_PREFIX))
        else {
            break;
        };
        if OPAQUE_DEFINITIONS.contains(&name) {
            return Shape::Opaque;
        }
        match openapi.definition(name) {
            Ok(Some(definition)) => {
                if definition.get("properties").is_none()
                    && definition.get("additionalProperties").is_none()
                    && definition.get("type").and_then(Value::as_str) == Some("object")
                {
                    // An empty Go struct: no field is known.
                    return Shape::Struct {
                        properties: None,
                        preserve: false,
                    };
                }
                schema = definition;
            }
            _ => return Shape::Opaque,
        }
    }
    inline_shape(schema)
}

/// The JSON of the Go zero value of a schema's type: what kube stores for a
/// `null` list item or map value, which its typed decode turns into the
/// element type's zero value (`[null]` into `[]EndpointSubset` is `[{}]`,
/// `{"a": null}` into `map[string]string` is `{"a": ""}`). Pointers, slices,
/// maps, `metav1.Time` and free-form values encode their zero as `null`.
pub(super) fn zero_value(openapi: &OpenApi, schema: &Value) -> Value {
    let mut schema = schema;
    for _ in 0..8 {
        let Some(name) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix(REF_PREFIX))
        else {
            break;
        };
        match name {
            "io.k8s.apimachinery.pkg.api.resource.Quantity" => return Value::from("0"),
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => return Value::from(0),
            _ if OPAQUE_DEFINITIONS.contains(&name) => return Value::Null,
            _ => {}
        }
        match openapi.definition(name) {
            Ok(Some(definition)) => schema = definition,
            _ => return Value::Null,
        }
    }
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return Value::from(0);
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => match schema.get("format").and_then(Value::as_str) {
            Some("date-time" | "byte") => Value::Null,
            _ => Value::from(""),
        },
        Some("integer" | "number") => Value::from(0),
        Some("boolean") => Value::from(false),
        Some("object") if schema.get("additionalProperties").is_none() => Value::Object(Map::new()),
        _ => Value::Null,
    }
}

fn inline_shape(schema: &Value) -> Shape<'_> {
    let preserve = schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        return Shape::Struct {
            properties: Some(properties),
            preserve,
        };
    }
    if let Some(additional) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        return Shape::Map(additional);
    }
    if let Some(items) = schema.get("items").filter(|v| v.is_object()) {
        return Shape::List(items);
    }
    Shape::Opaque
}

/// Collected strict errors: kube's messages, each once, at most 100.
#[derive(Default)]
pub(super) struct Errors {
    pub(super) messages: Vec<String>,
    seen: HashSet<String>,
}

impl Errors {
    pub(super) fn push(&mut self, kind: &str, path: &str, key: &str) {
        if self.messages.len() >= MAX_ERRORS {
            return;
        }
        let full = if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        };
        let message = format!("{kind} {}", go_quote(&full));
        if self.seen.insert(message.clone()) {
            self.messages.push(message);
        }
    }
}

pub(super) fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}
