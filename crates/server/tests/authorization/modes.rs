//! `--authorization-mode`: AlwaysAllow, AlwaysDeny, chains, and the modes
//! ferrokube refuses to start with.

use super::*;

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

/// `--anonymous-auth`: by default a request without credentials is
/// `system:anonymous` and the bootstrap policy decides (health checks
/// allowed, the rest 403 naming the anonymous user); a binding for
/// `system:unauthenticated` opens more, at once. With `false` it is 401
/// everywhere, health checks included, as kube answers.
#[tokio::test]
async fn anonymous_requests_go_through_the_authorizer_unless_disabled() {
    let cluster = Cluster::start(&[]);
    let anonymous = cluster.anonymous().await;
    assert_eq!(raw(&anonymous, "GET", "/readyz", None).await.status, 200);
    let res = raw(&anonymous, "GET", "/api/v1/nodes", None).await;
    forbidden(
        &res,
        r#"nodes is forbidden: User "system:anonymous" cannot list resource "nodes" in API group "" at the cluster scope"#,
        json!({"kind": "nodes"}),
    );
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "public-nodes",
        "--verb=list",
        "--resource=nodes",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "public-nodes",
        "--clusterrole=public-nodes",
        "--group=system:unauthenticated",
    ]);
    assert_eq!(
        raw(&anonymous, "GET", "/api/v1/nodes", None).await.status,
        200
    );

    let closed = Cluster::start(&["--anonymous-auth=false"]);
    let anonymous = closed.anonymous().await;
    for path in ["/readyz", "/version", "/api/v1/nodes"] {
        let res = raw(&anonymous, "GET", path, None).await;
        assert_eq!(res.status, 401, "{path}: {res:?}");
        assert_eq!(res.json()["reason"], "Unauthorized", "{path}");
    }
}
