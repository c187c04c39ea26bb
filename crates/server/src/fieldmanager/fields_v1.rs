//! The FieldsV1 encoding of a [`Set`] (`fieldpath/serialize.go`,
//! `serialize-pe.go`): a JSON object whose keys are serialized path
//! elements (`f:name`, `k:{"name":"c"}`, `v:"x"`, `i:0`), whose values are
//! the child sets, with `".": {}` when the element itself is also a member.

use serde_json::{Map, Value};

use super::path::PathElement;
use super::set::Set;
use super::FieldManagerError;

/// `SerializePathElement`.
pub fn serialize_path_element(element: &PathElement) -> String {
    match element {
        PathElement::Field(name) => format!("f:{name}"),
        PathElement::Key(fields) => {
            let mut out = String::from("k:{");
            for (index, (name, value)) in fields.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&write_json(&Value::String(name.clone())));
                out.push(':');
                out.push_str(&write_json(value));
            }
            out.push('}');
            out
        }
        PathElement::Value(value) => format!("v:{}", write_json(value)),
        PathElement::Index(index) => format!("i:{index}"),
    }
}

/// JSON as SMD's jsoniter stream writes it (standard-library compatible:
/// `<`, `>`, `&`, U+2028 and U+2029 are escaped).
fn write_json(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    if !text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return text;
    }
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// `DeserializePathElement`; `Ok(None)` for an unknown element type (SMD
/// drops those, a later version may know them).
pub fn deserialize_path_element(text: &str) -> Result<Option<PathElement>, FieldManagerError> {
    let bad = |why: &str| FieldManagerError::FieldsV1(format!("{why}: {text}"));
    let bytes = text.as_bytes();
    if bytes.len() < 2 {
        return Err(bad("key must be 2 characters long"));
    }
    if bytes[1] != b':' {
        return Err(bad("missing colon"));
    }
    let rest = &text[2..];
    match bytes[0] {
        b'f' => Ok(Some(PathElement::Field(rest.to_string()))),
        b'v' => serde_json::from_str(rest)
            .map(|value| Some(PathElement::Value(value)))
            .map_err(|error| bad(&error.to_string())),
        b'k' => {
            let parsed: Value =
                serde_json::from_str(rest).map_err(|error| bad(&error.to_string()))?;
            let Value::Object(map) = parsed else {
                return Err(bad("key is not an object"));
            };
            Ok(Some(PathElement::key(map.into_iter().collect())))
        }
        b'i' => rest
            .parse::<i64>()
            .map(|index| Some(PathElement::Index(index)))
            .map_err(|error| bad(&error.to_string())),
        _ => Ok(None),
    }
}

/// The FieldsV1 bytes of a set, exactly as SMD's `Set.ToJSON` writes them
/// (children in path-element order, `.` first).
pub fn to_json_string(set: &Set) -> String {
    let mut out = String::from("{");
    emit(set, false, &mut out);
    out.push('}');
    out
}

fn emit(set: &Set, include_self: bool, out: &mut String) {
    let mut first = true;
    let mut sep = |out: &mut String| {
        if first {
            first = false;
        } else {
            out.push(',');
        }
    };
    if include_self && !set.is_empty() {
        sep(out);
        out.push_str("\".\":{}");
    }
    let mut members = set.members.iter().peekable();
    let mut children = set.children.iter().peekable();
    loop {
        let order = match (members.peek(), children.peek()) {
            (None, None) => break,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(member), Some((child, _))) => (*member).cmp(child),
        };
        sep(out);
        match order {
            std::cmp::Ordering::Less => {
                let member = members.next().map(serialize_path_element);
                out.push_str(&write_json(&Value::String(member.unwrap_or_default())));
                out.push_str(":{}");
            }
            std::cmp::Ordering::Greater => {
                if let Some((element, child)) = children.next() {
                    out.push_str(&write_json(&Value::String(serialize_path_element(element))));
                    out.push_str(":{");
                    emit(child, false, out);
                    out.push('}');
                }
            }
            std::cmp::Ordering::Equal => {
                members.next();
                if let Some((element, child)) = children.next() {
                    out.push_str(&write_json(&Value::String(serialize_path_element(element))));
                    out.push_str(":{");
                    emit(child, true, out);
                    out.push('}');
                }
            }
        }
    }
}

/// The FieldsV1 object as a JSON value (for `metadata.managedFields`).
pub fn to_value(set: &Set) -> Value {
    fn node(set: &Set, include_self: bool) -> Map<String, Value> {
        let mut map = Map::new();
        if include_self && !set.is_empty() {
            map.insert(".".into(), Value::Object(Map::new()));
        }
        for member in &set.members {
            map.insert(serialize_path_element(member), Value::Object(Map::new()));
        }
        for (element, child) in &set.children {
            let is_member = set.members.contains(element);
            map.insert(
                serialize_path_element(element),
                Value::Object(node(child, is_member)),
            );
        }
        map
    }
    Value::Object(node(set, false))
}

/// Reads a FieldsV1 object (`Set.FromJSON`).
pub fn from_value(value: &Value) -> Result<Set, FieldManagerError> {
    let Value::Object(map) = value else {
        return Err(FieldManagerError::FieldsV1("expected an object".into()));
    };
    read_map(map)
}

/// [`from_value`] of an object.
pub fn read_map(map: &Map<String, Value>) -> Result<Set, FieldManagerError> {
    read_node(map, 0).map(|(set, _)| set.unwrap_or_default())
}

/// Returns the children (None when the object is `{}`) and whether the
/// node itself is a member.
fn read_node(
    map: &Map<String, Value>,
    depth: usize,
) -> Result<(Option<Set>, bool), FieldManagerError> {
    if depth > 256 {
        return Err(FieldManagerError::FieldsV1("nested too deeply".into()));
    }
    let mut children: Option<Set> = None;
    let mut is_member = false;
    for (key, value) in map {
        if key == "." {
            is_member = true;
            continue;
        }
        let Some(element) = deserialize_path_element(key)? else {
            continue;
        };
        let Value::Object(inner) = value else {
            return Err(FieldManagerError::FieldsV1(format!(
                "expected an object for {key}"
            )));
        };
        let (grandchildren, child_is_member) = read_node(inner, depth + 1)?;
        if child_is_member {
            children
                .get_or_insert_with(Set::new)
                .members
                .insert(element.clone());
        }
        if let Some(grandchildren) = grandchildren {
            if !grandchildren.is_empty() {
                children
                    .get_or_insert_with(Set::new)
                    .children
                    .insert(element, grandchildren);
            }
        }
    }
    if children.is_none() {
        is_member = true;
    }
    Ok((children, is_member))
}
