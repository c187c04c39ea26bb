//! Go's `time` package as kube's texts use it, on the `time` crate's calendar:
//! - RFC 3339 as `metav1.Time` (apis/meta/v1/time.go) writes it: UTC, whole
//!   seconds (`2006-01-02T15:04:05Z`); `metav1.MicroTime` (micro_time.go):
//!   `2006-01-02T15:04:05.000000Z`; `time.RFC3339` read back.
//! - `time.Duration.String()` and `time.ParseDuration` with its error texts
//!   (go/src/time/time.go, format.go), as `metav1.Duration` and `?timeout=` use
//!   them.
//! - `time.quote`, the quoting of those error texts.
//!
//! `time.Parse`'s error texts for the two layouts kube decodes are in
//! [`super::time_parse`].

use std::fmt::Write as _;
use std::time::SystemTime;

use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time};

/// Unix seconds (+ nanoseconds) -> RFC 3339 in UTC; `micros` adds the six
/// fractional digits of MicroTime. `None` outside years 0..=9999, which Go's
/// Time.MarshalJSON refuses too.
pub fn format_time(seconds: i64, nanos: i64, micros: bool) -> Option<String> {
    let seconds = seconds.checked_add(nanos.div_euclid(1_000_000_000))?;
    let nanos = nanos.rem_euclid(1_000_000_000);
    let at = OffsetDateTime::from_unix_timestamp(seconds).ok()?;
    let year = at.year();
    if !(0..=9999).contains(&year) {
        return None;
    }
    let (month, day) = (u8::from(at.month()), at.day());
    let (h, m, s) = (at.hour(), at.minute(), at.second());
    let mut out = format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}");
    if micros {
        let _ = write!(out, ".{:06}", nanos / 1000);
    }
    out.push('Z');
    Some(out)
}

/// A system time as `metav1.Time` marshals it (whole seconds, UTC); times
/// before 1970 print as the epoch.
pub fn rfc3339(time: SystemTime) -> String {
    let seconds = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        });
    format_time(seconds, 0, false).unwrap_or_else(|| "9999-12-31T23:59:59Z".to_string())
}

/// Now, as `metav1.Now()` marshals.
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// [`parse_time`] as a system time (fractions dropped); `None` before 1970.
pub fn parse_system_time(text: &str) -> Option<SystemTime> {
    let (seconds, _) = parse_time(text)?;
    Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(u64::try_from(seconds).ok()?))
}

/// Unix seconds of a civil date and time in UTC; `None` for a date that does
/// not exist (month 13, February 29th of a common year).
fn unix_seconds(year: i64, month: u32, day: u32, hms: (u32, u32, u32)) -> Option<i64> {
    let month = Month::try_from(u8::try_from(month).ok()?).ok()?;
    let date =
        Date::from_calendar_date(i32::try_from(year).ok()?, month, u8::try_from(day).ok()?).ok()?;
    let (hour, minute, second) = hms;
    let time = Time::from_hms(
        u8::try_from(hour).ok()?,
        u8::try_from(minute).ok()?,
        u8::try_from(second).ok()?,
    )
    .ok()?;
    Some(
        PrimitiveDateTime::new(date, time)
            .assume_utc()
            .unix_timestamp(),
    )
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
    let civil = unix_seconds(year, month, day, (hour, minute, second))?;
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
    Some((civil - offset, nanos as i32))
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

/// `quote` of Go's `time` package: non-ASCII and control bytes as `\xNN`.
pub fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if (c as u32) >= 0x80 || c < ' ' {
            let mut buf = [0u8; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, r"\x{byte:02x}");
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// [`parse_duration`] with Go's error texts (`time: invalid duration "x"`,
/// `time: missing unit in duration "1"`, `time: unknown unit "d" in
/// duration "1d"`), as kube quotes them for a bad `?timeout=`.
pub fn parse_go_duration(s: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", quote(s));
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
            return Err(format!("time: missing unit in duration {}", quote(s)));
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
                    quote(other),
                    quote(s)
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
    use std::time::{Duration, UNIX_EPOCH};

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn rfc3339_round_trips() {
        for seconds in [0, 951_782_400, 1_795_348_650, 4_102_444_799] {
            assert_eq!(parse_system_time(&rfc3339(at(seconds))), Some(at(seconds)));
        }
        assert_eq!(
            parse_system_time("2026-11-22T11:57:30.123456Z"),
            Some(at(1_795_348_650))
        );
        assert_eq!(parse_system_time("yesterday"), None);
    }

    #[test]
    fn formats_rfc3339() {
        let cases = [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_795_348_650, "2026-11-22T11:57:30Z"),
            (4_102_444_799, "2099-12-31T23:59:59Z"),
        ];
        for (seconds, expected) in cases {
            assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(seconds)), expected);
        }
    }

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
