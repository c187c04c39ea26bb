//! Authorization as kube-apiserver 1.34 does it, through real clients:
//! users of a `--token-auth-file` refused with kube's 403 until an admin's
//! `kubectl create role` / `create rolebinding` lets the very next request
//! through, watches refused then allowed, kube-rs as such a user, and the
//! `AlwaysAllow` / `AlwaysDeny` modes. The Roles and bindings are the
//! tests' own (the bootstrap policy is another part of issue 15).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use ferrokube_testkit as common;

use common::{config_from, kubectl_path, raw_request, RawResponse, TestServer};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube::Client;
use serde_json::{json, Value};

const JANE_TOKEN: &str = "jane-token-0123456789";
const BOT_TOKEN: &str = "bot-token-0123456789";

/// A server with a token file naming jane (group `team`) and a
/// service-account-shaped user, plus the directory holding both.
struct Cluster {
    server: TestServer,
    dir: tempfile::TempDir,
}

impl Cluster {
    fn start(extra: &[&str]) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let tokens = dir.path().join("tokens.csv");
        std::fs::write(
            &tokens,
            format!(
                "{JANE_TOKEN},jane,uid-jane,\"team\"\n{BOT_TOKEN},system:serviceaccount:dev:bot,uid-bot,\"system:serviceaccounts,system:serviceaccounts:dev\"\n"
            ),
        )
        .unwrap();
        let mut args = vec![
            "--token-auth-file".to_string(),
            tokens.display().to_string(),
        ];
        args.extend(extra.iter().map(|arg| arg.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let server = TestServer::start_with(&args);
        Cluster { server, dir }
    }

    async fn admin(&self) -> Client {
        self.server.client().await
    }

    async fn user(&self, token: &str) -> Client {
        let mut config = config_from(&self.server.kubeconfig).await;
        config.auth_info = Default::default();
        config.auth_info.token = Some(token.to_string().into());
        Client::try_from(config).unwrap()
    }

    /// A kubeconfig that authenticates with `token` only.
    fn kubeconfig_for(&self, token: &str) -> PathBuf {
        let ca = self.server.data_dir.join("pki").join("ca.crt");
        let path = self.dir.path().join(format!("{token}.kubeconfig"));
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: u\n  user:\n    token: {token}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n",
                self.server.url,
                ca.display()
            ),
        )
        .unwrap();
        path
    }

    fn kubectl(&self, version: &str, kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
        let cache = self.dir.path().join("kubectl-cache");
        let out = Command::new(kubectl_path(version))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--cache-dir")
            .arg(&cache)
            .args(args)
            .env_remove("KUBECONFIG")
            .output()
            .unwrap();
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    }

    #[track_caller]
    fn kubectl_admin(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.kubectl("1.33", &self.server.kubeconfig, args);
        assert!(ok, "kubectl {args:?}: {out}{err}");
        out
    }
}

async fn raw(client: &Client, method: &str, path: &str, body: Option<Value>) -> RawResponse {
    let (content_type, body) = match body {
        Some(body) => (Some("application/json"), serde_json::to_vec(&body).unwrap()),
        None => (None, Vec::new()),
    };
    raw_request(client, method, path, content_type, body).await
}

/// Asserts kube's 403 `Status`, with its details.
#[track_caller]
fn forbidden(res: &RawResponse, message: &str, details: Value) {
    assert_eq!(res.status, 403, "{res:?}");
    assert_eq!(
        res.json(),
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": "Forbidden",
            "details": details,
            "code": 403,
        })
    );
}

/// What kubectl and kube-rs need before any resource request: discovery
/// and version (kube's `system:discovery`, granted here by the test).
fn grant_discovery(cluster: &Cluster) {
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "test-discovery",
        "--verb=get",
        "--non-resource-url=/api,/api/*,/apis,/apis/*,/version,/openapi,/openapi/*",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "test-discovery",
        "--clusterrole=test-discovery",
        "--group=system:authenticated",
    ]);
}

#[tokio::test]
async fn rbac_refuses_until_a_binding_allows_and_then_at_once() {
    let cluster = Cluster::start(&[]);
    let admin = cluster.admin().await;
    let jane = cluster.user(JANE_TOKEN).await;
    cluster.kubectl_admin(&["create", "namespace", "dev"]);

    // Raw HTTP: kube's 403 bodies, per scope and kind of request.
    let res = raw(&jane, "GET", "/api/v1/namespaces/dev/configmaps", None).await;
    forbidden(
        &res,
        r#"configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "dev""#,
        json!({"kind": "configmaps"}),
    );
    let res = raw(&jane, "GET", "/api/v1/nodes", None).await;
    forbidden(
        &res,
        r#"nodes is forbidden: User "jane" cannot list resource "nodes" in API group "" at the cluster scope"#,
        json!({"kind": "nodes"}),
    );
    let res = raw(
        &jane,
        "GET",
        "/apis/apps/v1/namespaces/dev/deployments/web/scale",
        None,
    )
    .await;
    forbidden(
        &res,
        r#"deployments.apps "web" is forbidden: User "jane" cannot get resource "deployments/scale" in API group "apps" in the namespace "dev""#,
        json!({"name": "web", "group": "apps", "kind": "deployments"}),
    );
    let res = raw(&jane, "GET", "/apis", None).await;
    forbidden(
        &res,
        r#"forbidden: User "jane" cannot get path "/apis""#,
        json!({}),
    );
    let res = raw(&jane, "GET", "/healthz", None).await;
    forbidden(
        &res,
        r#"forbidden: User "jane" cannot get path "/healthz""#,
        json!({}),
    );
    // Watch and deletecollection are checked with their own verbs.
    let res = raw(
        &jane,
        "GET",
        "/api/v1/namespaces/dev/configmaps?watch=true",
        None,
    )
    .await;
    forbidden(
        &res,
        r#"configmaps is forbidden: User "jane" cannot watch resource "configmaps" in API group "" in the namespace "dev""#,
        json!({"kind": "configmaps"}),
    );
    let res = raw(&jane, "DELETE", "/api/v1/namespaces/dev/configmaps", None).await;
    forbidden(
        &res,
        r#"configmaps is forbidden: User "jane" cannot deletecollection resource "configmaps" in API group "" in the namespace "dev""#,
        json!({"kind": "configmaps"}),
    );
    // Dry-run is authorized as the request itself.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}});
    for path in [
        "/api/v1/namespaces/dev/configmaps",
        "/api/v1/namespaces/dev/configmaps?dryRun=All",
    ] {
        let res = raw(&jane, "POST", path, Some(cm.clone())).await;
        forbidden(
            &res,
            r#"configmaps is forbidden: User "jane" cannot create resource "configmaps" in API group "" in the namespace "dev""#,
            json!({"kind": "configmaps"}),
        );
    }

    // kubectl, as jane: refused with kube's text.
    grant_discovery(&cluster);
    let jane_kubeconfig = cluster.kubeconfig_for(JANE_TOKEN);
    for version in ["1.33", "1.27"] {
        let (ok, _, err) = cluster.kubectl(
            version,
            &jane_kubeconfig,
            &["get", "configmaps", "-n", "dev"],
        );
        assert!(!ok);
        assert!(
            err.contains(r#"Error from server (Forbidden): configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "dev""#),
            "kubectl.{version}: {err}"
        );
    }

    // A watch refused before the binding.
    let jane_configmaps: Api<ConfigMap> = Api::namespaced(jane.clone(), "dev");
    let refused = jane_configmaps.watch(&WatchParams::default(), "0").await;
    let status = common::api_status(refused.err().expect("a refused watch"));
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message,
        r#"configmaps is forbidden: User "jane" cannot watch resource "configmaps" in API group "" in the namespace "dev""#
    );

    // The admin grants reading configmaps in dev: the next request passes.
    cluster.kubectl_admin(&[
        "create",
        "role",
        "cm-reader",
        "--verb=get,list,watch",
        "--resource=configmaps",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "jane-reads",
        "--role=cm-reader",
        "--user=jane",
        "-n",
        "dev",
    ]);
    let res = raw(&jane, "GET", "/api/v1/namespaces/dev/configmaps", None).await;
    assert_eq!(res.status, 200, "{res:?}");
    let (ok, out, err) = cluster.kubectl(
        "1.33",
        &jane_kubeconfig,
        &["get", "configmaps", "-n", "dev", "-o", "name"],
    );
    assert!(ok, "{out}{err}");
    assert!(out.contains("configmap/kube-root-ca.crt"), "{out}");

    // The watch opens now and sees the admin's create.
    let mut events = jane_configmaps
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    Api::<ConfigMap>::namespaced(admin.clone(), "dev")
        .create(
            &PostParams::default(),
            &serde_json::from_value(cm.clone()).unwrap(),
        )
        .await
        .unwrap();
    let mut seen = false;
    while let Some(event) = events.try_next().await.unwrap() {
        if let WatchEvent::Added(object) = event {
            if object.metadata.name.as_deref() == Some("cm") {
                seen = true;
                break;
            }
        }
    }
    assert!(seen);

    // kube-rs as jane: reads pass, a write her role lacks is refused.
    let listed = jane_configmaps.list(&ListParams::default()).await.unwrap();
    assert!(listed
        .items
        .iter()
        .any(|cm| cm.metadata.name.as_deref() == Some("cm")));
    assert_eq!(
        jane_configmaps
            .get("cm")
            .await
            .unwrap()
            .metadata
            .name
            .as_deref(),
        Some("cm")
    );
    let other: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "other"}})).unwrap();
    common::expect_api_error(
        jane_configmaps.create(&PostParams::default(), &other).await,
        403,
        "Forbidden",
        r#"configmaps is forbidden: User "jane" cannot create resource "configmaps" in API group "" in the namespace "dev""#,
    );
    // Only in dev.
    cluster.kubectl_admin(&["create", "namespace", "prod"]);
    let res = raw(&jane, "GET", "/api/v1/namespaces/prod/configmaps", None).await;
    assert_eq!(res.status, 403, "{res:?}");

    // Deleting the binding takes the right away at once.
    cluster.kubectl_admin(&["delete", "rolebinding", "jane-reads", "-n", "dev"]);
    let res = raw(&jane, "GET", "/api/v1/namespaces/dev/configmaps/cm", None).await;
    forbidden(
        &res,
        r#"configmaps "cm" is forbidden: User "jane" cannot get resource "configmaps" in API group "" in the namespace "dev""#,
        json!({"name": "cm", "kind": "configmaps"}),
    );
}

#[tokio::test]
async fn bindings_follow_kube_rules_for_groups_service_accounts_names_and_missing_roles() {
    let cluster = Cluster::start(&[]);
    let jane = cluster.user(JANE_TOKEN).await;
    let bot = cluster.user(BOT_TOKEN).await;
    cluster.kubectl_admin(&["create", "namespace", "dev"]);
    cluster.kubectl_admin(&["create", "configmap", "a", "-n", "dev"]);
    cluster.kubectl_admin(&["create", "configmap", "b", "-n", "dev"]);

    // A RoleBinding of a ClusterRole to a group, with resourceNames: one
    // object, and lists pinned to it by a field selector.
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "read-a",
        "--verb=get,list,watch",
        "--resource=configmaps",
        "--resource-name=a",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "team-reads-a",
        "--clusterrole=read-a",
        "--group=team",
        "-n",
        "dev",
    ]);
    assert_eq!(
        raw(&jane, "GET", "/api/v1/namespaces/dev/configmaps/a", None)
            .await
            .status,
        200
    );
    assert_eq!(
        raw(&jane, "GET", "/api/v1/namespaces/dev/configmaps/b", None)
            .await
            .status,
        403
    );
    let pinned = raw(
        &jane,
        "GET",
        "/api/v1/namespaces/dev/configmaps?fieldSelector=metadata.name%3Da",
        None,
    )
    .await;
    assert_eq!(pinned.status, 200, "{pinned:?}");
    assert_eq!(
        raw(&jane, "GET", "/api/v1/namespaces/dev/configmaps", None)
            .await
            .status,
        403
    );

    // A ServiceAccount subject without namespace: the binding's namespace.
    cluster.kubectl_admin(&[
        "create",
        "role",
        "pod-reader",
        "--verb=list",
        "--resource=pods",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "bot-reads",
        "--role=pod-reader",
        "--serviceaccount=dev:bot",
        "-n",
        "dev",
    ]);
    assert_eq!(
        raw(&bot, "GET", "/api/v1/namespaces/dev/pods", None)
            .await
            .status,
        200
    );
    assert_eq!(raw(&bot, "GET", "/api/v1/pods", None).await.status, 403);

    // Subresources need their own rule; `*/scale` grants every scale.
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "scaler",
        "--verb=get",
        "--resource=*.*/scale",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "jane-scales",
        "--clusterrole=scaler",
        "--user=jane",
    ]);
    let scale = raw(
        &jane,
        "GET",
        "/apis/apps/v1/namespaces/dev/deployments/web/scale",
        None,
    )
    .await;
    assert_eq!(
        scale.status, 404,
        "allowed, and there is no such deployment: {scale:?}"
    );
    let deployment = raw(
        &jane,
        "GET",
        "/apis/apps/v1/namespaces/dev/deployments/web",
        None,
    )
    .await;
    assert_eq!(deployment.status, 403, "{deployment:?}");

    // nonResourceURLs with a trailing `*`.
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "health",
        "--verb=get",
        "--non-resource-url=/healthz*",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "jane-health",
        "--clusterrole=health",
        "--user=jane",
    ]);
    assert_eq!(raw(&jane, "GET", "/healthz/ping", None).await.status, 200);
    let res = raw(&jane, "GET", "/metrics", None).await;
    forbidden(
        &res,
        r#"forbidden: User "jane" cannot get path "/metrics""#,
        json!({}),
    );

    // A binding to a Role that does not exist: kube names it in the 403.
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "dangling",
        "--role=gone",
        "--user=jane",
        "-n",
        "dev",
    ]);
    let res = raw(&jane, "GET", "/api/v1/namespaces/dev/secrets", None).await;
    forbidden(
        &res,
        r#"secrets is forbidden: User "jane" cannot list resource "secrets" in API group "" in the namespace "dev": RBAC: role.rbac.authorization.k8s.io "gone" not found"#,
        json!({"kind": "secrets"}),
    );
    // ...and once the Role exists, it grants.
    cluster.kubectl_admin(&[
        "create",
        "role",
        "gone",
        "--verb=list",
        "--resource=secrets",
        "-n",
        "dev",
    ]);
    assert_eq!(
        raw(&jane, "GET", "/api/v1/namespaces/dev/secrets", None)
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn unsafe_delete_needs_its_own_verb() {
    let cluster = Cluster::start(&[]);
    let jane = cluster.user(JANE_TOKEN).await;
    cluster.kubectl_admin(&["create", "namespace", "dev"]);
    cluster.kubectl_admin(&["create", "configmap", "a", "-n", "dev"]);
    cluster.kubectl_admin(&[
        "create",
        "role",
        "deleter",
        "--verb=delete",
        "--resource=configmaps",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "jane-deletes",
        "--role=deleter",
        "--user=jane",
        "-n",
        "dev",
    ]);
    let path =
        "/api/v1/namespaces/dev/configmaps/a?ignoreStoreReadErrorWithClusterBreakingPotential=true";
    let res = raw(&jane, "DELETE", path, None).await;
    forbidden(
        &res,
        r#"configmaps "a" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: "#,
        json!({"name": "a", "kind": "configmaps"}),
    );
    // With the verb, the request gets as far as kube lets it: the object is
    // not corrupt, so the option is refused.
    cluster.kubectl_admin(&[
        "create",
        "role",
        "unsafe",
        "--verb=unsafe-delete-ignore-read-errors",
        "--resource=configmaps",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "jane-unsafe",
        "--role=unsafe",
        "--user=jane",
        "-n",
        "dev",
    ]);
    let res = raw(&jane, "DELETE", path, None).await;
    assert_eq!(res.status, 422, "{res:?}");
}

#[tokio::test]
async fn always_allow_and_always_deny() {
    let allow = Cluster::start(&["--authorization-mode=AlwaysAllow"]);
    let jane = allow.user(JANE_TOKEN).await;
    assert_eq!(raw(&jane, "GET", "/api/v1/nodes", None).await.status, 200);
    assert_eq!(raw(&jane, "GET", "/apis", None).await.status, 200);

    let deny = Cluster::start(&["--authorization-mode=AlwaysDeny"]);
    let jane = deny.user(JANE_TOKEN).await;
    let res = raw(&jane, "GET", "/api/v1/namespaces/default/configmaps", None).await;
    forbidden(
        &res,
        r#"configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "default": Everything is forbidden."#,
        json!({"kind": "configmaps"}),
    );
    // system:masters (the admin kubeconfig) is allowed before any mode.
    let admin = deny.admin().await;
    assert_eq!(raw(&admin, "GET", "/api/v1/nodes", None).await.status, 200);
    // Refused requests make no metrics series (they never reach a route).
    let metrics = raw(&admin, "GET", "/metrics", None).await;
    assert!(metrics.body.contains(r#"code="200""#), "{}", metrics.body);
    assert!(!metrics.body.contains(r#"code="403""#), "{}", metrics.body);

    // Chained in order: AlwaysDeny has no opinion, RBAC then decides.
    let chained = Cluster::start(&["--authorization-mode=AlwaysDeny,RBAC"]);
    let jane = chained.user(JANE_TOKEN).await;
    chained.kubectl_admin(&[
        "create",
        "clusterrole",
        "node-reader",
        "--verb=list",
        "--resource=nodes",
    ]);
    let res = raw(&jane, "GET", "/api/v1/nodes", None).await;
    forbidden(
        &res,
        r#"nodes is forbidden: User "jane" cannot list resource "nodes" in API group "" at the cluster scope: Everything is forbidden."#,
        json!({"kind": "nodes"}),
    );
    chained.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "jane-nodes",
        "--clusterrole=node-reader",
        "--user=jane",
    ]);
    assert_eq!(raw(&jane, "GET", "/api/v1/nodes", None).await.status, 200);
}

#[test]
fn unsupported_authorization_modes_refuse_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let binary = std::env::var_os(common::BIN_ENV)
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let test = std::env::current_exe().unwrap();
            test.parent().unwrap().parent().unwrap().join("ferrokube")
        });
    for (mode, message) in [
        (
            "Node,RBAC",
            r#"ferrokube: --authorization-mode: authorization-mode "Node" is not supported by ferrokube (supported: AlwaysAllow, AlwaysDeny, RBAC)"#,
        ),
        (
            "rbac",
            r#"ferrokube: --authorization-mode: authorization-mode "rbac" is not a valid mode"#,
        ),
    ] {
        let out = Command::new(&binary)
            .args(["serve", "--data-dir"])
            .arg(dir.path())
            .args(["--secure-port", "0", "--fsync=false"])
            .arg(format!("--authorization-mode={mode}"))
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), message);
    }
}

#[tokio::test]
async fn escalation_is_refused_unless_held_or_granted_escalate_and_bind() {
    let cluster = Cluster::start(&[]);
    let jane = cluster.user(JANE_TOKEN).await;
    cluster.kubectl_admin(&["create", "namespace", "dev"]);
    grant_discovery(&cluster);
    // jane may read configmaps and write roles and bindings in dev.
    cluster.kubectl_admin(&[
        "create",
        "role",
        "cm-reader",
        "--verb=get,list",
        "--resource=configmaps",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "role",
        "rbac-writer",
        "--verb=create,update,patch",
        "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "jane-cm",
        "--role=cm-reader",
        "--user=jane",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "jane-rbac",
        "--role=rbac-writer",
        "--user=jane",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "secret-admin",
        "--verb=*",
        "--resource=secrets",
    ]);

    let roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/dev/roles";
    let bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings";
    let role = |name: &str, resource: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name},
               "rules": [{"apiGroups": [""], "resources": [resource], "verbs": ["get", "list"]}]})
    };
    let binding = |name: &str, kind: &str, role: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
               "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "tom"}]})
    };

    // What she holds she may grant.
    let res = raw(&jane, "POST", roles, Some(role("cm-copy", "configmaps"))).await;
    assert_eq!(res.status, 201, "{res:?}");
    let res = raw(
        &jane,
        "POST",
        bindings,
        Some(binding("tom-cm", "Role", "cm-copy")),
    )
    .await;
    assert_eq!(res.status, 201, "{res:?}");

    // What she does not hold, she may not.
    let res = raw(&jane, "POST", roles, Some(role("secret-reader", "secrets"))).await;
    forbidden(
        &res,
        "roles.rbac.authorization.k8s.io \"secret-reader\" is forbidden: user \"jane\" (groups=[\"team\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\"]}",
        json!({"name": "secret-reader", "group": "rbac.authorization.k8s.io", "kind": "roles"}),
    );
    let jane_kubeconfig = cluster.kubeconfig_for(JANE_TOKEN);
    let (ok, _, err) = cluster.kubectl(
        "1.33",
        &jane_kubeconfig,
        &[
            "create",
            "role",
            "secret-reader",
            "--verb=get",
            "--resource=secrets",
            "-n",
            "dev",
        ],
    );
    assert!(!ok);
    assert!(
        err.contains("roles.rbac.authorization.k8s.io \"secret-reader\" is forbidden: user \"jane\" (groups=[\"team\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}"),
        "{err}"
    );
    let res = raw(
        &jane,
        "POST",
        bindings,
        Some(binding("tom-secrets", "ClusterRole", "secret-admin")),
    )
    .await;
    forbidden(
        &res,
        "rolebindings.rbac.authorization.k8s.io \"tom-secrets\" is forbidden: user \"jane\" (groups=[\"team\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"*\"]}",
        json!({"name": "tom-secrets", "group": "rbac.authorization.k8s.io", "kind": "rolebindings"}),
    );
    // Widening her own role by update is refused the same way.
    let mut widened = role("cm-copy", "configmaps");
    widened["rules"][0]["resources"] = json!(["configmaps", "secrets"]);
    let res = raw(&jane, "PUT", &format!("{roles}/cm-copy"), Some(widened)).await;
    assert_eq!(res.status, 403, "{res:?}");
    // A binding to a role that does not exist: the registry's 404.
    let res = raw(
        &jane,
        "POST",
        bindings,
        Some(binding("tom-nope", "Role", "nope")),
    )
    .await;
    assert_eq!(res.status, 404, "{res:?}");
    assert_eq!(
        res.json()["message"],
        "roles.rbac.authorization.k8s.io \"nope\" not found"
    );

    // `bind` on that ClusterRole lets her bind it; `escalate` lets her write any role.
    cluster.kubectl_admin(&[
        "create",
        "role",
        "binder",
        "--verb=bind",
        "--resource=clusterroles.rbac.authorization.k8s.io",
        "--resource-name=secret-admin",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "jane-binds",
        "--role=binder",
        "--user=jane",
        "-n",
        "dev",
    ]);
    let res = raw(
        &jane,
        "POST",
        bindings,
        Some(binding("tom-secrets", "ClusterRole", "secret-admin")),
    )
    .await;
    assert_eq!(res.status, 201, "{res:?}");
    cluster.kubectl_admin(&[
        "create",
        "role",
        "escalator",
        "--verb=escalate",
        "--resource=roles.rbac.authorization.k8s.io",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "jane-escalates",
        "--role=escalator",
        "--user=jane",
        "-n",
        "dev",
    ]);
    let res = raw(&jane, "POST", roles, Some(role("secret-reader", "secrets"))).await;
    assert_eq!(res.status, 201, "{res:?}");

    // An aggregationRule gathers anything: it needs `*` on `*.*`.
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "clusterrole-writer",
        "--verb=create",
        "--resource=clusterroles.rbac.authorization.k8s.io",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "jane-clusterroles",
        "--clusterrole=clusterrole-writer",
        "--user=jane",
    ]);
    let aggregated = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "agg"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "jane"}}]}});
    let res = raw(
        &jane,
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        Some(aggregated),
    )
    .await;
    forbidden(
        &res,
        r#"clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule"#,
        json!({"name": "agg", "group": "rbac.authorization.k8s.io", "kind": "clusterroles"}),
    );
}
