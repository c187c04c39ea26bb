//! Text forms of kube's time types, as their Go MarshalJSON/UnmarshalJSON
//! write and read them:
//! - `metav1.Time` (apis/meta/v1/time.go): RFC 3339 in UTC, whole seconds
//!   (`2006-01-02T15:04:05Z`); the proto form drops nanoseconds both ways
//!   (time_proto.go).
//! - `metav1.MicroTime` (micro_time.go): `2006-01-02T15:04:05.000000Z`.
//! - `metav1.Duration` (duration.go): Go's `time.Duration.String()` and
//!   `time.ParseDuration` (go/src/time/time.go, format.go).

const SECONDS_PER_DAY: i64 = 86_400;

/// Days since 1970-01-01 -> (year, month, day); proleptic Gregorian
/// (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Unix seconds (+ nanoseconds) -> RFC 3339 in UTC; `micros` adds the six
/// fractional digits of MicroTime. `None` outside years 0..=9999, which Go's
/// Time.MarshalJSON refuses too.
pub fn format_time(seconds: i64, nanos: i64, micros: bool) -> Option<String> {
    let seconds = seconds.checked_add(nanos.div_euclid(1_000_000_000))?;
    let nanos = nanos.rem_euclid(1_000_000_000);
    let days = seconds.div_euclid(SECONDS_PER_DAY);
    let secs = seconds.rem_euclid(SECONDS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        return None;
    }
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}");
    if micros {
        out.push_str(&format!(".{:06}", nanos / 1000));
    }
    out.push('Z');
    Some(out)
}

/// RFC 3339 (`time.RFC3339`, optional fraction, `Z` or `±hh:mm`) -> Unix
/// (seconds, nanoseconds).
pub fn parse_time(s: &str) -> Option<(i64, i32)> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<u32> {
        let part = b.get(from..from + len)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let sep = |at: usize, chars: &[u8]| b.get(at).is_some_and(|c| chars.contains(c));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (year, month, day) = (i64::from(num(0, 4)?), num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut pos = 19;
    let mut nanos: i64 = 0;
    if b.get(pos) == Some(&b'.') {
        pos += 1;
        let start = pos;
        while b.get(pos).is_some_and(u8::is_ascii_digit) {
            if pos - start < 9 {
                nanos = nanos * 10 + i64::from(b[pos] - b'0');
            }
            pos += 1;
        }
        if pos == start {
            return None;
        }
        for _ in (pos - start)..9 {
            nanos *= 10;
        }
    }
    let offset: i64 = match b.get(pos) {
        Some(b'Z' | b'z') if pos + 1 == b.len() => 0,
        Some(&c @ (b'+' | b'-')) if pos + 6 == b.len() && sep(pos + 3, b":") => {
            let (oh, om) = (num(pos + 1, 2)?, num(pos + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let off = i64::from(oh * 3600 + om * 60);
            if c == b'-' {
                -off
            } else {
                off
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * SECONDS_PER_DAY + i64::from(hour * 3600 + minute * 60 + second) - offset;
    Some((seconds, nanos as i32))
}

/// Go's `time.Duration.String()`: `1h2m3.5s`, `1.5ms`, `0s`.
pub fn format_duration(ns: i64) -> String {
    let neg = ns < 0;
    let u = ns.unsigned_abs();
    let frac = |v: u64, prec: u32| -> (u64, String) {
        let div = 10u64.pow(prec);
        let f = v % div;
        if f == 0 {
            return (v / div, String::new());
        }
        let digits = format!("{f:0width$}", width = prec as usize);
        (v / div, format!(".{}", digits.trim_end_matches('0')))
    };
    let mut out = String::new();
    if u == 0 {
        return "0s".to_string();
    } else if u < 1_000_000_000 {
        let (prec, unit) = match u {
            _ if u < 1_000 => (0, "ns"),
            _ if u < 1_000_000 => (3, "\u{b5}s"),
            _ => (6, "ms"),
        };
        let (int, f) = frac(u, prec);
        out.push_str(&format!("{int}{f}{unit}"));
    } else {
        let (secs, f) = frac(u, 9);
        let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
        if h > 0 {
            out.push_str(&format!("{h}h{m}m"));
        } else if m > 0 {
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&format!("{s}{f}s"));
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

/// Go's `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` with units
/// ns, us, µs, μs, ms, s, m, h; a bare `0` is allowed.
pub fn parse_duration(s: &str) -> Option<i64> {
    parse_go_duration(s).ok()
}

/// Go's `time.quote`: the text in double quotes, `"` and `\` escaped,
/// other bytes outside printable ASCII as `\x..`.
fn time_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            other => {
                let mut buffer = [0u8; 4];
                for byte in other.encode_utf8(&mut buffer).bytes() {
                    out.push_str(&format!("\\x{byte:02x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

/// [`parse_duration`] with Go's error texts (`time: invalid duration "x"`,
/// `time: missing unit in duration "1"`, `time: unknown unit "d" in
/// duration "1d"`), as kube quotes them for a bad `?timeout=`.
pub fn parse_go_duration(s: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", time_quote(s));
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    const LIMIT: u128 = 1 << 63;
    let mut total: u128 = 0;
    while !rest.is_empty() {
        if !rest.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
            return Err(invalid());
        }
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let mut value: u128 = 0;
        for c in int_part.bytes() {
            value = value * 10 + u128::from(c - b'0');
            if value > LIMIT {
                return Err(invalid());
            }
        }
        let (mut frac, mut scale, mut has_frac) = (0u128, 1f64, false);
        rest = after;
        if let Some(after_dot) = rest.strip_prefix('.') {
            let len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
            for c in after_dot[..len].bytes() {
                if frac < LIMIT / 10 {
                    frac = frac * 10 + u128::from(c - b'0');
                    scale *= 10.0;
                }
            }
            has_frac = len > 0;
            rest = &after_dot[len..];
        }
        if int_len == 0 && !has_frac {
            return Err(invalid());
        }
        let unit_len = rest
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", time_quote(s)));
        }
        let (unit, after_unit) = rest.split_at(unit_len);
        let unit: u128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            other => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    time_quote(other),
                    time_quote(s)
                ))
            }
        };
        rest = after_unit;
        value = value.checked_mul(unit).ok_or_else(invalid)?;
        if frac > 0 {
            value += (frac as f64 * (unit as f64 / scale)) as u128;
        }
        total += value;
        if total > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        return Ok((total as i128).wrapping_neg() as i64);
    }
    i64::try_from(total).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(format_time(0, 0, false).unwrap(), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_time(1_700_000_000, 0, false).unwrap(),
            "2023-11-14T22:13:20Z"
        );
        assert_eq!(
            format_time(1_700_000_000, 123_456_789, true).unwrap(),
            "2023-11-14T22:13:20.123456Z"
        );
        assert_eq!(
            format_time(951_782_400, 0, false).unwrap(),
            "2000-02-29T00:00:00Z"
        );
        assert!(format_time(i64::MAX, 0, false).is_none());
        assert_eq!(parse_time("2023-11-14T22:13:20Z"), Some((1_700_000_000, 0)));
        assert_eq!(
            parse_time("2023-11-14T23:13:20+01:00"),
            Some((1_700_000_000, 0))
        );
        assert_eq!(
            parse_time("2023-11-14T22:13:20.123456Z"),
            Some((1_700_000_000, 123_456_000))
        );
        assert_eq!(
            parse_time("0001-01-01T00:00:00Z"),
            Some((-62_135_596_800, 0))
        );
        for bad in [
            "",
            "2023-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2023-11-14 22:13:20Z",
            "x",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn durations() {
        let cases = [
            (0, "0s"),
            (1, "1ns"),
            (1_500, "1.5\u{b5}s"),
            (1_500_000, "1.5ms"),
            (1_000_000_000, "1s"),
            (90_000_000_000, "1m30s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_500_000_000, "1h2m3.5s"),
            (-2_000_000_000, "-2s"),
        ];
        for (ns, text) in cases {
            assert_eq!(format_duration(ns), text);
            assert_eq!(parse_duration(text), Some(ns), "{text}");
        }
        assert_eq!(parse_duration("1.5h"), Some(5_400_000_000_000));
        assert_eq!(parse_duration("300ms"), Some(300_000_000));
        assert_eq!(parse_duration("0"), Some(0));
        let errors = [
            ("invalid", "time: invalid duration \"invalid\""),
            ("", "time: invalid duration \"\""),
            ("1", "time: missing unit in duration \"1\""),
            ("1d", "time: unknown unit \"d\" in duration \"1d\""),
            ("5s3", "time: missing unit in duration \"5s3\""),
            (".s", "time: invalid duration \".s\""),
            (
                "9999999999999999999h",
                "time: invalid duration \"9999999999999999999h\"",
            ),
        ];
        for (text, message) in errors {
            assert_eq!(parse_go_duration(text), Err(message.to_string()), "{text}");
        }
        for bad in ["", "1", "h", "1x", ".s", "99999999999999999999h"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
