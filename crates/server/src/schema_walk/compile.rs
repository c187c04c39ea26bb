//! Compiling a kind's schema into a [`Plan`]: which definitions
//! can reach a quantity, and the nodes that lead to one.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::{Node, NodeId, Plan, QUANTITY_DEFINITION, QUANTITY_NODE, REF_PREFIX};
use crate::openapi::OpenApi;

/// Resolves a `$ref` to a definition name.
fn ref_name(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix(REF_PREFIX)
}

/// Sub-schemas of an inline schema that may hold values: property schemas,
/// `additionalProperties` and `items` (object forms).
fn children(schema: &Value) -> impl Iterator<Item = &Value> {
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|props| props.values());
    let additional = schema.get("additionalProperties").filter(|v| v.is_object());
    let items = schema.get("items").filter(|v| v.is_object());
    properties.chain(additional).chain(items)
}

/// Definitions an inline schema refers to (not following them), and whether
/// it refers to Quantity directly.
fn collect_refs<'a>(schema: &'a Value, refs: &mut Vec<&'a str>) -> bool {
    if let Some(name) = ref_name(schema) {
        if name == QUANTITY_DEFINITION {
            return true;
        }
        refs.push(name);
        return false;
    }
    let mut direct = false;
    for child in children(schema) {
        direct |= collect_refs(child, refs);
    }
    direct
}

/// Records in `reaches` whether a Quantity is reachable from every definition
/// `root` leads to (a least fixpoint over the discovered graph, so cycles are
/// fine); definitions already recorded are not revisited.
pub(super) fn compute_reaches(
    openapi: &OpenApi,
    root: &Value,
    reaches: &mut HashMap<String, bool>,
) {
    let mut pending = Vec::new();
    collect_refs(root, &mut pending);
    let mut graph: HashMap<String, (bool, Vec<String>)> = HashMap::new();
    while let Some(name) = pending.pop() {
        if reaches.contains_key(name) || graph.contains_key(name) {
            continue;
        }
        let mut refs = Vec::new();
        let direct = match openapi.definition(name) {
            Ok(Some(definition)) => collect_refs(definition, &mut refs),
            _ => false,
        };
        graph.insert(
            name.to_string(),
            (direct, refs.iter().map(|r| r.to_string()).collect()),
        );
        pending.extend(refs);
    }
    let mut local: HashMap<&str, bool> = graph
        .iter()
        .map(|(name, (direct, _))| (name.as_str(), *direct))
        .collect();
    loop {
        let mut changed = false;
        for (name, (_, refs)) in &graph {
            if local[name.as_str()] {
                continue;
            }
            let reached = refs.iter().any(|r| {
                local
                    .get(r.as_str())
                    .copied()
                    .or_else(|| reaches.get(r).copied())
                    .unwrap_or(false)
            });
            if reached {
                local.insert(name.as_str(), true);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for (name, reached) in local {
        reaches.insert(name.to_string(), reached);
    }
}

/// Compiles schemas into plan nodes, one node per definition reaching a quantity.
pub(super) struct Builder<'a> {
    openapi: &'a OpenApi,
    reaches: &'a HashMap<String, bool>,
    nodes: Vec<Node>,
    definitions: HashMap<String, NodeId>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(openapi: &'a OpenApi, reaches: &'a HashMap<String, bool>) -> Self {
        let quantity = Node {
            quantity: true,
            ..Node::default()
        };
        Builder {
            openapi,
            reaches,
            nodes: vec![quantity],
            definitions: HashMap::new(),
        }
    }

    pub(super) fn build(mut self, root: &Value) -> Option<Arc<Plan>> {
        let root = self.compile(root)?;
        Some(Arc::new(Plan {
            nodes: self.nodes,
            root,
        }))
    }

    /// The node for a schema, `None` when no quantity can be under it.
    fn compile(&mut self, schema: &Value) -> Option<NodeId> {
        if let Some(name) = ref_name(schema) {
            if name == QUANTITY_DEFINITION {
                return Some(QUANTITY_NODE);
            }
            if !self.reaches.get(name).copied().unwrap_or(false) {
                return None;
            }
            if let Some(&id) = self.definitions.get(name) {
                return Some(id);
            }
            let definition = self.openapi.definition(name).ok().flatten()?;
            // Reserve the slot first: recursive definitions point back at it.
            let id = self.nodes.len();
            self.nodes.push(Node::default());
            self.definitions.insert(name.to_string(), id);
            let node = self.compile_inline(definition);
            self.nodes[id] = node;
            return Some(id);
        }
        let node = self.compile_inline(schema);
        if node.is_empty() {
            return None;
        }
        self.nodes.push(node);
        Some(self.nodes.len() - 1)
    }

    fn compile_inline(&mut self, schema: &Value) -> Node {
        let mut node = Node::default();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                if let Some(id) = self.compile(property) {
                    node.properties.push((name.clone(), id));
                }
            }
        }
        if let Some(additional) = schema.get("additionalProperties").filter(|v| v.is_object()) {
            node.additional = self.compile(additional);
        }
        if let Some(items) = schema.get("items").filter(|v| v.is_object()) {
            node.items = self.compile(items);
        }
        node
    }
}
