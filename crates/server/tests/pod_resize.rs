//! `pods/resize` (in-place pod vertical scaling, on by default in 1.34):
//! kubectl's `--subresource resize` patch, a kube-rs replace and get on the
//! subresource, dry-run, and kube's refusals (`ValidatePodResize`).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{api_status, TestEnv};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

fn burstable_pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox",
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
    }))
    .unwrap()
}

fn cpu_request(pod: &Pod) -> String {
    let resources = pod.spec.as_ref().unwrap().containers[0]
        .resources
        .clone()
        .unwrap();
    resources.requests.unwrap()["cpu"].0.clone()
}

/// `kubectl patch --subresource resize` changes a container's cpu; other
/// fields sent through the subresource are dropped; dry-run stores nothing;
/// a change of QoS class or of another resource is refused with kube's 422.
#[tokio::test]
async fn kubectl_resizes_a_pod_in_place() {
    let env = TestEnv::new("resize").await;
    let pods: Api<Pod> = env.api();
    let created = pods
        .create(&PostParams::default(), &burstable_pod("p"))
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let patch = r#"{"metadata":{"labels":{"x":"y"}},"spec":{"activeDeadlineSeconds":5,"containers":[{"name":"c","resources":{"requests":{"cpu":"200m"}}}]}}"#;
    env.kubectl_ok(
        "1.33",
        &[
            "patch",
            "-n",
            &env.ns,
            "pod",
            "p",
            "--subresource",
            "resize",
            "--patch",
            patch,
        ],
    );
    let resized = pods.get("p").await.unwrap();
    assert_eq!(cpu_request(&resized), "200m");
    assert_eq!(resized.metadata.generation, Some(2));
    assert_eq!(resized.metadata.labels, None);
    assert_eq!(resized.spec.as_ref().unwrap().active_deadline_seconds, None);

    let dry = r#"{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"300m"}}}]}}"#;
    let out = env.kubectl_ok(
        "1.33",
        &[
            "patch",
            "-n",
            &env.ns,
            "pod",
            "p",
            "--subresource",
            "resize",
            "--dry-run=server",
            "--patch",
            dry,
            "-o",
            "json",
        ],
    );
    let answered: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        answered["spec"]["containers"][0]["resources"]["requests"]["cpu"],
        "300m"
    );
    assert_eq!(cpu_request(&pods.get("p").await.unwrap()), "200m");

    // Equal requests and limits would make the pod Guaranteed.
    let guaranteed = r#"{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"200m","memory":"64Mi"}}}]}}"#;
    let (status, _, err) = env.kubectl(
        "1.33",
        &[
            "patch",
            "-n",
            &env.ns,
            "pod",
            "p",
            "--subresource",
            "resize",
            "--patch",
            guaranteed,
        ],
    );
    assert!(!status.success());
    assert!(
        err.contains(r#"The Pod "p" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing"#),
        "{err}"
    );
    let storage = r#"{"spec":{"containers":[{"name":"c","resources":{"requests":{"ephemeral-storage":"1Gi"}}}]}}"#;
    let (status, _, err) = env.kubectl(
        "1.33",
        &[
            "patch",
            "-n",
            &env.ns,
            "pod",
            "p",
            "--subresource",
            "resize",
            "--patch",
            storage,
        ],
    );
    assert!(!status.success());
    assert!(
        err.contains("spec: Forbidden: only cpu and memory resources are mutable"),
        "{err}"
    );
}

/// kube-rs reads `pods/{name}/resize`, replaces and applies the pod through
/// it; a request removed is refused with kube's path and message.
#[tokio::test]
async fn kube_rs_replaces_through_the_resize_subresource() {
    let env = TestEnv::new("resize-rs").await;
    let pods: Api<Pod> = env.api();
    pods.create(&PostParams::default(), &burstable_pod("p"))
        .await
        .unwrap();
    let mut pod: Pod = pods.get_subresource("resize", "p").await.unwrap();
    let container = &mut pod.spec.as_mut().unwrap().containers[0];
    let mut resources = container.resources.clone().unwrap();
    let mut requests = resources.requests.clone().unwrap();
    requests.insert(
        "memory".into(),
        k8s_openapi::apimachinery::pkg::api::resource::Quantity("128Mi".into()),
    );
    resources.requests = Some(requests.clone());
    container.resources = Some(resources.clone());
    container.image = Some("alpine".into());
    let replaced: Pod = pods
        .replace_subresource("resize", "p", &PostParams::default(), &pod)
        .await
        .unwrap();
    let container = &replaced.spec.as_ref().unwrap().containers[0];
    assert_eq!(
        container
            .resources
            .as_ref()
            .unwrap()
            .requests
            .as_ref()
            .unwrap()["memory"]
            .0,
        "128Mi"
    );
    // The image is not the subresource's to change.
    assert_eq!(container.image.as_deref(), Some("busybox"));

    // Server-side apply through the subresource: the manager owns the
    // resources it sent, recorded against `resize`.
    let applied: Pod = pods
        .patch_subresource(
            "resize",
            "p",
            &PatchParams::apply("resizer").force(),
            &Patch::Apply(json!({
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c",
                    "resources": {"requests": {"cpu": "300m", "memory": "128Mi"}}}]},
            })),
        )
        .await
        .unwrap();
    let container = &applied.spec.as_ref().unwrap().containers[0];
    assert_eq!(
        container
            .resources
            .as_ref()
            .unwrap()
            .requests
            .as_ref()
            .unwrap()["cpu"]
            .0,
        "300m"
    );
    let managers = applied.metadata.managed_fields.clone().unwrap_or_default();
    assert!(
        managers
            .iter()
            .any(|entry| entry.manager.as_deref() == Some("resizer")
                && entry.subresource.as_deref() == Some("resize")),
        "{managers:?}"
    );
    let mut removed = applied.clone();
    let container = &mut removed.spec.as_mut().unwrap().containers[0];
    requests.remove("memory");
    resources.requests = Some(requests);
    container.resources = Some(resources);
    let error = pods
        .replace_subresource::<Pod>("resize", "p", &PostParams::default(), &removed)
        .await
        .unwrap_err();
    let status = api_status(error);
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "Pod \"p\" is invalid: spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed"
    );
}
