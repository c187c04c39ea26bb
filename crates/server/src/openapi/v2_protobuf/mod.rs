//! `/openapi/v2` as protobuf: the gnostic `openapi.v2.Document` message
//! (`github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto`) that
//! kube-openapi `pkg/handler` serves for
//! `Accept: application/com.github.proto-openapi.spec.v2[@.]v1.0+protobuf`
//! and that client-go's `discovery.OpenAPISchema()` (kubectl <= 1.28
//! `explain`, client-side validation, the `fieldValidation` query-parameter
//! check) parses.
//!
//! kube converts the served JSON (`handler.ToProtoBinary`: gnostic
//! `openapi_v2.ParseDocument` then `proto.Marshal`); this module does the
//! same conversion directly from the JSON value:
//!
//! - every message is written field by field in field-number order, proto3
//!   style (empty strings, `false`, `0` omitted; present sub-messages always
//!   written, even when empty; oneof members always written);
//! - map-like objects become repeated `Named*` pairs in JSON key order;
//! - `x-*` keys become `NamedAny{name, Any{yaml}}`, the YAML text being what
//!   gnostic's `compiler.Marshal` (yaml.v3, block style, 4-space indent)
//!   would print for the value;
//! - oneofs are decided as gnostic's `New*` constructors decide them
//!   (`$ref` -> `JsonReference`, `in: body` -> `BodyParameter`, `in` picks the
//!   non-body sub-schema, `type: file` -> `FileSchema`, a boolean
//!   `additionalProperties` -> `boolean`).
//!
//! Keys gnostic does not allow (it would refuse the whole document) are
//! skipped and reported by [`encode`], so tests can keep the JSON document
//! within what gnostic accepts.
//!
//! Content negotiation ([`negotiate`]) follows kube-openapi
//! `RegisterOpenAPIVersionedService` with `munnerz/goautoneg`.

mod accept;
mod encoder;
mod parameters;
mod schemas;
#[cfg(test)]
mod tests;
mod top_level;
mod wire;
mod yaml_text;

use serde_json::Value;

use super::{Document, OpenApiError};

pub use accept::negotiate;

use encoder::Encoder;

/// The Content-Type kube answers protobuf requests with (for both accepted
/// spellings: kube-openapi's `ReturnedContentType`).
pub const CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/// The deprecated spelling client-go (`openAPIV2mimePb`) still asks for.
pub const CONTENT_TYPE_DEPRECATED: &str =
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// The JSON Content-Type.
pub const JSON_CONTENT_TYPE: &str = "application/json";

/// Which representation of `/openapi/v2` to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V2Format {
    Json,
    Protobuf,
}

impl V2Format {
    pub fn content_type(self) -> &'static str {
        match self {
            V2Format::Json => JSON_CONTENT_TYPE,
            V2Format::Protobuf => CONTENT_TYPE,
        }
    }
}

// ---------------------------------------------------------------------------
// The served document
// ---------------------------------------------------------------------------

/// The protobuf form of the served JSON document. kube-openapi reuses the
/// JSON document's ETag for the protobuf one ("We can re-use the same etag
/// as json because of the Vary header"), so `etag` and `hash` are the JSON
/// document's; `json` holds the protobuf bytes.
pub(crate) fn document(json: &Document) -> Result<Document, OpenApiError> {
    let value: Value = serde_json::from_slice(&json.json)
        .map_err(|err| OpenApiError::Serialize(err.to_string()))?;
    let encoded = encode(&value)?;
    if !encoded.rejected.is_empty() {
        // gnostic would refuse such a document outright; we serve what we can.
        tracing::warn!(rejected = ?encoded.rejected, "OpenAPI v2 keys with no protobuf form skipped");
    }
    Ok(Document {
        json: bytes::Bytes::from(encoded.bytes),
        etag: json.etag.clone(),
        hash: json.hash.clone(),
    })
}

/// An encoded document and the keys gnostic would have rejected.
#[derive(Debug)]
pub(crate) struct Encoded {
    pub bytes: Vec<u8>,
    /// `Message.key` for every key (or value) gnostic does not accept.
    pub rejected: Vec<String>,
}

/// Encodes a swagger 2.0 JSON document as `openapi.v2.Document`.
pub(crate) fn encode(document: &Value) -> Result<Encoded, OpenApiError> {
    let Value::Object(root) = document else {
        return Err(OpenApiError::Serialize(
            "OpenAPI v2 document is not a JSON object".into(),
        ));
    };
    let mut encoder = Encoder::default();
    let message = encoder.document(root);
    Ok(Encoded {
        bytes: message.0,
        rejected: encoder.rejected,
    })
}
