//! The 403 of each kind of request, then a binding that takes effect for
//! the very next request: raw HTTP, kubectl 1.33 and 1.27, kube-rs, watches.

use super::*;

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
    let res = raw(&jane, "GET", "/metrics", None).await;
    forbidden(
        &res,
        r#"forbidden: User "jane" cannot get path "/metrics""#,
        json!({}),
    );
    let res = raw(&jane, "GET", "/logs", None).await;
    forbidden(
        &res,
        r#"forbidden: User "jane" cannot get path "/logs""#,
        json!({}),
    );
    // The bootstrap policy's system:discovery and system:public-info-viewer
    // let every authenticated user reach discovery and health, as in kube.
    for path in ["/apis", "/api", "/healthz", "/version"] {
        let res = raw(&jane, "GET", path, None).await;
        assert_eq!(res.status, 200, "{path}: {res:?}");
    }
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
