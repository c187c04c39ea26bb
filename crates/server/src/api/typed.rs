//! The one check every object passes before the write pipeline stores it:
//! it decodes as the typed object of its kind (what client-go, kube-rs and
//! the Python client read back) and nests no deeper than the store reads
//! back.
//!
//! [`TypedObject`] is the proof: `create_object` and `update_object` take
//! nothing else, and its constructors are the only ways to make one, one per
//! way an object reaches the pipeline:
//!
//! - [`TypedObject::decoded_body`]: a create or update body, which
//!   `body.rs` decoded as kube's typed decoder does (JSON and YAML through
//!   the decode-error walk, CBOR likewise, protobuf through its schema), so
//!   the work is not done twice;
//! - [`TypedObject::patched`]: a JSON, merge or strategic merge patch's
//!   result, answered as `handlers/patch.go` answers a patched object that
//!   does not decode (422 on the field `patch`);
//! - [`TypedObject::applied`]: server-side apply's result, answered as
//!   `structuredMergeManager.Apply` fails to convert it (500);
//! - [`TypedObject::server_edit`]: a stored object the server changed only
//!   in fields it fills from checked values (a Scale's replicas).

use serde_json::Value;

use super::resource::Target;
use crate::decode_error::{typed_decode_error, Wording};
use crate::object;
use crate::object::bounds;
use crate::openapi::OpenApi;
use crate::status::{FieldError, Result, Status};

/// An object that a typed client can decode, on its way to the store.
#[derive(Debug, Clone)]
pub struct TypedObject(Value);

/// The patch types that build an object on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchWording {
    /// JSON patch and merge patch: the patched JSON is decoded.
    Json,
    /// Strategic merge patch: the patched map is converted; the Status
    /// shows the patch (Go's `%+v` of it), given here.
    Strategic,
}

impl TypedObject {
    /// A request body `body.rs` decoded (and so checked) as kube's decoder does.
    pub(super) fn decoded_body(object: Value) -> Self {
        TypedObject(object)
    }

    /// A stored object the server changed only in fields it fills itself
    /// from values already checked (the Scale subresource's replicas).
    pub(super) fn server_edit(object: Value) -> Self {
        TypedObject(object)
    }

    /// The result of a JSON, merge or strategic merge patch of an object of
    /// `group`/`version`/`kind`. `shown` is the value kube shows for a
    /// strategic merge patch (the patch); the other types show the patched
    /// JSON. Refused as `jsonPatcher.applyPatchToCurrentObject` and
    /// `applyPatchToObject` refuse it: `"" is invalid: patch: Invalid value:
    /// "<shown>": <decode error>`.
    pub(super) fn patched(
        (group, version, kind): (&str, &str, &str),
        patched: Value,
        wording: PatchWording,
        shown: impl FnOnce() -> String,
    ) -> Result<Self> {
        let json = serde_json::to_vec(&patched).unwrap_or_default();
        let decode_wording = match wording {
            PatchWording::Json => Wording::Json,
            PatchWording::Strategic => Wording::Unstructured,
        };
        let Some(error) = typed_decode_error(group, version, kind, &json, decode_wording) else {
            return Ok(TypedObject(patched));
        };
        let shown = match wording {
            PatchWording::Json => String::from_utf8_lossy(&json).into_owned(),
            PatchWording::Strategic => shown(),
        };
        Err(Status::invalid(
            "",
            "",
            "",
            &[FieldError::invalid("patch", &shown, error)],
        ))
    }

    /// Server-side apply's result for `target`, built from the applied
    /// configuration `config`, its `null` elements made zero values. kube converts the merged object into its
    /// typed form (`structuredMergeManager.Apply`, `toVersioned`, the
    /// scheme's `unstructuredToTyped`) and answers a failure as a plain
    /// error: 500 with its text.
    pub(super) fn applied(
        openapi: &OpenApi,
        target: &Target<'_>,
        config: &Value,
        mut applied: Value,
    ) -> Result<Self> {
        let resource = target.resource;
        // The conversion also gives `null` elements their zero values
        // (unknown fields cannot be there: the apply refused them).
        crate::field_validation::drop_unknown_fields(
            openapi,
            resource.group,
            resource.version,
            resource.kind,
            &mut applied,
        );
        let json = serde_json::to_vec(&applied).unwrap_or_default();
        let Some(error) = typed_decode_error(
            resource.group,
            resource.version,
            resource.kind,
            &json,
            Wording::Unstructured,
        ) else {
            return Ok(TypedObject(applied));
        };
        let gvk = format!(
            "{}/{}, Kind={}",
            resource.group, resource.version, resource.kind
        );
        Err(Status {
            code: 500,
            reason: "",
            message: format!(
                "failed to convert new object ({}/{}; {gvk}) to proper version: unable to convert unstructured object to {gvk}: {error}",
                object::namespace(config),
                object::name(config),
            ),
            details: None,
        })
    }

    pub fn value(&self) -> &Value {
        &self.0
    }

    pub fn value_mut(&mut self) -> &mut Value {
        &mut self.0
    }

    pub fn into_value(self) -> Value {
        self.0
    }
}

/// A protobuf body's object: typed by its schema as it decodes, but raw JSON
/// it embeds (`runtime.RawExtension`) inside nested messages can make it
/// deeper than the store reads back: 400, as a body that does not decode.
pub(super) fn check_depth(kind: &str, object: &Value) -> Result<()> {
    if bounds::depth(object) > bounds::MAX_DEPTH {
        return Err(Status::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): {}",
            bounds::too_deep_message()
        )));
    }
    Ok(())
}
