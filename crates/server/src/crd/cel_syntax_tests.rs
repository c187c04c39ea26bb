//! CEL expressions kube's parser accepts and refuses, with cel-go's texts.

use super::*;

const EXPECTING: &str = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

#[test]
fn valid_expressions_parse() {
    for expression in [
        "self.x > 0",
        "has(self.y)",
        r#"self.all(k, k != "")"#,
        "oldSelf == self",
        "self.replicas <= self.maxReplicas && self.minReplicas >= 0",
        r#"'abc' + "def" + '''multi'''"#,
        "[1, 2, 3].exists(x, x == 2)",
        "self.items.map(i, i.name).size() == 1",
        "self.list.filter(e, e > 1).exists_one(e, e == 2)",
        r#"{"a": 1}["a"] == 1"#,
        "self.x ? 1 : 2",
        "b'bytes' != b''",
        "1u + 2u == 3u && 1.5 < 2.0 && -1 < 0",
        "!self.flag || self.name.matches('^[a-z]+$')",
        "self.x in [1, 2]",
        "self.spec.\n  replicas > 0",
        "fakeFunction('abc') == 'ABC'",
    ] {
        assert_eq!(check(expression), Ok(()), "{expression:?}");
    }
}

#[test]
fn invalid_expressions_are_refused_with_cel_go_texts() {
    let cases = [
        (
            "self.x >",
            format!("ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {EXPECTING}\n | self.x >\n | ........^"),
        ),
        (
            "(self.x > 0",
            "ERROR: <input>:1:12: Syntax error: missing ')' at '<EOF>'\n | (self.x > 0\n | ...........^".to_string(),
        ),
        (
            "a | b",
            "ERROR: <input>:1:3: Syntax error: token recognition error at: '| '\n | a | b\n | ..^\nERROR: <input>:1:5: Syntax error: extraneous input 'b' expecting <EOF>\n | a | b\n | ....^".to_string(),
        ),
        (
            "",
            format!("ERROR: <input>:1:1: Syntax error: mismatched input '<EOF>' expecting {EXPECTING}\n | \n | ^"),
        ),
        (
            "1 +\n 2 +",
            format!("ERROR: <input>:2:5: Syntax error: mismatched input '<EOF>' expecting {EXPECTING}\n |  2 +\n | ....^"),
        ),
        (
            "'é' + )",
            format!("ERROR: <input>:1:7: Syntax error: mismatched input ')' expecting {EXPECTING}\n | 'é' + )\n | .．....^"),
        ),
    ];
    for (expression, want) in cases {
        assert_eq!(
            check(expression),
            Err(Error::Syntax(want)),
            "{expression:?}"
        );
    }
}

#[test]
fn odd_inputs_are_refused_without_panicking() {
    for expression in [
        ")",
        "self.x > 0)",
        "self.",
        "&&",
        "\"unterminated",
        "self.x == 1 ==",
        "`",
        "\u{0}",
        "self[",
        "{1:}",
        "1 ? 2",
    ] {
        assert!(
            matches!(check(expression), Err(Error::Syntax(_))),
            "{expression:?}"
        );
    }
}

#[test]
fn nesting_and_size_are_bounded_as_cel_go_bounds_them() {
    let nested = |depth: usize, open: &str, close: &str| {
        format!("{}1{}", open.repeat(depth), close.repeat(depth))
    };
    assert_eq!(check(&nested(249, "(", ")")), Ok(()));
    let recursion = "ERROR: <input>:-1:0: expression recursion limit exceeded: 250".to_string();
    assert_eq!(
        check(&nested(100_000 / 2 - 1, "(", ")")),
        Err(Error::Syntax(recursion.clone()))
    );
    assert_eq!(
        check(&nested(5_000, "[", "]")),
        Err(Error::Syntax(recursion))
    );
    let long = "1".to_string() + &" + 1".repeat(20_000);
    assert_eq!(check(&long), Ok(()));
    let too_long = "x".repeat(MAX_EXPRESSION_CODE_POINTS + 1);
    assert_eq!(
        check(&too_long),
        Err(Error::Syntax(
            "ERROR: <input>:-1:0: expression code point size exceeds limit: size: 100001, limit 100000".into()
        ))
    );
}
