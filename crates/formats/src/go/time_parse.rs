//! `time.Parse(time.RFC3339 / metav1.RFC3339Micro, s)` errors.

use super::time::quote;
use super::utf8::lossy as go_lossy;

/// One element of a Go time layout.
#[derive(Clone, Copy)]
enum Std {
    LongYear,
    ZeroMonth,
    ZeroDay,
    Hour,
    ZeroMinute,
    ZeroSecond,
    FracSecond0(usize),
    Iso8601ColonTz,
}

/// `getnum`: one or two digits (exactly two when `fixed`).
fn getnum(value: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    let digit = |i: usize| value.get(i).is_some_and(u8::is_ascii_digit);
    if !digit(0) {
        return None;
    }
    if !digit(1) {
        if fixed {
            return None;
        }
        return Some((i64::from(value[0] - b'0'), &value[1..]));
    }
    Some((
        i64::from(value[0] - b'0') * 10 + i64::from(value[1] - b'0'),
        &value[2..],
    ))
}

/// `atoi` of the time package (optional sign, then digits only).
fn time_atoi(s: &[u8]) -> Option<i64> {
    let (negative, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut x: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        x = x.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
    }
    Some(if negative { -x } else { x })
}

/// `parseNanoseconds(value, nbytes)`: `Err(None)` is errBad, `Err(Some(_))` a range error.
fn parse_nanoseconds(value: &[u8], nbytes: usize) -> Result<(), Option<&'static str>> {
    if !matches!(value.first(), Some(b'.' | b',')) {
        return Err(None);
    }
    let nbytes = nbytes.min(10);
    match time_atoi(&value[1..nbytes.min(value.len())]) {
        None => Err(None),
        Some(ns) if ns < 0 => Err(Some("fractional second")),
        Some(_) => Ok(()),
    }
}

fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `time.Parse(layout, value)` for `time.RFC3339` (`micro: false`) and
/// `metav1.RFC3339Micro`: the `*time.ParseError` text, as `metav1.Time` /
/// `MicroTime` `UnmarshalJSON` returns it.
pub fn parse_go_time(value: &str, micro: bool) -> Result<(), String> {
    let layout = if micro {
        "2006-01-02T15:04:05.000000Z07:00"
    } else {
        "2006-01-02T15:04:05Z07:00"
    };
    let mut chunks: Vec<(&str, Std, &str)> = vec![
        ("", Std::LongYear, "2006"),
        ("-", Std::ZeroMonth, "01"),
        ("-", Std::ZeroDay, "02"),
        ("T", Std::Hour, "15"),
        (":", Std::ZeroMinute, "04"),
        (":", Std::ZeroSecond, "05"),
    ];
    if micro {
        chunks.push(("", Std::FracSecond0(6), ".000000"));
    }
    chunks.push(("", Std::Iso8601ColonTz, "Z07:00"));

    let bad = |elem: &str, rest: &[u8]| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(value),
            quote(layout),
            quote(&go_lossy(rest)),
            quote(elem)
        )
    };
    let range = |what: &str| format!("parsing time {}: {what} out of range", quote(value));

    let mut rest = value.as_bytes();
    let (mut year, mut month, mut day) = (0i64, -1i64, -1i64);
    for (index, (prefix, std, elem)) in chunks.iter().enumerate() {
        for &p in prefix.as_bytes() {
            if rest.first() != Some(&p) {
                return Err(bad(prefix, rest));
            }
            rest = &rest[1..];
        }
        let hold = rest;
        let mut range_error: Option<&str> = None;
        let ok: Option<&[u8]> = match std {
            Std::LongYear => {
                if rest.len() < 4 || !rest[0].is_ascii_digit() {
                    None
                } else {
                    time_atoi(&rest[..4]).map(|y| {
                        year = y;
                        &rest[4..]
                    })
                }
            }
            Std::ZeroMonth => getnum(rest, true).map(|(m, after)| {
                month = m;
                if !(1..=12).contains(&m) {
                    range_error = Some("month");
                }
                after
            }),
            Std::ZeroDay => getnum(rest, true).map(|(d, after)| {
                day = d;
                after
            }),
            Std::Hour => getnum(rest, false).map(|(h, after)| {
                if h >= 24 {
                    range_error = Some("hour");
                }
                after
            }),
            Std::ZeroMinute => getnum(rest, true).map(|(m, after)| {
                if m >= 60 {
                    range_error = Some("minute");
                }
                after
            }),
            Std::ZeroSecond => match getnum(rest, true) {
                None => None,
                Some((s, after)) if s >= 60 => {
                    range_error = Some("second");
                    Some(after)
                }
                Some((_, after)) => {
                    let next_is_frac =
                        matches!(chunks.get(index + 1), Some((_, Std::FracSecond0(_), _)));
                    let has_frac = after.len() >= 2
                        && matches!(after[0], b'.' | b',')
                        && after[1].is_ascii_digit();
                    if has_frac && !next_is_frac {
                        let mut n = 2;
                        while n < after.len() && after[n].is_ascii_digit() {
                            n += 1;
                        }
                        match parse_nanoseconds(after, n) {
                            Ok(()) => Some(&after[n..]),
                            Err(Some(what)) => {
                                range_error = Some(what);
                                Some(&after[n..])
                            }
                            Err(None) => None,
                        }
                    } else {
                        Some(after)
                    }
                }
            },
            Std::FracSecond0(digits) => {
                let ndigit = 1 + digits;
                if rest.len() < ndigit {
                    None
                } else {
                    match parse_nanoseconds(rest, ndigit) {
                        Ok(()) => Some(&rest[ndigit..]),
                        Err(Some(what)) => {
                            range_error = Some(what);
                            Some(&rest[ndigit..])
                        }
                        Err(None) => None,
                    }
                }
            }
            Std::Iso8601ColonTz => {
                if rest.first() == Some(&b'Z') {
                    Some(&rest[1..])
                } else if rest.len() < 6 || rest[3] != b':' {
                    None
                } else {
                    let hour = getnum(&rest[1..3], true);
                    let minute = getnum(&rest[4..6], true);
                    match (hour, minute) {
                        (Some((h, _)), Some((m, _))) => {
                            if h > 24 {
                                range_error = Some("time zone offset hour");
                            }
                            if m > 60 {
                                range_error = Some("time zone offset minute");
                            }
                            if matches!(rest[0], b'+' | b'-') || range_error.is_some() {
                                Some(&rest[6..])
                            } else {
                                None
                            }
                        }
                        _ => None,
                    }
                }
            }
        };
        if let Some(what) = range_error {
            return Err(range(what));
        }
        match ok {
            Some(after) => rest = after,
            None => return Err(bad(elem, hold)),
        }
    }
    if !rest.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            quote(value),
            quote(&go_lossy(rest))
        ));
    }
    if day < 1 || day > days_in(month, year) {
        return Err(range("day"));
    }
    Ok(())
}
