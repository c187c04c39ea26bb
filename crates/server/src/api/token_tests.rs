//! Service-account tokens through `Api::handle`: TokenRequest, the
//! authenticator's checks (expiry, audience, the ServiceAccount and bound
//! objects still there), legacy Secret tokens, TokenReview and
//! SelfSubjectReview.

use std::sync::Arc;

use base64::Engine;
use serde_json::{json, Value};

use super::handler_tests::{admin, api};
use super::{Api, ApiRequest, ApiResponse};
use crate::authn::{TokenAuthenticator, TokenOutcome, UserInfo};
use crate::route::Method;
use crate::serviceaccount::claims::{legacy_claims, ObjectRef};
use crate::serviceaccount::ServiceAccountAuthenticator;

async fn call_as(
    api: &Arc<Api>,
    user: Option<UserInfo>,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> ApiResponse {
    let mut request = ApiRequest::new(method, path);
    request.user = user;
    if let Some(body) = body {
        request.body = bytes::Bytes::from(serde_json::to_vec(&body).unwrap_or_default());
        request.headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
    }
    api.handle(request).await
}

async fn call(api: &Arc<Api>, method: Method, path: &str, body: Option<Value>) -> ApiResponse {
    call_as(api, admin(), method, path, body).await
}

async fn create(api: &Arc<Api>, path: &str, body: Value) -> Value {
    let response = call(api, Method::Post, path, Some(body)).await;
    assert_eq!(response.status, 201, "{}", response.body_json());
    response.body_json()
}

async fn service_account(api: &Arc<Api>, name: &str) -> Value {
    create(
        api,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}),
    )
    .await
}

async fn token_request(api: &Arc<Api>, name: &str, spec: Value) -> ApiResponse {
    call(
        api,
        Method::Post,
        &format!("/api/v1/namespaces/default/serviceaccounts/{name}/token"),
        Some(
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}),
        ),
    )
    .await
}

async fn token_of(api: &Arc<Api>, name: &str, spec: Value) -> String {
    let response = token_request(api, name, spec).await;
    assert_eq!(response.status, 201, "{}", response.body_json());
    response.body_json()["status"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn authenticate(api: &Api, token: &str) -> Result<UserInfo, String> {
    api.authenticator
        .authenticate_bearer(token, &[])
        .map(|(user, _)| user)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() as i64)
}

#[tokio::test]
async fn token_request_answers_a_token_that_authenticates_its_service_account() {
    let api = api().await;
    let sa = service_account(&api, "bot").await;
    let response = token_request(&api, "bot", json!({})).await;
    assert_eq!(response.status, 201);
    let review = response.body_json();
    assert_eq!(review["kind"], "TokenRequest");
    assert_eq!(review["metadata"]["name"], "bot");
    assert_eq!(review["metadata"]["namespace"], "default");
    assert_eq!(review["spec"]["expirationSeconds"], 3600);
    assert_eq!(
        review["spec"]["audiences"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    assert!(review["spec"].get("boundObjectRef").is_none());
    assert!(review["status"]["expirationTimestamp"].is_string());
    let token = review["status"]["token"].as_str().unwrap_or_default();
    let user = authenticate(&api, token).unwrap();
    assert_eq!(user.name, "system:serviceaccount:default:bot");
    assert_eq!(user.uid, sa["metadata"]["uid"].as_str().unwrap_or_default());
    assert_eq!(
        user.groups,
        [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]
    );
    assert!(user.extra["authentication.kubernetes.io/credential-id"][0].starts_with("JTI="));

    // Deleted and recreated (another uid): the token no longer works.
    let deleted = call(
        &api,
        Method::Delete,
        "/api/v1/namespaces/default/serviceaccounts/bot",
        None,
    )
    .await;
    assert_eq!(deleted.status, 200);
    assert_eq!(
        authenticate(&api, token).unwrap_err(),
        "serviceaccounts \"bot\" not found"
    );
    let again = service_account(&api, "bot").await;
    assert_eq!(
        authenticate(&api, token).unwrap_err(),
        format!(
            "service account UID ({}) does not match claim ({})",
            again["metadata"]["uid"].as_str().unwrap_or_default(),
            sa["metadata"]["uid"].as_str().unwrap_or_default()
        )
    );
}

#[tokio::test]
async fn token_request_errors_are_kubes() {
    let api = api().await;
    service_account(&api, "bot").await;
    let missing = token_request(&api, "nobody", json!({})).await;
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.body_json()["message"],
        "serviceaccounts \"nobody\" not found"
    );
    let short = token_request(&api, "bot", json!({"expirationSeconds": 60})).await;
    assert_eq!(short.status, 422);
    assert_eq!(
        short.body_json()["message"],
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"
    );
    let long = token_request(&api, "bot", json!({"expirationSeconds": 1_i64 << 33})).await;
    assert_eq!(long.status, 422);
    assert_eq!(
        long.body_json()["details"]["causes"][0]["message"],
        "Invalid value: 8589934592: may not specify a duration larger than 2^32 seconds"
    );
    let kind = token_request(
        &api,
        "bot",
        json!({"boundObjectRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}}),
    )
    .await;
    assert_eq!(kind.status, 400);
    assert_eq!(
        kind.body_json()["message"],
        "cannot bind token to object of type apps/v1, Kind=Deployment"
    );
    let no_pod = token_request(
        &api,
        "bot",
        json!({"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p"}}),
    )
    .await;
    assert_eq!(no_pod.status, 404);
    assert_eq!(no_pod.body_json()["message"], "pods \"p\" not found");
    let name = call(
        &api,
        Method::Post,
        "/api/v1/namespaces/default/serviceaccounts/bot/token",
        Some(json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {"name": "other"}})),
    )
    .await;
    assert_eq!(name.status, 422);
    assert_eq!(
        name.body_json()["message"],
        "TokenRequest.authentication.k8s.io \"bot\" is invalid: metadata.name: Invalid value: \"other\": must match the service account name if specified"
    );
}

/// `handlers/create.go` and `TokenREST.Create` of 1.34: the namespace is
/// settled by the handler (a body naming another is a 400), the request
/// keeps its system fields and gets the ServiceAccount's uid, another uid
/// is a conflict (`TokenRequestServiceAccountUIDValidation`), and the issued
/// token's credential id is an audit annotation.
#[tokio::test]
async fn token_request_metadata_is_settled_as_kube_settles_it() {
    let api = api().await;
    let sa = service_account(&api, "bot").await;
    let sa_uid = sa["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let path = "/api/v1/namespaces/default/serviceaccounts/bot/token";
    let request = |metadata: Value| {
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "metadata": metadata, "spec": {}})
    };
    let elsewhere = call(
        &api,
        Method::Post,
        path,
        Some(request(json!({"namespace": "other"}))),
    )
    .await;
    assert_eq!(elsewhere.status, 400);
    assert_eq!(
        elsewhere.body_json()["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    let other_uid = call(
        &api,
        Method::Post,
        path,
        Some(request(json!({"uid": "not-the-uid"}))),
    )
    .await;
    assert_eq!(other_uid.status, 409);
    assert_eq!(
        other_uid.body_json()["message"],
        format!("Operation cannot be fulfilled on TokenRequest.authentication.k8s.io \"bot\": the UID in the token request (not-the-uid) does not match the UID of the service account ({sa_uid})")
    );
    let same_uid = call(
        &api,
        Method::Post,
        path,
        Some(request(json!({"uid": sa_uid, "labels": {"a": "b"}}))),
    )
    .await;
    assert_eq!(same_uid.status, 201, "{}", same_uid.body_json());
    let issued = call(&api, Method::Post, path, Some(request(json!({})))).await;
    assert_eq!(issued.status, 201);
    assert!(issued.audit_annotations.iter().any(|(key, value)| key
        == "authentication.kubernetes.io/issued-credential-id"
        && value.starts_with("JTI=")));
    let issued = issued.body_json();
    assert_eq!(issued["metadata"]["uid"], json!(sa_uid));
    assert_eq!(issued["metadata"]["name"], "bot");
    assert_eq!(issued["metadata"]["namespace"], "default");
    assert_eq!(issued["spec"]["expirationSeconds"], 3600);
    // Go omits an unset `boundObjectRef`.
    assert!(issued["spec"].get("boundObjectRef").is_none());
    let labelled = same_uid.body_json();
    assert_eq!(labelled["metadata"]["labels"], json!({"a": "b"}));

    // A dry run is answered with a token, as kube's TokenREST answers it.
    let dry = call(
        &api,
        Method::Post,
        &format!("{path}?dryRun=All"),
        Some(request(json!({}))),
    )
    .await;
    assert_eq!(dry.status, 201);
    let token = dry.body_json()["status"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        authenticate(&api, &token).unwrap().name,
        "system:serviceaccount:default:bot"
    );
}

#[tokio::test]
async fn pod_bound_tokens_end_with_their_pod() {
    let api = api().await;
    service_account(&api, "bot").await;
    let node = create(
        &api,
        "/api/v1/nodes",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
    )
    .await;
    let pod = create(
        &api,
        "/api/v1/namespaces/default/pods",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"serviceAccountName": "bot", "nodeName": "n1",
                        "containers": [{"name": "c", "image": "x"}]}}),
    )
    .await;
    let pod_uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    // Another service account's pod cannot be bound.
    service_account(&api, "other").await;
    let wrong = token_request(
        &api,
        "other",
        json!({"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p"}}),
    )
    .await;
    assert_eq!(wrong.status, 400);
    assert_eq!(
        wrong.body_json()["message"],
        "cannot bind token for serviceaccount \"other\" to pod running with different serviceaccount name."
    );
    let stale = token_request(
        &api,
        "bot",
        json!({"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "old"}}),
    )
    .await;
    assert_eq!(stale.status, 409);
    assert_eq!(
        stale.body_json()["message"],
        "Operation cannot be fulfilled on Pod \"p\": the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated"
    );
    let token = token_of(
        &api,
        "bot",
        json!({"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": pod_uid}}),
    )
    .await;
    // kubelet's 3607 s: valid a year, warning after 3607 s (`warnafter`).
    let kubelet = token_request(
        &api,
        "bot",
        json!({"expirationSeconds": 3607, "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p"}}),
    )
    .await
    .body_json();
    assert_eq!(kubelet["spec"]["expirationSeconds"], 3607);
    let payload = kubelet["status"]["token"]
        .as_str()
        .and_then(|token| token.split('.').nth(1))
        .and_then(|payload| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(payload)
                .ok()
        })
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .unwrap_or_default();
    let issued = payload["iat"].as_i64().unwrap_or_default();
    assert_eq!(payload["exp"].as_i64(), Some(issued + 365 * 24 * 3600));
    assert_eq!(
        payload["kubernetes.io"]["warnafter"].as_i64(),
        Some(issued + 3607)
    );
    assert_eq!(payload["kubernetes.io"]["pod"]["name"], "p");
    assert_eq!(payload["kubernetes.io"]["node"]["name"], "n1");
    let user = authenticate(&api, &token).unwrap();
    assert_eq!(user.extra["authentication.kubernetes.io/pod-name"], ["p"]);
    assert_eq!(
        user.extra["authentication.kubernetes.io/pod-uid"],
        [pod_uid]
    );
    assert_eq!(user.extra["authentication.kubernetes.io/node-name"], ["n1"]);
    assert_eq!(
        user.extra["authentication.kubernetes.io/node-uid"],
        [node["metadata"]["uid"].as_str().unwrap_or_default()]
    );
    let deleted = call(
        &api,
        Method::Delete,
        "/api/v1/namespaces/default/pods/p?gracePeriodSeconds=0",
        None,
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body_json());
    assert_eq!(
        authenticate(&api, &token).unwrap_err(),
        "service account token has been invalidated"
    );

    // Node- and Secret-bound tokens end with their object too.
    let node_token = token_of(
        &api,
        "bot",
        json!({"boundObjectRef": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}),
    )
    .await;
    assert!(authenticate(&api, &node_token).is_ok());
    create(
        &api,
        "/api/v1/namespaces/default/secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
    )
    .await;
    let secret_token = token_of(
        &api,
        "bot",
        json!({"boundObjectRef": {"apiVersion": "v1", "kind": "Secret", "name": "s"}}),
    )
    .await;
    assert!(authenticate(&api, &secret_token).is_ok());
    call(&api, Method::Delete, "/api/v1/nodes/n1", None).await;
    call(
        &api,
        Method::Delete,
        "/api/v1/namespaces/default/secrets/s",
        None,
    )
    .await;
    assert_eq!(
        authenticate(&api, &node_token).unwrap_err(),
        "service account token has been invalidated"
    );
    assert_eq!(
        authenticate(&api, &secret_token).unwrap_err(),
        "service account token has been invalidated"
    );
}

#[tokio::test]
async fn expiry_time_and_audiences_are_checked() {
    let api = api().await;
    let sa = service_account(&api, "bot").await;
    let authenticator =
        ServiceAccountAuthenticator::new(api.service_accounts.clone(), api.store.clone());
    let tokens = &api.service_accounts;
    let claims = |issued_at: i64, lifetime: i64, audiences: &[&str]| {
        crate::serviceaccount::claims::BoundClaims {
            issuer: tokens.issuer().to_string(),
            audiences: audiences.iter().map(|a| a.to_string()).collect(),
            namespace: "default".into(),
            service_account: ObjectRef {
                name: "bot".into(),
                uid: sa["metadata"]["uid"].as_str().unwrap_or_default().into(),
            },
            binding: Default::default(),
            issued_at,
            expires_at: issued_at + lifetime,
            warn_after: None,
            id: "j".into(),
        }
        .to_json()
    };
    let api_audience = tokens.issuer();
    let short = tokens.sign(&claims(now(), 2, &[api_audience])).unwrap();
    let fails_with = |token: &str, at: i64, audiences: &[String]| match authenticator
        .authenticate_at(token, audiences, at)
    {
        TokenOutcome::Failed(message) => message,
        other => panic!("{other:?}"),
    };
    assert!(matches!(
        authenticator.authenticate_at(&short, &[], now()),
        TokenOutcome::Authenticated { .. }
    ));
    // A minute of leeway, then expired.
    assert!(matches!(
        authenticator.authenticate_at(&short, &[], now() + 61),
        TokenOutcome::Authenticated { .. }
    ));
    assert_eq!(
        fails_with(&short, now() + 63, &[]),
        "service account token has expired"
    );
    assert_eq!(
        fails_with(&short, now() - 3600, &[]),
        "service account token is not valid yet"
    );
    // Another audience.
    let vault = tokens.sign(&claims(now(), 600, &["vault"])).unwrap();
    assert_eq!(
        fails_with(&vault, now(), &[]),
        "token audiences [\"vault\"] is invalid for the target audiences [\"https://kubernetes.default.svc.cluster.local\"]"
    );
    match authenticator.authenticate_at(&vault, &["vault".to_string()], now()) {
        TokenOutcome::Authenticated { audiences, .. } => assert_eq!(audiences, ["vault"]),
        other => panic!("{other:?}"),
    }
    // Tampered: a signature of another key, and tokens of other issuers.
    let (other_signer, _) = crate::serviceaccount::Signer::generate().unwrap();
    let forged =
        crate::serviceaccount::jwt::sign(&other_signer, &claims(now(), 600, &[api_audience]))
            .unwrap();
    assert_eq!(
        fails_with(&forged, now(), &[]),
        crate::serviceaccount::jwt::CRYPTO_FAILURE
    );
    let foreign = crate::serviceaccount::jwt::sign(
        tokens.signer(),
        &json!({"iss": "https://elsewhere", "sub": "x"}),
    )
    .unwrap();
    assert_eq!(
        authenticator.authenticate_token(&foreign, &[]),
        TokenOutcome::NotMine
    );
    assert_eq!(
        authenticator.authenticate_token("not-a-jwt", &[]),
        TokenOutcome::NotMine
    );
}

#[tokio::test]
async fn legacy_secret_tokens_are_checked_against_their_secret() {
    let api = api().await;
    let sa = service_account(&api, "old").await;
    let sa_ref = ObjectRef {
        name: "old".into(),
        uid: sa["metadata"]["uid"].as_str().unwrap_or_default().into(),
    };
    let legacy = api
        .service_accounts
        .sign(&legacy_claims("default", &sa_ref, "old-token"))
        .unwrap();
    // No such Secret yet.
    assert_eq!(
        authenticate(&api, &legacy).unwrap_err(),
        "Token has been invalidated"
    );
    let encoded = base64::engine::general_purpose::STANDARD.encode(&legacy);
    create(
        &api,
        "/api/v1/namespaces/default/secrets",
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": "old-token", "annotations": {"kubernetes.io/service-account.name": "old"}},
               "type": "kubernetes.io/service-account-token", "data": {"token": encoded}}),
    )
    .await;
    let user = authenticate(&api, &legacy).unwrap();
    assert_eq!(user.name, "system:serviceaccount:default:old");
    assert!(user.extra.is_empty());
    // A token the Secret does not hold.
    create(
        &api,
        "/api/v1/namespaces/default/secrets",
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": "other", "annotations": {"kubernetes.io/service-account.name": "old"}},
               "type": "kubernetes.io/service-account-token", "data": {"token": "eA=="}}),
    )
    .await;
    let unheld = api
        .service_accounts
        .sign(&legacy_claims("default", &sa_ref, "other"))
        .unwrap();
    assert_eq!(
        authenticate(&api, &unheld).unwrap_err(),
        "Token does not match server's copy"
    );
    // Marked invalid by the legacy token cleaner.
    let mut request = ApiRequest::new(
        Method::Patch,
        "/api/v1/namespaces/default/secrets/old-token",
    );
    request.user = admin();
    request.body = bytes::Bytes::from_static(
        br#"{"metadata":{"labels":{"kubernetes.io/legacy-token-invalid-since":"2025-01-01"}}}"#,
    );
    request.headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/merge-patch+json"),
    );
    assert_eq!(api.handle(request).await.status, 200);
    assert_eq!(
        authenticate(&api, &legacy).unwrap_err(),
        "the token in secret default/old-token for service account default/old has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the 'kubernetes.io/legacy-token-invalid-since' label from the secret to temporarily allow use of this token"
    );
    call(
        &api,
        Method::Delete,
        "/api/v1/namespaces/default/secrets/old-token",
        None,
    )
    .await;
    assert_eq!(
        authenticate(&api, &legacy).unwrap_err(),
        "Token has been invalidated"
    );
}

#[tokio::test]
async fn token_and_self_subject_reviews() {
    let api = api().await;
    service_account(&api, "bot").await;
    let token = token_of(&api, "bot", json!({})).await;
    let review = call(
        &api,
        Method::Post,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        Some(json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})),
    )
    .await;
    assert_eq!(review.status, 201);
    let review = review.body_json();
    assert_eq!(review["status"]["authenticated"], true);
    assert_eq!(
        review["status"]["user"]["username"],
        "system:serviceaccount:default:bot"
    );
    assert_eq!(
        review["status"]["audiences"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let refused = call(
        &api,
        Method::Post,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        Some(json!({"spec": {"token": "nope"}})),
    )
    .await
    .body_json();
    assert_eq!(
        refused["status"],
        json!({"user": {}, "error": "invalid bearer token"})
    );
    let empty = call(
        &api,
        Method::Post,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        Some(json!({"spec": {}})),
    )
    .await;
    assert_eq!(empty.status, 400);
    assert_eq!(
        empty.body_json()["message"],
        "token is required for TokenReview in authentication"
    );

    let user = authenticate(&api, &token).unwrap();
    // What kube's bootstrap `system:basic-user` grants every authenticated user.
    create(
        &api,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({"metadata": {"name": "whoami"}, "rules": [{"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]}]}),
    )
    .await;
    create(
        &api,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json!({"metadata": {"name": "whoami"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "whoami"}, "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}]}),
    )
    .await;
    for version in ["v1", "v1beta1"] {
        let whoami = call_as(
            &api,
            Some(user.clone()),
            Method::Post,
            &format!("/apis/authentication.k8s.io/{version}/selfsubjectreviews"),
            Some(json!({"apiVersion": format!("authentication.k8s.io/{version}"), "kind": "SelfSubjectReview"})),
        )
        .await;
        assert_eq!(whoami.status, 201);
        let whoami = whoami.body_json();
        assert_eq!(
            whoami["apiVersion"],
            format!("authentication.k8s.io/{version}")
        );
        assert_eq!(
            whoami["status"]["userInfo"]["username"],
            "system:serviceaccount:default:bot"
        );
        assert!(whoami["status"]["userInfo"]["extra"]
            ["authentication.kubernetes.io/credential-id"]
            .is_array());
    }
    // v1alpha1 is not served.
    let alpha = call(
        &api,
        Method::Post,
        "/apis/authentication.k8s.io/v1alpha1/selfsubjectreviews",
        Some(json!({})),
    )
    .await;
    assert_eq!(alpha.status, 404);
}

#[tokio::test]
async fn openid_documents() {
    let api = api().await;
    let config = call(&api, Method::Get, "/.well-known/openid-configuration", None).await;
    assert_eq!(config.status, 200);
    assert_eq!(
        config.headers,
        vec![
            (http::header::CONTENT_TYPE, "application/json".to_string()),
            (
                http::header::CACHE_CONTROL,
                "public, max-age=3600".to_string()
            ),
            // API Priority and Fairness names the classifying objects: the
            // imagined mandatory ones (no UID) until the store's are read.
            (
                http::HeaderName::from_static("x-kubernetes-pf-flowschema-uid"),
                String::new()
            ),
            (
                http::HeaderName::from_static("x-kubernetes-pf-prioritylevel-uid"),
                String::new()
            ),
        ]
    );
    let config = config.body_json();
    assert_eq!(config["jwks_uri"], "https://127.0.0.1:6443/openid/v1/jwks");
    let jwks = call(&api, Method::Get, "/openid/v1/jwks", None).await;
    assert_eq!(jwks.headers[0].1, "application/jwk-set+json");
    let jwks = jwks.body_json();
    assert_eq!(
        jwks["keys"][0]["kid"],
        api.service_accounts.keys()[0].key_id()
    );
    let root = call(&api, Method::Get, "/", None).await.body_json();
    let paths = root["paths"].as_array().cloned().unwrap_or_default();
    assert!(paths.contains(&json!("/.well-known/openid-configuration")));
    assert!(paths.contains(&json!("/openid/v1/jwks")));
    // Not for anonymous readers unless a binding says so, as in kube.
    let anonymous = call_as(&api, None, Method::Get, "/openid/v1/jwks", None).await;
    assert_eq!(anonymous.status, 403);
}

#[tokio::test]
async fn every_issuer_and_every_key_file_key_is_accepted() {
    let api = api().await;
    let sa = service_account(&api, "bot").await;
    let testdata = concat!(env!("CARGO_MANIFEST_DIR"), "/src/serviceaccount/testdata");
    let options = crate::serviceaccount::ServiceAccountOptions {
        issuers: vec!["https://new.example".into(), "https://old.example".into()],
        key_files: vec![format!("{testdata}/rsa-public.pem").into()],
        ..Default::default()
    };
    let tokens =
        Arc::new(crate::serviceaccount::ServiceAccountTokens::load(&options, None).unwrap());
    assert_eq!(tokens.keys().len(), 2);
    assert_eq!(
        tokens.api_audiences(),
        ["https://new.example", "https://old.example"]
    );
    let authenticator = ServiceAccountAuthenticator::new(tokens.clone(), api.store.clone());
    // Signed elsewhere with the key whose public half is in the key file,
    // by the old issuer, for the old issuer's audience.
    let old_signer = crate::serviceaccount::Signer::from_pem(
        &std::fs::read(format!("{testdata}/rsa-pkcs8.pem")).unwrap(),
    )
    .unwrap();
    let claims = crate::serviceaccount::claims::BoundClaims {
        issuer: "https://old.example".into(),
        audiences: vec!["https://old.example".into()],
        namespace: "default".into(),
        service_account: ObjectRef {
            name: "bot".into(),
            uid: sa["metadata"]["uid"].as_str().unwrap_or_default().into(),
        },
        binding: Default::default(),
        issued_at: now(),
        expires_at: now() + 600,
        warn_after: None,
        id: String::new(),
    };
    let token = crate::serviceaccount::jwt::sign(&old_signer, &claims.to_json()).unwrap();
    match authenticator.authenticate_token(&token, &[]) {
        TokenOutcome::Authenticated { user, audiences } => {
            assert_eq!(user.name, "system:serviceaccount:default:bot");
            assert_eq!(audiences, ["https://old.example"]);
            // No jti: no credential id.
            assert!(user.extra.is_empty());
        }
        other => panic!("{other:?}"),
    }
    // The same token is not this server's when only the new issuer is accepted.
    let strict = crate::serviceaccount::ServiceAccountOptions {
        issuers: vec!["https://new.example".into()],
        key_files: options.key_files.clone(),
        ..Default::default()
    };
    let strict = ServiceAccountAuthenticator::new(
        Arc::new(crate::serviceaccount::ServiceAccountTokens::load(&strict, None).unwrap()),
        api.store.clone(),
    );
    assert_eq!(
        strict.authenticate_token(&token, &[]),
        TokenOutcome::NotMine
    );
}

/// claims.go: a token with a `warnafter` counts as valid before it and as
/// stale after it, with kube's `authentication.k8s.io/stale-token` annotation.
#[tokio::test]
async fn tokens_past_their_warnafter_are_stale() {
    let api = api().await;
    let sa = service_account(&api, "kubelet-made").await;
    let claims = |warn_after: i64| crate::serviceaccount::claims::BoundClaims {
        issuer: api.service_accounts.issuer().to_string(),
        audiences: api.service_accounts.api_audiences().to_vec(),
        namespace: "default".into(),
        service_account: ObjectRef {
            name: "kubelet-made".into(),
            uid: sa["metadata"]["uid"].as_str().unwrap_or_default().into(),
        },
        binding: Default::default(),
        issued_at: now() - 100,
        expires_at: now() + 3600,
        warn_after: Some(warn_after),
        id: String::new(),
    };
    let authenticator =
        ServiceAccountAuthenticator::new(api.service_accounts.clone(), api.store.clone());
    let counted = |name: &str| {
        api.service_accounts
            .uses()
            .render()
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{name} ")).map(str::to_string))
            .unwrap_or_default()
    };
    let fresh = api
        .service_accounts
        .sign(&claims(now() + 60).to_json())
        .unwrap();
    let mut notes = crate::authn::AuthnNotes::default();
    let outcome = authenticator.authenticate_noting_at(&fresh, &[], now(), &mut notes);
    assert!(
        matches!(outcome, TokenOutcome::Authenticated { .. }),
        "{outcome:?}"
    );
    assert!(notes.audit_annotations.is_empty());
    assert_eq!(counted("serviceaccount_valid_tokens_total"), "1");
    let at = now();
    let stale = api
        .service_accounts
        .sign(&claims(at - 30).to_json())
        .unwrap();
    let outcome = authenticator.authenticate_noting_at(&stale, &[], at, &mut notes);
    assert!(
        matches!(outcome, TokenOutcome::Authenticated { .. }),
        "{outcome:?}"
    );
    assert_eq!(
        notes.audit_annotations,
        [(
            "authentication.k8s.io/stale-token".to_string(),
            "subject: system:serviceaccount:default:kubelet-made, seconds after warning threshold: 30".to_string()
        )]
    );
    assert_eq!(counted("serviceaccount_stale_tokens_total"), "1");
}
