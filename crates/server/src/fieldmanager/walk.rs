//! Walking values along the schema, as structured-merge-diff's `typed`
//! package does: the field set of a value (`tofieldset.go`), the apply merge
//! (`merge.go` with `ruleKeepRHS`), removing items (`remove.go`) and the
//! validation of an applied configuration (`validate.go`). The comparison
//! of two values is in [`super::compare`].

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::path::PathElement;
use super::schema::{ListTypeRef, Node, Schema};
use super::set::Set;
use crate::schema::NodeId;

/// Deepest nesting walked (serde_json refuses deeper bodies anyway).
pub(super) const MAX_DEPTH: usize = 200;

/// A validation error of a typed value, worded as SMD's `ValidationError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedError {
    pub path: String,
    pub message: String,
}

/// `ValidationErrors.Error()`.
pub fn errors_to_string(errors: &[TypedError]) -> String {
    let one = |error: &TypedError| {
        if error.path.is_empty() {
            error.message.clone()
        } else {
            format!("{}: {}", error.path, error.message)
        }
    };
    match errors {
        [single] => one(single),
        _ => {
            let mut lines = vec!["errors:".to_string()];
            lines.extend(errors.iter().map(|error| format!("  {}", one(error))));
            lines.join("\n")
        }
    }
}

/// The key fields SMD defaults when a list-map item omits them (kube's
/// `+default` markers on key fields: the port protocols).
fn key_default(name: &str) -> Option<Value> {
    (name == "protocol").then(|| Value::String("TCP".into()))
}

/// `listItemToPathElement`.
pub fn item_element(list_type: &ListTypeRef<'_>, item: &Value) -> Result<PathElement, String> {
    // The key names, borrowed from the schema (no allocation per item).
    let (map_keys, merge_key): (&[Box<str>], Option<&str>) = match list_type {
        ListTypeRef::Map(keys) => (keys, None),
        ListTypeRef::MergeKey(key) => (&[], Some(key)),
        _ => (&[], None),
    };
    let keys = map_keys.iter().map(|key| &**key).chain(merge_key);
    if keys.clone().next().is_some() {
        let Value::Object(map) = item else {
            return Err(if item.is_null() {
                "associative list with keys may not have a null element".into()
            } else {
                "associative list with keys may not have non-map elements".into()
            });
        };
        let mut fields = Vec::with_capacity(keys.clone().count());
        for key in keys {
            match map.get(key).cloned().or_else(|| key_default(key)) {
                Some(value) => fields.push((key.to_string(), value)),
                None => {
                    return Err(format!(
                        "associative list with keys has an element that omits key field {} (and doesn't have default value)",
                        crate::go::strconv::quote(key)
                    ))
                }
            }
        }
        return Ok(PathElement::key(fields));
    }
    match item {
        Value::Object(_) => {
            Err("associative list without keys has an element that's a map type".into())
        }
        Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
        other => Ok(PathElement::Value(other.clone())),
    }
}

/// A resolved node, with deduced schemas made concrete for `value`.
#[derive(Clone, Copy)]
pub(super) enum Shape<'a> {
    Leaf,
    Fields(Node<'a>),
    List(NodeId, ListTypeRef<'a>),
}

/// `deduceAtom` for untyped values: maps are granular, the rest leaves.
pub(super) fn shape<'a>(_schema: &Schema<'a>, node: Node<'a>, value: Option<&Value>) -> Shape<'a> {
    match node {
        Node::Scalar => Shape::Leaf,
        Node::Struct { atomic: true, .. } | Node::Map { atomic: true, .. } => Shape::Leaf,
        Node::Struct { .. } | Node::Map { .. } => Shape::Fields(node),
        Node::List { list_type, .. } if list_type.is_atomic() => Shape::Leaf,
        Node::List { items, list_type } => Shape::List(items, list_type),
        Node::Deduced => match value {
            Some(Value::Object(_)) => Shape::Fields(Node::Deduced),
            _ => Shape::Leaf,
        },
    }
}

/// `TypedValue.ToFieldSet`.
pub fn to_field_set(schema: &Schema<'_>, value: &Value) -> Set {
    // The root is never a member of its own set.
    field_set(schema, schema.root(), value, 0).1
}

/// The set below one value, built bottom-up (each path element is made
/// once, never cloned per inserted path) and whether the value itself is a
/// leaf member of its parent's set.
fn field_set<'a>(
    schema: &Schema<'a>,
    schema_value: NodeId,
    value: &Value,
    depth: usize,
) -> (bool, Set) {
    let mut set = Set::new();
    if depth > MAX_DEPTH {
        return (false, set);
    }
    let node = schema.resolve(schema_value);
    match shape(schema, node, Some(value)) {
        Shape::Leaf => return (true, set),
        Shape::Fields(node) => {
            let Value::Object(map) = value else {
                return (false, set);
            };
            let declared = |key: &str| node.declares(key);
            for (key, child) in map {
                let Some(child_schema) = schema.field(&node, key) else {
                    continue;
                };
                let (leaf, below) = field_set(schema, child_schema, child, depth + 1);
                let empty_map = child.as_object().is_some_and(Map::is_empty);
                let member = leaf || child.is_null() || empty_map || !declared(key);
                match (member, below.is_empty()) {
                    (true, true) => {
                        set.members.insert(PathElement::Field(key.clone()));
                    }
                    (true, false) => {
                        set.members.insert(PathElement::Field(key.clone()));
                        set.children.insert(PathElement::Field(key.clone()), below);
                    }
                    (false, false) => {
                        set.children.insert(PathElement::Field(key.clone()), below);
                    }
                    (false, true) => {}
                }
            }
        }
        Shape::List(items, list_type) => {
            let Value::Array(list) = value else {
                return (false, set);
            };
            for item in list {
                let Ok(element) = item_element(&list_type, item) else {
                    continue;
                };
                let (_, below) = field_set(schema, items, item, depth + 1);
                if !below.is_empty() {
                    match set.children.get_mut(&element) {
                        // A repeated key: the union, as inserting path by path gives.
                        Some(existing) => existing.union_in_place(&below),
                        None => {
                            set.children.insert(element.clone(), below);
                        }
                    }
                }
                set.members.insert(element);
            }
        }
    }
    (false, set)
}

pub use super::compare::{compare, Comparison};

/// `TypedValue.Merge(rhs)`: the applied configuration merged into the live
/// object (scalars and atomic values from `rhs`, associative lists by key).
pub fn merge(schema: &Schema<'_>, lhs: &Value, rhs: &Value) -> Value {
    let walker = Merger { schema };
    walker
        .merge(schema.root(), Some(lhs), Some(rhs), 0)
        .unwrap_or(Value::Null)
}

/// The merging walker.
struct Merger<'s, 'a> {
    schema: &'s Schema<'a>,
}

impl<'a> Merger<'_, 'a> {
    fn leaf(&self, lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
        rhs.or(lhs).cloned()
    }

    fn merge(
        &self,
        schema_value: NodeId,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        depth: usize,
    ) -> Option<Value> {
        if depth > MAX_DEPTH {
            return rhs.or(lhs).cloned();
        }
        if lhs.is_none() || rhs.is_none() {
            // A subtree on one side only merges to itself (and keeps any
            // repeated list keys of the live object untouched).
            return rhs.or(lhs).cloned();
        }
        let node = self.schema.resolve(schema_value);
        let out = match shape(self.schema, node, rhs.or(lhs)) {
            Shape::Leaf => return self.leaf(lhs, rhs),
            Shape::Fields(node) => {
                let left = lhs.and_then(Value::as_object);
                let right = rhs.and_then(Value::as_object);
                let empty = |map: Option<&Map<String, Value>>| map.is_none_or(Map::is_empty);
                if empty(left) && empty(right) {
                    return self.leaf(lhs, rhs);
                }
                let mut out = Map::new();
                if let Some(left) = left {
                    for (key, value) in left {
                        let theirs = right.and_then(|right| right.get(key));
                        self.merge_field(&node, &mut out, key, Some(value), theirs, depth);
                    }
                }
                if let Some(right) = right {
                    for (key, value) in right {
                        if left.is_some_and(|left| left.contains_key(key)) {
                            continue;
                        }
                        self.merge_field(&node, &mut out, key, None, Some(value), depth);
                    }
                }
                (!out.is_empty()).then_some(Value::Object(out))
            }
            Shape::List(items, list_type) => {
                let left = lhs.and_then(Value::as_array);
                let right = rhs.and_then(Value::as_array);
                let empty = |list: Option<&Vec<Value>>| list.is_none_or(Vec::is_empty);
                if empty(left) && empty(right) {
                    return self.leaf(lhs, rhs);
                }
                let out = self.merge_list(items, &list_type, left, right, depth);
                (!out.is_empty()).then_some(Value::Array(out))
            }
        };
        out
    }

    fn merge_field(
        &self,
        node: &Node<'a>,
        out: &mut Map<String, Value>,
        key: &str,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        depth: usize,
    ) {
        // Undeclared fields (dropped before any write) are deduced here.
        let child_schema = self.schema.field(node, key).unwrap_or(Schema::deduced());
        if let Some(value) = self.merge(child_schema, lhs, rhs, depth + 1) {
            out.insert(key.to_string(), value);
        }
    }

    /// SMD's list merge: items only in the live list keep their place,
    /// items of the configuration follow its order.
    fn merge_list(
        &self,
        items: NodeId,
        list_type: &ListTypeRef<'_>,
        lhs: Option<&Vec<Value>>,
        rhs: Option<&Vec<Value>>,
        depth: usize,
    ) -> Vec<Value> {
        let (right_order, right_items) = index_items(list_type, rhs);
        let (left_order, left_items) = index_items(list_type, lhs);
        let mut shared: std::collections::VecDeque<&PathElement> = right_order
            .iter()
            .filter(|element| left_items.contains_key(*element))
            .collect();
        let mut next_shared = shared.pop_front();
        let mut out = Vec::new();
        let (mut l, mut r) = (0, 0);
        while l < left_order.len() || r < right_order.len() {
            if l < left_order.len() && r < right_order.len() {
                let element = &left_order[l];
                if *element == right_order[r] {
                    let merged = self.merge(
                        items,
                        left_items.get(element).copied(),
                        right_items.get(element).copied(),
                        depth + 1,
                    );
                    out.extend(merged);
                    l += 1;
                    r += 1;
                    next_shared = shared.pop_front();
                    continue;
                }
                if right_items.contains_key(element)
                    && next_shared.is_some_and(|next| next != element)
                {
                    l += 1;
                    continue;
                }
            }
            if l < left_order.len() {
                let element = &left_order[l];
                if !right_items.contains_key(element) {
                    let merged =
                        self.merge(items, left_items.get(element).copied(), None, depth + 1);
                    out.extend(merged);
                    l += 1;
                    continue;
                }
            }
            if r < right_order.len() {
                let element = &right_order[r];
                let merged = self.merge(
                    items,
                    left_items.get(element).copied(),
                    right_items.get(element).copied(),
                    depth + 1,
                );
                out.extend(merged);
                r += 1;
                if next_shared.is_some_and(|next| next == element) {
                    next_shared = shared.pop_front();
                }
                continue;
            }
            // Only live items the configuration also names are left, and
            // they were merged already.
            l += 1;
        }
        out
    }
}

/// The path elements of a list's items in order (repeats ignored) and the
/// item of each.
pub(super) fn index_items<'v>(
    list_type: &ListTypeRef<'_>,
    list: Option<&'v Vec<Value>>,
) -> (Vec<PathElement>, HashMap<PathElement, &'v Value>) {
    let mut order = Vec::new();
    let mut items = HashMap::new();
    for item in list.into_iter().flatten() {
        let Ok(element) = item_element(list_type, item) else {
            continue;
        };
        if items.contains_key(&element) {
            continue;
        }
        items.insert(element.clone(), item);
        order.push(element);
    }
    (order, items)
}

impl std::hash::Hash for PathElement {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Consistent with `Ord`: elements that compare equal hash alike.
        match self {
            PathElement::Field(name) => name.hash(state),
            PathElement::Index(index) => index.hash(state),
            PathElement::Key(fields) => {
                for (name, value) in fields {
                    name.hash(state);
                    hash_scalar(value, state);
                }
            }
            PathElement::Value(value) => hash_scalar(value, state),
        }
    }
}

/// Hashes what [`compare_values`](super::path::compare_values) equates:
/// numbers by their float value (1 and 1.0 are equal), strings, booleans.
fn hash_scalar<H: std::hash::Hasher>(value: &Value, state: &mut H) {
    use std::hash::Hash;
    match value {
        Value::Number(number) => number.as_f64().unwrap_or(0.0).to_bits().hash(state),
        Value::String(text) => text.hash(state),
        Value::Bool(flag) => flag.hash(state),
        _ => {}
    }
}

/// `TypedValue.RemoveItems(set)`: removes every member of `set` (fields,
/// list items) from `value`; containers left empty disappear.
pub fn remove_items(schema: &Schema<'_>, value: &Value, set: &Set) -> Value {
    remove(schema, schema.root(), value, set, 0).unwrap_or(Value::Null)
}

fn remove<'a>(
    schema: &Schema<'a>,
    schema_value: NodeId,
    value: &Value,
    set: &Set,
    depth: usize,
) -> Option<Value> {
    if depth > MAX_DEPTH {
        return Some(value.clone());
    }
    let node = schema.resolve(schema_value);
    match shape(schema, node, Some(value)) {
        Shape::Leaf => match node {
            // Atomic containers: whole or nothing (the parent decides).
            Node::Scalar | Node::Deduced => Some(value.clone()),
            _ => match value {
                Value::Object(map) if !map.is_empty() => None,
                Value::Array(list) if !list.is_empty() => None,
                _ => Some(value.clone()),
            },
        },
        Shape::Fields(node) => {
            let Value::Object(map) = value else {
                return Some(value.clone());
            };
            if map.is_empty() {
                return Some(value.clone());
            }
            let mut out = Map::new();
            for (key, child) in map {
                let element = PathElement::Field(key.clone());
                if set.members.contains(&element) {
                    continue;
                }
                let kept = match set.child(&element) {
                    Some(subset) => {
                        let child_schema = schema.field(&node, key).unwrap_or(Schema::deduced());
                        remove(schema, child_schema, child, subset, depth + 1)
                    }
                    None => Some(child.clone()),
                };
                // A container emptied by removal is left out (null in SMD,
                // which the typed object then omits).
                if let Some(kept) = kept {
                    out.insert(key.clone(), kept);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Shape::List(items, list_type) => {
            let Value::Array(list) = value else {
                return Some(value.clone());
            };
            if list.is_empty() {
                return Some(value.clone());
            }
            let mut out = Vec::new();
            for item in list {
                let Ok(element) = item_element(&list_type, item) else {
                    out.push(item.clone());
                    continue;
                };
                if set.members.contains(&element) {
                    continue;
                }
                match set.child(&element) {
                    Some(subset) => out.extend(remove(schema, items, item, subset, depth + 1)),
                    None => out.push(item.clone()),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
    }
}

/// Validation of an applied configuration (`FromUnstructured` without
/// `AllowDuplicates`): undeclared fields, list items without their keys,
/// duplicate items.
pub fn validate(schema: &Schema<'_>, value: &Value) -> Vec<TypedError> {
    let mut errors = Vec::new();
    let mut path = Vec::new();
    validate_at(schema, schema.root(), value, &mut path, &mut errors, 0);
    errors
}

/// A step of the path being validated: fields borrowed from the value
/// (a `String` per visited field showed in profiles), list items owned.
enum Step<'v> {
    Field(&'v str),
    Item(PathElement),
}

/// `Path.String()` of the steps.
fn steps_string(steps: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Field(name) => {
                out.push('.');
                out.push_str(name);
            }
            Step::Item(element) => out.push_str(&element.to_string()),
        }
    }
    out
}

fn validate_at<'a, 'v>(
    schema: &Schema<'a>,
    schema_value: NodeId,
    value: &'v Value,
    path: &mut Vec<Step<'v>>,
    errors: &mut Vec<TypedError>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let node = schema.resolve(schema_value);
    match shape(schema, node, Some(value)) {
        Shape::Leaf => {}
        Shape::Fields(node) => {
            let Value::Object(map) = value else {
                return;
            };
            for (key, child) in map {
                path.push(Step::Field(key));
                match schema.field(&node, key) {
                    Some(child_schema) => {
                        validate_at(schema, child_schema, child, path, errors, depth + 1)
                    }
                    None => errors.push(TypedError {
                        path: steps_string(path),
                        message: "field not declared in schema".into(),
                    }),
                }
                path.pop();
            }
        }
        Shape::List(items, list_type) => {
            let Value::Array(list) = value else {
                return;
            };
            let mut seen = std::collections::HashSet::new();
            for (index, item) in list.iter().enumerate() {
                match item_element(&list_type, item) {
                    Ok(element) => {
                        if !seen.insert(element.clone()) {
                            errors.push(TypedError {
                                path: steps_string(path),
                                message: format!("duplicate entries for key {element}"),
                            });
                            continue;
                        }
                        path.push(Step::Item(element));
                        validate_at(schema, items, item, path, errors, depth + 1);
                        path.pop();
                    }
                    Err(message) => errors.push(TypedError {
                        path: steps_string(path),
                        message: format!("element {index}: {message}"),
                    }),
                }
            }
        }
    }
}
