use super::*;

/// time.Parse errors (texts from Go's time/format_test.go parseErrorTests patterns).
#[test]
fn time_errors() {
    let cases: &[(&str, bool, Option<&str>)] = &[
        ("2006-01-02T15:04:05Z", false, None),
        ("2006-01-02T15:04:05.999999999-07:00", false, None),
        ("2006-01-02T15:04:05.000000Z", true, None),
        (
            "2006-01-02T15:04:05Z",
            true,
            Some(
                r#"parsing time "2006-01-02T15:04:05Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000""#,
            ),
        ),
        (
            "2006-13-02T15:04:05Z",
            false,
            Some(r#"parsing time "2006-13-02T15:04:05Z": month out of range"#),
        ),
        (
            "2006-02-30T15:04:05Z",
            false,
            Some(r#"parsing time "2006-02-30T15:04:05Z": day out of range"#),
        ),
        (
            "2006-01-02T25:04:05Z",
            false,
            Some(r#"parsing time "2006-01-02T25:04:05Z": hour out of range"#),
        ),
        (
            "2006-01-02 15:04:05Z",
            false,
            Some(
                r#"parsing time "2006-01-02 15:04:05Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 15:04:05Z" as "T""#,
            ),
        ),
        (
            "2006-01-02T15:04:05",
            false,
            Some(
                r#"parsing time "2006-01-02T15:04:05" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00""#,
            ),
        ),
        (
            "2006-01-02T15:04:05Zjunk",
            false,
            Some(r#"parsing time "2006-01-02T15:04:05Zjunk": extra text: "junk""#),
        ),
        (
            "",
            false,
            Some(r#"parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006""#),
        ),
    ];
    for (value, micro, want) in cases {
        assert_eq!(
            parse_go_time(value, *micro).err().as_deref(),
            *want,
            "{value}"
        );
    }
}

/// base64.StdEncoding.Decode CorruptInputError offsets (Go's base64_test.go style).
#[test]
fn base64_errors() {
    let cases: &[(&str, Option<usize>)] = &[
        ("", None),
        ("YWJj", None),
        ("YQ==", None),
        ("YWI=", None),
        ("YW\r\nJj", None),
        ("!!", Some(0)),
        ("YQ", Some(0)),
        ("YWJ", Some(0)),
        ("YWJjY", Some(4)),
        ("YQ=", Some(3)),
        ("Y===", Some(1)),
        ("YQ==YQ==", Some(4)),
        ("YWJj!", Some(4)),
        ("YQ=x", Some(2)),
    ];
    for (input, want) in cases {
        assert_eq!(base64_std_error(input.as_bytes()), *want, "{input}");
    }
}
