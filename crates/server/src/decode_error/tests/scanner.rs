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

/// `decode_failure_message_of_valid_json` skips Go's syntax scan when
/// serde_json accepted the body: serde_json must never accept what Go's
/// scanner refuses. Checked on valid bodies and on 20,000 byte-level
/// mutations of them (deleted, duplicated, replaced and inserted bytes
/// drawn from JSON's own alphabet and a few bytes Go and serde differ on).
#[test]
fn serde_json_accepts_nothing_go_refuses() {
    let seeds: [&[u8]; 6] = [
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"y"}},"data":{"k":"v\n\u00e9"}}"#,
        br#"{"kind":"Pod","spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}],"priority":-1.5e3}}"#,
        br#" [1, 2.0, -0, 1e5, true, false, null, "s", {}, []] "#,
        br#"{"a":{"b":{"c":[[["d"]]]}},"e":"\ud83d\ude00","f":"\"\\\/\b\f\r\t"}"#,
        b"{\"k\":\"\xc3\xa9\"}",
        b"0",
    ];
    let alphabet: &[u8] =
        b"{}[]:,\" \t\n\r\\/-+.0123456789eEtrufalsn\x00\x7f\xc3\xa9\xff\xef\xbb\xbfu";
    let mut rng = crate::rng::Rng::new(0x5eed);
    let mut next = |bound: usize| rng.below(bound);
    let mut accepted = 0;
    for round in 0..20_000 {
        let mut body = seeds[round % seeds.len()].to_vec();
        for _ in 0..1 + next(3) {
            let at = next(body.len() + 1);
            let byte = alphabet[next(alphabet.len())];
            match next(4) {
                0 if at < body.len() => {
                    body.remove(at);
                }
                1 if at < body.len() => {
                    let copy = body[at];
                    body.insert(at, copy);
                }
                2 if at < body.len() => body[at] = byte,
                _ => body.insert(at, byte),
            }
        }
        if serde_json::from_slice::<serde_json::Value>(&body).is_ok() {
            accepted += 1;
            assert_eq!(
                go_json_syntax_error(&body),
                None,
                "serde_json accepts {:?}",
                String::from_utf8_lossy(&body)
            );
        }
    }
    for seed in seeds {
        assert!(serde_json::from_slice::<serde_json::Value>(seed).is_ok());
        assert_eq!(go_json_syntax_error(seed), None);
    }
    assert!(
        accepted > 500,
        "only {accepted} mutated bodies were valid JSON"
    );
}
