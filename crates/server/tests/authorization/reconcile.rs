//! `kubectl auth reconcile -f`: RBAC objects created, then updated in
//! place (rules added, existing ones kept), with the ordinary verbs.

use super::*;

#[tokio::test]
async fn kubectl_auth_reconcile_creates_then_adds_rules() {
    let cluster = Cluster::start(&[]);
    cluster.kubectl_admin(&["create", "namespace", "dev"]);
    let file = cluster.dir.path().join("rbac.yaml");
    let write = |verbs: &str| {
        std::fs::write(
            &file,
            format!(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: dev\nrules:\n- apiGroups: [\"\"]\n  resources: [\"pods\"]\n  verbs: {verbs}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: reader\n  namespace: dev\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: reader\nsubjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: jane\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: node-reader\nrules:\n- apiGroups: [\"\"]\n  resources: [\"nodes\"]\n  verbs: [\"get\"]\n"
            ),
        )
        .unwrap();
    };
    write("[\"get\"]");
    let file_arg = file.display().to_string();
    for version in ["1.33", "1.27"] {
        let (ok, out, err) = cluster.kubectl(
            version,
            &cluster.server.kubeconfig,
            &["auth", "reconcile", "-f", &file_arg],
        );
        assert!(ok, "{version}: {out} {err}");
    }
    let out = cluster.kubectl_admin(&["get", "role", "reader", "-n", "dev", "-o", "json"]);
    let role: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(role["rules"][0]["verbs"], json!(["get"]));
    // A rule more: reconcile adds it and keeps what was there.
    write("[\"list\"]");
    let (ok, out, err) = cluster.kubectl(
        "1.33",
        &cluster.server.kubeconfig,
        &["auth", "reconcile", "-f", &file_arg],
    );
    assert!(ok, "{out} {err}");
    assert!(
        out.contains("role.rbac.authorization.k8s.io/reader reconciled"),
        "{out}"
    );
    let out = cluster.kubectl_admin(&["get", "role", "reader", "-n", "dev", "-o", "json"]);
    let role: Value = serde_json::from_str(&out).unwrap();
    let verbs: Vec<&Value> = role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|rule| rule["verbs"].as_array().unwrap())
        .collect();
    assert!(
        verbs.contains(&&json!("get")) && verbs.contains(&&json!("list")),
        "{role}"
    );
    let out = cluster.kubectl_admin(&["get", "rolebinding", "reader", "-n", "dev", "-o", "json"]);
    let binding: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(binding["subjects"][0]["name"], json!("jane"));
    cluster.kubectl_admin(&["get", "clusterrole", "node-reader"]);
}
