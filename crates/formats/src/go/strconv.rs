//! Go's `strconv.Quote` (what `%q` and `%#v` print for a string) and
//! `strconv.IsPrint`.

use std::fmt::Write as _;

/// `strconv.IsPrint`, approximated: letters, marks, numbers, punctuation,
/// symbols and the ASCII space. Control, format (the common ones), separator,
/// private-use and noncharacter code points are not printable; unassigned code
/// points (which Go also escapes) are not recognized.
pub fn is_print(c: char) -> bool {
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
pub fn quote_rune(c: char, out: &mut String) {
    if c == '"' || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if is_print(c) {
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
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        quote_rune(c, &mut out);
    }
    out.push('"');
    out
}

/// `strconv.ParseBool`, with its error text.
pub fn parse_bool(text: &str) -> Result<bool, String> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(format!(
            "strconv.ParseBool: parsing {}: invalid syntax",
            quote(text)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_matches_strconv_quote() {
        let cases = [
            ("abc", r#""abc""#),
            ("a\"b", r#""a\"b""#),
            ("a\\b", r#""a\\b""#),
            ("\u{1}x\u{7f}", r#""\x01x\x7f""#),
            ("\u{7}\u{8}\u{c}\n\r\t\u{b}", r#""\a\b\f\n\r\t\v""#),
            ("é✓", "\"é✓\""),
            ("\u{a0}\u{200b}", r#""\u00a0\u200b""#),
            ("metadata.name ", r#""metadata.name ""#),
        ];
        for (input, want) in cases {
            assert_eq!(quote(input), want, "input {input:?}");
        }
    }

    #[test]
    fn parse_bool_reads_go_booleans() {
        assert_eq!(parse_bool("T"), Ok(true));
        assert_eq!(parse_bool("False"), Ok(false));
        assert_eq!(
            parse_bool("yes"),
            Err(r#"strconv.ParseBool: parsing "yes": invalid syntax"#.to_string())
        );
    }
}
