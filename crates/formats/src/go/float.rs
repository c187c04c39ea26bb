//! Go's float formatting: `strconv.FormatFloat(f, 'g', -1, 64|32)` (what
//! `%v` prints) and `encoding/json`'s float form.

use std::fmt::Write as _;

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

/// Go's `strconv.FormatFloat(f, 'g', -1, 64|32)` (fmt's `%v`): the shortest
/// digits, in exponent form when the exponent is below -4 or at least 6
/// (`1e+06`, `123456`, `1.5`, `0.0001`, `1e-05`).
pub fn format_g(f: f64, single: bool) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
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
pub fn json_float(f: f64) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_g_is_strconv_g_shortest() {
        for (value, text) in [
            (1.5, "1.5"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (100.0, "100"),
            (-2.5, "-2.5"),
            (1e21, "1e+21"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.0, "0"),
        ] {
            assert_eq!(format_g(value, false), text, "{value}");
        }
        assert_eq!(format_g(1.5f32 as f64, true), "1.5");
        assert_eq!(format_g(f64::NAN, false), "NaN");
        assert_eq!(json_float(1e21), "1e+21");
        assert_eq!(json_float(1e-7), "1e-7");
        assert_eq!(json_float(123456789.0), "123456789");
    }
}
