//! `/status` writes validated as kube validates them: pods
//! (`ValidatePodStatusUpdate`) through `kubectl patch --subresource status`,
//! services' load balancer ingress and jobs' terminal conditions through kube-rs.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{api_status, TestEnv};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, Service};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

/// A pod condition of a type that is no qualified name, and a change of
/// the QoS class, are refused with kube's 422; valid IPs are accepted.
#[tokio::test]
async fn kubectl_status_patch_of_a_pod_is_validated() {
    let env = TestEnv::new("podstatus").await;
    let pods: Api<Pod> = env.api();
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let patch = |body: &str| {
        env.kubectl(
            "1.33",
            &[
                "patch",
                "-n",
                &env.ns,
                "pod",
                "p",
                "--subresource",
                "status",
                "--type",
                "merge",
                "-p",
                body,
            ],
        )
    };
    let (status, _, err) =
        patch(r#"{"status":{"conditions":[{"type":"bad type","status":"True"}]}}"#);
    assert!(!status.success());
    assert!(
        err.contains(r#"The Pod "p" is invalid: metadata.conditions[0].Type: Invalid value: "bad type": name part must consist of alphanumeric characters"#),
        "{err}"
    );
    let (status, _, err) = patch(r#"{"status":{"qosClass":"Guaranteed"}}"#);
    assert!(!status.success());
    assert!(
        err.contains(r#"status.qosClass: Invalid value: "Guaranteed": field is immutable"#),
        "{err}"
    );
    let (status, out, err) = patch(
        r#"{"status":{"hostIP":"10.0.0.1","hostIPs":[{"ip":"10.0.0.1"}],"podIP":"10.1.0.5","podIPs":[{"ip":"10.1.0.5"},{"ip":"fd00::5"}],"conditions":[{"type":"example.com/ready","status":"True"}]}}"#,
    );
    assert!(status.success(), "{out}{err}");
    let stored = pods.get_status("p").await.unwrap().status.unwrap();
    assert_eq!(stored.pod_ips.unwrap().len(), 2);
    // The QoS class set at creation stays.
    assert_eq!(stored.qos_class.as_deref(), Some("BestEffort"));
}

/// Load balancer ingress only on LoadBalancer services; an `ip` without
/// `ipMode` is defaulted to `VIP`.
#[tokio::test]
async fn service_load_balancer_status_is_validated() {
    let env = TestEnv::new("svcstatus").await;
    let services: Api<Service> = env.api();
    for (name, kind) in [("cluster", "ClusterIP"), ("lb", "LoadBalancer")] {
        let service: Service = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"type": kind, "ports": [{"port": 80}]},
        }))
        .unwrap();
        services
            .create(&PostParams::default(), &service)
            .await
            .unwrap();
    }
    let ingress =
        Patch::Merge(json!({"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}));
    let refused = services
        .patch_status("cluster", &PatchParams::default(), &ingress)
        .await
        .unwrap_err();
    let status = api_status(refused);
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "Service \"cluster\" is invalid: status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"
    );
    let accepted = services
        .patch_status("lb", &PatchParams::default(), &ingress)
        .await
        .unwrap();
    let points = accepted
        .status
        .unwrap()
        .load_balancer
        .unwrap()
        .ingress
        .unwrap();
    assert_eq!(points[0].ip_mode.as_deref(), Some("VIP"));
    let hostname =
        Patch::Merge(json!({"status": {"loadBalancer": {"ingress": [{"hostname": "1.2.3.4"}]}}}));
    let status = api_status(
        services
            .patch_status("lb", &PatchParams::default(), &hostname)
            .await
            .unwrap_err(),
    );
    assert_eq!(
        status.message,
        "Service \"lb\" is invalid: status.loadBalancer.ingress[0].hostname: Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address"
    );
}

/// A Job marked Complete without the fields kube requires is refused, with
/// every cause; the complete status a controller writes is accepted.
#[tokio::test]
async fn job_terminal_conditions_are_validated() {
    let env = TestEnv::new("jobstatus").await;
    let jobs: Api<Job> = env.api();
    let job: Job = serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]}}},
    }))
    .unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();
    let complete = json!({"type": "Complete", "status": "True"});
    let met = json!({"type": "SuccessCriteriaMet", "status": "True"});
    let refused = jobs
        .patch_status(
            "j",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"active": 1, "conditions": [complete]}})),
        )
        .await
        .unwrap_err();
    let status = api_status(refused);
    assert_eq!(status.code, 422);
    let causes: Vec<String> = status
        .details
        .unwrap()
        .causes
        .into_iter()
        .map(|cause| format!("{}: {}", cause.field, cause.message))
        .collect();
    assert_eq!(
        causes,
        [
            "status.completionTime: Required value: completionTime is required for Complete jobs",
            "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
            "status.active: Invalid value: 1: active>0 is invalid for finished job",
            "status.startTime: Required value: startTime is required for finished job",
        ]
    );
    jobs.patch_status(
        "j",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {
            "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:01:00Z",
            "succeeded": 1, "conditions": [met, complete]}})),
    )
    .await
    .unwrap();
}
