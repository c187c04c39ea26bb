use super::*;

/// `encoding/json` scanner messages. Texts from Go's `scanner.go` /
/// `scanner_test.go` (`syntaxErrorTests`, `TestIndentErrors`) and the
/// brief's real-server examples.
#[test]
fn syntax_errors() {
    let cases: &[(&[u8], Option<&str>)] = &[
        (b"{\"kind\":", Some("unexpected end of JSON input")),
        (
            b"{not json}",
            Some("invalid character 'n' looking for beginning of object key string"),
        ),
        (b"", Some("unexpected end of JSON input")),
        (b"   ", Some("unexpected end of JSON input")),
        (b"{", Some("unexpected end of JSON input")),
        (b"{}", None),
        (b" {} \n", None),
        (b"[1]", None),
        (b"\"x\"", None),
        (b"3", None),
        (b"null", None),
        (b"-0.5e+10", None),
        (
            b"{\"a\":1}x",
            Some("invalid character 'x' after top-level value"),
        ),
        (b"{}{}", Some("invalid character '{' after top-level value")),
        (b"{\"a\" 1}", Some("invalid character '1' after object key")),
        (
            b"{\"a\":1 \"b\":2}",
            Some("invalid character '\"' after object key:value pair"),
        ),
        (b"[1 2]", Some("invalid character '2' after array element")),
        (
            b"{\"a\":}",
            Some("invalid character '}' looking for beginning of value"),
        ),
        (
            b"[1,]",
            Some("invalid character ']' looking for beginning of value"),
        ),
        (
            b"{'a':1}",
            Some(r"invalid character '\'' looking for beginning of object key string"),
        ),
        (
            b"{\"a\":\"x\x00\"}",
            Some(r"invalid character '\x00' in string literal"),
        ),
        (b"\"\n\"", Some(r"invalid character '\n' in string literal")),
        (b"\"\t\"", Some(r"invalid character '\t' in string literal")),
        (
            b"\"\\x\"",
            Some("invalid character 'x' in string escape code"),
        ),
        (
            b"\"\\u12g4\"",
            Some(r"invalid character 'g' in \u hexadecimal character escape"),
        ),
        (b"-", Some("invalid character ' ' in numeric literal")),
        (b"-a", Some("invalid character 'a' in numeric literal")),
        (
            b"1.",
            Some("invalid character ' ' after decimal point in numeric literal"),
        ),
        (
            b"1.e5",
            Some("invalid character 'e' after decimal point in numeric literal"),
        ),
        (
            b"1e",
            Some("invalid character ' ' in exponent of numeric literal"),
        ),
        (
            b"1e+x",
            Some("invalid character 'x' in exponent of numeric literal"),
        ),
        (b"01", Some("invalid character '1' after top-level value")),
        (
            b"tru",
            Some("invalid character ' ' in literal true (expecting 'e')"),
        ),
        (
            b"trx",
            Some("invalid character 'x' in literal true (expecting 'u')"),
        ),
        (
            b"tx",
            Some("invalid character 'x' in literal true (expecting 'r')"),
        ),
        (
            b"fx",
            Some("invalid character 'x' in literal false (expecting 'a')"),
        ),
        (
            b"falsy",
            Some("invalid character 'y' in literal false (expecting 'e')"),
        ),
        (
            b"nul",
            Some("invalid character ' ' in literal null (expecting 'l')"),
        ),
        (
            b"nx",
            Some("invalid character 'x' in literal null (expecting 'u')"),
        ),
        (
            b"x",
            Some("invalid character 'x' looking for beginning of value"),
        ),
        (b"\"", Some("unexpected end of JSON input")),
        (b"[", Some("unexpected end of JSON input")),
        (
            b"\x7f",
            Some(r"invalid character '\x7f' looking for beginning of value"),
        ),
        (
            b"\x07",
            Some(r"invalid character '\a' looking for beginning of value"),
        ),
        (
            b"\\",
            Some(r"invalid character '\\' looking for beginning of value"),
        ),
        (b"\"", Some("unexpected end of JSON input")),
        (
            b"{\"a\":1,}",
            Some("invalid character '}' looking for beginning of object key string"),
        ),
        (
            b"}",
            Some("invalid character '}' looking for beginning of value"),
        ),
        (
            b"\xef\xbb\xbf{}",
            Some("invalid character '\u{ef}' looking for beginning of value"),
        ),
        (
            b"\x80",
            Some(r"invalid character '\u0080' looking for beginning of value"),
        ),
        (
            b"\xa0",
            Some(r"invalid character '\u00a0' looking for beginning of value"),
        ),
        (
            b"\xad",
            Some(r"invalid character '\u00ad' looking for beginning of value"),
        ),
        (
            b"\xe9",
            Some("invalid character 'é' looking for beginning of value"),
        ),
    ];
    for (body, want) in cases {
        assert_eq!(
            go_json_syntax_error(body).as_deref(),
            *want,
            "body {:?}",
            String::from_utf8_lossy(body)
        );
    }
}

#[test]
fn nesting_limit() {
    let deep = "[".repeat(MAX_NESTING_DEPTH) + &"]".repeat(MAX_NESTING_DEPTH);
    assert_eq!(go_json_syntax_error(deep.as_bytes()), None);
    let deeper = "[".repeat(MAX_NESTING_DEPTH + 1);
    assert_eq!(
        go_json_syntax_error(deeper.as_bytes()).as_deref(),
        Some("invalid character '[' exceeded max depth")
    );
}

/// `summarizeData` of handlers/rest.go.
#[test]
fn summaries() {
    assert_eq!(summarize_data(b""), "<empty>");
    assert_eq!(summarize_data(b"{\"kind\":"), "{\"kind\":");
    assert_eq!(summarize_data(b"[1]"), "5b315d");
    assert_eq!(summarize_data(b" {}"), "207b7d");
    let long = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}"#;
    assert_eq!(
        summarize_data(long),
        r#"{"apiVersion":"v1","kind":"Con ..."#
    );
    let long_array = b"[111111111111111111111111111111111]";
    assert_eq!(
        summarize_data(long_array),
        "5b3131313131313131313131313131313131313131313131313131313131 ..."
    );
}

#[test]
fn go_unquoting() {
    assert_eq!(
        go_unquote(br#""a\u00e9\ud83d\ude00\ud800x\/""#),
        "a\u{e9}\u{1F600}\u{FFFD}x/"
    );
    assert_eq!(go_unquote(b"\"\xff\""), "\u{FFFD}");
    assert_eq!(go_lossy(b"a\xe2\x82"), "a\u{FFFD}\u{FFFD}");
}
