//! Request bodies of create and update: JSON, YAML, Kubernetes protobuf or
//! CBOR in, one JSON object out, with kube's decode errors and field validation
//! (`fieldValidation=Ignore|Warn|Strict`, `handlers/create.go`/`update.go`
//! with the strict decoder of `runtime/serializer/json`).

use serde_json::Value;

use crate::api::context::Api;
use crate::api::exchange::ApiRequest;
use crate::api::target::Target;
use crate::field_validation::{self, FieldValidation};
use crate::negotiate::{media_type, Media};
use crate::status::{Result, Status};

/// Media types a request body may use (`runtime.SerializerInfo` of built-in kinds).
const BODY_MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/cbor",
];

/// The body's media type; a request without Content-Type is JSON (as is
/// `*/*`, which kube's `NegotiateInputSerializer` maps to its first serializer).
fn media(request: &ApiRequest) -> Result<Media> {
    let media = media_type(request.header("content-type").unwrap_or(""));
    if media.is_empty() || media == "*/*" {
        return Ok(Media::Json);
    }
    Media::from_content_type(&media)
        .ok_or_else(|| Status::unsupported_media_type(&media, BODY_MEDIA_TYPES))
}

/// A decoded body and the `Warning` header values to send with the answer.
pub struct Decoded {
    pub object: Value,
    pub warnings: Vec<String>,
}

/// Decode the body as an object of `kind` in `group_version`, then apply
/// field validation at `level` (the request's validated `fieldValidation`).
pub fn decode(
    api: &Api,
    request: &ApiRequest,
    target: &Target<'_>,
    kind: &str,
    group_version: &str,
    level: FieldValidation,
) -> Result<Decoded> {
    let media = media(request)?;
    if target.resource.custom {
        return decode_custom(request, target, media, kind, group_version, level);
    }
    let (mut object, strict) = match media {
        Media::Protobuf => {
            // Protobuf has no unknown or duplicate fields to report.
            let object =
                crate::protobuf::decode_object(&request.body, crate::protobuf::message_for)
                    .map_err(|error| match error {
                        crate::protobuf::ProtobufError::UnknownKind { .. } => {
                            Status::unsupported_media_type(
                                crate::protobuf::CONTENT_TYPE,
                                BODY_MEDIA_TYPES,
                            )
                        }
                        other => Status::bad_request(format!(
                            "couldn't get version/kind; protobuf decode error: {other}"
                        )),
                    })?;
            crate::api::typed::check_depth(kind, &object)?;
            (object, Vec::new())
        }
        Media::Cbor => {
            let object = decode_cbor(&request.body, kind)?;
            // Types are checked on the equivalent JSON, worded as for a
            // JSON body (kube's CBOR decoder words them its own way).
            let json = serde_json::to_vec(&object).unwrap_or_default();
            if let Some(message) = crate::decode_error::decode_failure_message_of_valid_json(
                kind,
                group_version,
                &json,
                None,
                None,
            ) {
                return Err(Status::bad_request(message));
            }
            let strict = if level.is_checked() {
                // CBOR refuses duplicate keys outright; unknown fields are
                // found on the equivalent JSON.
                let (group, version, kind) = schema_of(target, kind, group_version);
                field_validation::strict_errors(&api.openapi, group, version, kind, &json)
            } else {
                Vec::new()
            };
            (object, strict)
        }
        Media::Json => {
            let object = decode_json(&request.body, kind, group_version)?;
            let strict = if level.is_checked() {
                let (group, version, kind) = schema_of(target, kind, group_version);
                field_validation::strict_errors(&api.openapi, group, version, kind, &request.body)
            } else {
                Vec::new()
            };
            (object, strict)
        }
        Media::Yaml => {
            let converted = crate::yaml::yaml_to_json(&request.body).map_err(|error| {
                Status::bad_request(crate::yaml::decode_error_message(
                    kind,
                    &error,
                    &request.body,
                ))
            })?;
            let json = serde_json::to_vec(&converted).unwrap_or_default();
            let object = decode_json(&json, kind, group_version)?;
            let strict = if level.is_checked() {
                let (group, version, kind) = schema_of(target, kind, group_version);
                field_validation::yaml_strict_errors(
                    &api.openapi,
                    group,
                    version,
                    kind,
                    &request.body,
                    &converted,
                )
            } else {
                Vec::new()
            };
            (object, strict)
        }
    };
    let resource = target.resource;
    if kind == resource.kind {
        if let Some(message) =
            crate::api::strategy::template_generation_decode_error(resource, &object)
        {
            return Err(Status::bad_request(message));
        }
        field_validation::drop_unknown_fields(
            &api.openapi,
            resource.group,
            resource.version,
            resource.kind,
            &mut object,
        );
    }
    let warnings = match level {
        FieldValidation::Strict if !strict.is_empty() => {
            let body_version = object
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or(group_version)
                .to_string();
            let version = body_version
                .rsplit('/')
                .next()
                .unwrap_or(&body_version)
                .to_string();
            return Err(Status::bad_request(
                field_validation::strict_decoding_bad_request(kind, &version, kind, &strict),
            ));
        }
        FieldValidation::Warn => field_validation::warnings(&strict)
            .iter()
            .filter_map(|text| field_validation::warning_header_value(text))
            .collect(),
        _ => Vec::new(),
    };
    Ok(Decoded { object, warnings })
}

/// The group, version and kind whose schema field validation reads: the
/// resource's, or for a subresource with a body of its own kind
/// (`serviceaccounts/token`'s TokenRequest, `pods/eviction`'s Eviction)
/// that kind in `group_version`, as kube's strict decoder decodes the
/// subresource's own type.
fn schema_of<'a>(
    target: &Target<'a>,
    kind: &'a str,
    group_version: &'a str,
) -> (&'a str, &'a str, &'a str) {
    let resource = target.resource;
    if kind == resource.kind {
        return (resource.group, resource.version, resource.kind);
    }
    match group_version.split_once('/') {
        Some((group, version)) => (group, version, kind),
        None => ("", group_version, kind),
    }
}

/// Media types a custom resource's body may use (no protobuf: custom
/// resources have no generated messages).
const CUSTOM_BODY_MEDIA_TYPES: &[&str] =
    &["application/json", "application/yaml", "application/cbor"];

/// A custom resource's body, decoded as kube's unstructured decoder does:
/// any JSON object, with the fields its schema does not know pruned. Under
/// `fieldValidation=Strict|Warn` the strict errors are reported as kube's
/// `schemaCoercingDecoder` reports them: first those of the strict decode
/// into `map[string]interface{}` (`duplicate field "spec.x"` for a JSON
/// body, go-yaml's `key "x" already set in map` error for a YAML one; a CBOR
/// body with a repeated key does not decode at all), then the pruned ones
/// (`unknown field "spec.foo"`).
fn decode_custom(
    request: &ApiRequest,
    target: &Target<'_>,
    media: Media,
    kind: &str,
    group_version: &str,
    level: FieldValidation,
) -> Result<Decoded> {
    let mut object = match media {
        Media::Protobuf => {
            return Err(Status::unsupported_media_type(
                crate::protobuf::CONTENT_TYPE,
                CUSTOM_BODY_MEDIA_TYPES,
            ))
        }
        Media::Cbor => decode_cbor(&request.body, kind)?,
        Media::Json => parse_json_object(&request.body, kind)?,
        Media::Yaml => crate::yaml::yaml_to_json(&request.body).map_err(|error| {
            Status::bad_request(crate::yaml::decode_error_message(
                kind,
                &error,
                &request.body,
            ))
        })?,
    };
    if !object.is_object() {
        return Err(not_an_object(kind));
    }
    let mut strict: Vec<String> = match media {
        _ if !level.is_checked() => Vec::new(),
        Media::Json => field_validation::duplicate_fields(&request.body),
        Media::Yaml => crate::yaml::yaml_duplicate_error(&request.body)
            .into_iter()
            .collect(),
        Media::Cbor | Media::Protobuf => Vec::new(),
    };
    if let Some(schema) = target
        .custom
        .as_ref()
        .and_then(|custom| custom.schema_model())
    {
        crate::crd::schema::default(&mut object, schema);
        let pruned = crate::crd::schema::prune(&mut object, schema);
        if level.is_checked() {
            strict.extend(
                pruned
                    .iter()
                    .map(|path| format!("unknown field {}", crate::go::strconv::quote(path))),
            );
        }
    }
    let warnings = match level {
        FieldValidation::Strict if !strict.is_empty() => {
            let body_version = object
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or(group_version);
            let version = body_version.rsplit('/').next().unwrap_or(body_version);
            return Err(Status::bad_request(
                field_validation::strict_decoding_bad_request(kind, version, kind, &strict),
            ));
        }
        FieldValidation::Warn => field_validation::warnings(&strict)
            .iter()
            .filter_map(|text| field_validation::warning_header_value(text))
            .collect(),
        _ => Vec::new(),
    };
    Ok(Decoded { object, warnings })
}

fn parse_json_object(body: &[u8], kind: &str) -> Result<Value> {
    let value = serde_json::from_slice::<Value>(body).map_err(|error| {
        Status::bad_request(format!(
            "couldn't get version/kind; json parse error: {error}"
        ))
    })?;
    if !value.is_object() {
        return Err(not_an_object(kind));
    }
    Ok(value)
}

fn not_an_object(kind: &str) -> Status {
    Status::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: not a JSON object"
    ))
}

/// A CBOR body as an object (`serializer/cbor`), with the wording of
/// `transformDecodeError` for a body that does not decode.
fn decode_cbor(body: &[u8], kind: &str) -> Result<Value> {
    let unrecognized = |reason: String| {
        Status::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): {reason} ({})",
            summarize_binary(body)
        ))
    };
    let value = crate::cbor::decode(body).map_err(|error| {
        unrecognized(format!("unable to determine group/version/kind: {error}"))
    })?;
    if !value.is_object() {
        return Err(unrecognized(
            "unable to determine group/version/kind: cbor: cannot unmarshal into Go value of type struct"
                .to_string(),
        ));
    }
    Ok(value)
}

/// `summarizeData(body, 30)` of handlers/rest.go for a non-JSON body.
fn summarize_binary(body: &[u8]) -> String {
    if body.is_empty() {
        return "<empty>".to_string();
    }
    let hex: String = body
        .iter()
        .take(30)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    if body.len() > 30 {
        format!("{hex} ...")
    } else {
        hex
    }
}

/// A JSON body as an object, with kube's decode error wording (`decode_error.rs`).
fn decode_json(body: &[u8], kind: &str, group_version: &str) -> Result<Value> {
    let parsed = serde_json::from_slice::<Value>(body);
    let message = if parsed.is_ok() {
        crate::decode_error::decode_failure_message_of_valid_json(
            kind,
            group_version,
            body,
            None,
            None,
        )
    } else {
        crate::decode_error::decode_failure_message(kind, group_version, body, None, None)
    };
    if let Some(message) = message {
        return Err(Status::bad_request(message));
    }
    let value = parsed.map_err(|error| {
        Status::bad_request(format!(
            "couldn't get version/kind; json parse error: {error}"
        ))
    })?;
    if !value.is_object() {
        return Err(not_an_object(kind));
    }
    Ok(value)
}
