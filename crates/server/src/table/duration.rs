//! Ages as kube-apiserver prints them: a port of
//! `k8s.io/apimachinery/pkg/util/duration` (`HumanDuration`,
//! `ShortHumanDuration`) and the printers' `translateTimestampSince`.
//!
//! Durations are signed nanoseconds, like Go's `time.Duration`.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::go::time::parse_time;

const SECOND: i64 = 1_000_000_000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;

/// `duration.HumanDuration`: ~2-3 significant figures ("5s", "3m10s", "2d1h", "2y1d").
pub fn human_duration(d: i64) -> String {
    // Go: int(d.Seconds()), a truncation toward zero.
    let seconds = d / SECOND;
    if seconds < -1 {
        return "<invalid>".into();
    } else if seconds < 0 {
        return "0s".into();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = d / MINUTE;
    if minutes < 10 {
        let s = (d / SECOND) % 60;
        if s == 0 {
            return format!("{minutes}m");
        }
        return format!("{minutes}m{s}s");
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = d / HOUR;
    if hours < 8 {
        let m = (d / MINUTE) % 60;
        if m == 0 {
            return format!("{hours}h");
        }
        format!("{hours}h{m}m")
    } else if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            return format!("{}d", hours / 24);
        }
        format!("{}d{h}h", hours / 24)
    } else if hours < 24 * 365 * 2 {
        format!("{}d", hours / 24)
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        if dy == 0 {
            return format!("{}y", hours / 24 / 365);
        }
        format!("{}y{dy}d", hours / 24 / 365)
    } else {
        format!("{}y", hours / 24 / 365)
    }
}

/// `duration.ShortHumanDuration`: one unit only ("59s", "1m", "23h", "364d", "2y").
pub fn short_human_duration(d: i64) -> String {
    let seconds = d / SECOND;
    if seconds < -1 {
        return "<invalid>".into();
    } else if seconds < 0 {
        return "0s".into();
    } else if seconds < 60 {
        return format!("{seconds}s");
    }
    let minutes = d / MINUTE;
    if minutes < 60 {
        return format!("{minutes}m");
    }
    let hours = d / HOUR;
    if hours < 24 {
        format!("{hours}h")
    } else if hours < 24 * 365 {
        format!("{}d", hours / 24)
    } else {
        format!("{}y", hours / 24 / 365)
    }
}

/// Unix nanoseconds of an RFC 3339 timestamp (`metav1.Time`, `metav1.MicroTime`).
pub fn parse_nanos(timestamp: &str) -> Option<i64> {
    let (seconds, nanos) = parse_time(timestamp)?;
    seconds.checked_mul(SECOND)?.checked_add(i64::from(nanos))
}

/// The request-time clock, in Unix nanoseconds.
pub fn now_nanos() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(elapsed) => i64::try_from(elapsed.as_nanos()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

/// `translateTimestampSince`: "<unknown>" for a missing (zero) time, else the
/// `HumanDuration` since it. `now` is the request time in Unix nanoseconds.
/// Go's zero time (year 1) and anything else outside the nanosecond range
/// (years 1678..2262) fail to parse and print as "<unknown>".
pub fn since(timestamp: Option<&str>, now: i64) -> String {
    match timestamp.filter(|t| !t.is_empty()).and_then(parse_nanos) {
        Some(at) => human_duration(now.saturating_sub(at)),
        None => "<unknown>".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;
    const DAY: i64 = 24 * HOUR;
    const YEAR: i64 = 365 * DAY;

    /// Upstream `duration_test.go` `TestHumanDuration` + `TestHumanDurationBoundaries`.
    #[test]
    fn human_duration_matches_upstream() {
        let cases: &[(i64, &str)] = &[
            (SECOND, "1s"),
            (70 * SECOND, "70s"),
            (190 * SECOND, "3m10s"),
            (70 * MINUTE, "70m"),
            (47 * HOUR, "47h"),
            (49 * HOUR, "2d1h"),
            ((8 * 24 + 2) * HOUR, "8d"),
            ((367 * 24) * HOUR, "367d"),
            ((365 * 2 * 24 + 25) * HOUR, "2y1d"),
            ((365 * 8 * 24 + 2) * HOUR, "8y"),
            (-2 * SECOND, "<invalid>"),
            (-2 * SECOND + 1, "0s"),
            (0, "0s"),
            (SECOND - MS, "0s"),
            (2 * MINUTE - MS, "119s"),
            (2 * MINUTE, "2m"),
            (2 * MINUTE + SECOND, "2m1s"),
            (10 * MINUTE - MS, "9m59s"),
            (10 * MINUTE, "10m"),
            (10 * MINUTE + SECOND, "10m"),
            (3 * HOUR - MS, "179m"),
            (3 * HOUR, "3h"),
            (3 * HOUR + MINUTE, "3h1m"),
            (8 * HOUR - MS, "7h59m"),
            (8 * HOUR, "8h"),
            (8 * HOUR + 59 * MINUTE, "8h"),
            (2 * DAY - MS, "47h"),
            (2 * DAY, "2d"),
            (2 * DAY + HOUR, "2d1h"),
            (8 * DAY - MS, "7d23h"),
            (8 * DAY, "8d"),
            (8 * DAY + 23 * HOUR, "8d"),
            (2 * YEAR - MS, "729d"),
            (2 * YEAR, "2y"),
            (2 * YEAR + 23 * HOUR, "2y"),
            (2 * YEAR + 23 * HOUR + 59 * MINUTE, "2y"),
            (2 * YEAR + DAY - MS, "2y"),
            (2 * YEAR + DAY, "2y1d"),
            (3 * YEAR, "3y"),
            (4 * YEAR, "4y"),
            (5 * YEAR, "5y"),
            (6 * YEAR, "6y"),
            (7 * YEAR, "7y"),
            (8 * YEAR - MS, "7y364d"),
            (8 * YEAR, "8y"),
            (8 * YEAR + 364 * DAY, "8y"),
            (9 * YEAR, "9y"),
        ];
        for &(d, want) in cases {
            assert_eq!(human_duration(d), want, "HumanDuration({d}ns)");
        }
    }

    /// Upstream `TestShortHumanDurationBoundaries`.
    #[test]
    fn short_human_duration_matches_upstream() {
        let cases: &[(i64, &str)] = &[
            (-2 * SECOND, "<invalid>"),
            (-2 * SECOND + 1, "0s"),
            (0, "0s"),
            (SECOND - MS, "0s"),
            (SECOND, "1s"),
            (2 * SECOND - MS, "1s"),
            (MINUTE - MS, "59s"),
            (MINUTE, "1m"),
            (2 * MINUTE - MS, "1m"),
            (HOUR - MS, "59m"),
            (HOUR, "1h"),
            (2 * HOUR - MS, "1h"),
            (DAY - MS, "23h"),
            (DAY, "1d"),
            (2 * DAY - MS, "1d"),
            (YEAR - MS, "364d"),
            (YEAR, "1y"),
            (2 * YEAR - MS, "1y"),
            (2 * YEAR, "2y"),
        ];
        for &(d, want) in cases {
            assert_eq!(short_human_duration(d), want, "ShortHumanDuration({d}ns)");
        }
    }

    #[test]
    fn since_timestamps() {
        let now = parse_nanos("2024-01-10T00:00:00Z").unwrap();
        let cases: &[(Option<&str>, &str)] = &[
            (None, "<unknown>"),
            (Some(""), "<unknown>"),
            (Some("0001-01-01T00:00:00Z"), "<unknown>"),
            (Some("garbage"), "<unknown>"),
            (Some("2024-01-09T23:59:55Z"), "5s"),
            (Some("2024-01-09T23:57:30Z"), "2m30s"),
            (Some("2024-01-09T21:00:00Z"), "3h"),
            (Some("2024-01-06T00:00:00Z"), "4d"),
            (Some("2024-01-10T00:00:01Z"), "0s"),
            (Some("2024-01-10T00:00:05Z"), "<invalid>"),
            (Some("2024-01-09T23:59:59.500000Z"), "0s"),
        ];
        for &(ts, want) in cases {
            assert_eq!(since(ts, now), want, "since({ts:?})");
        }
    }
}
