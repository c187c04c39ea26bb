//! `application/cbor`: kube's CBOR serializer
//! (`apimachinery/pkg/runtime/serializer/cbor`) over the server's JSON trees.
//!
//! - Every encoded object starts with the self-described CBOR tag 55799
//!   (`0xd9 0xd9 0xf7`), which kube uses as the magic number of the format.
//! - Encoding follows `internal/modes/encode.go`: strings and map keys as byte
//!   strings, map keys in bytewise lexical order of their encoding, floats in
//!   the shortest width that keeps their value, definite lengths only.
//! - Decoding follows `internal/modes/decode.go`: text or byte strings,
//!   duplicate map keys refused, integers must fit an int64, no NaN or
//!   infinity, tag 55799 accepted anywhere, nesting bounded.
//! - A watch stream (`application/cbor-seq`) is one encoded `WatchEvent` per
//!   item (RFC 8742 CBOR sequence), each with its own tag.

mod decode;
mod encode;

#[cfg(test)]
mod tests;

pub use decode::{decode, decode_seq};
pub use encode::{
    encode, encode_into, encode_list, encode_list_item, encode_list_raw, encode_watch_event,
    write_list,
};

/// The media type of a CBOR body.
pub const CONTENT_TYPE: &str = "application/cbor";
/// The media type of a CBOR watch stream.
pub const SEQ_CONTENT_TYPE: &str = "application/cbor-seq";
/// Head of tag 55799, "self-described CBOR" (RFC 8949 3.4.6).
pub const SELF_DESCRIBED: [u8; 3] = [0xd9, 0xd9, 0xf7];
/// How deep arrays and maps may nest (`MaxNestedLevels` of kube's decode mode).
pub const MAX_NESTING: usize = 64;

/// Why a CBOR body does not decode; all are the client's fault (400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CborError {
    #[error("EOF")]
    Empty,
    #[error("unexpected EOF")]
    Truncated,
    #[error("cbor: {0} bytes of extraneous data starting at index {1}")]
    Extraneous(usize, usize),
    #[error("cbor: invalid additional information {0} for type {1}")]
    InvalidAdditional(u8, &'static str),
    #[error("cbor: invalid UTF-8 string")]
    InvalidUtf8,
    #[error("cbor: exceeded max nested level {0}")]
    TooDeep(usize),
    #[error("cbor: cannot unmarshal {0} into Go value of type int64 (overflows)")]
    IntegerOverflow(&'static str),
    #[error("cbor: found duplicate map key {0:?} at map element index {1}")]
    DuplicateKey(String, usize),
    #[error("cbor: cannot unmarshal {0} into Go value of type string")]
    MapKey(&'static str),
    #[error("cbor: {0}")]
    Unsupported(String),
    #[error("cbor: {0} is not allowed")]
    NotFinite(&'static str),
    #[error("cbor: wrong element type {0} for indefinite-length {1}")]
    IndefiniteChunk(&'static str, &'static str),
    #[error("cbor: unexpected \"break\" code")]
    UnexpectedBreak,
}
