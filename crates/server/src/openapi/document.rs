//! A served document and its cache validators (kube-openapi `pkg/handler`,
//! `pkg/handler3`: `computeETag` is `fmt.Sprintf("%X", sha512.Sum512(data))`,
//! sent quoted as the ETag and as `?hash=` in the v3 index).

use std::sync::OnceLock;

use bytes::Bytes;
use serde_json::Value;
use sha2::{Digest, Sha512};

use super::OpenApiError;

/// One serialized document with its cache validators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Compact JSON, as kube serves it.
    pub json: Bytes,
    /// Strong ETag, quoted: `"<hash>"`.
    pub etag: String,
    /// Upper-case hex SHA-512 of `json`, as in `/openapi/v3/...?hash=<hash>`.
    pub hash: String,
}

impl Document {
    pub(crate) fn from_value(value: &Value) -> Result<Self, OpenApiError> {
        let json =
            serde_json::to_vec(value).map_err(|err| OpenApiError::Serialize(err.to_string()))?;
        let hash = hex_upper(&Sha512::digest(&json));
        Ok(Document {
            etag: format!("\"{hash}\""),
            hash,
            json: Bytes::from(json),
        })
    }
}

fn hex_upper(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

/// A lazily built document; a failed build is remembered too.
pub(crate) type Cached = OnceLock<Result<Document, OpenApiError>>;

/// The document in `slot`, building it on first use.
pub(crate) fn cached(
    slot: &Cached,
    build: impl FnOnce() -> Result<Document, OpenApiError>,
) -> Result<&Document, OpenApiError> {
    slot.get_or_init(build).as_ref().map_err(Clone::clone)
}
