//! go-yaml v2 `resolve`.

use std::fmt::Write as _;

use super::decode::{
    short_tag, BINARY_TAG, BOOL_TAG, FLOAT_TAG, INT_TAG, MERGE_TAG, NULL_TAG, STR_TAG,
    TIMESTAMP_TAG,
};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Big(String),
    Str,
    Timestamp,
    Merge,
}

/// go-yaml's `resolveMap`.
fn resolve_map(s: &str) -> Option<(&'static str, Resolved)> {
    Some(match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            (BOOL_TAG, Resolved::Bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            (BOOL_TAG, Resolved::Bool(false))
        }
        "" | "~" | "null" | "Null" | "NULL" => (NULL_TAG, Resolved::Null),
        ".nan" | ".NaN" | ".NAN" => (FLOAT_TAG, Resolved::Float(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            (FLOAT_TAG, Resolved::Float(f64::INFINITY))
        }
        "-.inf" | "-.Inf" | "-.INF" => (FLOAT_TAG, Resolved::Float(f64::NEG_INFINITY)),
        "<<" => (MERGE_TAG, Resolved::Merge),
        _ => return None,
    })
}

/// go-yaml v2 `resolve(tag, in)`: the tag the scalar resolves to and its
/// value; `Err` is go-yaml's `cannot decode ...` failure.
pub(super) fn resolve(tag: &str, input: &str) -> Result<(&'static str, Resolved), String> {
    let resolvable = matches!(
        tag,
        "" | STR_TAG | BOOL_TAG | INT_TAG | FLOAT_TAG | NULL_TAG | TIMESTAMP_TAG
    );
    if !resolvable {
        // An unresolvable tag keeps the text; `!!binary` is decoded by the caller.
        let rtag = if tag == BINARY_TAG { BINARY_TAG } else { "" };
        return Ok((rtag, Resolved::Str));
    }
    let (rtag, out) = resolve_plain(tag, input);
    if tag.is_empty() || tag == rtag || tag == STR_TAG || tag == BINARY_TAG {
        return Ok((rtag, out));
    }
    if tag == FLOAT_TAG && rtag == INT_TAG {
        match out {
            Resolved::Int(i) => return Ok((FLOAT_TAG, Resolved::Float(i as f64))),
            Resolved::Uint(u) => return Ok((rtag, Resolved::Uint(u))),
            _ => {}
        }
    }
    Err(format!(
        "yaml: cannot decode {} `{input}` as a {}",
        short_tag(rtag),
        short_tag(tag)
    ))
}

pub(super) fn resolve_plain(tag: &str, input: &str) -> (&'static str, Resolved) {
    let hint = match input.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => 0,
    };
    if hint != 0 && tag != STR_TAG && tag != BINARY_TAG {
        if let Some(item) = resolve_map(input) {
            return item;
        }
        match hint {
            b'.' => {
                if let Some(f) = go_parse_float(input) {
                    return (FLOAT_TAG, Resolved::Float(f));
                }
            }
            b'D' | b'S' => {
                if (tag.is_empty() || tag == TIMESTAMP_TAG) && is_timestamp(input) {
                    return (TIMESTAMP_TAG, Resolved::Timestamp);
                }
                let plain: String = input.chars().filter(|&c| c != '_').collect();
                if let Ok(i) = go_parse_int(&plain) {
                    return (INT_TAG, Resolved::Int(i));
                }
                let uint_err = match go_parse_uint(&plain) {
                    Ok(u) => return (INT_TAG, Resolved::Uint(u)),
                    Err(err) => err,
                };
                if is_yaml_style_float(&plain) {
                    if let Some(f) = go_parse_float(&plain) {
                        return (FLOAT_TAG, Resolved::Float(f));
                    }
                }
                if uint_err == IntError::Range {
                    if let Some(big) = big_int_decimal(&plain) {
                        return (INT_TAG, Resolved::Big(big));
                    }
                }
            }
            _ => {}
        }
    }
    (STR_TAG, Resolved::Str)
}

#[derive(Debug, PartialEq, Eq)]
enum IntError {
    Syntax,
    Range,
}

/// Base and digits of Go's `ParseUint(s, 0, 64)` syntax (no sign).
fn split_base(s: &str) -> (u32, &str) {
    let bytes = s.as_bytes();
    if bytes.len() >= 2 && bytes[0] == b'0' {
        match bytes[1] {
            b'x' | b'X' => return (16, &s[2..]),
            b'o' | b'O' => return (8, &s[2..]),
            b'b' | b'B' => return (2, &s[2..]),
            _ => return (8, &s[1..]),
        }
    }
    (10, s)
}

/// Go's `strconv.ParseUint(s, 0, 64)` (underscores already removed).
fn go_parse_uint(s: &str) -> Result<u64, IntError> {
    let (base, digits) = split_base(s);
    if digits.is_empty() {
        return Err(IntError::Syntax);
    }
    let mut value: u64 = 0;
    let mut overflow = false;
    for c in digits.chars() {
        let d = c.to_digit(base).ok_or(IntError::Syntax)?;
        match value
            .checked_mul(u64::from(base))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    if overflow {
        Err(IntError::Range)
    } else {
        Ok(value)
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)`.
fn go_parse_int(s: &str) -> Result<i64, IntError> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = go_parse_uint(rest)?;
    if negative {
        if magnitude > 1u64 << 63 {
            return Err(IntError::Range);
        }
        Ok((magnitude as i64).wrapping_neg())
    } else {
        i64::try_from(magnitude).map_err(|_| IntError::Range)
    }
}

/// The decimal digits of `big.Int.SetString(s, 0)` for integers past 64 bits.
fn big_int_decimal(s: &str) -> Option<String> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let (base, digits) = split_base(rest);
    if digits.is_empty() {
        return None;
    }
    // Little-endian base-1e9 limbs.
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let d = u64::from(c.to_digit(base)?);
        let mut carry = d;
        for limb in &mut limbs {
            let v = *limb * u64::from(base) + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    let mut iter = limbs.iter().rev();
    if let Some(top) = iter.next() {
        let _ = write!(out, "{top}");
    }
    for limb in iter {
        let _ = write!(out, "{limb:09}");
    }
    Some(out)
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for the decimal forms go-yaml feeds it;
/// an overflow (`1e400`) is an error in Go.
fn go_parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let body = s.trim_start_matches(['+', '-']);
    if body.is_empty()
        || !body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        || b.iter().filter(|&&c| c == b'+' || c == b'-').count() > 2
    {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// go-yaml v2 `parseTimestamp`: `2006-1-2T15:4:5.999999999Z07:00` (`T` or
/// `t`), `2006-1-2 15:4:5.999999999` or `2006-1-2`, as Go's `time.Parse`
/// accepts them (1-2 digit month/day/hour/minute/second, valid calendar
/// dates, any number of fraction digits).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut i = 5;
    let num = |i: &mut usize, max_digits: usize| -> Option<u32> {
        let start = *i;
        while *i < b.len() && *i - start < max_digits && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == start {
            return None;
        }
        s[start..*i].parse().ok()
    };
    let year: u32 = match s[..4].parse() {
        Ok(y) => y,
        Err(_) => return false,
    };
    let Some(month) = num(&mut i, 2) else {
        return false;
    };
    if b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let Some(day) = num(&mut i, 2) else {
        return false;
    };
    if !(1..=12).contains(&month) {
        return false;
    }
    let leap = (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400);
    let days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if day < 1 || day > days[(month - 1) as usize] {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let zoned = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return false,
    };
    i += 1;
    let Some(hour) = num(&mut i, 2) else {
        return false;
    };
    if b.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    let Some(minute) = num(&mut i, 2) else {
        return false;
    };
    if b.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    let Some(second) = num(&mut i, 2) else {
        return false;
    };
    if hour >= 24 || minute >= 60 || second >= 60 {
        return false;
    }
    if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if !zoned {
        return i == b.len();
    }
    match &b[i..] {
        [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}
