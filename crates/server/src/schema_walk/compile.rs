//! Compiling a kind's schema into a [`Plan`]: which definitions
//! can reach a quantity, and the nodes that lead to one. Reads the compiled
//! schema model (`crate::schema`): `$ref`s are already node ids.

use std::collections::HashMap;
use std::sync::Arc;

use super::{Node, NodeId, Plan, QUANTITY_DEFINITION, QUANTITY_NODE};
use crate::schema::{self, Model};

/// Where a schema node's `$ref` leads: Quantity, another definition, or
/// nowhere (not a reference, or a missing definition).
enum Target {
    Quantity,
    Definition(schema::NodeId),
    None,
}

fn target(model: &Model, id: schema::NodeId) -> Target {
    match model.node(id).target() {
        Some(target) if model.definition_name(target) == Some(QUANTITY_DEFINITION) => {
            Target::Quantity
        }
        Some(target) => Target::Definition(target),
        None => Target::None,
    }
}

/// Sub-schemas of an inline schema that may hold values: property schemas,
/// `additionalProperties` and `items` (object forms).
fn children(node: &schema::Node) -> impl Iterator<Item = schema::NodeId> + '_ {
    let properties = node
        .properties
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .map(|property| property.node);
    properties
        .chain(node.additional_properties)
        .chain(node.items)
}

/// Definitions an inline schema refers to (not following them), and whether
/// it refers to Quantity directly.
fn collect_refs(model: &Model, id: schema::NodeId, refs: &mut Vec<schema::NodeId>) -> bool {
    match target(model, id) {
        Target::Quantity => return true,
        Target::Definition(definition) => {
            refs.push(definition);
            return false;
        }
        Target::None if model.node(id).reference.is_some() => return false,
        Target::None => {}
    }
    let mut direct = false;
    for child in children(model.node(id)) {
        direct |= collect_refs(model, child, refs);
    }
    direct
}

/// Records in `reaches` whether a Quantity is reachable from every definition
/// `root` leads to (a least fixpoint over the discovered graph, so cycles are
/// fine); definitions already recorded are not revisited.
pub(super) fn compute_reaches(
    model: &Model,
    root: schema::NodeId,
    reaches: &mut HashMap<schema::NodeId, bool>,
) {
    let mut pending = Vec::new();
    collect_refs(model, root, &mut pending);
    let mut graph: HashMap<schema::NodeId, (bool, Vec<schema::NodeId>)> = HashMap::new();
    while let Some(definition) = pending.pop() {
        if reaches.contains_key(&definition) || graph.contains_key(&definition) {
            continue;
        }
        let mut refs = Vec::new();
        let direct = collect_refs(model, definition, &mut refs);
        graph.insert(definition, (direct, refs.clone()));
        pending.extend(refs);
    }
    let mut local: HashMap<schema::NodeId, bool> = graph
        .iter()
        .map(|(definition, (direct, _))| (*definition, *direct))
        .collect();
    loop {
        let mut changed = false;
        for (definition, (_, refs)) in &graph {
            if local[definition] {
                continue;
            }
            let reached = refs.iter().any(|r| {
                local
                    .get(r)
                    .copied()
                    .or_else(|| reaches.get(r).copied())
                    .unwrap_or(false)
            });
            if reached {
                local.insert(*definition, true);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    reaches.extend(local);
}

/// Compiles schemas into plan nodes, one node per definition reaching a quantity.
pub(super) struct Builder<'a> {
    model: &'a Model,
    reaches: &'a HashMap<schema::NodeId, bool>,
    nodes: Vec<Node>,
    definitions: HashMap<schema::NodeId, NodeId>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(model: &'a Model, reaches: &'a HashMap<schema::NodeId, bool>) -> Self {
        let quantity = Node {
            quantity: true,
            ..Node::default()
        };
        Builder {
            model,
            reaches,
            nodes: vec![quantity],
            definitions: HashMap::new(),
        }
    }

    pub(super) fn build(mut self, root: schema::NodeId) -> Option<Arc<Plan>> {
        let root = self.compile(root)?;
        Some(Arc::new(Plan {
            nodes: self.nodes,
            root,
        }))
    }

    /// The node for a schema, `None` when no quantity can be under it.
    fn compile(&mut self, id: schema::NodeId) -> Option<NodeId> {
        match target(self.model, id) {
            Target::Quantity => return Some(QUANTITY_NODE),
            Target::Definition(definition) => {
                if !self.reaches.get(&definition).copied().unwrap_or(false) {
                    return None;
                }
                if let Some(&plan_id) = self.definitions.get(&definition) {
                    return Some(plan_id);
                }
                // Reserve the slot first: recursive definitions point back at it.
                let plan_id = self.nodes.len();
                self.nodes.push(Node::default());
                self.definitions.insert(definition, plan_id);
                let node = self.compile_inline(definition);
                self.nodes[plan_id] = node;
                return Some(plan_id);
            }
            Target::None if self.model.node(id).reference.is_some() => return None,
            Target::None => {}
        }
        let node = self.compile_inline(id);
        if node.is_empty() {
            return None;
        }
        self.nodes.push(node);
        Some(self.nodes.len() - 1)
    }

    fn compile_inline(&mut self, id: schema::NodeId) -> Node {
        let model = self.model;
        let schema = model.node(id);
        let mut node = Node::default();
        for property in schema.properties.as_deref().unwrap_or(&[]) {
            if let Some(child) = self.compile(property.node) {
                node.properties.push((property.name.to_string(), child));
            }
        }
        if let Some(additional) = schema.additional_properties {
            node.additional = self.compile(additional);
        }
        if let Some(items) = schema.items {
            node.items = self.compile(items);
        }
        node
    }
}
