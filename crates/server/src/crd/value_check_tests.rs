//! Schema failures against kube's texts: each case is one schema, one
//! object and the field errors kube-apiserver 1.34 reports for it (as they
//! read in the 422's message, `path: body`).

use serde_json::{json, Value};

use super::*;
use crate::schema::compile_values;

fn check(schema: Value, object: Value) -> Vec<String> {
    let schema = compile_values(&json!({"type": "object", "properties": {"spec": schema}}));
    validate(&json!({ "spec": object }), &schema)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn each_check_reports_as_kube() {
    let cases: Vec<(Value, Value, Vec<&str>)> = vec![
        (
            json!({"type": "integer"}),
            json!("x"),
            vec![
                r#"spec: Invalid value: "string": spec in body must be of type integer: "string""#,
            ],
        ),
        (
            json!({"type": "string"}),
            json!(null),
            vec![r#"spec: Invalid value: "null": spec in body must be of type string: "null""#],
        ),
        (
            json!({"type": "string", "nullable": true}),
            json!(null),
            vec![],
        ),
        (json!({"type": "integer"}), json!(2.0), vec![]),
        (
            json!({"type": "integer"}),
            json!(2.5),
            vec![
                r#"spec: Invalid value: "number": spec in body must be of type integer: "number""#,
            ],
        ),
        (json!({"type": "number"}), json!(3), vec![]),
        (
            json!({"x-kubernetes-int-or-string": true}),
            json!(true),
            vec![
                r#"spec: Invalid value: "boolean": spec in body must be of type integer,string: "boolean""#,
            ],
        ),
        (
            json!({"x-kubernetes-int-or-string": true}),
            json!("80%"),
            vec![],
        ),
        (
            json!({"type": "integer", "maximum": 10}),
            json!(20),
            vec!["spec: Invalid value: 20: spec in body should be less than or equal to 10"],
        ),
        (
            json!({"type": "integer", "maximum": 10, "exclusiveMaximum": true}),
            json!(10),
            vec!["spec: Invalid value: 10: spec in body should be less than 10"],
        ),
        (
            json!({"type": "number", "minimum": 0.5}),
            json!(0.25),
            vec!["spec: Invalid value: 0.25: spec in body should be greater than or equal to 0.5"],
        ),
        (
            json!({"type": "integer", "minimum": 1, "exclusiveMinimum": true}),
            json!(1),
            vec!["spec: Invalid value: 1: spec in body should be greater than 1"],
        ),
        (
            json!({"type": "integer", "multipleOf": 5}),
            json!(7),
            vec!["spec: Invalid value: 7: spec in body should be a multiple of 5"],
        ),
        (
            json!({"type": "string", "maxLength": 3}),
            json!("abcd"),
            vec!["spec: Too long: may not be more than 3 bytes"],
        ),
        (
            json!({"type": "string", "minLength": 2}),
            json!("a"),
            vec![r#"spec: Invalid value: "a": spec in body should be at least 2 chars long"#],
        ),
        (
            json!({"type": "string", "pattern": "^[a-z]+$"}),
            json!("A1"),
            vec![r#"spec: Invalid value: "A1": spec in body should match '^[a-z]+$'"#],
        ),
        (
            json!({"type": "string", "enum": ["a", "b"]}),
            json!("c"),
            vec![r#"spec: Unsupported value: "c": supported values: "a", "b""#],
        ),
        (
            json!({"type": "integer", "enum": [1, 2]}),
            json!(3),
            vec![r#"spec: Unsupported value: 3: supported values: "1", "2""#],
        ),
        (json!({"type": "integer", "enum": [1, 2]}), json!(2), vec![]),
        (
            json!({"type": "string", "format": "date-time"}),
            json!("noon"),
            vec![r#"spec: Invalid value: "noon": spec in body must be of type date-time: "noon""#],
        ),
        (
            json!({"type": "string", "format": "no-such-format"}),
            json!("noon"),
            vec![],
        ),
        (
            json!({"type": "array", "maxItems": 1, "items": {"type": "string"}}),
            json!(["a", "b"]),
            vec!["spec: Too many: 2: must have at most 1 item"],
        ),
        (
            json!({"type": "array", "minItems": 2, "items": {"type": "string"}}),
            json!(["a"]),
            vec!["spec: Invalid value: 1: spec in body should have at least 2 items"],
        ),
        (
            json!({"type": "array", "items": {"type": "integer"}}),
            json!([1, "x"]),
            vec![
                r#"spec[1]: Invalid value: "string": spec[1] in body must be of type integer: "string""#,
            ],
        ),
        (
            json!({"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}}),
            json!({"a": "1", "b": "2"}),
            vec!["spec: Too many: 2: must have at most 1 item"],
        ),
        (
            json!({"type": "object", "minProperties": 1}),
            json!({}),
            vec!["spec: Invalid value: 0: spec in body should have at least 1 properties"],
        ),
        (
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
            json!({"a": "x"}),
            vec![
                r#"spec.a: Invalid value: "string": spec.a in body must be of type integer: "string""#,
            ],
        ),
        (
            json!({"type": "object", "required": ["size"], "properties": {"size": {"type": "integer"}}}),
            json!({}),
            vec!["spec.size: Required value"],
        ),
        (
            json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}),
            json!(["a", "b", "a", "a"]),
            vec![r#"spec[2]: Duplicate value: "a""#],
        ),
        (
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}),
            json!([{"name": "a", "port": 1}, {"name": "a", "port": 2}]),
            vec![r#"spec[1]: Duplicate value: map[string]interface {}{"name":"a"}"#],
        ),
        (
            json!({"type": "string", "anyOf": [{"maxLength": 1}, {"pattern": "^x"}]}),
            json!("ab"),
            vec![
                r#"<nil>: Invalid value: "": "spec" must validate at least one schema (anyOf)"#,
                "spec: Too long: may not be more than 1 bytes",
            ],
        ),
        (
            json!({"type": "string", "not": {"enum": ["forbidden"]}}),
            json!("forbidden"),
            vec![r#"<nil>: Invalid value: "": "spec" must not validate the schema (not)"#],
        ),
    ];
    for (schema, object, expected) in cases {
        assert_eq!(
            check(schema.clone(), object.clone()),
            expected,
            "{schema} {object}"
        );
    }
}

#[test]
fn updates_ratchet_values_they_leave_unchanged() {
    let schema = compile_values(&json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "required": ["size"],
        "properties": {"size": {"type": "integer", "maximum": 10}, "name": {"type": "string", "maxLength": 3}},
    }}}));
    let old = json!({"spec": {"size": 20, "name": "ok"}});
    let relabelled =
        json!({"metadata": {"labels": {"a": "b"}}, "spec": {"size": 20, "name": "ok"}});
    assert!(validate_update(&relabelled, &old, &schema).is_empty());
    let worse = json!({"spec": {"size": 20, "name": "toolong"}});
    let errors: Vec<String> = validate_update(&worse, &old, &schema)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errors,
        ["spec.name: Too long: may not be more than 3 bytes"]
    );
    let still_missing = json!({"spec": {}});
    assert_eq!(
        validate_update(&still_missing, &still_missing, &schema),
        vec![]
    );
}
