//! The pod subresources controllers and kubectl call: `binding` (what the
//! scheduler does) and the legacy `bindings` resource, `eviction` (what
//! `kubectl drain` does) against PodDisruptionBudgets kept by the
//! `disruption` controller, and the kubelet-facing subresources answered as
//! kube-apiserver answers them when no kubelet can be reached.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use std::time::Duration;

use common::{api_status, expect_api_error, TestEnv};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use kube::api::{Api, EvictParams, Patch, PatchParams, PostParams};
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

/// Marks a pod Running and Ready through its status, as a kubelet would.
async fn make_ready(pods: &Api<Pod>, name: &str, ready: bool) {
    let status = json!({"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": if ready { "True" } else { "False" }},
    ]}});
    pods.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

/// Waits (up to 10 s) until the budget's status satisfies `wanted`.
async fn budget_until(
    budgets: &Api<PodDisruptionBudget>,
    name: &str,
    what: &str,
    wanted: impl Fn(&PodDisruptionBudgetStatus) -> bool,
) -> PodDisruptionBudgetStatus {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let status = budgets.get(name).await.unwrap().status.unwrap_or_default();
        if wanted(&status) {
            return status;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "budget {name} never reached {what}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What `kubectl drain` does, through kube-rs `Api::<Pod>::evict`: refused
/// (429 with kube's DisruptionBudget cause) while the budget the
/// `disruption` controller keeps allows no disruption, allowed once enough
/// pods are healthy; the evicted pod gets DisruptionTarget and is deleted.
#[tokio::test]
async fn evictions_respect_disruption_budgets_kept_by_the_disruption_controller() {
    let env = TestEnv::new("evict").await;
    // kube-rs retries 429s by default (15 times, backing off): a client
    // without retries sees the refusal as kubectl drain does.
    let mut config = common::config_from(&env.kubeconfig).await;
    config.default_retry = false;
    let client = kube::Client::try_from(config).unwrap();
    let pods: Api<Pod> = Api::namespaced(client, &env.ns);
    let budgets: Api<PodDisruptionBudget> = env.api();
    let pp = PostParams::default();
    for name in ["a", "b"] {
        pods.create(&pp, &pod(name)).await.unwrap();
        make_ready(&pods, name, true).await;
    }
    let budget: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
    }))
    .unwrap();
    budgets.create(&pp, &budget).await.unwrap();
    let status = budget_until(&budgets, "web", "observed", |s| {
        s.observed_generation == Some(1) && s.expected_pods == 2 && s.current_healthy == 2
    })
    .await;
    assert_eq!((status.desired_healthy, status.disruptions_allowed), (2, 0));
    let condition = &status.conditions.as_ref().unwrap()[0];
    assert_eq!(
        (
            condition.type_.as_str(),
            condition.status.as_str(),
            condition.reason.as_str()
        ),
        ("DisruptionAllowed", "False", "InsufficientPods")
    );

    // Refused while the budget allows nothing.
    let refused = pods.evict("a", &EvictParams::default()).await;
    let status = expect_api_error(
        refused,
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
    );
    let cause = &status.details.unwrap().causes[0];
    assert_eq!(cause.reason, "DisruptionBudget");
    assert_eq!(
        cause.message,
        "The disruption budget web needs 2 healthy pods and has 2 currently"
    );

    // A third healthy pod allows one disruption.
    pods.create(&pp, &pod("c")).await.unwrap();
    make_ready(&pods, "c", true).await;
    budget_until(&budgets, "web", "one disruption allowed", |s| {
        s.disruptions_allowed == 1
    })
    .await;
    // A dry run changes nothing.
    let dry = EvictParams {
        post_options: PostParams {
            dry_run: true,
            ..PostParams::default()
        },
        ..EvictParams::default()
    };
    assert!(pods.evict("a", &dry).await.unwrap().is_success());
    assert!(pods
        .get("a")
        .await
        .unwrap()
        .metadata
        .deletion_timestamp
        .is_none());
    let evicted = pods.evict("a", &EvictParams::default()).await.unwrap();
    assert!(evicted.is_success());
    // The pod is gone (unscheduled pods are deleted at once) or going,
    // marked as disrupted by the eviction.
    if let Some(pod) = pods.get_opt("a").await.unwrap() {
        assert!(pod.metadata.deletion_timestamp.is_some());
        let conditions = pod.status.unwrap().conditions.unwrap();
        assert!(conditions.iter().any(|c| c.type_ == "DisruptionTarget"
            && c.reason.as_deref() == Some("EvictionByEvictionAPI")));
    }
    // The budget is spent again: the next eviction is refused.
    budget_until(&budgets, "web", "no disruption allowed", |s| {
        s.disruptions_allowed == 0 && s.expected_pods == 2
    })
    .await;
    let refused = pods.evict("b", &EvictParams::default()).await;
    assert_eq!(api_status(refused.unwrap_err()).code, 429);

    // A terminal pod is evicted without asking its budget.
    make_ready(&pods, "b", false).await;
    let finished = json!({"status": {"phase": "Succeeded"}});
    pods.patch_status("b", &PatchParams::default(), &Patch::Merge(&finished))
        .await
        .unwrap();
    assert!(pods
        .evict("b", &EvictParams::default())
        .await
        .unwrap()
        .is_success());

    // Two budgets for one pod: kube's 500 Failure.
    let second: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": {"name": "web2"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }))
    .unwrap();
    budgets.create(&pp, &second).await.unwrap();
    let answer = env
        .raw(
            "POST",
            &format!("/api/v1/namespaces/{}/pods/c/eviction", env.ns),
            Some("application/json"),
            serde_json::to_vec(&json!({
                "apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "c"},
            }))
            .unwrap(),
        )
        .await;
    assert_eq!(answer.status, 500, "{}", answer.body);
    assert_eq!(
        answer.json()["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
    let missing = pods.evict("gone", &EvictParams::default()).await;
    expect_api_error(missing, 404, "NotFound", "pods \"gone\" not found");
}

/// `kubectl logs` and `kubectl exec` on a pod no kubelet runs, answered as
/// kube-apiserver answers before it would dial one.
#[tokio::test]
async fn kubelet_subresources_answer_as_kube_without_a_kubelet() {
    let env = TestEnv::new("kubelet").await;
    let pods: Api<Pod> = env.api();
    pods.create(&PostParams::default(), &pod("p"))
        .await
        .unwrap();
    // Unscheduled: logs are empty (kube's 204), exec is a 400.
    let out = env.kubectl_ok("1.33", &["logs", "-n", &env.ns, "p"]);
    assert_eq!(out, "");
    let (status, _, err) = env.kubectl("1.33", &["exec", "-n", &env.ns, "p", "--", "ls"]);
    assert!(!status.success());
    assert!(err.contains("pod p does not have a host assigned"), "{err}");
    let base = format!("/api/v1/namespaces/{}/pods", env.ns);
    let unknown = env
        .raw(
            "GET",
            &format!("{base}/p/log?container=x"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    assert_eq!(
        unknown.json()["message"],
        "container x is not valid for pod p"
    );
    let missing = env
        .raw("GET", &format!("{base}/gone/log"), None, Vec::new())
        .await;
    assert_eq!(missing.status, 404, "{}", missing.body);
    let portforward = env
        .raw("POST", &format!("{base}/p/portforward"), None, Vec::new())
        .await;
    assert_eq!(portforward.status, 400, "{}", portforward.body);
    // Bound to a node that does not exist: the node lookup's 404.
    bind(&pods, "p", &PostParams::default(), binding("p", None, "n9"))
        .await
        .unwrap();
    let no_node = env
        .raw("GET", &format!("{base}/p/log"), None, Vec::new())
        .await;
    assert_eq!(no_node.status, 404, "{}", no_node.body);
    assert_eq!(no_node.json()["message"], "nodes \"n9\" not found");
}

/// `pods/proxy`, `nodes/proxy` and `services/proxy`, every method, with and
/// without a trailing path and in the `name:port` forms: answered as
/// kube-apiserver answers before it dials (no cluster network is reached
/// from here), through `kubectl get --raw` and raw requests.
#[tokio::test]
async fn proxy_subresources_answer_as_kube_without_a_network() {
    let env = TestEnv::new("proxy").await;
    // kube-rs retries 503s by default (15 times, backing off to minutes):
    // the raw requests go through a client without retries, so each 503 is
    // seen once, as kubectl sees it.
    let mut config = common::config_from(&env.kubeconfig).await;
    config.default_retry = false;
    let client = kube::Client::try_from(config).unwrap();
    let raw =
        |method: &'static str, path: String, content_type: Option<&'static str>, body: Vec<u8>| {
            let client = client.clone();
            async move { common::raw_request(&client, method, &path, content_type, body).await }
        };
    let pods: Api<Pod> = env.api();
    pods.create(&PostParams::default(), &pod("p"))
        .await
        .unwrap();
    let base = format!("/api/v1/namespaces/{}/pods", env.ns);
    // A pod without an IP: kube's "address not allowed", for every method.
    for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
        for path in ["p/proxy", "p/proxy/", "p:8080/proxy/healthz/x"] {
            let answer = raw(method, format!("{base}/{path}"), None, Vec::new()).await;
            assert_eq!(answer.status, 400, "{method} {path}: {}", answer.body);
            assert_eq!(answer.json()["message"], "address not allowed");
        }
    }
    let (status, _, err) = env.kubectl("1.33", &["get", "--raw", &format!("{base}/p/proxy/")]);
    assert!(!status.success());
    assert!(err.contains("address not allowed"), "{err}");
    let invalid = raw("GET", format!("{base}/ftp:p:21/proxy"), None, Vec::new()).await;
    assert_eq!(invalid.status, 400, "{}", invalid.body);
    assert_eq!(
        invalid.json()["message"],
        "invalid pod request \"ftp:p:21\""
    );
    let missing = raw("GET", format!("{base}/gone:80/proxy/x"), None, Vec::new()).await;
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert_eq!(missing.json()["message"], "pods \"gone\" not found");
    // With an IP, kube would dial it: the proxy's 503.
    let ip = json!({"status": {"podIP": "10.4.0.7", "podIPs": [{"ip": "10.4.0.7"}]}});
    pods.patch_status("p", &PatchParams::default(), &Patch::Merge(&ip))
        .await
        .unwrap();
    let reach = raw(
        "GET",
        format!("{base}/p:8080/proxy/healthz"),
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(reach.status, 503, "{}", reach.body);
    assert_eq!(reach.json()["reason"], "ServiceUnavailable");
    assert!(reach.json()["message"]
        .as_str()
        .unwrap()
        .contains("10.4.0.7:8080"));

    // Nodes: missing, without addresses (kube's plain 500), with one (503).
    let node = format!("{}-n", env.ns);
    let missing = raw(
        "GET",
        format!("/api/v1/nodes/{node}/proxy/metrics"),
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert_eq!(
        missing.json()["message"],
        format!("nodes \"{node}\" not found")
    );
    let body = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}});
    let created = raw(
        "POST",
        "/api/v1/nodes".to_string(),
        Some("application/json"),
        body.to_string().into_bytes(),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let bare = raw(
        "GET",
        format!("/api/v1/nodes/{node}/proxy/"),
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(bare.status, 500, "{}", bare.body);
    assert_eq!(
        bare.json()["message"],
        "no preferred addresses found; known addresses: []"
    );
    let addresses =
        json!({"status": {"addresses": [{"type": "InternalIP", "address": "10.9.0.2"}]}});
    let patched = raw(
        "PATCH",
        format!("/api/v1/nodes/{node}/status"),
        Some("application/merge-patch+json"),
        addresses.to_string().into_bytes(),
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    let (status, _, err) = env.kubectl(
        "1.33",
        &[
            "get",
            "--raw",
            &format!("/api/v1/nodes/{node}/proxy/metrics"),
        ],
    );
    assert!(!status.success());
    assert!(err.contains("10.9.0.2:10250"), "{err}");
    raw("DELETE", format!("/api/v1/nodes/{node}"), None, Vec::new()).await;

    // Services: a port number must be declared; endpoints must exist and
    // have subsets.
    let services = format!("/api/v1/namespaces/{}/services", env.ns);
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"ports": [{"name": "http", "port": 80}]}});
    let created = raw(
        "POST",
        services.clone(),
        Some("application/json"),
        service.to_string().into_bytes(),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let no_port = raw("GET", format!("{services}/s:81/proxy/"), None, Vec::new()).await;
    assert_eq!(no_port.status, 503, "{}", no_port.body);
    assert_eq!(
        no_port.json()["message"],
        "no service port 81 found for service \"s\""
    );
    let endpoints = format!("/api/v1/namespaces/{}/endpoints", env.ns);
    let empty = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "s"}});
    let created = raw(
        "POST",
        endpoints.clone(),
        Some("application/json"),
        empty.to_string().into_bytes(),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let (status, _, err) = env.kubectl(
        "1.33",
        &["get", "--raw", &format!("{services}/s:80/proxy/")],
    );
    assert!(!status.success());
    assert!(err.contains("no endpoints available for service"), "{err}");
    let none = raw(
        "POST",
        format!("{services}/http:s:80/proxy/x"),
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(none.status, 503, "{}", none.body);
    assert_eq!(
        none.json()["message"],
        "no endpoints available for service \"s\""
    );
}

/// `kubectl debug --attach=false` adds an ephemeral container through
/// `pods/ephemeralcontainers`; only ephemeral containers change there, and
/// kube's rules refuse removing one or setting what it may not set.
#[tokio::test]
async fn kubectl_debug_adds_an_ephemeral_container() {
    let env = TestEnv::new("debug").await;
    let pods: Api<Pod> = env.api();
    pods.create(&PostParams::default(), &pod("p"))
        .await
        .unwrap();
    env.kubectl_ok(
        "1.33",
        &[
            "debug",
            "-n",
            &env.ns,
            "pod/p",
            "--image=busybox",
            "-c",
            "debugger",
            "--attach=false",
        ],
    );
    let debugged = pods.get("p").await.unwrap();
    let spec = debugged.spec.unwrap();
    let ephemeral = spec.ephemeral_containers.unwrap_or_default();
    assert_eq!(ephemeral.len(), 1);
    assert_eq!(ephemeral[0].name, "debugger");
    assert_eq!(ephemeral[0].image.as_deref(), Some("busybox"));
    assert_eq!(spec.containers[0].image.as_deref(), Some("busybox"));

    let base = format!("/api/v1/namespaces/{}/pods/p/ephemeralcontainers", env.ns);
    let read = env.raw("GET", &base, None, Vec::new()).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.json()["kind"], "Pod");
    // Other fields sent through the subresource are dropped.
    let patch = json!({"metadata": {"labels": {"x": "y"}},
        "spec": {"activeDeadlineSeconds": 5}});
    let patched = env
        .raw(
            "PATCH",
            &base,
            Some("application/strategic-merge-patch+json"),
            patch.to_string().into_bytes(),
        )
        .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(patched.json()["spec"].get("activeDeadlineSeconds"), None);
    // Removing one is forbidden; ports may not be set.
    let removed = env
        .raw(
            "PATCH",
            &base,
            Some("application/merge-patch+json"),
            json!({"spec": {"ephemeralContainers": []}})
                .to_string()
                .into_bytes(),
        )
        .await;
    assert_eq!(removed.status, 422, "{}", removed.body);
    assert!(
        removed
            .body
            .contains("existing ephemeral containers \\\"debugger\\\" may not be removed"),
        "{}",
        removed.body
    );
    let mut with_ports = serde_json::to_value(&ephemeral).unwrap();
    with_ports
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "e2", "image": "busybox", "ports": [{"containerPort": 80}]}));
    let refused = env
        .raw(
            "PATCH",
            &base,
            Some("application/merge-patch+json"),
            json!({"spec": {"ephemeralContainers": with_ports}})
                .to_string()
                .into_bytes(),
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused.body.contains("spec.ephemeralContainers[1].ports"),
        "{}",
        refused.body
    );
}
