//! `CanonicalizeBytes` and `String`: the form kube writes a quantity back in.

use std::cmp::Ordering;
use std::fmt;

use super::digits::cmp_magnitude;
use super::{Format, Quantity};

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

impl Quantity {
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
