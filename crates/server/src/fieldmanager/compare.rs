//! `TypedValue.Compare(rhs)` (structured-merge-diff `typed/compare.go`):
//! the fields added, modified and removed between two values of one type.
//!
//! The walk pairs fields and list items as SMD's merging walker does, but
//! builds the three sets bottom-up: a path element is made only for a
//! node that differs, and equal subtrees (most of an object on a write)
//! are skipped after one comparison, without allocating.

use serde_json::Value;

use super::path::PathElement;
use super::schema::{ListTypeRef, Schema};
use super::set::Set;
use super::walk::{index_items, shape, Shape, MAX_DEPTH};
use crate::schema::NodeId;

/// What changed between two values (`typed.Comparison`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Comparison {
    pub added: Set,
    pub modified: Set,
    pub removed: Set,
}

impl Comparison {
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    /// Hangs what differs below a child (`below`, relative to it) and the
    /// child's own change under `element`.
    fn attach(&mut self, element: PathElement, change: Change, below: Comparison) {
        match change {
            Change::None => {}
            Change::Added => {
                self.added.members.insert(element.clone());
            }
            Change::Removed => {
                self.removed.members.insert(element.clone());
            }
            Change::Modified => {
                self.modified.members.insert(element.clone());
            }
        }
        for (mine, theirs) in [
            (&mut self.added, below.added),
            (&mut self.modified, below.modified),
            (&mut self.removed, below.removed),
        ] {
            if !theirs.is_empty() {
                mine.children.insert(element.clone(), theirs);
            }
        }
    }
}

/// How a node itself differs (recorded at its own path by its parent).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    None,
    Added,
    Removed,
    Modified,
}

/// `TypedValue.Compare(rhs)`: `lhs` is the old value.
pub fn compare(schema: &Schema<'_>, lhs: &Value, rhs: &Value) -> Comparison {
    let mut out = Comparison::default();
    // The root's own change has the empty path, which no set holds.
    compare_node(schema, schema.root(), Some(lhs), Some(rhs), 0, &mut out);
    out
}

/// The leaf rule of the merging walker (`compareLeaf`, the visitor's leaf hook).
fn leaf(lhs: Option<&Value>, rhs: Option<&Value>) -> Change {
    match (lhs, rhs) {
        (None, Some(_)) => Change::Added,
        (Some(_), None) => Change::Removed,
        (Some(l), Some(r)) if l != r => Change::Modified,
        _ => Change::None,
    }
}

/// Compares one node; what differs below it goes to `out` (relative to
/// it), its own change is returned.
fn compare_node<'a>(
    schema: &Schema<'a>,
    schema_value: NodeId,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    depth: usize,
    out: &mut Comparison,
) -> Change {
    if depth > MAX_DEPTH {
        return Change::None;
    }
    if let (Some(l), Some(r)) = (lhs, rhs) {
        // Equal values record nothing anywhere below (every leaf compares
        // equal, no container appears or disappears).
        if l == r {
            return Change::None;
        }
    }
    let node = schema.resolve(schema_value);
    match shape(schema, node, rhs.or(lhs)) {
        Shape::Leaf => return leaf(lhs, rhs),
        Shape::Fields(node) => {
            let left = lhs.and_then(Value::as_object);
            let right = rhs.and_then(Value::as_object);
            let empty = |map: Option<&serde_json::Map<String, Value>>| {
                map.is_none_or(serde_json::Map::is_empty)
            };
            if empty(left) && empty(right) {
                return leaf(lhs, rhs);
            }
            let mut field = |key: &String, l: Option<&Value>, r: Option<&Value>| {
                let child_schema = schema.field(&node, key).unwrap_or(Schema::deduced());
                let mut below = Comparison::default();
                let change = compare_node(schema, child_schema, l, r, depth + 1, &mut below);
                if change != Change::None || !below.is_same() {
                    out.attach(PathElement::Field(key.clone()), change, below);
                }
            };
            if let Some(left) = left {
                for (key, value) in left {
                    let theirs = right.and_then(|right| right.get(key));
                    field(key, Some(value), theirs);
                }
            }
            if let Some(right) = right {
                for (key, value) in right {
                    if left.is_some_and(|left| left.contains_key(key)) {
                        continue;
                    }
                    field(key, None, Some(value));
                }
            }
        }
        Shape::List(items, list_type) => {
            let left = lhs.and_then(Value::as_array);
            let right = rhs.and_then(Value::as_array);
            let empty = |list: Option<&Vec<Value>>| list.is_none_or(Vec::is_empty);
            if empty(left) && empty(right) {
                return leaf(lhs, rhs);
            }
            compare_list(schema, items, &list_type, left, right, depth, out);
        }
    }
    // The post-item hook: a container that appears or disappears.
    match (lhs, rhs) {
        (None, Some(_)) => Change::Added,
        (Some(_), None) => Change::Removed,
        _ => Change::None,
    }
}

/// Items paired by their path element (the first of repeated ones), as the
/// merging walker pairs them; every item of either side is visited once.
fn compare_list<'a>(
    schema: &Schema<'a>,
    items: NodeId,
    list_type: &ListTypeRef<'_>,
    lhs: Option<&Vec<Value>>,
    rhs: Option<&Vec<Value>>,
    depth: usize,
    out: &mut Comparison,
) {
    let (right_order, right_items) = index_items(list_type, rhs);
    let (left_order, left_items) = index_items(list_type, lhs);
    let left_only = left_order
        .iter()
        .filter(|element| !right_items.contains_key(*element));
    for element in right_order.iter().chain(left_only) {
        let (l, r) = (
            left_items.get(element).copied(),
            right_items.get(element).copied(),
        );
        let mut below = Comparison::default();
        let change = compare_node(schema, items, l, r, depth + 1, &mut below);
        if change != Change::None || !below.is_same() {
            out.attach(element.clone(), change, below);
        }
    }
}
