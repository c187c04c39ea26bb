//! `serviceaccounts/{name}/token`: TokenRequest, a create-only subresource
//! that signs a token and stores nothing
//! (`pkg/registry/core/serviceaccount/storage/token.go` `TokenREST.Create`,
//! `pkg/apis/authentication/validation` `ValidateTokenRequest`), admitted
//! as kube admits it (`handlers/create.go` `createHandler`).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::options::WriteOptions;
use super::target::{check_type, Target};
use super::write;
use super::write::decode::{decode, Decoded};
use super::write::validate::settle_namespace;
use crate::admission::{Caller, Operation};
use crate::serviceaccount::claims::{
    credential_id_for_jti, Binding, BoundClaims, ObjectRef, EXPIRATION_EXTENSION_SECONDS,
    WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS,
};
use crate::status::{FieldError, FieldErrorKind, GroupResource, Result, Status};

const API_VERSION: &str = "authentication.k8s.io/v1";
const GROUP: &str = "authentication.k8s.io";
const KIND: &str = "TokenRequest";
/// `SetDefaults_TokenRequestSpec`.
const DEFAULT_EXPIRATION_SECONDS: i64 = 60 * 60;
/// `ValidateTokenRequest`: at least 10 minutes, at most 2^32 seconds.
const MIN_EXPIRATION_SECONDS: i64 = 10 * 60;
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;
/// `serviceaccount.IssuedCredentialIDAuditAnnotationKey`.
const ISSUED_CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/issued-credential-id";

/// A stored object read for binding.
struct Bound {
    uid: String,
    value: Value,
}

fn read(api: &Api, key: &str) -> Option<Bound> {
    let snapshot = api.store.snapshot();
    let value = snapshot.get(key)?.object.value()?;
    let uid = value
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Some(Bound { uid, value })
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn invalid(name: &str, errors: &[FieldError]) -> Status {
    Status::invalid(GROUP, KIND, name, errors)
}

fn invalid_value(field: &str, rendered: String, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(rendered),
        field: field.to_string(),
        detail: detail.to_string(),
    }
}

/// `schema.FromAPIVersionAndKind`: the group of an apiVersion.
fn group_of(api_version: &str) -> &str {
    match api_version.split_once('/') {
        Some((group, _)) => group,
        None => "",
    }
}

/// `handlers/create.go` for `serviceaccounts/{name}/token`: decode, the
/// namespace settled (`EnsureObjectNamespaceMatchesRequestNamespace`; the
/// object's system fields kept, `SubresourceObjectMetaPreserver`), mutating
/// admission, then `TokenREST.Create` with validating admission inside it.
/// Admission sees kind `authentication.k8s.io/v1 TokenRequest`, resource
/// `serviceaccounts`, subresource `token`, operation CREATE and the URL's
/// name. A dry run is admitted as one and, as in kube (which never reads
/// `dryRun` there), still answers with a token.
pub(super) async fn create(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let options = WriteOptions::parse(request, None)?;
    let caller = options.caller(request);
    let result = issue(api, request, target, &options, &caller).await;
    write::admission::with_warnings(result, &caller)
}

async fn issue(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
    options: &WriteOptions,
    caller: &Caller,
) -> Result<ApiResponse> {
    // `handlers/create.go`: the body is decoded with the strict decoder
    // under `fieldValidation` Warn or Strict, as for any create.
    let Decoded {
        object: mut body,
        mut warnings,
    } = decode(
        api,
        request,
        target,
        KIND,
        API_VERSION,
        options.field_validation,
    )?;
    check_type(&mut body, API_VERSION, KIND)?;
    if !body.get("metadata").is_some_and(Value::is_object) {
        body["metadata"] = json!({});
    }
    settle_namespace(target, &mut body)?;
    // `SetDefaults_TokenRequestSpec`, applied when the body is decoded.
    if !body.get("spec").is_some_and(Value::is_object) {
        body["spec"] = json!({});
    }
    if body
        .pointer("/spec/expirationSeconds")
        .is_none_or(Value::is_null)
    {
        body["spec"]["expirationSeconds"] = json!(DEFAULT_EXPIRATION_SECONDS);
    }
    let namespace = target.namespace.unwrap_or_default();
    let name = target.name.unwrap_or_default();
    let attributes = write::admission::attributes(target, Operation::Create, name, None, caller);
    api.admission
        .mutate(&attributes, Some(&mut body), caller)
        .await?;

    // `TokenREST.Create`.
    let body_name = text(&body, "/metadata/name").to_string();
    if !body_name.is_empty() && body_name != name {
        return Err(invalid(
            name,
            &[FieldError::invalid(
                "metadata.name",
                &body_name,
                "must match the service account name if specified",
            )],
        ));
    }
    let body_namespace = text(&body, "/metadata/namespace").to_string();
    if !body_namespace.is_empty() && body_namespace != namespace {
        return Err(invalid(
            name,
            &[FieldError::invalid(
                "metadata.namespace",
                &body_namespace,
                "must match the service account namespace if specified",
            )],
        ));
    }
    let service_account = read(
        api,
        &format!("/registry/serviceaccounts/{namespace}/{name}"),
    )
    .ok_or_else(|| Status::not_found(&GroupResource::new("", "serviceaccounts"), name))?;
    // `TokenRequestServiceAccountUIDValidation` (beta, on in 1.34).
    let body_uid = text(&body, "/metadata/uid").to_string();
    if !body_uid.is_empty() && body_uid != service_account.uid {
        return Err(Status::conflict_because(
            &GroupResource::new(GROUP, KIND),
            name,
            &format!(
                "the UID in the token request ({body_uid}) does not match the UID of the service account ({})",
                service_account.uid
            ),
        ));
    }
    let tokens = &api.service_accounts;
    let has_audiences = body
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .is_some_and(|audiences| !audiences.is_empty());
    if !has_audiences {
        body["spec"]["audiences"] = json!(tokens.api_audiences());
    }
    let now = SystemTime::now();
    if let Some(metadata) = body.get_mut("metadata").and_then(Value::as_object_mut) {
        if body_name.is_empty() {
            metadata.insert(
                "name".into(),
                json!(text(&service_account.value, "/metadata/name")),
            );
        }
        if body_namespace.is_empty() {
            metadata.insert("namespace".into(), json!(namespace));
        }
        if body_uid.is_empty() {
            metadata.insert("uid".into(), json!(service_account.uid));
        }
        metadata.insert(
            "creationTimestamp".into(),
            json!(crate::go::time::rfc3339(now)),
        );
    }
    body["status"] = json!({});
    let spec = body.get("spec").cloned().unwrap_or_else(|| json!({}));
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
    let mut expiration_seconds = spec
        .get("expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    let now_seconds = now
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| i64::try_from(since.as_secs()).unwrap_or(0));

    // Static validation, then validating admission.
    let mut errors = Vec::new();
    if expiration_seconds < MIN_EXPIRATION_SECONDS {
        errors.push(invalid_value(
            "spec.expirationSeconds",
            expiration_seconds.to_string(),
            "may not specify a duration less than 10 minutes",
        ));
    }
    if expiration_seconds > MAX_EXPIRATION_SECONDS {
        errors.push(invalid_value(
            "spec.expirationSeconds",
            expiration_seconds.to_string(),
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    if !errors.is_empty() {
        return Err(invalid("", &errors));
    }
    api.admission
        .validate(&attributes, Some(&body), None, caller)
        .await?;

    let bound_ref = spec.get("boundObjectRef").filter(|value| !value.is_null());
    let mut binding = Binding::default();
    if let Some(reference) = bound_ref {
        let api_version = text(reference, "/apiVersion");
        let kind = text(reference, "/kind");
        let ref_name = text(reference, "/name");
        let ref_uid = text(reference, "/uid");
        let group = group_of(api_version);
        let uid = match (group, kind) {
            ("", "Pod") => {
                let pod = read(api, &format!("/registry/pods/{namespace}/{ref_name}"))
                    .ok_or_else(|| Status::not_found(&GroupResource::new("", "pods"), ref_name))?;
                if text(&pod.value, "/spec/serviceAccountName") != name {
                    return Err(Status::bad_request(format!(
                        "cannot bind token for serviceaccount {} to pod running with different serviceaccount name.",
                        crate::go::strconv::quote(name)
                    )));
                }
                binding.pod = Some(ObjectRef {
                    name: ref_name.to_string(),
                    uid: pod.uid.clone(),
                });
                // The pod's node goes into the token too (ServiceAccountTokenPodNodeInfo).
                let node_name = text(&pod.value, "/spec/nodeName");
                if !node_name.is_empty() {
                    if let Some(node) = read(api, &format!("/registry/minions/{node_name}")) {
                        binding.node = Some(ObjectRef {
                            name: node_name.to_string(),
                            uid: node.uid,
                        });
                    }
                }
                pod.uid
            }
            ("", "Node") => {
                let node = read(api, &format!("/registry/minions/{ref_name}"))
                    .ok_or_else(|| Status::not_found(&GroupResource::new("", "nodes"), ref_name))?;
                binding.node = Some(ObjectRef {
                    name: ref_name.to_string(),
                    uid: node.uid.clone(),
                });
                node.uid
            }
            ("", "Secret") => {
                let secret = read(api, &format!("/registry/secrets/{namespace}/{ref_name}"))
                    .ok_or_else(|| {
                        Status::not_found(&GroupResource::new("", "secrets"), ref_name)
                    })?;
                binding.secret = Some(ObjectRef {
                    name: ref_name.to_string(),
                    uid: secret.uid.clone(),
                });
                secret.uid
            }
            _ => {
                // `GroupVersionKind.String()`.
                let version = api_version.rsplit('/').next().unwrap_or_default();
                return Err(Status::bad_request(format!(
                    "cannot bind token to object of type {group}/{version}, Kind={kind}"
                )));
            }
        };
        if !ref_uid.is_empty() && ref_uid != uid {
            return Err(Status::conflict_because(
                &GroupResource::new(group, kind),
                ref_name,
                &format!("the UID in the bound object reference ({ref_uid}) does not match the UID in record. The object might have been deleted and then recreated"),
            ));
        }
    }

    if let Some(max) = tokens.max_expiration_seconds() {
        if expiration_seconds > max {
            warnings.extend(crate::field_validation::warning_header_value(&format!(
                "requested expiration of {expiration_seconds} seconds shortened to {max} seconds"
            )));
            expiration_seconds = max;
        }
    }
    // Pod-bound tokens kubelet asks for (3607 s) stay valid a year but
    // carry `warnafter` at the asked expiry (`--service-account-extend-token-expiration`).
    let mut valid_seconds = expiration_seconds;
    let mut warn_after = None;
    let kube_audiences = audiences
        .iter()
        .all(|audience| tokens.api_audiences().contains(audience));
    if tokens.extend_expiration()
        && binding.pod.is_some()
        && expiration_seconds == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
        && kube_audiences
    {
        warn_after = Some(now_seconds + expiration_seconds);
        valid_seconds = tokens
            .max_expiration_seconds()
            .unwrap_or(EXPIRATION_EXTENSION_SECONDS);
    }

    let sa_name = text(&service_account.value, "/metadata/name").to_string();
    let id = uuid::Uuid::new_v4().to_string();
    let claims = BoundClaims {
        issuer: tokens.issuer().to_string(),
        audiences,
        namespace: namespace.to_string(),
        service_account: ObjectRef {
            name: sa_name,
            uid: service_account.uid.clone(),
        },
        binding,
        issued_at: now_seconds,
        expires_at: now_seconds + valid_seconds,
        warn_after,
        id: id.clone(),
    };
    let token = tokens
        .sign(&claims.to_json())
        .map_err(|error| Status::internal(format!("failed to generate token: {error}")))?;
    // `ServiceAccountTokenJTI`: the issued token's credential id.
    caller.annotate_audit(ISSUED_CREDENTIAL_ID_KEY, &credential_id_for_jti(&id));
    let expires = now + Duration::from_secs(u64::try_from(expiration_seconds).unwrap_or(0));
    // The request as admitted and completed, with the token in its status.
    let mut response = body;
    response["spec"]["expirationSeconds"] = json!(expiration_seconds);
    response["status"] = json!({
        "token": token,
        "expirationTimestamp": crate::go::time::rfc3339(expires),
    });
    Ok(ApiResponse::object(201, response).with_warnings(warnings))
}
