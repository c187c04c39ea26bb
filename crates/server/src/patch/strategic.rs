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
//! Directives: `$patch` (`replace`, `delete`; `merge` is refused as upstream
//! does), `$retainKeys`, `$setElementOrder/<list>`,
//! `$deleteFromPrimitiveList/<list>`, and `null` deleting a field.

use serde_json::{Map, Value};

use crate::go;
use crate::go::strconv::quote as go_quote;
use crate::openapi::{OpenApi, OpenApiError};
use crate::status::{Details, Status};

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const REPLACE_DIRECTIVE: &str = "replace";
const MERGE_DIRECTIVE: &str = "merge";
const RETAIN_KEYS_STRATEGY: &str = "retainKeys";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

const PATCH_STRATEGY_EXTENSION: &str = "x-kubernetes-patch-strategy";
const PATCH_MERGE_KEY_EXTENSION: &str = "x-kubernetes-patch-merge-key";
const REF_PREFIX: &str = "#/definitions/";

/// Go's `reflect.Type` names as `mergepatch.ErrBadArgType` prints them.
const GO_MAP_TYPE: &str = "map[string]interface {}";
const GO_SLICE_TYPE: &str = "[]interface {}";

/// Deepest patch accepted (levels of objects and lists); deeper patches are
/// refused with [`StrategicPatchError::TooDeep`] rather than recursed into.
pub const MAX_DEPTH: usize = 100;

/// What kube answers for [`StrategicPatchError::Panic`].
use crate::status::PANIC_BODY;

/// The message of `apierrors.NewGenericServerResponse(422, ...)`, which is how
/// kube answers the errors it classifies as 422 (the error text is dropped).
const GENERIC_422_MESSAGE: &str = "the server rejected our request due to an error in our request";

/// Why a strategic merge patch does not apply. `Display` is upstream's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrategicPatchError {
    /// `mergepatch.ErrBadJSONDoc`: the original object is not a JSON object.
    #[error("invalid JSON document")]
    BadJsonDoc,
    /// The patch body is valid JSON but not an object (kube's `json.Unmarshal`
    /// into `map[string]interface{}` fails; the handler answers 400).
    #[error("json: cannot unmarshal {0} into Go value of type map[string]interface {{}}")]
    NotAnObject(&'static str),
    /// `mergepatch.ErrBadPatchFormatForPrimitiveList`.
    #[error("invalid patch format of primitive list")]
    BadPatchFormatForPrimitiveList,
    /// `mergepatch.ErrBadPatchFormatForRetainKeys`.
    #[error("invalid patch format of retainKeys")]
    BadPatchFormatForRetainKeys,
    /// `mergepatch.ErrBadPatchFormatForSetElementOrderList`.
    #[error("invalid patch format of setElementOrder list")]
    BadPatchFormatForSetElementOrderList,
    /// `mergepatch.ErrNoListOfLists`.
    #[error("lists of lists are not supported")]
    NoListOfLists,
    /// `mergepatch.ErrNoMergeKey`.
    #[error("map: {map} does not contain declared merge key: {merge_key}")]
    NoMergeKey { map: String, merge_key: String },
    /// `mergepatch.ErrBadArgType`.
    #[error("expected a {expected}, but received a {actual}")]
    BadArgType {
        expected: &'static str,
        actual: &'static str,
    },
    /// `mergepatch.ErrBadPatchType`: a `$patch` value that is not understood here.
    #[error("unknown patch type: {directive} in map: {map}")]
    BadPatchType { directive: String, map: String },
    /// A key with an object or list value on both sides that the Go struct does not have.
    #[error("unable to find api field in struct {type_name} for the json field {}", go_quote(.field))]
    UnknownField { type_name: String, field: String },
    /// Merging objects inside a Go value that is not a struct (a map, a scalar).
    #[error("merging an object in json but data type is not struct, instead is: {0}")]
    NotStruct(&'static str),
    /// Two lists met at a field whose Go type is not a slice.
    #[error("expected slice or array type, but got: {0}")]
    NotSlice(&'static str),
    #[error("unexpected slice of slice")]
    SliceOfSlice,
    /// A `merge` list of objects without a merge key.
    #[error("cannot merge lists without merge key for {0}")]
    NoMergeKeyForList(&'static str),
    /// `$patch: merge` on a list element.
    #[error("merging lists cannot yet be specified in the patch")]
    MergeListDirective,
    #[error("list element types are not identical: {0}")]
    ElementTypesDiffer(String),
    #[error("no elements in any of the given slices")]
    NoElements,
    #[error("value for key {0} is not a map.")]
    NotAMap(usize),
    /// The patch list is not in the order of its `$setElementOrder` list.
    #[error("The order in patch list:\n{patch}\n doesn't match $setElementOrder list:\n{order}\n")]
    OrderMismatch { patch: String, order: String },
    #[error("unexpected patch strategy: {0}")]
    UnexpectedStrategy(String),
    /// Where upstream panics (kube answers 500 with [`PANIC_BODY`]); the Go runtime error.
    #[error("{0}")]
    Panic(&'static str),
    /// ferrokube's own guard (kube has none): the patch nests more than [`MAX_DEPTH`] levels.
    #[error("the strategic merge patch is nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

impl StrategicPatchError {
    /// The HTTP code kube-apiserver answers with (`interpretStrategicMergePatchError`
    /// maps the three patch-format errors to 400 and lists of lists to 422; every
    /// other error is a plain Go error, which `ErrorToAPIStatus` makes a 500).
    pub fn http_code(&self) -> u16 {
        match self {
            StrategicPatchError::BadJsonDoc
            | StrategicPatchError::NotAnObject(_)
            | StrategicPatchError::BadPatchFormatForPrimitiveList
            | StrategicPatchError::BadPatchFormatForRetainKeys
            | StrategicPatchError::BadPatchFormatForSetElementOrderList
            | StrategicPatchError::TooDeep => 400,
            StrategicPatchError::NoListOfLists => 422,
            _ => 500,
        }
    }

    /// The `Status.reason` kube answers with (`""` is `StatusReasonUnknown`, which
    /// kube omits from the body).
    pub fn reason(&self) -> &'static str {
        match self.http_code() {
            400 => "BadRequest",
            422 => "Invalid",
            _ => "",
        }
    }

    /// Whether kube would have panicked: then its answer is a `text/plain` 500
    /// with [`PANIC_BODY`], not a `Status`.
    pub fn is_panic(&self) -> bool {
        matches!(self, StrategicPatchError::Panic(_))
    }

    /// The `Status` kube answers with. 422 carries the generic message and empty
    /// `details` of `NewGenericServerResponse`; 500 is `StatusReasonUnknown` with
    /// the error text (kube omits the empty reason from the JSON body). For
    /// [`Self::is_panic`] errors kube sends [`PANIC_BODY`] as plain text instead.
    pub fn to_status(&self) -> Status {
        match self.http_code() {
            400 => Status::bad_request(self.to_string()),
            422 => Status {
                code: 422,
                reason: "Invalid",
                message: GENERIC_422_MESSAGE.to_string(),
                details: Some(Box::default()),
            },
            _ if self.is_panic() => Status {
                code: 500,
                reason: "",
                message: PANIC_BODY.trim_end().to_string(),
                details: None,
            },
            _ => Status {
                code: 500,
                reason: "",
                message: self.to_string(),
                details: None::<Box<Details>>,
            },
        }
    }
}

type Result<T, E = StrategicPatchError> = std::result::Result<T, E>;

/// The Go type of the object being patched, as OpenAPI describes it: the
/// root definition plus `$ref` resolution through [`OpenApi::definition`].
#[derive(Debug, Clone, Copy)]
pub struct SchemaContext<'a> {
    openapi: Option<&'a OpenApi>,
    root: GoType<'a>,
}

impl<'a> SchemaContext<'a> {
    /// The context of a built-in kind; `None` when no definition carries that GVK.
    pub fn for_kind(
        openapi: &'a OpenApi,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Option<SchemaContext<'a>>, OpenApiError> {
        let Some(schema) = openapi.schema_for_kind(group, version, kind)? else {
            return Ok(None);
        };
        // The Go type of a kind is named after the kind; borrow the name from the schema.
        let name = schema
            .get("x-kubernetes-group-version-kind")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|gvk| gvk.get("kind").and_then(Value::as_str))
            .find(|name| *name == kind)
            .unwrap_or("");
        let context = SchemaContext {
            openapi: Some(openapi),
            root: GoType::Unknown,
        };
        Ok(Some(SchemaContext {
            root: context.named(name, schema),
            ..context
        }))
    }

    /// The context of a definition by OpenAPI name (`io.k8s.api.core.v1.PodSpec`).
    pub fn for_definition(
        openapi: &'a OpenApi,
        name: &'a str,
    ) -> Result<Option<SchemaContext<'a>>, OpenApiError> {
        let Some(schema) = openapi.definition(name)? else {
            return Ok(None);
        };
        let context = SchemaContext {
            openapi: Some(openapi),
            root: GoType::Unknown,
        };
        Ok(Some(SchemaContext {
            root: context.named(short_name(name), schema),
            ..context
        }))
    }

    /// No schema at all: every field is looked up successfully with no patch
    /// strategy, so objects merge key by key and lists are replaced (JSON merge
    /// patch semantics), directives still apply.
    pub fn schemaless() -> SchemaContext<'static> {
        SchemaContext {
            openapi: None,
            root: GoType::Unknown,
        }
    }

    /// The Go type a definition stands for: a struct (named after the definition's
    /// last segment) unless it is a list or a map.
    fn named(&self, name: &'a str, schema: &'a Value) -> GoType<'a> {
        if let Some(fields) = schema.get("properties").and_then(Value::as_object) {
            return GoType::Struct {
                name,
                fields: Some(fields),
            };
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => GoType::Slice {
                items: schema.get("items"),
            },
            Some("object") if schema.get("additionalProperties").is_some() => GoType::Map,
            // Quantity, Time, IntOrString, RawExtension, JSON, FieldsV1...: Go structs
            // with no JSON fields of their own.
            _ => GoType::Struct { name, fields: None },
        }
    }

    /// The Go type of a property or item schema.
    fn resolve(&self, schema: &'a Value) -> GoType<'a> {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.strip_prefix(REF_PREFIX).unwrap_or(reference);
            return match self.openapi.map(|openapi| openapi.definition(name)) {
                Some(Ok(Some(definition))) => self.named(short_name(name), definition),
                _ => GoType::Unknown,
            };
        }
        let format = schema.get("format").and_then(Value::as_str);
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => GoType::Slice {
                items: schema.get("items"),
            },
            Some("object") => match schema.get("properties").and_then(Value::as_object) {
                Some(fields) => GoType::Struct {
                    name: "",
                    fields: Some(fields),
                },
                None if schema.get("additionalProperties").is_some() => GoType::Map,
                None => GoType::Unknown,
            },
            Some("string") if format == Some("byte") => GoType::Bytes,
            Some("string") => GoType::Scalar("string"),
            Some("integer") => GoType::Scalar(match format {
                Some("int32") => "int32",
                Some("int64") => "int64",
                _ => "int",
            }),
            Some("number") => GoType::Scalar(if format == Some("float") {
                "float32"
            } else {
                "float64"
            }),
            Some("boolean") => GoType::Scalar("bool"),
            _ => GoType::Unknown,
        }
    }

    /// `PatchMetaFromStruct.LookupPatchMetadataForStruct`.
    fn lookup_struct(&self, t: GoType<'a>, key: &str) -> Result<(GoType<'a>, PatchMeta<'a>)> {
        match t {
            GoType::Struct { name, fields } => {
                // Exact JSON name first, then Go's case-insensitive match.
                let field = fields.and_then(|fields| {
                    fields.get(key).or_else(|| {
                        fields
                            .iter()
                            .find(|(json_name, _)| go_equal_fold(json_name, key))
                            .map(|(_, schema)| schema)
                    })
                });
                match field {
                    Some(schema) => Ok((self.resolve(schema), PatchMeta::of(schema))),
                    None => Err(StrategicPatchError::UnknownField {
                        type_name: name.to_string(),
                        field: key.to_string(),
                    }),
                }
            }
            GoType::Unknown => Ok((GoType::Unknown, PatchMeta::default())),
            other => Err(StrategicPatchError::NotStruct(other.kind())),
        }
    }

    /// `PatchMetaFromStruct.LookupPatchMetadataForSlice`: the element type.
    fn lookup_slice(&self, t: GoType<'a>, key: &str) -> Result<(GoType<'a>, PatchMeta<'a>)> {
        let (field, meta) = self.lookup_struct(t, key)?;
        match field {
            GoType::Slice { items } => {
                let element = items.map_or(GoType::Unknown, |items| self.resolve(items));
                if matches!(element, GoType::Slice { .. } | GoType::Bytes) {
                    return Err(StrategicPatchError::SliceOfSlice);
                }
                Ok((element, meta))
            }
            GoType::Bytes => Ok((GoType::Scalar("uint8"), meta)),
            GoType::Unknown => Ok((GoType::Unknown, meta)),
            _ => Err(StrategicPatchError::NotSlice(t.kind())),
        }
    }
}

/// A Go type as far as strategic merge patch cares.
#[derive(Debug, Clone, Copy)]
enum GoType<'a> {
    /// A struct: its Go name and JSON fields (`None`: no JSON fields).
    Struct {
        name: &'a str,
        fields: Option<&'a Map<String, Value>>,
    },
    Map,
    Slice {
        items: Option<&'a Value>,
    },
    /// `[]byte` (`format: byte`), a JSON string.
    Bytes,
    Scalar(&'static str),
    /// No schema: lookups succeed with no patch metadata.
    Unknown,
}

impl GoType<'_> {
    /// `reflect.Kind.String()`.
    fn kind(&self) -> &'static str {
        match self {
            GoType::Struct { .. } => "struct",
            GoType::Map => "map",
            GoType::Slice { .. } | GoType::Bytes => "slice",
            GoType::Scalar(kind) => kind,
            GoType::Unknown => "interface",
        }
    }
}

/// The patch strategy and merge key of one field (its struct tags).
#[derive(Debug, Clone, Copy, Default)]
struct PatchMeta<'a> {
    strategy: Option<&'a str>,
    merge_key: &'a str,
}

impl<'a> PatchMeta<'a> {
    fn of(schema: &'a Value) -> Self {
        PatchMeta {
            strategy: schema.get(PATCH_STRATEGY_EXTENSION).and_then(Value::as_str),
            merge_key: schema
                .get(PATCH_MERGE_KEY_EXTENSION)
                .and_then(Value::as_str)
                .unwrap_or(""),
        }
    }

    /// `strings.Split(tag, ",")`, then `extractRetainKeysPatchStrategy`: the
    /// strategy other than `retainKeys`.
    fn strategy(&self) -> Result<&'a str> {
        let strategies: Vec<&str> = self.strategy.unwrap_or("").split(',').collect();
        match strategies.as_slice() {
            [] => Ok(""),
            [single] => Ok(if *single == RETAIN_KEYS_STRATEGY {
                ""
            } else {
                single
            }),
            [first, second] if *first == RETAIN_KEYS_STRATEGY => Ok(second),
            [first, second] if *second == RETAIN_KEYS_STRATEGY => Ok(first),
            _ => Err(StrategicPatchError::UnexpectedStrategy(format!(
                "[{}]",
                strategies.join(" ")
            ))),
        }
    }
}

/// A definition's Go type name: its last dotted segment.
fn short_name(definition: &str) -> &str {
    definition.rsplit('.').next().unwrap_or(definition)
}

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

impl<'a> SchemaContext<'a> {
    /// `mergeMap` with `MergeParallelList` and `IgnoreUnmatchedNulls` set.
    fn merge_map(
        &self,
        mut original: Map<String, Value>,
        mut patch: Map<String, Value>,
        t: GoType<'a>,
        depth: usize,
    ) -> Result<Map<String, Value>> {
        if depth > MAX_DEPTH {
            return Err(StrategicPatchError::TooDeep);
        }
        if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
            return match directive.as_str() {
                Some(REPLACE_DIRECTIVE) => {
                    patch.remove(DIRECTIVE_MARKER);
                    Ok(patch)
                }
                Some(DELETE_DIRECTIVE) => Ok(Map::new()),
                _ => Err(bad_patch_type(directive, &patch)),
            };
        }
        apply_retain_keys(&mut original, &mut patch)?;
        self.merge_patch_into_original(&mut original, &mut patch, t, depth)?;

        for (key, patch_value) in patch {
            let (is_delete_list, key) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
                let list_key = extract_key(&key, DELETE_FROM_PRIMITIVE_LIST_PREFIX)?;
                if list_key.is_empty() {
                    (true, key)
                } else {
                    (true, list_key.to_string())
                }
            } else {
                (false, key)
            };
            if patch_value.is_null() {
                original.remove(&key);
                continue;
            }
            let same_type = original
                .get(&key)
                .map(|value| tag(value) == tag(&patch_value));
            if same_type != Some(true) {
                // Absent from the original, or of another type: take the patch value.
                if !is_delete_list {
                    let mut value = patch_value;
                    discard_null_values(&mut value);
                    match remove_directives(value) {
                        Some(value) => original.insert(key, value),
                        None => original.remove(&key),
                    };
                }
                continue;
            }
            let Some(original_value) = original.remove(&key) else {
                continue;
            };
            let merged = match (original_value, patch_value) {
                (Value::Object(original_map), Value::Object(patch_map)) => {
                    let (subschema, meta) = self.lookup_struct(t, &key)?;
                    if meta.strategy()? == REPLACE_DIRECTIVE {
                        Value::Object(patch_map)
                    } else {
                        Value::Object(self.merge_map(
                            original_map,
                            patch_map,
                            subschema,
                            depth + 1,
                        )?)
                    }
                }
                (Value::Array(original_list), Value::Array(patch_list)) => {
                    let (subschema, meta) = self.lookup_slice(t, &key)?;
                    let strategy = meta.strategy()?;
                    Value::Array(self.merge_slice_handler(
                        original_list,
                        patch_list,
                        subschema,
                        strategy,
                        meta.merge_key,
                        is_delete_list,
                        depth,
                        None,
                    )?)
                }
                // Scalars: `removeDirectives` keeps them as they are.
                (_, patch_value) => patch_value,
            };
            original.insert(key, merged);
        }
        Ok(original)
    }

    /// `mergePatchIntoOriginal`: every `$setElementOrder/<list>` with its list.
    fn merge_patch_into_original(
        &self,
        original: &mut Map<String, Value>,
        patch: &mut Map<String, Value>,
        t: GoType<'a>,
        depth: usize,
    ) -> Result<()> {
        let keys: Vec<String> = patch
            .keys()
            .filter(|key| key.starts_with(SET_ELEMENT_ORDER_PREFIX))
            .cloned()
            .collect();
        for key in keys {
            let Some(order_value) = patch.remove(&key) else {
                continue;
            };
            let Value::Array(set_order) = order_value else {
                return Err(bad_arg_type(GO_SLICE_TYPE, Some(&order_value)));
            };
            let list_key = extract_key(&key, SET_ELEMENT_ORDER_PREFIX)?.to_string();
            let original_list = match original.get(&list_key) {
                None => None,
                Some(Value::Array(list)) => Some(list.clone()),
                Some(other) => return Err(bad_arg_type(GO_SLICE_TYPE, Some(other))),
            };
            let patch_list = match patch.get(&list_key) {
                None => None,
                Some(Value::Array(list)) => Some(list.clone()),
                Some(other) => return Err(bad_arg_type(GO_SLICE_TYPE, Some(other))),
            };
            let (subschema, meta) = self.lookup_slice(t, &list_key)?;
            let strategy = meta.strategy()?;
            let merge_key = meta.merge_key;
            validate_patch_with_set_order_list(
                patch_list.as_deref().unwrap_or(&[]),
                &set_order,
                merge_key,
            )?;

            // Upstream keeps reading `originalFieldValue` after merging: a Go slice
            // sharing its array with the merged list, so deletions (shifting elements
            // left) and later appends show through it. `view` is that window.
            let mut view = original_list.clone().unwrap_or_default();
            let merged = match (&original_list, &patch_list) {
                (Some(original_list), None) => original_list.clone(),
                (None, Some(patch_list)) => remove_directives_from_list(patch_list.clone()),
                (Some(original_list), Some(patch_list)) => self.merge_slice_handler(
                    original_list.clone(),
                    patch_list.clone(),
                    subschema,
                    strategy,
                    merge_key,
                    false,
                    depth,
                    Some(&mut view),
                )?,
                (None, None) => continue,
            };
            let (patch_items, server_only) = if merge_key.is_empty() {
                partition_primitives(merged, &set_order)?
            } else {
                partition_maps(merged, &set_order, merge_key)?
            };
            let kind = slice_element_type(&[&view, patch_list.as_deref().unwrap_or(&[])])?;
            let ordered = normalize_element_order(
                patch_items,
                server_only,
                &set_order,
                &view,
                merge_key,
                kind == Tag::Map,
            )?;
            original.insert(list_key.clone(), Value::Array(ordered));
            patch.remove(&list_key);
        }
        Ok(())
    }

    /// `mergeSliceHandler`: merge lists (and deletion lists) merge, others are replaced.
    #[allow(clippy::too_many_arguments)]
    fn merge_slice_handler(
        &self,
        original: Vec<Value>,
        patch: Vec<Value>,
        element: GoType<'a>,
        strategy: &str,
        merge_key: &str,
        is_delete_list: bool,
        depth: usize,
        view: Option<&mut Vec<Value>>,
    ) -> Result<Vec<Value>> {
        if strategy == MERGE_DIRECTIVE || is_delete_list {
            self.merge_slice(
                original,
                patch,
                element,
                merge_key,
                is_delete_list,
                depth,
                view,
            )
        } else {
            Ok(patch)
        }
    }

    /// `mergeSlice`. `view`, when given, tracks what the caller's slice of the
    /// original list shows afterwards (see [`AliasView`]).
    #[allow(clippy::too_many_arguments)]
    fn merge_slice(
        &self,
        original: Vec<Value>,
        patch: Vec<Value>,
        element: GoType<'a>,
        merge_key: &str,
        is_delete_list: bool,
        depth: usize,
        view: Option<&mut Vec<Value>>,
    ) -> Result<Vec<Value>> {
        let mut view = view.map(AliasView::new);
        if original.is_empty() && patch.is_empty() {
            return Ok(original);
        }
        let kind = slice_element_type(&[&original, &patch])?;
        let (merged, patch, server_order) = if kind != Tag::Map {
            if is_delete_list {
                return delete_from_slice(original, &patch);
            }
            let mut both = original.clone();
            both.extend(patch.iter().cloned());
            (deduplicate_scalars(both)?, patch, original)
        } else {
            if merge_key.is_empty() {
                return Err(StrategicPatchError::NoMergeKeyForList(element.kind()));
            }
            let (original, patch, replaced) =
                merge_slice_with_special_elements(original, patch, merge_key, view.as_mut())?;
            let server_order = original.clone();
            // After `$patch: replace` the list is the patch's own array.
            let view = if replaced { None } else { view.as_mut() };
            let merged = self.merge_slice_without_special_elements(
                original, &patch, merge_key, element, depth, view,
            )?;
            (merged, patch, server_order)
        };
        let (patch_items, server_only) = if merge_key.is_empty() {
            partition_primitives(merged, &patch)?
        } else {
            partition_maps(merged, &patch, merge_key)?
        };
        normalize_element_order(
            patch_items,
            server_only,
            &patch,
            &server_order,
            merge_key,
            kind == Tag::Map,
        )
    }

    /// `mergeSliceWithoutSpecialElements`: merge each patch element into the
    /// original element with its merge key, or append it.
    fn merge_slice_without_special_elements(
        &self,
        mut original: Vec<Value>,
        patch: &[Value],
        merge_key: &str,
        element: GoType<'a>,
        depth: usize,
        mut view: Option<&mut AliasView<'_>>,
    ) -> Result<Vec<Value>> {
        for item in patch {
            let Some(patch_map) = item.as_object() else {
                continue;
            };
            let Some(merge_value) = patch_map.get(merge_key) else {
                return Err(no_merge_key(item, merge_key));
            };
            match find_map_in_slice(&original, merge_key, merge_value)? {
                Some(index) => {
                    let original_map = match std::mem::take(&mut original[index]) {
                        Value::Object(map) => map,
                        _ => Map::new(),
                    };
                    let merged = Value::Object(self.merge_map(
                        original_map,
                        patch_map.clone(),
                        element,
                        depth + 1,
                    )?);
                    if let Some(view) = view.as_mut() {
                        view.set(index, &merged);
                    }
                    original[index] = merged;
                }
                None => {
                    if let Some(view) = view.as_mut() {
                        view.set(original.len(), item);
                    }
                    original.push(item.clone());
                }
            }
        }
        Ok(original)
    }
}

/// `applyRetainKeysDirective`: clear the original's keys missing from `$retainKeys`.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<()> {
    let Some(retain_keys) = patch.remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let Value::Array(retain_keys) = retain_keys else {
        return Err(StrategicPatchError::BadPatchFormatForRetainKeys);
    };
    for key in &retain_keys {
        check_hashable(key)?;
    }
    let retained = |key: &str| retain_keys.iter().any(|value| value.as_str() == Some(key));
    for (key, value) in patch.iter() {
        if value.is_null()
            || key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || key.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !retained(key) {
            return Err(StrategicPatchError::BadPatchFormatForRetainKeys);
        }
    }
    original.retain(|key, _| retained(key));
    Ok(())
}

/// `extractKey`: the list name after `<prefix>/`.
fn extract_key<'k>(key: &'k str, prefix: &str) -> Result<&'k str> {
    match key.split_once('/') {
        Some((head, rest)) if head == prefix => Ok(rest),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST_PREFIX => {
            Err(StrategicPatchError::BadPatchFormatForPrimitiveList)
        }
        _ => Err(StrategicPatchError::BadPatchFormatForSetElementOrderList),
    }
}

/// `validatePatchWithSetOrderList`: the patch list is in `$setElementOrder` order.
fn validate_patch_with_set_order_list(
    patch_list: &[Value],
    set_order: &[Value],
    merge_key: &str,
) -> Result<()> {
    if set_order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        extract_to_delete_items(patch_list.to_vec())?.0
    };
    let (mut patch_index, mut order_index) = (0, 0);
    while patch_index < non_delete.len() && order_index < set_order.len() {
        if non_delete[patch_index]
            .as_object()
            .is_some_and(|map| map.contains_key(DIRECTIVE_MARKER))
        {
            patch_index += 1;
            continue;
        }
        if merge_key_value_equal(&non_delete[patch_index], &set_order[order_index], merge_key)? {
            patch_index += 1;
        }
        order_index += 1;
    }
    if patch_index < non_delete.len() && order_index >= set_order.len() {
        return Err(StrategicPatchError::OrderMismatch {
            patch: go::fmt::list_v(patch_list),
            order: go::fmt::list_v(set_order),
        });
    }
    Ok(())
}

/// `mergeKeyValueEqual`.
fn merge_key_value_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool> {
    if merge_key.is_empty() {
        return go_equal(Some(left), Some(right));
    }
    let Some(left_map) = left.as_object() else {
        return Err(bad_arg_type(GO_MAP_TYPE, Some(left)));
    };
    let Some(right_map) = right.as_object() else {
        return Err(bad_arg_type(GO_MAP_TYPE, Some(right)));
    };
    let Some(left_value) = left_map.get(merge_key) else {
        return Err(no_merge_key(left, merge_key));
    };
    let Some(right_value) = right_map.get(merge_key) else {
        return Err(no_merge_key(right, merge_key));
    };
    go_equal(Some(left_value), Some(right_value))
}

/// `mergeSliceWithSpecialElements`: apply `$patch: delete` elements to the
/// original, honour `$patch: replace`; returns (original, patch without
/// directives, whether the list was replaced).
fn merge_slice_with_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
    mut view: Option<&mut AliasView<'_>>,
) -> Result<(Vec<Value>, Vec<Value>, bool)> {
    let mut plain = Vec::new();
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.as_object().and_then(|map| map.get(DIRECTIVE_MARKER)) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some(DELETE_DIRECTIVE) => {
                let Some(merge_value) = item.get(merge_key) else {
                    return Err(no_merge_key(&item, merge_key));
                };
                while let Some(index) = find_map_in_slice(&original, merge_key, merge_value)? {
                    original.remove(index);
                    // `append(original[:i], original[i+1:]...)` shifts in place.
                    if let Some(view) = view.as_mut() {
                        for (position, value) in original.iter().enumerate().skip(index) {
                            view.set(position, value);
                        }
                    }
                }
            }
            Some(REPLACE_DIRECTIVE) => replace = true,
            Some(MERGE_DIRECTIVE) => return Err(StrategicPatchError::MergeListDirective),
            _ => {
                return Err(bad_patch_type(
                    directive,
                    item.as_object().unwrap_or(&Map::new()),
                ))
            }
        }
    }
    if replace {
        Ok((plain, Vec::new(), true))
    } else {
        Ok((original, plain, false))
    }
}

/// The caller's view of an original list that upstream merges in place: a Go
/// slice of fixed length over the array the merge shifts deleted elements
/// out of and appends new elements into (while they fit its length; beyond
/// it they are invisible, whatever the array's capacity).
struct AliasView<'v> {
    window: &'v mut Vec<Value>,
}

impl<'v> AliasView<'v> {
    fn new(window: &'v mut Vec<Value>) -> Self {
        AliasView { window }
    }

    fn set(&mut self, index: usize, value: &Value) {
        if let Some(slot) = self.window.get_mut(index) {
            *slot = value.clone();
        }
    }
}

/// `findMapInSliceBasedOnKeyValue`: the first element whose merge key has `value`.
fn find_map_in_slice(list: &[Value], merge_key: &str, value: &Value) -> Result<Option<usize>> {
    for (index, item) in list.iter().enumerate() {
        let Some(map) = item.as_object() else {
            return Err(StrategicPatchError::NotAMap(index));
        };
        if let Some(candidate) = map.get(merge_key) {
            if go_equal(Some(candidate), Some(value))? {
                return Ok(Some(index));
            }
        }
    }
    Ok(None)
}

/// `deleteFromSlice`: drop every element listed in a `$deleteFromPrimitiveList`.
fn delete_from_slice(current: Vec<Value>, to_delete: &[Value]) -> Result<Vec<Value>> {
    for value in to_delete {
        check_hashable(value)?;
    }
    let mut kept = Vec::with_capacity(current.len());
    for value in current {
        check_hashable(&value)?;
        let mut listed = false;
        for candidate in to_delete {
            if go_equal(Some(candidate), Some(&value))? {
                listed = true;
                break;
            }
        }
        if !listed {
            kept.push(value);
        }
    }
    Ok(kept)
}

/// `deduplicateScalars`, the same swap-with-last algorithm (its order shows
/// nowhere once the list is normalized, but it costs nothing to keep).
fn deduplicate_scalars(mut list: Vec<Value>) -> Result<Vec<Value>> {
    let mut length = list.len() as isize - 1;
    let mut i: isize = 0;
    while i < length {
        let mut j = i + 1;
        while j <= length {
            if go_equal(Some(&list[i as usize]), Some(&list[j as usize]))? {
                list[j as usize] = list[length as usize].clone();
                list.truncate(length as usize);
                length -= 1;
                j -= 1;
            }
            j += 1;
        }
        i += 1;
    }
    Ok(list)
}

/// `partitionPrimitivesByPresentInList`: (present in `partition_by`, the rest).
fn partition_primitives(
    list: Vec<Value>,
    partition_by: &[Value],
) -> Result<(Vec<Value>, Vec<Value>)> {
    for value in partition_by {
        check_hashable(value)?;
    }
    let (mut present, mut rest) = (Vec::new(), Vec::new());
    for value in list {
        check_hashable(&value)?;
        let mut found = false;
        for candidate in partition_by {
            if go_equal(Some(candidate), Some(&value))? {
                found = true;
                break;
            }
        }
        if found {
            present.push(value);
        } else {
            rest.push(value);
        }
    }
    Ok((present, rest))
}

/// `partitionMapsByPresentInList`: by merge key value.
fn partition_maps(
    list: Vec<Value>,
    partition_by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let (mut present, mut rest) = (Vec::new(), Vec::new());
    for value in list {
        let Some(map) = value.as_object() else {
            return Err(bad_arg_type(GO_MAP_TYPE, Some(&value)));
        };
        let Some(merge_value) = map.get(merge_key) else {
            return Err(no_merge_key(&value, merge_key));
        };
        if find_map_in_slice(partition_by, merge_key, merge_value)?.is_some() {
            present.push(value);
        } else {
            rest.push(value);
        }
    }
    Ok((present, rest))
}

/// `normalizeElementOrder`: patch items in patch order, server-only items in
/// server order, then interleaved by the server order.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, is_map)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, is_map)?;
    merge_sorted_slice(server_only, patch, server_order, merge_key, is_map)
}

/// `normalizeSliceOrder`: stable sort by position in `order` (with upstream's
/// comparator and Go's `sort.SliceStable`), `$patch: delete` elements last.
fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>> {
    let (to_sort, to_delete) = if is_map {
        validate_merge_key_in_lists(merge_key, &[&to_sort, order])?;
        extract_to_delete_items(to_sort)?
    } else {
        (to_sort, Vec::new())
    };
    let mut sorted = if to_sort.len() < 2 {
        to_sort
    } else {
        let mut keyed = Vec::with_capacity(to_sort.len());
        for value in to_sort {
            keyed.push((index_in(order, &value, merge_key, is_map)?, value));
        }
        go::sort::slice_stable(
            &mut keyed,
            &|left: &(isize, Value), right: &(isize, Value)| {
                if left.0 >= 0 && right.0 >= 0 {
                    left.0 < right.0
                } else {
                    true
                }
            },
        );
        keyed.into_iter().map(|(_, value)| value).collect()
    };
    sorted.extend(to_delete);
    Ok(sorted)
}

/// `mergeSortedSlice`: insert the server-only items (`left`) into the patch items (`right`).
fn merge_sorted_slice(
    mut left: Vec<Value>,
    mut right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>> {
    let mut merged = Vec::with_capacity(left.len() + right.len());
    let (mut i, mut j) = (0, 0);
    while i < left.len() || j < right.len() {
        let take_left = if i >= left.len() {
            false
        } else if j >= right.len() {
            true
        } else {
            let left_index = index_in(server_order, &left[i], merge_key, is_map)?;
            let right_index = index_in(server_order, &right[j], merge_key, is_map)?;
            left_index >= 0 && right_index >= 0 && left_index < right_index
        };
        if take_left {
            merged.push(std::mem::take(&mut left[i]));
            i += 1;
        } else {
            merged.push(std::mem::take(&mut right[j]));
            j += 1;
        }
    }
    Ok(merged)
}

/// `index`: position of `value` in `list` (by merge key value for maps), or -1.
fn index_in(list: &[Value], value: &Value, merge_key: &str, is_map: bool) -> Result<isize> {
    fn key_of<'v>(item: &'v Value, merge_key: &str, is_map: bool) -> Option<&'v Value> {
        if is_map {
            item.as_object().and_then(|map| map.get(merge_key))
        } else {
            Some(item)
        }
    }
    let wanted = key_of(value, merge_key, is_map);
    for (position, item) in list.iter().enumerate() {
        if go_equal(wanted, key_of(item, merge_key, is_map))? {
            return Ok(position as isize);
        }
    }
    Ok(-1)
}

/// `validateMergeKeyInLists`.
fn validate_merge_key_in_lists(merge_key: &str, lists: &[&[Value]]) -> Result<()> {
    for item in lists.iter().flat_map(|list| list.iter()) {
        let Some(map) = item.as_object() else {
            return Err(bad_arg_type(GO_MAP_TYPE, Some(item)));
        };
        if !map.contains_key(merge_key) {
            return Err(no_merge_key(item, merge_key));
        }
    }
    Ok(())
}

/// `extractToDeleteItems`: (kept, `$patch: delete` elements).
fn extract_to_delete_items(list: Vec<Value>) -> Result<(Vec<Value>, Vec<Value>)> {
    let (mut keep, mut delete) = (Vec::new(), Vec::new());
    for item in list {
        let Some(map) = item.as_object() else {
            return Err(bad_arg_type(GO_MAP_TYPE, Some(&item)));
        };
        if map.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE) {
            delete.push(item);
        } else {
            keep.push(item);
        }
    }
    Ok((keep, delete))
}

/// `reflect.TypeOf` of a decoded JSON value, as far as strategic merge patch compares types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Nil,
    Bool,
    Int,
    Float,
    Str,
    Slice,
    Map,
}

/// kube decodes integers that fit to `int64` and every other number to `float64`.
fn tag(value: &Value) -> Tag {
    match value {
        Value::Null => Tag::Nil,
        Value::Bool(_) => Tag::Bool,
        Value::Number(number) if number.is_i64() => Tag::Int,
        Value::Number(_) => Tag::Float,
        Value::String(_) => Tag::Str,
        Value::Array(_) => Tag::Slice,
        Value::Object(_) => Tag::Map,
    }
}

fn type_name(value: Option<&Value>) -> &'static str {
    match value.map(tag) {
        None | Some(Tag::Nil) => "%!s(<nil>)",
        Some(Tag::Bool) => "bool",
        Some(Tag::Int) => "int64",
        Some(Tag::Float) => "float64",
        Some(Tag::Str) => "string",
        Some(Tag::Slice) => GO_SLICE_TYPE,
        Some(Tag::Map) => GO_MAP_TYPE,
    }
}

/// `sliceElementType`: the one element type of all lists.
fn slice_element_type(lists: &[&[Value]]) -> Result<Tag> {
    let mut previous: Option<Tag> = None;
    for value in lists.iter().flat_map(|list| list.iter()) {
        let current = tag(value);
        match previous {
            None => {
                if current == Tag::Nil {
                    // `reflect.TypeOf(nil).Kind()`: a nil interface method call.
                    return Err(StrategicPatchError::Panic(
                        "runtime error: invalid memory address or nil pointer dereference",
                    ));
                }
                if current == Tag::Slice {
                    return Err(StrategicPatchError::NoListOfLists);
                }
                previous = Some(current);
            }
            Some(previous) if previous != current => {
                let printed: Vec<String> = lists.iter().map(|list| go::fmt::list_v(list)).collect();
                return Err(StrategicPatchError::ElementTypesDiffer(format!(
                    "[{}]",
                    printed.join(" ")
                )));
            }
            Some(_) => {}
        }
    }
    previous.ok_or(StrategicPatchError::NoElements)
}

/// Go's `==` on two `interface{}` values decoded from JSON (`None` and JSON
/// null are Go's nil). Comparing two objects or two lists panics in Go.
fn go_equal(left: Option<&Value>, right: Option<&Value>) -> Result<bool> {
    let left = left.filter(|value| !value.is_null());
    let right = right.filter(|value| !value.is_null());
    let (left, right) = match (left, right) {
        (None, None) => return Ok(true),
        (Some(left), Some(right)) => (left, right),
        _ => return Ok(false),
    };
    let kind = tag(left);
    if kind != tag(right) {
        return Ok(false);
    }
    match kind {
        Tag::Map => Err(StrategicPatchError::Panic(
            "runtime error: comparing uncomparable type map[string]interface {}",
        )),
        Tag::Slice => Err(StrategicPatchError::Panic(
            "runtime error: comparing uncomparable type []interface {}",
        )),
        Tag::Int => Ok(left.as_i64() == right.as_i64()),
        Tag::Float => Ok(left.as_f64() == right.as_f64()),
        _ => Ok(left == right),
    }
}

/// Using an object or a list as a Go map key panics.
fn check_hashable(value: &Value) -> Result<()> {
    match value {
        Value::Object(_) => Err(StrategicPatchError::Panic(
            "runtime error: hash of unhashable type map[string]interface {}",
        )),
        Value::Array(_) => Err(StrategicPatchError::Panic(
            "runtime error: hash of unhashable type []interface {}",
        )),
        _ => Ok(()),
    }
}

/// `removeDirectives`: drop every object carrying `$patch` (`None`: drop this value too).
fn remove_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(map) => {
            if map.contains_key(DIRECTIVE_MARKER) {
                return None;
            }
            Some(Value::Object(
                map.into_iter()
                    .filter_map(|(key, value)| remove_directives(value).map(|value| (key, value)))
                    .collect(),
            ))
        }
        Value::Array(list) => Some(Value::Array(remove_directives_from_list(list))),
        other => Some(other),
    }
}

fn remove_directives_from_list(list: Vec<Value>) -> Vec<Value> {
    list.into_iter().filter_map(remove_directives).collect()
}

/// `discardNullValuesFromPatch`: drop null fields at any depth (null list items stay).
fn discard_null_values(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, value| !value.is_null());
            map.values_mut().for_each(discard_null_values);
        }
        Value::Array(list) => list.iter_mut().for_each(discard_null_values),
        _ => {}
    }
}

fn bad_arg_type(expected: &'static str, actual: Option<&Value>) -> StrategicPatchError {
    StrategicPatchError::BadArgType {
        expected,
        actual: type_name(actual),
    }
}

fn no_merge_key(map: &Value, merge_key: &str) -> StrategicPatchError {
    StrategicPatchError::NoMergeKey {
        map: go::fmt::value_v(Some(map)),
        merge_key: merge_key.to_string(),
    }
}

fn bad_patch_type(directive: &Value, map: &Map<String, Value>) -> StrategicPatchError {
    StrategicPatchError::BadPatchType {
        directive: go::fmt::value_s(directive),
        map: go::fmt::map_v(map),
    }
}

/// Go's `strings.EqualFold` for a (ASCII) JSON field name, with the Kelvin sign
/// and long s folding as `encoding/json` does.
fn go_equal_fold(field: &str, key: &str) -> bool {
    let fold = |c: char| match c {
        '\u{212A}' => 'k',
        '\u{017F}' => 's',
        c => c.to_ascii_lowercase(),
    };
    field.chars().map(fold).eq(key.chars().map(fold))
}

#[cfg(test)]
#[path = "strategic_tests.rs"]
mod tests;
