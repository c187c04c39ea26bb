//! Arithmetic on ASCII decimal digit strings (the `inf.Dec` path of
//! `amount.go` / `math.go`).

use std::cmp::Ordering;

/// Multiplies ASCII decimal digits by `factor` in place.
pub(super) fn mul_small(digits: &mut Vec<u8>, factor: u64) {
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
pub(super) fn increment(digits: &mut Vec<u8>) {
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
pub(super) fn cmp_magnitude(a: &[u8], ea: i64, b: &[u8], eb: i64) -> Ordering {
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
