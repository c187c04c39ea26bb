//! Go formatting helpers.

use std::fmt::Write as _;

use super::decode::GoVal;

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

/// Go's `strconv.Quote`.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0C' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0B' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7F => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c == ' ' || !(c.is_control() || c.is_whitespace()) => out.push(c),
            c if (c as u32) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// Shortest decimal digits and decimal exponent of a finite, non-zero float
/// (`f32` precision when `single`): `1.25e3` is (`"125"`, 3).
fn shortest_digits(f: f64, single: bool) -> (String, i32) {
    let text = if single {
        format!("{:e}", (f as f32).abs())
    } else {
        format!("{:e}", f.abs())
    };
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// Go's `%e`-style body: `d.ddde±XX`.
fn fmt_e(negative: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.unsigned_abs());
    out
}

/// Go's `%f` with the shortest digits.
fn fmt_f(negative: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        out.push_str("0.");
        for _ in 0..(-point) {
            out.push('0');
        }
        out.push_str(digits);
    } else if point as usize >= digits.len() {
        out.push_str(digits);
        for _ in 0..(point as usize - digits.len()) {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
    out
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
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (digits, exp) = shortest_digits(f, single);
    if !(-4..6).contains(&exp) {
        fmt_e(f < 0.0, &digits, exp)
    } else {
        fmt_f(f < 0.0, &digits, exp)
    }
}

/// Go's `json.Marshal` of a finite float64: `'f'` notation between 1e-6 and
/// 1e21, `'e'` notation (`1e+21`, `1e-7`) outside.
pub(super) fn go_json_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (digits, exp) = shortest_digits(f, false);
    let abs = f.abs();
    if !(1e-6..1e21).contains(&abs) {
        let text = fmt_e(f < 0.0, &digits, exp);
        // Go cleans e-09 up to e-9.
        match text.find("e-0") {
            Some(at) if text.len() == at + 4 => format!("{}e-{}", &text[..at], &text[at + 3..]),
            _ => text,
        }
    } else {
        fmt_f(f < 0.0, &digits, exp)
    }
}
