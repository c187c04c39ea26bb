//! Webhook conversion of custom resources, without IO
//! (apiextensions-apiserver `pkg/apiserver/conversion/webhook_converter.go`):
//! the CRD's `spec.conversion.webhook` ([`WebhookConversion`]), the
//! ConversionReview sent ([`review_request`]), the response checked as kube
//! checks it ([`converted_objects`]: GVK, uid, `result.status`), and each
//! converted object checked and given back the original's metadata but for
//! labels and annotations ([`accept_converted`]: `validateConvertedObject`,
//! `restoreObjectMeta`). The HTTPS call is `webhook_client.rs`; where
//! objects are converted is `api/conversion.rs`.

use serde_json::{json, Map, Value};

use crate::status::FieldError;

/// `spec.conversion.webhook` of a CRD with `strategy: Webhook`.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookConversion {
    /// `clientConfig.url` or `clientConfig.service`; `None` when neither is
    /// set (CRD validation refuses that, so only a stored CRD can lack it).
    pub endpoint: Option<WebhookEndpoint>,
    /// `clientConfig.caBundle`, base64-decoded: PEM certificates.
    pub ca_bundle: Vec<u8>,
    /// `conversionReviewVersions`, in the CRD's order of preference.
    pub review_versions: Vec<String>,
}

/// Where the webhook listens.
#[derive(Debug, Clone, PartialEq)]
pub enum WebhookEndpoint {
    Url(String),
    Service(ServiceReference),
}

/// `clientConfig.service`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceReference {
    pub namespace: String,
    pub name: String,
    /// `path`, "" when unset.
    pub path: String,
    /// `port`, 443 when unset (kube's default).
    pub port: u16,
}

/// A `WebhookClientConfig`: its endpoint (`url`, else `service` with port
/// 443 by default) and its CA bundle (conversion and admission webhooks).
pub fn client_config(client: Option<&Value>) -> (Option<WebhookEndpoint>, Vec<u8>) {
    let text = |value: Option<&Value>, field: &str| -> String {
        value
            .and_then(|value| value.get(field))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let url = text(client, "url");
    let service = client.and_then(|client| client.get("service"));
    let endpoint = if !url.is_empty() {
        Some(WebhookEndpoint::Url(url))
    } else {
        service.map(|service| {
            WebhookEndpoint::Service(ServiceReference {
                namespace: text(Some(service), "namespace"),
                name: text(Some(service), "name"),
                path: text(Some(service), "path"),
                port: service
                    .get("port")
                    .and_then(Value::as_u64)
                    .and_then(|port| u16::try_from(port).ok())
                    .unwrap_or(443),
            })
        })
    };
    let ca_bundle = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(text(client, "caBundle"))
            .unwrap_or_default()
    };
    (endpoint, ca_bundle)
}

impl WebhookConversion {
    /// From a CRD; `None` unless its strategy is `Webhook`.
    pub fn of_crd(crd: &Value) -> Option<Self> {
        if crd
            .pointer("/spec/conversion/strategy")
            .and_then(Value::as_str)
            != Some("Webhook")
        {
            return None;
        }
        let webhook = crd.pointer("/spec/conversion/webhook");
        let client = webhook.and_then(|webhook| webhook.get("clientConfig"));
        let (endpoint, ca_bundle) = client_config(client);
        let review_versions = webhook
            .and_then(|webhook| webhook.get("conversionReviewVersions"))
            .and_then(Value::as_array)
            .map(|versions| {
                versions
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Some(WebhookConversion {
            endpoint,
            ca_bundle,
            review_versions,
        })
    }

    /// The ConversionReview version sent: the first of
    /// `conversionReviewVersions` kube speaks (`createConversionReviewObjects`).
    pub fn review_version(&self) -> Result<ReviewVersion, String> {
        self.review_versions
            .iter()
            .find_map(|version| match version.as_str() {
                "v1" => Some(ReviewVersion::V1),
                "v1beta1" => Some(ReviewVersion::V1beta1),
                _ => None,
            })
            .ok_or_else(|| "no supported conversion review versions".to_string())
    }
}

/// `apiextensions.k8s.io/v1` or `v1beta1` ConversionReview.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewVersion {
    V1,
    V1beta1,
}

impl ReviewVersion {
    fn api_version(self) -> &'static str {
        match self {
            ReviewVersion::V1 => "apiextensions.k8s.io/v1",
            ReviewVersion::V1beta1 => "apiextensions.k8s.io/v1beta1",
        }
    }
}

/// The ConversionReview asking to convert `objects` to `desired`.
pub fn review_request(
    version: ReviewVersion,
    uid: &str,
    desired: &str,
    objects: &[Value],
) -> Value {
    json!({
        "kind": "ConversionReview",
        "apiVersion": version.api_version(),
        "request": {
            "uid": uid,
            "desiredAPIVersion": desired,
            "objects": objects,
        },
    })
}

/// `GroupVersionKind.String()`: `<group>/<version>, Kind=<kind>`, from an
/// `apiVersion` and a kind.
pub fn gvk_text(api_version: &str, kind: &str) -> String {
    let (group, version) = split_api_version(api_version);
    format!("{group}/{version}, Kind={kind}")
}

/// `schema.ParseGroupVersion`, leniently: "v1" is the core group.
fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// The converted objects of a webhook's answer, checked as
/// `getConvertedObjectsFromResponse` checks them (the caller wraps errors
/// in `conversion webhook for <gvk> failed: `).
pub fn converted_objects(
    version: ReviewVersion,
    uid: &str,
    review: &Value,
) -> Result<Vec<Value>, String> {
    if version == ReviewVersion::V1 {
        // v1: the response must be what was asked for (v1beta1 never checked).
        let got = gvk_text(text(review, "apiVersion"), text(review, "kind"));
        let wanted = gvk_text(version.api_version(), "ConversionReview");
        if got != wanted {
            return Err(format!("expected webhook response of {wanted}, got {got}"));
        }
    }
    let response = match review.get("response") {
        Some(response) if response.is_object() => response,
        _ => return Err("no response provided".into()),
    };
    if version == ReviewVersion::V1 && text(response, "uid") != uid {
        return Err(format!(
            "expected response.uid={}, got {}",
            go_quote(uid),
            go_quote(text(response, "uid"))
        ));
    }
    let result = response.get("result").unwrap_or(&Value::Null);
    let status = text(result, "status");
    if status != "Success" {
        let message = text(result, "message");
        if !message.is_empty() {
            return Err(message.to_string());
        }
        return Err(format!(
            "response.result.status was '{status}', not 'Success'"
        ));
    }
    Ok(response
        .get("convertedObjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

fn go_quote(text: &str) -> String {
    crate::go::strconv::quote(text)
}

/// What was converted: one object, or items of a list (kube's messages
/// differ between the two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    Object,
    ListItems,
}

/// The webhook's `converted` objects for `originals` (those sent), each
/// checked and given back its original's metadata but for labels and
/// annotations, as `webhookConverter.Convert` does; `gvk` names the input in
/// messages (`GroupVersionKind.String()` of the object or list converted).
pub fn accept_converted(
    originals: &[Value],
    converted: Vec<Value>,
    desired: &str,
    gvk: &str,
    batch: Batch,
) -> Result<Vec<Value>, String> {
    if converted.len() != originals.len() {
        return Err(format!(
            "conversion webhook for {gvk} returned {} objects, expected {}",
            converted.len(),
            originals.len()
        ));
    }
    let (desired_group, desired_version) = split_api_version(desired);
    let desired_gv = group_version_text(desired_group, desired_version);
    let mut accepted = Vec::with_capacity(converted.len());
    for (index, (original, mut object)) in originals.iter().zip(converted).enumerate() {
        // kube's list messages name the index after it was incremented.
        let (invalid, shown) = match batch {
            Batch::Object => ("invalid object at index 0".to_string(), index),
            Batch::ListItems => (
                format!("invalid converted object at index {}", index + 1),
                index,
            ),
        };
        let kind = object.get("kind").and_then(Value::as_str);
        let Some(kind) = kind.filter(|_| object.is_object()) else {
            let error = format!("Object 'Kind' is missing in '{object}'");
            return Err(match batch {
                Batch::Object => error,
                Batch::ListItems => format!(
                    "conversion webhook for {gvk} returned invalid converted object at index {shown}: {error}"
                ),
            });
        };
        let (group, version) = split_api_version(text(&object, "apiVersion"));
        let got_gv = group_version_text(group, version);
        if got_gv != desired_gv {
            return Err(format!(
                "conversion webhook for {gvk} returned {invalid}: invalid groupVersion (expected {desired_gv}, received {got_gv})"
            ));
        }
        let original_kind = text(original, "kind");
        if kind != original_kind {
            return Err(format!(
                "conversion webhook for {gvk} returned {invalid}: invalid kind (expected {original_kind}, received {kind})"
            ));
        }
        if let Err(error) = validate_converted(original, &object) {
            return Err(match batch {
                Batch::Object => {
                    format!("conversion webhook for {gvk} returned invalid object: {error}")
                }
                Batch::ListItems => {
                    format!("conversion webhook for {gvk} returned {invalid}: {error}")
                }
            });
        }
        if let Err(error) = restore_object_meta(original, &mut object) {
            return Err(match batch {
                Batch::Object => format!("conversion webhook for {gvk} returned invalid metadata: {error}"),
                Batch::ListItems => format!(
                    "conversion webhook for {gvk} returned invalid metadata in object at index {}: {error}",
                    index + 1
                ),
            });
        }
        accepted.push(object);
    }
    Ok(accepted)
}

/// `GroupVersion.String()`: the version alone for the core group.
fn group_version_text(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// `validateConvertedObject`: kind, name, namespace and uid unchanged.
fn validate_converted(original: &Value, converted: &Value) -> Result<(), String> {
    let meta = |object: &Value, field: &str| {
        object
            .get("metadata")
            .and_then(|metadata| metadata.get(field))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let pairs = [
        (
            "kind",
            text(original, "kind").to_string(),
            text(converted, "kind").to_string(),
        ),
        ("name", meta(original, "name"), meta(converted, "name")),
        (
            "namespace",
            meta(original, "namespace"),
            meta(converted, "namespace"),
        ),
        ("UID", meta(original, "uid"), meta(converted, "uid")),
    ];
    for (what, expected, actual) in pairs {
        if expected != actual {
            return Err(format!("must have the same {what}: {expected} != {actual}"));
        }
    }
    Ok(())
}

/// Go's `%T` of a decoded JSON value (unstructured decoding: integers are int64).
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(number) if number.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// `restoreObjectMeta`: the converted object gets the original's metadata,
/// keeping only its own labels and annotations (validated when changed).
fn restore_object_meta(original: &Value, converted: &mut Value) -> Result<(), String> {
    let response_meta = match converted.get("metadata") {
        None => return Err("missing metadata in converted object".into()),
        Some(Value::Object(metadata)) => metadata.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            ))
        }
    };
    let mut restored = match original.get("metadata") {
        None => Map::new(),
        Some(Value::Object(metadata)) => metadata.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in input object",
                go_type(other)
            ))
        }
    };
    for field in ["labels", "annotations"] {
        let response_field = match response_meta.get(field) {
            None | Some(Value::Null) => {
                restored.remove(field);
                continue;
            }
            Some(Value::Object(map)) => map,
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in converted object",
                    go_type(other)
                ))
            }
        };
        let original_field = match restored.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(map),
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in original object",
                    go_type(other)
                ))
            }
        };
        let mut changed = original_field.map_or(0, Map::len) != response_field.len();
        for (key, value) in response_field {
            if !value.is_string() {
                return Err(format!(
                    "metadata.{field}[{key}] must be a string, but is {} in converted object",
                    go_type(value)
                ));
            }
            if original_field.and_then(|map| map.get(key)) != Some(value) {
                changed = true;
            }
        }
        if changed {
            let errors = if field == "labels" {
                label_errors(response_field)
            } else {
                annotation_errors(response_field)
            };
            if !errors.is_empty() {
                return Err(crate::status::FieldError::aggregate(&errors));
            }
        }
        restored.insert(field.into(), Value::Object(response_field.clone()));
    }
    if let Some(map) = converted.as_object_mut() {
        map.insert("metadata".into(), Value::Object(restored));
    }
    Ok(())
}

/// `metav1validation.ValidateLabels` at `metadata.labels`.
fn label_errors(labels: &Map<String, Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (key, value) in labels {
        for message in crate::selector::is_qualified_name(key) {
            errors.push(FieldError::invalid("metadata.labels", key, message));
        }
        let value = value.as_str().unwrap_or_default();
        for message in crate::selector::is_valid_label_value(value) {
            errors.push(FieldError::invalid("metadata.labels", value, message));
        }
    }
    errors
}

/// `apivalidation.ValidateAnnotations` at kube's path `metadata.annotation`
/// (sic, `restoreObjectMeta`); keys only (the 256 KiB total is left to writes).
fn annotation_errors(annotations: &Map<String, Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for key in annotations.keys() {
        for message in crate::selector::is_qualified_name(&key.to_lowercase()) {
            errors.push(FieldError::invalid("metadata.annotation", key, message));
        }
    }
    errors
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
