//! Decoded JSON values as Go sees them in strategic merge patch: their
//! `reflect` type, interface equality (and where it panics), directives
//! removed from results, `strings.EqualFold` of field names.

use super::*;

/// `reflect.TypeOf` of a decoded JSON value, as far as strategic merge patch compares types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tag {
    Nil,
    Bool,
    Int,
    Float,
    Str,
    Slice,
    Map,
}

/// kube decodes integers that fit to `int64` and every other number to `float64`.
pub(super) fn tag(value: &Value) -> Tag {
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

pub(super) fn type_name(value: Option<&Value>) -> &'static str {
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
pub(super) fn slice_element_type(lists: &[&[Value]]) -> Result<Tag> {
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
pub(super) fn go_equal(left: Option<&Value>, right: Option<&Value>) -> Result<bool> {
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
pub(super) fn check_hashable(value: &Value) -> Result<()> {
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
pub(super) fn remove_directives(value: Value) -> Option<Value> {
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

pub(super) fn remove_directives_from_list(list: Vec<Value>) -> Vec<Value> {
    list.into_iter().filter_map(remove_directives).collect()
}

/// `discardNullValuesFromPatch`: drop null fields at any depth (null list items stay).
pub(super) fn discard_null_values(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, value| !value.is_null());
            map.values_mut().for_each(discard_null_values);
        }
        Value::Array(list) => list.iter_mut().for_each(discard_null_values),
        _ => {}
    }
}

/// Go's `strings.EqualFold` for a (ASCII) JSON field name, with the Kelvin sign
/// and long s folding as `encoding/json` does.
pub(super) fn go_equal_fold(field: &str, key: &str) -> bool {
    let fold = |c: char| match c {
        '\u{212A}' => 'k',
        '\u{017F}' => 's',
        c => c.to_ascii_lowercase(),
    };
    field.chars().map(fold).eq(key.chars().map(fold))
}
