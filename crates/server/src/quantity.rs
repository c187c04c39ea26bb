//! `resource.Quantity` as kube-apiserver decodes and re-encodes it: a port of
//! `k8s.io/apimachinery/pkg/api/resource` (`quantity.go` `ParseQuantity`,
//! `CanonicalizeBytes` and `String`, `suffix.go`, `amount.go`, `math.go`).
//!
//! Every quantity kube decodes is written back in canonical form (`"0.5"` ->
//! `"500m"`, `"1024Mi"` -> `"1Gi"`, `"1.5Gi"` -> `"1536Mi"`), except that a
//! string kube's fast parser already considers canonical is echoed verbatim
//! (`"100m"`, `"1e3"`, and quirks such as `"+1"` or `"1.500"`).
//!
//! Values are held exactly as a decimal digit string and a base-10 exponent,
//! so arbitrarily large DecimalSI/DecimalExponent values behave like Go's
//! `inf.Dec` path, while the int64 fast path's observable effects (the
//! verbatim string reuse) are reproduced separately.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

/// The regular expression kube names in its format error (`splitREString`).
pub const SPLIT_RE: &str = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

/// The three errors `ParseQuantity` can return, with upstream's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// `ErrFormatWrong`.
    #[error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
    FormatWrong,
    /// `ErrNumeric`.
    #[error("unable to parse numeric part of quantity")]
    Numeric,
    /// `ErrSuffix`.
    #[error("unable to parse quantity's suffix")]
    Suffix,
}

/// How a quantity is serialized (`resource.Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `12e6`.
    DecimalExponent,
    /// `12Mi` (12 * 2^20).
    BinarySI,
    /// `12M` (12 * 10^6).
    DecimalSI,
}

/// Largest magnitude a BinarySI quantity may hold (`maxAllowed`, 2^63-1).
const MAX_ALLOWED: &[u8] = b"9223372036854775807";

/// A parsed quantity: its exact value, its format, and the input string when
/// kube would re-emit that string verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity {
    negative: bool,
    /// Magnitude digits (ASCII) without leading or trailing zeros; empty for zero.
    digits: Vec<u8>,
    /// The value is `digits * 10^exponent`; 0 for zero.
    exponent: i64,
    format: Format,
    /// `Quantity.s` as `ParseQuantity` leaves it.
    cached: Option<String>,
}

/// Parses `input` exactly as `resource.ParseQuantity` and returns what kube
/// serializes it as (`Quantity.String()` / `MarshalJSON`). No whitespace is
/// trimmed here (see [`canonicalize_value`] for JSON decoding).
pub fn canonicalize(input: &str) -> Result<String, QuantityError> {
    Ok(Quantity::parse(input)?.to_string())
}

/// A JSON value decoded into a `resource.Quantity` field and re-encoded, as
/// `Quantity.UnmarshalJSON` + `MarshalJSON` do: strings are trimmed of
/// surrounding whitespace then parsed; numbers are parsed from their text;
/// `null` becomes the zero quantity `"0"`; booleans, objects and arrays fail
/// with the format error (their raw JSON never matches the syntax).
///
/// serde_json keeps no number text, so a non-integral or exponent-written
/// JSON number (`1e3`, `0.5`) is parsed from its shortest decimal form: the
/// value is exact, but kube would keep `1e3` in DecimalExponent form where
/// this gives `1k`.
pub fn canonicalize_value(value: &Value) -> Result<Value, QuantityError> {
    let text = match value {
        Value::String(text) => return canonicalize(text.trim()).map(Value::String),
        Value::Null => return Ok(Value::String("0".to_string())),
        Value::Number(number) => {
            if let Some(int) = number.as_i64() {
                int.to_string()
            } else if let Some(uint) = number.as_u64() {
                uint.to_string()
            } else {
                match number.as_f64() {
                    Some(float) if float.is_finite() => format!("{float}"),
                    _ => return Err(QuantityError::FormatWrong),
                }
            }
        }
        Value::Bool(_) | Value::Array(_) | Value::Object(_) => {
            return Err(QuantityError::FormatWrong)
        }
    };
    canonicalize(&text).map(Value::String)
}

/// What `parseQuantityString` splits a quantity into.
struct Split<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// `parseQuantityString`: the fast scanner, byte for byte.
fn parse_quantity_string(input: &str) -> Result<Split<'_>, QuantityError> {
    let bytes = input.as_bytes();
    let end = bytes.len();
    let mut positive = true;
    let mut pos = 0;

    if pos < end {
        match bytes[0] {
            b'-' => {
                positive = false;
                pos += 1;
            }
            b'+' => pos += 1,
            _ => {}
        }
    }

    // strip leading zeros
    loop {
        if pos >= end {
            return Ok(Split {
                positive,
                value: "0",
                num: "0",
                denom: "",
                suffix: "",
            });
        }
        if bytes[pos] != b'0' {
            break;
        }
        pos += 1;
    }

    // the numerator
    let start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok(Split {
            positive,
            value: input,
            num: &input[start..],
            denom: "",
            suffix: "",
        });
    }
    let num = if pos == start {
        "0"
    } else {
        &input[start..pos]
    };

    // the denominator
    let mut denom = "";
    if bytes[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        if pos >= end {
            return Ok(Split {
                positive,
                value: input,
                num,
                denom: &input[start..],
                suffix: "",
            });
        }
        denom = &input[start..pos];
    }
    let value = &input[..pos];

    // the suffix: letters, an optional sign, digits
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && (bytes[pos] == b'-' || bytes[pos] == b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok(Split {
            positive,
            value,
            num,
            denom,
            suffix: &input[suffix_start..],
        });
    }
    Err(QuantityError::FormatWrong)
}

/// `quantitySuffixer.interpret`: (base, exponent, format).
fn interpret_suffix(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = |exponent| Some((10, exponent, Format::DecimalSI));
    let binary = |exponent| Some((2, exponent, Format::BinarySI));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ if suffix.len() > 1 && (suffix.starts_with('e') || suffix.starts_with('E')) => {
            // strconv.ParseInt(s[1:], 10, 64), then int32(parsed).
            parse_go_int64(&suffix[1..]).map(|parsed| (10, parsed as i32, Format::DecimalExponent))
        }
        _ => None,
    }
}

/// `strconv.ParseInt(s, 10, 64)`: optional sign, at least one digit, in range.
fn parse_go_int64(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut magnitude: u64 = 0;
    for b in digits.bytes() {
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(b - b'0'))?;
    }
    if negative {
        if magnitude <= i64::MAX as u64 + 1 {
            Some((magnitude as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Decimal suffix for a base-10 exponent (`decSuffixes`), if any.
fn decimal_suffix(exponent: i32) -> Option<&'static str> {
    Some(match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => return None,
    })
}

/// Binary suffix for a power of 1024 (`binSuffixes`, keyed by 2^(10*power)).
fn binary_suffix(power: u32) -> &'static str {
    match power {
        1 => "Ki",
        2 => "Mi",
        3 => "Gi",
        4 => "Ti",
        5 => "Pi",
        6 => "Ei",
        // (2, 0) is only in decSuffixes: BinarySI emits no suffix, like 2^70+.
        _ => "",
    }
}

/// Multiplies ASCII decimal digits by `factor` in place.
fn mul_small(digits: &mut Vec<u8>, factor: u64) {
    let mut carry: u128 = 0;
    for digit in digits.iter_mut().rev() {
        let product = u128::from(*digit - b'0') * u128::from(factor) + carry;
        *digit = b'0' + (product % 10) as u8;
        carry = product / 10;
    }
    let mut prefix = Vec::new();
    while carry > 0 {
        prefix.push(b'0' + (carry % 10) as u8);
        carry /= 10;
    }
    if !prefix.is_empty() {
        prefix.reverse();
        prefix.extend_from_slice(digits);
        *digits = prefix;
    }
}

/// Adds one to ASCII decimal digits in place.
fn increment(digits: &mut Vec<u8>) {
    for digit in digits.iter_mut().rev() {
        if *digit == b'9' {
            *digit = b'0';
        } else {
            *digit += 1;
            return;
        }
    }
    digits.insert(0, b'1');
}

/// Compares two normalized magnitudes `a * 10^ea` and `b * 10^eb`.
fn cmp_magnitude(a: &[u8], ea: i64, b: &[u8], eb: i64) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        (false, false) => {}
    }
    // Position of the leading digit decides first, then the digits themselves.
    let lead_a = a.len() as i64 + ea;
    let lead_b = b.len() as i64 + eb;
    lead_a.cmp(&lead_b).then_with(|| a.cmp(b))
}

impl Quantity {
    /// A quantity from digits and exponent, normalized; never cached.
    fn from_parts(negative: bool, digits: &[u8], exponent: i64, format: Format) -> Self {
        let start = digits
            .iter()
            .position(|&d| d != b'0')
            .unwrap_or(digits.len());
        let digits = &digits[start..];
        let end = digits
            .iter()
            .rposition(|&d| d != b'0')
            .map_or(0, |last| last + 1);
        if end == 0 {
            return Quantity {
                negative: false,
                digits: Vec::new(),
                exponent: 0,
                format,
                cached: None,
            };
        }
        let trailing = (digits.len() - end) as i64;
        Quantity {
            negative,
            digits: digits[..end].to_vec(),
            exponent: exponent + trailing,
            format,
            cached: None,
        }
    }

    /// `value * 10^scale` in `format` (Go's `int64Amount`), never cached.
    pub fn from_scaled(value: i64, scale: i32, format: Format) -> Self {
        let text = value.unsigned_abs().to_string();
        Self::from_parts(value < 0, text.as_bytes(), i64::from(scale), format)
    }

    /// `resource.ParseQuantity`.
    pub fn parse(input: &str) -> Result<Self, QuantityError> {
        if input.is_empty() {
            return Err(QuantityError::FormatWrong);
        }
        if input == "0" {
            return Ok(Quantity {
                negative: false,
                digits: Vec::new(),
                exponent: 0,
                format: Format::DecimalSI,
                cached: Some(input.to_string()),
            });
        }

        let split = parse_quantity_string(input)?;
        let (base, exponent, format) =
            interpret_suffix(split.suffix).ok_or(QuantityError::Suffix)?;
        let (num, denom) = (split.num, split.denom);
        let digits_len = i32::try_from(num.len() + denom.len()).unwrap_or(i32::MAX);

        // The int64 fast path, which alone may keep the input string.
        let (mut scale, precision, mantissa) = match format {
            Format::DecimalExponent | Format::DecimalSI => (exponent, 18 - digits_len, 1_i64),
            Format::BinarySI if exponent >= 0 && denom.is_empty() => {
                let num_len = i32::try_from(num.len()).unwrap_or(i32::MAX);
                (0, 15 - num_len - exponent * 3 / 10 - 1, 1_i64 << exponent)
            }
            Format::BinarySI => (0, -1, 1),
        };
        if precision >= 0 {
            let denom_len = i32::try_from(denom.len()).unwrap_or(i32::MAX);
            scale = scale.wrapping_sub(denom_len);
            if scale >= -9 {
                // At most 18 digits: always fits an int64.
                let value = num
                    .bytes()
                    .chain(denom.bytes())
                    .fold(0_i64, |acc, b| acc * 10 + i64::from(b - b'0'));
                if let Some(result) = value.checked_mul(mantissa) {
                    let keep = match format {
                        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
                        _ => {
                            let shifted = format!("{num}{denom}");
                            scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
                        }
                    };
                    let mut quantity = Self::from_scaled(
                        if split.positive { result } else { -result },
                        scale,
                        format,
                    );
                    if keep {
                        quantity.cached = Some(input.to_string());
                    }
                    return Ok(quantity);
                }
            }
        }

        // The inf.Dec path: SetString(value) needs at least one digit.
        let mut digits: Vec<u8> = split.value.bytes().filter(u8::is_ascii_digit).collect();
        if digits.is_empty() {
            return Err(QuantityError::Numeric);
        }
        let negative = split.value.starts_with('-');
        let denom_len = i32::try_from(denom.len()).unwrap_or(i32::MAX);
        // inf.Dec scale: digits after the point, minus the decimal exponent.
        let mut inf_scale = denom_len;
        if base == 10 {
            inf_scale = inf_scale.wrapping_add(exponent.wrapping_neg());
        } else {
            mul_small(&mut digits, 1_u64 << exponent);
        }
        let start = digits
            .iter()
            .position(|&d| d != b'0')
            .unwrap_or(digits.len());
        digits.drain(..start);
        if digits.is_empty() {
            return Ok(Self::from_parts(false, &[], 0, format));
        }

        // Round non-zero values up (away from zero) to nano precision.
        let mut exp10 = -i64::from(inf_scale);
        if inf_scale > 9 {
            let drop = (inf_scale - 9) as usize;
            if drop >= digits.len() {
                digits = vec![b'1'];
            } else {
                let round_up = digits[digits.len() - drop..].iter().any(|&d| d != b'0');
                digits.truncate(digits.len() - drop);
                if round_up {
                    increment(&mut digits);
                }
            }
            exp10 = -9;
        }
        let mut quantity = Self::from_parts(negative, &digits, exp10, format);

        if format == Format::BinarySI {
            let max = Self::from_parts(false, MAX_ALLOWED, 0, format);
            if cmp_magnitude(
                &quantity.digits,
                quantity.exponent,
                &max.digits,
                max.exponent,
            ) == Ordering::Greater
            {
                quantity.digits = max.digits;
                quantity.exponent = max.exponent;
            }
            if cmp_magnitude(&quantity.digits, quantity.exponent, b"1", 0) == Ordering::Less {
                // 0 < |x| < 1: avoids rounding and hopefully confusion, too.
                quantity.format = Format::DecimalSI;
            }
        }
        Ok(quantity)
    }

    pub fn format(&self) -> Format {
        self.format
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// -1, 0 or 1.
    pub fn sign(&self) -> i32 {
        match (self.digits.is_empty(), self.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        }
    }

    /// `Quantity.Cmp`: compares values, ignoring format.
    pub fn cmp_value(&self, other: &Quantity) -> Ordering {
        match self.sign().cmp(&other.sign()) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        let magnitude = cmp_magnitude(&self.digits, self.exponent, &other.digits, other.exponent);
        if self.negative {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    /// Whether the value has no fractional part.
    fn is_integral(&self) -> bool {
        self.exponent >= 0
    }

    /// The value as an integer, if integral and it fits.
    fn as_u64_magnitude(&self) -> Option<u64> {
        if !self.is_integral() {
            return None;
        }
        let mut value: u64 = 0;
        for &digit in &self.digits {
            value = value
                .checked_mul(10)?
                .checked_add(u64::from(digit - b'0'))?;
        }
        for _ in 0..self.exponent {
            value = value.checked_mul(10)?;
        }
        Some(value)
    }

    /// `Quantity.CanonicalizeBytes`: number and suffix.
    fn canonicalize_bytes(&self) -> (String, String) {
        if self.is_zero() {
            return ("0".to_string(), String::new());
        }
        let sign = if self.negative { "-" } else { "" };
        let mut format = self.format;
        let mut binary_value = None;
        if format == Format::BinarySI {
            // |x| < 1024 avoids rounding; a fractional value would lose
            // precision; both are shown as DecimalSI.
            let below_1024 =
                cmp_magnitude(&self.digits, self.exponent, b"1024", 0) == Ordering::Less;
            binary_value = if below_1024 {
                None
            } else {
                self.as_u64_magnitude()
            };
            if binary_value.is_none() {
                format = Format::DecimalSI;
            }
        }
        match (format, binary_value) {
            (Format::BinarySI, Some(mut value)) => {
                let mut power = 0;
                while value >= 1024 && value % 1024 == 0 {
                    value /= 1024;
                    power += 1;
                }
                (format!("{sign}{value}"), binary_suffix(power).to_string())
            }
            _ => {
                // AsCanonicalBytes: factors of ten into the exponent, then down to a multiple of 3.
                let mut exponent = self.exponent as i32;
                let mut number = String::with_capacity(self.digits.len() + 3);
                number.push_str(sign);
                number.extend(self.digits.iter().map(|&d| char::from(d)));
                while exponent % 3 != 0 {
                    number.push('0');
                    exponent = exponent.wrapping_sub(1);
                }
                let suffix = match format {
                    Format::DecimalExponent if exponent == 0 => String::new(),
                    Format::DecimalExponent => format!("e{exponent}"),
                    _ => decimal_suffix(exponent).unwrap_or("").to_string(),
                };
                (number, suffix)
            }
        }
    }
}

/// `Quantity.String()`: the verbatim input when kube kept it, else the canonical form.
impl fmt::Display for Quantity {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(cached) = &self.cached {
            return formatter.write_str(cached);
        }
        let (number, suffix) = self.canonicalize_bytes();
        formatter.write_str(&number)?;
        formatter.write_str(&suffix)
    }
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        Quantity::parse(input)
    }
}

#[cfg(test)]
mod tests {
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
}
