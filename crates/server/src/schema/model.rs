//! The compiled schema model: an arena of [`Node`]s, one per schema object
//! (a definition or an inline schema under `properties`,
//! `additionalProperties` or `items`), with every `$ref` resolved once to
//! the [`NodeId`] of its definition (so recursive definitions are cycles of
//! ids, not of pointers).
//!
//! A node holds the schema's own facts, read from the JSON once; what a
//! reader makes of them (a Go type for strategic merge and decode errors,
//! a structured-merge-diff type for server-side apply, a strict-decoding
//! shape for field validation, the paths to quantities) stays with that
//! reader, which looks nodes up here instead of walking JSON.

use std::collections::HashMap;

use super::value_rules::NodeValues;

/// Index of a node: in the built-in model, or past its end in a custom
/// resource's model layered on it.
pub type NodeId = u32;

/// The node of an empty schema (`{}`): no type, nothing declared. Every
/// reader treats it as "nothing known" (deduced for SSA, unknown for
/// strategic merge, not looked into by field validation).
pub const EMPTY: NodeId = 0;

/// `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaType {
    String,
    Integer,
    Number,
    Boolean,
    Object,
    Array,
    /// Any other string (readers treat it as a scalar).
    Other,
}

impl SchemaType {
    pub(super) fn parse(text: &str) -> SchemaType {
        match text {
            "string" => SchemaType::String,
            "integer" => SchemaType::Integer,
            "number" => SchemaType::Number,
            "boolean" => SchemaType::Boolean,
            "object" => SchemaType::Object,
            "array" => SchemaType::Array,
            _ => SchemaType::Other,
        }
    }
}

/// `x-kubernetes-map-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapType {
    Atomic,
    Granular,
    /// Any other string.
    Other,
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListTypeExtension {
    Atomic,
    Set,
    Map,
    /// Any other string.
    Other,
}

/// A `$ref`, resolved when the model was compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    /// The node of the definition the chain of `$ref`s ends at.
    Node(NodeId),
    /// A definition that does not exist (or a chain that does not end):
    /// readers treat the value as unknown.
    Missing,
}

/// One declared property: its JSON name and schema.
#[derive(Debug, Clone)]
pub struct Property {
    pub name: Box<str>,
    pub node: NodeId,
}

/// One schema object, as read from its JSON (no `$ref` followed: a node
/// that is a `$ref` carries the reference plus its own extensions, which
/// readers weigh against the definition's as kube does).
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// The OpenAPI definition name (`io.k8s.api.core.v1.PodSpec`) when this
    /// node is a definition's root.
    pub definition: Option<Box<str>>,
    /// `$ref`.
    pub reference: Option<Reference>,
    /// `type` (`None`: absent or not a string).
    pub schema_type: Option<SchemaType>,
    /// `format`.
    pub format: Option<Box<str>>,
    /// `properties` (an object), sorted by name: the order of the JSON
    /// object as parsed, so lookups are binary searches.
    pub properties: Option<Box<[Property]>>,
    /// `additionalProperties` when it is a schema.
    pub additional_properties: Option<NodeId>,
    /// `additionalProperties` is present at all (a schema or a boolean).
    pub has_additional_properties: bool,
    /// `items` when it is a schema.
    pub items: Option<NodeId>,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-int-or-string: true`.
    pub int_or_string: bool,
    /// `x-kubernetes-map-type`.
    pub map_type: Option<MapType>,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<ListTypeExtension>,
    /// The string entries of `x-kubernetes-list-map-keys`.
    pub list_map_keys: Box<[Box<str>]>,
    /// `x-kubernetes-patch-strategy` (`merge`, `retainKeys`, `merge,retainKeys`).
    pub patch_strategy: Option<Box<str>>,
    /// `x-kubernetes-patch-merge-key`.
    pub patch_merge_key: Option<Box<str>>,
}

impl Node {
    /// The schema of declared property `name`.
    pub fn property(&self, name: &str) -> Option<NodeId> {
        let properties = self.properties.as_deref()?;
        properties
            .binary_search_by(|property| (*property.name).cmp(name))
            .ok()
            .map(|index| properties[index].node)
    }

    /// The definition a `$ref` node points at (`None`: not a reference, or
    /// a missing one).
    pub fn target(&self) -> Option<NodeId> {
        match self.reference {
            Some(Reference::Node(id)) => Some(id),
            _ => None,
        }
    }
}

/// Built-in kinds by kind, then group and version (kind first: a lookup
/// needs no allocation).
pub(super) type KindIndex = HashMap<Box<str>, Vec<(Box<str>, Box<str>, NodeId)>>;

/// One compiled, immutable schema model.
///
/// The built-in model holds every vendored definition; a custom resource's
/// model ([`Model::layered`]) holds only its own nodes, numbered after the
/// built-in ones, and reaches the built-in definitions it refers to
/// (`ObjectMeta`) through the same ids.
#[derive(Debug, Default)]
pub struct Model {
    /// The model this one extends (its ids come first).
    pub(super) base: Option<&'static Model>,
    /// Ids below this are the base's.
    pub(super) offset: NodeId,
    pub(super) nodes: Vec<Node>,
    /// Definition name to node (built-in model only).
    pub(super) definitions: HashMap<Box<str>, NodeId>,
    /// Kind to node (built-in model only).
    pub(super) kinds: KindIndex,
    /// The root of a layered model (a custom resource version's schema;
    /// for a CRD version, with the root's type and object meta added, see
    /// [`Model::schema_root`]).
    pub(super) root: Option<NodeId>,
    /// The root of the schema as written, when it differs from `root`: a
    /// CRD version's `openAPIV3Schema`, which values are validated,
    /// defaulted and pruned with.
    pub(super) schema_root: Option<NodeId>,
    /// The value facts of each of `nodes` (empty for models compiled
    /// without them: the built-in one).
    pub(super) values: Vec<NodeValues>,
}

impl Model {
    /// A model holding only the empty schema ([`EMPTY`]).
    pub fn empty() -> &'static Model {
        static EMPTY_MODEL: std::sync::OnceLock<Model> = std::sync::OnceLock::new();
        EMPTY_MODEL.get_or_init(|| Model {
            nodes: vec![Node::default()],
            ..Model::default()
        })
    }

    /// The node with this id. Ids come only from this model (or its base),
    /// so a stray id is a bug: it reads as the empty schema.
    pub fn node(&self, id: NodeId) -> &Node {
        static EMPTY_NODE: std::sync::OnceLock<Node> = std::sync::OnceLock::new();
        let found = if id < self.offset {
            self.base.and_then(|base| base.nodes.get(id as usize))
        } else {
            self.nodes.get((id - self.offset) as usize)
        };
        debug_assert!(found.is_some(), "schema node {id} out of range");
        found.unwrap_or_else(|| EMPTY_NODE.get_or_init(Node::default))
    }

    /// The node a `$ref` leads to, or the node itself when it is not one
    /// (`None`: a missing definition).
    pub fn resolve(&self, id: NodeId) -> Option<NodeId> {
        match self.node(id).reference {
            None => Some(id),
            Some(Reference::Node(target)) => Some(target),
            Some(Reference::Missing) => None,
        }
    }

    /// The node of a definition by OpenAPI name.
    pub fn definition(&self, name: &str) -> Option<NodeId> {
        match self.base {
            Some(base) => base.definition(name),
            None => self.definitions.get(name).copied(),
        }
    }

    /// The definition node of a built-in group/version/kind.
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<NodeId> {
        if let Some(base) = self.base {
            return base.kind(group, version, kind);
        }
        self.kinds
            .get(kind)?
            .iter()
            .find(|(g, v, _)| &**g == group && &**v == version)
            .map(|(_, _, id)| *id)
    }

    /// As [`Model::kind`], with the kind's name borrowed from the model.
    pub fn kind_entry(&self, group: &str, version: &str, kind: &str) -> Option<(&str, NodeId)> {
        if let Some(base) = self.base {
            return base.kind_entry(group, version, kind);
        }
        let (name, entries) = self.kinds.get_key_value(kind)?;
        entries
            .iter()
            .find(|(g, v, _)| &**g == group && &**v == version)
            .map(|(_, _, id)| (&**name, *id))
    }

    /// The root of a layered model (a custom resource version's schema).
    pub fn root(&self) -> Option<NodeId> {
        self.root
    }

    /// The root of the schema as written (a CRD version's
    /// `openAPIV3Schema`, without the `apiVersion`, `kind` and `metadata`
    /// [`Model::root`] adds): what custom resources' values are checked,
    /// defaulted and pruned with.
    pub fn schema_root(&self) -> Option<NodeId> {
        self.schema_root.or(self.root)
    }

    /// The value facts of a node ([`NodeValues::NONE`] for a node without:
    /// the base model's, or any node of a model compiled without them).
    pub fn values(&self, id: NodeId) -> &NodeValues {
        id.checked_sub(self.offset)
            .and_then(|index| self.values.get(index as usize))
            .unwrap_or(&NodeValues::NONE)
    }

    /// The definition name of a node (`io.k8s.api.core.v1.PodSpec`), when it
    /// is a definition's root.
    pub fn definition_name(&self, id: NodeId) -> Option<&str> {
        self.node(id).definition.as_deref()
    }

    /// The ids of the nodes this model holds itself (not its base's).
    pub fn own_ids(&self) -> std::ops::Range<NodeId> {
        let end = NodeId::try_from(self.nodes.len()).unwrap_or(NodeId::MAX);
        self.offset..self.offset.saturating_add(end)
    }

    /// Nodes this model holds itself (not counting its base).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the model holds no node of its own.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}
