//! Escalation prevention on RBAC writes, with `escalate` and `bind`.

use super::*;

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
