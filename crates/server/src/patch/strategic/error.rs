//! Why a strategic merge patch does not apply, with upstream's texts and
//! the HTTP answer kube gives for each.

use super::*;

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

pub(super) fn bad_arg_type(expected: &'static str, actual: Option<&Value>) -> StrategicPatchError {
    StrategicPatchError::BadArgType {
        expected,
        actual: type_name(actual),
    }
}

pub(super) fn no_merge_key(map: &Value, merge_key: &str) -> StrategicPatchError {
    StrategicPatchError::NoMergeKey {
        map: go::fmt::value_v(Some(map)),
        merge_key: merge_key.to_string(),
    }
}

pub(super) fn bad_patch_type(directive: &Value, map: &Map<String, Value>) -> StrategicPatchError {
    StrategicPatchError::BadPatchType {
        directive: go::fmt::value_s(directive),
        map: go::fmt::map_v(map),
    }
}
