//! A structured-merge-diff view of the compiled schema model (the vendored
//! OpenAPI v2 definitions, or a custom resource version's schema),
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

use crate::openapi::OpenApi;
use crate::schema::{
    self as model, ListTypeExtension, MapType, Model, NodeId, Reference, SchemaType, EMPTY,
};

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
        /// The compiled node declaring the fields.
        fields: &'a model::Node,
        atomic: bool,
        /// Unknown keys are kept and deduced (`x-kubernetes-preserve-unknown-fields`).
        preserve: bool,
    },
    Map {
        elements: NodeId,
        atomic: bool,
    },
    List {
        items: NodeId,
        list_type: ListTypeRef<'a>,
    },
    Deduced,
}

impl Node<'_> {
    /// Whether this is a struct declaring field `key`.
    pub fn declares(&self, key: &str) -> bool {
        matches!(self, Node::Struct { fields, .. } if fields.property(key).is_some())
    }
}

/// A list type borrowed from the schema.
#[derive(Clone, Copy, Debug)]
pub enum ListTypeRef<'a> {
    Atomic,
    Set,
    Map(&'a [Box<str>]),
    /// `x-kubernetes-patch-merge-key` only.
    MergeKey(&'a str),
}

impl ListTypeRef<'_> {
    pub fn keys(&self) -> Vec<String> {
        match self {
            ListTypeRef::Map(keys) => keys.iter().map(|key| key.to_string()).collect(),
            ListTypeRef::MergeKey(key) => vec![key.to_string()],
            _ => Vec::new(),
        }
    }

    pub fn is_atomic(&self) -> bool {
        matches!(self, ListTypeRef::Atomic)
    }
}

/// The schema of an object kind: a node of the compiled schema model
/// (`crate::schema`), resolved node by node as the walks go.
#[derive(Clone, Copy)]
pub struct Schema<'a> {
    pub model: &'a Model,
    /// The kind's node ([`EMPTY`]: deduced throughout).
    pub root: NodeId,
}

impl<'a> Schema<'a> {
    /// The schema of a built-in kind; kinds without a vendored definition
    /// are deduced throughout.
    pub fn for_kind(_openapi: &OpenApi, group: &str, version: &str, kind: &str) -> Schema<'static> {
        match model::builtin() {
            Ok(builtin) => Schema {
                model: builtin,
                root: builtin.kind(group, version, kind).unwrap_or(EMPTY),
            },
            Err(_) => Schema::deduced_throughout(),
        }
    }

    /// The schema of a compiled custom resource version (its root).
    pub fn of_model(model: &'a Model) -> Self {
        Schema {
            model,
            root: model.root().unwrap_or(EMPTY),
        }
    }

    /// No schema: every value is deduced (maps granular, lists atomic).
    pub fn deduced_throughout() -> Schema<'static> {
        Schema {
            model: Model::empty(),
            root: EMPTY,
        }
    }

    pub fn root(&self) -> NodeId {
        self.root
    }

    /// The schema of an untyped (deduced) value.
    pub fn deduced() -> NodeId {
        EMPTY
    }

    /// Follows a `$ref` and reads the extensions (those on the referring
    /// schema win over the definition's).
    pub fn resolve(&self, id: NodeId) -> Node<'a> {
        if id == EMPTY {
            return Node::Deduced;
        }
        let site = self.model.node(id);
        let mut map_type = site.map_type;
        let current = match site.reference {
            None => site,
            Some(Reference::Missing) => return Node::Deduced,
            Some(Reference::Node(target)) => {
                let definition = self.model.node(target);
                if map_type.is_none() {
                    map_type = definition.map_type;
                }
                definition
            }
        };
        let atomic = map_type == Some(MapType::Atomic);
        let preserve = current.preserve_unknown_fields;
        if current.properties.is_some() {
            return Node::Struct {
                fields: current,
                atomic,
                preserve,
            };
        }
        if let Some(elements) = current.additional_properties {
            return Node::Map { elements, atomic };
        }
        if let Some(items) = current.items {
            let list_type = list_type(site).or_else(|| list_type(current));
            let list_type = list_type.unwrap_or(ListTypeRef::Atomic);
            // A merge strategy without a key over primitives is a set.
            return Node::List { items, list_type };
        }
        if preserve {
            return Node::Deduced;
        }
        match current.schema_type {
            Some(SchemaType::Object) if atomic => Node::Scalar,
            Some(SchemaType::Object) | None => {
                if current.format.is_some() {
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
    pub fn field(&self, node: &Node<'a>, key: &str) -> Option<NodeId> {
        match node {
            Node::Struct {
                fields, preserve, ..
            } => fields
                .property(key)
                .or(if *preserve { Some(EMPTY) } else { None }),
            Node::Map { elements, .. } => Some(*elements),
            Node::Deduced => Some(EMPTY),
            _ => None,
        }
    }
}

fn list_type(node: &model::Node) -> Option<ListTypeRef<'_>> {
    match node.list_type {
        Some(ListTypeExtension::Atomic) => return Some(ListTypeRef::Atomic),
        Some(ListTypeExtension::Set) => return Some(ListTypeRef::Set),
        Some(ListTypeExtension::Map) => return Some(ListTypeRef::Map(&node.list_map_keys)),
        Some(ListTypeExtension::Other) => return Some(ListTypeRef::Atomic),
        None => {}
    }
    let strategy = node.patch_strategy.as_deref()?;
    if strategy.split(',').any(|s| s == "merge") {
        return Some(match node.patch_merge_key.as_deref() {
            Some(key) => ListTypeRef::MergeKey(key),
            None => ListTypeRef::Set,
        });
    }
    None
}
