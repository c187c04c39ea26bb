//! kube's protobuf envelope (k8s.io/apimachinery/pkg/runtime/serializer/
//! protobuf/protobuf.go): the 4-byte prefix `k8s\0` (0x6b 0x38 0x73, then the
//! encoding style byte 0x00), then a `runtime.Unknown` message
//! (runtime/generated.proto):
//!
//! ```text
//! message Unknown {
//!   optional TypeMeta typeMeta = 1;      // {apiVersion = 1, kind = 2}
//!   optional bytes raw = 2;              // the object's own message
//!   optional string contentEncoding = 3;
//!   optional string contentType = 4;
//! }
//! ```

use serde_json::{Map, Value};

use super::decode::decode_message;
use super::encode::encode_message;
use super::schema::{message_for, schema, Schema};
use super::wire::{put_bytes, put_key, put_varint, Reader, LEN};
use super::ProtobufError;
use crate::segments::Sink;
use bytes::Bytes;

/// `protoEncodingPrefix` in protobuf.go.
pub const MAGIC: [u8; 4] = *b"k8s\x00";
/// The media type of the envelope.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// A parsed envelope; `raw` borrows from the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope<'a> {
    pub api_version: String,
    pub kind: String,
    pub raw: &'a [u8],
    pub content_encoding: String,
    pub content_type: String,
}

/// Splits a `k8s\0` + runtime.Unknown body, with protobuf.go's checks:
/// empty data, missing prefix, nothing after the prefix.
pub fn parse_envelope(body: &[u8]) -> Result<Envelope<'_>, ProtobufError> {
    if body.is_empty() {
        return Err(ProtobufError::Empty);
    }
    let Some(rest) = body.strip_prefix(&MAGIC) else {
        return Err(ProtobufError::BadMagic);
    };
    if rest.is_empty() {
        return Err(ProtobufError::Empty);
    }
    let mut env = Envelope {
        api_version: String::new(),
        kind: String::new(),
        raw: &[],
        content_encoding: String::new(),
        content_type: String::new(),
    };
    let text = |bytes: &[u8], field: &str| {
        String::from_utf8(bytes.to_vec()).map_err(|_| ProtobufError::InvalidUtf8 {
            message: "runtime.Unknown".to_string(),
            field: field.to_string(),
        })
    };
    let mut r = Reader::new(rest);
    while !r.is_empty() {
        match r.read_key()? {
            (1, LEN) => {
                let mut tm = Reader::new(r.read_bytes()?);
                while !tm.is_empty() {
                    match tm.read_key()? {
                        (1, LEN) => env.api_version = text(tm.read_bytes()?, "apiVersion")?,
                        (2, LEN) => env.kind = text(tm.read_bytes()?, "kind")?,
                        (tag @ (1 | 2), wire) => return Err(unknown_wire(tag, wire)),
                        (_, wire) => tm.skip(wire)?,
                    }
                }
            }
            (2, LEN) => env.raw = r.read_bytes()?,
            (3, LEN) => env.content_encoding = text(r.read_bytes()?, "contentEncoding")?,
            (4, LEN) => env.content_type = text(r.read_bytes()?, "contentType")?,
            (tag @ 1..=4, wire) => return Err(unknown_wire(tag, wire)),
            (_, wire) => r.skip(wire)?,
        }
    }
    Ok(env)
}

fn unknown_wire(tag: u32, wire: u8) -> ProtobufError {
    ProtobufError::WireType {
        message: "runtime.Unknown".to_string(),
        field: format!("#{tag}"),
        wire,
    }
}

/// Writes `k8s\0` + runtime.Unknown around an encoded message, field for
/// field as gogo's Unknown.MarshalToSizedBuffer does (empty contentEncoding
/// and contentType included).
pub fn write_envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    put_bytes(&mut type_meta, 1, api_version.as_bytes());
    put_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 20);
    out.extend_from_slice(&MAGIC);
    put_bytes(&mut out, 1, &type_meta);
    put_bytes(&mut out, 2, raw);
    put_bytes(&mut out, 3, b"");
    put_bytes(&mut out, 4, b"");
    out
}

/// Decodes a protobuf request body (`k8s\0` envelope) to kube's JSON form,
/// `kind` and `apiVersion` first (from the envelope's typeMeta, as kube's
/// decoder sets them). `schema_for(apiVersion, kind)` names the message;
/// [`message_for`] is the stock answer.
pub fn decode_object<'s>(
    body: &[u8],
    schema_for: impl Fn(&str, &str) -> Option<&'s str>,
) -> Result<Value, ProtobufError> {
    let env = parse_envelope(body)?;
    let schema = schema()?;
    let name = schema_for(&env.api_version, &env.kind).ok_or_else(|| unknown_kind(&env))?;
    let index = schema
        .index_of(name)
        .ok_or_else(|| ProtobufError::UnknownMessage(name.to_string()))?;
    decode_typed(schema, &env, index, 0)
}

fn unknown_kind(env: &Envelope<'_>) -> ProtobufError {
    ProtobufError::UnknownKind {
        api_version: env.api_version.clone(),
        kind: env.kind.clone(),
    }
}

fn decode_typed(
    schema: &Schema,
    env: &Envelope<'_>,
    index: usize,
    depth: usize,
) -> Result<Value, ProtobufError> {
    // protobuf.go: NewMissingKindErr / NewMissingVersionErr.
    if env.kind.is_empty() || env.api_version.is_empty() {
        return Err(unknown_kind(env));
    }
    let body = decode_message(schema, index, env.raw, depth)?;
    let mut out = Map::new();
    out.insert("kind".to_string(), Value::String(env.kind.clone()));
    out.insert(
        "apiVersion".to_string(),
        Value::String(env.api_version.clone()),
    );
    if let Value::Object(fields) = body {
        out.extend(fields);
    }
    Ok(Value::Object(out))
}

/// An envelope inside a RawExtension (watch events' objects).
pub(super) fn decode_nested(
    schema: &Schema,
    body: &[u8],
    depth: usize,
) -> Result<Value, ProtobufError> {
    let env = parse_envelope(body)?;
    let message = schema
        .message_for(&env.api_version, &env.kind)
        .ok_or_else(|| unknown_kind(&env))?;
    let index = schema
        .index_of(&message.name)
        .ok_or_else(|| ProtobufError::UnknownMessage(message.name.clone()))?;
    decode_typed(schema, &env, index, depth)
}

/// Decodes one message without envelope (kube's RawSerializer form, e.g. a
/// watch frame as `io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent`); the
/// result has no `kind`/`apiVersion` of its own.
pub fn decode_raw(raw: &[u8], message: &str) -> Result<Value, ProtobufError> {
    let schema = schema()?;
    let index = schema
        .index_of(message)
        .ok_or_else(|| ProtobufError::UnknownMessage(message.to_string()))?;
    decode_message(schema, index, raw, 0)
}

/// Encodes `value` as the message `message` (OpenAPI-style name), without
/// the envelope (kube's RawSerializer form).
pub fn encode_object(value: &Value, message: &str) -> Result<Vec<u8>, ProtobufError> {
    let schema = schema()?;
    let index = schema
        .index_of(message)
        .ok_or_else(|| ProtobufError::UnknownMessage(message.to_string()))?;
    let mut out = Vec::new();
    encode_message(schema, index, value, 0, &mut out)?;
    Ok(out)
}

/// A full response body: `k8s\0` + runtime.Unknown with the object's own
/// `apiVersion`/`kind` and its message (looked up with [`message_for`]).
pub fn encode_envelope(value: &Value) -> Result<Vec<u8>, ProtobufError> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let message = message_for(api_version, kind).ok_or_else(|| ProtobufError::UnknownKind {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
    })?;
    let raw = encode_object(value, message)?;
    Ok(write_envelope(api_version, kind, &raw))
}

/// The message of an object by its own `apiVersion`/`kind`, without envelope;
/// `None` when the kind has no protobuf form or the object does not fit it.
pub fn encode_message_of(value: &Value) -> Option<Vec<u8>> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
    let schema = schema().ok()?;
    // By index: no second lookup by the (long) message name.
    let index = schema.index_for(text("apiVersion"), text("kind"))?;
    let mut out = Vec::with_capacity(1024);
    encode_message(schema, index, value, 0, &mut out).ok()?;
    // Kept per object version: no spare capacity (shrinking reallocates in place).
    out.shrink_to_fit();
    Some(out)
}

/// A list response (`<Kind>List` {metadata 1: ListMeta, items 2}) from the
/// list's JSON head (`kind`, `apiVersion`, `metadata`) and the items' own
/// messages (cached per object version, so a list is a concatenation).
pub fn encode_list_envelope<'a>(
    head: &Value,
    items: impl Iterator<Item = &'a [u8]>,
) -> Result<Vec<u8>, ProtobufError> {
    let items: Vec<Bytes> = items.map(Bytes::copy_from_slice).collect();
    let borrowed: Vec<&Bytes> = items.iter().collect();
    let mut out = Vec::new();
    write_list_envelope(head, &borrowed, &mut out)?;
    Ok(out)
}

/// [`encode_list_envelope`] into a [`Sink`], the cached item messages shared
/// rather than copied: the list message's length is summed up front, so the
/// envelope is written in one pass.
pub fn write_list_envelope<S: Sink>(
    head: &Value,
    items: &[&Bytes],
    sink: &mut S,
) -> Result<(), ProtobufError> {
    let text = |key: &str| head.get(key).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if message_for(api_version, kind).is_none() {
        return Err(ProtobufError::UnknownKind {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
        });
    }
    let empty = Value::Object(Map::new());
    let metadata = encode_object(
        head.get("metadata").unwrap_or(&empty),
        "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
    )?;
    let mut out = Vec::with_capacity(metadata.len() + 64);
    put_bytes(&mut out, 1, &metadata);
    let raw_len = out.len()
        + items
            .iter()
            .map(|item| 1 + varint_len(item.len() as u64) + item.len())
            .sum::<usize>();
    let mut prefix = Vec::with_capacity(api_version.len() + kind.len() + 32);
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    put_bytes(&mut type_meta, 1, api_version.as_bytes());
    put_bytes(&mut type_meta, 2, kind.as_bytes());
    prefix.extend_from_slice(&MAGIC);
    put_bytes(&mut prefix, 1, &type_meta);
    put_key(&mut prefix, 2, LEN);
    put_varint(&mut prefix, raw_len as u64);
    sink.put(&prefix);
    sink.put(&out);
    for item in items {
        out.clear();
        put_key(&mut out, 2, LEN);
        put_varint(&mut out, item.len() as u64);
        sink.put(&out);
        sink.put_shared(item);
    }
    out.clear();
    put_bytes(&mut out, 3, b"");
    put_bytes(&mut out, 4, b"");
    sink.put(&out);
    Ok(())
}

fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// One watch event for a `application/vnd.kubernetes.protobuf;stream=watch`
/// response: a `metav1.WatchEvent` {type 1, object 2 = RawExtension whose raw
/// is the object's full envelope}, without envelope of its own (the watch
/// stream uses the RawSerializer), preceded by its length as a 4-byte
/// big-endian integer (framer.NewLengthDelimitedFrameWriter).
pub fn encode_watch_event(event_type: &str, object: &Value) -> Result<Vec<u8>, ProtobufError> {
    encode_watch_frame(event_type, &encode_envelope(object)?)
}

/// [`encode_watch_event`] around an object already in its envelope (for
/// stored objects, whose message is cached).
pub fn encode_watch_frame(event_type: &str, envelope: &[u8]) -> Result<Vec<u8>, ProtobufError> {
    let mut raw_extension = Vec::with_capacity(envelope.len() + 8);
    put_bytes(&mut raw_extension, 1, envelope);
    let mut event = Vec::with_capacity(raw_extension.len() + event_type.len() + 8);
    put_bytes(&mut event, 1, event_type.as_bytes());
    put_bytes(&mut event, 2, &raw_extension);
    let len = u32::try_from(event.len()).map_err(|_| ProtobufError::InvalidValue {
        context: "watch event".to_string(),
        reason: "larger than 4 GiB".to_string(),
    })?;
    let mut out = Vec::with_capacity(event.len() + 4);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&event);
    Ok(out)
}
