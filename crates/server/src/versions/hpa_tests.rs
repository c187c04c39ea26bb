use super::*;

fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn v2_full() -> Value {
    json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "ns", "annotations": {"keep": "me"}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2, "maxReplicas": 10,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60}}},
                {"type": "Resource", "resource": {"name": "memory",
                    "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
            ],
            "behavior": {
                "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
            },
        },
        "status": {
            "observedGeneration": 1, "currentReplicas": 2, "desiredReplicas": 3,
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": 70, "averageValue": "700m"}}}],
            "conditions": [{"type": "AbleToScale", "status": "True",
                "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "SucceededRescale",
                "message": "the HPA controller was able to update the target scale to 3"}],
        },
    })
}

#[test]
fn v2_reads_as_v1_with_kubes_annotations_and_back() {
    let mut v1 = map(v2_full());
    v2_to_v1(&mut v1);
    let v1 = Value::Object(v1);
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(
        v1["spec"],
        json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2, "maxReplicas": 10, "targetCPUUtilizationPercentage": 60})
    );
    assert_eq!(
        v1["status"],
        json!({"observedGeneration": 1, "currentReplicas": 2, "desiredReplicas": 3,
            "currentCPUUtilizationPercentage": 70})
    );
    let annotations = &v1["metadata"]["annotations"];
    assert_eq!(annotations["keep"], "me");
    assert_eq!(
        annotations[METRICS_ANNOTATION],
        r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}}]"#
    );
    assert_eq!(
        annotations[CURRENT_METRICS_ANNOTATION],
        r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":70,"currentAverageValue":"700m"}}]"#
    );
    assert_eq!(
        annotations[CONDITIONS_ANNOTATION],
        r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"SucceededRescale","message":"the HPA controller was able to update the target scale to 3"}]"#
    );
    assert_eq!(
        annotations[BEHAVIOR_ANNOTATION],
        r#"{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}"#
    );

    let mut back = map(v1);
    v1_to_v2(&mut back).expect("converts");
    let mut expected = v2_full();
    // The CPU utilization target comes back after the other metrics.
    expected["spec"]["metrics"] = json!([
        {"type": "Resource", "resource": {"name": "memory",
            "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
        {"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 60}}},
    ]);
    assert_eq!(Value::Object(back), expected);
}

#[test]
fn status_replica_counts_are_written_as_go_writes_them() {
    let mut object = map(
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "a"}, "spec": {"maxReplicas": 3}, "status": {}}),
    );
    v2_to_v1(&mut object);
    assert_eq!(
        object.get("status"),
        Some(&json!({"currentReplicas": 0, "desiredReplicas": 0}))
    );
}

#[test]
fn a_plain_v1_hpa_gets_the_explicit_cpu_default() {
    let mut object = map(
        json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "a"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3}}),
    );
    v1_to_v2(&mut object).expect("converts");
    assert_eq!(
        Value::Object(object),
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "a"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80}}}]},
            "status": {"desiredReplicas": 0}})
    );
}

#[test]
fn v1_with_a_target_and_status_maps_to_v2_metrics() {
    let mut object = map(
        json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "a", "annotations": {BEHAVIOR_ANNOTATION: "not json"}},
        "spec": {"maxReplicas": 3, "targetCPUUtilizationPercentage": 50},
        "status": {"currentReplicas": 1, "desiredReplicas": 1, "currentCPUUtilizationPercentage": 20}}),
    );
    v1_to_v2(&mut object).expect("converts");
    let object = Value::Object(object);
    assert_eq!(
        object["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}])
    );
    assert_eq!(
        object["status"]["currentMetrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 20}}}])
    );
    // A behavior that does not decode is ignored; the annotation is dropped.
    assert_eq!(object["spec"].get("behavior"), None);
    assert_eq!(object["metadata"], json!({"name": "a"}));
}

#[test]
fn the_behavior_annotation_is_read_case_insensitively() {
    let behavior = behavior_from_internal_text(
        r#"{"scaleup":{"stabilizationWindowSeconds":0,"Policies":[{"type":"Pods","VALUE":4,"PeriodSeconds":60}]},"ScaleDown":null}"#,
    );
    assert_eq!(
        behavior,
        Some(json!({"scaleUp": {"stabilizationWindowSeconds": 0,
            "policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}]}}))
    );
    assert_eq!(
        behavior_from_internal_text(r#"{"ScaleUp":null,"ScaleDown":null}"#),
        None
    );
    assert_eq!(
        behavior_from_internal_text(r#"{"ScaleUp":{"Policies":"x"}}"#),
        None
    );
}

#[test]
fn annotations_that_do_not_decode_are_errors() {
    for (text, message) in [
        (
            "abc",
            "invalid character 'a' looking for beginning of value",
        ),
        (
            "{}",
            "json: cannot unmarshal object into Go value of type []v1.MetricSpec",
        ),
        (
            "[1]",
            "json: cannot unmarshal number into Go value of type v1.MetricSpec",
        ),
    ] {
        let mut object = map(
            json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "a", "annotations": {METRICS_ANNOTATION: text}},
            "spec": {"maxReplicas": 3}}),
        );
        let error = v1_to_v2(&mut object).expect_err(text);
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn annotation_items_of_the_wrong_shape_are_not_stored() {
    let hpa = crate::registry::builtin_resources()
        .iter()
        .find(|r| {
            r.group == "autoscaling" && r.version == "v1" && r.plural == "horizontalpodautoscalers"
        })
        .expect("served");
    let object = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "a", "annotations": {METRICS_ANNOTATION:
            r#"[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":"x"}}]"#}},
        "spec": {"maxReplicas": 3}});
    let error = crate::versions::storage_form(&object, hpa).expect_err("refused");
    assert!(
        error
            .to_string()
            .starts_with("json: cannot unmarshal string into Go struct field"),
        "{error}"
    );
}
