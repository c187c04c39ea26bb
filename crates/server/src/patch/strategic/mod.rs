//! Strategic merge patch (`application/strategic-merge-patch+json`), a pure
//! port of the apply half of `k8s.io/apimachinery/pkg/util/strategicpatch`
//! (`StrategicMergeMapPatch`, as kube-apiserver 1.34 runs it from
//! `handlers/patch.go` `strategicPatchObject`), driven by the OpenAPI
//! definitions instead of Go struct tags.
//!
//! kube-apiserver looks patch metadata up on the Go type of the object
//! (`PatchMetaFromStruct`); here the same questions are answered from the
//! vendored OpenAPI v2 definitions, whose `x-kubernetes-patch-strategy` and
//! `x-kubernetes-patch-merge-key` extensions are generated from those very
//! struct tags. Go's behaviour is kept where it shows: a `$ref`'d definition is
//! a Go struct (a key it lacks is `unable to find api field in struct X`),
//! `additionalProperties` is a Go map (nested objects or lists inside one
//! cannot be merged: `... not struct, instead is: map`), lists without a
//! strategy are replaced, scalars compare with Go's interface equality
//! (`int64` 1 is not `float64` 1), errors print values as Go's `%v` does, and
//! the places where upstream panics (comparing or hashing JSON objects, a list
//! whose first element is `null`) become [`StrategicPatchError::Panic`].
//!
//! The engine is split by concern: [`schema`] (patch metadata from the
//! definitions), [`merge`] (maps), [`lists`] (list directives and merging),
//! [`values`] (Go's view of JSON values), [`error`] (upstream's texts).
//!
//! Directives: `$patch` (`replace`, `delete`; `merge` is refused as upstream
//! does), `$retainKeys`, `$setElementOrder/<list>`,
//! `$deleteFromPrimitiveList/<list>`, and `null` deleting a field.

mod error;
mod lists;
mod merge;
mod schema;
mod values;

use serde_json::{Map, Value};

pub use error::StrategicPatchError;
use error::*;
use lists::*;
pub use schema::SchemaContext;
use schema::*;
use values::*;

use crate::go;
use crate::go::strconv::quote as go_quote;
use crate::openapi::{OpenApi, OpenApiError};
use crate::status::{Details, Status, PANIC_BODY};

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const REPLACE_DIRECTIVE: &str = "replace";
const MERGE_DIRECTIVE: &str = "merge";
const RETAIN_KEYS_STRATEGY: &str = "retainKeys";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

/// Go's `reflect.Type` names as `mergepatch.ErrBadArgType` prints them.
const GO_MAP_TYPE: &str = "map[string]interface {}";
const GO_SLICE_TYPE: &str = "[]interface {}";

/// Deepest patch accepted (levels of objects and lists); deeper patches are
/// refused with [`StrategicPatchError::TooDeep`] rather than recursed into.
pub const MAX_DEPTH: usize = 100;

/// The message of `apierrors.NewGenericServerResponse(422, ...)`, which is how
/// kube answers the errors it classifies as 422 (the error text is dropped).
const GENERIC_422_MESSAGE: &str = "the server rejected our request due to an error in our request";

type Result<T, E = StrategicPatchError> = std::result::Result<T, E>;

/// Apply a strategic merge patch to `original` (a JSON object), as
/// `strategicpatch.StrategicMergeMapPatch` does for kube-apiserver.
pub fn apply(original: &Value, patch: &Value, schema: &SchemaContext<'_>) -> Result<Value> {
    let original = match original {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        _ => return Err(StrategicPatchError::BadJsonDoc),
    };
    let patch = match patch {
        Value::Object(map) => map.clone(),
        // `json.Unmarshal("null", &map)` leaves a nil map: nothing to apply.
        Value::Null => Map::new(),
        Value::Array(_) => return Err(StrategicPatchError::NotAnObject("array")),
        Value::String(_) => return Err(StrategicPatchError::NotAnObject("string")),
        Value::Number(_) => return Err(StrategicPatchError::NotAnObject("number")),
        Value::Bool(_) => return Err(StrategicPatchError::NotAnObject("bool")),
    };
    if deeper_than(&patch, MAX_DEPTH) {
        return Err(StrategicPatchError::TooDeep);
    }
    schema
        .merge_map(original, patch, schema.root, 0)
        .map(Value::Object)
}

/// Whether any value in `map` nests more than `limit` objects and lists (iteratively).
fn deeper_than(map: &Map<String, Value>, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = map.values().map(|value| (value, 1)).collect();
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Object(map) => Box::new(map.values()),
            Value::Array(list) => Box::new(list.iter()),
            _ => continue,
        };
        if depth >= limit {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

#[cfg(test)]
mod tests;
