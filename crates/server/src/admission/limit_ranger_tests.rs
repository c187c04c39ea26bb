//! Cases of `plugin/pkg/admission/limitranger/admission_test.go`.

use serde_json::{json, Value};

use super::*;
use crate::admission::test_support::{attributes, store_with};

async fn store(limits: Value) -> ObjectStore {
    store_with(&[(
        "/registry/limitranges/ns/limits",
        json!({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "limits", "namespace": "ns"}, "spec": {"limits": limits}}),
    )])
    .await
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
}

fn container(name: &str, resources: Value) -> Value {
    json!({"name": name, "image": "nginx", "resources": resources})
}

#[tokio::test]
async fn defaults_requests_and_limits_and_annotates() {
    let store = store(json!([{"type": "Container",
        "default": {"cpu": "500m", "memory": "128Mi"},
        "defaultRequest": {"cpu": "100m", "memory": "64Mi"}}]))
    .await;
    let create = attributes(Operation::Create, "", "v1", "pods", None);
    let mut admitted = pod(json!({
        "containers": [container("app", json!({"limits": {"memory": "256Mi"}}))],
        "initContainers": [container("init", json!({}))],
    }));
    admit(&store, &create, Some(&mut admitted)).expect("admitted");
    // The limit set without a request requested it (defaulting), so only cpu was set.
    assert_eq!(
        admitted["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}})
    );
    assert_eq!(
        admitted["spec"]["initContainers"][0]["resources"],
        json!({"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "100m", "memory": "64Mi"}})
    );
    assert_eq!(
        admitted["metadata"]["annotations"][ANNOTATION],
        json!("LimitRanger plugin set: cpu request for container app; cpu limit for container app; \
               cpu, memory request for init container init; cpu, memory limit for init container init")
    );
    validate(&store, &create, Some(&admitted)).expect("valid");
}

#[tokio::test]
async fn container_min_max_and_ratio_are_enforced_with_kubes_messages() {
    let store = store(json!([{"type": "Container",
        "min": {"cpu": "100m"}, "max": {"cpu": "1"}, "maxLimitRequestRatio": {"cpu": "2"}}]))
    .await;
    let create = attributes(Operation::Create, "", "v1", "pods", None);
    let refused = |resources: Value| {
        let pod = pod(json!({"containers": [container("c", resources)]}));
        validate(&store, &create, Some(&pod))
            .expect_err("refused")
            .message
    };
    assert_eq!(
        refused(json!({"requests": {"cpu": "500m"}, "limits": {"cpu": "2"}})),
        "pods \"p\" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, \
         cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000]"
    );
    assert_eq!(
        refused(json!({"requests": {"cpu": "50m"}, "limits": {"cpu": "50m"}})),
        "pods \"p\" is forbidden: minimum cpu usage per Container is 100m, but request is 50m"
    );
    assert_eq!(
        refused(json!({})),
        "pods \"p\" is forbidden: [minimum cpu usage per Container is 100m.  No request is specified, \
         maximum cpu usage per Container is 1.  No limit is specified, \
         cpu max limit to request ratio per Container is 2, but no request is specified or request is 0]"
    );
    let fine = pod(
        json!({"containers": [container("c", json!({"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}))]}),
    );
    validate(&store, &create, Some(&fine)).expect("valid");
    // Pod updates are not checked.
    let update = attributes(Operation::Update, "", "v1", "pods", Some(&fine));
    validate(&store, &update, Some(&pod(json!({})))).expect("updates pass");
}

#[tokio::test]
async fn pod_totals_count_init_containers_and_sidecars() {
    let store = store(json!([{"type": "Pod", "max": {"memory": "1Gi"}}])).await;
    let create = attributes(Operation::Create, "", "v1", "pods", None);
    let memory =
        |amount: &str| json!({"requests": {"memory": amount}, "limits": {"memory": amount}});
    let over = pod(
        json!({"containers": [container("a", memory("512Mi")), container("b", memory("768Mi"))]}),
    );
    assert_eq!(
        validate(&store, &create, Some(&over))
            .expect_err("refused")
            .message,
        "pods \"p\" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1280Mi"
    );
    // A plain init container counts as the largest, not the sum.
    let init = pod(json!({"containers": [container("a", memory("512Mi"))],
        "initContainers": [container("i", memory("1Gi"))]}));
    validate(&store, &create, Some(&init)).expect("within");
    // A sidecar adds to the containers.
    let mut sidecar = container("s", memory("768Mi"));
    sidecar["restartPolicy"] = json!("Always");
    let with_sidecar =
        pod(json!({"containers": [container("a", memory("512Mi"))], "initContainers": [sidecar]}));
    assert!(validate(&store, &create, Some(&with_sidecar)).is_err());
}

#[tokio::test]
async fn claims_are_checked_against_their_requests() {
    let store = store(json!([{"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}])).await;
    let create = attributes(Operation::Create, "", "v1", "persistentvolumeclaims", None);
    let claim = |storage: &str| {
        json!({"metadata": {"name": "c", "namespace": "ns"},
            "spec": {"resources": {"requests": {"storage": storage}}}})
    };
    assert_eq!(
        validate(&store, &create, Some(&claim("20Gi"))).expect_err("refused").message,
        "persistentvolumeclaims \"c\" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"
    );
    assert_eq!(
        validate(&store, &create, Some(&claim("500Mi"))).expect_err("refused").message,
        "persistentvolumeclaims \"c\" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"
    );
    validate(&store, &create, Some(&claim("5Gi"))).expect("within");
    // A claim's update (a resize) is checked too.
    let old = claim("5Gi");
    let update = attributes(
        Operation::Update,
        "",
        "v1",
        "persistentvolumeclaims",
        Some(&old),
    );
    assert!(validate(&store, &update, Some(&claim("20Gi"))).is_err());
}

#[tokio::test]
async fn no_limit_ranges_no_change() {
    let store = store_with(&[]).await;
    let create = attributes(Operation::Create, "", "v1", "pods", None);
    let original = pod(json!({"containers": [container("a", json!({"limits": {"cpu": "1"}}))]}));
    let mut admitted = original.clone();
    admit(&store, &create, Some(&mut admitted)).expect("admitted");
    assert_eq!(admitted, original);
}
