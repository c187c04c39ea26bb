//! YAML text of a JSON value, as yaml.v3 `Marshal` prints it in block style
//! (gnostic `compiler.Marshal` clears the flow styles JSON parsing leaves).

use serde_json::{Map, Value};

/// The YAML document for `value`, newline-terminated.
pub(super) fn yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => yaml_mapping(map, 0, false, &mut out),
        Value::Array(items) if !items.is_empty() => yaml_sequence(items, 0, false, &mut out),
        scalar => {
            out.push_str(&yaml_scalar(scalar));
            out.push('\n');
        }
    }
    out
}

/// yaml.v3's indentation of a block collection nested as a mapping value:
/// the next multiple of the (default, 4) indent.
fn nested_indent(indent: usize) -> usize {
    4 * ((indent + 4) / 4)
}

/// A block mapping at `indent`; `inline` when its first key follows a `- `.
fn yaml_mapping(map: &Map<String, Value>, indent: usize, inline: bool, out: &mut String) {
    for (index, (key, value)) in map.iter().enumerate() {
        if index > 0 || !inline {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(&yaml_string(key));
        out.push(':');
        match value {
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                yaml_mapping(inner, nested_indent(indent), false, out);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                yaml_sequence(items, nested_indent(indent), false, out);
            }
            scalar => {
                out.push(' ');
                out.push_str(&yaml_scalar(scalar));
                out.push('\n');
            }
        }
    }
}

/// A block sequence at `indent`; `inline` when its first item follows a `- `.
/// Collections inside an item sit 2 columns in, just past the `- `.
fn yaml_sequence(items: &[Value], indent: usize, inline: bool, out: &mut String) {
    for (index, item) in items.iter().enumerate() {
        if index > 0 || !inline {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str("- ");
        match item {
            Value::Object(inner) if !inner.is_empty() => {
                yaml_mapping(inner, indent + 2, true, out);
            }
            Value::Array(inner) if !inner.is_empty() => {
                yaml_sequence(inner, indent + 2, true, out);
            }
            scalar => {
                out.push_str(&yaml_scalar(scalar));
                out.push('\n');
            }
        }
    }
}

fn yaml_scalar(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => yaml_string(text),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// A string scalar: plain when it cannot be read back as anything but this
/// string (by YAML 1.1 or 1.2 readers alike), double-quoted otherwise.
fn yaml_string(text: &str) -> String {
    const RESERVED: &[&str] = &[
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
    ];
    let mut chars = text.chars();
    let plain = match chars.next() {
        Some(first) => {
            (first.is_ascii_alphabetic() || first == '_' || first == '/')
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ','))
                && !RESERVED.contains(&text.to_ascii_lowercase().as_str())
        }
        None => false,
    };
    if plain {
        text.to_string()
    } else {
        // JSON string escapes are all valid YAML double-quoted escapes.
        serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
    }
}
