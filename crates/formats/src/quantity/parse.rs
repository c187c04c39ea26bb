//! `ParseQuantity`: `parseQuantityString`, the suffix table (`suffix.go`) and
//! the normalized value it builds.

use std::cmp::Ordering;

use super::digits::{cmp_magnitude, increment, mul_small};
use super::{Format, Quantity, QuantityError, MAX_ALLOWED};

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

impl Quantity {
    /// A quantity from digits and exponent, normalized; never cached.
    pub(super) fn from_parts(negative: bool, digits: &[u8], exponent: i64, format: Format) -> Self {
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
}
