//! Compiling OpenAPI v2 JSON schemas into a [`Model`]: the vendored
//! built-in definitions ([`compile_definitions`]), and an inline schema
//! layered on them ([`compile_layered`]: a custom resource version's schema,
//! whose `metadata` is a `$ref` to the built-in `ObjectMeta`).
//!
//! Each schema object becomes one node; a `$ref`
//! (`#/definitions/<name>` or `#/components/schemas/<name>`) is resolved to
//! its definition's node once, here, following chains of definitions that
//! are themselves references (none are vendored today) to their end.

use serde_json::Value;

use super::model::{
    ListTypeExtension, MapType, Model, Node, NodeId, Property, Reference, SchemaType, EMPTY,
};
use super::value_rules::NodeValues;
use crate::openapi::Definitions;

/// Longest chain of definitions that are `$ref`s followed before giving up
/// (a cycle of references with nothing in between).
const MAX_REFERENCE_CHAIN: usize = 16;

/// The model of every vendored definition, indexed by name and by
/// group/version/kind. Definition `i` (in sorted name order) is node `i + 1`;
/// node 0 is the empty schema.
pub(crate) fn compile_definitions(definitions: &Definitions) -> Model {
    let names: Vec<&str> = definitions.iter().map(|(name, _)| name).collect();
    let mut model = Model::default();
    for (index, name) in names.iter().enumerate() {
        let id = NodeId::try_from(index + 1).unwrap_or(NodeId::MAX);
        model.definitions.insert((*name).into(), id);
    }
    let lookup = |name: &str| model.definitions.get(name).copied();
    let mut compiler = Compiler {
        offset: 0,
        nodes: Vec::with_capacity(names.len() * 6),
        lookup: &lookup,
        values: None,
    };
    compiler.nodes.push(Node::default());
    compiler
        .nodes
        .resize_with(names.len() + 1, Default::default);
    for (index, (name, schema)) in definitions.iter().enumerate() {
        let mut node = compiler.read(schema);
        node.definition = Some(name.into());
        compiler.nodes[index + 1] = node;
    }
    let mut nodes = compiler.nodes;
    resolve_chains(&mut nodes, 0);
    model.nodes = nodes;
    for (gvk, name) in definitions.kinds() {
        if let Some(&id) = model.definitions.get(name) {
            model
                .kinds
                .entry(gvk.kind.as_str().into())
                .or_default()
                .push((gvk.group.as_str().into(), gvk.version.as_str().into(), id));
        }
    }
    model
}

/// The model of one inline schema whose `$ref`s name definitions of `base`;
/// its nodes are numbered after the base's and its root is
/// [`Model::root`].
pub fn compile_layered(base: &'static Model, schema: &Value) -> Model {
    let offset = NodeId::try_from(base.nodes.len()).unwrap_or(NodeId::MAX);
    let lookup = |name: &str| base.definitions.get(name).copied();
    let mut compiler = Compiler {
        offset,
        nodes: Vec::new(),
        lookup: &lookup,
        values: None,
    };
    let root = compiler.compile(schema);
    let mut nodes = compiler.nodes;
    resolve_chains(&mut nodes, offset);
    Model {
        base: Some(base),
        offset,
        nodes,
        root: Some(root),
        ..Model::default()
    }
}

/// As [`compile_layered`], with every node's value facts ([`NodeValues`])
/// compiled too (the schemas of `allOf`, `anyOf`, `oneOf` and `not` become
/// nodes of the model); then, when `typed_root` holds properties, the root
/// [`Model::root`] is the schema's root with those properties set (a CRD
/// version's `apiVersion`, `kind` and `metadata`): the schema's own root
/// itself when it does not declare them otherwise ([`declared_as`]), else a
/// second node, the schema's own root staying [`Model::schema_root`].
pub(crate) fn compile_layered_values(
    base: &'static Model,
    schema: &Value,
    typed_root: &[(&str, Value)],
) -> Model {
    let offset = NodeId::try_from(base.nodes.len()).unwrap_or(NodeId::MAX);
    let lookup = |name: &str| base.definitions.get(name).copied();
    let mut compiler = Compiler {
        offset,
        nodes: Vec::new(),
        lookup: &lookup,
        values: Some(Vec::new()),
    };
    let schema_root = compiler.compile(schema);
    let root_slot = schema_root.wrapping_sub(offset) as usize;
    let root = if typed_root.is_empty() {
        schema_root
    } else {
        let mut properties: Vec<Property> = compiler
            .nodes
            .get(root_slot)
            .and_then(|node| node.properties.as_deref())
            .map(<[Property]>::to_vec)
            .unwrap_or_default();
        for (name, property) in typed_root {
            let node = compiler.compile(property);
            properties.retain(|known| &*known.name != *name);
            properties.push(Property {
                name: (*name).into(),
                node,
            });
        }
        properties.sort_by(|a, b| a.name.cmp(&b.name));
        let shared = typed_root
            .iter()
            .all(|(name, typed)| declared_as(schema, name, typed));
        if shared {
            // The root as written only declares these as they are typed
            // (or not at all): one root serves both, without a second
            // copy of its property list.
            if let Some(node) = compiler.nodes.get_mut(root_slot) {
                node.properties = Some(properties.into());
            }
            schema_root
        } else {
            let mut typed = compiler.nodes.get(root_slot).cloned().unwrap_or_default();
            typed.properties = Some(properties.into());
            let id = offset + NodeId::try_from(compiler.nodes.len()).unwrap_or(NodeId::MAX);
            compiler.nodes.push(typed);
            if let Some(values) = compiler.values.as_mut() {
                values.push(NodeValues::default());
            }
            id
        }
    };
    let mut nodes = compiler.nodes;
    resolve_chains(&mut nodes, offset);
    Model {
        base: Some(base),
        offset,
        nodes,
        root: Some(root),
        schema_root: Some(schema_root),
        values: compiler.values.unwrap_or_default(),
        ..Model::default()
    }
}

/// Whether the root of `schema` leaves property `name` undeclared, or
/// declares it with nothing but the type `typed` has (an object for a
/// `$ref`) and a description, as generated CRDs declare `apiVersion`,
/// `kind` and `metadata`: then the typed property checks, prunes and
/// defaults that value as the declared one would.
fn declared_as(schema: &Value, name: &str, typed: &Value) -> bool {
    let Some(declared) = schema
        .get("properties")
        .and_then(|properties| properties.get(name))
    else {
        return true;
    };
    let Some(declared) = declared.as_object() else {
        return false;
    };
    let expected = typed
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object");
    declared.iter().all(|(key, value)| match key.as_str() {
        "type" => value.as_str() == Some(expected),
        "description" => true,
        _ => false,
    })
}

struct Compiler<'a> {
    /// Id of `nodes[0]`.
    offset: NodeId,
    nodes: Vec<Node>,
    lookup: &'a dyn Fn(&str) -> Option<NodeId>,
    /// The value facts of `nodes`, when compiled (custom resources).
    values: Option<Vec<NodeValues>>,
}

impl Compiler<'_> {
    /// A new node for `schema` (non-objects read as the empty schema).
    /// Recursion is bounded by the JSON's own nesting (serde_json parses at
    /// most 128 levels).
    fn compile(&mut self, schema: &Value) -> NodeId {
        if !schema.is_object() {
            return EMPTY;
        }
        let id = self.offset + NodeId::try_from(self.nodes.len()).unwrap_or(NodeId::MAX);
        self.nodes.push(Node::default());
        if let Some(values) = self.values.as_mut() {
            values.push(NodeValues::default());
        }
        let node = self.read(schema);
        let slot = (id - self.offset) as usize;
        self.nodes[slot] = node;
        if self.values.is_some() {
            let read = NodeValues::read(schema, &mut |child| self.compile(child));
            if let Some(slot) = self.values.as_mut().and_then(|values| values.get_mut(slot)) {
                *slot = read;
            }
        }
        id
    }

    /// The facts of one schema object, its children compiled.
    fn read(&mut self, schema: &Value) -> Node {
        let text = |key: &str| schema.get(key).and_then(Value::as_str);
        let flag = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
        let reference = text("$ref").map(|target| {
            let name = target
                .strip_prefix(crate::openapi::V2_REF_PREFIX)
                .or_else(|| target.strip_prefix("#/components/schemas/"));
            match name.and_then(|name| (self.lookup)(name)) {
                Some(id) => Reference::Node(id),
                None => Reference::Missing,
            }
        });
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                // serde_json's map is sorted by key: the order is kept.
                properties
                    .iter()
                    .map(|(name, child)| Property {
                        name: name.as_str().into(),
                        node: self.compile(child),
                    })
                    .collect::<Box<[Property]>>()
            });
        let additional = schema.get("additionalProperties");
        let additional_properties = additional
            .filter(|value| value.is_object())
            .map(|value| self.compile(value));
        let items = schema
            .get("items")
            .filter(|value| value.is_object())
            .map(|value| self.compile(value));
        Node {
            definition: None,
            reference,
            schema_type: text("type").map(SchemaType::parse),
            format: text("format").map(Into::into),
            properties,
            additional_properties,
            has_additional_properties: additional.is_some(),
            items,
            preserve_unknown_fields: flag("x-kubernetes-preserve-unknown-fields"),
            int_or_string: flag("x-kubernetes-int-or-string"),
            map_type: text("x-kubernetes-map-type").map(|value| match value {
                "atomic" => MapType::Atomic,
                "granular" => MapType::Granular,
                _ => MapType::Other,
            }),
            list_type: text("x-kubernetes-list-type").map(|value| match value {
                "atomic" => ListTypeExtension::Atomic,
                "set" => ListTypeExtension::Set,
                "map" => ListTypeExtension::Map,
                _ => ListTypeExtension::Other,
            }),
            list_map_keys: schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|keys| {
                    keys.iter()
                        .filter_map(Value::as_str)
                        .map(Into::into)
                        .collect()
                })
                .unwrap_or_default(),
            patch_strategy: text("x-kubernetes-patch-strategy").map(Into::into),
            patch_merge_key: text("x-kubernetes-patch-merge-key").map(Into::into),
        }
    }
}

/// Points every reference among `nodes` (ids from `offset`) at the end of
/// its chain: a definition that is itself a `$ref` is skipped over. Targets
/// below `offset` belong to the base model, whose chains are resolved.
fn resolve_chains(nodes: &mut [Node], offset: NodeId) {
    let local = |id: NodeId| id.checked_sub(offset).map(|index| index as usize);
    for index in 0..nodes.len() {
        let Some(Reference::Node(mut target)) = nodes[index].reference else {
            continue;
        };
        let mut resolved = Some(target);
        for _ in 0..MAX_REFERENCE_CHAIN {
            match local(target)
                .and_then(|i| nodes.get(i))
                .and_then(|n| n.reference)
            {
                Some(Reference::Node(next)) => {
                    target = next;
                    resolved = None;
                }
                Some(Reference::Missing) => {
                    resolved = None;
                    break;
                }
                None => {
                    resolved = Some(target);
                    break;
                }
            }
        }
        nodes[index].reference = Some(match resolved {
            Some(id) => Reference::Node(id),
            None => Reference::Missing,
        });
    }
}
