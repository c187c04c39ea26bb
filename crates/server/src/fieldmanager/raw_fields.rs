//! A live entry's FieldsV1 object used as it is, without decoding it into a
//! [`Set`] and encoding it again: most writes change the sets of few
//! managers (often none but the writer's), and decoding and re-encoding
//! every manager's fields was a large part of each write.
//!
//! Only a FieldsV1 object in SMD's canonical form is used raw: one that
//! [`fields_v1::from_value`] decodes and [`fields_v1::to_value`] encodes back
//! to an equal value, and whose keys name distinct path elements. For such
//! an object a path element is present exactly when its serialized text is
//! a key, so membership, intersection and containment can be read from the
//! keys directly. Anything else (a client's odd spelling, unknown element
//! types, floats in keys) is decoded as before.

use serde_json::{Map, Value};

use super::fields_v1::{self, serialize_path_element};
use super::set::Set;

/// Deepest FieldsV1 nesting read raw (decoding refuses beyond 256).
const MAX_DEPTH: usize = 200;

/// Whether `map` is a canonical, non-empty FieldsV1 object.
pub fn is_canonical_map(map: &Map<String, Value>) -> bool {
    // The root is never a member: a "." there is dropped by decoding.
    !map.is_empty() && !map.contains_key(".") && canonical_children(map, 0)
}

/// Every key but "." a canonical path element whose value is a canonical node.
fn canonical_children(map: &Map<String, Value>, depth: usize) -> bool {
    map.iter()
        .all(|(key, value)| key == "." || (canonical_key(key) && canonical_node(value, depth + 1)))
}

/// The object under one element: `{}` (a member without children), or
/// children with `".": {}` when the element is also a member.
fn canonical_node(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Value::Object(map) = value else {
        return false;
    };
    if map.is_empty() {
        return true;
    }
    match map.get(".") {
        // `{".": {}}` alone encodes as `{}`; a "." whose value is not `{}`
        // encodes as `{}`.
        Some(dot) => {
            map.len() > 1
                && dot.as_object().is_some_and(Map::is_empty)
                && canonical_children(map, depth)
        }
        None => canonical_children(map, depth),
    }
}

/// A key that decodes to an element which serializes back to the same
/// text, and whose values (of `k:` and `v:`) are scalars with integers in
/// i64: distinct texts are then distinct elements (a float or a huge
/// integer could equal another number spelled differently).
fn canonical_key(key: &str) -> bool {
    let Some((kind, rest)) = key.split_at_checked(2) else {
        return false;
    };
    match kind {
        "f:" => true,
        "k:" => simple_key_fields(rest) || reserializes(key),
        "v:" => simple_scalar(rest) == Some(rest.len()) || reserializes(key),
        "i:" => rest
            .parse::<i64>()
            .is_ok_and(|index| index.to_string() == rest),
        _ => false,
    }
}

/// The slow check: decode and serialize again.
fn reserializes(key: &str) -> bool {
    let Ok(Some(element)) = fields_v1::deserialize_path_element(key) else {
        return false;
    };
    let scalar = |value: &Value| match value {
        Value::Number(number) => number.as_i64().is_some(),
        Value::Array(_) | Value::Object(_) => false,
        _ => true,
    };
    let plain = match &element {
        super::path::PathElement::Key(fields) => fields.iter().all(|(_, value)| scalar(value)),
        super::path::PathElement::Value(value) => scalar(value),
        _ => true,
    };
    plain && serialize_path_element(&element) == key
}

/// `{"a":"x","b":80}`: names in strictly increasing order, plain strings,
/// i64 integers, booleans and null, written as SMD writes them (checked
/// without allocating; anything else goes to [`reserializes`]).
fn simple_key_fields(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() < 2 || bytes[0] != b'{' || bytes[bytes.len() - 1] != b'}' {
        return false;
    }
    let mut at = 1;
    let mut previous: Option<&str> = None;
    loop {
        let Some(name_len) = simple_string(&text[at..]) else {
            return false;
        };
        let name = &text[at + 1..at + name_len - 1];
        if previous.is_some_and(|p| p >= name) {
            return false;
        }
        previous = Some(name);
        at += name_len;
        if bytes.get(at) != Some(&b':') {
            return false;
        }
        at += 1;
        let Some(value_len) = simple_scalar(&text[at..]) else {
            return false;
        };
        at += value_len;
        match bytes.get(at) {
            Some(b',') => at += 1,
            Some(b'}') if at == bytes.len() - 1 => return true,
            _ => return false,
        }
    }
}

/// The length of a scalar at the start of `text` written canonically.
fn simple_scalar(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    match bytes.first()? {
        b'"' => simple_string(text),
        b't' if text.starts_with("true") => Some(4),
        b'f' if text.starts_with("false") => Some(5),
        b'n' if text.starts_with("null") => Some(4),
        b'-' | b'0'..=b'9' => {
            let sign = usize::from(bytes[0] == b'-');
            let digits = sign
                + bytes[sign..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
            let number = &text[..digits];
            // Canonical i64 spelling only (no "-0", "007", or overflow).
            number
                .parse::<i64>()
                .is_ok_and(|n| n.to_string() == number)
                .then_some(digits)
        }
        _ => None,
    }
}

/// The length of a quoted string at the start of `text` (quotes included)
/// that needs no escaping in SMD's output.
fn simple_string(text: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    if chars.next()?.1 != '"' {
        return None;
    }
    for (index, c) in chars {
        match c {
            '"' => return Some(index + 1),
            '\\' | '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => return None,
            c if (c as u32) < 0x20 => return None,
            _ => {}
        }
    }
    None
}

/// Whether the element under `key` is itself a member (its node is `{}` or
/// holds ".").
fn is_member(node: &Value) -> bool {
    node.as_object()
        .is_some_and(|map| map.is_empty() || map.contains_key("."))
}

/// Whether a canonical FieldsV1 node and `set` share a path.
pub fn intersects(raw: &Map<String, Value>, set: &Set) -> bool {
    set.members.iter().any(|member| {
        raw.get(&serialize_path_element(member))
            .is_some_and(is_member)
    }) || set.children.iter().any(|(element, below)| {
        match raw.get(&serialize_path_element(element)) {
            Some(Value::Object(node)) => intersects(node, below),
            _ => false,
        }
    })
}

/// Whether every path of `set` is in a canonical FieldsV1 node.
pub fn contains(raw: &Map<String, Value>, set: &Set) -> bool {
    set.members.iter().all(|member| {
        raw.get(&serialize_path_element(member))
            .is_some_and(is_member)
    }) && set.children.iter().all(|(element, below)| {
        match raw.get(&serialize_path_element(element)) {
            Some(Value::Object(node)) => contains(node, below),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::super::path::PathElement;
    use super::*;

    fn canonical(text: &str) -> bool {
        let value: Value = serde_json::from_str(text).expect("valid JSON");
        value.as_object().is_some_and(is_canonical_map)
    }

    #[test]
    fn canonical_objects_decode_and_encode_to_themselves() {
        for text in [
            r#"{"f:a":{}}"#,
            r#"{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:x":{}}}}"#,
            r#"{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}"#,
            r#"{"f:finalizers":{"v:\"a\"":{},"v:1":{},"v:true":{},"v:null":{}}}"#,
            r#"{"f:list":{"i:0":{},"i:-2":{"f:x":{}}}}"#,
            // Escaped as SMD escapes: read through the slow check.
            r#"{"f:m":{"v:\"a\\u003cb\"":{}},"f:n":{"k:{\"name\":\"q\\\"\"}":{}}}"#,
        ] {
            assert!(canonical(text), "{text}");
            let value: Value = serde_json::from_str(text).expect("json");
            let set = fields_v1::from_value(&value).expect("decodes");
            assert_eq!(fields_v1::to_value(&set), value, "{text}");
        }
    }

    #[test]
    fn other_spellings_are_decoded() {
        for text in [
            r#"{}"#,
            r#"{".":{},"f:a":{}}"#,
            r#"{"f:a":{".":{}}}"#,
            r#"{"f:a":{".":{"f:x":{}},"f:b":{}}}"#,
            r#"{"f:a":1}"#,
            r#"{"z:unknown":{},"f:a":{}}"#,
            r#"{"x":{}}"#,
            r#"{"k:{\"b\":1,\"a\":2}":{}}"#,
            r#"{"k:{\"name\": \"x\"}":{}}"#,
            r#"{"k:{\"name\":\"x\",\"name\":\"y\"}":{}}"#,
            r#"{"v:1.0":{}}"#,
            r#"{"v:18446744073709551615":{}}"#,
            r#"{"v:[1]":{}}"#,
            r#"{"v:\"\\u0061\"":{}}"#,
            r#"{"i:01":{}}"#,
            r#"{"i:-0":{}}"#,
        ] {
            assert!(!canonical(text), "{text}");
        }
    }

    #[test]
    fn set_queries_read_the_keys() {
        let raw = json!({"f:a": {".": {}, "f:b": {}}, "f:c": {"f:d": {}}});
        let raw = raw.as_object().expect("object");
        let f = PathElement::field;
        use super::super::set::set_of;
        assert!(intersects(raw, &set_of(&[&[f("a")]])));
        assert!(intersects(raw, &set_of(&[&[f("c"), f("d")], &[f("x")]])));
        assert!(!intersects(raw, &set_of(&[&[f("c")], &[f("a"), f("x")]])));
        assert!(contains(raw, &set_of(&[&[f("a")], &[f("a"), f("b")]])));
        assert!(!contains(raw, &set_of(&[&[f("a")], &[f("c")]])));
    }
}
