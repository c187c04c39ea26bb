//! The string formats a CRD schema may name, as kube validates them: the
//! formats apiextensions keeps (`pkg/apiserver/validation/formats.go`,
//! every other format is dropped and checks nothing) and kube-openapi's
//! `strfmt` checks of each (`pkg/validation/strfmt/default.go`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use base64::Engine;
use regex::Regex;

/// The string formats kube 1.34 validates, with go-openapi's normalization
/// (dashes removed: `date-time` is `datetime`).
const SUPPORTED: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "quantity",
    "k8sshortname",
    "k8slongname",
];

/// `StripUnsupportedFormatsPostProcessorForVersion`: the format a schema
/// node keeps for validation, or "" when kube ignores it.
pub fn kept(format: &str, schema_type: &str) -> String {
    let keep = match schema_type {
        "" | "string" => SUPPORTED.contains(&normalize(format).as_str()),
        "integer" => format == "int32" || format == "int64",
        "number" => format == "float" || format == "double",
        _ => false,
    };
    if keep {
        format.to_string()
    } else {
        String::new()
    }
}

fn normalize(format: &str) -> String {
    format.replace('-', "")
}

/// Whether `format` is a string format with a check (`Registry.ContainsName`).
pub fn is_string_format(format: &str) -> bool {
    !format.is_empty() && SUPPORTED.contains(&normalize(format).as_str())
}

/// `Registry.Validates(format, text)`.
pub fn validates(format: &str, text: &str) -> bool {
    match normalize(format).as_str() {
        "bsonobjectid" => text.len() == 24 && text.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(text),
        "email" => is_email(text),
        "hostname" => text.len() <= 255 && matches(&HOSTNAME, HOSTNAME_RE, text),
        "ipv4" => text.contains('.') && text.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => text.contains(':') && text.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(text),
        "mac" => is_mac(text),
        "uuid" => matches(&UUID, UUID_RE, text),
        "uuid3" => matches(&UUID3, UUID3_RE, text),
        "uuid4" => matches(&UUID4, UUID4_RE, text),
        "uuid5" => matches(&UUID5, UUID5_RE, text),
        "isbn" => is_isbn10(text) || is_isbn13(text),
        "isbn10" => is_isbn10(text),
        "isbn13" => is_isbn13(text),
        "creditcard" => {
            let digits: String = text.chars().filter(char::is_ascii_digit).collect();
            matches(&CREDIT_CARD, CREDIT_CARD_RE, &digits)
        }
        "ssn" => matches(&SSN, SSN_RE, text),
        "hexcolor" => matches(&HEX_COLOR, HEX_COLOR_RE, text),
        "rgbcolor" => matches(&RGB_COLOR, RGB_COLOR_RE, text),
        "byte" => base64::engine::general_purpose::STANDARD
            .decode(text)
            .is_ok(),
        "password" => true,
        "date" => is_date(text),
        "duration" => is_duration(text),
        "datetime" => is_date_time(text),
        "quantity" => crate::quantity::Quantity::parse(text).is_ok(),
        "k8sshortname" => crate::names::dns1123_label(text).is_empty(),
        "k8slongname" => crate::names::dns1123_subdomain(text).is_empty(),
        _ => true,
    }
}

static HOSTNAME: OnceLock<Option<Regex>> = OnceLock::new();
const HOSTNAME_RE: &str = r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9-\p{L}]){2,63})$";
static UUID: OnceLock<Option<Regex>> = OnceLock::new();
const UUID_RE: &str = r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$";
static UUID3: OnceLock<Option<Regex>> = OnceLock::new();
const UUID3_RE: &str = r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$";
static UUID4: OnceLock<Option<Regex>> = OnceLock::new();
const UUID4_RE: &str =
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$";
static UUID5: OnceLock<Option<Regex>> = OnceLock::new();
const UUID5_RE: &str =
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$";
static CREDIT_CARD: OnceLock<Option<Regex>> = OnceLock::new();
const CREDIT_CARD_RE: &str = r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$";
static SSN: OnceLock<Option<Regex>> = OnceLock::new();
const SSN_RE: &str = r"^\d{3}[- ]?\d{2}[- ]?\d{4}$";
static HEX_COLOR: OnceLock<Option<Regex>> = OnceLock::new();
const HEX_COLOR_RE: &str = r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$";
static RGB_COLOR: OnceLock<Option<Regex>> = OnceLock::new();
const RGB_COLOR_RE: &str = r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$";
static DURATION: OnceLock<Option<Regex>> = OnceLock::new();
const DURATION_RE: &str = r"^(\d+)\s*(ns|nanoseconds?|us|µs|microseconds?|ms|milliseconds?|s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|wk|wks|weeks?)$";

/// The compiled pattern, built on first use; a pattern that does not
/// compile (none of the constants above) matches nothing.
fn matches(cell: &OnceLock<Option<Regex>>, pattern: &str, text: &str) -> bool {
    cell.get_or_init(|| Regex::new(pattern).ok())
        .as_ref()
        .is_some_and(|regex| regex.is_match(text))
}

/// `url.ParseRequestURI`: an absolute URI or an absolute path, no spaces.
fn is_request_uri(text: &str) -> bool {
    if text.is_empty() || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    if text.starts_with('/') {
        return true;
    }
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
}

/// `mail.ParseAddress`, in the forms people write: `a@b` or `Name <a@b>`.
fn is_email(text: &str) -> bool {
    let address = match (text.rfind('<'), text.strip_suffix('>')) {
        (Some(open), Some(inner)) => &inner[open + 1..],
        _ => text,
    };
    match address.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && !address.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

/// `net.ParseCIDR`.
fn is_cidr(text: &str) -> bool {
    let Some((address, prefix)) = text.split_once('/') else {
        return false;
    };
    let Ok(address) = address.parse::<IpAddr>() else {
        return false;
    };
    let bits = if address.is_ipv4() { 32 } else { 128 };
    !prefix.is_empty()
        && prefix.bytes().all(|b| b.is_ascii_digit())
        && prefix.len() <= 3
        && prefix.parse::<u32>().is_ok_and(|prefix| prefix <= bits)
}

/// `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx…`, `xx-xx…` or `xxxx.xxxx…`.
fn is_mac(text: &str) -> bool {
    let hex =
        |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_hexdigit());
    let octets_ok = |count: usize| matches!(count, 6 | 8 | 20);
    for separator in [':', '-'] {
        let parts: Vec<&str> = text.split(separator).collect();
        if parts.len() > 1 {
            return octets_ok(parts.len()) && parts.iter().all(|part| hex(part, 2));
        }
    }
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() > 1 && octets_ok(parts.len() * 2) && parts.iter().all(|part| hex(part, 4))
}

fn is_isbn10(text: &str) -> bool {
    let clean: Vec<char> = text.chars().filter(|c| *c != '-' && *c != ' ').collect();
    if clean.len() != 10 {
        return false;
    }
    let mut sum = 0;
    for (index, c) in clean.iter().enumerate() {
        let digit = match (index, c) {
            (9, 'X') => 10,
            (_, c) => match c.to_digit(10) {
                Some(digit) => digit,
                None => return false,
            },
        };
        sum += digit * (10 - index as u32);
    }
    sum.is_multiple_of(11)
}

fn is_isbn13(text: &str) -> bool {
    let clean: Vec<u32> = text
        .chars()
        .filter(|c| *c != '-' && *c != ' ')
        .map(|c| c.to_digit(10).unwrap_or(u32::MAX))
        .collect();
    if clean.len() != 13 || clean.contains(&u32::MAX) {
        return false;
    }
    let sum: u32 = clean
        .iter()
        .enumerate()
        .map(|(index, digit)| if index % 2 == 0 { *digit } else { digit * 3 })
        .sum();
    sum.is_multiple_of(10)
}

/// `2006-01-02`, a real calendar day.
fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = &text[range];
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `strfmt.ParseDateTime`: RFC 3339 with or without fractional seconds,
/// or a local date-time without a zone.
fn is_date_time(text: &str) -> bool {
    if crate::go::time::parse_time(text).is_some() {
        return true;
    }
    // ISO8601LocalTime: 2006-01-02T15:04:05[.000…]
    let Some((date, time)) = text.split_once('T') else {
        return false;
    };
    let (clock, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let clock_ok = clock.len() == 8
        && clock.as_bytes()[2] == b':'
        && clock.as_bytes()[5] == b':'
        && [0..2, 3..5, 6..8]
            .into_iter()
            .zip([24, 60, 60])
            .all(|(range, max)| clock[range].parse::<u32>().is_ok_and(|value| value < max));
    is_date(date)
        && clock_ok
        && !fraction.is_empty()
        && fraction.bytes().all(|b| b.is_ascii_digit())
}

/// `strfmt.ParseDuration`: Go's `time.ParseDuration`, or a number and a unit
/// (`3 days`, `1w`).
fn is_duration(text: &str) -> bool {
    crate::go::time::parse_go_duration(text).is_ok() || matches(&DURATION, DURATION_RE, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_accepts_and_refuses_as_strfmt() {
        let cases: &[(&str, &str, bool)] = &[
            ("date-time", "2024-05-01T10:00:00Z", true),
            ("date-time", "2024-05-01T10:00:00.123+02:00", true),
            ("date-time", "2024-05-01T10:00:00", true),
            ("date-time", "yesterday", false),
            ("date", "2024-02-29", true),
            ("date", "2023-02-29", false),
            ("byte", "aGVsbG8=", true),
            ("byte", "not base64!", false),
            ("uuid", "123e4567-E89B-12d3-a456-426614174000", true),
            ("uuid", "123e4567", false),
            ("ipv4", "10.0.0.1", true),
            ("ipv4", "10.0.0.256", false),
            ("ipv6", "fe80::1", true),
            ("ipv6", "10.0.0.1", false),
            ("cidr", "10.0.0.0/8", true),
            ("cidr", "10.0.0.0/33", false),
            ("mac", "00:1a:2b:3c:4d:5e", true),
            ("mac", "00:1a:2b", false),
            ("hostname", "example.com", true),
            ("hostname", "-bad-.com", false),
            ("email", "a@example.com", true),
            ("email", "nobody", false),
            ("uri", "https://example.com/x", true),
            ("uri", "not a uri", false),
            ("duration", "1h30m", true),
            ("duration", "3 days", true),
            ("duration", "soon", false),
            ("quantity", "10Gi", true),
            ("quantity", "ten", false),
            ("k8s-short-name", "my-name", true),
            ("k8s-short-name", "My-Name", false),
            ("hexcolor", "#fff", true),
            ("hexcolor", "#ffff", false),
            ("isbn10", "0321751043", true),
            ("isbn13", "978-0321751041", true),
            ("isbn13", "978-0321751042", false),
            ("password", "anything", true),
        ];
        for (format, text, expected) in cases {
            assert_eq!(validates(format, text), *expected, "{format} {text:?}");
        }
    }

    #[test]
    fn unsupported_formats_are_dropped() {
        assert_eq!(kept("date-time", "string"), "date-time");
        assert_eq!(kept("color", "string"), "");
        assert_eq!(kept("int32", "integer"), "int32");
        assert_eq!(kept("int8", "integer"), "");
        assert_eq!(kept("double", "number"), "double");
        assert_eq!(kept("date", "object"), "");
    }
}
