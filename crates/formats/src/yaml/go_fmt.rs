//! Go formatting helpers.

use super::decode::GoVal;
use crate::go::float::format_g;
use crate::go::strconv::quote as go_quote;

/// Go's `%#v` of a decoded YAML value (used in go-yaml's error texts).
pub(super) fn go_syntax(v: &GoVal) -> String {
    match v {
        GoVal::Null => "<nil>".to_string(),
        GoVal::Bool(b) => b.to_string(),
        GoVal::Int(i) => i.to_string(),
        GoVal::Uint(u) => format!("0x{u:x}"),
        GoVal::Float(f) => go_format_g(*f, false),
        GoVal::Big(s) => s.clone(),
        GoVal::Str(s) => go_quote(s),
        GoVal::Seq(items) => {
            let inner: Vec<String> = items.iter().map(go_syntax).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        GoVal::Map(map) => {
            let inner: Vec<String> = map
                .entries
                .iter()
                .map(|(k, v)| format!("{}:{}", go_syntax(k), go_syntax(v)))
                .collect();
            format!("map[interface {{}}]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64|32)`, with go-yaml's names for
/// the infinities and NaN.
pub(super) fn go_format_g(f: f64, single: bool) -> String {
    if f.is_nan() {
        return ".nan".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    format_g(f, single)
}
