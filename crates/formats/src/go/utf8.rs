//! Go's `utf8.DecodeRune`, and how a Go string holding invalid UTF-8 reaches
//! a JSON response.

/// Go's `utf8.DecodeRune`: the rune at the start of `bytes` and its width;
/// `(U+FFFD, 1)` for an invalid or truncated sequence.
pub fn decode_rune(bytes: &[u8]) -> (char, usize) {
    let Some(&first) = bytes.first() else {
        return ('\u{FFFD}', 0);
    };
    if first < 0x80 {
        return (char::from(first), 1);
    }
    let width = match first {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return ('\u{FFFD}', 1),
    };
    match bytes.get(..width).map(std::str::from_utf8) {
        Some(Ok(text)) => (text.chars().next().unwrap_or('\u{FFFD}'), width),
        _ => ('\u{FFFD}', 1),
    }
}

/// Bytes as a Go string ends up in a JSON response: each byte of an invalid
/// UTF-8 sequence becomes one U+FFFD (Go's encoder works byte by byte; Rust's
/// `from_utf8_lossy` would fold a truncated sequence into a single one).
pub fn lossy(bytes: &[u8]) -> String {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.to_string();
    }
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let (c, width) = decode_rune(&bytes[i..]);
        out.push(c);
        i += width.max(1);
    }
    out
}
