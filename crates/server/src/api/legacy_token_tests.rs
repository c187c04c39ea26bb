//! Legacy (Secret-based) service-account tokens tracked on use, as
//! `pkg/serviceaccount/legacy.go` `legacyValidator.Validate` tracks them:
//! the last-used label asked for at most once a day, the warning and audit
//! annotation of auto-generated tokens, the cleaner's invalid-since mark
//! refused (and still tracked), and `--service-account-lookup=false`.

use std::sync::Arc;

use base64::Engine;
use serde_json::{json, Value};

use super::handler_tests::{admin, api};
use super::{Api, ApiRequest, ApiResponse};
use crate::authn::{AuthnNotes, SecretLabel, UserInfo};
use crate::route::Method;
use crate::serviceaccount::authenticator::{utc_date, AUTO_GENERATED_WARNING, LAST_USED_LABEL};
use crate::serviceaccount::claims::{legacy_claims, ObjectRef};
use crate::serviceaccount::{
    ServiceAccountAuthenticator, ServiceAccountOptions, ServiceAccountTokens,
};

async fn call(api: &Arc<Api>, method: Method, path: &str, body: Value) -> ApiResponse {
    let mut request = ApiRequest::new(method, path);
    request.user = admin();
    request.body = bytes::Bytes::from(serde_json::to_vec(&body).unwrap_or_default());
    let content_type = if method == Method::Patch {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    request.headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    api.handle(request).await
}

/// A ServiceAccount `old` in `default` and the legacy token of Secret
/// `secret`, stored in that Secret with `labels`; the uids of both.
async fn legacy_token(api: &Arc<Api>, secret: &str, labels: Value) -> (String, String, String) {
    let sa = call(
        api,
        Method::Post,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "old"}}),
    )
    .await
    .body_json();
    let sa_uid = match sa["metadata"]["uid"].as_str() {
        Some(uid) => uid.to_string(),
        // Already there.
        None => service_account_uid(api).await,
    };
    let sa_ref = ObjectRef {
        name: "old".into(),
        uid: sa_uid.clone(),
    };
    let token = api
        .service_accounts
        .sign(&legacy_claims("default", &sa_ref, secret))
        .unwrap();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&token);
    let created = call(
        api,
        Method::Post,
        "/api/v1/namespaces/default/secrets",
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": secret, "labels": labels,
                            "annotations": {"kubernetes.io/service-account.name": "old"}},
               "type": "kubernetes.io/service-account-token", "data": {"token": encoded}}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body_json());
    let secret_uid = created.body_json()["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (token, sa_uid, secret_uid)
}

async fn service_account_uid(api: &Arc<Api>) -> String {
    let mut request = ApiRequest::new(
        Method::Get,
        "/api/v1/namespaces/default/serviceaccounts/old",
    );
    request.user = admin();
    api.handle(request).await.body_json()["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn authenticate(api: &Api, token: &str) -> (Result<UserInfo, String>, AuthnNotes) {
    let mut notes = AuthnNotes::default();
    let result = api
        .authenticator
        .authenticate_bearer_noting(token, &[], &mut notes)
        .map(|(user, _)| user);
    (result, notes)
}

fn now() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs(),
    )
    .unwrap_or_default()
}

/// jwt.go's annotation of every token without an audience.
fn legacy_token_annotation() -> (String, String) {
    (
        "authentication.k8s.io/legacy-token".to_string(),
        "system:serviceaccount:default:old".to_string(),
    )
}

/// A use counter as `/metrics` shows it.
fn counted(api: &Api, name: &str) -> u64 {
    let text = api.service_accounts.uses().render();
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{name} ")))
        .and_then(|value| value.parse().ok())
        .unwrap_or_default()
}

/// The date of the one label noted, checked to be today's (`before`: the
/// date before authenticating; a test running over midnight sees either).
fn noted_today(labels: &[SecretLabel], before: &str) -> String {
    let date = labels
        .first()
        .map(|label| label.value.clone())
        .unwrap_or_default();
    assert!(date == before || date == utc_date(now()), "{date:?}");
    date
}

fn last_used(secret: &str, uid: &str, date: String) -> SecretLabel {
    SecretLabel {
        namespace: "default".into(),
        name: secret.into(),
        uid: uid.into(),
        key: LAST_USED_LABEL.into(),
        value: date,
    }
}

#[test]
fn dates_are_go_utc_dates() {
    assert_eq!(utc_date(0), "1970-01-01");
    assert_eq!(utc_date(86_399), "1970-01-01");
    assert_eq!(utc_date(86_400), "1970-01-02");
    // 2024-02-29T23:59:59Z, then the next second.
    assert_eq!(utc_date(1_709_251_199), "2024-02-29");
    assert_eq!(utc_date(1_709_251_200), "2024-03-01");
}

#[tokio::test]
async fn a_manual_token_is_labelled_once_a_day_without_a_warning() {
    let api = api().await;
    let (token, _, secret_uid) = legacy_token(&api, "manual", json!({})).await;
    let before = utc_date(now());
    let (user, notes) = authenticate(&api, &token);
    assert_eq!(user.unwrap().name, "system:serviceaccount:default:old");
    assert_eq!(
        counted(&api, "serviceaccount_legacy_manual_token_uses_total"),
        1
    );
    assert!(notes.warnings.is_empty());
    assert_eq!(
        notes.audit_annotations,
        [
            legacy_token_annotation(),
            (
                "authentication.k8s.io/legacy-token-manual-secret".to_string(),
                "manual".to_string()
            )
        ]
    );
    let today = noted_today(&notes.secret_labels, &before);
    assert_eq!(
        notes.secret_labels,
        [last_used("manual", &secret_uid, today.clone())]
    );
    // The write kube makes, then nothing more that day.
    let patch = notes.secret_labels[0].merge_patch();
    assert_eq!(
        patch,
        json!({"kind": "Secret", "apiVersion": "v1",
               "metadata": {"name": "manual", "namespace": "default", "uid": secret_uid,
                            "labels": {LAST_USED_LABEL: today}}})
    );
    let patched = call(
        &api,
        Method::Patch,
        "/api/v1/namespaces/default/secrets/manual",
        patch,
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.body_json());
    let (user, notes) = authenticate(&api, &token);
    assert!(user.is_ok());
    assert!(notes.secret_labels.is_empty());

    // Labelled tomorrow (another server's clock): left alone; yesterday: relabelled.
    let tomorrow = utc_date(now() + 86_400);
    let (token, _, _) = legacy_token(&api, "ahead", json!({LAST_USED_LABEL: tomorrow})).await;
    assert!(authenticate(&api, &token).1.secret_labels.is_empty());
    let yesterday = utc_date(now() - 86_400);
    let (token, _, uid) = legacy_token(&api, "behind", json!({LAST_USED_LABEL: yesterday})).await;
    let before = utc_date(now());
    let labels = authenticate(&api, &token).1.secret_labels;
    assert_eq!(
        labels,
        [last_used("behind", &uid, noted_today(&labels, &before))]
    );
}

#[tokio::test]
async fn an_auto_generated_token_warns() {
    let api = api().await;
    let (token, _, _) = legacy_token(&api, "listed", json!({})).await;
    let listed = call(
        &api,
        Method::Patch,
        "/api/v1/namespaces/default/serviceaccounts/old",
        json!({"secrets": [{"name": "listed"}]}),
    )
    .await;
    assert_eq!(listed.status, 200, "{}", listed.body_json());
    let (user, notes) = authenticate(&api, &token);
    assert!(user.is_ok());
    assert_eq!(
        counted(&api, "serviceaccount_legacy_auto_token_uses_total"),
        1
    );
    assert_eq!(counted(&api, "serviceaccount_legacy_tokens_total"), 1);
    assert_eq!(notes.warnings, [AUTO_GENERATED_WARNING]);
    assert_eq!(
        AUTO_GENERATED_WARNING,
        "Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens."
    );
    assert_eq!(
        notes.audit_annotations,
        [
            legacy_token_annotation(),
            (
                "authentication.k8s.io/legacy-token-autogenerated-secret".to_string(),
                "listed".to_string()
            )
        ]
    );
    assert_eq!(notes.secret_labels.len(), 1);
}

#[tokio::test]
async fn an_invalidated_token_is_refused_and_still_tracked() {
    let api = api().await;
    let (token, _, uid) = legacy_token(
        &api,
        "stale",
        json!({"kubernetes.io/legacy-token-invalid-since": "2025-01-01"}),
    )
    .await;
    let before = utc_date(now());
    let (user, notes) = authenticate(&api, &token);
    assert_eq!(
        user.unwrap_err(),
        "the token in secret default/stale for service account default/old has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the 'kubernetes.io/legacy-token-invalid-since' label from the secret to temporarily allow use of this token"
    );
    assert_eq!(
        notes.audit_annotations,
        [
            legacy_token_annotation(),
            (
                "authentication.k8s.io/legacy-token-invalidated".to_string(),
                "stale/default".to_string()
            )
        ]
    );
    assert_eq!(
        notes.secret_labels,
        [last_used(
            "stale",
            &uid,
            noted_today(&notes.secret_labels, &before)
        )]
    );
    assert_eq!(
        counted(&api, "serviceaccount_invalid_legacy_auto_token_uses_total"),
        1
    );
    assert!(notes.warnings.is_empty());
}

#[tokio::test]
async fn without_lookup_only_the_claims_are_checked() {
    let api = api().await;
    let options = ServiceAccountOptions {
        lookup: Some(false),
        ..ServiceAccountOptions::default()
    };
    let tokens = Arc::new(ServiceAccountTokens::load(&options, None).unwrap());
    assert!(!tokens.lookup());
    assert!(ServiceAccountTokens::ephemeral().unwrap().lookup());
    let authenticator = ServiceAccountAuthenticator::new(tokens.clone(), api.store.clone());
    // Neither the Secret nor the ServiceAccount exists.
    let sa_ref = ObjectRef {
        name: "ghost".into(),
        uid: "1234".into(),
    };
    let token = tokens
        .sign(&legacy_claims("default", &sa_ref, "gone"))
        .unwrap();
    let mut notes = AuthnNotes::default();
    match authenticator.authenticate_noting_at(&token, &[], now(), &mut notes) {
        crate::authn::TokenOutcome::Authenticated { user, .. } => {
            assert_eq!(user.name, "system:serviceaccount:default:ghost");
            assert_eq!(user.uid, "1234");
        }
        other => panic!("{other:?}"),
    }
    // Only jwt.go's annotation of a token without an audience.
    assert_eq!(
        notes,
        AuthnNotes {
            audit_annotations: vec![(
                "authentication.k8s.io/legacy-token".to_string(),
                "system:serviceaccount:default:ghost".to_string()
            )],
            ..AuthnNotes::default()
        }
    );
    // With lookup (the default) the same kind of token needs its Secret.
    let token = api
        .service_accounts
        .sign(&legacy_claims("default", &sa_ref, "gone"))
        .unwrap();
    let (user, notes) = authenticate(&api, &token);
    assert_eq!(user.unwrap_err(), "Token has been invalidated");
    assert!(notes.secret_labels.is_empty());
}

/// kube's TokenReview authenticates in the review's request context: a
/// legacy token's Secret is labelled and the warning answers the review.
#[tokio::test]
async fn a_token_review_tracks_the_legacy_token_it_reviews() {
    let api = api().await;
    let (token, _, _) = legacy_token(&api, "reviewed", json!({})).await;
    let listed = call(
        &api,
        Method::Patch,
        "/api/v1/namespaces/default/serviceaccounts/old",
        json!({"secrets": [{"name": "reviewed"}]}),
    )
    .await;
    assert_eq!(listed.status, 200, "{}", listed.body_json());
    let before = utc_date(now());
    let review = call(
        &api,
        Method::Post,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
               "spec": {"token": token}}),
    )
    .await;
    assert_eq!(review.status, 201);
    assert_eq!(review.body_json()["status"]["authenticated"], true);
    let warnings: Vec<&str> = review
        .headers
        .iter()
        .filter(|(name, _)| name == http::header::WARNING)
        .map(|(_, value)| value.as_str())
        .collect();
    assert_eq!(warnings, [format!("299 - \"{AUTO_GENERATED_WARNING}\"")]);
    assert!(review
        .audit_annotations
        .contains(&legacy_token_annotation()));
    let mut read = ApiRequest::new(Method::Get, "/api/v1/namespaces/default/secrets/reviewed");
    read.user = admin();
    let secret = api.handle(read).await.body_json();
    let date = secret["metadata"]["labels"][LAST_USED_LABEL]
        .as_str()
        .unwrap_or_default();
    assert!(date == before || date == utc_date(now()), "{date:?}");
}
