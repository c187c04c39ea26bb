//! `application/vnd.kubernetes.protobuf` <-> kube's JSON form, driven by a
//! vendored table of kube's proto messages instead of generated code
//! (`crates/formats/data/protobuf-schema.json`, from
//! `scripts/vendor-protobuf.py`).
//!
//! - [`decode_object`]: a request body (`k8s\0` + runtime.Unknown envelope)
//!   -> the JSON object a JSON client would have sent, with `kind` and
//!   `apiVersion`.
//! - [`encode_object`] / [`encode_envelope`] / [`encode_watch_event`]: JSON
//!   -> protobuf for responses.
//! - [`message_for`]: (apiVersion, kind) -> message name.
//!
//! Objects without a protobuf form (custom resources, `meta.k8s.io` Table)
//! have no message: kube answers those requests in JSON
//! (406/415 for protobuf-only clients).

pub mod decode;
pub mod encode;
pub mod envelope;
#[doc(hidden)]
pub mod sample;
pub mod schema;
pub mod wire;

#[cfg(test)]
mod tests;

pub use envelope::{
    decode_object, decode_raw, encode_envelope, encode_list_envelope, encode_message_of,
    encode_object, encode_watch_event, encode_watch_frame, parse_envelope, write_envelope,
    write_list_envelope, Envelope, CONTENT_TYPE, MAGIC,
};
pub use schema::message_for;

/// How deep messages may nest, in both directions (JSONSchemaProps can nest
/// without bound; kube's own limit for JSON is 10000, gogo has none).
pub const MAX_DEPTH: usize = 100;

/// Everything that can go wrong transcoding; all are the client's fault
/// (400 Bad Request) except `UnknownKind` (415 for a request body, 406 for a
/// response) and `Schema` (a build defect).
#[derive(Debug, thiserror::Error)]
pub enum ProtobufError {
    #[error("empty body")]
    Empty,
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    BadMagic,
    #[error("unexpected EOF")]
    Truncated,
    #[error("proto: integer overflow")]
    BadVarint,
    #[error("proto: illegal tag {0}")]
    BadTag(u64),
    #[error("proto: illegal wireType {0}")]
    UnsupportedWireType(u8),
    #[error("proto: wrong wireType = {wire} for field {field} of {message}")]
    WireType {
        message: String,
        field: String,
        wire: u8,
    },
    #[error("proto: invalid UTF-8 in field {field} of {message}")]
    InvalidUtf8 { message: String, field: String },
    #[error("no kind \"{kind}\" is registered for version \"{api_version}\" in protobuf")]
    UnknownKind { api_version: String, kind: String },
    #[error("unknown protobuf message {0}")]
    UnknownMessage(String),
    #[error("object nesting exceeds {0} levels")]
    TooDeep(usize),
    #[error("{context}: {reason}")]
    InvalidValue { context: String, reason: String },
    #[error("{0}: embedded JSON: {1}")]
    EmbeddedJson(String, String),
    #[error("protobuf schema: {0}")]
    Schema(String),
}
