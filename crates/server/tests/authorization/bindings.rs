//! What bindings grant, as kube matches them: groups, service accounts,
//! resourceNames, subresources, nonResourceURLs, missing roles; and the
//! unsafe delete's own verb.

use super::*;

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
