//! Create-only reviews, answered and never stored: TokenReview
//! (`pkg/registry/authentication/tokenreview/storage.go`), SelfSubjectReview
//! (`pkg/registry/authentication/selfsubjectreview/rest.go`) and the access
//! reviews of authorization.k8s.io (`pkg/registry/authorization/*/rest.go`,
//! whose rules live in `authz/access_review.rs`).

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::target::{check_type, Target};
use super::write::decode::{decode, Decoded};
use crate::authn::{AuthnNotes, SecretLabel, UserInfo};
use crate::authz::access_review::{self, ReviewKind, ReviewSpec};
use crate::field_validation::FieldValidation;
use crate::status::{Result, Status};

/// `authentication/v1.UserInfo` (every member `omitempty`).
fn user_info_json(user: &UserInfo) -> Value {
    let mut out = Map::new();
    if !user.name.is_empty() {
        out.insert("username".into(), json!(user.name));
    }
    if !user.uid.is_empty() {
        out.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        out.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        out.insert("extra".into(), json!(user.extra));
    }
    Value::Object(out)
}

fn decoded(api: &Arc<Api>, request: &ApiRequest, target: &Target<'_>, kind: &str) -> Result<Value> {
    let api_version = target.resource.api_version();
    let Decoded {
        object: mut body, ..
    } = decode(
        api,
        request,
        target,
        kind,
        &api_version,
        FieldValidation::Ignore,
    )?;
    check_type(&mut body, &api_version, kind)?;
    Ok(body)
}

/// The request's metadata, as the decoded object carries it back (an
/// unset creationTimestamp is `null` in Go's encoding).
fn metadata_of(body: &Value) -> Value {
    let mut metadata = body
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    metadata.entry("creationTimestamp").or_insert(Value::Null);
    Value::Object(metadata)
}

/// `POST tokenreviews`: the token through the server's bearer-token
/// authenticators, for the spec's audiences (else the API audiences), in
/// the review request's context as kube's `AuthenticateRequest` runs them:
/// a legacy token's use is tracked (its Secret labelled, the warning and
/// audit annotations on this response).
pub(super) async fn token_review(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let body = decoded(api, request, target, "TokenReview")?;
    let spec = body.get("spec").cloned().unwrap_or_else(|| json!({}));
    let token = spec
        .get("token")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if token.is_empty() {
        return Err(Status::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let audiences: Vec<String> = spec
        .get("audiences")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut status = Map::new();
    let mut notes = AuthnNotes::default();
    let authenticated = api
        .authenticator
        .authenticate_bearer_noting(token, &audiences, &mut notes);
    write_secret_labels(api, &notes.secret_labels).await;
    match authenticated {
        Ok((user, audiences)) => {
            status.insert("authenticated".into(), json!(true));
            status.insert("user".into(), user_info_json(&user));
            if !audiences.is_empty() {
                status.insert("audiences".into(), json!(audiences));
            }
        }
        Err(error) => {
            status.insert("user".into(), json!({}));
            status.insert("error".into(), json!(error));
        }
    }
    let review = json!({
        "apiVersion": target.resource.api_version(),
        "kind": "TokenReview",
        "metadata": metadata_of(&body),
        "spec": spec,
        "status": status,
    });
    let warnings = notes
        .warnings
        .iter()
        .filter_map(|text| crate::field_validation::warning_header_value(text))
        .collect();
    let mut response = ApiResponse::object(201, review).with_warnings(warnings);
    response.audit_annotations = notes.audit_annotations;
    Ok(response)
}

/// The legacy token validator's Secret labels, written as kube writes them:
/// a merge patch by kube-apiserver's loopback identity, a failure only
/// logged (`legacy.go` `patchSecretWithLastUsedDate`; `server.rs` does the
/// same for requests through `legacy_token_tracking.rs`).
fn write_secret_labels<'a>(
    api: &'a Arc<Api>,
    labels: &'a [SecretLabel],
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
    // Boxed: this handler is itself reached through `handle`.
    Box::pin(async move {
        for label in labels {
            let mut request = ApiRequest::new(crate::route::Method::Patch, &label.path());
            request.user = Some(UserInfo {
                name: "system:apiserver".into(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
                ..UserInfo::default()
            });
            request.headers.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/merge-patch+json"),
            );
            request.headers.insert(
                http::header::ACCEPT,
                http::HeaderValue::from_static("application/json"),
            );
            request.body = bytes::Bytes::from(label.merge_patch().to_string());
            let response = api.handle(request).await;
            if !(200..300).contains(&response.status) {
                tracing::error!(
                    secret = %format!("{}/{}", label.name, label.namespace),
                    status = response.status,
                    "failed to label legacy service account token with last-used date"
                );
            }
        }
    })
}

/// `POST selfsubjectreviews`: who the request was authenticated as.
/// `api_version` is the version asked for (`v1`, or `v1beta1` for kubectl
/// before 1.28).
pub(super) async fn self_subject_review(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
    api_version: &str,
) -> Result<ApiResponse> {
    // The body is read for its type only: a SelfSubjectReview has no spec.
    let Decoded {
        object: mut body, ..
    } = decode(
        api,
        request,
        target,
        "SelfSubjectReview",
        api_version,
        FieldValidation::Ignore,
    )?;
    check_type(&mut body, api_version, "SelfSubjectReview")?;
    let Some(user) = &request.user else {
        return Err(Status::bad_request("no user present on request"));
    };
    let user_info = user_info_json(user);
    let review = json!({
        "apiVersion": api_version,
        "kind": "SelfSubjectReview",
        "metadata": {"creationTimestamp": crate::go::time::now_rfc3339()},
        "status": {"userInfo": user_info},
    });
    Ok(ApiResponse::object(201, review))
}

/// `POST subjectaccessreviews`, `selfsubjectaccessreviews` and
/// `namespaces/{ns}/localsubjectaccessreviews`: the spec validated, then
/// authorized as the spec's subject (a SelfSubjectAccessReview: as the
/// request's own user), answered with the spec and `status`.
pub(super) async fn access_review(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
    kind: ReviewKind,
) -> Result<ApiResponse> {
    let kind_name = target.resource.kind;
    let mut body = decoded(api, request, target, kind_name)?;
    super::write::validate::settle_namespace(target, &mut body)?;
    let spec = ReviewSpec::from_review(&body);
    let errors = access_review::validate(kind, &body, &spec);
    if !errors.is_empty() {
        return Err(access_review::invalid(&errors));
    }
    let subject = match kind {
        ReviewKind::SelfSubjectAccessReview => match &request.user {
            Some(user) => user.clone(),
            None => return Err(Status::bad_request("no user present on request")),
        },
        ReviewKind::SubjectAccessReview | ReviewKind::LocalSubjectAccessReview => spec.subject(),
    };
    let status = access_review::review_status(&api.authorizer, &subject, &spec);
    let review = json!({
        "apiVersion": target.resource.api_version(),
        "kind": kind_name,
        "metadata": metadata_of(&body),
        "spec": body.get("spec").cloned().unwrap_or_else(|| json!({})),
        "status": status,
    });
    Ok(ApiResponse::object(201, review))
}

/// `POST selfsubjectrulesreviews`: the rules the request's user holds in
/// `spec.namespace` (400 without one), in a new review without the spec.
pub(super) async fn self_subject_rules_review(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let body = decoded(api, request, target, "SelfSubjectRulesReview")?;
    let Some(user) = &request.user else {
        return Err(Status::bad_request("no user present on request"));
    };
    let namespace = body
        .pointer("/spec/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if namespace.is_empty() {
        return Err(Status::bad_request("no namespace on request"));
    }
    let status = access_review::rules_review_status(&api.authorizer, user, namespace);
    let review = json!({
        "apiVersion": target.resource.api_version(),
        "kind": "SelfSubjectRulesReview",
        "metadata": {"creationTimestamp": null},
        "spec": {},
        "status": status,
    });
    Ok(ApiResponse::object(201, review))
}
