//! A structured-merge-diff view of the vendored OpenAPI v2 definitions,
//! following kube-openapi's `schemaconv` rules:
//!
//! * arrays: `x-kubernetes-list-type` `atomic` / `set` / `map` (keys from
//!   `x-kubernetes-list-map-keys`); without it, `x-kubernetes-patch-strategy`
//!   containing `merge` makes an associative list keyed by
//!   `x-kubernetes-patch-merge-key` (a set for primitives); otherwise atomic;
//! * objects with `properties`: structs (`x-kubernetes-map-type: atomic`
//!   makes them one leaf); `additionalProperties`: maps (granular unless
//!   atomic);
//! * `x-kubernetes-preserve-unknown-fields`, `type: object` with nothing else
//!   and untyped schemas: "deduced" (maps are granular, lists atomic, the
//!   rest scalars);
//! * everything else (including int-or-string, quantities, times) a scalar.

use serde_json::{Map, Value};

use crate::openapi::OpenApi;

const REF_PREFIX: &str = "#/definitions/";

/// How a list's items are told apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType {
    Atomic,
    /// Items are scalars, identified by value (`v:`).
    Set,
    /// Items are objects, identified by these key fields (`k:`).
    Map(Vec<String>),
}

/// One resolved schema node.
#[derive(Clone, Copy)]
pub enum Node<'a> {
    Scalar,
    Struct {
        properties: &'a Map<String, Value>,
        atomic: bool,
        /// Unknown keys are kept and deduced (`x-kubernetes-preserve-unknown-fields`).
        preserve: bool,
    },
    Map {
        elements: &'a Value,
        atomic: bool,
    },
    List {
        items: &'a Value,
        list_type: ListTypeRef<'a>,
    },
    Deduced,
}

/// A list type borrowed from the schema.
#[derive(Clone, Copy, Debug)]
pub enum ListTypeRef<'a> {
    Atomic,
    Set,
    Map(&'a [Value]),
    /// `x-kubernetes-patch-merge-key` only.
    MergeKey(&'a str),
}

impl ListTypeRef<'_> {
    pub fn keys(&self) -> Vec<String> {
        match self {
            ListTypeRef::Map(keys) => keys
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            ListTypeRef::MergeKey(key) => vec![key.to_string()],
            _ => Vec::new(),
        }
    }

    pub fn is_atomic(&self) -> bool {
        matches!(self, ListTypeRef::Atomic)
    }
}

/// The schema of an object kind, resolved lazily node by node.
#[derive(Clone, Copy)]
pub struct Schema<'a> {
    pub openapi: &'a OpenApi,
    pub root: Option<&'a Value>,
}

/// A schema for an untyped (deduced) value.
static DEDUCED: Value = Value::Null;

impl<'a> Schema<'a> {
    /// The schema of a kind; kinds without a vendored definition (custom
    /// resources) are deduced throughout.
    pub fn for_kind(openapi: &'a OpenApi, group: &str, version: &str, kind: &str) -> Self {
        let root = openapi.schema_for_kind(group, version, kind).ok().flatten();
        Schema { openapi, root }
    }

    pub fn root(&self) -> &'a Value {
        self.root.unwrap_or(&DEDUCED)
    }

    pub fn deduced() -> &'static Value {
        &DEDUCED
    }

    /// Resolves `$ref`s and reads the extensions (those on the referring
    /// schema win over the definition's).
    pub fn resolve(&self, schema: &'a Value) -> Node<'a> {
        if schema.is_null() {
            return Node::Deduced;
        }
        let mut current = schema;
        let mut map_type = schema.get("x-kubernetes-map-type").and_then(Value::as_str);
        for _ in 0..16 {
            let Some(name) = current
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(REF_PREFIX))
            else {
                break;
            };
            match self.openapi.definition(name) {
                Ok(Some(definition)) => {
                    current = definition;
                    if map_type.is_none() {
                        map_type = current.get("x-kubernetes-map-type").and_then(Value::as_str);
                    }
                }
                _ => return Node::Deduced,
            }
        }
        let atomic = map_type == Some("atomic");
        let preserve = current
            .get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if let Some(properties) = current.get("properties").and_then(Value::as_object) {
            return Node::Struct {
                properties,
                atomic,
                preserve,
            };
        }
        if let Some(elements) = current
            .get("additionalProperties")
            .filter(|v| v.is_object())
        {
            return Node::Map { elements, atomic };
        }
        if let Some(items) = current.get("items").filter(|v| v.is_object()) {
            let list_type = list_type(schema).or_else(|| list_type(current));
            let list_type = list_type.unwrap_or(ListTypeRef::Atomic);
            // A merge strategy without a key over primitives is a set.
            return Node::List { items, list_type };
        }
        if preserve {
            return Node::Deduced;
        }
        match current.get("type").and_then(Value::as_str) {
            Some("object") if atomic => Node::Scalar,
            Some("object") | None => {
                if current.get("format").is_some() {
                    Node::Scalar
                } else {
                    Node::Deduced
                }
            }
            _ => Node::Scalar,
        }
    }

    /// The schema of a struct field or map entry `key` under `node`
    /// (`None`: not declared).
    pub fn field(&self, node: &Node<'a>, key: &str) -> Option<&'a Value> {
        match node {
            Node::Struct {
                properties,
                preserve,
                ..
            } => properties
                .get(key)
                .or(if *preserve { Some(&DEDUCED) } else { None }),
            Node::Map { elements, .. } => Some(elements),
            Node::Deduced => Some(&DEDUCED),
            _ => None,
        }
    }
}

fn list_type(schema: &Value) -> Option<ListTypeRef<'_>> {
    match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("atomic") => return Some(ListTypeRef::Atomic),
        Some("set") => return Some(ListTypeRef::Set),
        Some("map") => {
            let keys = schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            return Some(ListTypeRef::Map(keys));
        }
        Some(_) => return Some(ListTypeRef::Atomic),
        None => {}
    }
    let strategy = schema
        .get("x-kubernetes-patch-strategy")
        .and_then(Value::as_str)?;
    if strategy.split(',').any(|s| s == "merge") {
        return Some(
            match schema
                .get("x-kubernetes-patch-merge-key")
                .and_then(Value::as_str)
            {
                Some(key) => ListTypeRef::MergeKey(key),
                None => ListTypeRef::Set,
            },
        );
    }
    None
}
