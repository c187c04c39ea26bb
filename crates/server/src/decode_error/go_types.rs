//! The Go type of each schema a body decodes into (`sigs.k8s.io/json` into
//! the typed object, driven by the OpenAPI schema as compiled into the
//! schema model, `crate::schema`).

use std::collections::HashMap;
use std::sync::OnceLock;

use super::named_types::{APIS_META_PREFIX, API_PREFIX, NAMED_TYPES};
use crate::schema::{Model, NodeId, Reference, SchemaType};

/// The Go type a JSON value is decoded into, as far as the error texts need it.
#[derive(Debug, Clone)]
pub(super) enum GoType {
    /// A string kind (`string`, `v1.Protocol`).
    Str(String),
    Int {
        name: String,
        bits: u32,
    },
    Float {
        name: String,
        bits: u32,
    },
    Bool(String),
    /// `[]byte`: base64 from a string, or an array of bytes.
    Bytes(String),
    Slice {
        name: String,
        elem: Box<GoType>,
    },
    /// A map with string keys.
    Map {
        name: String,
        value: Box<GoType>,
    },
    /// A struct: its `reflect.Type.String()` (`v1.ObjectMeta`), its name
    /// (`ObjectMeta`, the `Go struct field` prefix) and its definition.
    Struct {
        name: String,
        type_name: String,
        definition: String,
    },
    /// `metav1.Time` (`micro: false`) / `metav1.MicroTime` (`UnmarshalJSON`).
    Time {
        micro: bool,
    },
    /// `resource.Quantity` (`UnmarshalJSON` + `ParseQuantity`).
    Quantity,
    /// `intstr.IntOrString` (`UnmarshalJSON` into int32 or string).
    IntOrString,
    /// apiextensions `JSONSchemaPropsOrArray`, `JSONSchemaPropsOrStringArray`
    /// or `JSONSchemaPropsOrBool`: a nested schema, or the alternative
    /// (`UnmarshalJSON`, `apiextensions/v1/marshal.go`).
    SchemaOr(SchemaOr),
    /// Anything goes (`runtime.RawExtension`, `FieldsV1`, apiextensions `JSON`,
    /// or a schema this walk does not model).
    Any,
}

impl GoType {
    /// `reflect.Type.String()`.
    fn name(&self) -> String {
        match self {
            GoType::Str(name)
            | GoType::Int { name, .. }
            | GoType::Float { name, .. }
            | GoType::Bool(name)
            | GoType::Bytes(name)
            | GoType::Slice { name, .. }
            | GoType::Map { name, .. }
            | GoType::Struct { name, .. } => name.clone(),
            GoType::Time { micro: false } => "v1.Time".into(),
            GoType::Time { micro: true } => "v1.MicroTime".into(),
            GoType::Quantity => "resource.Quantity".into(),
            GoType::IntOrString => "intstr.IntOrString".into(),
            GoType::SchemaOr(alternative) => alternative.type_name().into(),
            GoType::Any => "interface {}".into(),
        }
    }

    /// Renames the type (a named Go type), and the element / value types that a
    /// `[]X` / `map[K]X` name spells out.
    fn renamed(self, new: &str) -> GoType {
        let elem_name = new.strip_prefix("[]");
        let value_name = new.strip_prefix("map[").and_then(|rest| {
            let mut depth = 1usize;
            for (i, c) in rest.char_indices() {
                match c {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(&rest[i + 1..]);
                        }
                    }
                    _ => {}
                }
            }
            None
        });
        match self {
            GoType::Str(_) => GoType::Str(new.into()),
            GoType::Int { bits, .. } => GoType::Int {
                name: new.into(),
                bits,
            },
            GoType::Float { bits, .. } => GoType::Float {
                name: new.into(),
                bits,
            },
            GoType::Bool(_) => GoType::Bool(new.into()),
            GoType::Bytes(_) => GoType::Bytes(new.into()),
            GoType::Slice { elem, .. } => GoType::Slice {
                name: new.into(),
                elem: Box::new(match elem_name {
                    Some(elem_name) => elem.renamed(elem_name),
                    None => *elem,
                }),
            },
            GoType::Map { value, .. } => GoType::Map {
                name: new.into(),
                value: Box::new(match value_name {
                    Some(value_name) => value.renamed(value_name),
                    None => *value,
                }),
            },
            other => other,
        }
    }
}

/// `pkg.Type` of a definition name (`io.k8s.api.core.v1.PodSpec` -> `v1.PodSpec`).
pub(super) fn go_type_of_definition(definition: &str) -> (String, String) {
    let mut parts = definition.rsplit('.');
    let type_name = parts.next().unwrap_or(definition).to_string();
    let package = parts.next().unwrap_or("");
    (format!("{package}.{type_name}"), type_name)
}

/// The Go type of a schema (a property, an item, a map value).
fn resolve(model: &Model, id: NodeId) -> GoType {
    let node = model.node(id);
    match node.reference {
        Some(Reference::Node(target)) => return resolve_definition(model, target),
        Some(Reference::Missing) => return GoType::Any,
        None => {}
    }
    let format = node.format.as_deref();
    match node.schema_type {
        Some(SchemaType::String) if format == Some("byte") => GoType::Bytes("[]uint8".into()),
        Some(SchemaType::String) if format == Some("int-or-string") => GoType::IntOrString,
        Some(SchemaType::String) => GoType::Str("string".into()),
        Some(SchemaType::Integer) => match format {
            Some("int32") => GoType::Int {
                name: "int32".into(),
                bits: 32,
            },
            Some("int64") => GoType::Int {
                name: "int64".into(),
                bits: 64,
            },
            _ => GoType::Int {
                name: "int".into(),
                bits: 64,
            },
        },
        Some(SchemaType::Number) => match format {
            Some("float") => GoType::Float {
                name: "float32".into(),
                bits: 32,
            },
            _ => GoType::Float {
                name: "float64".into(),
                bits: 64,
            },
        },
        Some(SchemaType::Boolean) => GoType::Bool("bool".into()),
        Some(SchemaType::Array) => {
            let elem = node
                .items
                .map_or(GoType::Any, |items| resolve(model, items));
            match elem {
                GoType::Any => GoType::Any,
                elem => GoType::Slice {
                    name: format!("[]{}", elem.name()),
                    elem: Box::new(elem),
                },
            }
        }
        Some(SchemaType::Object) => match node.additional_properties {
            Some(values) => match resolve(model, values) {
                GoType::Any => GoType::Any,
                value => GoType::Map {
                    name: format!("map[string]{}", value.name()),
                    value: Box::new(value),
                },
            },
            None => GoType::Any,
        },
        _ => GoType::Any,
    }
}

fn resolve_definition(model: &Model, id: NodeId) -> GoType {
    let definition = model.definition_name(id).unwrap_or("");
    match definition {
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => return GoType::Quantity,
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => return GoType::IntOrString,
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => return GoType::Time { micro: false },
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => return GoType::Time { micro: true },
        "io.k8s.apimachinery.pkg.runtime.RawExtension"
        | "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1" => return GoType::Any,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray" => {
            return GoType::SchemaOr(SchemaOr::Array)
        }
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray" => {
            return GoType::SchemaOr(SchemaOr::StringArray)
        }
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool" => {
            return GoType::SchemaOr(SchemaOr::Bool)
        }
        _ => {}
    }
    let schema = model.node(id);
    let (name, type_name) = go_type_of_definition(definition);
    let is_struct = schema.properties.is_some() || schema.schema_type == Some(SchemaType::Object);
    if is_struct {
        GoType::Struct {
            name,
            type_name,
            definition: definition.to_string(),
        }
    } else {
        // apiextensions JSON / JSONSchemaPropsOr*: custom UnmarshalJSON.
        GoType::Any
    }
}

/// What a `JSONSchemaPropsOr*` holds besides a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SchemaOr {
    /// `[]JSONSchemaProps`.
    Array,
    /// `[]string`.
    StringArray,
    /// `true` or `false`.
    Bool,
}

impl SchemaOr {
    pub(super) fn type_name(self) -> &'static str {
        match self {
            SchemaOr::Array => "v1.JSONSchemaPropsOrArray",
            SchemaOr::StringArray => "v1.JSONSchemaPropsOrStringArray",
            SchemaOr::Bool => "v1.JSONSchemaPropsOrBool",
        }
    }
}

/// The nested schema type of a `JSONSchemaPropsOr*`.
pub(super) fn json_schema_props() -> GoType {
    let definition = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
    let (name, type_name) = go_type_of_definition(definition);
    GoType::Struct {
        name,
        type_name,
        definition: definition.to_string(),
    }
}

/// The Go type of property `field` of `definition`.
pub(super) fn field_type(model: &Model, definition: &str, field: &str, schema: NodeId) -> GoType {
    let resolved = resolve(model, schema);
    let short = definition
        .strip_prefix(API_PREFIX)
        .or_else(|| definition.strip_prefix(APIS_META_PREFIX))
        .unwrap_or(definition);
    let named = named_types_by_definition()
        .get(short)
        .and_then(|fields| fields.iter().find(|(name, _)| *name == field));
    match named {
        Some((_, go_type)) => resolved.renamed(go_type),
        None => resolved,
    }
}

/// [`NAMED_TYPES`] grouped by definition (`core.v1.ServicePort`): this runs
/// for every field of every request body, where a scan of the whole table
/// was 2% of a create's CPU.
fn named_types_by_definition() -> &'static HashMap<&'static str, Vec<(&'static str, &'static str)>>
{
    static BY_DEFINITION: OnceLock<HashMap<&'static str, Vec<(&'static str, &'static str)>>> =
        OnceLock::new();
    BY_DEFINITION.get_or_init(|| {
        let mut map: HashMap<&'static str, Vec<(&'static str, &'static str)>> = HashMap::new();
        for (key, go_type) in NAMED_TYPES {
            if let Some((definition, field)) = key.rsplit_once('.') {
                map.entry(definition).or_default().push((field, go_type));
            }
        }
        map
    })
}
