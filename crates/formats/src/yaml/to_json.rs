//! interface{} to JSON, as sigs.k8s.io/yaml converts and encoding/json writes.

use serde_json::{Map, Number, Value};

use super::decode::GoVal;
use super::go_fmt::{go_format_g, go_syntax};
use crate::go::float::json_float as go_json_float;

pub(super) fn to_json(v: GoVal) -> Result<Value, String> {
    Ok(match v {
        GoVal::Null => Value::Null,
        GoVal::Bool(b) => Value::Bool(b),
        GoVal::Int(i) => Value::Number(i.into()),
        GoVal::Uint(u) => Value::Number(u.into()),
        GoVal::Float(f) => {
            if !f.is_finite() {
                let shown = if f.is_nan() {
                    "NaN"
                } else if f > 0.0 {
                    "+Inf"
                } else {
                    "-Inf"
                };
                return Err(format!("json: unsupported value: {shown}"));
            }
            number_from_text(&go_json_float(f))
        }
        GoVal::Big(digits) => number_from_text(&digits),
        GoVal::Str(s) => Value::String(s),
        GoVal::Seq(items) => Value::Array(
            items
                .into_iter()
                .map(to_json)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        GoVal::Map(map) => {
            let mut out = Map::new();
            for (k, v) in map.entries {
                let key = match &k {
                    GoVal::Str(s) => s.clone(),
                    GoVal::Int(i) => i.to_string(),
                    GoVal::Float(f) => go_format_g(*f, true),
                    GoVal::Bool(b) => b.to_string(),
                    other => {
                        let type_name = match other {
                            GoVal::Null => "%!s(<nil>)",
                            GoVal::Uint(_) => "uint64",
                            GoVal::Big(_) => "*big.Int",
                            _ => "interface {}",
                        };
                        return Err(format!(
                            "unsupported map key of type: {type_name}, key: {}, value: {}",
                            go_syntax(other),
                            go_syntax(&v)
                        ));
                    }
                };
                out.insert(key, to_json(v)?);
            }
            Value::Object(out)
        }
    })
}

/// A JSON number as serde_json reads Go's text of it (integers stay
/// integers, `1e+21` is a float).
fn number_from_text(text: &str) -> Value {
    match serde_json::from_str::<Number>(text) {
        Ok(n) => Value::Number(n),
        Err(_) => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .unwrap_or(Value::Null),
    }
}
