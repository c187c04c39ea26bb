//! Status validation of `/status` writes to workloads
//! (`pkg/apis/apps/validation/validation.go` `ValidateDeploymentStatusUpdate`,
//! `ValidateReplicaSetStatusUpdate`, `ValidateStatefulSetStatusUpdate`,
//! `ValidateDaemonSetStatusUpdate`; `pkg/apis/core/validation`
//! `ValidateReplicationControllerStatusUpdate`; `pkg/apis/autoscaling/validation`
//! `ValidateHorizontalPodAutoscalerStatusUpdate`): non-negative counts, none
//! above `replicas`, available ≤ ready, a Deployment's collisionCount never
//! decremented.

use serde_json::Value;

use super::field::{self, child};
use crate::status::FieldError;

const ABOVE_REPLICAS: &str = "cannot be greater than status.replicas";

fn count(status: &Value, name: &str) -> i64 {
    field::int_at(status, name).unwrap_or(0)
}

/// The relations every replica status shares, after its own fields.
fn relations(status: &Value, above_replicas: &[&str], errors: &mut Vec<FieldError>) {
    let replicas = count(status, "replicas");
    for name in above_replicas {
        let value = count(status, name);
        if value > replicas {
            errors.push(field::invalid_number(
                &child("status", name),
                value,
                ABOVE_REPLICAS,
            ));
        }
    }
    let available = count(status, "availableReplicas");
    if available > count(status, "readyReplicas") {
        errors.push(field::invalid_number(
            "status.availableReplicas",
            available,
            "cannot be greater than readyReplicas",
        ));
    }
}

/// `ValidateDeploymentStatusUpdate`.
pub fn deployment(new: &Value, old: &Value) -> Vec<FieldError> {
    let status = new.get("status").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    for name in [
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
        "terminatingReplicas",
        "collisionCount",
    ] {
        field::nonnegative(status, name, "status", &mut errors);
    }
    relations(
        status,
        &["updatedReplicas", "readyReplicas", "availableReplicas"],
        &mut errors,
    );
    collision_count_not_decremented(status, old, &mut errors);
    errors
}

/// `apivalidation.IsDecremented` of `status.collisionCount`: nil after a
/// value, or a smaller value.
fn collision_count_not_decremented(status: &Value, old: &Value, errors: &mut Vec<FieldError>) {
    let old_collisions = old
        .pointer("/status/collisionCount")
        .and_then(Value::as_i64);
    let new_collisions = field::int_at(status, "collisionCount");
    if let Some(old_collisions) = old_collisions {
        if new_collisions.is_none_or(|new_collisions| new_collisions < old_collisions) {
            errors.push(field::invalid_number(
                "status.collisionCount",
                new_collisions.unwrap_or(0),
                "cannot be decremented",
            ));
        }
    }
}

/// `ValidateStatefulSetStatusUpdate` (`ValidateStatefulSetStatus`, then the
/// collision count).
pub fn stateful_set(new: &Value, old: &Value) -> Vec<FieldError> {
    let status = new.get("status").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    for name in [
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
        "observedGeneration",
        "collisionCount",
    ] {
        field::nonnegative(status, name, "status", &mut errors);
    }
    let replicas = count(status, "replicas");
    for name in [
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
    ] {
        let value = count(status, name);
        if value > replicas {
            errors.push(field::invalid_number(
                &child("status", name),
                value,
                ABOVE_REPLICAS,
            ));
        }
    }
    let available = count(status, "availableReplicas");
    if available > count(status, "readyReplicas") {
        errors.push(field::invalid_number(
            "status.availableReplicas",
            available,
            "cannot be greater than status.readyReplicas",
        ));
    }
    collision_count_not_decremented(status, old, &mut errors);
    errors
}

/// `ValidateDaemonSetStatusUpdate` (`validateDaemonSetStatus`, then the
/// collision count).
pub fn daemon_set(new: &Value, old: &Value) -> Vec<FieldError> {
    let status = new.get("status").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    for name in [
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
        "observedGeneration",
        "updatedNumberScheduled",
        "numberAvailable",
        "numberUnavailable",
        "collisionCount",
    ] {
        field::nonnegative(status, name, "status", &mut errors);
    }
    collision_count_not_decremented(status, old, &mut errors);
    errors
}

/// `ValidateReplicaSetStatus` / `ValidateReplicationControllerStatus`.
pub fn replica_set(new: &Value) -> Vec<FieldError> {
    let status = new.get("status").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    for name in [
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
        "terminatingReplicas",
    ] {
        field::nonnegative(status, name, "status", &mut errors);
    }
    relations(
        status,
        &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
        &mut errors,
    );
    errors
}

/// `ValidateHorizontalPodAutoscalerStatusUpdate`
/// (`pkg/apis/autoscaling/validation/validation.go`): non-negative replica counts.
pub fn horizontal_pod_autoscaler(new: &Value) -> Vec<FieldError> {
    let status = new.get("status").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    for name in ["currentReplicas", "desiredReplicas"] {
        field::nonnegative(status, name, "status", &mut errors);
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestValidateDeploymentStatus*` and `TestValidateReplicaSetStatus`.
    #[test]
    fn replica_counts_as_kube() {
        let old = json!({"status": {"collisionCount": 2}});
        let valid = json!({"status": {"replicas": 3, "updatedReplicas": 3, "readyReplicas": 2, "availableReplicas": 2, "collisionCount": 2}});
        assert!(deployment(&valid, &old).is_empty());
        assert_eq!(
            texts(deployment(&json!({"status": {"replicas": 1, "readyReplicas": 2, "availableReplicas": 3, "observedGeneration": -1, "collisionCount": 1}}), &old)),
            vec![
                "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
                "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas",
                "status.collisionCount: Invalid value: 1: cannot be decremented",
            ]
        );
        assert_eq!(
            texts(replica_set(&json!({"status": {"replicas": -1, "fullyLabeledReplicas": 1}}))),
            vec![
                "status.replicas: Invalid value: -1: must be greater than or equal to 0",
                "status.fullyLabeledReplicas: Invalid value: 1: cannot be greater than status.replicas",
                // Unset counts are 0, above the negative replicas (as in kube).
                "status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 0: cannot be greater than status.replicas",
            ]
        );
    }

    /// Cases from kube's `TestValidateStatefulSetStatus` and `TestValidateDaemonSetStatusUpdate`.
    #[test]
    fn stateful_and_daemon_set_counts_as_kube() {
        let old = json!({"status": {"collisionCount": 1}});
        let valid = json!({"status": {"replicas": 3, "readyReplicas": 3, "currentReplicas": 2, "updatedReplicas": 1, "availableReplicas": 2, "collisionCount": 1}});
        assert!(stateful_set(&valid, &old).is_empty());
        assert_eq!(
            texts(stateful_set(&json!({"status": {"replicas": 2, "readyReplicas": 1, "currentReplicas": 3, "availableReplicas": 2, "observedGeneration": -3}}), &old)),
            vec![
                "status.observedGeneration: Invalid value: -3: must be greater than or equal to 0",
                "status.currentReplicas: Invalid value: 3: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas",
                "status.collisionCount: Invalid value: 0: cannot be decremented",
            ]
        );
        assert!(daemon_set(
            &json!({"status": {"numberReady": 2, "collisionCount": 3}}),
            &old
        )
        .is_empty());
        assert_eq!(
            texts(daemon_set(
                &json!({"status": {"numberMisscheduled": -1, "numberUnavailable": -2, "collisionCount": 0}}),
                &old
            )),
            vec![
                "status.numberMisscheduled: Invalid value: -1: must be greater than or equal to 0",
                "status.numberUnavailable: Invalid value: -2: must be greater than or equal to 0",
                "status.collisionCount: Invalid value: 0: cannot be decremented",
            ]
        );
    }
}
