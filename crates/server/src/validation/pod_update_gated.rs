//! What `ValidatePodUpdate` lets a pod with scheduling gates change
//! (`pkg/apis/core/validation/validation.go`, "Handle validations specific
//! to gated pods"): additions to `spec.nodeSelector`
//! (`validateNodeSelectorMutation`) and a tightened required node affinity
//! (`validateNodeAffinityMutation`, `validateNodeSelectorTermHasOnlyAdditions`).
//! Both are checked, then set back to the old values in the munged spec so
//! the final equality check ignores them.

use serde_json::{Map, Value};

use super::field::{self, child, index};
use super::pod_update::normalized;
use super::selector::{go_string_map, go_string_slice};
use crate::go::strconv::quote;
use crate::status::FieldError;

const REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";

fn node_affinity(spec: &Value) -> Option<&Value> {
    spec.get("affinity")
        .filter(|affinity| !affinity.is_null())
        .and_then(|affinity| affinity.get("nodeAffinity"))
        .filter(|node| !node.is_null())
}

/// Checks the gated pod's node selector and node affinity changes, and
/// resets them in `munged` to the old spec's.
pub fn munge_gated(munged: &mut Value, old_spec: &Value, errors: &mut Vec<FieldError>) {
    if field::items_at(old_spec, "schedulingGates").is_empty() {
        return;
    }
    let Some(map) = munged.as_object_mut() else {
        return;
    };
    let null = Value::Null;
    let new_selector = map.get("nodeSelector").unwrap_or(&null);
    let old_selector = old_spec.get("nodeSelector").unwrap_or(&null);
    if normalized(new_selector) != normalized(old_selector) {
        node_selector_mutation(new_selector, old_selector, errors);
        set_or_remove(map, "nodeSelector", old_spec.get("nodeSelector"));
    }
    let new_spec = Value::Object(map.clone());
    let old_node = node_affinity(old_spec);
    let new_node = node_affinity(&new_spec);
    let zero = |node: Option<&Value>| node.map(normalized);
    if zero(old_node) == zero(new_node) {
        return;
    }
    node_affinity_mutation(new_node, old_node, errors);
    let new_affinity = new_spec.get("affinity").filter(|value| !value.is_null());
    let old_affinity = old_spec.get("affinity").filter(|value| !value.is_null());
    match (new_affinity, old_node) {
        (None, None) => {}
        (None, Some(old_node)) => {
            map.insert(
                "affinity".into(),
                serde_json::json!({ "nodeAffinity": old_node }),
            );
        }
        (Some(affinity), _)
            if old_affinity.is_none()
                && affinity.get("podAffinity").is_none_or(Value::is_null)
                && affinity.get("podAntiAffinity").is_none_or(Value::is_null) =>
        {
            map.remove("affinity");
        }
        (Some(_), old_node) => {
            if let Some(affinity) = map.get_mut("affinity").and_then(Value::as_object_mut) {
                set_or_remove(affinity, "nodeAffinity", old_node);
            }
        }
    }
}

fn set_or_remove(map: &mut Map<String, Value>, name: &str, value: Option<&Value>) {
    match value {
        Some(value) => map.insert(name.into(), value.clone()),
        None => map.remove(name),
    };
}

/// `validateNodeSelectorMutation`: no old entry removed or changed.
fn node_selector_mutation(new: &Value, old: &Value, errors: &mut Vec<FieldError>) {
    let Some(old) = old.as_object() else { return };
    let changed = old
        .iter()
        .any(|(name, value)| new.get(name).is_none_or(|new_value| new_value != value));
    if changed {
        let rendered = go_string_map(Some(new).filter(|new| !new.is_null()));
        errors.push(field::invalid_rendered(
            "spec.nodeSelector",
            &rendered,
            "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
        ));
    }
}

fn terms(node: Option<&Value>) -> Option<&[Value]> {
    node.and_then(|node| node.get(REQUIRED))
        .filter(|required| !required.is_null())
        .map(|required| field::items_at(required, "nodeSelectorTerms"))
}

/// `validateNodeAffinityMutation`: with old required terms, the same number
/// of terms, each only extended.
fn node_affinity_mutation(new: Option<&Value>, old: Option<&Value>, errors: &mut Vec<FieldError>) {
    let Some(old_terms) = terms(old) else { return };
    let new_terms = terms(new);
    let terms_path = child(
        &child("spec.affinity.nodeAffinity", REQUIRED),
        "nodeSelectorTerms",
    );
    let new_list = new_terms.unwrap_or_default();
    if !old_terms.is_empty() && old_terms.len() != new_list.len() {
        let rendered = match new_terms {
            None => "[]core.NodeSelectorTerm(nil)".to_string(),
            Some(list) => format!(
                "[]core.NodeSelectorTerm{{{}}}",
                list.iter().map(go_term).collect::<Vec<_>>().join(", ")
            ),
        };
        errors.push(field::invalid_rendered(
            &terms_path,
            &rendered,
            "no additions/deletions to non-empty NodeSelectorTerms list are allowed",
        ));
        return;
    }
    for (position, (old_term, new_term)) in old_terms.iter().zip(new_list).enumerate() {
        if !only_additions(new_term, old_term) {
            errors.push(field::invalid_rendered(
                &index(&terms_path, position),
                &go_term(new_term),
                "only additions are allowed (no mutations or deletions)",
            ));
        }
    }
}

/// `validateNodeSelectorTermHasOnlyAdditions`.
fn only_additions(new_term: &Value, old_term: &Value) -> bool {
    let old_expressions = field::items_at(old_term, "matchExpressions");
    let old_fields = field::items_at(old_term, "matchFields");
    let new_expressions = field::items_at(new_term, "matchExpressions");
    let new_fields = field::items_at(new_term, "matchFields");
    if old_expressions.is_empty()
        && old_fields.is_empty()
        && (!new_expressions.is_empty() || !new_fields.is_empty())
    {
        return false;
    }
    let prefix_kept = |new: &[Value], old: &[Value]| {
        old.is_empty()
            || (new.len() >= old.len()
                && new
                    .iter()
                    .zip(old)
                    .all(|(new, old)| normalized(new) == normalized(old)))
    };
    prefix_kept(new_expressions, old_expressions) && prefix_kept(new_fields, old_fields)
}

/// Go's `%#v` of a `core.NodeSelectorTerm`.
fn go_term(term: &Value) -> String {
    let requirements = |name: &str| match term.get(name).and_then(Value::as_array) {
        None => "[]core.NodeSelectorRequirement(nil)".to_string(),
        Some(items) => format!(
            "[]core.NodeSelectorRequirement{{{}}}",
            items
                .iter()
                .map(|requirement| format!(
                    "core.NodeSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                    quote(field::str_at(requirement, "key")),
                    quote(field::str_at(requirement, "operator")),
                    go_string_slice(requirement.get("values"))
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "core.NodeSelectorTerm{{MatchExpressions:{}, MatchFields:{}}}",
        requirements("matchExpressions"),
        requirements("matchFields")
    )
}
