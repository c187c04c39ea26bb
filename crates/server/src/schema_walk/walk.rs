//! Walking an object along a [`Plan`], canonicalizing the
//! quantities it leads to.

use std::fmt::Write as _;

use serde_json::Value;

use super::{NodeId, Plan};
use crate::quantity::{canonicalize, canonicalize_value};
use crate::status::FieldError;

pub(super) fn walk(
    plan: &Plan,
    id: NodeId,
    value: &mut Value,
    path: &mut String,
    in_collection: bool,
    errors: &mut Vec<FieldError>,
) {
    let node = &plan.nodes[id];
    if node.quantity {
        canonicalize_leaf(value, path, in_collection, errors);
        return;
    }
    match value {
        Value::Object(map) => {
            for (name, child) in &node.properties {
                if let Some(field) = map.get_mut(name) {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(name);
                    walk(plan, *child, field, path, false, errors);
                    path.truncate(len);
                }
            }
            if let Some(child) = node.additional {
                for (key, entry) in map.iter_mut() {
                    if node.properties.iter().any(|(name, _)| name == key) {
                        continue;
                    }
                    let len = path.len();
                    path.push('[');
                    path.push_str(key);
                    path.push(']');
                    walk(plan, child, entry, path, true, errors);
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            if let Some(child) = node.items {
                for (index, item) in items.iter_mut().enumerate() {
                    let len = path.len();
                    // Writing to a String cannot fail.
                    let _ = write!(path, "[{index}]");
                    walk(plan, child, item, path, true, errors);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

fn canonicalize_leaf(
    value: &mut Value,
    path: &str,
    in_collection: bool,
    errors: &mut Vec<FieldError>,
) {
    match value {
        Value::String(text) => match canonicalize(text.trim()) {
            Ok(canonical) => {
                if canonical != *text {
                    *text = canonical;
                }
            }
            Err(err) => errors.push(FieldError::invalid(path, text, err.to_string())),
        },
        // A null pointer field: decoding leaves it nil and encoding omits it;
        // dropping nulls is not this walk's business.
        Value::Null if !in_collection => {}
        other => match canonicalize_value(other) {
            Ok(canonical) => *other = canonical,
            Err(err) => errors.push(FieldError::invalid(
                path,
                &other.to_string(),
                err.to_string(),
            )),
        },
    }
}
