//! Service-account tokens with real clients: `kubectl create token`, then
//! kubectl (1.33 and 1.27) with only that token lists things and
//! `kubectl auth whoami` names the service account; the token is refused
//! once its ServiceAccount is deleted. kube-rs authenticates with a
//! TokenRequest token (refused after its bound Pod is deleted) and with a
//! legacy Secret token the `serviceaccount-token` controller filled;
//! TokenReview and the OIDC documents answer as kube's.
//!
//! Each test gives its service account explicit access (a ClusterRole and
//! ClusterRoleBinding of its own), so the tests hold under RBAC too.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use ferrokube_testkit as common;

use common::{suffix, TestEnv};
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::Api;
use serde_json::{json, Value};

use ferrokube_testkit::per_version;

per_version!(kubectl_create_token_then_use_it);

/// A ClusterRole letting `namespace/name` read ConfigMaps, Pods and
/// ServiceAccounts and create SelfSubjectReviews, bound to it.
fn grant(env: &TestEnv, namespace: &str, name: &str) -> String {
    let role = format!("sa-tokens-{}", suffix());
    let manifest = format!(
        r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {role}
rules:
- apiGroups: [""]
  resources: [configmaps, pods, serviceaccounts]
  verbs: [get, list, watch]
- apiGroups: [authentication.k8s.io]
  resources: [selfsubjectreviews]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {role}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {role}
subjects:
- kind: ServiceAccount
  name: {name}
  namespace: {namespace}
"#
    );
    let (status, out, err) = env.kubectl_stdin("1.33", &["apply", "-f", "-"], Some(&manifest));
    assert!(status.success(), "{out}\n{err}");
    role
}

/// A kubeconfig for the same server and CA without credentials (the
/// admin's client certificate would authenticate first, as in kube).
fn server_only_kubeconfig(env: &TestEnv) -> tempfile::NamedTempFile {
    let view = |path: &str| {
        env.kubectl_ok(
            "1.33",
            &[
                "config",
                "view",
                "--raw",
                "--minify",
                "-o",
                &format!("jsonpath={{{path}}}"),
            ],
        )
    };
    let server = view(".clusters[0].cluster.server");
    let ca = view(".clusters[0].cluster.certificate-authority-data");
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        file.path(),
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\nusers:\n- name: u\n  user: {{}}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    file
}

async fn kubectl_create_token_then_use_it(version: &str) {
    let env = TestEnv::new("sa-kubectl").await;
    let ns = env.ns.clone();
    env.kubectl_ok(version, &["create", "serviceaccount", "bot", "-n", &ns]);
    let role = grant(&env, &ns, "bot");
    let token = env.kubectl_ok(
        version,
        &["create", "token", "bot", "-n", &ns, "--duration=20m"],
    );
    let token = token.trim();
    assert_eq!(token.split('.').count(), 3, "{token}");
    let config = server_only_kubeconfig(&env);
    let as_bot = |args: &[&str]| {
        let mut all = vec![
            "--kubeconfig",
            config.path().to_str().unwrap(),
            "--token",
            token,
        ];
        all.extend_from_slice(args);
        env.kubectl(version, &all)
    };
    let (status, out, err) = as_bot(&["get", "serviceaccounts", "-n", &ns, "-o", "name"]);
    assert!(status.success(), "{out}\n{err}");
    assert!(out.contains("serviceaccount/bot"), "{out}");

    // Who am I: the service account (v1 for 1.33, v1beta1 for 1.27).
    // kube 1.34 serves v1beta1 only with --runtime-config.
    let external = common::external_kubeconfig().is_some();
    if !(external && version == "1.27") {
        let (status, out, err) = as_bot(&["auth", "whoami", "-o", "json"]);
        assert!(status.success(), "{out}\n{err}");
        let whoami: Value = serde_json::from_str(&out).unwrap();
        let user = &whoami["status"]["userInfo"];
        assert_eq!(user["username"], format!("system:serviceaccount:{ns}:bot"));
        assert_eq!(
            user["groups"],
            json!([
                "system:serviceaccounts",
                format!("system:serviceaccounts:{ns}"),
                "system:authenticated"
            ])
        );
        assert!(
            user["extra"]["authentication.kubernetes.io/credential-id"][0]
                .as_str()
                .is_some_and(|id| id.starts_with("JTI="))
        );
    }

    // The ServiceAccount goes: its token stops working.
    env.kubectl_ok(version, &["delete", "serviceaccount", "bot", "-n", &ns]);
    let (status, out, err) = as_bot(&["get", "configmaps", "-n", &ns]);
    assert!(!status.success(), "{out}\n{err}");
    assert!(
        err.contains("Unauthorized") || err.contains("must be logged in"),
        "{err}"
    );
    env.kubectl_ok(
        version,
        &["delete", "clusterrole,clusterrolebinding", &role],
    );
}

async fn create_service_account(env: &TestEnv, name: &str) {
    let created = env
        .raw(
            "POST",
            &format!("/api/v1/namespaces/{}/serviceaccounts", env.ns),
            Some("application/json"),
            serde_json::to_vec(&json!({"metadata": {"name": name}})).unwrap(),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
}

async fn token_request(env: &TestEnv, name: &str, spec: Value) -> Value {
    let response = env
        .raw(
            "POST",
            &format!("/api/v1/namespaces/{}/serviceaccounts/{name}/token", env.ns),
            Some("application/json"),
            serde_json::to_vec(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}))
                .unwrap(),
        )
        .await;
    assert_eq!(response.status, 201, "{}", response.body);
    response.json()
}

fn api_status(result: Result<impl std::fmt::Debug, kube::Error>) -> u16 {
    match result {
        Err(kube::Error::Api(status)) => status.code,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn kube_rs_with_a_pod_bound_token() {
    let env = TestEnv::new("sa-kube-rs").await;
    create_service_account(&env, "runner").await;
    let role = grant(&env, &env.ns, "runner");
    let pods: Api<Pod> = env.api();
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "worker"},
        "spec": {"serviceAccountName": "runner", "containers": [{"name": "c", "image": "busybox"}]}
    }))
    .unwrap();
    let pod = pods.create(&PostParams::default(), &pod).await.unwrap();
    let uid = pod.metadata.uid.clone().unwrap();
    let answer = token_request(
        &env,
        "runner",
        json!({"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "worker", "uid": uid}}),
    )
    .await;
    assert_eq!(answer["spec"]["expirationSeconds"], 3600);
    let token = answer["status"]["token"].as_str().unwrap();

    let as_runner = env.client_with_token(Some(token)).await;
    let configmaps: Api<ConfigMap> = Api::namespaced(as_runner.clone(), &env.ns);
    let listed = configmaps.list(&ListParams::default()).await.unwrap();
    assert!(listed.items.len() <= 1);

    // TokenReview says who it is, with the pod.
    let review = env
        .raw(
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            Some("application/json"),
            serde_json::to_vec(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})).unwrap(),
        )
        .await;
    assert_eq!(review.status, 201, "{}", review.body);
    let status = &review.json()["status"];
    assert_eq!(status["authenticated"], true);
    assert_eq!(
        status["user"]["username"],
        format!("system:serviceaccount:{}:runner", env.ns)
    );
    assert_eq!(
        status["user"]["extra"]["authentication.kubernetes.io/pod-name"],
        json!(["worker"])
    );

    // The pod goes: so does the token.
    pods.delete("worker", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    assert_eq!(
        api_status(configmaps.list(&ListParams::default()).await),
        401
    );
    env.kubectl_ok("1.33", &["delete", "clusterrole,clusterrolebinding", &role]);
}

#[tokio::test]
async fn legacy_secret_tokens_are_filled_and_accepted() {
    let env = TestEnv::new("sa-legacy").await;
    create_service_account(&env, "old-school").await;
    let role = grant(&env, &env.ns, "old-school");
    let secrets: Api<Secret> = env.api();
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "old-school-token", "annotations": {"kubernetes.io/service-account.name": "old-school"}},
        "type": "kubernetes.io/service-account-token"
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let mut filled = None;
    for _ in 0..200 {
        let secret = secrets.get("old-school-token").await.unwrap();
        let data = secret.data.unwrap_or_default();
        if let (Some(token), Some(ca), Some(namespace)) =
            (data.get("token"), data.get("ca.crt"), data.get("namespace"))
        {
            assert_eq!(namespace.0, env.ns.as_bytes());
            assert!(String::from_utf8_lossy(&ca.0).contains("BEGIN CERTIFICATE"));
            let annotations = secret.metadata.annotations.unwrap_or_default();
            assert!(annotations.contains_key("kubernetes.io/service-account.uid"));
            filled = Some(String::from_utf8(token.0.clone()).unwrap());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let token = filled.expect("the serviceaccount-token controller fills the Secret");
    let as_old_school = env.client_with_token(Some(&token)).await;
    let configmaps: Api<ConfigMap> = Api::namespaced(as_old_school, &env.ns);
    configmaps.list(&ListParams::default()).await.unwrap();

    // The Secret deleted: the token is refused.
    secrets
        .delete("old-school-token", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(
        api_status(configmaps.list(&ListParams::default()).await),
        401
    );
    env.kubectl_ok("1.33", &["delete", "clusterrole,clusterrolebinding", &role]);
}

#[tokio::test]
async fn token_request_is_listed_and_oidc_documents_are_served() {
    let env = TestEnv::new("sa-oidc").await;
    let resources = env.raw("GET", "/api/v1", None, Vec::new()).await.json();
    let token = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "serviceaccounts/token")
        .cloned()
        .unwrap();
    assert_eq!(token["verbs"], json!(["create"]));
    assert_eq!(token["kind"], "TokenRequest");
    assert_eq!(token["group"], "authentication.k8s.io");

    let config = env
        .raw("GET", "/.well-known/openid-configuration", None, Vec::new())
        .await;
    assert_eq!(config.status, 200);
    assert_eq!(config.header("content-type"), "application/json");
    let config = config.json();
    assert!(config["issuer"].as_str().unwrap().starts_with("https://"));
    assert!(config["jwks_uri"]
        .as_str()
        .unwrap()
        .ends_with("/openid/v1/jwks"));
    assert_eq!(config["response_types_supported"], json!(["id_token"]));
    assert_eq!(config["subject_types_supported"], json!(["public"]));
    let jwks = env.raw("GET", "/openid/v1/jwks", None, Vec::new()).await;
    assert_eq!(jwks.header("content-type"), "application/jwk-set+json");
    let keys = jwks.json()["keys"].as_array().unwrap().clone();
    assert!(!keys.is_empty());
    for key in &keys {
        assert_eq!(key["use"], "sig");
        assert!(config["id_token_signing_alg_values_supported"]
            .as_array()
            .unwrap()
            .contains(&key["alg"]));
    }
    // A token's kid is one of the published keys.
    create_service_account(&env, "kid").await;
    let answer = token_request(&env, "kid", json!({})).await;
    let token = answer["status"]["token"].as_str().unwrap();
    use base64::Engine;
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token.split('.').next().unwrap())
        .unwrap();
    let header: Value = serde_json::from_slice(&header).unwrap();
    assert!(keys.iter().any(|key| key["kid"] == header["kid"]));
}

/// A TokenRequest through `client` for `default/<name>` (created first).
async fn token_on(client: &kube::Client, name: &str) -> Value {
    let created = common::raw_request(
        client,
        "POST",
        "/api/v1/namespaces/default/serviceaccounts",
        Some("application/json"),
        serde_json::to_vec(&json!({"metadata": {"name": name}})).unwrap(),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let answer = common::raw_request(
        client,
        "POST",
        &format!("/api/v1/namespaces/default/serviceaccounts/{name}/token"),
        Some("application/json"),
        serde_json::to_vec(&json!({"spec": {}})).unwrap(),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    answer.json()
}

/// TokenReview of `token` through `client`.
async fn review(client: &kube::Client, token: &str) -> Value {
    let review = common::raw_request(
        client,
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        Some("application/json"),
        serde_json::to_vec(&json!({"spec": {"token": token}})).unwrap(),
    )
    .await;
    assert_eq!(review.status, 201, "{}", review.body);
    review.json()
}

#[tokio::test]
async fn the_generated_key_is_kept_across_restarts() {
    if common::skip_if_external("starts its own servers") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let token = {
        let server = common::TestServer::start_in(dir.path(), false);
        let answer = token_on(&server.client().await, "kept").await;
        answer["status"]["token"].as_str().unwrap().to_string()
    };
    let server = common::TestServer::start_in(dir.path(), false);
    let review = review(&server.client().await, &token).await;
    assert_eq!(review["status"]["authenticated"], true, "{review}");
    assert_eq!(
        review["status"]["user"]["username"],
        "system:serviceaccount:default:kept"
    );
}

#[tokio::test]
async fn flags_name_the_key_issuers_and_audiences() {
    if common::skip_if_external("starts its own servers") {
        return;
    }
    let key = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/serviceaccount/testdata/rsa-pkcs1.pem"
    );
    let server = common::TestServer::start_with(&[
        "--service-account-signing-key-file",
        key,
        "--service-account-issuer",
        "https://issuer.example",
        "--service-account-issuer",
        "https://old-issuer.example",
        "--api-audiences",
        "aud-a,aud-b",
        "--service-account-max-token-expiration",
        "2h",
    ]);
    let client = server.client().await;
    let answer = token_on(&client, "flagged").await;
    assert_eq!(answer["spec"]["audiences"], json!(["aud-a", "aud-b"]));
    let token = answer["status"]["token"].as_str().unwrap();
    let review = review(&client, token).await;
    assert_eq!(review["status"]["authenticated"], true, "{review}");
    assert_eq!(review["status"]["audiences"], json!(["aud-a", "aud-b"]));

    let config = common::raw_request(
        &client,
        "GET",
        "/.well-known/openid-configuration",
        None,
        Vec::new(),
    )
    .await
    .json();
    assert_eq!(config["issuer"], "https://issuer.example");
    assert_eq!(
        config["id_token_signing_alg_values_supported"],
        json!(["RS256"])
    );
    let jwks = common::raw_request(&client, "GET", "/openid/v1/jwks", None, Vec::new())
        .await
        .json();
    let kid = include_str!("../src/serviceaccount/testdata/rsa-kid.txt").trim();
    assert_eq!(jwks["keys"][0]["kid"], kid);
    assert_eq!(jwks["keys"][0]["kty"], "RSA");

    // Longer than --service-account-max-token-expiration: shortened, with a warning.
    let long = common::raw_request(
        &client,
        "POST",
        "/api/v1/namespaces/default/serviceaccounts/flagged/token",
        Some("application/json"),
        serde_json::to_vec(&json!({"spec": {"expirationSeconds": 86400}})).unwrap(),
    )
    .await;
    assert_eq!(long.status, 201, "{}", long.body);
    assert_eq!(long.json()["spec"]["expirationSeconds"], 7200);
    assert_eq!(
        long.header("warning"),
        "299 - \"requested expiration of 86400 seconds shortened to 7200 seconds\""
    );
}

/// TokenRequest bodies get `fieldValidation` as every create does
/// (`handlers/create.go`): unknown and duplicate fields warn by default,
/// fail with Strict and pass silently with Ignore.
#[tokio::test]
async fn token_request_bodies_are_field_validated() {
    let env = TestEnv::new("sa-fields").await;
    create_service_account(&env, "checked").await;
    let path = format!(
        "/api/v1/namespaces/{}/serviceaccounts/checked/token",
        env.ns
    );
    let body = br#"{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"expirationSeconds": 700, "expirationSeconds": 800, "bogus": 1}}"#
        .to_vec();
    let post = |query: &'static str| {
        let path = format!("{path}{query}");
        let body = body.clone();
        let env = &env;
        async move { env.raw("POST", &path, Some("application/json"), body).await }
    };

    let warned = post("").await;
    assert_eq!(warned.status, 201, "{}", warned.body);
    // One Warning header per problem.
    let warning = warned
        .headers
        .get_all("warning")
        .iter()
        .map(|value| value.to_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        warning.contains(r#"unknown field \"spec.bogus\""#),
        "{warning}"
    );
    assert!(
        warning.contains(r#"duplicate field \"spec.expirationSeconds\""#),
        "{warning}"
    );
    assert!(warned.json()["status"]["token"].is_string());

    let strict = post("?fieldValidation=Strict").await;
    assert_eq!(strict.status, 400, "{}", strict.body);
    let status = strict.json();
    assert_eq!(status["reason"], "BadRequest");
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            r#"TokenRequest in version "v1" cannot be handled as a TokenRequest: strict decoding error: "#
        ),
        "{message}"
    );
    assert!(
        message.contains(r#"unknown field "spec.bogus""#),
        "{message}"
    );

    let ignored = post("?fieldValidation=Ignore").await;
    assert_eq!(ignored.status, 201, "{}", ignored.body);
    assert_eq!(ignored.header("warning"), "");

    // The create options are validated as kube's `ValidateCreateOptions` does.
    let unsupported = post("?fieldValidation=Loud").await;
    assert_eq!(unsupported.status, 422, "{}", unsupported.body);
    assert_eq!(unsupported.json()["details"]["kind"], "CreateOptions");
}

/// `kube-system/kube-apiserver-legacy-service-account-token-tracking`, as
/// kube-apiserver's legacy-token-tracking controller keeps it: present with
/// a `since` date, and a `since` that does not parse is rewritten with
/// today's date (kubectl 1.33 reads and patches it).
#[tokio::test]
async fn the_legacy_token_tracking_configmap_says_since_when() {
    let env = TestEnv::new("sa-tracking").await;
    let since = |env: &TestEnv| {
        env.kubectl_ok(
            "1.33",
            &[
                "get",
                "configmap",
                "-n",
                "kube-system",
                "kube-apiserver-legacy-service-account-token-tracking",
                "-o",
                "jsonpath={.data.since}",
            ],
        )
    };
    let date = since(&env);
    assert!(is_date(&date), "since: {date:?}");
    if common::external_kubeconfig().is_some() {
        // Rewriting a real cluster's date would restart its tracking.
        return;
    }
    env.kubectl_ok(
        "1.33",
        &[
            "patch",
            "configmap",
            "-n",
            "kube-system",
            "kube-apiserver-legacy-service-account-token-tracking",
            "--type=merge",
            "-p",
            r#"{"data":{"since":"not a date"}}"#,
        ],
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let repaired = since(&env);
        if is_date(&repaired) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "since still {repaired:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `YYYY-MM-DD`.
fn is_date(text: &str) -> bool {
    text.len() == 10
        && text.char_indices().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// A ValidatingAdmissionPolicy on `serviceaccounts/token` and its binding,
/// limited to `ns`: it checks the attributes kube gives the TokenRequest
/// (kind, resource, subresource, the ServiceAccount's name, the object as
/// `TokenREST.Create` completed it) and refuses the audience `forbidden`
/// and tokens longer than two hours.
fn token_policy_manifest(ns: &str) -> String {
    format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: tokens-{ns}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["serviceaccounts/token"]
  matchConditions:
  - name: own-namespace
    expression: "request.namespace == '{ns}'"
  validations:
  - expression: >-
      request.kind.group == 'authentication.k8s.io' && request.kind.version == 'v1' &&
      request.kind.kind == 'TokenRequest' && request.resource.group == '' &&
      request.resource.resource == 'serviceaccounts' && request.subResource == 'token' &&
      request.operation == 'CREATE' && request.name == 'robot' &&
      object.metadata.name == 'robot' && object.metadata.namespace == '{ns}' &&
      object.metadata.uid != '' && size(object.spec.audiences) > 0
    message: "the TokenRequest is not admitted as kube admits it"
  - expression: "!('forbidden' in object.spec.audiences)"
    message: "the forbidden audience is not for tokens"
    reason: Forbidden
  - expression: "object.spec.expirationSeconds <= 7200"
    messageExpression: "'tokens live at most 7200 seconds, not ' + string(object.spec.expirationSeconds)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: tokens-{ns}
spec:
  policyName: tokens-{ns}
  validationActions: [Deny]
"#
    )
}

/// `serviceaccounts/{name}/token` goes through admission as in kube
/// (`TokenREST.Create`'s `createValidation`): kubectl 1.33 `create token`
/// passes the policy, and is refused with the policy's message for a
/// forbidden audience or a long duration; a dry run is admitted as one and
/// still answers with a token (kube's TokenREST does not read `dryRun`).
#[tokio::test]
async fn token_requests_go_through_validating_admission_policies() {
    let env = TestEnv::new("sa-admit").await;
    let ns = env.ns.clone();
    create_service_account(&env, "robot").await;
    let manifest = token_policy_manifest(&ns);
    let (status, out, err) = env.kubectl_stdin("1.33", &["apply", "-f", "-"], Some(&manifest));
    assert!(status.success(), "{out}\n{err}");

    let token = env.kubectl_ok("1.33", &["create", "token", "robot", "-n", &ns]);
    assert_eq!(token.trim().split('.').count(), 3, "{token}");

    let (status, out, err) = env.kubectl(
        "1.33",
        &[
            "create",
            "token",
            "robot",
            "-n",
            &ns,
            "--audience",
            "forbidden",
        ],
    );
    assert!(!status.success(), "{out}");
    assert!(
        err.contains(&format!(
            "serviceaccounts \"robot\" is forbidden: ValidatingAdmissionPolicy 'tokens-{ns}' with binding 'tokens-{ns}' denied request: the forbidden audience is not for tokens"
        )),
        "{err}"
    );
    let (status, out, err) = env.kubectl(
        "1.33",
        &["create", "token", "robot", "-n", &ns, "--duration", "3h"],
    );
    assert!(!status.success(), "{out}");
    assert!(
        err.contains("denied request: tokens live at most 7200 seconds, not 10800"),
        "{err}"
    );

    // A dry run is admitted (and refused) like the request itself.
    let path = format!("/api/v1/namespaces/{ns}/serviceaccounts/robot/token?dryRun=All");
    let body = |audience: &str| {
        serde_json::to_vec(
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"audiences": [audience]}}),
        )
        .unwrap()
    };
    let refused = env
        .raw("POST", &path, Some("application/json"), body("forbidden"))
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    let issued = env
        .raw("POST", &path, Some("application/json"), body("vault"))
        .await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    let issued = issued.json();
    assert_eq!(issued["spec"]["audiences"], json!(["vault"]));
    assert_eq!(issued["metadata"]["name"], "robot");
    assert!(issued["status"]["token"]
        .as_str()
        .is_some_and(|token| !token.is_empty()));

    env.kubectl_ok(
        "1.33",
        &[
            "delete",
            "validatingadmissionpolicy,validatingadmissionpolicybinding",
            &format!("tokens-{ns}"),
        ],
    );
}

const LAST_USED: &str = "kubernetes.io/legacy-token-last-used";
const INVALID_SINCE: &str = "kubernetes.io/legacy-token-invalid-since";

/// Creates the legacy token Secret `secret` of ServiceAccount `account`
/// and returns the token the `serviceaccount-token` controller puts in it.
async fn filled_secret_token(secrets: &Api<Secret>, account: &str, secret: &str) -> String {
    let object: Secret = serde_json::from_value(json!({
        "metadata": {"name": secret, "annotations": {"kubernetes.io/service-account.name": account}},
        "type": "kubernetes.io/service-account-token"
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    for _ in 0..200 {
        let data = secrets.get(secret).await.unwrap().data.unwrap_or_default();
        if let Some(token) = data.get("token") {
            return String::from_utf8(token.0.clone()).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the serviceaccount-token controller never filled {secret}");
}

/// Today's UTC date, as kube formats it (`2006-01-02`).
fn today() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    ferrokube::serviceaccount::authenticator::utc_date(i64::try_from(now).unwrap())
}

/// kube 1.34's `legacyValidator.Validate`: a legacy Secret token that
/// authenticates labels its Secret `kubernetes.io/legacy-token-last-used:
/// <today>` before the request goes on (kube-rs uses the token, kubectl
/// 1.33 `get secret -L` shows the date); a Secret its ServiceAccount lists
/// (auto-generated) makes kubectl print kube's warning, a manual one does
/// not; the legacy token cleaner's `legacy-token-invalid-since` label makes
/// it 401 (TokenReview says why) until the label is removed.
#[tokio::test]
async fn legacy_token_use_is_tracked_and_invalidated_tokens_are_refused() {
    let env = TestEnv::new("sa-track").await;
    let ns = env.ns.clone();
    create_service_account(&env, "tracked").await;
    let role = grant(&env, &ns, "tracked");
    let secrets: Api<Secret> = env.api();
    let token = filled_secret_token(&secrets, "tracked", "tracked-token").await;
    let labels = |secret: &Secret| secret.metadata.labels.clone().unwrap_or_default();
    assert!(!labels(&secrets.get("tracked-token").await.unwrap()).contains_key(LAST_USED));

    let before = today();
    let as_tracked = env.client_with_token(Some(&token)).await;
    let configmaps: Api<ConfigMap> = Api::namespaced(as_tracked, &ns);
    configmaps.list(&ListParams::default()).await.unwrap();
    let after = today();
    let date = labels(&secrets.get("tracked-token").await.unwrap())
        .get(LAST_USED)
        .cloned()
        .unwrap_or_default();
    assert!(date == before || date == after, "{date:?}");
    let column = env.kubectl_ok(
        "1.33",
        &[
            "get",
            "secret",
            "tracked-token",
            "-n",
            &ns,
            "-L",
            LAST_USED,
            "--no-headers",
        ],
    );
    assert!(column.trim_end().ends_with(&date), "{column}");
    // kube's counter of manually created legacy tokens used (`/metrics`).
    let metrics = env.kubectl_ok("1.33", &["get", "--raw", "/metrics"]);
    let manual_uses: u64 = metrics
        .lines()
        .find_map(|line| line.strip_prefix("serviceaccount_legacy_manual_token_uses_total "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_default();
    assert!(manual_uses >= 1, "{metrics}");

    // kubectl with the token: a manual token, no warning; once the
    // ServiceAccount lists the Secret, kube's warning on every request.
    let config = server_only_kubeconfig(&env);
    let as_tracked = |args: &[&str]| {
        let mut all = vec![
            "--kubeconfig",
            config.path().to_str().unwrap(),
            "--token",
            &token,
        ];
        all.extend_from_slice(args);
        env.kubectl("1.33", &all)
    };
    let (status, out, err) = as_tracked(&["get", "configmaps", "-n", &ns]);
    assert!(status.success(), "{out}\n{err}");
    assert!(!err.contains("Warning:"), "{err}");
    env.kubectl_ok(
        "1.33",
        &[
            "patch",
            "serviceaccount",
            "tracked",
            "-n",
            &ns,
            "--type=merge",
            "-p",
            r#"{"secrets":[{"name":"tracked-token"}]}"#,
        ],
    );
    let (status, out, err) = as_tracked(&["get", "configmaps", "-n", &ns]);
    assert!(status.success(), "{out}\n{err}");
    assert!(
        err.contains("Warning: Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens."),
        "{err}"
    );

    // Marked invalid by the legacy token cleaner: refused, and TokenReview says why.
    let mark = format!("{INVALID_SINCE}=2025-01-01");
    env.kubectl_ok(
        "1.33",
        &["label", "secret", "tracked-token", "-n", &ns, &mark],
    );
    let (status, out, err) = as_tracked(&["get", "configmaps", "-n", &ns]);
    assert!(!status.success(), "{out}");
    assert!(
        err.contains("Unauthorized") || err.contains("must be logged in"),
        "{err}"
    );
    let review = env
        .raw(
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            Some("application/json"),
            serde_json::to_vec(
                &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                "spec": {"token": token}}),
            )
            .unwrap(),
        )
        .await;
    assert_eq!(review.status, 201, "{}", review.body);
    let review = review.json();
    assert_eq!(review["status"]["authenticated"], Value::Null);
    assert_eq!(
        review["status"]["error"],
        format!("the token in secret {ns}/tracked-token for service account {ns}/tracked has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '{INVALID_SINCE}' label from the secret to temporarily allow use of this token")
    );
    let unmark = format!("{INVALID_SINCE}-");
    env.kubectl_ok(
        "1.33",
        &["label", "secret", "tracked-token", "-n", &ns, &unmark],
    );
    let (status, out, err) = as_tracked(&["get", "configmaps", "-n", &ns]);
    assert!(status.success(), "{out}\n{err}");
    env.kubectl_ok("1.33", &["delete", "clusterrole,clusterrolebinding", &role]);
}

/// `--service-account-lookup=false`: a legacy token is accepted on its
/// signature and claims alone, its Secret deleted or not, and nothing is
/// tracked.
#[tokio::test]
async fn without_service_account_lookup_a_legacy_token_outlives_its_secret() {
    if common::skip_if_external("without_service_account_lookup_a_legacy_token_outlives_its_secret")
    {
        return;
    }
    let server = common::TestServer::start_with(&["--service-account-lookup=false"]);
    let admin = server.client().await;
    let ns = format!("sa-nolookup-{}", suffix());
    common::create_namespace(&admin, &ns).await;
    let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> =
        Api::namespaced(admin.clone(), &ns);
    accounts
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "free"}})).unwrap(),
        )
        .await
        .unwrap();
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), &ns);
    let token = filled_secret_token(&secrets, "free", "free-token").await;
    let mut config = common::config_from(&server.kubeconfig).await;
    config.auth_info = Default::default();
    config.auth_info.token = Some(token.clone().into());
    let as_free = kube::Client::try_from(config).unwrap();
    let whoami = || async {
        common::raw_request(
            &as_free,
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            Some("application/json"),
            serde_json::to_vec(
                &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
            )
            .unwrap(),
        )
        .await
    };
    let answer = whoami().await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    assert_eq!(
        answer.json()["status"]["userInfo"]["username"],
        format!("system:serviceaccount:{ns}:free")
    );
    let secret = secrets.get("free-token").await.unwrap();
    assert!(!secret
        .metadata
        .labels
        .unwrap_or_default()
        .contains_key(LAST_USED));
    secrets
        .delete("free-token", &DeleteParams::default())
        .await
        .unwrap();
    let answer = whoami().await;
    assert_eq!(answer.status, 201, "{}", answer.body);
}
