//! Interpret (`encoding/json` into the apiVersion/kind struct) and the
//! group/version parsing that follows it.

use super::tree::{Node, Tree};

/// `reflect.Type.String()` of the struct `Interpret` decodes into.
pub(super) const FIND_KIND_TYPE: &str = r#"struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#;

/// What `Interpret` reads: the body's apiVersion and kind ("" when absent).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct TypeMeta {
    pub(super) api_version: String,
    pub(super) kind: String,
}

/// Go 1.21+ `foldName` equality against an ASCII field name: ASCII letters
/// compare case-insensitively, and `ſ` (U+017F) and `ı` (U+0131) upper-case
/// to `S` and `I`.
fn fold_equals(key: &str, name: &str) -> bool {
    let mut key_chars = key.chars();
    for want in name.chars() {
        let Some(got) = key_chars.next() else {
            return false;
        };
        let got = match got {
            '\u{17F}' => 'S',
            '\u{131}' => 'I',
            other => other.to_ascii_uppercase(),
        };
        if got != want.to_ascii_uppercase() {
            return false;
        }
    }
    key_chars.next().is_none()
}

/// The `encoding/json` description of a JSON value (`UnmarshalTypeError.Value`)
/// when it lands in a string/struct/other non-matching Go value.
pub(super) fn value_word(node: &Node) -> &'static str {
    match node {
        Node::Null => "null",
        Node::Bool => "bool",
        Node::Number => "number",
        Node::String(_) => "string",
        Node::Array(_) => "array",
        Node::Object(_) => "object",
    }
}

/// `json.Unmarshal(data, &findKind)`: the `encoding/json` error text, or the
/// fields. Like Go, it keeps decoding after a type error and reports the first.
pub(super) fn interpret(tree: &Tree<'_>) -> Result<TypeMeta, String> {
    let mut meta = TypeMeta::default();
    let members = match tree.node(0) {
        Node::Object(members) => members,
        Node::Null => return Ok(meta),
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type {FIND_KIND_TYPE}",
                value_word(other)
            ))
        }
    };
    let mut first_error = None;
    for (key, index) in members {
        let (name, slot) =
            if key == "apiVersion" || (key != "kind" && fold_equals(key, "apiVersion")) {
                ("apiVersion", &mut meta.api_version)
            } else if key == "kind" || fold_equals(key, "kind") {
                ("kind", &mut meta.kind)
            } else {
                continue;
            };
        match tree.node(*index) {
            Node::String(value) => *slot = value.clone(),
            Node::Null => {}
            other => {
                first_error.get_or_insert_with(|| {
                    format!(
                        "json: cannot unmarshal {} into Go struct field .{name} of type string",
                        value_word(other)
                    )
                });
            }
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok(meta),
    }
}

/// `schema.ParseGroupVersion`.
pub(super) fn parse_group_version(gv: &str) -> Result<(String, String), String> {
    if gv.is_empty() || gv == "/" {
        return Ok((String::new(), String::new()));
    }
    match gv.matches('/').count() {
        0 => Ok((String::new(), gv.to_string())),
        1 => {
            let (group, version) = gv.split_once('/').unwrap_or((gv, ""));
            Ok((group.to_string(), version.to_string()))
        }
        _ => Err(format!("unexpected GroupVersion string: {gv}")),
    }
}

/// `schema.GroupVersion.String()`.
pub(super) fn gv_string(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}
