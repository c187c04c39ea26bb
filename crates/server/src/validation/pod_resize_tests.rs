//! Cases ported from kube's `validation_test.go` `TestValidatePodResize`.

use super::*;
use serde_json::json;

fn pod(containers: Value) -> Value {
    json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": {
        "containers": containers,
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30}})
}

fn container(resources: Value) -> Value {
    json!({"name": "c", "image": "x", "imagePullPolicy": "Always",
        "terminationMessagePolicy": "File", "resources": resources})
}

fn messages(errors: &[FieldError]) -> Vec<String> {
    errors
        .iter()
        .map(|error| format!("{}: {}", error.field, error.body()))
        .collect()
}

fn resize(old_resources: Value, new_resources: Value) -> Vec<String> {
    let old = pod(json!([container(old_resources)]));
    let new = pod(json!([container(new_resources)]));
    messages(&pod_resize(&new, &old))
}

#[test]
fn cpu_and_memory_may_change_within_the_class() {
    let burstable = json!({"requests": {"cpu": "100m", "memory": "100Mi"}});
    assert!(resize(
        burstable.clone(),
        json!({"requests": {"cpu": "200m", "memory": "50Mi"}})
    )
    .is_empty());
    let guaranteed =
        json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}});
    // 1.34 allows memory limit decreases (kubernetes#133012).
    assert!(resize(
        guaranteed,
        json!({"limits": {"cpu": "2", "memory": "512Mi"}, "requests": {"cpu": "2", "memory": "512Mi"}})
    )
    .is_empty());
    // Adding a limit to a burstable container keeps it burstable.
    assert!(resize(
        burstable,
        json!({"requests": {"cpu": "100m", "memory": "100Mi"}, "limits": {"cpu": "1"}})
    )
    .is_empty());
}

#[test]
fn the_qos_class_may_not_change() {
    let guaranteed =
        json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}});
    let mut old = pod(json!([container(guaranteed)]));
    old["status"] = json!({"qosClass": "Guaranteed"});
    let mut new = pod(json!([container(
        json!({"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}})
    )]));
    new["status"] = old["status"].clone();
    assert_eq!(
        messages(&pod_resize(&new, &old)),
        ["spec: Invalid value: \"Guaranteed\": Pod QOS Class may not change as a result of resizing"]
    );
    // Best-effort containers may not gain requests.
    assert_eq!(
        resize(json!({}), json!({"requests": {"cpu": "100m"}})),
        ["spec: Invalid value: \"\": Pod QOS Class may not change as a result of resizing"]
    );
}

#[test]
fn requests_and_limits_may_not_be_removed() {
    assert_eq!(
        resize(
            json!({"requests": {"cpu": "100m", "memory": "100Mi"}, "limits": {"cpu": "1"}}),
            json!({"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}})
        ),
        [
            "spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed",
            "spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed",
        ]
    );
}

#[test]
fn only_cpu_and_memory_are_mutable() {
    assert_eq!(
        resize(
            json!({"requests": {"cpu": "100m", "ephemeral-storage": "1Gi"}}),
            json!({"requests": {"cpu": "100m", "ephemeral-storage": "2Gi"}})
        ),
        ["spec: Forbidden: only cpu and memory resources are mutable"]
    );
    let old = pod(json!([container(json!({"requests": {"cpu": "1"}}))]));
    let mut new = old.clone();
    new["spec"]["containers"][0]["resizePolicy"] =
        json!([{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]);
    assert_eq!(
        messages(&pod_resize(&new, &old)),
        ["spec: Forbidden: only cpu and memory resources are mutable"]
    );
    let mut fewer = old.clone();
    fewer["spec"]["containers"] = json!([]);
    let errors = messages(&pod_resize(&fewer, &old));
    assert!(
        errors.contains(&"spec: Forbidden: only cpu and memory resources are mutable".to_string())
    );
}

#[test]
fn init_containers_resize_only_as_sidecars() {
    let init = |restart: Option<&str>, cpu: &str| {
        let mut init = container(json!({"requests": {"cpu": cpu}}));
        init["name"] = json!("init");
        if let Some(policy) = restart {
            init["restartPolicy"] = json!(policy);
        }
        init
    };
    let with_init = |init: Value| {
        let mut pod = pod(json!([container(json!({"requests": {"cpu": "1"}}))]));
        pod["spec"]["initContainers"] = json!([init]);
        pod
    };
    let old = with_init(init(Some("Always"), "100m"));
    let new = with_init(init(Some("Always"), "200m"));
    assert!(messages(&pod_resize(&new, &old)).is_empty());
    let old = with_init(init(None, "100m"));
    let new = with_init(init(None, "200m"));
    assert_eq!(
        messages(&pod_resize(&new, &old)),
        ["spec: Forbidden: resources for non-sidecar init containers are immutable"]
    );
}

#[test]
fn static_windows_and_pod_level_pods_are_not_resized() {
    let old = pod(json!([container(json!({"requests": {"cpu": "1"}}))]));
    let new = pod(json!([container(json!({"requests": {"cpu": "2"}}))]));
    let mut mirror = old.clone();
    mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
    assert_eq!(
        messages(&pod_resize(&new, &mirror)),
        [": Forbidden: static pods cannot be resized"]
    );
    let mut windows = old.clone();
    windows["spec"]["os"] = json!({"name": "windows"});
    assert_eq!(
        messages(&pod_resize(&new, &windows)),
        [": Forbidden: windows pods cannot be resized"]
    );
    let mut pod_level = old.clone();
    pod_level["spec"]["resources"] = json!({"requests": {"cpu": "1"}});
    assert_eq!(
        messages(&pod_resize(&new, &pod_level)),
        [": Forbidden: pods with pod-level resources cannot be resized"]
    );
}

#[test]
fn a_running_container_without_reported_resources_refuses() {
    let mut old = pod(json!([container(json!({"requests": {"cpu": "1"}}))]));
    old["status"] = json!({"containerStatuses": [{"name": "c", "state": {"running": {}}}]});
    let new = pod(json!([container(json!({"requests": {"cpu": "2"}}))]));
    assert_eq!(
        messages(&pod_resize(&new, &old)),
        ["spec: Forbidden: Pod running on node without support for resize"]
    );
    old["status"]["containerStatuses"][0]["resources"] = json!({"requests": {"cpu": "1"}});
    assert!(messages(&pod_resize(&new, &old)).is_empty());
}
