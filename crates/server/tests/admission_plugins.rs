//! kube's default admission plugins that act on pods, through real
//! clients: LimitRanger (defaults, limits, the `kubernetes.io/limit-ranger`
//! annotation, claims), ServiceAccount (the `default` account, the
//! projected `kube-api-access-…` token volume, image pull secrets),
//! Priority (PriorityClass resolution, one globalDefault),
//! DefaultTolerationSeconds and RuntimeClass (overhead, node selector,
//! tolerations), TaintNodesByCondition (the not-ready taint of a new Node),
//! `--disable-admission-plugins` turning them off, and what they add being
//! nobody's in managedFields.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit::{expect_api_error, skip_if_external, suffix, TestEnv, TestServer};
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod, ServiceAccount};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{Api, PostParams};
use serde_json::{json, Value};

const KUBECTL: &str = "1.33";
const TOKEN_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

fn object<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).unwrap()
}

fn pod(name: &str, spec: Value) -> Pod {
    let mut spec = spec;
    if spec.get("containers").is_none() {
        spec["containers"] = json!([{"name": "c", "image": "busybox"}]);
    }
    object(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}))
}

fn as_json(pod: &Pod) -> Value {
    serde_json::to_value(pod).unwrap()
}

/// ServiceAccount: `default` is filled in and must exist, the token volume
/// and its mounts are kube's, a named account must exist, and an account's
/// image pull secrets and automount preference are honoured.
#[tokio::test]
async fn service_account_defaults_mounts_and_refuses() {
    let env = TestEnv::new("adm-sa").await;
    let pods: Api<Pod> = env.api();
    let pp = PostParams::default();
    let created = pods
        .create(
            &pp,
            &pod(
                "web",
                json!({"initContainers": [{"name": "init", "image": "busybox"}],
                       "containers": [{"name": "c", "image": "busybox"}]}),
            ),
        )
        .await
        .unwrap();
    let body = as_json(&created);
    assert_eq!(body["spec"]["serviceAccountName"], json!("default"));
    assert_eq!(body["spec"]["serviceAccount"], json!("default"));
    let volume = &body["spec"]["volumes"][0];
    let name = volume["name"].as_str().unwrap();
    assert!(
        name.starts_with("kube-api-access-") && name.len() == 21,
        "{name}"
    );
    assert_eq!(
        volume["projected"],
        json!({"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ]})
    );
    for field in ["initContainers", "containers"] {
        assert_eq!(
            body["spec"][field][0]["volumeMounts"],
            json!([{"name": name, "readOnly": true, "mountPath": TOKEN_PATH}]),
            "{field}"
        );
    }

    expect_api_error(
        pods.create(&pp, &pod("robot", json!({"serviceAccountName": "robot"})))
            .await,
        403,
        "Forbidden",
        &format!(
            "pods \"robot\" is forbidden: error looking up service account {}/robot: serviceaccount \"robot\" not found",
            env.ns
        ),
    );

    let accounts: Api<ServiceAccount> = env.api();
    accounts
        .create(
            &pp,
            &object(json!({"metadata": {"name": "builder"},
                "imagePullSecrets": [{"name": "registry"}],
                "automountServiceAccountToken": false})),
        )
        .await
        .unwrap();
    let built = as_json(
        &pods
            .create(&pp, &pod("built", json!({"serviceAccountName": "builder"})))
            .await
            .unwrap(),
    );
    assert_eq!(
        built["spec"]["imagePullSecrets"],
        json!([{"name": "registry"}])
    );
    assert!(built["spec"].get("volumes").is_none(), "{built}");
    assert!(built["spec"]["containers"][0].get("volumeMounts").is_none());

    // kubectl sees the same pod.
    let mounts = env.kubectl_ok(
        KUBECTL,
        &[
            "get",
            "pod",
            "web",
            "-n",
            &env.ns,
            "-o",
            "jsonpath={.spec.containers[0].volumeMounts[0].mountPath}",
        ],
    );
    assert_eq!(mounts, TOKEN_PATH);
}

/// Priority: a named class resolves to its value and preemption policy, an
/// unknown one is refused, no class means priority 0; and
/// DefaultTolerationSeconds adds its two tolerations.
#[tokio::test]
async fn priority_and_default_tolerations() {
    let env = TestEnv::new("adm-prio").await;
    let classes: Api<PriorityClass> = Api::all(env.client.clone());
    let class_name = format!("high-{}", suffix());
    let pp = PostParams::default();
    classes
        .create(
            &pp,
            &object(json!({"metadata": {"name": class_name}, "value": 1000, "preemptionPolicy": "Never"})),
        )
        .await
        .unwrap();
    let pods: Api<Pod> = env.api();
    let high = as_json(
        &pods
            .create(&pp, &pod("high", json!({"priorityClassName": class_name})))
            .await
            .unwrap(),
    );
    assert_eq!(high["spec"]["priority"], json!(1000));
    assert_eq!(high["spec"]["preemptionPolicy"], json!("Never"));
    let plain = as_json(&pods.create(&pp, &pod("plain", json!({}))).await.unwrap());
    assert_eq!(plain["spec"]["priority"], json!(0));
    assert_eq!(
        plain["spec"]["preemptionPolicy"],
        json!("PreemptLowerPriority")
    );
    assert_eq!(
        plain["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ])
    );
    expect_api_error(
        pods.create(
            &pp,
            &pod("lost", json!({"priorityClassName": "no-such-class"})),
        )
        .await,
        403,
        "Forbidden",
        "pods \"lost\" is forbidden: no PriorityClass with name no-such-class was found",
    );
    expect_api_error(
        pods.create(&pp, &pod("forced", json!({"priorityClassName": class_name, "priority": 5})))
            .await,
        403,
        "Forbidden",
        "pods \"forced\" is forbidden: the integer value of priority (5) must not be provided in pod spec; \
         priority admission controller computed 1000 from the given PriorityClass name",
    );
    // A dry run is admitted the same way, and stores nothing.
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let dry_pod = as_json(
        &pods
            .create(&dry, &pod("dry", json!({"priorityClassName": class_name})))
            .await
            .unwrap(),
    );
    assert_eq!(dry_pod["spec"]["priority"], json!(1000));
    assert!(pods.get_opt("dry").await.unwrap().is_none());
    // An update that leaves the priority out keeps it (kubectl replace).
    let mut replaced = pods.get("high").await.unwrap();
    if let Some(spec) = replaced.spec.as_mut() {
        spec.priority = None;
        spec.preemption_policy = None;
    }
    let updated = as_json(&pods.replace("high", &pp, &replaced).await.unwrap());
    assert_eq!(updated["spec"]["priority"], json!(1000));
    classes
        .delete(&class_name, &Default::default())
        .await
        .unwrap();
}

/// Priority's PriorityClass rule and the globalDefault class, on a server
/// of its own (a default class changes every pod created meanwhile).
#[tokio::test]
async fn one_global_default_priority_class() {
    if skip_if_external("one_global_default_priority_class") {
        return;
    }
    let server = TestServer::start();
    let client = server.client().await;
    let classes: Api<PriorityClass> = Api::all(client.clone());
    let pp = PostParams::default();
    classes
        .create(
            &pp,
            &object(json!({"metadata": {"name": "first"}, "value": 10, "globalDefault": true})),
        )
        .await
        .unwrap();
    expect_api_error(
        classes
            .create(&pp, &object(json!({"metadata": {"name": "second"}, "value": 20, "globalDefault": true})))
            .await,
        403,
        "Forbidden",
        "priorityclasses.scheduling.k8s.io \"second\" is forbidden: PriorityClass first is already marked as default. Only one default can exist",
    );
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let created = as_json(
        &pods
            .create(&pp, &pod("defaulted", json!({})))
            .await
            .unwrap(),
    );
    assert_eq!(created["spec"]["priorityClassName"], json!("first"));
    assert_eq!(created["spec"]["priority"], json!(10));
}

/// RuntimeClass: overhead, node selector and tolerations come from the
/// class; conflicts and a missing class are refused.
#[tokio::test]
async fn runtime_class_overhead_and_scheduling() {
    let env = TestEnv::new("adm-rc").await;
    let class_name = format!("gvisor-{}", suffix());
    let classes: Api<RuntimeClass> = Api::all(env.client.clone());
    let pp = PostParams::default();
    classes
        .create(
            &pp,
            &object(json!({"metadata": {"name": class_name}, "handler": "runsc",
                "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
                "scheduling": {"nodeSelector": {"sandbox": "gvisor"},
                    "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}})),
        )
        .await
        .unwrap();
    let pods: Api<Pod> = env.api();
    let created = as_json(
        &pods
            .create(
                &pp,
                &pod(
                    "sandboxed",
                    json!({"runtimeClassName": class_name, "nodeSelector": {"zone": "a"}}),
                ),
            )
            .await
            .unwrap(),
    );
    assert_eq!(
        created["spec"]["overhead"],
        json!({"cpu": "250m", "memory": "120Mi"})
    );
    assert_eq!(
        created["spec"]["nodeSelector"],
        json!({"sandbox": "gvisor", "zone": "a"})
    );
    let tolerations = created["spec"]["tolerations"].as_array().unwrap();
    assert!(tolerations
        .contains(&json!({"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"})));
    expect_api_error(
        pods.create(&pp, &pod("conflict", json!({"runtimeClassName": class_name, "nodeSelector": {"sandbox": "kata"}})))
            .await,
        403,
        "Forbidden",
        "pods \"conflict\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = kata",
    );
    expect_api_error(
        pods.create(
            &pp,
            &pod("missing", json!({"runtimeClassName": "no-such-runtime"})),
        )
        .await,
        403,
        "Forbidden",
        "pods \"missing\" is forbidden: pod rejected: RuntimeClass \"no-such-runtime\" not found",
    );
    expect_api_error(
        pods.create(&pp, &pod("own-overhead", json!({"overhead": {"cpu": "1"}})))
            .await,
        403,
        "Forbidden",
        "pods \"own-overhead\" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
    );
    classes
        .delete(&class_name, &Default::default())
        .await
        .unwrap();
}

const LIMIT_RANGE: &str = "apiVersion: v1
kind: LimitRange
metadata:
  name: limits
spec:
  limits:
  - type: Container
    max: {cpu: \"1\"}
    default: {cpu: 500m, memory: 128Mi}
    defaultRequest: {cpu: 100m, memory: 64Mi}
  - type: PersistentVolumeClaim
    max: {storage: 10Gi}
";

/// LimitRanger through kubectl: defaults and their annotation, kube's
/// refusal of a container over the maximum, and a claim over the maximum.
#[tokio::test]
async fn limit_ranger_defaults_and_refuses() {
    let env = TestEnv::new("adm-lr").await;
    let (status, _, err) = env.kubectl_stdin(
        KUBECTL,
        &["apply", "-n", &env.ns, "-f", "-"],
        Some(LIMIT_RANGE),
    );
    assert!(status.success(), "{err}");
    let small = "apiVersion: v1
kind: Pod
metadata:
  name: small
spec:
  containers:
  - name: app
    image: nginx
    resources:
      limits: {memory: 256Mi}
";
    let (status, _, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-n", &env.ns, "-f", "-"], Some(small));
    assert!(status.success(), "{err}");
    let pods: Api<Pod> = env.api();
    let created = as_json(&pods.get("small").await.unwrap());
    assert_eq!(
        created["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}})
    );
    assert_eq!(
        created["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        json!("LimitRanger plugin set: cpu request for container app; cpu limit for container app")
    );
    let big = small
        .replace("name: small", "name: big")
        .replace("limits: {memory: 256Mi}", "limits: {cpu: \"2\"}");
    let (status, _, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-n", &env.ns, "-f", "-"], Some(&big));
    assert!(!status.success());
    assert_eq!(
        err.trim(),
        "Error from server (Forbidden): error when creating \"STDIN\": pods \"big\" is forbidden: maximum cpu usage per Container is 1, but limit is 2"
    );
    let claims: Api<PersistentVolumeClaim> = env.api();
    expect_api_error(
        claims
            .create(
                &PostParams::default(),
                &object(json!({"metadata": {"name": "huge"}, "spec": {"accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "20Gi"}}}})),
            )
            .await,
        403,
        "Forbidden",
        "persistentvolumeclaims \"huge\" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi",
    );
}

/// `--disable-admission-plugins` turns each off: no account looked up or
/// mounted, no priority, no tolerations.
#[tokio::test]
async fn disabled_plugins_leave_pods_alone() {
    if skip_if_external("disabled_plugins_leave_pods_alone") {
        return;
    }
    let server = TestServer::start_with(&[
        "--disable-admission-plugins=ServiceAccount,Priority,DefaultTolerationSeconds",
    ]);
    let pods: Api<Pod> = Api::namespaced(server.client().await, "default");
    let created = as_json(
        &pods
            .create(
                &PostParams::default(),
                &pod("bare", json!({"serviceAccountName": "nobody"})),
            )
            .await
            .unwrap(),
    );
    let spec = &created["spec"];
    assert_eq!(spec["serviceAccountName"], json!("nobody"));
    for absent in ["volumes", "priority", "preemptionPolicy", "tolerations"] {
        assert!(spec.get(absent).is_none(), "{absent} in {spec}");
    }
}

/// `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds` set DefaultTolerationSeconds'
/// seconds.
#[tokio::test]
async fn toleration_seconds_come_from_the_flags() {
    if skip_if_external("toleration_seconds_come_from_the_flags") {
        return;
    }
    let server = TestServer::start_with(&[
        "--default-not-ready-toleration-seconds=30",
        "--default-unreachable-toleration-seconds=60",
    ]);
    let pods: Api<Pod> = Api::namespaced(server.client().await, "default");
    let created = as_json(
        &pods
            .create(&PostParams::default(), &pod("flagged", json!({})))
            .await
            .unwrap(),
    );
    assert_eq!(
        created["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
        ])
    );
}

/// TaintNodesByCondition: a Node created with kubectl 1.33 carries
/// `node.kubernetes.io/not-ready:NoSchedule` after its own taints, once;
/// an update does not add it back; with the plugin disabled a Node is
/// stored as sent.
#[tokio::test]
async fn new_nodes_are_tainted_not_ready() {
    let env = TestEnv::new("adm-node").await;
    let name = format!("node-{}", suffix());
    let manifest = format!(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\nspec:\n  taints:\n  - key: dedicated\n    value: gpu\n    effect: NoSchedule\n"
    );
    let (status, stdout, stderr) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-"], Some(&manifest));
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), format!("node/{name} created"));
    let taints = env.kubectl_ok(
        KUBECTL,
        &[
            "get",
            "node",
            &name,
            "-o",
            "jsonpath={range .spec.taints[*]}{.key}={.value}:{.effect} {end}",
        ],
    );
    assert_eq!(
        taints.trim(),
        "dedicated=gpu:NoSchedule node.kubernetes.io/not-ready=:NoSchedule"
    );
    // Only on create: removing it sticks.
    let nodes: Api<Node> = Api::all(env.client.clone());
    let patched = nodes
        .patch(
            &name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"taints": null}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.spec.unwrap().taints, None);
    nodes.delete(&name, &Default::default()).await.unwrap();

    if skip_if_external("new_nodes_are_tainted_not_ready (disabled)") {
        return;
    }
    let server = TestServer::start_with(&["--disable-admission-plugins=TaintNodesByCondition"]);
    let nodes: Api<Node> = Api::all(server.client().await);
    let created = nodes
        .create(
            &PostParams::default(),
            &object(json!({"metadata": {"name": "bare"}})),
        )
        .await
        .unwrap();
    assert_eq!(created.spec.and_then(|spec| spec.taints), None);
}

/// The default-on plugins that kube 1.34 builds but whose feature gate is
/// off by default do nothing in a default server, here as there:
/// PodTopologyLabels (`PodTopologyLabelsAdmission`, alpha) copies no
/// `topology.k8s.io/*` label of the node onto a bound or created pod;
/// ClusterTrustBundleAttest (`ClusterTrustBundle`, beta, off) and
/// MutatingAdmissionPolicy (beta, off) have no API served to act on.
#[tokio::test]
async fn feature_gated_plugins_are_inert_as_in_a_default_kube() {
    let env = TestEnv::new("adm-gated").await;
    let node = format!("zoned-{}", suffix());
    let nodes: Api<Node> = Api::all(env.client.clone());
    nodes
        .create(
            &PostParams::default(),
            &object(json!({"metadata": {"name": node, "labels": {
                "topology.k8s.io/zone": "z1", "topology.k8s.io/region": "r1"}}})),
        )
        .await
        .unwrap();
    let pods: Api<Pod> = env.api();
    pods.create(&PostParams::default(), &pod("bound", json!({})))
        .await
        .unwrap();
    let binding = env
        .raw(
            "POST",
            &format!("/api/v1/namespaces/{}/pods/bound/binding", env.ns),
            Some("application/json"),
            serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": "bound"},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}))
            .unwrap(),
        )
        .await;
    assert_eq!(binding.status, 201, "{}", binding.body);
    let placed = pods
        .create(
            &PostParams::default(),
            &pod("placed", json!({"nodeName": node})),
        )
        .await
        .unwrap();
    for pod in [pods.get("bound").await.unwrap(), placed] {
        let labels = pod.metadata.labels.unwrap_or_default();
        assert!(
            labels
                .keys()
                .all(|key| !key.starts_with("topology.k8s.io/")),
            "{labels:?}"
        );
    }
    for path in [
        "/apis/certificates.k8s.io/v1beta1/clustertrustbundles",
        "/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies",
    ] {
        let answer = env.raw("GET", path, None, Vec::new()).await;
        assert_eq!(answer.status, 404, "{path}: {}", answer.body);
    }
    nodes.delete(&node, &Default::default()).await.unwrap();
}

/// kube records a create's managedFields before mutating admission, so what
/// the plugins add (the service account and its token volume, priority,
/// default tolerations) is nobody's: a `kubectl run` pod's entry is the one
/// real clusters show, and another manager may apply the tolerations
/// without a conflict.
#[tokio::test]
async fn what_the_plugins_add_to_a_pod_is_nobodys() {
    let env = TestEnv::new("adm-owner").await;
    let (status, stdout, stderr) = env.kubectl(
        KUBECTL,
        &["run", "web", "-n", &env.ns, "--image=nginx:1.27"],
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "pod/web created");
    let (status, stdout, stderr) = env.kubectl(
        KUBECTL,
        &[
            "get",
            "pod",
            "web",
            "-n",
            &env.ns,
            "-o",
            "json",
            "--show-managed-fields",
        ],
    );
    assert!(status.success(), "{stderr}");
    let created: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(created["spec"]["serviceAccountName"], "default");
    assert_eq!(created["spec"]["tolerations"].as_array().unwrap().len(), 2);
    let entries = created["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["manager"], "kubectl-run");
    assert_eq!(
        entries[0]["fieldsV1"],
        json!({
            "f:metadata": {"f:labels": {".": {}, "f:run": {}}},
            "f:spec": {
                "f:containers": {"k:{\"name\":\"web\"}": {
                    ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                    "f:resources": {}, "f:terminationMessagePath": {},
                    "f:terminationMessagePolicy": {},
                }},
                "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {},
                "f:schedulerName": {}, "f:securityContext": {},
                "f:terminationGracePeriodSeconds": {},
            },
        })
    );

    // Tolerations are an atomic list nobody owns: applied by another
    // manager without --force-conflicts.
    let mut tolerations = created["spec"]["tolerations"].as_array().unwrap().clone();
    tolerations.push(json!({"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}));
    let config = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": env.ns},
        "spec": {"tolerations": tolerations}});
    let (status, stdout, stderr) = env.kubectl_stdin(
        KUBECTL,
        &["apply", "--server-side", "--field-manager=ops", "-f", "-"],
        Some(&config.to_string()),
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "pod/web serverside-applied");
    let (status, stdout, stderr) = env.kubectl(
        KUBECTL,
        &[
            "get",
            "pod",
            "web",
            "-n",
            &env.ns,
            "-o",
            "jsonpath={.spec.tolerations[2].key}",
        ],
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout, "dedicated");
}
