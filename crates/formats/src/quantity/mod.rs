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

mod arith;
mod digits;
mod encode;
mod parse;
#[cfg(test)]
mod tests;

use std::cmp::Ordering;

use serde_json::Value;

use digits::cmp_magnitude;

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

impl Quantity {
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

    /// `Quantity.ScaledValue(-scale)` rounded up as Go does: `value * 10^scale`,
    /// the smallest integer not below it, saturating at the `i64` bounds.
    /// `Value()` is `scaled_value(0)`, `MilliValue()` is `scaled_value(3)`.
    pub fn scaled_value(&self, scale: i64) -> i64 {
        let exponent = self.exponent.saturating_add(scale);
        let saturated = if self.negative { i64::MIN } else { i64::MAX };
        let (whole, fraction): (&[u8], &[u8]) = if exponent >= 0 {
            (&self.digits, &[])
        } else {
            let split = self
                .digits
                .len()
                .saturating_sub(exponent.unsigned_abs() as usize);
            self.digits.split_at(split)
        };
        let mut magnitude: i128 = 0;
        for &digit in whole {
            magnitude = magnitude * 10 + i128::from(digit - b'0');
            if magnitude > i128::from(i64::MAX) {
                return saturated;
            }
        }
        for _ in 0..exponent.max(0) {
            magnitude *= 10;
            if magnitude > i128::from(i64::MAX) {
                return saturated;
            }
        }
        let rounded_up = fraction.iter().any(|&digit| digit != b'0');
        let value = if self.negative {
            -magnitude
        } else {
            magnitude + i128::from(rounded_up)
        };
        i64::try_from(value).unwrap_or(saturated)
    }

    /// `Quantity.AsApproximateFloat64`: the value as the nearest `f64`
    /// (infinite beyond its range).
    pub fn as_approximate_f64(&self) -> f64 {
        let digits = std::str::from_utf8(&self.digits).unwrap_or("0");
        let text = format!(
            "{}{}e{}",
            if self.negative { "-" } else { "" },
            if digits.is_empty() { "0" } else { digits },
            self.exponent
        );
        text.parse().unwrap_or(0.0)
    }

    /// `Quantity.AsInt64`: the value when it is whole and fits an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        let value = self.scaled_value(0);
        Quantity::from_count(value)
            .cmp_value(self)
            .is_eq()
            .then_some(value)
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
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        Quantity::parse(input)
    }
}
