//! Impersonation: `kubectl --as --as-group` (1.33 and 1.27) acting as the
//! impersonated user, kube's 403 for each thing a user may not impersonate
//! and 400 without a user, over raw HTTP; SelfSubjectReview shows the user
//! a request was served as.

use super::*;

/// A request with extra headers (the impersonation ones).
async fn raw_with(
    client: &Client,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> RawResponse {
    let mut request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("Accept", "application/json")
        .header("Content-Type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = if method == "POST" {
        br#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#.to_vec()
    } else {
        Vec::new()
    };
    let response = client
        .send(request.body(kube::client::Body::from(body)).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    RawResponse {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// Everyone authenticated may ask who they are (kube's `system:basic-user`,
/// granted here by the test).
fn grant_whoami(cluster: &Cluster) {
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "whoami",
        "--verb=create",
        "--resource=selfsubjectreviews.authentication.k8s.io",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "whoami",
        "--clusterrole=whoami",
        "--group=system:authenticated",
    ]);
}

const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

#[tokio::test]
async fn kubectl_as_acts_as_the_impersonated_user() {
    let cluster = Cluster::start(&[]);
    cluster.kubectl_admin(&["create", "namespace", "dev"]);
    cluster.kubectl_admin(&["create", "configmap", "c", "-n", "dev"]);
    grant_discovery(&cluster);
    // The group `devs` may read configmaps in dev; jane alone may not.
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
        "rolebinding",
        "devs-read",
        "--role=cm-reader",
        "--group=devs",
        "-n",
        "dev",
    ]);
    grant_whoami(&cluster);
    let admin = cluster.server.kubeconfig.clone();
    for version in ["1.33", "1.27"] {
        let (ok, out, err) = cluster.kubectl(
            version,
            &admin,
            &[
                "get",
                "configmaps",
                "-n",
                "dev",
                "--as=jane",
                "--as-group=devs",
                "-o",
                "name",
            ],
        );
        assert!(ok, "{version}: {out} {err}");
        assert!(
            out.lines().any(|line| line == "configmap/c"),
            "{version}: {out}"
        );
        let (ok, _, err) = cluster.kubectl(
            version,
            &admin,
            &["get", "configmaps", "-n", "dev", "--as=jane"],
        );
        assert!(!ok);
        assert!(
            err.contains(r#"configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "dev""#),
            "{version}: {err}"
        );
    }
    // kubectl auth whoami shows the impersonated user.
    let (ok, out, err) = cluster.kubectl(
        "1.33",
        &admin,
        &[
            "auth",
            "whoami",
            "--as=jane",
            "--as-group=devs",
            "-o",
            "json",
        ],
    );
    assert!(ok, "{out} {err}");
    let review: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        review["status"]["userInfo"],
        json!({"username": "jane", "groups": ["devs", "system:authenticated"]})
    );
}

#[tokio::test]
async fn impersonation_is_checked_with_the_impersonate_verb() {
    let cluster = Cluster::start(&[]);
    let jane = cluster.user(JANE_TOKEN).await;
    cluster.kubectl_admin(&["create", "namespace", "dev"]);
    grant_whoami(&cluster);

    // Refused: kube's 403 naming what may not be impersonated.
    let res = raw_with(&jane, "POST", WHOAMI, &[("Impersonate-User", "bob")]).await;
    forbidden(
        &res,
        r#"users "bob" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope"#,
        json!({"name": "bob", "kind": "users"}),
    );
    let res = raw_with(
        &jane,
        "GET",
        "/api/v1/namespaces/dev/configmaps",
        &[("Impersonate-Group", "devs")],
    )
    .await;
    assert_eq!(res.status, 400, "{res:?}");
    assert_eq!(
        res.json()["message"],
        json!("requested [{Group  devs    }] without impersonating a user")
    );
    assert_eq!(res.json()["reason"], json!("BadRequest"));

    // jane may impersonate the user bob and the group devs, nothing else.
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "impersonate-bob",
        "--verb=impersonate",
        "--resource=users,groups",
        "--resource-name=bob",
        "--resource-name=devs",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "jane-impersonates",
        "--clusterrole=impersonate-bob",
        "--user=jane",
    ]);
    let res = raw_with(
        &jane,
        "POST",
        WHOAMI,
        &[("Impersonate-User", "bob"), ("Impersonate-Group", "devs")],
    )
    .await;
    assert_eq!(res.status, 201, "{res:?}");
    assert_eq!(
        res.json()["status"]["userInfo"],
        json!({"username": "bob", "groups": ["devs", "system:authenticated"]})
    );
    let res = raw_with(
        &jane,
        "POST",
        WHOAMI,
        &[("Impersonate-User", "bob"), ("Impersonate-Group", "admins")],
    )
    .await;
    forbidden(
        &res,
        r#"groups "admins" is forbidden: User "jane" cannot impersonate resource "groups" in API group "" at the cluster scope"#,
        json!({"name": "admins", "kind": "groups"}),
    );
    let res = raw_with(
        &jane,
        "POST",
        WHOAMI,
        &[("Impersonate-User", "system:serviceaccount:dev:bot")],
    )
    .await;
    forbidden(
        &res,
        r#"serviceaccounts "bot" is forbidden: User "jane" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "dev""#,
        json!({"name": "bot", "kind": "serviceaccounts"}),
    );
    let res = raw_with(
        &jane,
        "POST",
        WHOAMI,
        &[
            ("Impersonate-User", "bob"),
            ("Impersonate-Extra-Scopes", "s1"),
        ],
    )
    .await;
    forbidden(
        &res,
        r#"userextras.authentication.k8s.io "s1" is forbidden: User "jane" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope"#,
        json!({"name": "s1", "group": "authentication.k8s.io", "kind": "userextras"}),
    );
    let res = raw_with(
        &jane,
        "POST",
        WHOAMI,
        &[("Impersonate-User", "bob"), ("Impersonate-Uid", "u-1")],
    )
    .await;
    forbidden(
        &res,
        r#"uids.authentication.k8s.io "u-1" is forbidden: User "jane" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope"#,
        json!({"name": "u-1", "group": "authentication.k8s.io", "kind": "uids"}),
    );

    // The admin (system:masters) impersonates a service account: its
    // groups, and a uid and extras as given.
    let admin = cluster.admin().await;
    let res = raw_with(
        &admin,
        "POST",
        WHOAMI,
        &[
            ("Impersonate-User", "system:serviceaccount:dev:bot"),
            ("Impersonate-Uid", "u-1"),
            ("Impersonate-Extra-Example.org%2fscope", "s1"),
        ],
    )
    .await;
    assert_eq!(res.status, 201, "{res:?}");
    assert_eq!(
        res.json()["status"]["userInfo"],
        json!({"username": "system:serviceaccount:dev:bot", "uid": "u-1",
               "groups": ["system:serviceaccounts", "system:serviceaccounts:dev", "system:authenticated"],
               "extra": {"example.org/scope": ["s1"]}})
    );
    // The impersonated user is authorized for the request itself.
    let res = raw_with(
        &admin,
        "GET",
        "/api/v1/namespaces/dev/configmaps",
        &[("Impersonate-User", "bob")],
    )
    .await;
    forbidden(
        &res,
        r#"configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "dev""#,
        json!({"kind": "configmaps"}),
    );
}
