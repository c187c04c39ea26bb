//! Cases from kube's `TestValidateHorizontalPodAutoscaler`,
//! `TestValidateHorizontalPodAutoscalerUpdateMinReplicas`,
//! `TestValidateBehavior` (`autoscaling/validation/validation_test.go`).

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn hpa(spec: Value) -> Value {
    let mut full = json!({
        "scaleTargetRef": {"kind": "ReplicationController", "name": "myrc"},
        "minReplicas": 1,
        "maxReplicas": 5,
        "metrics": [cpu_utilization(70)],
    });
    if let (Some(full), Some(spec)) = (full.as_object_mut(), spec.as_object()) {
        for (key, value) in spec {
            full.insert(key.clone(), value.clone());
        }
    }
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "myautoscaler", "namespace": "default"}, "spec": full})
}

fn cpu_utilization(percent: i64) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": percent}}})
}

fn object_metric(target: Value) -> Value {
    json!({"type": "Object", "object": {
        "describedObject": {"kind": "ReplicationController", "name": "myrc"},
        "metric": {"name": "somemetric"}, "target": target}})
}

#[test]
fn valid_autoscalers_pass() {
    for spec in [
        json!({}),
        json!({"metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "AverageValue", "averageValue": "100m"}}}]}),
        json!({"metrics": [{"type": "Pods", "pods": {"metric": {"name": "somemetric"},
            "target": {"type": "AverageValue", "averageValue": "100m"}}}]}),
        json!({"metrics": [{"type": "ContainerResource", "containerResource": {"name": "cpu",
            "container": "test-container", "target": {"type": "Utilization", "averageUtilization": 70}}}]}),
        json!({"metrics": [object_metric(json!({"type": "Value", "value": "100"}))]}),
        json!({"metrics": [{"type": "External", "external": {"metric": {"name": "somemetric"},
            "target": {"type": "Value", "value": "100"}}}]}),
        json!({"behavior": {"scaleUp": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 1800}]},
            "scaleDown": {"selectPolicy": "Disabled"}}}),
        json!({"minReplicas": null}),
    ] {
        // Validated as a write validates it: after `SetDefaults_HorizontalPodAutoscaler`.
        let mut object = hpa(spec.clone());
        crate::defaults::apply(autoscaling_v2(), &mut object);
        let errors = horizontal_pod_autoscaler(&object, None);
        assert!(errors.is_empty(), "{spec}: {:?}", texts(&errors));
    }
}

fn autoscaling_v2() -> &'static crate::registry::ResourceDef {
    crate::registry::builtin_resources()
        .iter()
        .find(|resource| resource.group == "autoscaling" && resource.version == "v2")
        .expect("autoscaling/v2 is served")
}

/// `TestValidateBehavior`'s rules without policies: refused when nothing
/// defaulted them, as an autoscaling/v1 behavior annotation is validated.
#[test]
fn scaling_rules_without_policies_are_refused_undefaulted() {
    for (direction, select) in [
        ("scaleUp", "Min"),
        ("scaleDown", "Min"),
        ("scaleDown", "Disabled"),
    ] {
        let spec = json!({"behavior": {direction: {"selectPolicy": select}}});
        assert_eq!(
            texts(&horizontal_pod_autoscaler(&hpa(spec.clone()), None)),
            [format!("spec.behavior.{direction}.policies: Required value: must specify at least one Policy")],
            "{spec}"
        );
    }
    let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "a", "namespace": "default", "annotations": {
            "autoscaling.alpha.kubernetes.io/behavior": r#"{"ScaleDown":{"SelectPolicy":"Min"}}"#}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 2}});
    assert_eq!(
        texts(&horizontal_pod_autoscaler(&v1, None)),
        ["spec.behavior.scaleDown.policies: Required value: must specify at least one Policy"]
    );
}

#[test]
fn invalid_autoscalers_fail_as_kube() {
    let cases = [
        (json!({"scaleTargetRef": {"name": "myrc"}}), vec!["spec.scaleTargetRef.kind: Required value"]),
        (json!({"scaleTargetRef": {"kind": "..", "name": "myrc"}}), vec!["spec.scaleTargetRef.kind: Invalid value: \"..\": may not be '..'"]),
        (json!({"scaleTargetRef": {"kind": "ReplicationController"}}), vec!["spec.scaleTargetRef.name: Required value"]),
        (json!({"scaleTargetRef": {"kind": "ReplicationController", "name": "my/rc"}}), vec!["spec.scaleTargetRef.name: Invalid value: \"my/rc\": may not contain '/'"]),
        (json!({"minReplicas": -1}), vec!["spec.minReplicas: Invalid value: -1: must be greater than or equal to 1"]),
        (json!({"minReplicas": 7}), vec!["spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`"]),
        (json!({"maxReplicas": 0, "minReplicas": null}), vec!["spec.maxReplicas: Invalid value: 0: must be greater than 0"]),
        (json!({"metrics": [cpu_utilization(-10)]}), vec!["spec.metrics[0].resource.target.averageUtilization: Invalid value: -10: must be greater than 0"]),
        (json!({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}]}),
            vec!["spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization"]),
        (json!({"metrics": [{"type": "Resource", "resource": {"target": {"type": "Utilization", "averageUtilization": 70}}}]}),
            vec!["spec.metrics[0].resource.name: Required value: must specify a resource name"]),
        (json!({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageUtilization": 70, "averageValue": "100"}}}]}),
            vec!["spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization"]),
        (json!({"metrics": [{"type": "Pods", "pods": {"metric": {"name": "somemetric"}, "target": {"type": "AverageValue", "averageValue": "-1"}}}]}),
            vec!["spec.metrics[0].pods.target.averageValue: Invalid value: \"-1\": must be positive"]),
        (json!({"metrics": [{"type": "Pods", "pods": {"target": {"type": "AverageValue", "averageValue": "100m"}}}]}),
            vec!["spec.metrics[0].pods.metric.name: Required value: must specify a metric name"]),
        (json!({"metrics": [{"type": "Pods", "pods": {"metric": {"name": "somemetric"}, "target": {"type": "Value"}}}]}),
            vec!["spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue"]),
        (json!({"metrics": [object_metric(json!({"type": "Value"}))]}),
            vec!["spec.metrics[0].object.target.averageValue: Required value: must set either a target value or averageValue"]),
        (json!({"metrics": [object_metric(json!({"type": "Bogus", "value": "100"}))]}),
            vec!["spec.metrics[0].object.target.type: Invalid value: \"Bogus\": must be either Utilization, Value, or AverageValue"]),
        (json!({"metrics": [{"type": "External", "external": {"metric": {"name": "somemetric"}, "target": {"type": "Value", "value": "300", "averageValue": "100"}}}]}),
            vec!["spec.metrics[0].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target"]),
        (json!({"metrics": [{"type": "ContainerResource", "containerResource": {"name": "InvalidResource", "container": "c", "target": {"type": "Utilization", "averageUtilization": 70}}}]}),
            vec!["spec.metrics[0].containerResource.name: Invalid value: \"InvalidResource\": must be a standard resource for containers"]),
        (json!({"metrics": [{"type": "ContainerResource", "containerResource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}),
            vec!["spec.metrics[0].containerResource.container: Required value: must specify a container"]),
        (json!({"metrics": [{"type": "Resource"}]}),
            vec!["spec.metrics[0].resource: Required value: must populate information for the given metric source"]),
        (json!({"metrics": [{}]}),
            vec![
                "spec.metrics[0].type: Required value: must specify a metric source type",
                "spec.metrics[0].type: Unsupported value: \"\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
                "spec.metrics[0].type: Unsupported value: \"\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
            ]),
        (json!({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
                "pods": {"metric": {"name": "somemetric"}, "target": {"type": "AverageValue", "averageValue": "100m"}}}]}),
            vec!["spec.metrics[0].pods: Forbidden: must populate the given metric source only"]),
        (json!({"minReplicas": 0}),
            vec![
                "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
                "spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
            ]),
        (json!({"behavior": {"scaleUp": {"stabilizationWindowSeconds": 3601, "policies": []}}}),
            vec![
                "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
                "spec.behavior.scaleUp.policies: Required value: must specify at least one Policy",
            ]),
        (json!({"behavior": {"scaleDown": {"stabilizationWindowSeconds": -1, "selectPolicy": "Average",
                "policies": [{"type": "Replicas", "value": 0, "periodSeconds": 1801}]}}}),
            vec![
                "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero",
                "spec.behavior.scaleDown.selectPolicy: Unsupported value: \"Average\": supported values: \"Disabled\", \"Max\", \"Min\"",
                "spec.behavior.scaleDown.policies[0].type: Unsupported value: \"Replicas\": supported values: \"Percent\", \"Pods\"",
                "spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero",
                "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
            ]),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            texts(&horizontal_pod_autoscaler(&hpa(spec.clone()), None)),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn min_replicas_zero_is_kept_only_when_it_was_zero() {
    let zero = hpa(
        json!({"minReplicas": 0, "metrics": [object_metric(json!({"type": "Value", "value": "100"}))]}),
    );
    assert_eq!(
        texts(&horizontal_pod_autoscaler(&zero, Some(&hpa(json!({}))))),
        ["spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"]
    );
    assert!(horizontal_pod_autoscaler(&zero, Some(&zero)).is_empty());
}

#[test]
fn autoscaling_v1_is_checked_as_its_v2_form() {
    let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "a", "namespace": "default"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 0,
            "targetCPUUtilizationPercentage": 0}});
    assert_eq!(
        texts(&horizontal_pod_autoscaler(&v1, None)),
        [
            "spec.maxReplicas: Invalid value: 0: must be greater than 0",
            "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
        ]
    );
}
