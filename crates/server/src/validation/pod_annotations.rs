//! `ValidatePodSpecificAnnotations` (`pkg/apis/core/validation/validation.go`):
//! the mirror pod annotation needs `spec.nodeName`, and
//! `controller.kubernetes.io/pod-deletion-cost` is a 32-bit integer
//! (`helper.GetDeletionCostFromPodAnnotations`). The tolerations annotation
//! and the seccomp/AppArmor annotations are not checked here.

use serde_json::Value;

use super::field;
use crate::status::FieldError;

const ANNOTATIONS_PATH: &str = "metadata.annotations";
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

fn annotation<'a>(pod: &'a Value, name: &str) -> Option<&'a str> {
    pod.get("metadata")
        .and_then(|metadata| field::map_at(metadata, "annotations"))
        .and_then(|annotations| annotations.get(name))
        .map(|value| value.as_str().unwrap_or_default())
}

/// The path of the deletion cost annotation's error.
pub fn deletion_cost_path() -> String {
    field::key(ANNOTATIONS_PATH, POD_DELETION_COST)
}

/// `GetDeletionCostFromPodAnnotations` succeeds: absent, or a base-10
/// `int32` without a plus sign or leading zeros.
pub fn deletion_cost_is_valid(pod: &Value) -> bool {
    let Some(value) = annotation(pod, POD_DELETION_COST) else {
        return true;
    };
    // `validFirstDigit`: "-", a lone "0", or 1-9 first.
    let valid_first = match value.as_bytes().first() {
        Some(b'-') => true,
        Some(b'0') => value == "0",
        Some(first) => first.is_ascii_digit(),
        None => false,
    };
    valid_first && value.parse::<i32>().is_ok()
}

/// `ValidatePodSpecificAnnotations` as a pod create checks it.
pub fn pod_specific_annotations(pod: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(value) = annotation(pod, MIRROR_POD_ANNOTATION) {
        let node_name = pod
            .get("spec")
            .map(|spec| field::str_at(spec, "nodeName"))
            .unwrap_or_default();
        if node_name.is_empty() {
            errors.push(field::invalid(
                &field::key(ANNOTATIONS_PATH, MIRROR_POD_ANNOTATION),
                value,
                "must set spec.nodeName if mirror pod annotation is set",
            ));
        }
    }
    if !deletion_cost_is_valid(pod) {
        errors.push(field::invalid(
            &deletion_cost_path(),
            annotation(pod, POD_DELETION_COST).unwrap_or_default(),
            "must be a 32bit integer",
        ));
    }
    errors
}
