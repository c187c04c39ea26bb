//! Exact addition on quantities (`quantity.go` `Add`, `Sub`, `Neg`,
//! `RoundUp`), as the quota code (`pkg/quota/v1/resources.go`) sums usage.
//! The result's format follows Go: the receiver's, unless the receiver is
//! zero (then the argument's); the result is never cached, so it prints in
//! canonical form.

use std::cmp::Ordering;

use super::digits::cmp_magnitude;
use super::{Format, Quantity};

/// `digits * 10^exponent` rewritten at the lower exponent `to` (appends zeros).
fn aligned(digits: &[u8], exponent: i64, to: i64) -> Vec<u8> {
    let mut out = digits.to_vec();
    let zeros = usize::try_from(exponent.saturating_sub(to)).unwrap_or(0);
    out.extend(std::iter::repeat_n(b'0', zeros));
    out
}

/// Sum of two ASCII magnitudes of the same alignment.
fn add_magnitudes(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
    let (mut i, mut j, mut carry) = (a.len(), b.len(), 0u8);
    while i > 0 || j > 0 || carry > 0 {
        let x = if i > 0 {
            i -= 1;
            a[i] - b'0'
        } else {
            0
        };
        let y = if j > 0 {
            j -= 1;
            b[j] - b'0'
        } else {
            0
        };
        let sum = x + y + carry;
        out.push(b'0' + sum % 10);
        carry = sum / 10;
    }
    out.reverse();
    out
}

/// `a - b` for ASCII magnitudes of the same alignment with `a >= b`.
fn sub_magnitudes(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len());
    let (mut i, mut j, mut borrow) = (a.len(), b.len(), 0i8);
    while i > 0 {
        i -= 1;
        let x = (a[i] - b'0') as i8;
        let y = if j > 0 {
            j -= 1;
            (b[j] - b'0') as i8
        } else {
            0
        };
        let mut difference = x - y - borrow;
        borrow = 0;
        if difference < 0 {
            difference += 10;
            borrow = 1;
        }
        out.push(b'0' + difference as u8);
    }
    out.reverse();
    out
}

impl Quantity {
    /// `q.Add(y)` on a copy of `self`.
    pub fn add(&self, other: &Quantity) -> Quantity {
        let format = if self.is_zero() {
            other.format
        } else {
            self.format
        };
        if other.is_zero() {
            return Quantity::from_parts(self.negative, &self.digits, self.exponent, format);
        }
        if self.is_zero() {
            return Quantity::from_parts(other.negative, &other.digits, other.exponent, format);
        }
        let exponent = self.exponent.min(other.exponent);
        let a = aligned(&self.digits, self.exponent, exponent);
        let b = aligned(&other.digits, other.exponent, exponent);
        if self.negative == other.negative {
            return Quantity::from_parts(self.negative, &add_magnitudes(&a, &b), exponent, format);
        }
        match cmp_magnitude(&self.digits, self.exponent, &other.digits, other.exponent) {
            Ordering::Equal => Quantity::from_parts(false, &[], 0, format),
            Ordering::Greater => {
                Quantity::from_parts(self.negative, &sub_magnitudes(&a, &b), exponent, format)
            }
            Ordering::Less => {
                Quantity::from_parts(other.negative, &sub_magnitudes(&b, &a), exponent, format)
            }
        }
    }

    /// `q.Sub(y)` on a copy of `self`.
    pub fn sub(&self, other: &Quantity) -> Quantity {
        self.add(&other.neg())
    }

    /// `q.Neg()` on a copy of `self`.
    pub fn neg(&self) -> Quantity {
        Quantity::from_parts(!self.negative, &self.digits, self.exponent, self.format)
    }

    /// `q.RoundUp(0)` on a copy of `self`: the smallest whole number not
    /// below the value (whole values are returned unchanged, cache included).
    pub fn round_up_whole(&self) -> Quantity {
        if self.exponent >= 0 || self.is_zero() {
            return self.clone();
        }
        Quantity::from_scaled(self.scaled_value(0), 0, self.format)
    }

    /// `q.RoundUp(-3)` on a copy of `self` (`SetDefaults_ResourceList`):
    /// a value finer than milli precision rounded up to it and re-encoded;
    /// others are returned unchanged, cache included. `None` when the
    /// rounded value does not fit the int64 amount (left to the caller).
    pub fn round_up_milli(&self) -> Option<Quantity> {
        if self.exponent >= -3 || self.is_zero() {
            return Some(self.clone());
        }
        let milli = self.scaled_value(3);
        if milli == i64::MAX || milli == i64::MIN {
            return None;
        }
        Some(Quantity::from_scaled(milli, -3, self.format))
    }

    /// A whole number in DecimalSI (`resource.NewQuantity(n, DecimalSI)`).
    pub fn from_count(count: i64) -> Quantity {
        Quantity::from_scaled(count, 0, Format::DecimalSI)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Quantity {
        Quantity::parse(text).expect("valid quantity")
    }

    #[test]
    fn sums_print_canonically_in_the_receivers_format() {
        for (a, b, sum) in [
            ("1", "1", "2"),
            ("500m", "500m", "1"),
            ("100m", "1", "1100m"),
            ("1Gi", "512Mi", "1536Mi"),
            ("0", "1Gi", "1Gi"),
            ("1G", "1Gi", "2073741824"),
            ("2", "-3", "-1"),
            ("3", "-3", "0"),
            ("-1", "-1", "-2"),
            ("1.5", "250m", "1750m"),
        ] {
            assert_eq!(q(a).add(&q(b)).to_string(), sum, "{a} + {b}");
        }
        assert_eq!(q("2").sub(&q("500m")).to_string(), "1500m");
        assert_eq!(q("1Gi").sub(&q("1Gi")).to_string(), "0");
        assert_eq!(q("1").neg().to_string(), "-1");
    }

    #[test]
    fn round_up_to_whole_values() {
        assert_eq!(q("1500m").round_up_whole().to_string(), "2");
        assert_eq!(q("1Gi").round_up_whole().to_string(), "1Gi");
        assert_eq!(Quantity::from_count(3).to_string(), "3");
    }

    #[test]
    fn round_up_to_milli_precision() {
        for (input, rounded) in [
            ("0.0001", "1m"),
            ("1u", "1m"),
            ("1500u", "2m"),
            ("1000u", "1m"),
            ("1.0001", "1001m"),
            ("100m", "100m"),
            ("1Gi", "1Gi"),
            ("0", "0"),
        ] {
            let quantity = q(input).round_up_milli().expect("fits");
            assert_eq!(quantity.to_string(), rounded, "{input}");
        }
    }
}
