//! Go string formatting helpers: `strconv.Quote`, `utf8.DecodeRune`, how
//! invalid UTF-8 reaches a JSON response, and `summarizeData`.

use std::fmt::Write as _;

/// `strconv.IsPrint`, approximated: letters, marks, numbers, punctuation,
/// symbols and the ASCII space. Control, format (the common ones), separator,
/// private-use and noncharacter code points are not printable; unassigned code
/// points (which Go also escapes) are not recognized.
fn go_is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let u = c as u32;
    let format = matches!(
        u,
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    );
    let private = matches!(u, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD);
    let nonchar = (u & 0xFFFE) == 0xFFFE || (0xFDD0..=0xFDEF).contains(&u);
    !(format || private || nonchar)
}

/// One rune as `strconv.Quote` writes it (without the surrounding quotes).
pub(super) fn quote_rune(c: char, out: &mut String) {
    if c == '"' || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if go_is_print(c) {
        out.push(c);
        return;
    }
    match c {
        '\u{7}' => out.push_str(r"\a"),
        '\u{8}' => out.push_str(r"\b"),
        '\u{c}' => out.push_str(r"\f"),
        '\n' => out.push_str(r"\n"),
        '\r' => out.push_str(r"\r"),
        '\t' => out.push_str(r"\t"),
        '\u{b}' => out.push_str(r"\v"),
        _ => {
            let u = c as u32;
            if u < 0x20 || u == 0x7f {
                let _ = write!(out, r"\x{u:02x}");
            } else if u < 0x10000 {
                let _ = write!(out, r"\u{u:04x}");
            } else {
                let _ = write!(out, r"\U{u:08x}");
            }
        }
    }
}

/// `fmt.Sprintf("%q", s)` (`strconv.Quote`).
pub(super) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        quote_rune(c, &mut out);
    }
    out.push('"');
    out
}

/// Go's `utf8.DecodeRune`: the rune at the start of `bytes` and its width;
/// `(U+FFFD, 1)` for an invalid or truncated sequence.
pub(super) fn decode_rune(bytes: &[u8]) -> (char, usize) {
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
pub(super) fn go_lossy(bytes: &[u8]) -> String {
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

/// `summarizeData(data, 30)` of `handlers/rest.go`: `<empty>`; a body starting
/// with `{` as text (its first 30 bytes plus ` ...` when longer); anything else
/// (leading whitespace included) as lower-case hex of its first 30 bytes.
pub fn summarize_data(body: &[u8]) -> String {
    const MAX: usize = 30;
    let (head, more) = if body.len() > MAX {
        (&body[..MAX], " ...")
    } else {
        (body, "")
    };
    match body.first() {
        None => "<empty>".to_string(),
        Some(b'{') => format!("{}{more}", go_lossy(head)),
        Some(_) => {
            let mut out = String::with_capacity(head.len() * 2 + more.len());
            for byte in head {
                let _ = write!(out, "{byte:02x}");
            }
            out.push_str(more);
            out
        }
    }
}
