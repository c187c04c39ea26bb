//! The access reviews of authorization.k8s.io: `kubectl auth can-i` (yes/no,
//! exit codes, subresources, non-resource URLs, `--list`, `--as`) on kubectl
//! 1.33 and 1.27, kube's 422 and 400 bodies over raw HTTP, and a
//! SubjectAccessReview created with kube-rs.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};

use super::*;

/// jane may read pods (and their logs) in dev and GET `/logs/*`; everyone
/// authenticated may create the self reviews (kube's `system:basic-user`,
/// granted here by the test).
fn grant_jane(cluster: &Cluster) {
    cluster.kubectl_admin(&["create", "namespace", "dev"]);
    grant_discovery(cluster);
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "test-basic-user",
        "--verb=create",
        "--resource=selfsubjectaccessreviews.authorization.k8s.io,selfsubjectrulesreviews.authorization.k8s.io",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "test-basic-user",
        "--clusterrole=test-basic-user",
        "--group=system:authenticated",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "role",
        "pod-reader",
        "--verb=get,list",
        "--resource=pods,pods/log",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "jane-pods",
        "--role=pod-reader",
        "--user=jane",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "log-reader",
        "--verb=get",
        "--non-resource-url=/logs/*",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "jane-logs",
        "--clusterrole=log-reader",
        "--user=jane",
    ]);
}

/// The rows of `kubectl auth can-i --list`, each as its cells split on
/// whitespace.
fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|line| line.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[tokio::test]
async fn kubectl_auth_can_i_answers_as_rbac_decides() {
    let cluster = Cluster::start(&[]);
    grant_jane(&cluster);
    let jane = cluster.kubeconfig_for(JANE_TOKEN);
    let admin = cluster.server.kubeconfig.clone();
    for version in ["1.33", "1.27"] {
        let can_i = |kubeconfig: &Path, args: &[&str]| {
            let mut all = vec!["auth", "can-i"];
            all.extend_from_slice(args);
            let (ok, out, err) = cluster.kubectl(version, kubeconfig, &all);
            (ok, out.trim().to_string(), err)
        };
        let yes = |kubeconfig: &Path, args: &[&str]| {
            let (ok, out, err) = can_i(kubeconfig, args);
            assert!(ok && out == "yes", "{version} can-i {args:?}: {out} {err}");
        };
        let no = |kubeconfig: &Path, args: &[&str]| {
            let (ok, out, err) = can_i(kubeconfig, args);
            assert!(!ok && out == "no", "{version} can-i {args:?}: {out} {err}");
        };
        yes(&jane, &["get", "pods", "-n", "dev"]);
        yes(&jane, &["list", "pods", "-n", "dev"]);
        no(&jane, &["delete", "pods", "-n", "dev"]);
        no(&jane, &["get", "pods", "-n", "prod"]);
        yes(&jane, &["get", "pods", "--subresource=log", "-n", "dev"]);
        no(&jane, &["get", "pods", "--subresource=exec", "-n", "dev"]);
        yes(&jane, &["get", "/logs/kube.log"]);
        no(&jane, &["get", "/metrics"]);
        // The admin asks as jane (impersonation), and for itself.
        yes(&admin, &["get", "pods", "-n", "dev", "--as=jane"]);
        no(&admin, &["delete", "pods", "-n", "dev", "--as=jane"]);
        yes(&admin, &["delete", "pods", "-n", "dev"]);

        // `--list`: a SelfSubjectRulesReview in the namespace.
        let (ok, out, err) =
            cluster.kubectl(version, &jane, &["auth", "can-i", "--list", "-n", "dev"]);
        assert!(ok, "{version} --list: {out} {err}");
        let rows = rows(&out);
        assert_eq!(
            rows[0],
            [
                "Resources",
                "Non-Resource",
                "URLs",
                "Resource",
                "Names",
                "Verbs"
            ],
            "{out}"
        );
        for expected in [
            vec!["pods", "[]", "[]", "[get", "list]"],
            vec!["pods/log", "[]", "[]", "[get", "list]"],
            vec!["[/logs/*]", "[]", "[get]"],
            vec![
                "selfsubjectaccessreviews.authorization.k8s.io",
                "[]",
                "[]",
                "[create]",
            ],
        ] {
            assert!(
                rows.iter().any(|row| row == &expected),
                "{version} --list lacks {expected:?}:\n{out}"
            );
        }
        // In another namespace only the cluster-wide rules apply.
        let (ok, out, _) =
            cluster.kubectl(version, &jane, &["auth", "can-i", "--list", "-n", "prod"]);
        assert!(ok);
        assert!(!out.contains("pods"), "{out}");
    }
}

#[tokio::test]
async fn access_reviews_validate_and_answer_as_kube() {
    let cluster = Cluster::start(&[]);
    grant_jane(&cluster);
    let admin = cluster.admin().await;
    let jane = cluster.user(JANE_TOKEN).await;

    // kube-rs: a SubjectAccessReview about jane.
    let reviews: Api<SubjectAccessReview> = Api::all(admin.clone());
    let review = |verb: &str| SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some("jane".into()),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some("dev".into()),
                verb: Some(verb.into()),
                resource: Some("pods".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let allowed = reviews
        .create(&PostParams::default(), &review("get"))
        .await
        .unwrap();
    let status = allowed.status.unwrap();
    assert!(status.allowed);
    assert_eq!(
        status.reason.as_deref(),
        Some(r#"RBAC: allowed by RoleBinding "jane-pods/dev" of Role "pod-reader" to User "jane""#)
    );
    let refused = reviews
        .create(&PostParams::default(), &review("delete"))
        .await
        .unwrap();
    assert!(!refused.status.unwrap().allowed);

    // Raw HTTP: kube's answer, spec echoed.
    let res = raw(
        &admin,
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        Some(json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                    "spec": {"user": "jane", "nonResourceAttributes": {"path": "/logs/a", "verb": "get"}}})),
    )
    .await;
    assert_eq!(res.status, 201, "{res:?}");
    assert_eq!(
        res.json(),
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
               "metadata": {"creationTimestamp": null},
               "spec": {"user": "jane", "nonResourceAttributes": {"path": "/logs/a", "verb": "get"}},
               "status": {"allowed": true, "reason": r#"RBAC: allowed by ClusterRoleBinding "jane-logs" of ClusterRole "log-reader" to User "jane""#}})
    );

    // Validation: kube's 422 (the decoded kind is empty, hence the message).
    let res = raw(
        &admin,
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        Some(json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {}})),
    )
    .await;
    assert_eq!(res.status, 422, "{res:?}");
    assert_eq!(
        res.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": r#".authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]"#,
               "reason": "Invalid",
               "details": {"group": "authorization.k8s.io", "causes": [
                   {"reason": "FieldValueInvalid", "message": r#"Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified"#, "field": "spec.resourceAttributes"},
                   {"reason": "FieldValueInvalid", "message": r#"Invalid value: "": at least one of user or group must be specified"#, "field": "spec.user"}]},
               "code": 422})
    );
    // LocalSubjectAccessReview: the namespaces must agree.
    let local = |namespace: Option<&str>, attributes_namespace: &str| {
        let mut body = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
            "spec": {"user": "jane", "resourceAttributes": {"namespace": attributes_namespace, "verb": "get", "resource": "pods"}}});
        if let Some(namespace) = namespace {
            body["metadata"] = json!({"namespace": namespace});
        }
        body
    };
    let path = "/apis/authorization.k8s.io/v1/namespaces/dev/localsubjectaccessreviews";
    let res = raw(&admin, "POST", path, Some(local(None, "prod"))).await;
    assert_eq!(res.status, 422, "{res:?}");
    assert_eq!(
        res.json()["message"],
        json!(
            r#".authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "prod": must match metadata.namespace"#
        )
    );
    let res = raw(&admin, "POST", path, Some(local(Some("prod"), "prod"))).await;
    assert_eq!(res.status, 400, "{res:?}");
    assert_eq!(
        res.json()["message"],
        json!(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    );
    let res = raw(&admin, "POST", path, Some(local(None, "dev"))).await;
    assert_eq!(res.status, 201, "{res:?}");
    assert_eq!(res.json()["metadata"]["namespace"], json!("dev"));
    assert_eq!(res.json()["status"]["allowed"], json!(true));

    // SelfSubjectRulesReview needs a namespace; jane's rules in dev.
    let rules_path = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
    let res = raw(&jane, "POST", rules_path, Some(json!({"spec": {}}))).await;
    assert_eq!(res.status, 400, "{res:?}");
    assert_eq!(res.json()["message"], json!("no namespace on request"));
    let res = raw(
        &jane,
        "POST",
        rules_path,
        Some(json!({"spec": {"namespace": "dev"}})),
    )
    .await;
    assert_eq!(res.status, 201, "{res:?}");
    let review = res.json();
    assert_eq!(review["spec"], json!({}));
    assert_eq!(review["status"]["incomplete"], json!(false));
    assert!(review["status"]["resourceRules"]
        .as_array()
        .unwrap()
        .contains(
            &json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"]})
        ));

    // The reviews are authorized as any create: jane may not ask about others.
    let res = raw(
        &jane,
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        Some(review_body()),
    )
    .await;
    forbidden(
        &res,
        r#"subjectaccessreviews.authorization.k8s.io is forbidden: User "jane" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope"#,
        json!({"group": "authorization.k8s.io", "kind": "subjectaccessreviews"}),
    );

    // Discovery lists each review with the create verb only.
    let res = raw(&admin, "GET", "/apis/authorization.k8s.io/v1", None).await;
    let resources = res.json()["resources"].as_array().unwrap().clone();
    for name in [
        "localsubjectaccessreviews",
        "selfsubjectaccessreviews",
        "selfsubjectrulesreviews",
        "subjectaccessreviews",
    ] {
        let resource = resources
            .iter()
            .find(|resource| resource["name"] == name)
            .unwrap_or_else(|| panic!("{name} not listed"));
        assert_eq!(resource["verbs"], json!(["create"]), "{name}");
    }
}

fn review_body() -> Value {
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
           "spec": {"user": "bob", "nonResourceAttributes": {"path": "/x", "verb": "get"}}})
}
