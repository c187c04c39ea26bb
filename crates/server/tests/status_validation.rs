//! `/status` writes validated as kube validates them: pods
//! (`ValidatePodStatusUpdate`) through `kubectl patch --subresource status`,
//! services' load balancer ingress and jobs' terminal conditions through
//! kube-rs; and the metadata each kind's status strategy keeps from them.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{api_status, TestEnv};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::flowcontrol::v1::FlowSchema;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

/// A pod `name` of one busybox container.
async fn create_pod(pods: &Api<Pod>, name: &str) {
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
}

/// A Deployment `name` of one busybox container, selecting `app: <name>`.
async fn create_deployment(deployments: &Api<Deployment>, name: &str) {
    let deployment: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
    }))
    .unwrap();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
}

/// A pod condition of a type that is no qualified name, and a change of
/// the QoS class, are refused with kube's 422; valid IPs are accepted.
#[tokio::test]
async fn kubectl_status_patch_of_a_pod_is_validated() {
    let env = TestEnv::new("podstatus").await;
    let pods: Api<Pod> = env.api();
    create_pod(&pods, "p").await;
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

/// What a `/status` write may change of the metadata is its kind's status
/// strategy's: kubectl 1.33's labels and annotations through a pod's
/// `/status` are kept, its owner references not (`podStatusStrategy`); a
/// Deployment's labels are not, its annotations are; a ReplicaSet replaced
/// through `/status` by kube-rs keeps all it sent, and the status manager
/// owns them; a FlowSchema's (`ResetObjectMetaForStatus`) keeps none. Labels
/// sent that way are validated like any other.
#[tokio::test]
async fn status_writes_keep_the_metadata_their_kinds_strategy_keeps() {
    let env = TestEnv::new("statusmeta").await;
    let patch_status = |resource: &str, body: &str| {
        env.kubectl(
            "1.33",
            &[
                "patch",
                "-n",
                &env.ns,
                resource,
                "--subresource",
                "status",
                "--type",
                "merge",
                "-p",
                body,
            ],
        )
    };
    let pods: Api<Pod> = env.api();
    create_pod(&pods, "p").await;
    let owner = r#"{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"6b1a3c4e-0000-4000-8000-000000000001"}"#;
    let (status, out, err) = patch_status(
        "pod/p",
        &format!(
            r#"{{"metadata":{{"labels":{{"l":"v"}},"annotations":{{"a":"v"}},"ownerReferences":[{owner}]}},"status":{{"message":"m"}}}}"#
        ),
    );
    assert!(status.success(), "{out}{err}");
    let stored = pods.get("p").await.unwrap();
    assert_eq!(stored.status.unwrap().message.as_deref(), Some("m"));
    let metadata = stored.metadata;
    assert_eq!(metadata.labels.unwrap()["l"], "v");
    assert_eq!(metadata.annotations.unwrap()["a"], "v");
    assert_eq!(metadata.owner_references, None);
    let (status, _, err) = patch_status("pod/p", r#"{"metadata":{"labels":{"bad key!":"v"}}}"#);
    assert!(!status.success());
    assert!(
        err.contains(r#"The Pod "p" is invalid: metadata.labels: Invalid value: "bad key!""#),
        "{err}"
    );

    let deployments: Api<Deployment> = env.api();
    create_deployment(&deployments, "d").await;
    let (status, out, err) = patch_status(
        "deployment/d",
        r#"{"metadata":{"labels":{"l":"v"},"annotations":{"a":"v"}},"status":{"observedGeneration":1}}"#,
    );
    assert!(status.success(), "{out}{err}");
    let metadata = deployments.get("d").await.unwrap().metadata;
    assert_eq!(metadata.labels, None);
    assert_eq!(metadata.annotations.unwrap()["a"], "v");

    let replica_sets: Api<ReplicaSet> = env.api();
    let replica_set: ReplicaSet = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "r"}}, "template": {
            "metadata": {"labels": {"app": "r"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
    }))
    .unwrap();
    let mut stored = replica_sets
        .create(&PostParams::default(), &replica_set)
        .await
        .unwrap();
    stored.metadata.labels = Some([("l".to_string(), "v".to_string())].into());
    stored.metadata.finalizers = Some(vec!["example.com/keep".to_string()]);
    stored.metadata.managed_fields = None;
    let params = PostParams {
        field_manager: Some("status-writer".into()),
        ..PostParams::default()
    };
    let replaced = replica_sets
        .replace_status("r", &params, &stored)
        .await
        .unwrap();
    assert_eq!(replaced.metadata.labels.unwrap()["l"], "v");
    assert_eq!(
        replaced.metadata.finalizers,
        Some(vec!["example.com/keep".to_string()])
    );
    let entry = replaced
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .find(|entry| entry.manager.as_deref() == Some("status-writer"))
        .expect("the status writer's entry");
    assert_eq!(entry.subresource.as_deref(), Some("status"));
    let owned = serde_json::to_string(&entry.fields_v1.unwrap().0).unwrap();
    assert!(owned.contains(r#""f:labels":{".":{},"f:l":{}}"#), "{owned}");
    assert!(!owned.contains("f:status"), "{owned}");
    assert!(owned.contains(r#""f:finalizers""#), "{owned}");
    // A status leaving out what Go always writes is stored as Go decodes it.
    let mut body = serde_json::to_value(replica_sets.get("r").await.unwrap()).unwrap();
    body["status"] = json!({"observedGeneration": 1});
    let path = format!("/apis/apps/v1/namespaces/{}/replicasets/r/status", env.ns);
    let answer = env
        .raw(
            "PUT",
            &path,
            Some("application/json"),
            body.to_string().into_bytes(),
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let stored: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(
        stored["status"],
        json!({"observedGeneration": 1, "replicas": 0})
    );
    let (status, out, err) = env.kubectl(
        "1.33",
        &[
            "patch",
            "-n",
            &env.ns,
            "replicaset/r",
            "--type",
            "json",
            "-p",
            r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
        ],
    );
    assert!(status.success(), "{out}{err}");

    let flow_schemas: Api<FlowSchema> = Api::all(env.client.clone());
    let (status, out, err) = env.kubectl(
        "1.33",
        &[
            "patch",
            "flowschema/global-default",
            "--subresource",
            "status",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"labels":{"l":"v"}}}"#,
        ],
    );
    assert!(status.success(), "{out}{err}");
    let labels = flow_schemas
        .get("global-default")
        .await
        .unwrap()
        .metadata
        .labels
        .unwrap_or_default();
    assert!(!labels.contains_key("l"), "{labels:?}");
}

/// Server-side apply through `/status` owns the metadata the kind's status
/// strategy keeps and not what it resets (`GetResetFields`): a label applied
/// through a pod's `/status` is stored and owned, one through a
/// Deployment's is neither.
#[tokio::test]
async fn status_apply_owns_only_the_metadata_the_strategy_keeps() {
    let env = TestEnv::new("statusapply").await;
    let pods: Api<Pod> = env.api();
    create_pod(&pods, "p").await;
    let deployments: Api<Deployment> = env.api();
    create_deployment(&deployments, "d").await;
    let params = PatchParams::apply("status-applier");
    let owned = |managed: Option<
        Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry>,
    >| {
        let entry = managed
            .unwrap()
            .into_iter()
            .find(|entry| entry.manager.as_deref() == Some("status-applier"))
            .expect("the applier's entry");
        assert_eq!(entry.subresource.as_deref(), Some("status"));
        serde_json::to_string(&entry.fields_v1.unwrap().0).unwrap()
    };
    let applied = pods
        .patch_status(
            "p",
            &params,
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "labels": {"l": "v"}}, "status": {"message": "m"}})),
        )
        .await
        .unwrap();
    assert_eq!(applied.metadata.labels.unwrap()["l"], "v");
    let fields = owned(applied.metadata.managed_fields);
    assert!(fields.contains(r#""f:labels":{"f:l":{}}"#), "{fields}");
    assert!(fields.contains(r#""f:message":{}"#), "{fields}");

    let applied = deployments
        .patch_status(
            "d",
            &params,
            &Patch::Apply(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "d", "labels": {"l": "v"}},
                "status": {"observedGeneration": 1}})),
        )
        .await
        .unwrap();
    assert_eq!(applied.metadata.labels, None);
    let fields = owned(applied.metadata.managed_fields);
    assert!(!fields.contains("f:labels"), "{fields}");
    assert!(fields.contains(r#""f:observedGeneration":{}"#), "{fields}");
}
