//! The pod subresources controllers and kubectl call: `binding` (what the
//! scheduler does) and the legacy `bindings` resource, `eviction` (what
//! `kubectl drain` does) against PodDisruptionBudgets kept by the
//! `disruption` controller, and the kubelet-facing subresources answered as
//! kube-apiserver answers them when no kubelet can be reached.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{api_status, expect_api_error, TestEnv};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use kube::core::Status;
use serde_json::{json, Value};

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }))
    .unwrap()
}

fn binding(name: &str, uid: Option<&str>, node: &str) -> Value {
    let mut metadata = json!({"name": name, "annotations": {"scheduled-by": "test"}});
    if let Some(uid) = uid {
        metadata["uid"] = json!(uid);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": metadata,
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    })
}

/// POST pods/{name}/binding through kube-rs.
async fn bind(
    pods: &Api<Pod>,
    name: &str,
    pp: &PostParams,
    body: Value,
) -> Result<Status, kube::Error> {
    pods.create_subresource::<Value, Status>("binding", name, pp, &body)
        .await
}

/// What kube-scheduler's DefaultBinder does: POST pods/{name}/binding with
/// the pod's uid; the pod then carries the node, the binding's annotations
/// and PodScheduled=True. The errors are kube's.
#[tokio::test]
async fn scheduler_binds_pods_through_the_binding_subresource() {
    let env = TestEnv::new("bind").await;
    let pods: Api<Pod> = env.api();
    let pp = PostParams::default();
    let created = pods.create(&pp, &pod("p")).await.unwrap();
    let uid = created.metadata.uid.clone().unwrap();

    // A dry run binds nothing.
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let status: Status = bind(&pods, "p", &dry, binding("p", Some(&uid), "n1"))
        .await
        .unwrap();
    assert!(status.is_success());
    assert_eq!(pods.get("p").await.unwrap().spec.unwrap().node_name, None);

    // The answer is kube's 201 Success Status.
    let answer = env
        .raw(
            "POST",
            &format!("/api/v1/namespaces/{}/pods/p/binding", env.ns),
            Some("application/json"),
            serde_json::to_vec(&binding("p", Some(&uid), "n1")).unwrap(),
        )
        .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    assert_eq!(
        answer.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    );
    let bound = pods.get("p").await.unwrap();
    assert_eq!(
        bound.spec.as_ref().unwrap().node_name.as_deref(),
        Some("n1")
    );
    assert_eq!(
        bound.metadata.annotations.as_ref().unwrap()["scheduled-by"],
        "test"
    );
    let conditions = bound.status.unwrap().conditions.unwrap();
    let scheduled = conditions
        .iter()
        .find(|c| c.type_ == "PodScheduled")
        .unwrap();
    assert_eq!(scheduled.status, "True");
    assert!(scheduled.last_transition_time.is_some());

    // Bound already: 409 on pods/binding.
    let again = bind(&pods, "p", &pp, binding("p", None, "n2")).await;
    let status = expect_api_error(
        again,
        409,
        "Conflict",
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\"",
    );
    let details = status.details.unwrap();
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("p", "pods/binding")
    );

    // A uid precondition that does not hold.
    pods.create(&pp, &pod("q")).await.unwrap();
    let stale = bind(&pods, "q", &pp, binding("q", Some("other-uid"), "n1")).await;
    let message = api_status(stale.unwrap_err()).message;
    assert!(
        message.starts_with(
            "Operation cannot be fulfilled on pods \"q\": Precondition failed: UID in precondition: other-uid, UID in object meta: "
        ),
        "{message}"
    );

    // Missing pod, name mismatch, invalid target.
    let missing = bind(&pods, "gone", &pp, binding("gone", None, "n1")).await;
    expect_api_error(missing, 404, "NotFound", "pods \"gone\" not found");
    let mismatch = bind(&pods, "q", &pp, binding("other", None, "n1")).await;
    expect_api_error(
        mismatch,
        400,
        "BadRequest",
        "name in URL does not match name in Binding object",
    );
    let no_node = bind(&pods, "q", &pp, binding("q", None, "")).await;
    // kube returns ValidatePodBinding's errors as a plain error: a 500
    // without a reason.
    expect_api_error(no_node, 500, "", "target.name: Required value");
    let wrong_kind = json!({
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "q"},
        "target": {"kind": "Pod", "name": "n1"},
    });
    let refused = bind(&pods, "q", &pp, wrong_kind).await;
    expect_api_error(
        refused,
        500,
        "",
        "target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\"",
    );
}

/// The legacy `bindings` resource binds the pod its metadata.name names;
/// the uid is wiped as for any create, so it is no precondition there.
#[tokio::test]
async fn legacy_bindings_resource_binds_by_name() {
    let env = TestEnv::new("lbind").await;
    let pods: Api<Pod> = env.api();
    pods.create(&PostParams::default(), &pod("r"))
        .await
        .unwrap();
    let path = format!("/api/v1/namespaces/{}/bindings", env.ns);
    let answer = env
        .raw(
            "POST",
            &path,
            Some("application/json"),
            serde_json::to_vec(&binding("r", Some("ignored"), "n3")).unwrap(),
        )
        .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    assert_eq!(answer.json()["status"], "Success");
    let bound = pods.get("r").await.unwrap();
    assert_eq!(bound.spec.unwrap().node_name.as_deref(), Some("n3"));

    let nameless = env
        .raw(
            "POST",
            &path,
            Some("application/json"),
            serde_json::to_vec(&binding("", None, "n3")).unwrap(),
        )
        .await;
    assert_eq!(nameless.status, 400, "{}", nameless.body);
    assert_eq!(nameless.json()["message"], "Name parameter required.");
    let other_namespace = serde_json::to_vec(&json!({
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "r", "namespace": "elsewhere"},
        "target": {"name": "n3"},
    }))
    .unwrap();
    let refused = env
        .raw("POST", &path, Some("application/json"), other_namespace)
        .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    let body: Value = refused.json();
    assert_eq!(
        body["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
}
