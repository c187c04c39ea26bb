//! The AdmissionReview v1 a webhook receives and what its answer must be
//! (`plugin/webhook/request/admissionreview.go` `CreateV1AdmissionReview`,
//! `VerifyAdmissionResponse`), and the errors kube makes of it
//! (`plugin/webhook/errors`, `util/webhook` `ErrCallingWebhook`).

use serde_json::{json, Map, Value};

use crate::admission::attributes::Attributes;
use crate::status::{Cause, Details, Status};

/// The review sent for one call (`CreateV1AdmissionReview`), with Go's
/// field order and omitempty fields left out.
pub fn request(uid: &str, attributes: &Attributes<'_>, object: Option<&Value>) -> Value {
    request_as(uid, attributes, attributes, object)
}

/// The `request` of the review of a call at an equivalent resource:
/// `kind`, `resource` and the objects from `attributes` (the equivalent's),
/// `requestKind` and `requestResource` from `requested` (the request's own).
fn request_fields(
    uid: &str,
    attributes: &Attributes<'_>,
    requested: &Attributes<'_>,
) -> Map<String, Value> {
    let mut request = Map::new();
    request.insert("uid".into(), json!(uid));
    let kind = json!({
        "group": attributes.kind.group,
        "version": attributes.kind.version,
        "kind": attributes.kind.name,
    });
    let resource = json!({
        "group": attributes.resource.group,
        "version": attributes.resource.version,
        "resource": attributes.resource.name,
    });
    request.insert("kind".into(), kind);
    request.insert("resource".into(), resource);
    if !attributes.subresource.is_empty() {
        request.insert("subResource".into(), json!(attributes.subresource));
    }
    request.insert(
        "requestKind".into(),
        json!({
            "group": requested.kind.group,
            "version": requested.kind.version,
            "kind": requested.kind.name,
        }),
    );
    request.insert(
        "requestResource".into(),
        json!({
            "group": requested.resource.group,
            "version": requested.resource.version,
            "resource": requested.resource.name,
        }),
    );
    if !attributes.subresource.is_empty() {
        request.insert("requestSubResource".into(), json!(attributes.subresource));
    }
    if !attributes.name.is_empty() {
        request.insert("name".into(), json!(attributes.name));
    }
    if !attributes.namespace.is_empty() {
        request.insert("namespace".into(), json!(attributes.namespace));
    }
    request.insert("operation".into(), json!(attributes.operation.as_str()));
    let mut user = Map::new();
    if let Some(info) = attributes.user {
        if !info.name.is_empty() {
            user.insert("username".into(), json!(info.name));
        }
        if !info.uid.is_empty() {
            user.insert("uid".into(), json!(info.uid));
        }
        if !info.groups.is_empty() {
            user.insert("groups".into(), json!(info.groups));
        }
        if !info.extra.is_empty() {
            user.insert("extra".into(), json!(info.extra));
        }
    }
    request.insert("userInfo".into(), Value::Object(user));
    // Placeholders: the objects are filled in by [`request_as`].
    request.insert("object".into(), Value::Null);
    request.insert("oldObject".into(), Value::Null);
    request.insert("dryRun".into(), json!(attributes.dry_run));
    request.insert("options".into(), attributes.options.clone());
    request
}

/// The review as a tree (match conditions and policies read it).
pub fn request_as(
    uid: &str,
    attributes: &Attributes<'_>,
    requested: &Attributes<'_>,
    object: Option<&Value>,
) -> Value {
    let mut request = request_fields(uid, attributes, requested);
    request.insert("object".into(), object.cloned().unwrap_or(Value::Null));
    request.insert(
        "oldObject".into(),
        attributes.old_object.cloned().unwrap_or(Value::Null),
    );
    json!({
        "kind": "AdmissionReview",
        "apiVersion": "admission.k8s.io/v1",
        "request": Value::Object(request),
    })
}

/// The review's JSON as [`request_as`] writes it, byte for byte, written
/// straight from the attributes and the objects where they are (a webhook
/// call needs neither the tree nor a copy of the objects). `object_json` is
/// `object`'s own JSON (`serde_json::to_vec`), encoded once for every
/// webhook a request calls, or taken from the stored encoding.
pub fn encode_as(
    uid: &str,
    attributes: &Attributes<'_>,
    requested: &Attributes<'_>,
    object_json: Option<&[u8]>,
) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(512 + object_json.map_or(0, <[u8]>::len));
    out.extend_from_slice(
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"dryRun":"#,
    );
    serde_json::to_writer(&mut out, &attributes.dry_run)?;
    let group_version = |value, name_key| WireGroupVersion { value, name_key };
    entry(&mut out, "kind", &group_version(&attributes.kind, "kind"))?;
    if !attributes.name.is_empty() {
        entry(&mut out, "name", attributes.name)?;
    }
    if !attributes.namespace.is_empty() {
        entry(&mut out, "namespace", attributes.namespace)?;
    }
    out.extend_from_slice(br#","object":"#);
    out.extend_from_slice(object_json.unwrap_or(b"null"));
    entry(&mut out, "oldObject", &attributes.old_object)?;
    entry(&mut out, "operation", attributes.operation.as_str())?;
    entry(&mut out, "options", &attributes.options)?;
    entry(
        &mut out,
        "requestKind",
        &group_version(&requested.kind, "kind"),
    )?;
    let requested_resource = group_version(&requested.resource, "resource");
    entry(&mut out, "requestResource", &requested_resource)?;
    if !attributes.subresource.is_empty() {
        entry(&mut out, "requestSubResource", attributes.subresource)?;
    }
    let resource = group_version(&attributes.resource, "resource");
    entry(&mut out, "resource", &resource)?;
    if !attributes.subresource.is_empty() {
        entry(&mut out, "subResource", attributes.subresource)?;
    }
    entry(&mut out, "uid", uid)?;
    entry(&mut out, "userInfo", &WireUser(attributes.user))?;
    out.extend_from_slice(b"}}");
    Ok(out)
}

/// `,"key":value` (the keys need no escaping).
fn entry<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    key: &str,
    value: &T,
) -> serde_json::Result<()> {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
    serde_json::to_writer(out, value)
}

/// A `{group, kind|resource, version}` object (its keys sorted either way).
struct WireGroupVersion<'a> {
    value: &'a crate::admission::attributes::GroupVersionName,
    name_key: &'static str,
}

/// `userInfo` with its empty fields left out.
struct WireUser<'a>(Option<&'a crate::authn::UserInfo>);

impl serde::Serialize for WireGroupVersion<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("group", &self.value.group)?;
        map.serialize_entry(self.name_key, &self.value.name)?;
        map.serialize_entry("version", &self.value.version)?;
        map.end()
    }
}

impl serde::Serialize for WireUser<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        if let Some(info) = self.0 {
            if !info.extra.is_empty() {
                map.serialize_entry("extra", &info.extra)?;
            }
            if !info.groups.is_empty() {
                map.serialize_entry("groups", &info.groups)?;
            }
            if !info.uid.is_empty() {
                map.serialize_entry("uid", &info.uid)?;
            }
            if !info.name.is_empty() {
                map.serialize_entry("username", &info.name)?;
            }
        }
        map.end()
    }
}

/// What a webhook answered, verified.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub allowed: bool,
    /// `response.status` (a `metav1.Status`), when set.
    pub result: Option<Value>,
    /// A JSONPatch (mutating webhooks), decoded from base64.
    pub patch: Option<Vec<u8>>,
    pub warnings: Vec<String>,
}

/// `VerifyAdmissionResponse`: the answer's group, version and kind, its
/// uid, and patch fields only from mutating webhooks, as JSONPatch.
pub fn verify(uid: &str, mutating: bool, answer: &Value) -> Result<Verdict, String> {
    let Some(response) = answer.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".into());
    };
    let got_uid = response.get("uid").and_then(Value::as_str).unwrap_or("");
    if got_uid != uid {
        return Err(format!(
            "expected response.uid={}, got {}",
            crate::go::strconv::quote(uid),
            crate::go::strconv::quote(got_uid)
        ));
    }
    let api_version = answer
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = answer.get("kind").and_then(Value::as_str).unwrap_or("");
    if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
        return Err(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {api_version}, Kind={kind}"
        ));
    }
    let patch_text = response.get("patch").and_then(Value::as_str).unwrap_or("");
    let patch_type = response
        .get("patchType")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut patch = None;
    if !patch_text.is_empty() || !patch_type.is_empty() {
        if !mutating {
            return Err(
                "validating webhook may not return response.patch or response.patchType".into(),
            );
        }
        if patch_text.is_empty() {
            return Err("webhook returned response.patchType but not response.patch".into());
        }
        if patch_type.is_empty() {
            return Err("webhook returned response.patch but not response.patchType".into());
        }
        if patch_type != "JSONPatch" {
            return Err(format!(
                "webhook returned invalid response.patchType of {}",
                crate::go::strconv::quote(patch_type)
            ));
        }
        use base64::Engine as _;
        patch = Some(
            base64::engine::general_purpose::STANDARD
                .decode(patch_text)
                .map_err(|error| error.to_string())?,
        );
    }
    let warnings = response
        .get("warnings")
        .and_then(Value::as_array)
        .map(|warnings| {
            warnings
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(Verdict {
        allowed: response.get("allowed").and_then(Value::as_bool) == Some(true),
        result: response
            .get("status")
            .filter(|status| status.is_object())
            .cloned(),
        patch,
        warnings,
    })
}

/// The StatusReason constants kube defines (`metav1.StatusReason*`); a
/// webhook's own reason outside them is not kept.
const REASONS: &[&str] = &[
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "Gone",
    "Invalid",
    "ServerTimeout",
    "StoreReadError",
    "Timeout",
    "TooManyRequests",
    "BadRequest",
    "MethodNotAllowed",
    "NotAcceptable",
    "RequestEntityTooLarge",
    "UnsupportedMediaType",
    "InternalError",
    "Expired",
    "ServiceUnavailable",
];

/// `webhookerrors.ToStatusErr`: the webhook's `Status` (code at least 400)
/// with `admission webhook "<name>" denied the request: <message>` (or its
/// reason, or `without explanation`).
pub fn denied(webhook: &str, result: Option<&Value>) -> Status {
    let denied_by = format!(
        "admission webhook {} denied the request",
        crate::go::strconv::quote(webhook)
    );
    let field = |name: &str| {
        result
            .and_then(|result| result.get(name))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let code = result
        .and_then(|result| result.get("code"))
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .filter(|code| *code >= 400)
        .unwrap_or(400);
    let (message, reason) = (field("message"), field("reason"));
    let message = if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    let reason = REASONS
        .iter()
        .copied()
        .find(|known| *known == reason)
        .unwrap_or("");
    let details = result
        .and_then(|result| result.get("details"))
        .filter(|details| details.is_object())
        .map(|details| {
            let text = |name: &str| {
                details
                    .get(name)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            Box::new(Details {
                name: text("name"),
                group: text("group"),
                kind: text("kind"),
                causes: details
                    .get("causes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|cause| Cause {
                        reason: text_of(cause, "reason"),
                        message: text_of(cause, "message"),
                        field: text_of(cause, "field"),
                    })
                    .collect(),
                retry_after_seconds: details
                    .get("retryAfterSeconds")
                    .and_then(Value::as_u64)
                    .and_then(|seconds| u32::try_from(seconds).ok()),
            })
        });
    Status {
        code,
        reason,
        message,
        details,
    }
}

fn text_of(value: &Value, field: &str) -> String {
    value
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// `ErrCallingWebhook.Error()`: `failed calling webhook "<name>": <reason>`.
pub fn calling_error(webhook: &str, reason: &str) -> String {
    format!(
        "failed calling webhook {}: {reason}",
        crate::go::strconv::quote(webhook)
    )
}

/// `NewDryRunUnsupportedErr`: 400.
pub fn dry_run_unsupported(webhook: &str) -> Status {
    Status::bad_request(format!(
        "admission webhook {} does not support dry run",
        crate::go::strconv::quote(webhook)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_review_is_the_trees_json() {
        use crate::admission::attributes::Operation;
        let old = json!({"metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "é\n"}});
        let object = json!({"metadata": {"name": "a"}, "data": {"k": "v"}});
        let user = crate::authn::UserInfo {
            name: "jane".into(),
            groups: vec!["g".into()],
            ..Default::default()
        };
        let mut update = crate::admission::test_support::attributes(
            Operation::Update,
            "",
            "v1",
            "configmaps",
            Some(&old),
        );
        update.user = Some(&user);
        update.name = "a";
        update.options = json!({"kind": "UpdateOptions", "fieldManager": "m"});
        let delete =
            crate::admission::test_support::attributes(Operation::Delete, "", "v1", "pods", None);
        // A subresource call at an equivalent version, by a user with every field.
        let account = crate::authn::UserInfo {
            name: "system:serviceaccount:ns:sa".into(),
            uid: "uid-1".into(),
            groups: vec!["system:serviceaccounts".into(), "a".into()],
            extra: [("k".to_string(), vec!["v".to_string()])].into(),
        };
        let mut scale = crate::admission::test_support::attributes(
            Operation::Update,
            "apps",
            "v1beta2",
            "deployments",
            Some(&old),
        );
        scale.subresource = "scale";
        scale.namespace = "ns";
        scale.user = Some(&account);
        scale.dry_run = true;
        let requested = crate::admission::test_support::attributes(
            Operation::Update,
            "apps",
            "v1",
            "deployments",
            None,
        );
        for (attributes, requested, object) in [
            (&update, &update, Some(&object)),
            (&delete, &delete, None),
            (&scale, &requested, Some(&object)),
        ] {
            let tree = request_as("u-1", attributes, requested, object);
            let json = object.map(|object| serde_json::to_vec(object).expect("json"));
            let wire = encode_as("u-1", attributes, requested, json.as_deref()).expect("encodes");
            assert_eq!(
                String::from_utf8(wire).expect("utf-8"),
                serde_json::to_string(&tree).expect("json")
            );
        }
    }

    #[test]
    fn denials_read_as_kubes_status_errors() {
        let status = denied(
            "deny.example.com",
            Some(&json!({"message": "no blue", "code": 403, "reason": "Forbidden"})),
        );
        assert_eq!(status.code, 403);
        assert_eq!(status.reason, "Forbidden");
        assert_eq!(
            status.message,
            r#"admission webhook "deny.example.com" denied the request: no blue"#
        );
        let bare = denied("x", None);
        assert_eq!((bare.code, bare.reason), (400, ""));
        assert_eq!(
            bare.message,
            r#"admission webhook "x" denied the request without explanation"#
        );
        let low = denied("x", Some(&json!({"code": 200, "reason": "Custom"})));
        assert_eq!(
            (low.code, low.message.as_str()),
            (400, r#"admission webhook "x" denied the request: Custom"#)
        );
    }

    #[test]
    fn answers_are_verified_as_kube_verifies_them() {
        let ok = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "u", "allowed": true, "warnings": ["careful"]}});
        let verdict = verify("u", false, &ok).expect("valid");
        assert!(verdict.allowed);
        assert_eq!(verdict.warnings, vec!["careful".to_string()]);
        assert_eq!(
            verify("v", false, &ok).unwrap_err(),
            r#"expected response.uid="v", got "u""#
        );
        assert_eq!(
            verify("u", false, &json!({})).unwrap_err(),
            "webhook response was absent"
        );
        let wrong_kind = json!({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "response": {"uid": "u"}});
        assert_eq!(
            verify("u", false, &wrong_kind).unwrap_err(),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview"
        );
        let patched = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "u", "allowed": true, "patchType": "JSONPatch", "patch": "W10="}});
        assert_eq!(
            verify("u", false, &patched).unwrap_err(),
            "validating webhook may not return response.patch or response.patchType"
        );
        assert_eq!(
            verify("u", true, &patched).expect("valid").patch,
            Some(b"[]".to_vec())
        );
    }
}
