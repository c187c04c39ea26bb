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
//!   `write/decode.rs` decoded as kube's typed decoder does (JSON and YAML through
//!   the decode-error walk, CBOR likewise, protobuf through its schema), so
//!   the work is not done twice;
//! - [`TypedObject::patched`]: a JSON, merge or strategic merge patch's
//!   result, answered as `handlers/patch.go` answers a patched object that
//!   does not decode (422 on the field `patch`);
//! - [`TypedObject::applied`]: server-side apply's result, answered as
//!   `structuredMergeManager.Apply` fails to convert it (500);
//! - [`TypedObject::server_edit`]: a stored object the server changed only
//!   in fields it fills from checked values (a Scale's replicas).

use serde_json::{Map, Value};

use super::target::Target;
use crate::decode_error::{typed_decode_error_of_value, Wording};
use crate::object;
use crate::object::bounds;
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
    /// A request body `write/decode.rs` decoded (and so checked) as kube's decoder does.
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
    ///
    /// Only what the patch can have changed is walked ([`Footprint`]): the
    /// rest is the stored object, which passed this check when it was
    /// written, and walking all of it on every patch cost 15% of a merge
    /// patch's throughput.
    pub(super) fn patched(
        (group, version, kind): (&str, &str, &str),
        patched: Value,
        footprint: &Footprint,
        wording: PatchWording,
        shown: impl FnOnce() -> String,
    ) -> Result<Self> {
        let decode_wording = match wording {
            PatchWording::Json => Wording::Json,
            PatchWording::Strategic => Wording::Unstructured,
        };
        let Some(error) =
            footprint_error((group, version, kind), &patched, footprint, decode_wording)
        else {
            return Ok(TypedObject(patched));
        };
        let shown = match wording {
            PatchWording::Json => serde_json::to_string(&patched).unwrap_or_default(),
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
    /// configuration `config` (whose `null` elements `apply.rs` already made
    /// zero values, as kube's conversion makes them). kube converts the
    /// merged object into its typed form (`structuredMergeManager.Apply`,
    /// `toVersioned`, the scheme's `unstructuredToTyped`) and answers a
    /// failure as a plain error: 500 with its text. Only the fields the
    /// configuration names are walked: the rest is the live object's.
    pub(super) fn applied(target: &Target<'_>, config: &Value, applied: Value) -> Result<Self> {
        let resource = target.resource;
        let Some(error) = footprint_error(
            (resource.group, resource.version, resource.kind),
            &applied,
            &Footprint::Tree(config),
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

/// Where a write can have changed an object, so where the typed check
/// looks.
pub enum Footprint<'a> {
    /// Everything.
    Whole,
    /// The keys of this document, recursively (a merge or strategic merge
    /// patch, an apply configuration): where it holds an object, only its
    /// keys are walked; anywhere else, the whole value there. A strategic
    /// merge patch's `$setElementOrder/<field>` names `<field>`; its other
    /// directives change nothing a type check could refuse.
    Tree(&'a Value),
    /// JSON patch operations' target paths, as a tree built from them.
    Paths(Value),
}

impl Footprint<'_> {
    /// The footprint of JSON patch operations: the `path` of every `add`,
    /// `replace`, `copy` and `move` (what `remove` and `test` touch cannot
    /// break a type); a path through a list takes the whole list.
    pub fn of_json_patch(operations: &Value) -> Footprint<'static> {
        let mut tree = Value::Object(Map::new());
        for operation in operations.as_array().into_iter().flatten() {
            let writes = matches!(
                operation.get("op").and_then(Value::as_str),
                Some("add" | "replace" | "copy" | "move")
            );
            let Some(path) = operation
                .get("path")
                .and_then(Value::as_str)
                .filter(|_| writes)
            else {
                continue;
            };
            if path.is_empty() {
                return Footprint::Whole;
            }
            let mut node = &mut tree;
            for token in path.trim_start_matches('/').split('/') {
                let token = token.replace("~1", "/").replace("~0", "~");
                let Value::Object(map) = node else {
                    break;
                };
                node = map
                    .entry(token)
                    .or_insert_with(|| Value::Object(Map::new()));
            }
            *node = Value::Null;
        }
        Footprint::Paths(tree)
    }
}

/// The typed decode error of what `footprint` covers of `object`.
fn footprint_error(
    (group, version, kind): (&str, &str, &str),
    object: &Value,
    footprint: &Footprint<'_>,
    wording: Wording,
) -> Option<String> {
    let footprint = match footprint {
        Footprint::Whole => None,
        Footprint::Tree(tree) => Some(*tree),
        Footprint::Paths(tree) => Some(tree),
    };
    typed_decode_error_of_value(group, version, kind, object, footprint, wording)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn footprints_cover_what_a_patch_can_change() {
        let configmap = ("", "v1", "ConfigMap");
        let check = |object: &Value, footprint: &Footprint<'_>| {
            footprint_error(configmap, object, footprint, Wording::Json)
        };
        // data.x does not decode; a patch that did not touch it is not refused.
        let object = json!({"metadata": {"name": "a"}, "data": {"x": {"y": 1}, "z": "1"}});
        let error = Some(
            "json: cannot unmarshal object into Go struct field ConfigMap.data of type string"
                .to_string(),
        );
        assert_eq!(check(&object, &Footprint::Whole), error);
        assert_eq!(
            check(&object, &Footprint::Tree(&json!({"data": {"z": "2"}}))),
            None
        );
        assert_eq!(
            check(&object, &Footprint::Tree(&json!({"data": {"x": "2"}}))),
            error
        );
        assert_eq!(
            check(&object, &Footprint::Tree(&json!({"data": "whole"}))),
            error
        );
        assert_eq!(
            check(
                &object,
                &Footprint::Tree(&json!({"$setElementOrder/data": [], "$retainKeys": []}))
            ),
            error
        );
        assert_eq!(
            check(&object, &Footprint::Tree(&json!({"$retainKeys": ["data"]}))),
            None
        );
        let paths = |operations: Value| check(&object, &Footprint::of_json_patch(&operations));
        assert_eq!(
            paths(json!([
                {"op": "test", "path": "/data/x", "value": 1},
                {"op": "remove", "path": "/data/x"},
                {"op": "add", "path": "/data/z", "value": "3"}
            ])),
            None
        );
        assert_eq!(
            paths(json!([{"op": "copy", "from": "/data/z", "path": "/data/x"}])),
            error
        );
        assert_eq!(
            paths(json!([{"op": "move", "from": "/a", "path": "/data~1x/0"}])),
            None
        );
        assert!(matches!(
            Footprint::of_json_patch(&json!([{"op": "replace", "path": "", "value": {}}])),
            Footprint::Whole
        ));
    }
}
