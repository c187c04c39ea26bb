//! What a schema allows in a value ([`Shape`]), read from the compiled
//! schema model (`crate::schema`), and the strict-error list both walks fill.

use crate::go::strconv::quote as go_quote;
use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::schema::{Model, Node, NodeId, Reference, SchemaType};

/// Most strict errors `sigs.k8s.io/json` keeps.
pub(super) const MAX_ERRORS: usize = 100;

/// Definitions kube decodes with a custom `UnmarshalJSON` (nothing inside is
/// checked), whatever their schema says.
const OPAQUE_DEFINITIONS: &[&str] = &[
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
];

/// What a schema says about the keys a value may hold.
#[derive(Clone, Copy)]
pub(super) enum Shape<'a> {
    /// A Go struct: only the properties of this node (`None`: an empty
    /// struct); with `preserve`, unknown keys are kept (a CRD schema's
    /// `x-kubernetes-preserve-unknown-fields`).
    Struct {
        fields: Option<&'a Node>,
        preserve: bool,
    },
    /// A Go map: any key, values of this schema.
    Map(NodeId),
    /// A slice of this schema.
    List(NodeId),
    /// Not looked into (scalars, custom unmarshallers, free-form JSON).
    Opaque,
    /// `map[string]interface{}` all the way down: only duplicates count.
    Any,
}

pub(super) fn shape(model: &Model, id: NodeId) -> Shape<'_> {
    let mut node = model.node(id);
    match node.reference {
        None => {}
        Some(Reference::Missing) => return Shape::Opaque,
        Some(Reference::Node(target)) => {
            if model
                .definition_name(target)
                .is_some_and(|name| OPAQUE_DEFINITIONS.contains(&name))
            {
                return Shape::Opaque;
            }
            node = model.node(target);
            if node.properties.is_none()
                && !node.has_additional_properties
                && node.schema_type == Some(SchemaType::Object)
            {
                // An empty Go struct: no field is known.
                return Shape::Struct {
                    fields: None,
                    preserve: false,
                };
            }
        }
    }
    if node.properties.is_some() {
        return Shape::Struct {
            fields: Some(node),
            preserve: node.preserve_unknown_fields,
        };
    }
    if let Some(values) = node.additional_properties {
        return Shape::Map(values);
    }
    if let Some(items) = node.items {
        return Shape::List(items);
    }
    Shape::Opaque
}

/// The JSON of the Go zero value of a schema's type: what kube stores for a
/// `null` list item or map value, which its typed decode turns into the
/// element type's zero value (`[null]` into `[]EndpointSubset` is `[{}]`,
/// `{"a": null}` into `map[string]string` is `{"a": ""}`). Pointers, slices,
/// maps, `metav1.Time` and free-form values encode their zero as `null`.
pub(super) fn zero_value(model: &Model, id: NodeId) -> Value {
    let mut node = model.node(id);
    match node.reference {
        None => {}
        Some(Reference::Missing) => return Value::Null,
        Some(Reference::Node(target)) => {
            match model.definition_name(target).unwrap_or("") {
                "io.k8s.apimachinery.pkg.api.resource.Quantity" => return Value::from("0"),
                "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => return Value::from(0),
                name if OPAQUE_DEFINITIONS.contains(&name) => return Value::Null,
                _ => {}
            }
            node = model.node(target);
        }
    }
    if node.int_or_string {
        return Value::from(0);
    }
    match node.schema_type {
        Some(SchemaType::String) => match node.format.as_deref() {
            Some("date-time" | "byte") => Value::Null,
            _ => Value::from(""),
        },
        Some(SchemaType::Integer | SchemaType::Number) => Value::from(0),
        Some(SchemaType::Boolean) => Value::from(false),
        Some(SchemaType::Object) if !node.has_additional_properties => Value::Object(Map::new()),
        _ => Value::Null,
    }
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
