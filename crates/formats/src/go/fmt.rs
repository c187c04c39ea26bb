//! Go's `fmt` verbs `%v` and `%s` of a decoded JSON value (`interface{}`),
//! as kube's error texts print patches and objects.

use serde_json::{Map, Value};

use super::float::format_g;

/// The fmt verb a value is printed with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verb {
    V,
    S,
}

/// `fmt.Sprintf("%v", value)`; `None` is a nil interface.
pub fn value_v(value: Option<&Value>) -> String {
    let mut out = String::new();
    go_format(value, Verb::V, 0, &mut out);
    out
}

/// `fmt.Sprintf("%s", value)`: non-strings as `%!s(type=value)`.
pub fn value_s(value: &Value) -> String {
    let mut out = String::new();
    go_format(Some(value), Verb::S, 0, &mut out);
    out
}

/// `%v` of a `[]interface{}`.
pub fn list_v(list: &[Value]) -> String {
    let mut out = String::new();
    go_format_list(list, Verb::V, 0, &mut out);
    out
}

/// `%v` of a `map[string]interface{}` (keys sorted, as fmt prints maps).
pub fn map_v(map: &Map<String, Value>) -> String {
    let mut out = String::new();
    go_format_map(map, Verb::V, 0, &mut out);
    out
}

/// `fmt.Sprintf("%#v", values)` of a `[]string`: `[]string{"a", "b"}`.
pub fn sharp_v_strings<S: AsRef<str>>(values: &[S]) -> String {
    let quoted: Vec<String> = values
        .iter()
        .map(|value| super::strconv::quote(value.as_ref()))
        .collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// Deepest value printed in error messages.
const MAX_PRINT_DEPTH: usize = 64;

/// Go's fmt of `interface{}` values (`map[k:v ...]` with sorted keys, `[a b]`,
/// `<nil>`, floats as `%g`), with `%s` marking non-strings as `%!s(type=value)`.
fn go_format(value: Option<&Value>, verb: Verb, depth: usize, out: &mut String) {
    if depth > MAX_PRINT_DEPTH {
        out.push_str("...");
        return;
    }
    let bad = |out: &mut String, type_name: &str, text: &str| {
        if verb == Verb::S {
            out.push_str(&format!("%!s({type_name}={text})"));
        } else {
            out.push_str(text);
        }
    };
    match value {
        None | Some(Value::Null) => out.push_str(if verb == Verb::S {
            "%!s(<nil>)"
        } else {
            "<nil>"
        }),
        Some(Value::Bool(flag)) => bad(out, "bool", if *flag { "true" } else { "false" }),
        Some(Value::Number(number)) => match number.as_i64() {
            Some(int) => bad(out, "int64", &int.to_string()),
            None => bad(
                out,
                "float64",
                &format_g(number.as_f64().unwrap_or(0.0), false),
            ),
        },
        Some(Value::String(text)) => out.push_str(text),
        Some(Value::Array(list)) => go_format_list(list, verb, depth, out),
        Some(Value::Object(map)) => go_format_map(map, verb, depth, out),
    }
}

fn go_format_list(list: &[Value], verb: Verb, depth: usize, out: &mut String) {
    out.push('[');
    for (position, item) in list.iter().enumerate() {
        if position > 0 {
            out.push(' ');
        }
        go_format(Some(item), verb, depth + 1, out);
    }
    out.push(']');
}

fn go_format_map(map: &Map<String, Value>, verb: Verb, depth: usize, out: &mut String) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|left, right| left.0.as_bytes().cmp(right.0.as_bytes()));
    out.push_str("map[");
    for (position, (key, value)) in entries.into_iter().enumerate() {
        if position > 0 {
            out.push(' ');
        }
        out.push_str(key);
        out.push(':');
        go_format(Some(value), verb, depth + 1, out);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn v_prints_maps_sorted_and_nil() {
        assert_eq!(
            value_v(Some(
                &json!({ "b": [1, "x", null, true], "a": { "z": 2.5 } })
            )),
            "map[a:map[z:2.5] b:[1 x <nil> true]]"
        );
        assert_eq!(value_v(None), "<nil>");
        assert_eq!(value_s(&json!(1)), "%!s(int64=1)");
        assert_eq!(value_s(&json!("x")), "x");
        assert_eq!(sharp_v_strings(&["a", "b\n"]), r#"[]string{"a", "b\n"}"#);
        assert_eq!(sharp_v_strings::<&str>(&[]), "[]string{}");
    }
}
