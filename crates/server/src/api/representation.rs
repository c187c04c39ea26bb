//! The last step of every resource request: turn what a handler produced
//! into the negotiated representation (`handlers/response.go`
//! `transformResponseObject`, then `responsewriters.WriteObjectNegotiated`):
//!
//! 1. transform: the object itself, a meta.k8s.io Table, or
//!    PartialObjectMetadata(List);
//! 2. encode: JSON (optionally indented), YAML, Kubernetes protobuf or CBOR;
//!    errors (`Status`) in the media type the client accepts, as
//!    `ErrorNegotiated` does;
//! 3. compress: gzip for bodies of at least 128 KiB when the client accepts it.
//!
//! Stored objects keep their JSON and protobuf encodings cached per object
//! version (`object.rs`), so a list in either format is a concatenation.
//!
//! Custom resources leave here at the request's version: every object read
//! goes through [`Reading`] (`crd::conversion`), and a handler's object or
//! list through `crd::conversion::serve_response`. Their list items keep
//! `apiVersion` and `kind`, as kube's unstructured lists do.

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{json, Map, Value};
use std::io::Write as _;

use super::exchange::{
    ApiRequest, ApiResponse, AuditCapture, AuditedResponse, ListPayload, Payload, ResponseBody,
};
use super::target::Target;
use crate::crd::{conversion, CustomVersion, PrinterColumn};
use crate::negotiate::{self, Media, Negotiated, Representation};
use crate::object::{self, StoredObject};
use crate::registry::ResourceDef;
use crate::segments::{Segments, Sink};
use crate::status::Status;
use crate::table;
use crate::versions;

/// kube's `defaultGzipThresholdBytes` (responsewriters/writers.go).
pub const GZIP_THRESHOLD_BYTES: usize = 128 * 1024;

/// How stored objects are read for one response: as cached (built-in
/// kinds), or as a custom resource served at the request's version.
#[derive(Clone, Copy)]
pub struct Reading<'a> {
    custom: Option<&'a CustomVersion>,
}

impl<'a> Reading<'a> {
    pub fn of(custom: Option<&'a CustomVersion>) -> Self {
        Reading { custom }
    }

    /// The object's JSON (the cached bytes unless a conversion changes them).
    pub fn json(&self, object: &StoredObject) -> Option<Bytes> {
        match self.custom {
            Some(custom) => conversion::served_json(object, custom),
            None => object.json().cloned(),
        }
    }

    /// The object as a tree.
    pub fn value(&self, object: &StoredObject) -> Option<Value> {
        match self.custom {
            Some(custom) => conversion::served_value(object, custom),
            None => object.value(),
        }
    }

    /// List items keep `apiVersion` and `kind` (custom resources: kube's
    /// unstructured lists encode each item whole).
    fn typed_items(&self) -> bool {
        self.custom.is_some()
    }
}

/// Encodes a handler's outcome as `negotiated` (`None`: output negotiation
/// failed, so only an error can follow).
pub fn represent(
    outcome: Result<ApiResponse, Status>,
    request: &ApiRequest,
    target: &Target<'_>,
    negotiated: Option<Negotiated>,
) -> ApiResponse {
    let resource = target.resource;
    let printer_columns = target
        .custom
        .as_ref()
        .map(|custom| custom.printer_columns.as_slice());
    let reading = Reading::of(target.custom.as_deref());
    let mut response = outcome.unwrap_or_else(|status| ApiResponse::error(&status));
    let Some(mut payload) = response.payload.take() else {
        return compress(request, response);
    };
    if let (Payload::Value(value), Some(custom)) = (&mut payload, target.custom.as_deref()) {
        conversion::serve_response(value, custom, resource.kind, &resource.list_kind());
    }
    let payload = match at_request_version(payload, resource) {
        Ok(payload) => payload,
        Err(status) => return represent_error(&status, request),
    };
    let is_status = matches!(&payload, Payload::Value(value) if is_status(value));
    let negotiated = match negotiated {
        Some(negotiated) if !is_status => negotiated,
        _ => negotiate::negotiate_error(request.header("accept")),
    };
    let payload = match transform(
        payload,
        negotiated.representation,
        request,
        resource,
        printer_columns,
        reading,
    ) {
        Ok(payload) => payload,
        Err(status) => return represent_error(&status, request),
    };
    finish(response, &payload, negotiated, request, reading)
}

/// A built-in kind served in several versions (`versions`) at the
/// request's: stored objects and list items stored at another version are
/// converted (those already there keep their cached encodings), and an
/// object or list of the kind a handler built (a write's answer,
/// deletecollection's list) is answered as read back from storage.
fn at_request_version(payload: Payload, resource: &ResourceDef) -> Result<Payload, Status> {
    if versions::storage_api_version(resource).is_none() {
        return Ok(payload);
    }
    let failed = |error: versions::Error| Status::internal(error);
    Ok(match payload {
        Payload::Stored { object, revision } => Payload::Stored {
            object: versions::served(&object, resource).map_err(failed)?,
            revision,
        },
        Payload::List(mut list) => {
            list.items = list
                .items
                .iter()
                .map(|item| versions::served(item, resource))
                .collect::<Result<_, _>>()
                .map_err(failed)?;
            Payload::List(list)
        }
        Payload::Value(mut value) => {
            let kind = value
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if kind == resource.kind {
                versions::as_read_back(&mut value, resource).map_err(failed)?;
            } else if kind == resource.list_kind() {
                if let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) {
                    for item in items {
                        versions::as_read_back(item, resource).map_err(failed)?;
                    }
                }
            }
            Payload::Value(value)
        }
    })
}

/// An error `Status` from a resource path, in the media type the client
/// accepts (`responsewriters.ErrorNegotiated`), also where the resource is
/// unknown.
pub fn represent_error(status: &Status, request: &ApiRequest) -> ApiResponse {
    let mut response = ApiResponse::error(status);
    let payload = Payload::Value(status.to_json());
    response.payload = None;
    let negotiated = negotiate::negotiate_error(request.header("accept"));
    finish(response, &payload, negotiated, request, Reading::of(None))
}

/// Encodes `payload` as `negotiated` into `response`, then compresses it.
fn finish(
    mut response: ApiResponse,
    payload: &Payload,
    negotiated: Negotiated,
    request: &ApiRequest,
    reading: Reading<'_>,
) -> ApiResponse {
    if request.audit != AuditCapture::Off {
        response.audited = Some(Box::new(audited(payload, request.audit, reading)));
    }
    let pretty = negotiated.pretty
        || negotiate::pretty_requested(request.query.get("pretty"), request.header("user-agent"));
    let (media, body) = match encode_body(payload, negotiated.media, pretty, reading) {
        Some(body) => (negotiated.media, body),
        // No protobuf form after all (an object of another kind): JSON, which
        // clients decode by the response's Content-Type.
        None => (
            Media::Json,
            encode_body(payload, Media::Json, pretty, reading)
                .unwrap_or_else(|| ResponseBody::Full(encode_json(payload, pretty, reading))),
        ),
    };
    let content_type = Negotiated {
        media,
        ..negotiated
    }
    .content_type();
    response
        .headers
        .retain(|(name, _)| name != http::header::CONTENT_TYPE);
    response
        .headers
        .insert(0, (http::header::CONTENT_TYPE, content_type));
    response.body = body;
    compress(request, response)
}

/// What the audit log records of a response (`LogResponseObject`): a
/// `Status` always, the object at `RequestResponse`.
fn audited(payload: &Payload, capture: AuditCapture, reading: Reading<'_>) -> AuditedResponse {
    let status = match payload {
        Payload::Value(value) if is_status(value) => Some(value.clone()),
        _ => None,
    };
    let object = (capture == AuditCapture::Object).then(|| match payload {
        Payload::Value(value) => value.clone(),
        Payload::Stored { object, .. } => reading.value(object).unwrap_or(Value::Null),
        Payload::List(list) => list_value(list, reading),
    });
    AuditedResponse {
        status,
        object,
        panic: None,
    }
}

fn is_status(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str) == Some("Status")
        && value.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

fn not_acceptable(message: String) -> Status {
    Status {
        code: 406,
        reason: "NotAcceptable",
        message,
        details: None,
    }
}

/// Go's `%T` of the internal object kube transforms (`*core.Pod`, `*apps.DeploymentList`).
fn go_type(resource: &ResourceDef, list: bool) -> String {
    let package = match resource.group {
        "" => "core",
        group => group.split('.').next().unwrap_or(group),
    };
    let suffix = if list { "List" } else { "" };
    format!("*{package}.{}{suffix}", resource.kind)
}

fn transform(
    payload: Payload,
    representation: Representation,
    request: &ApiRequest,
    resource: &ResourceDef,
    printer_columns: Option<&[PrinterColumn]>,
    reading: Reading<'_>,
) -> Result<Payload, Status> {
    match representation {
        Representation::Json | Representation::AggregatedDiscovery(_) => Ok(payload),
        Representation::Table(version) => Ok(as_table(
            payload,
            version,
            request,
            resource,
            printer_columns,
            reading,
        )),
        Representation::PartialObjectMetadata(version) => match payload {
            Payload::List(_) => Err(not_acceptable(format!(
                "you requested PartialObjectMetadata, but the requested object is a list ({})",
                go_type(resource, true)
            ))),
            Payload::Stored { object, .. } => Ok(Payload::Value(partial(
                &reading.value(&object).unwrap_or(Value::Null),
                version,
            ))),
            Payload::Value(value) => Ok(Payload::Value(partial(&value, version))),
        },
        Representation::PartialObjectMetadataList(version) => match payload {
            Payload::List(list) => {
                let items: Vec<Value> = list
                    .items
                    .iter()
                    .filter_map(|item| reading.value(item))
                    .map(|value| partial(&value, version))
                    .collect();
                let mut head = list_head(&list);
                head.insert(
                    "apiVersion".into(),
                    json!(format!("meta.k8s.io/{version}")),
                );
                head.insert("kind".into(), json!("PartialObjectMetadataList"));
                head.insert("items".into(), Value::Array(items));
                Ok(Payload::Value(Value::Object(head)))
            }
            _ => Err(not_acceptable(format!(
                "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
                go_type(resource, false)
            ))),
        },
    }
}

/// `meta.AsPartialObjectMetadata` with the requested group version.
fn partial(value: &Value, version: &str) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": object::metadata(value).cloned().unwrap_or_default(),
    })
}

/// The Table's `includeObject` option (`Metadata` when absent).
pub fn include_object(request: &ApiRequest) -> &str {
    request.query.get("includeObject").unwrap_or("Metadata")
}

fn as_table(
    payload: Payload,
    version: &'static str,
    request: &ApiRequest,
    resource: &ResourceDef,
    printer_columns: Option<&[PrinterColumn]>,
    reading: Reading<'_>,
) -> Payload {
    let body = match payload {
        Payload::Stored { object, revision } => {
            let Some(value) = reading.value(&object) else {
                return Payload::Stored { object, revision };
            };
            table::table(
                table::TableOf {
                    resource,
                    custom: printer_columns,
                },
                version,
                std::slice::from_ref(&value),
                revision,
                None,
                include_object(request),
            )
        }
        Payload::Value(value) => {
            // Only objects of the endpoint's kind have its printer, and lists
            // of them a handler built (componentstatuses).
            let kind = value
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let listed = kind.strip_suffix("List") == Some(resource.kind);
            if kind != resource.kind && !listed {
                return Payload::Value(value);
            }
            let revision = object::resource_version(&value).parse().unwrap_or(0);
            let items = match value.get("items").and_then(Value::as_array) {
                Some(items) if listed => items.as_slice(),
                _ => std::slice::from_ref(&value),
            };
            table::table(
                table::TableOf {
                    resource,
                    custom: printer_columns,
                },
                version,
                items,
                revision,
                None,
                include_object(request),
            )
        }
        Payload::List(list) => {
            let values: Vec<Value> = list
                .items
                .iter()
                .filter_map(|item| reading.value(item))
                .collect();
            let mut body = table::table(
                table::TableOf {
                    resource,
                    custom: printer_columns,
                },
                version,
                &values,
                list.revision,
                list.continue_token.as_deref(),
                include_object(request),
            );
            if let (Some(remaining), Some(metadata)) = (
                list.remaining,
                body.get_mut("metadata").and_then(Value::as_object_mut),
            ) {
                metadata.insert("remainingItemCount".into(), json!(remaining));
            }
            body
        }
    };
    Payload::Value(body)
}

/// `kind`, `apiVersion` and `metadata` of a list.
fn list_head(list: &ListPayload) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), json!(list.revision.to_string()));
    if let Some(token) = &list.continue_token {
        metadata.insert("continue".into(), json!(token));
    }
    if let Some(remaining) = list.remaining {
        metadata.insert("remainingItemCount".into(), json!(remaining));
    }
    let mut head = Map::new();
    head.insert("kind".into(), json!(list.kind));
    head.insert("apiVersion".into(), json!(list.api_version));
    head.insert("metadata".into(), Value::Object(metadata));
    head
}

/// The whole list as one tree (YAML, pretty JSON, CBOR of custom resources).
fn list_value(list: &ListPayload, reading: Reading<'_>) -> Value {
    let mut head = list_head(list);
    let items = list
        .items
        .iter()
        .filter_map(|item| reading.value(item))
        .map(|mut value| {
            if let (Some(map), false) = (value.as_object_mut(), reading.typed_items()) {
                // kube encodes items of built-in lists without type fields.
                map.remove("kind");
                map.remove("apiVersion");
            }
            value
        })
        .collect();
    head.insert("items".into(), Value::Array(items));
    Value::Object(head)
}

fn encode_json(payload: &Payload, pretty: bool, reading: Reading<'_>) -> Bytes {
    let to_bytes = |value: &Value| {
        let bytes = if pretty {
            serde_json::to_vec_pretty(value)
        } else {
            serde_json::to_vec(value)
        };
        Bytes::from(bytes.unwrap_or_default())
    };
    match payload {
        Payload::Value(value) => to_bytes(value),
        Payload::Stored { object, .. } if pretty => {
            to_bytes(&reading.value(object).unwrap_or(Value::Null))
        }
        Payload::Stored { object, .. } => reading.json(object).unwrap_or_default(),
        Payload::List(list) if pretty => to_bytes(&list_value(list, reading)),
        Payload::List(list) => list_json(list, reading),
    }
}

/// `{"kind":..,"apiVersion":..,"metadata":{..},"items":[..]}` from each
/// item's cached JSON: no item is re-encoded.
pub fn list_json(list: &ListPayload, reading: Reading<'_>) -> Bytes {
    let mut out = Vec::new();
    write_list_json(list, &mut out, reading);
    Bytes::from(out)
}

fn write_list_json<S: Sink>(list: &ListPayload, sink: &mut S, reading: Reading<'_>) {
    let head = serde_json::to_vec(&Value::Object(list_head(list))).unwrap_or_default();
    sink.put(&head[..head.len().saturating_sub(1)]);
    sink.put(b",\"items\":[");
    // Static separators: shared like the items, so a segmented list
    // allocates nothing per item.
    let mut first = true;
    if reading.typed_items() {
        // Whole objects, at the request's version (shared when unchanged).
        let next = Bytes::from_static(b",");
        for json in list.items.iter().filter_map(|item| reading.json(item)) {
            if !first {
                sink.put_shared(&next);
            }
            sink.put_shared(&json);
            first = false;
        }
    } else {
        let (open, next) = (Bytes::from_static(b"{"), Bytes::from_static(b",{"));
        for body in list.items.iter().filter_map(|item| item.item_body()) {
            sink.put_shared(if first { &open } else { &next });
            sink.put_shared(&body);
            first = false;
        }
    }
    sink.put(b"]}");
}

/// A list body in `media` as pieces that share the items' cached encodings
/// (sent as the connection takes them, `crate::segments`); `None` for
/// representations built whole (pretty JSON, YAML) or without a protobuf form.
fn list_segments(list: &ListPayload, media: Media, reading: Reading<'_>) -> Option<Segments> {
    let mut segments = Segments::new();
    match media {
        Media::Json => write_list_json(list, &mut segments, reading),
        Media::Cbor => {
            let items: Vec<&Bytes> = list
                .items
                .iter()
                .filter_map(|item| item.cbor_item())
                .collect();
            crate::cbor::write_list(&list_head(list), items.len(), &mut segments, |sink| {
                for item in &items {
                    sink.put_shared(item);
                }
            });
        }
        Media::Protobuf => {
            let raws: Option<Vec<&Bytes>> = list.items.iter().map(|item| item.protobuf()).collect();
            let head = Value::Object(list_head(list));
            crate::protobuf::write_list_envelope(&head, &raws?, &mut segments).ok()?;
        }
        Media::Yaml => return None,
    }
    Some(segments)
}

/// The body in `media` (lists in pieces); `None` when the payload has no
/// protobuf form.
fn encode_body(
    payload: &Payload,
    media: Media,
    pretty: bool,
    reading: Reading<'_>,
) -> Option<ResponseBody> {
    // Cached CBOR items carry no type fields: typed items are encoded whole.
    let cached_items = media != Media::Cbor || !reading.typed_items();
    if let (Payload::List(list), false, Media::Json | Media::Cbor | Media::Protobuf, true) =
        (payload, pretty, media, cached_items)
    {
        return list_segments(list, media, reading).map(ResponseBody::Segments);
    }
    encode(payload, media, pretty, reading).map(ResponseBody::Full)
}

/// The body in `media`; `None` when the payload has no protobuf form.
fn encode(payload: &Payload, media: Media, pretty: bool, reading: Reading<'_>) -> Option<Bytes> {
    match media {
        Media::Json => Some(encode_json(payload, pretty, reading)),
        Media::Yaml => {
            let text = match payload {
                Payload::Value(value) => crate::yaml::json_to_yaml(value),
                Payload::Stored { object, .. } => {
                    crate::yaml::json_to_yaml(&reading.value(object).unwrap_or(Value::Null))
                }
                Payload::List(list) => crate::yaml::json_to_yaml(&list_value(list, reading)),
            };
            Some(Bytes::from(text))
        }
        Media::Cbor => Some(Bytes::from(match payload {
            Payload::Value(value) => crate::cbor::encode(value),
            Payload::Stored { object, .. } => {
                crate::cbor::encode(&reading.value(object).unwrap_or(Value::Null))
            }
            Payload::List(list) if reading.typed_items() => {
                crate::cbor::encode(&list_value(list, reading))
            }
            Payload::List(list) => {
                let head = list_head(list);
                // Items come from the per-version cache, like JSON's.
                let items: Vec<&Bytes> = list
                    .items
                    .iter()
                    .filter_map(|item| item.cbor_item())
                    .collect();
                crate::cbor::encode_list_raw(&head, items.iter().map(|b| b.as_ref()), items.len())
            }
        })),
        Media::Protobuf => encode_protobuf(payload).map(Bytes::from),
    }
}

fn encode_protobuf(payload: &Payload) -> Option<Vec<u8>> {
    match payload {
        Payload::Value(value) => crate::protobuf::encode_envelope(value).ok(),
        Payload::Stored { object, .. } => {
            let (api_version, kind) = object.type_fields()?;
            let raw = object.protobuf()?;
            Some(crate::protobuf::write_envelope(&api_version, &kind, raw))
        }
        Payload::List(list) => {
            let raws: Option<Vec<&Bytes>> = list.items.iter().map(|item| item.protobuf()).collect();
            let raws = raws?;
            let head = Value::Object(list_head(list));
            crate::protobuf::encode_list_envelope(&head, raws.iter().map(|raw| raw.as_ref())).ok()
        }
    }
}

/// The representation of a watch's events (`handlers/watch.go`): negotiated
/// among the serializers that stream; each event is one object, so a
/// PartialObjectMetadataList is refused.
pub fn negotiate_watch(request: &ApiRequest, resource: &ResourceDef) -> Result<Negotiated, Status> {
    let capabilities = negotiate::Capabilities {
        protobuf: crate::protobuf::message_for(&resource.api_version(), resource.kind).is_some(),
        table: !resource.storage.is_empty(),
    };
    let negotiated = negotiate::negotiate_watch(request.header("accept"), capabilities)?;
    if let Representation::PartialObjectMetadataList(_) = negotiated.representation {
        return Err(not_acceptable(format!(
            "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
            go_type(resource, false)
        )));
    }
    Ok(negotiated)
}

/// The `Content-Type` of a watch stream: JSON as for one object, protobuf
/// with `;stream=watch` (watch.go), CBOR as a CBOR sequence.
pub fn watch_content_type(negotiated: &Negotiated) -> String {
    match negotiated.media {
        Media::Protobuf => format!("{};stream=watch", crate::protobuf::CONTENT_TYPE),
        Media::Cbor => crate::cbor::SEQ_CONTENT_TYPE.to_string(),
        Media::Json | Media::Yaml => negotiated.content_type(),
    }
}

/// One watch event (`type`, object as a JSON tree) in `media`: a JSON line,
/// a length-prefixed protobuf WatchEvent, or one CBOR sequence item.
pub fn watch_event(media: Media, event_type: &str, object: &Value) -> Bytes {
    match media {
        Media::Protobuf => match crate::protobuf::encode_watch_event(event_type, object) {
            Ok(frame) => Bytes::from(frame),
            // No protobuf form (cannot happen for negotiated kinds): JSON.
            Err(_) => json_watch_line(event_type, &serde_json::to_vec(object).unwrap_or_default()),
        },
        Media::Cbor => Bytes::from(crate::cbor::encode_watch_event(event_type, object)),
        Media::Json | Media::Yaml => {
            json_watch_line(event_type, &serde_json::to_vec(object).unwrap_or_default())
        }
    }
}

/// A stored object's watch event in protobuf from its cached message.
pub fn protobuf_watch_event(event_type: &str, object: &object::StoredObject) -> Option<Bytes> {
    let (api_version, kind) = object.type_fields()?;
    let raw = object.protobuf()?;
    let envelope = crate::protobuf::write_envelope(&api_version, &kind, raw);
    crate::protobuf::encode_watch_frame(event_type, &envelope)
        .ok()
        .map(Bytes::from)
}

/// `{"type":TYPE,"object":OBJECT}\n`.
pub fn json_watch_line(event_type: &str, object: &[u8]) -> Bytes {
    let mut line = BytesMut::with_capacity(object.len() + 32);
    line.put_slice(b"{\"type\":\"");
    line.put_slice(event_type.as_bytes());
    line.put_slice(b"\",\"object\":");
    line.put_slice(object);
    line.put_slice(b"}\n");
    line.freeze()
}

/// kube's `acceptsGzip`: the `Accept-Encoding` header names gzip.
fn accepts_gzip(request: &ApiRequest) -> bool {
    request
        .headers
        .get_all(http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains("gzip"))
}

/// gzip a full body of at least [`GZIP_THRESHOLD_BYTES`] for a client that
/// accepts it (`responsewriters.deferredResponseWriter`); never a stream.
pub fn compress(request: &ApiRequest, mut response: ApiResponse) -> ApiResponse {
    let len = match &response.body {
        ResponseBody::Full(body) => body.len(),
        ResponseBody::Segments(segments) => segments.len(),
        ResponseBody::Stream(_) => return response,
    };
    if len < GZIP_THRESHOLD_BYTES || !accepts_gzip(request) {
        return response;
    }
    // Only now, for a body that is compressed, are its pieces listed.
    let parts: Vec<&[u8]> = match &response.body {
        ResponseBody::Full(body) => vec![&body[..]],
        ResponseBody::Segments(segments) => segments.parts().collect(),
        ResponseBody::Stream(_) => return response,
    };
    let mut encoder =
        flate2::write::GzEncoder::new(Vec::with_capacity(len / 4), flate2::Compression::new(1));
    if parts.iter().any(|part| encoder.write_all(part).is_err()) {
        return response;
    }
    let Ok(compressed) = encoder.finish() else {
        return response;
    };
    response.body = ResponseBody::Full(Bytes::from(compressed));
    response
        .headers
        .push((http::header::CONTENT_ENCODING, "gzip".to_string()));
    response
        .headers
        .push((http::header::VARY, "Accept-Encoding".to_string()));
    response
}
