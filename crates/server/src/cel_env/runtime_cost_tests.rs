//! Actual costs asserted by cel-go's `interpreter/runtimecost_test.go`
//! (`TestRuntimeCost`), for the expressions that need no protobuf types.

use std::sync::Arc;

use super::*;

fn text(length: usize) -> Value {
    Value::String(Arc::new("ab".repeat(length / 2)))
}

fn run(expression: &str, variables: &[(&str, Value)], limit: u64) -> Evaluation {
    let env = crate::cel_env::env();
    let program = env.compile(expression).expect("compiles");
    let mut context = Context::with_env(env.clone());
    for (name, value) in variables {
        context.add_variable_from_value(*name, value.clone());
    }
    evaluate(program.expression(), &context, limit)
}

fn cost(expression: &str, variables: &[(&str, Value)]) -> u64 {
    let evaluation = run(expression, variables, u64::MAX);
    assert!(
        evaluation.result.is_ok(),
        "{expression}: {:?}",
        evaluation.result
    );
    evaluation.cost
}

/// An expression, its variables and cel-go's cost.
type Case = (&'static str, Vec<(&'static str, Value)>, u64);

fn list(values: &[i64]) -> Value {
    Value::List(Arc::new(values.iter().map(|v| Value::Int(*v)).collect()))
}

#[test]
fn cel_gos_runtime_costs() {
    let empty_map: Value = std::collections::HashMap::<String, Value>::new().into();
    let key_map: Value = [("key".to_string(), Value::String(Arc::new("v".into())))]
        .into_iter()
        .collect::<std::collections::HashMap<String, Value>>()
        .into();
    let strings = Value::List(Arc::new(vec![Value::String(Arc::new("v".into()))]));
    let cases: Vec<Case> = vec![
        (r#""Hello World!""#, vec![], 0),
        ("input", vec![("input", list(&[1, 2]))], 1),
        ("input['key']", vec![("input", key_map.clone())], 2),
        ("input[0]", vec![("input", strings.clone())], 2),
        ("input['ke' + 'y']", vec![("input", key_map)], 3),
        ("input[3-3]", vec![("input", strings)], 3),
        ("[1, 2, 3]", vec![], 10),
        (r#"{"a": 1, "b": 2, "c": 3}"#, vec![], 30),
        ("input.all(x, true)", vec![("input", list(&[]))], 2),
        (
            "input.all(x, x.all(y, true))",
            vec![("input", list(&[]))],
            2,
        ),
        ("[1, 2, 3].all(x, true)", vec![], 20),
        ("input.matches('[0-9]')", vec![("input", text(500))], 103),
        ("'123'.matches('[0-9]')", vec![], 2),
        ("false || false", vec![], 0),
        ("true || false", vec![], 0),
        (
            "a || b || c || d",
            ["a", "b", "c", "d"]
                .iter()
                .map(|name| (*name, Value::Bool(false)))
                .collect(),
            4,
        ),
        ("true && false", vec![], 0),
        ("false && true", vec![], 0),
        (
            "a && b && c && d",
            ["a", "b", "c", "d"]
                .iter()
                .map(|name| (*name, Value::Bool(true)))
                .collect(),
            4,
        ),
        ("1 < 2", vec![], 1),
        ("1 <= 2", vec![], 1),
        ("1 == 2", vec![], 1),
        ("2 > 1", vec![], 1),
        ("2 >= 1", vec![], 1),
        ("2 in [1, 2, 3]", vec![], 13),
        ("'a' in {'a': 1, 'b': 2}", vec![], 31),
        ("1 + 1", vec![], 1),
        ("1 - 1", vec![], 1),
        ("1 / 1", vec![], 1),
        ("1 * 1", vec![], 1),
        ("1 % 1", vec![], 1),
        ("true ? 1 : 2", vec![], 0),
        (r#"size("123")"#, vec![], 1),
        (
            "'12345678901234567890' == '123456789012345678901234567890'",
            vec![],
            2,
        ),
        ("bytes(input)", vec![("input", text(500))], 51),
        ("string(1)", vec![], 1),
        (
            "input.contains(arg1)",
            vec![("input", text(500)), ("arg1", text(500))],
            2502,
        ),
        (
            r"input.matches('\\d+a\\d+b')",
            vec![("input", text(500))],
            103,
        ),
        (
            "input.startsWith(arg1)",
            vec![
                ("input", Value::String(Arc::new("idc".into()))),
                ("arg1", text(500)),
            ],
            3,
        ),
        (
            "input.endsWith(arg1)",
            vec![
                ("input", Value::String(Arc::new("idc".into()))),
                ("arg1", text(500)),
            ],
            3,
        ),
        (
            "input.size()",
            vec![("input", Value::String(Arc::new("500".into())))],
            2,
        ),
        (
            "size(input)",
            vec![("input", Value::String(Arc::new("500".into())))],
            2,
        ),
        ("true ? false : 1 > 3", vec![], 0),
        ("false ? false : 1 > 3", vec![], 1),
        (
            "input.all(k, input[k].all(x, true))",
            vec![("input", empty_map.clone())],
            2,
        ),
        (
            "input.all(k, k.contains(k))",
            vec![("input", empty_map.clone())],
            2,
        ),
        (
            "input.all(k, input[k].all(k, true) && k.contains(k))",
            vec![("input", empty_map)],
            2,
        ),
        (
            "(list1 + list2).all(x, true)",
            vec![("list1", list(&[])), ("list2", list(&[]))],
            4,
        ),
        (
            r#""abcdefg".contains(str1 + str2)"#,
            vec![
                ("str1", Value::String(Arc::new("val1".into()))),
                ("str2", Value::String(Arc::new("val2222222".into()))),
            ],
            6,
        ),
        ("(1 > 2 ? 5 : 3) > 1", vec![], 2),
        ("(1 > 2 || 2 > 1) == true", vec![], 3),
        ("[{'k1': 1}, {'k2': 2}].all(x, true)", vec![], 77),
    ];
    for (expression, variables, want) in cases {
        assert_eq!(cost(expression, &variables), want, "{expression}");
    }
}

#[test]
fn the_limit_cancels_as_cel_go_does() {
    let variables = [
        ("str1", Value::String(Arc::new("val1".into()))),
        ("str2", Value::String(Arc::new("val2222222".into()))),
    ];
    let expression = r#""abcdefg".contains(str1 + str2)"#;
    let at_limit = run(expression, &variables, 6);
    assert_eq!(at_limit.result.ok(), Some(Value::Bool(false)));
    assert_eq!(at_limit.cost, 6);
    let above = run(expression, &variables, 5);
    assert!(matches!(above.result, Err(Halt::Cancelled)));
}

#[test]
fn a_comprehension_stops_where_its_condition_does() {
    // exists stops at the first match: the input, per item tried the
    // condition `@not_strictly_false(!@result)` (3) and the step
    // `@result || x == 2` (3), the condition that ends the loop, the result.
    let input = list(&[1, 2, 3, 4]);
    assert_eq!(
        cost("input.exists(x, x == 2)", &[("input", input.clone())]),
        1 + 2 * (3 + 3) + 3 + 1
    );
    // all runs every item: per item 2 (condition) + 1 (accumulator) + x, == .
    assert_eq!(
        cost("input.all(x, x > 0)", &[("input", input)]),
        1 + 4 * 5 + 1
    );
}

#[test]
fn the_result_is_cel_rusts() {
    let evaluation = run("[1, 2, 3].map(x, x * 2)", &[], u64::MAX);
    assert_eq!(evaluation.result.ok(), Some(list(&[2, 4, 6])));
    let error = run("1 / 0 == 1", &[], u64::MAX);
    assert!(matches!(error.result, Err(Halt::Error(_))));
}

#[test]
fn every_result_is_the_one_cel_rust_gives() {
    let expressions = [
        "[1, 2, 3].map(x, x * 2)",
        "[1, 2, 3].filter(x, x > 1)",
        "[1, 2, 3].map(x, x > 1, x * 10)",
        "{'a': 1, 'b': 2}.all(k, k.size() == 1)",
        "{'a': 1, 'b': 2}.exists_one(k, k == 'a')",
        "[1, 2, 3].all(e, 6 / (2 - e) == 6)",
        "[2, 0].exists(e, 6 / (2 - e) == 3)",
        "[2].all(e, 6 / (2 - e) == 6)",
        "1 / 0 == 1 || true",
        "1 / 0 == 1 && false",
        "false || 1 / 0 == 1",
        "true ? 'a' + 'b' : 1 / 0",
        "{'a': 1}.b",
        "has({'a': 1}.a) && !has({'a': 1}.b)",
        "[[1, 2], [3]].map(l, l.map(x, x + 1))",
        "'abc'.matches('^a') && 'abc'.contains('b')",
    ];
    let env = crate::cel_env::env();
    let context = Context::with_env(env.clone());
    for expression in expressions {
        let program = env.compile(expression).expect("compiles");
        let expected = program.execute(&context);
        let got = evaluate(program.expression(), &context, u64::MAX).result;
        match (&expected, &got) {
            (Ok(want), Ok(value)) => assert_eq!(value, want, "{expression}"),
            (Err(want), Err(Halt::Error(error))) => assert_eq!(error, want, "{expression}"),
            _ => panic!("{expression}: cel-rust {expected:?}, walk {got:?}"),
        }
    }
}

#[test]
fn a_walk_past_its_patience_evaluates_without_a_limit() {
    let env = crate::cel_env::env();
    let program = env
        .compile("input.all(x, x > 0) && input.size() == 4")
        .expect("compiles");
    let mut context = Context::with_env(env.clone());
    context.add_variable_from_value("input", list(&[1, 2, 3, 4]));
    // No patience at all: the count gives up at once, the answer is
    // cel-rust's unlimited one, even with a limit the count would pass.
    let given_up =
        evaluate_with_patience(program.expression(), &context, 1, std::time::Duration::ZERO);
    assert_eq!(given_up.result.ok(), Some(Value::Bool(true)));
    // With time to count, the same limit cancels it.
    let counted = evaluate(program.expression(), &context, 1);
    assert!(matches!(counted.result, Err(Halt::Cancelled)));
}

#[test]
fn a_selection_chain_costs_one_per_link_and_reads_only_its_leaf() {
    let object = Value::Map(
        std::collections::HashMap::from([(
            "metadata".to_string(),
            Value::Map(std::collections::HashMap::from([("name".to_string(), text(4))]).into()),
        )])
        .into(),
    );
    // `object`, `.metadata`, `.name`, then `==` on 4 code points (1).
    assert_eq!(
        cost(
            "object.metadata.name == 'abab'",
            &[("object", object.clone())]
        ),
        4
    );
    assert_eq!(cost("has(object.metadata.name)", &[("object", object)]), 3);
}
