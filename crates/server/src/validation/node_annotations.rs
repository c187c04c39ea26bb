//! A Node's own annotations (`pkg/apis/core/validation/validation.go`
//! `ValidateNodeSpecificAnnotations`): the JSON of
//! `scheduler.alpha.kubernetes.io/taints` (`ValidateTaintsInNodeAnnotations`:
//! decoded as `[]core.Taint`, then `validateNodeTaints`) and of
//! `scheduler.alpha.kubernetes.io/preferAvoidPods`
//! (`ValidateAvoidPodsInNodeAnnotations`: decoded as `v1.AvoidPods`, each
//! entry's pod controller required and a controller). A value Go's
//! `encoding/json` cannot decode is reported with its error, as kube does.

use serde_json::Value;

use super::field::{self, child, index};
use super::go_json::{unmarshal, Shape};
use crate::status::FieldError;

const TAINTS: &str = "scheduler.alpha.kubernetes.io/taints";
const PREFER_AVOID_PODS: &str = "scheduler.alpha.kubernetes.io/preferAvoidPods";

static TAINT: Shape = Shape::Struct(
    "Taint",
    "core.Taint",
    &[
        ("key", Shape::Str("string")),
        ("value", Shape::Str("string")),
        ("effect", Shape::Str("core.TaintEffect")),
        ("timeAdded", Shape::Time),
    ],
);
static TAINT_LIST: Shape = Shape::Slice("[]core.Taint", &TAINT);

/// The owner reference a pod signature holds (constants, so that the
/// struct field tables can embed them).
const OWNER_REFERENCE_REF: Shape = Shape::Struct(
    "OwnerReference",
    "v1.OwnerReference",
    &[
        ("apiVersion", Shape::Str("string")),
        ("kind", Shape::Str("string")),
        ("name", Shape::Str("string")),
        ("uid", Shape::Str("types.UID")),
        ("controller", Shape::Bool),
        ("blockOwnerDeletion", Shape::Bool),
    ],
);
static AVOID_ENTRY: Shape = Shape::Struct(
    "PreferAvoidPodsEntry",
    "v1.PreferAvoidPodsEntry",
    &[
        ("podSignature", POD_SIGNATURE_REF),
        ("evictionTime", Shape::Time),
        ("reason", Shape::Str("string")),
        ("message", Shape::Str("string")),
    ],
);
const POD_SIGNATURE_REF: Shape = Shape::Struct(
    "PodSignature",
    "v1.PodSignature",
    &[("podController", OWNER_REFERENCE_REF)],
);
static AVOID_PODS: Shape = Shape::Struct(
    "AvoidPods",
    "v1.AvoidPods",
    &[(
        "preferAvoidPods",
        Shape::Slice("[]v1.PreferAvoidPodsEntry", &AVOID_ENTRY),
    )],
);

/// `ValidateNodeSpecificAnnotations` of the object's annotations.
pub fn node_specific_annotations(object: &Value, errors: &mut Vec<FieldError>) {
    let annotations = object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object);
    let text = |key: &str| {
        annotations
            .and_then(|annotations| annotations.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let path = "metadata.annotations";
    let taints = text(TAINTS);
    if !taints.is_empty() {
        match unmarshal(taints, &TAINT_LIST) {
            Err(error) => errors.push(field::invalid(path, TAINTS, error)),
            Ok(list) => {
                let list = list.as_array().cloned().unwrap_or_default();
                super::node::taint_list(&list, &child(path, TAINTS), errors);
            }
        }
    }
    let avoid = text(PREFER_AVOID_PODS);
    if !avoid.is_empty() {
        let avoid_path = child(path, "AvoidPods");
        match unmarshal(avoid, &AVOID_PODS) {
            Err(error) => errors.push(field::invalid(&avoid_path, PREFER_AVOID_PODS, error)),
            Ok(avoids) => {
                for (position, entry) in field::items_at(&avoids, "preferAvoidPods")
                    .iter()
                    .enumerate()
                {
                    prefer_avoid_pods_entry(
                        entry,
                        &index(&child(path, PREFER_AVOID_PODS), position),
                        errors,
                    );
                }
            }
        }
    }
}

/// `validatePreferAvoidPodsEntry`: a pod controller, which is a controller.
/// (kube dereferences a missing `controller` and fails with a 500; it is
/// reported here as not a controller.)
fn prefer_avoid_pods_entry(entry: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let signature_path = child(path, "PodSignature");
    let Some(controller) = entry
        .pointer("/podSignature/podController")
        .filter(|controller| !controller.is_null())
    else {
        errors.push(field::required(&signature_path, ""));
        return;
    };
    if controller.get("controller").and_then(Value::as_bool) != Some(true) {
        errors.push(field::invalid_rendered(
            &child(&child(&signature_path, "PodController"), "Controller"),
            "false",
            "must point to a controller",
        ));
    }
}

#[cfg(test)]
#[path = "node_annotations_tests.rs"]
mod tests;
