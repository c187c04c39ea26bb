use super::*;

use serde_json::json;
use Format::{BinarySI, DecimalExponent, DecimalSI};

/// Upstream's `decQuantity(i, exponent, format)`.
fn dec(value: i64, exponent: i32, format: Format) -> Quantity {
    Quantity::from_scaled(value, exponent, format)
}

fn max_allowed(format: Format) -> Quantity {
    Quantity::from_parts(false, MAX_ALLOWED, 0, format)
}

#[test]
fn brief_examples() {
    for (input, expect) in [
        ("0.5", "500m"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("1000", "1k"),
        ("0.1", "100m"),
        ("1e3", "1e3"),
        ("100m", "100m"),
        ("2", "2"),
        ("128Mi", "128Mi"),
        ("500M", "500M"),
        ("1.5", "1500m"),
    ] {
        assert_eq!(canonicalize(input).as_deref(), Ok(expect), "{input}");
    }
}

/// `TestQuantityParse`: values and formats, plain, negated and with `+`.
#[test]
fn upstream_parse_table() {
    let table: Vec<(&str, Quantity)> = vec![
        ("0", dec(0, 0, DecimalSI)),
        ("0n", dec(0, 0, DecimalSI)),
        ("0u", dec(0, 0, DecimalSI)),
        ("0m", dec(0, 0, DecimalSI)),
        ("0Ki", dec(0, 0, BinarySI)),
        ("0k", dec(0, 0, DecimalSI)),
        ("0Mi", dec(0, 0, BinarySI)),
        ("0M", dec(0, 0, DecimalSI)),
        ("0Gi", dec(0, 0, BinarySI)),
        ("0G", dec(0, 0, DecimalSI)),
        ("0Ti", dec(0, 0, BinarySI)),
        ("0T", dec(0, 0, DecimalSI)),
        ("1", dec(1, 0, DecimalSI)),
        ("1Ki", dec(1024, 0, BinarySI)),
        ("8Ki", dec(8 * 1024, 0, BinarySI)),
        ("7Mi", dec(7 * 1024 * 1024, 0, BinarySI)),
        ("6Gi", dec(6 * 1024 * 1024 * 1024, 0, BinarySI)),
        ("5Ti", dec(5 * 1024 * 1024 * 1024 * 1024, 0, BinarySI)),
        (
            "4Pi",
            dec(4 * 1024 * 1024 * 1024 * 1024 * 1024, 0, BinarySI),
        ),
        (
            "3Ei",
            dec(3 * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0, BinarySI),
        ),
        ("10Ti", dec(10 * 1024 * 1024 * 1024 * 1024, 0, BinarySI)),
        ("100Ti", dec(100 * 1024 * 1024 * 1024 * 1024, 0, BinarySI)),
        ("5n", dec(5, -9, DecimalSI)),
        ("4u", dec(4, -6, DecimalSI)),
        ("3m", dec(3, -3, DecimalSI)),
        ("9", dec(9, 0, DecimalSI)),
        ("8k", dec(8, 3, DecimalSI)),
        ("50k", dec(5, 4, DecimalSI)),
        ("7M", dec(7, 6, DecimalSI)),
        ("6G", dec(6, 9, DecimalSI)),
        ("5T", dec(5, 12, DecimalSI)),
        ("40T", dec(4, 13, DecimalSI)),
        ("300T", dec(3, 14, DecimalSI)),
        ("2P", dec(2, 15, DecimalSI)),
        ("1E", dec(1, 18, DecimalSI)),
        ("1E-3", dec(1, -3, DecimalExponent)),
        ("1e3", dec(1, 3, DecimalExponent)),
        ("1E6", dec(1, 6, DecimalExponent)),
        ("1e9", dec(1, 9, DecimalExponent)),
        ("1E12", dec(1, 12, DecimalExponent)),
        ("1e15", dec(1, 15, DecimalExponent)),
        ("1E18", dec(1, 18, DecimalExponent)),
        ("1e14", dec(1, 14, DecimalExponent)),
        ("1e13", dec(1, 13, DecimalExponent)),
        ("100.035k", dec(100035, 0, DecimalSI)),
        ("0.001", dec(1, -3, DecimalSI)),
        ("0.0005k", dec(5, -1, DecimalSI)),
        ("0.005", dec(5, -3, DecimalSI)),
        ("0.05", dec(5, -2, DecimalSI)),
        ("0.5", dec(5, -1, DecimalSI)),
        ("0.00050k", dec(5, -1, DecimalSI)),
        ("0.00500", dec(5, -3, DecimalSI)),
        ("0.05000", dec(5, -2, DecimalSI)),
        ("0.50000", dec(5, -1, DecimalSI)),
        ("0.5e0", dec(5, -1, DecimalExponent)),
        ("0.5e-1", dec(5, -2, DecimalExponent)),
        ("0.5e-2", dec(5, -3, DecimalExponent)),
        ("10.035M", dec(10035, 3, DecimalSI)),
        ("1.2e3", dec(12, 2, DecimalExponent)),
        ("1.3E+6", dec(13, 5, DecimalExponent)),
        ("1.40e9", dec(14, 8, DecimalExponent)),
        ("1.53E12", dec(153, 10, DecimalExponent)),
        ("1.6e15", dec(16, 14, DecimalExponent)),
        ("1.7E18", dec(17, 17, DecimalExponent)),
        ("9.01", dec(901, -2, DecimalSI)),
        ("8.1k", dec(81, 2, DecimalSI)),
        ("7.123456M", dec(7123456, 0, DecimalSI)),
        ("6.987654321G", dec(6987654321, 0, DecimalSI)),
        ("5.444T", dec(5444, 9, DecimalSI)),
        ("40.1T", dec(401, 11, DecimalSI)),
        ("300.2T", dec(3002, 11, DecimalSI)),
        ("2.5P", dec(25, 14, DecimalSI)),
        ("1.01E", dec(101, 16, DecimalSI)),
        ("3.001n", dec(4, -9, DecimalSI)),
        ("1.1E-9", dec(2, -9, DecimalExponent)),
        ("0.0000000001", dec(1, -9, DecimalSI)),
        ("0.0000000005", dec(1, -9, DecimalSI)),
        ("0.00000000050", dec(1, -9, DecimalSI)),
        ("0.5e-9", dec(1, -9, DecimalExponent)),
        ("0.9n", dec(1, -9, DecimalSI)),
        ("0.00000012345", dec(124, -9, DecimalSI)),
        ("0.00000012354", dec(124, -9, DecimalSI)),
        ("9Ei", max_allowed(BinarySI)),
        ("9223372036854775807Ki", max_allowed(BinarySI)),
        ("12E", dec(12, 18, DecimalSI)),
        ("100.035Ki", dec(10243584, -2, BinarySI)),
        ("0.5Mi", dec(512 * 1024, 0, BinarySI)),
        ("0.05Gi", dec(536870912, -1, BinarySI)),
        ("0.025Ti", dec(274877906944, -1, BinarySI)),
        ("0.000000000001Ki", dec(2, -9, DecimalSI)),
        (".001", dec(1, -3, DecimalSI)),
        (".0001k", dec(100, -3, DecimalSI)),
        ("1.", dec(1, 0, DecimalSI)),
        ("1.G", dec(1, 9, DecimalSI)),
    ];
    for (input, expect) in &table {
        for (prefix, negate) in [("", false), ("-", true), ("+", false)] {
            let text = format!("{prefix}{input}");
            let got = Quantity::parse(&text).unwrap_or_else(|err| panic!("{text}: {err}"));
            let mut want = expect.clone();
            if negate && !want.is_zero() {
                want.negative = true;
            }
            assert_eq!(got.cmp_value(&want), Ordering::Equal, "{text}: got {got:?}");
            assert_eq!(got.format(), want.format(), "{text}");
        }
    }
}

#[test]
fn upstream_invalid_table() {
    for (input, err) in [
        ("", QuantityError::FormatWrong),
        ("1.1.M", QuantityError::FormatWrong),
        ("1+1.0M", QuantityError::FormatWrong),
        ("0.1mi", QuantityError::Suffix),
        ("0.1am", QuantityError::FormatWrong),
        ("aoeu", QuantityError::FormatWrong),
        (".5i", QuantityError::Suffix),
        ("1i", QuantityError::Suffix),
        ("-3.01i", QuantityError::Suffix),
        ("-3.01e-", QuantityError::Suffix),
        (" 1", QuantityError::FormatWrong),
        ("1 ", QuantityError::FormatWrong),
        ("1ki", QuantityError::Suffix),
        ("1e", QuantityError::Suffix),
        ("25%", QuantityError::FormatWrong),
        ("1e99999999999999999999", QuantityError::Suffix),
        (".e-20", QuantityError::Numeric),
        ("-e-20", QuantityError::Numeric),
    ] {
        assert_eq!(Quantity::parse(input), Err(err), "{input:?}");
    }
    assert_eq!(
        QuantityError::FormatWrong.to_string(),
        format!("quantities must match the regular expression '{SPLIT_RE}'")
    );
}

/// `TestQuantityString`: canonical forms, verbatim reuse of canonical input,
/// alternates, and negatives.
#[test]
fn upstream_string_table() {
    let table: Vec<(Quantity, &str, &str)> = vec![
        (dec(1024 * 1024 * 1024, 0, BinarySI), "1Gi", "1024Mi"),
        (dec(300 * 1024 * 1024, 0, BinarySI), "300Mi", "307200Ki"),
        (dec(6 * 1024, 0, BinarySI), "6Ki", ""),
        (
            dec(1001 * 1024 * 1024 * 1024, 0, BinarySI),
            "1001Gi",
            "1025024Mi",
        ),
        (dec(1024 * 1024 * 1024 * 1024, 0, BinarySI), "1Ti", "1024Gi"),
        (dec(5, 0, BinarySI), "5", "5000m"),
        (dec(500, -3, BinarySI), "500m", "0.5"),
        (dec(1, 9, DecimalSI), "1G", "1000M"),
        (dec(1000, 6, DecimalSI), "1G", "0.001T"),
        (dec(1000000, 3, DecimalSI), "1G", ""),
        (dec(1000000000, 0, DecimalSI), "1G", ""),
        (dec(1, -3, DecimalSI), "1m", "1000u"),
        (dec(80, -3, DecimalSI), "80m", ""),
        (dec(1080, -3, DecimalSI), "1080m", "1.08"),
        (dec(108, -2, DecimalSI), "1080m", "1080000000n"),
        (dec(10800, -4, DecimalSI), "1080m", ""),
        (dec(300, 6, DecimalSI), "300M", ""),
        (dec(1, 12, DecimalSI), "1T", ""),
        (dec(1234567, 6, DecimalSI), "1234567M", ""),
        (dec(1234567, -3, BinarySI), "1234567m", ""),
        (dec(3, 3, DecimalSI), "3k", ""),
        (dec(1025, 0, BinarySI), "1025", ""),
        (dec(0, 0, DecimalSI), "0", ""),
        (dec(0, 0, BinarySI), "0", ""),
        (dec(1, 9, DecimalExponent), "1e9", ".001e12"),
        (dec(1, -3, DecimalExponent), "1e-3", "0.001e0"),
        (dec(1, -9, DecimalExponent), "1e-9", "1000e-12"),
        (dec(80, -3, DecimalExponent), "80e-3", ""),
        (dec(300, 6, DecimalExponent), "300e6", ""),
        (dec(1, 12, DecimalExponent), "1e12", ""),
        (dec(1, 3, DecimalExponent), "1e3", ""),
        (dec(3, 3, DecimalExponent), "3e3", ""),
        (dec(3, 3, DecimalSI), "3k", ""),
        (dec(0, 0, DecimalExponent), "0", "00"),
        (dec(1, -9, DecimalSI), "1n", ""),
        (dec(80, -9, DecimalSI), "80n", ""),
        (dec(1080, -9, DecimalSI), "1080n", ""),
        (dec(108, -8, DecimalSI), "1080n", ""),
        (dec(10800, -10, DecimalSI), "1080n", ""),
        (dec(1, -6, DecimalSI), "1u", ""),
        (dec(80, -6, DecimalSI), "80u", ""),
        (dec(1080, -6, DecimalSI), "1080u", ""),
    ];
    for (quantity, expect, alternate) in &table {
        assert_eq!(quantity.to_string(), *expect, "{quantity:?}");
        let parsed = Quantity::parse(expect).unwrap_or_else(|err| panic!("{expect}: {err}"));
        assert_eq!(
            parsed.cached.as_deref(),
            Some(*expect),
            "did not copy canonical string on parse"
        );
        if !alternate.is_empty() {
            let parsed =
                Quantity::parse(alternate).unwrap_or_else(|err| panic!("{alternate}: {err}"));
            assert_eq!(parsed.cached, None, "{alternate}: unexpected nested string");
            assert_eq!(parsed.to_string(), *expect, "{alternate}");
        }
        if !quantity.is_zero() {
            let mut negative = quantity.clone();
            negative.negative = true;
            assert_eq!(negative.to_string(), format!("-{expect}"));
        }
    }
}

/// `TestQuantityParseEmit`.
#[test]
fn upstream_parse_emit_table() {
    for (input, expect) in [
        ("1Ki", "1Ki"),
        ("1Mi", "1Mi"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
    ] {
        assert_eq!(canonicalize(input).as_deref(), Ok(expect), "{input}");
        assert_eq!(
            canonicalize(&format!("-{input}")),
            Ok(format!("-{expect}")),
            "-{input}"
        );
    }
}

#[test]
fn binary_fallbacks_and_limits() {
    for (input, expect) in [
        // below 1024 or fractional: DecimalSI
        ("0.5Ki", "512"),
        ("1.5Ki", "1536"),
        ("1.0001Ki", "1024102400u"),
        ("0.5Gi", "512Mi"),
        ("1.1Mi", "1153433600m"),
        ("1000Ki", "1000Ki"),
        ("1032Ki", "1032Ki"),
        // capped at 2^63-1
        ("9Ei", "9223372036854775807"),
        ("8Ei", "9223372036854775807"),
        ("7Ei", "7Ei"),
        ("7.5Ei", "7680Pi"),
        ("-9Ei", "-9223372036854775807"),
        ("100000000000000000000Ki", "9223372036854775807"),
        // DecimalSI is not capped
        ("99999999999999999999", "99999999999999999999"),
        ("12E", "12E"),
        ("12000E", "12"),
        ("1e21", "1e21"),
        ("1e100", "10e99"),
        (
            "123456789012345678901234567890m",
            "123456789012345678901234567890m",
        ),
        ("1.5e3", "1500"),
        ("1.5E+3", "1500"),
        ("15e-1", "1500e-3"),
        ("0.0000000001e0", "1e-9"),
        ("1e-1000", "1e-9"),
        ("-1e-1000", "-1e-9"),
        ("0.000000000000000000000000000001", "1n"),
        ("1.0000000001", "1000000001n"),
        ("1.00000000001", "1000000001n"),
    ] {
        assert_eq!(canonicalize(input).as_deref(), Ok(expect), "{input}");
    }
}

#[test]
fn verbatim_reuse_quirks() {
    for (input, expect) in [
        ("+1", "+1"),
        ("01", "01"),
        ("1.500", "1.500"),
        ("+1Gi", "+1Gi"),
        ("-5", "-5"),
        ("1.000", "1"),
        ("1.50", "1500m"),
        ("1.0", "1"),
        ("0.5", "500m"),
        ("-0", "0"),
        ("-", "0"),
        ("+", "0"),
        (".", "0"),
        ("Ki", "0"),
        ("m", "0"),
        ("e5", "0"),
        ("000", "0"),
        ("0.000", "0"),
        ("1024Ki", "1Mi"),
        ("1023Ki", "1023Ki"),
        ("1000m", "1"),
        ("10m", "10m"),
    ] {
        assert_eq!(canonicalize(input).as_deref(), Ok(expect), "{input}");
    }
}

#[test]
fn json_values() {
    let cases = [
        (json!("0.5"), json!("500m")),
        (json!(" 1Gi "), json!("1Gi")),
        (json!(1), json!("1")),
        (json!(1000), json!("1k")),
        (json!(-2), json!("-2")),
        (json!(0.5), json!("500m")),
        (json!(1.5), json!("1500m")),
        (json!(u64::MAX), json!("18446744073709551615")),
        (json!(null), json!("0")),
    ];
    for (input, expect) in cases {
        assert_eq!(canonicalize_value(&input), Ok(expect), "{input}");
    }
    for input in [
        json!(true),
        json!({"a": 1}),
        json!([1]),
        json!("1 Gi"),
        json!(""),
    ] {
        assert_eq!(
            canonicalize_value(&input),
            Err(QuantityError::FormatWrong),
            "{input}"
        );
    }
}

#[test]
fn compares_values() {
    let parse = |text| Quantity::parse(text).expect("valid");
    assert_eq!(parse("1Gi").cmp_value(&parse("1024Mi")), Ordering::Equal);
    assert_eq!(parse("100m").cmp_value(&parse("50m")), Ordering::Greater);
    assert_eq!(
        parse("10000T").cmp_value(&parse("100Gi")),
        Ordering::Greater
    );
    assert_eq!(parse("-1").cmp_value(&parse("-2")), Ordering::Greater);
    assert_eq!(parse("0").cmp_value(&parse("-0.5")), Ordering::Greater);
    assert_eq!(parse("0.5").cmp_value(&parse("500m")), Ordering::Equal);
}

#[test]
fn scaled_values_round_up_as_go() {
    let parse = |text| Quantity::parse(text).expect("valid");
    assert_eq!(parse("1500m").scaled_value(0), 2);
    assert_eq!(parse("1500m").scaled_value(3), 1500);
    assert_eq!(parse("-1500m").scaled_value(0), -1);
    assert_eq!(parse("-500m").scaled_value(0), 0);
    assert_eq!(parse("1Ki").scaled_value(0), 1024);
    assert_eq!(parse("2k").scaled_value(3), 2_000_000);
    assert_eq!(parse("0").scaled_value(3), 0);
    assert_eq!(parse("1u").scaled_value(3), 1);
    assert_eq!(parse("100E").scaled_value(3), i64::MAX);
    assert_eq!(parse("-100E").scaled_value(0), i64::MIN);
}
