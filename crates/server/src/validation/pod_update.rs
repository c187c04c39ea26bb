//! `ValidatePodUpdate` (`pkg/apis/core/validation/validation.go`): a pod's
//! spec is immutable except container and init container images,
//! `activeDeadlineSeconds` (set, or lowered), additions to `tolerations`,
//! deletions from `schedulingGates`, and `terminationGracePeriodSeconds`
//! from a negative value to 1; a gated pod's node selector and node affinity
//! in [`super::pod_update_gated`].

use serde_json::{Map, Value};

use super::field::{self, child, index};
use super::pod::{pod_metadata_and_spec, tolerations};
use super::pod_options::PodValidationOptions;
use crate::status::FieldError;

const MAX_INT32: i64 = 2_147_483_647;

pub const IMMUTABLE_SPEC: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// `ValidatePodUpdate`: the new pod's own rules, then what may change.
pub fn pod_update(new: &Value, old: &Value) -> Vec<FieldError> {
    // `GetValidationOptionsFromPodSpecAndMeta` with the old pod.
    let options = PodValidationOptions::from_old_pod(old);
    let mut errors = pod_metadata_and_spec(new, options);
    super::pod_annotations::updates(new, old, "metadata.annotations", options, &mut errors);
    let null = Value::Null;
    let new_spec = new.get("spec").unwrap_or(&null);
    let old_spec = old.get("spec").unwrap_or(&null);
    for list in ["containers", "initContainers"] {
        let new_list = field::items_at(new_spec, list);
        let path = child("spec", list);
        if new_list.len() != field::items_at(old_spec, list).len() {
            errors.push(field::forbidden(
                &path,
                "pod updates may not add or remove containers",
            ));
            return errors;
        }
        for (position, container) in new_list.iter().enumerate() {
            if field::str_at(container, "image").is_empty() {
                errors.push(field::required(
                    &child(&index(&path, position), "image"),
                    "",
                ));
            }
        }
    }
    let deadline_path = "spec.activeDeadlineSeconds";
    match (
        field::int_at(new_spec, "activeDeadlineSeconds"),
        field::int_at(old_spec, "activeDeadlineSeconds"),
    ) {
        (Some(new_deadline), old_deadline) => {
            if !(0..=MAX_INT32).contains(&new_deadline) {
                errors.push(field::invalid_number(
                    deadline_path,
                    new_deadline,
                    field::inclusive_range_error(0, MAX_INT32),
                ));
                return errors;
            }
            if old_deadline.is_some_and(|old_deadline| old_deadline < new_deadline) {
                errors.push(field::invalid_number(
                    deadline_path,
                    new_deadline,
                    "must be less than or equal to previous value",
                ));
                return errors;
            }
        }
        (None, Some(_)) => errors.push(field::invalid_rendered(
            deadline_path,
            "null",
            "must not update from a positive integer to nil value",
        )),
        (None, None) => {}
    }
    only_added_tolerations(new_spec, old_spec, &mut errors);
    only_deleted_scheduling_gates(new_spec, old_spec, &mut errors);
    let mut munged = munged_spec(new_spec, old_spec);
    super::pod_update_gated::munge_gated(&mut munged, old_spec, &mut errors);
    if normalized(&munged) != normalized(old_spec) {
        errors.push(field::forbidden(
            "spec",
            format!("{IMMUTABLE_SPEC}\n{}", spec_diff(old_spec, &munged)),
        ));
    }
    errors
}

/// `validateOnlyAddedTolerations`.
fn only_added_tolerations(new_spec: &Value, old_spec: &Value, errors: &mut Vec<FieldError>) {
    let new_list = field::items_at(new_spec, "tolerations");
    let without_seconds = |toleration: &Value| {
        let mut toleration = normalized(toleration);
        if let Some(map) = toleration.as_object_mut() {
            map.remove("tolerationSeconds");
        }
        toleration
    };
    for old_toleration in field::items_at(old_spec, "tolerations") {
        let wanted = without_seconds(old_toleration);
        if !new_list.iter().any(|new| without_seconds(new) == wanted) {
            errors.push(field::forbidden(
                "spec.tolerations",
                "existing toleration can not be modified except its tolerationSeconds",
            ));
            return;
        }
    }
    tolerations(new_list, "spec.tolerations", errors);
}

/// `validateOnlyDeletedSchedulingGates`.
fn only_deleted_scheduling_gates(new_spec: &Value, old_spec: &Value, errors: &mut Vec<FieldError>) {
    let old_gates: Vec<&str> = field::items_at(old_spec, "schedulingGates")
        .iter()
        .map(|gate| field::str_at(gate, "name"))
        .collect();
    for gate in field::items_at(new_spec, "schedulingGates") {
        let name = field::str_at(gate, "name");
        if !old_gates.contains(&name) {
            errors.push(field::forbidden(
                "spec.schedulingGates",
                format!("only deletion is allowed, but found new scheduling gate '{name}'"),
            ));
        }
    }
}

/// The new spec with every field that may change set to the old value.
fn munged_spec(new_spec: &Value, old_spec: &Value) -> Value {
    let mut munged = new_spec.clone();
    let Some(map) = munged.as_object_mut() else {
        return munged;
    };
    for list in ["containers", "initContainers"] {
        let old_list = field::items_at(old_spec, list);
        if let Some(items) = map.get_mut(list).and_then(Value::as_array_mut) {
            for (container, old_container) in items.iter_mut().zip(old_list) {
                if let Some(container) = container.as_object_mut() {
                    match old_container.get("image") {
                        Some(image) => container.insert("image".into(), image.clone()),
                        None => container.remove("image"),
                    };
                }
            }
        }
    }
    for kept in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match old_spec.get(kept) {
            Some(value) => map.insert(kept.into(), value.clone()),
            None => map.remove(kept),
        };
    }
    let old_grace = field::int_at(old_spec, "terminationGracePeriodSeconds");
    if old_grace.is_some_and(|grace| grace < 0)
        && field::int_at(new_spec, "terminationGracePeriodSeconds") == Some(1)
    {
        if let Some(grace) = old_spec.get("terminationGracePeriodSeconds") {
            map.insert("terminationGracePeriodSeconds".into(), grace.clone());
        }
    }
    munged
}

/// A JSON tree as `apiequality.Semantic.DeepEqual` compares the Go struct:
/// absent, `null`, empty strings, lists and maps are all the zero value.
pub fn normalized(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (name, item) in map {
                let item = normalized(item);
                let zero = match &item {
                    Value::Null => true,
                    Value::String(text) => text.is_empty(),
                    Value::Array(items) => items.is_empty(),
                    Value::Object(fields) => fields.is_empty() && name != "securityContext",
                    _ => false,
                };
                if !zero {
                    out.insert(name.clone(), item);
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// A short diff of the specs' top-level fields in the spirit of the
/// `cmp.Diff` kube appends (its exact text is Go's and not reproduced).
fn spec_diff(old_spec: &Value, new_spec: &Value) -> String {
    value_diff("core.PodSpec", old_spec, new_spec)
}

/// The same short diff for any struct kube diffs in an immutability message.
pub fn value_diff(type_name: &str, old_spec: &Value, new_spec: &Value) -> String {
    let old = normalized(old_spec);
    let new = normalized(new_spec);
    let empty = Map::new();
    let old_map = old.as_object().unwrap_or(&empty);
    let new_map = new.as_object().unwrap_or(&empty);
    let mut names: Vec<&String> = old_map.keys().chain(new_map.keys()).collect();
    names.sort();
    names.dedup();
    let mut text = format!("  {type_name}{{\n");
    for name in names {
        let (before, after) = (old_map.get(name), new_map.get(name));
        if before == after {
            continue;
        }
        let mut go_name = name.clone();
        if let Some(first) = go_name.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        if let Some(before) = before {
            text.push_str(&format!("- \t{go_name}: {before},\n"));
        }
        if let Some(after) = after {
            text.push_str(&format!("+ \t{go_name}: {after},\n"));
        }
    }
    text.push_str("  }\n");
    text
}
