//! ResourceQuota admission and the resourcequota controller through real
//! clients: kubectl 1.33 creates quotas, reads the usage the controller and
//! admission keep (`get -o yaml`, `describe quota`), and gets kube's 403
//! for a pod past `pods=2`, a ConfigMap past `count/configmaps`, a pod
//! without the cpu requests a quota constrains; deleting a pod gives its
//! usage back; dry-run charges nothing. kube-rs sees `status unknown for
//! quota` on a server whose controller is switched off
//! (`--controllers=*,-resourcequota`), and concurrent creates never get
//! past the limit. A `pods/resize` update is charged the difference.
//! Needs `kubectl.1.33`.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use std::future::Future;
use std::time::{Duration, Instant};

use common::{create_namespace, expect_api_error, skip_if_external, suffix, TestEnv, TestServer};
use k8s_openapi::api::core::v1::{Pod, ResourceQuota};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

const KUBECTL: &str = "1.33";
const WAIT: Duration = Duration::from_secs(60);

/// Polls `check` until it returns Some, or panics after a minute naming `what`.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `status.used[resource]` of quota `name` as kubectl prints it.
fn used(env: &TestEnv, name: &str, resource: &str) -> String {
    let escaped = resource.replace('.', "\\.");
    env.kubectl_ok(
        KUBECTL,
        &[
            "get",
            "quota",
            name,
            "-n",
            &env.ns,
            "-o",
            &format!("jsonpath={{.status.used.{escaped}}}"),
        ],
    )
}

/// Waits until the quota's `status.used[resource]` is `value`.
async fn used_becomes(env: &TestEnv, name: &str, resource: &str, value: &str) {
    eventually(&format!("{name} to use {resource}={value}"), || async {
        (used(env, name, resource) == value).then_some(())
    })
    .await
}

fn pod_manifest(name: &str, resources: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n  - name: c\n    image: busybox\n{resources}"
    )
}

fn create(env: &TestEnv, manifest: &str, extra: &[&str]) -> (bool, String) {
    let mut args = vec!["create", "-f", "-", "-n", &env.ns];
    args.extend_from_slice(extra);
    let (status, out, err) = env.kubectl_stdin(KUBECTL, &args, Some(manifest));
    (status.success(), format!("{out}{err}"))
}

#[tokio::test]
async fn kubectl_sees_pods_counted_refused_and_given_back() {
    let env = TestEnv::new("quota-pods").await;
    env.kubectl_ok(
        KUBECTL,
        &["create", "quota", "q", "--hard=pods=2", "-n", &env.ns],
    );
    used_becomes(&env, "q", "pods", "0").await;
    for name in ["p1", "p2"] {
        let (created, output) = create(&env, &pod_manifest(name, ""), &[]);
        assert!(created, "{output}");
    }
    // Admission charged both pods in the quota's status.
    let yaml = env.kubectl_ok(KUBECTL, &["get", "quota", "q", "-n", &env.ns, "-o", "yaml"]);
    assert!(
        yaml.ends_with("status:\n  hard:\n    pods: \"2\"\n  used:\n    pods: \"2\"\n"),
        "{yaml}"
    );
    let described = env.kubectl_ok(KUBECTL, &["describe", "quota", "q", "-n", &env.ns]);
    assert!(
        described
            .lines()
            .any(|line| line.split_whitespace().collect::<Vec<_>>() == ["pods", "2", "2"]),
        "{described}"
    );
    // The third is refused with kube's message, dry-run or not.
    let refusal = "Error from server (Forbidden): error when creating \"STDIN\": pods \"p3\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2\n";
    assert_eq!(
        create(&env, &pod_manifest("p3", ""), &[]),
        (false, refusal.to_string())
    );
    assert_eq!(
        create(&env, &pod_manifest("p3", ""), &["--dry-run=server"]),
        (false, refusal.to_string())
    );
    // Deleting a pod gives its usage back (the controller's replenishment).
    env.kubectl_ok(
        KUBECTL,
        &["delete", "pod", "p1", "-n", &env.ns, "--wait=false"],
    );
    used_becomes(&env, "q", "pods", "1").await;
    // A dry-run create fits and charges nothing.
    let (created, output) = create(&env, &pod_manifest("p3", ""), &["--dry-run=server"]);
    assert!(created, "{output}");
    assert_eq!(used(&env, "q", "pods"), "1");
    let (created, output) = create(&env, &pod_manifest("p3", ""), &[]);
    assert!(created, "{output}");
    assert_eq!(used(&env, "q", "pods"), "2");
}

#[tokio::test]
async fn kubectl_counts_config_maps() {
    let env = TestEnv::new("quota-count").await;
    // The root CA publisher's ConfigMap is there first and counts.
    eventually("kube-root-ca.crt", || async {
        let (status, _, _) = env.kubectl(
            KUBECTL,
            &["get", "configmap", "kube-root-ca.crt", "-n", &env.ns],
        );
        status.success().then_some(())
    })
    .await;
    env.kubectl_ok(
        KUBECTL,
        &[
            "create",
            "quota",
            "cm",
            "--hard=count/configmaps=2",
            "-n",
            &env.ns,
        ],
    );
    used_becomes(&env, "cm", "count/configmaps", "1").await;
    env.kubectl_ok(KUBECTL, &["create", "configmap", "c1", "-n", &env.ns]);
    assert_eq!(used(&env, "cm", "count/configmaps"), "2");
    let (status, _, err) = env.kubectl(KUBECTL, &["create", "configmap", "c2", "-n", &env.ns]);
    assert!(!status.success());
    assert_eq!(
        err,
        "error: failed to create configmap: configmaps \"c2\" is forbidden: exceeded quota: cm, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2\n"
    );
    // Secrets are not limited by it.
    env.kubectl_ok(
        KUBECTL,
        &["create", "secret", "generic", "s", "-n", &env.ns],
    );
    env.kubectl_ok(KUBECTL, &["delete", "configmap", "c1", "-n", &env.ns]);
    used_becomes(&env, "cm", "count/configmaps", "1").await;
}

#[tokio::test]
async fn kubectl_is_told_to_specify_constrained_cpu() {
    let env = TestEnv::new("quota-cpu").await;
    env.kubectl_ok(
        KUBECTL,
        &[
            "create",
            "quota",
            "cpu",
            "--hard=requests.cpu=1,limits.cpu=2",
            "-n",
            &env.ns,
        ],
    );
    used_becomes(&env, "cpu", "requests.cpu", "0").await;
    let (created, output) = create(&env, &pod_manifest("bare", ""), &[]);
    assert!(!created);
    assert_eq!(
        output,
        "Error from server (Forbidden): error when creating \"STDIN\": pods \"bare\" is forbidden: failed quota: cpu: must specify limits.cpu for: c; requests.cpu for: c\n"
    );
    let sized = "    resources:\n      requests: {cpu: 600m}\n      limits: {cpu: \"1\"}\n";
    let (created, output) = create(&env, &pod_manifest("sized", sized), &[]);
    assert!(created, "{output}");
    assert_eq!(used(&env, "cpu", "requests.cpu"), "600m");
    assert_eq!(used(&env, "cpu", "limits.cpu"), "1");
    let (created, output) = create(&env, &pod_manifest("more", sized), &[]);
    assert!(!created);
    assert_eq!(
        output,
        "Error from server (Forbidden): error when creating \"STDIN\": pods \"more\" is forbidden: exceeded quota: cpu, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1\n"
    );
}

/// `kubectl patch --subresource resize` (in-place vertical scaling) is
/// charged to the quota as kube's pod evaluator handles `pods/resize`
/// updates: a resize within the quota raises `status.used` by the
/// difference, one past it is refused with kube's 403, a dry-run one is
/// checked and charges nothing, and a smaller one charges nothing.
#[tokio::test]
async fn kubectl_resizes_are_charged_to_the_quota() {
    let env = TestEnv::new("quota-resize").await;
    env.kubectl_ok(
        KUBECTL,
        &[
            "create",
            "quota",
            "cpu",
            "--hard=requests.cpu=1,limits.cpu=2",
            "-n",
            &env.ns,
        ],
    );
    used_becomes(&env, "cpu", "requests.cpu", "0").await;
    let sized = "    resources:\n      requests: {cpu: 400m}\n      limits: {cpu: 800m}\n";
    let (created, output) = create(&env, &pod_manifest("r", sized), &[]);
    assert!(created, "{output}");
    assert_eq!(used(&env, "cpu", "requests.cpu"), "400m");
    let resize = |cpu_request: &str, cpu_limit: &str, extra: &[&str]| {
        let patch = format!(
            r#"{{"spec":{{"containers":[{{"name":"c","resources":{{"requests":{{"cpu":"{cpu_request}"}},"limits":{{"cpu":"{cpu_limit}"}}}}}}]}}}}"#
        );
        let mut args = vec![
            "patch",
            "pod",
            "r",
            "-n",
            &env.ns,
            "--subresource",
            "resize",
            "--patch",
            &patch,
        ];
        args.extend_from_slice(extra);
        let (status, out, err) = env.kubectl(KUBECTL, &args);
        (status.success(), format!("{out}{err}"))
    };
    let (resized, output) = resize("700m", "1500m", &[]);
    assert!(resized, "{output}");
    assert_eq!(used(&env, "cpu", "requests.cpu"), "700m");
    assert_eq!(used(&env, "cpu", "limits.cpu"), "1500m");
    let refusal = "Error from server (Forbidden): pods \"r\" is forbidden: exceeded quota: cpu, requested: requests.cpu=500m, used: requests.cpu=700m, limited: requests.cpu=1\n";
    assert_eq!(resize("1200m", "1500m", &[]), (false, refusal.to_string()));
    assert_eq!(
        resize("1200m", "1500m", &["--dry-run=server"]),
        (false, refusal.to_string())
    );
    let (resized, output) = resize("900m", "1500m", &["--dry-run=server"]);
    assert!(resized, "{output}");
    assert_eq!(used(&env, "cpu", "requests.cpu"), "700m");
    // A smaller resize charges nothing (kube subtracts with a non-negative
    // result); as in kube, the usage it frees is given back by the
    // controller's next full resync or when the kubelet reports new
    // allocated resources, not by the spec change.
    let (resized, output) = resize("300m", "1500m", &[]);
    assert!(resized, "{output}");
    assert_eq!(used(&env, "cpu", "requests.cpu"), "700m");
}

#[tokio::test]
async fn without_the_controller_a_quota_without_usage_blocks() {
    if skip_if_external("without_the_controller_a_quota_without_usage_blocks") {
        return;
    }
    let server = TestServer::start_with(&["--controllers=*,-resourcequota"]);
    let client = server.client().await;
    let ns = format!("quota-off-{}", suffix());
    create_namespace(&client, &ns).await;
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), &ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let quota: ResourceQuota = serde_json::from_value(json!({
        "metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}
    }))
    .unwrap();
    quotas.create(&PostParams::default(), &quota).await.unwrap();
    let pod = |name: &str| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}
        }))
        .unwrap()
    };
    // Never calculated: status.hard is empty, so the quota matches nothing
    // (kube's Matches reads status.hard), and the controller is off.
    pods.create(&PostParams::default(), &pod("first"))
        .await
        .unwrap();
    let status = quotas.get_status("q").await.unwrap().status;
    assert!(
        status.as_ref().is_none_or(|status| status.used.is_none()),
        "{status:?}"
    );
    // Hard limits known, usage not: kube refuses until usage is known.
    quotas
        .patch_status(
            "q",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"hard": {"pods": "1"}}})),
        )
        .await
        .unwrap();
    expect_api_error(
        pods.create(&PostParams::default(), &pod("second")).await,
        403,
        "Forbidden",
        "pods \"second\" is forbidden: status unknown for quota: q, resources: pods",
    );
    quotas
        .patch_status(
            "q",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"used": {"pods": "0"}}})),
        )
        .await
        .unwrap();
    pods.create(&PostParams::default(), &pod("second"))
        .await
        .unwrap();
    let used = quotas
        .get_status("q")
        .await
        .unwrap()
        .status
        .unwrap()
        .used
        .unwrap();
    assert_eq!(used["pods"].0, "1");
}

#[tokio::test]
async fn concurrent_creates_never_exceed_the_quota() {
    let env = TestEnv::new("quota-race").await;
    let quotas: Api<ResourceQuota> = env.api();
    let quota: ResourceQuota = serde_json::from_value(json!({
        "metadata": {"name": "q"}, "spec": {"hard": {"pods": "3", "requests.memory": "1Gi"}}
    }))
    .unwrap();
    quotas.create(&PostParams::default(), &quota).await.unwrap();
    eventually("the quota's usage", || async {
        let status = quotas.get_status("q").await.unwrap().status?;
        status.used.filter(|used| used.len() == 2).map(|_| ())
    })
    .await;
    let pods: Api<Pod> = env.api();
    let creates = (0..12).map(|i| {
        let pods = pods.clone();
        async move {
            let pod: Pod = serde_json::from_value(json!({
                "metadata": {"name": format!("p{i}")},
                "spec": {"containers": [{"name": "c", "image": "busybox",
                    "resources": {"requests": {"memory": "100Mi"}}}]}
            }))
            .unwrap();
            pods.create(&PostParams::default(), &pod).await
        }
    });
    let results = futures::future::join_all(creates).await;
    let created = results.iter().filter(|result| result.is_ok()).count();
    assert_eq!(created, 3, "{results:?}");
    for result in results.into_iter().filter_map(Result::err) {
        let status = common::api_status(result);
        assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
        assert!(
            status
                .message
                .ends_with("exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3"),
            "{}",
            status.message
        );
    }
    let used = quotas
        .get_status("q")
        .await
        .unwrap()
        .status
        .unwrap()
        .used
        .unwrap();
    assert_eq!(used["pods"].0, "3");
    assert_eq!(used["requests.memory"].0, "300Mi");
}

/// kubectl 1.33 against a server whose `--admission-control-config-file`
/// gives ResourceQuota kube's documented `limitedResources`: pods of the
/// `cluster-services` PriorityClass and claims of any storage class need a
/// quota covering them. Without one kube refuses them (the scope refusal is
/// a plain error, a 500 without reason; the claim's a 403), dry-run or not;
/// other pods and claims are admitted; once a covering quota exists, so are
/// they, and it is charged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limited_resources_need_a_covering_quota() {
    if skip_if_external("limited_resources_need_a_covering_quota") {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let config = directory.path().join("admission.yaml");
    std::fs::write(
        &config,
        r#"apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - resource: pods
      matchScopes:
      - scopeName: PriorityClass
        operator: In
        values: ["cluster-services"]
    - resource: persistentvolumeclaims
      matchContains: [".storageclass.storage.k8s.io/requests.storage"]
"#,
    )
    .unwrap();
    let server =
        TestServer::start_with(&["--admission-control-config-file", config.to_str().unwrap()]);
    let client = server.client().await;
    let ns = format!("quota-limited-{}", suffix());
    create_namespace(&client, &ns).await;
    let kubectl = |args: &[&str], stdin: Option<&str>| -> (bool, String) {
        let (status, out, err) = server.kubectl_stdin(KUBECTL, args, stdin);
        (status.success(), format!("{out}{err}"))
    };
    let (created, output) = kubectl(
        &[
            "create",
            "priorityclass",
            "cluster-services",
            "--value=1000",
        ],
        None,
    );
    assert!(created, "{output}");
    let pod = |name: &str, class: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  priorityClassName: {class}\n  containers:\n  - name: c\n    image: busybox\n"
        )
    };
    let claim = |name: &str, class: Option<&str>| {
        let class = class
            .map(|class| format!("  storageClassName: {class}\n"))
            .unwrap_or_default();
        format!(
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {name}\nspec:\n{class}  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n"
        )
    };
    let create = |manifest: &str, extra: &[&str]| {
        let mut args = vec!["create", "-f", "-", "-n", ns.as_str()];
        args.extend_from_slice(extra);
        kubectl(&args, Some(manifest))
    };
    // No quota in the namespace: what is limited is refused, the rest is not.
    let scope_refusal = "Error from server: error when creating \"STDIN\": insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]\n";
    for extra in [&["--dry-run=server"][..], &[]] {
        assert_eq!(
            create(&pod("critical", "cluster-services"), extra),
            (false, scope_refusal.to_string())
        );
    }
    let claim_refusal = "Error from server (Forbidden): error when creating \"STDIN\": persistentvolumeclaims \"gold-claim\" is forbidden: insufficient quota to consume: gold.storageclass.storage.k8s.io/requests.storage\n";
    assert_eq!(
        create(&claim("gold-claim", Some("gold")), &[]),
        (false, claim_refusal.to_string())
    );
    let (created, output) = create(&pod("ordinary", "system-cluster-critical"), &[]);
    assert!(created, "{output}");
    let (created, output) = create(&claim("plain-claim", None), &[]);
    assert!(created, "{output}");
    // Quotas that cover them: a PriorityClass scope, a storage class limit.
    let quotas = r#"apiVersion: v1
kind: ResourceQuota
metadata:
  name: critical
spec:
  hard:
    pods: "5"
  scopeSelector:
    matchExpressions:
    - scopeName: PriorityClass
      operator: In
      values: ["cluster-services"]
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gold
spec:
  hard:
    gold.storageclass.storage.k8s.io/requests.storage: 10Gi
"#;
    let (created, output) = create(quotas, &[]);
    assert!(created, "{output}");
    let used = |name: &str, resource: &str| {
        let escaped = resource.replace('.', "\\.");
        let jsonpath = format!("jsonpath={{.status.used.{escaped}}}");
        kubectl(&["get", "quota", name, "-n", &ns, "-o", &jsonpath], None)
    };
    for (name, resource) in [
        ("critical", "pods"),
        ("gold", "gold.storageclass.storage.k8s.io/requests.storage"),
    ] {
        eventually(&format!("{name}'s usage"), || async {
            (used(name, resource) == (true, "0".to_string())).then_some(())
        })
        .await;
    }
    let (created, output) = create(&pod("critical", "cluster-services"), &[]);
    assert!(created, "{output}");
    let (created, output) = create(&claim("gold-claim", Some("gold")), &[]);
    assert!(created, "{output}");
    assert_eq!(used("critical", "pods"), (true, "1".to_string()));
    assert_eq!(
        used("gold", "gold.storageclass.storage.k8s.io/requests.storage"),
        (true, "1Gi".to_string())
    );
}

/// A ResourceQuota configuration kube would refuse stops the start.
#[test]
fn a_bad_quota_configuration_stops_the_start() {
    let directory = tempfile::tempdir().unwrap();
    let config = directory.path().join("admission.yaml");
    std::fs::write(
        &config,
        r#"apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - matchContains: [requests.cpu]
"#,
    )
    .unwrap();
    let stderr = TestServer::refused_start(&[
        "--admission-control-config-file".as_ref(),
        config.as_os_str(),
    ]);
    assert!(
        stderr.contains(r#"ferrokube: --admission-control-config-file: admission plugin "ResourceQuota": limitedResources[0].resource: Required value"#),
        "{stderr}"
    );
}
