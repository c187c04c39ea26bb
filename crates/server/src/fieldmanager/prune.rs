//! SMD's `prune` (`merge/update.go`: `prune`, `addBackOwnedItems`,
//! `addBackDanglingItems`), and a shortcut for the usual re-apply that
//! proves it would remove nothing.
//!
//! `prune(merged, last)` with `owned` the union of every applier's set
//! (this applier's being the fields it now applies, `applied`):
//!
//! 1. `p1 = merged - last` (everything this applier owned, removed);
//! 2. `p2 = merged - R2` with `R2 = set(merged) - (set(p1) | owned)`
//!    (what removing `last` took away, minus what appliers own);
//! 3. the result is `merged - ((set(merged) - set(p2)) & last)`.
//!
//! The shortcut: when `last ⊆ applied`, no path `P` of `last` is removed
//! in step 2 through itself or an ancestor: `P` is owned, and every
//! ancestor of `P` that is a member of `set(merged)` (a list item, a map
//! entry) is a member of `applied` too, because `applied` holds `P` (so
//! the configuration holds `P`'s whole path). `P` can then only disappear
//! from `p2` by being emptied: a non-empty container whose every child is
//! removed. A child survives step 2 when it is not in `R2` (a member of
//! `applied`, or not a member of `set(merged)` at all) and is not
//! emptied itself; finding one such child for every container of `last`
//! proves step 3 removes nothing. Anything less clear (repeated list keys,
//! a container the applier sets to `{}`) takes the full prune.

use serde_json::Value;

use super::managed::{Managed, Operation};
use super::path::PathElement;
use super::schema::{Node, Schema};
use super::set::Set;
use super::walk::{self, item_element, shape, Shape, MAX_DEPTH};
use super::FieldManager;
use crate::schema::NodeId;

impl FieldManager<'_> {
    /// The full prune (see the module documentation).
    pub(super) fn prune(&self, merged: &Value, entries: &mut [Managed<'_>], last: &Set) -> Value {
        let schema = &self.schema;
        let pruned = walk::remove_items(schema, merged, last);
        let mut owned_by_appliers = Set::new();
        for managed in entries
            .iter_mut()
            .filter(|e| e.entry.operation == Operation::Apply)
        {
            owned_by_appliers.union_in_place(&managed.decoded().set);
        }
        let merged_set = walk::to_field_set(schema, merged);
        let pruned_set = walk::to_field_set(schema, &pruned);
        let pruned = walk::remove_items(
            schema,
            merged,
            &merged_set.difference(&pruned_set.union(&owned_by_appliers)),
        );
        let pruned_set = walk::to_field_set(schema, &pruned);
        walk::remove_items(
            schema,
            merged,
            &merged_set.difference(&pruned_set).intersection(last),
        )
    }
}

/// Whether pruning `merged` would remove nothing: `last ⊆ applied` and
/// every container of `last` in `merged` keeps a child (module docs).
pub(super) fn keeps_everything(
    schema: &Schema<'_>,
    merged: &Value,
    applied: &Set,
    last: &Set,
) -> bool {
    applied.contains_set(last) && witnessed(schema, schema.root(), merged, last, Some(applied), 0)
}

/// Whether a value can lose nothing to removal below it: not a non-empty
/// container walked granularly (a leaf, an atomic value, null, `{}`, `[]`).
fn unemptiable(schema: &Schema<'_>, node: Node<'_>, value: &Value) -> bool {
    match shape(schema, node, Some(value)) {
        Shape::Leaf => true,
        Shape::Fields(_) => value.as_object().is_none_or(serde_json::Map::is_empty),
        Shape::List(..) => value.as_array().is_none_or(Vec::is_empty),
    }
}

/// `to_field_set`'s rule: whether field `key` of a `Fields` node is a
/// member of its parent's set.
fn field_is_member(
    schema: &Schema<'_>,
    parent: &Node<'_>,
    key: &str,
    child_node: Node<'_>,
    child: &Value,
) -> bool {
    let declared = parent.declares(key);
    let leaf = matches!(shape(schema, child_node, Some(child)), Shape::Leaf);
    let empty_map = child.as_object().is_some_and(serde_json::Map::is_empty);
    leaf || child.is_null() || empty_map || !declared
}

/// Walks `last` along `merged`: every member of `last` present in `merged`
/// as a granular non-empty container must keep a child.
fn witnessed<'a>(
    schema: &Schema<'a>,
    schema_value: NodeId,
    value: &Value,
    last: &Set,
    applied: Option<&Set>,
    depth: usize,
) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let node = schema.resolve(schema_value);
    match shape(schema, node, Some(value)) {
        // Nothing below a leaf is in the merged object's set.
        Shape::Leaf => true,
        Shape::Fields(node) => {
            let Some(map) = value.as_object() else {
                return true;
            };
            let child = |element: &PathElement| match element {
                PathElement::Field(name) => map
                    .get(name)
                    .map(|v| (schema.field(&node, name).unwrap_or(Schema::deduced()), v)),
                _ => None,
            };
            last.members
                .iter()
                .all(|member| match (member, child(member)) {
                    (PathElement::Field(key), Some((child_schema, v))) => {
                        let child_node = schema.resolve(child_schema);
                        // Only members of the merged object's set can be removed.
                        !field_is_member(schema, &node, key, child_node, v)
                            || unemptiable(schema, child_node, v)
                            || has_witness(schema, child_schema, v, sub(applied, member), depth + 1)
                    }
                    _ => true,
                })
                && last
                    .children
                    .iter()
                    .all(|(element, below)| match child(element) {
                        Some((child_schema, v)) => witnessed(
                            schema,
                            child_schema,
                            v,
                            below,
                            sub(applied, element),
                            depth + 1,
                        ),
                        None => true,
                    })
        }
        Shape::List(items, list_type) => {
            let Some(list) = value.as_array() else {
                return true;
            };
            let mut index = std::collections::HashMap::with_capacity(list.len());
            for item in list {
                let Ok(element) = item_element(&list_type, item) else {
                    continue;
                };
                if index.insert(element, item).is_some() {
                    // Repeated keys share one subtree in the set: too subtle here.
                    return false;
                }
            }
            let items_node = schema.resolve(items);
            last.members.iter().all(|member| match index.get(member) {
                Some(item) => {
                    unemptiable(schema, items_node, item)
                        || has_witness(schema, items, item, sub(applied, member), depth + 1)
                }
                None => true,
            }) && last
                .children
                .iter()
                .all(|(element, below)| match index.get(element) {
                    Some(item) => {
                        witnessed(schema, items, item, below, sub(applied, element), depth + 1)
                    }
                    None => true,
                })
        }
    }
}

fn sub<'s>(set: Option<&'s Set>, element: &PathElement) -> Option<&'s Set> {
    set.and_then(|set| set.child(element))
}

fn member(set: Option<&Set>, element: &PathElement) -> bool {
    set.is_some_and(|set| set.members.contains(element))
}

/// Whether the non-empty container `value` (a member of `last`) keeps at
/// least one child through step 2: a child outside `R2` that is not
/// emptied itself. `applied` is the applied set below `value`.
fn has_witness<'a>(
    schema: &Schema<'a>,
    schema_value: NodeId,
    value: &Value,
    applied: Option<&Set>,
    depth: usize,
) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let node = schema.resolve(schema_value);
    match shape(schema, node, Some(value)) {
        Shape::Leaf => true,
        Shape::Fields(node) => {
            let Some(map) = value.as_object() else {
                return true;
            };
            // Cheap witnesses first (a kept leaf), then deeper ones.
            let mut deeper = Vec::new();
            for (key, child) in map {
                let Some(child_schema) = schema.field(&node, key) else {
                    // Not in the merged set at all: never removed.
                    return true;
                };
                let child_node = schema.resolve(child_schema);
                let element = PathElement::Field(key.clone());
                let in_merged_set = field_is_member(schema, &node, key, child_node, child);
                if in_merged_set && !member(applied, &element) {
                    // In R2 unless another applier owns it: not a witness.
                    continue;
                }
                if unemptiable(schema, child_node, child) {
                    return true;
                }
                deeper.push((child_schema, child, element));
            }
            deeper.into_iter().any(|(child_schema, child, element)| {
                has_witness(
                    schema,
                    child_schema,
                    child,
                    sub(applied, &element),
                    depth + 1,
                )
            })
        }
        Shape::List(items, list_type) => {
            let Some(list) = value.as_array() else {
                return true;
            };
            let items_node = schema.resolve(items);
            let mut seen = std::collections::HashSet::with_capacity(list.len());
            let mut found = false;
            for item in list {
                let Ok(element) = item_element(&list_type, item) else {
                    // Kept by removal, whatever the set.
                    found = true;
                    continue;
                };
                if !found
                    && member(applied, &element)
                    && (unemptiable(schema, items_node, item)
                        || has_witness(schema, items, item, sub(applied, &element), depth + 1))
                {
                    found = true;
                }
                if !seen.insert(element) {
                    // Repeated keys: give up (the full prune decides).
                    return false;
                }
            }
            found
        }
    }
}
