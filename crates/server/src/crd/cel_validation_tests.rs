//! `x-kubernetes-validations` against kube's texts: cases ported from
//! apiextensions `schema/cel/validation_test.go` (`TestValidationExpressions`,
//! `TestValidateMessageExpression`-style messages, transition rules,
//! `optionalOldSelf`, `fieldPath`, `reason`), as the errors read in a 422.

use serde_json::{json, Value};

use super::*;
use crate::schema::compile_custom_resource;

/// The errors of `object` (and `old`) under `schema`.
fn run(schema: Value, object: Value, old: Option<Value>) -> Vec<String> {
    let model = compile_custom_resource(&schema).expect("schema compiles");
    let rules = CelRules::compile(&model);
    validate(&object, old.as_ref(), &model, &rules)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// A root object with properties `val1`, `val2` … of the given schemas and
/// one rule on the root.
fn root_rule(types: &[Value], values: &[Value], rule: &str) -> Vec<String> {
    let mut properties = serde_json::Map::new();
    let mut object = serde_json::Map::new();
    for (index, (schema, value)) in types.iter().zip(values).enumerate() {
        properties.insert(format!("val{}", index + 1), schema.clone());
        object.insert(format!("val{}", index + 1), value.clone());
    }
    run(
        json!({"type": "object", "properties": properties,
               "x-kubernetes-validations": [{"rule": rule}]}),
        Value::Object(object),
        None,
    )
}

fn assert_valid(types: &[Value], values: &[Value], rules: &[&str]) {
    for rule in rules {
        assert_eq!(
            root_rule(types, values, rule),
            Vec::<String>::new(),
            "rule {rule}"
        );
    }
}

#[test]
fn integers_compare_and_overflow_as_cel_go() {
    let types = [
        json!({"type": "integer"}),
        json!({"type": "integer", "format": "int32"}),
    ];
    let values = [json!(i64::MAX), json!(i32::MAX)];
    assert_valid(
        &types,
        &values,
        &[
            "self.val1 == 9223372036854775807",
            "type(self.val1) == int",
            "self.val2 + 1 == 2147483647 + 1",
        ],
    );
    assert_eq!(
        root_rule(&types, &values, "self.val1 + 1 == 0"),
        [r#"<nil>: Invalid value: "object": integer overflow evaluating rule: self.val1 + 1 == 0"#]
    );
    assert_eq!(
        root_rule(&types, &values, "1 / 0 == 1 / 0"),
        [r#"<nil>: Invalid value: "object": division by zero evaluating rule: 1 / 0 == 1 / 0"#]
    );
}

#[test]
fn numbers_are_doubles_even_when_written_as_integers() {
    let types = [json!({"type": "number"}), json!({"type": "integer"})];
    let values = [json!(1), json!(10)];
    assert_valid(
        &types,
        &values,
        &[
            "type(self.val1) == double",
            "self.val1 == 1.0",
            "double(self.val2) == 10.0",
            "self.val2 == int(10.0)",
        ],
    );
}

#[test]
fn string_functions_kube_rules_use() {
    let types = [json!({"type": "string"}), json!({"type": "string"})];
    let values = [json!("Rook takes 👑"), json!("Rook takes 👑")];
    assert_valid(
        &types,
        &values,
        &[
            "self.val1 == self.val2",
            "self.val1.startsWith('Rook')",
            "!self.val1.startsWith('knight')",
            "self.val1.contains('takes')",
            "self.val1.endsWith('👑')",
            "self.val1.matches('^[^0-9]*$')",
            "!self.val1.matches('^[0-9]*$')",
            "type(self.val1) == string",
            "size(self.val1) == 12",
            "self.val1.lowerAscii() == 'rook takes 👑'",
        ],
    );
}

#[test]
fn lists_maps_enums_and_macros() {
    let types = [
        json!({"type": "array", "items": {"type": "integer"}}),
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
        json!({"type": "string", "enum": ["Pending", "Available"]}),
    ];
    let values = [
        json!([1, 2, 3]),
        json!({"k1": "a", "k2": "b"}),
        json!("Pending"),
    ];
    assert_valid(
        &types,
        &values,
        &[
            "1 in self.val1",
            "!(0 in self.val1)",
            "self.val1 + [4, 5] == [1, 2, 3, 4, 5]",
            "size(self.val1) == 3",
            "self.val1.all(x, x > 0)",
            "self.val1.exists(x, x == 2)",
            "'k1' in self.val2",
            "self.val2 == {'k1': 'a', 'k2': 'b'}",
            "self.val2.all(k, self.val2[k] != '')",
            "has(self.val2.k1) && !has(self.val2.k3)",
            "self.val3 in ['Pending', 'Available']",
        ],
    );
}

fn spec_schema(rules: Value) -> Value {
    json!({"type": "object", "properties": {
    "metadata": {"type": "object"},
    "spec": {"type": "object", "x-kubernetes-validations": rules, "properties": {
        "x": {"type": "integer"},
        "name": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"},
                   "x-kubernetes-validations": [{"rule": "self.all(k, size(k) < 4)", "message": "keys are short"}]},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                            "x-kubernetes-validations": [{"rule": "self.port >= oldSelf.port", "message": "port may not decrease"}]}},
        "tags": {"type": "array", "items": {"type": "string",
                 "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "set items never correlate"}]}},
    }}}})
}

#[test]
fn messages_reasons_and_field_paths_as_kube() {
    let rules = json!([
        {"rule": "self.x > 0"},
        {"rule": "self.x < 100", "message": " x is too big "},
        {"rule": "self.x != 5", "messageExpression": "'x may not be ' + string(self.x)"},
        {"rule": "self.x != 6", "messageExpression": "1 + 1", "message": "fallback"},
        {"rule": "has(self.name)", "reason": "FieldValueRequired", "fieldPath": ".name", "message": "name is required"},
        {"rule": "self.x != 7", "reason": "FieldValueForbidden", "message": "seven is forbidden"},
        {"rule": "self.x != 8", "reason": "FieldValueDuplicate"},
        {"rule": "self.x != 9", "fieldPath": ".labels['a.b']"},
    ]);
    let schema = spec_schema(rules);
    let check = |spec: Value| run(schema.clone(), json!({"spec": spec}), None);
    assert_eq!(
        check(json!({"x": 0, "name": "n"})),
        [r#"spec: Invalid value: "object": failed rule: self.x > 0"#]
    );
    assert_eq!(
        check(json!({"x": 200, "name": "n"})),
        [r#"spec: Invalid value: "object": x is too big"#]
    );
    assert_eq!(
        check(json!({"x": 5, "name": "n"})),
        [r#"spec: Invalid value: "object": x may not be 5"#]
    );
    assert_eq!(
        check(json!({"x": 6, "name": "n"})),
        [r#"spec: Invalid value: "object": fallback"#],
        "a messageExpression that is not a string falls back to the message"
    );
    assert_eq!(
        check(json!({"x": 1})),
        ["spec.name: Required value: name is required"]
    );
    assert_eq!(
        check(json!({"x": 7, "name": "n"})),
        ["spec: Forbidden: seven is forbidden"]
    );
    assert_eq!(
        check(json!({"x": 8, "name": "n"})),
        [r#"spec: Duplicate value: "object""#]
    );
    assert_eq!(
        check(json!({"x": 9, "name": "n"})),
        [r#"spec.labels[a.b]: Invalid value: "object": failed rule: self.x != 9"#]
    );
    assert_eq!(
        check(json!({"x": 1, "name": "n", "labels": {"long": "v"}})),
        [r#"spec.labels: Invalid value: "object": keys are short"#]
    );
    assert_eq!(
        check(json!({"x": 1, "name": "n", "nope": 1})),
        Vec::<String>::new(),
        "a field without a schema is not looked at"
    );
    let int_or_string = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"port": {"x-kubernetes-int-or-string": true,
            "x-kubernetes-validations": [{"rule": "type(self) == int || self.endsWith('%')"}]}}}}});
    assert!(run(int_or_string.clone(), json!({"spec": {"port": 80}}), None).is_empty());
    assert!(run(
        int_or_string.clone(),
        json!({"spec": {"port": "50%"}}),
        None
    )
    .is_empty());
    assert_eq!(
        run(int_or_string, json!({"spec": {"port": "http"}}), None),
        [r#"spec.port: Invalid value: "": failed rule: type(self) == int || self.endsWith('%')"#]
    );
}

#[test]
fn transition_rules_run_only_where_an_old_value_correlates() {
    let schema = spec_schema(json!([
        {"rule": "self.x >= oldSelf.x", "message": "x may not decrease"},
        {"rule": "!has(oldSelf.name) || self.name == oldSelf.name", "messageExpression": "'name is immutable, was ' + oldSelf.name"},
    ]));
    let object = |x: i64, name: &str| json!({"spec": {"x": x, "name": name}});
    assert!(
        run(schema.clone(), object(1, "a"), None).is_empty(),
        "create: no old value, transition rules skipped"
    );
    assert!(run(schema.clone(), object(2, "a"), Some(object(1, "a"))).is_empty());
    assert_eq!(
        run(schema.clone(), object(0, "b"), Some(object(1, "a"))),
        [
            r#"spec: Invalid value: "object": x may not decrease"#,
            r#"spec: Invalid value: "object": name is immutable, was a"#,
        ]
    );
    // Map-list items correlate by key; set items never do.
    let ports = |port: i64| {
        json!({"spec": {"x": 1, "name": "a",
            "ports": [{"name": "http", "port": port}, {"name": "new", "port": 1}],
            "tags": ["t"]}})
    };
    let old = json!({"spec": {"x": 1, "name": "a",
        "ports": [{"name": "other", "port": 9000}, {"name": "http", "port": 80}],
        "tags": ["u"]}});
    assert!(run(schema.clone(), ports(81), Some(old.clone())).is_empty());
    assert_eq!(
        run(schema, ports(79), Some(old)),
        [r#"spec.ports[0]: Invalid value: "object": port may not decrease"#]
    );
}

#[test]
fn optional_old_self_binds_an_optional() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
    "properties": {"x": {"type": "integer"}},
    "x-kubernetes-validations": [
        {"rule": "!oldSelf.hasValue() || self.x >= oldSelf.value().x", "optionalOldSelf": true,
         "message": "x may not decrease"},
        {"rule": "oldSelf.hasValue() || self.x < 10", "optionalOldSelf": true,
         "message": "x starts below 10"},
    ]}}});
    assert!(run(schema.clone(), json!({"spec": {"x": 5}}), None).is_empty());
    assert_eq!(
        run(schema.clone(), json!({"spec": {"x": 50}}), None),
        [r#"spec: Invalid value: "object": x starts below 10"#]
    );
    assert_eq!(
        run(
            schema,
            json!({"spec": {"x": 4}}),
            Some(json!({"spec": {"x": 5}}))
        ),
        [r#"spec: Invalid value: "object": x may not decrease"#]
    );
}

#[test]
fn unchanged_values_ratchet_rules_without_old_self() {
    let schema = spec_schema(json!([{"rule": "self.x > 10"}]));
    let old = json!({"spec": {"x": 1, "name": "a"}});
    assert!(
        run(schema.clone(), old.clone(), Some(old.clone())).is_empty(),
        "a value the update left unchanged is not reported"
    );
    assert_eq!(
        run(schema, json!({"spec": {"x": 2, "name": "a"}}), Some(old)),
        [r#"spec: Invalid value: "object": failed rule: self.x > 10"#]
    );
}

#[test]
fn root_rules_see_type_and_object_meta() {
    let schema = json!({"type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('ok-')", "message": "bad name"},
            {"rule": "!has(self.metadata.labels)", "message": "labels are not visible"},
            {"rule": "self.kind == 'Widget' && self.apiVersion == 'example.com/v1'"},
        ],
        "properties": {"spec": {"type": "object"}}});
    let object = |name: &str| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": name, "labels": {"a": "b"}}, "spec": {}})
    };
    assert!(run(schema.clone(), object("ok-1"), None).is_empty());
    assert_eq!(
        run(schema, object("no"), None),
        [r#"<nil>: Invalid value: "object": bad name"#]
    );
}

#[test]
fn field_paths_normalize_as_valid_field_path() {
    let model = compile_custom_resource(&spec_schema(json!([]))).expect("compiles");
    let root = model.schema_root().expect("root");
    let spec = model.node(root).property("spec").expect("spec");
    let path = |text: &str| super::super::cel_rules::normalized_field_path(&model, spec, text);
    assert_eq!(path(".name").as_deref(), Some("name"));
    assert_eq!(path(".labels.a").as_deref(), Some("labels[a]"));
    assert_eq!(path("['labels']['x.y']").as_deref(), Some("labels[x.y]"));
    assert_eq!(path(".nope"), None);
    assert_eq!(path("name"), None);
}

/// Shallow rules run on the request's thread, deeper ones on a thread with
/// the parser's stack; both are judged alike.
#[test]
fn deep_rules_are_evaluated_on_a_large_stack_and_shallow_ones_inline() {
    let types = [json!({"type": "integer"})];
    let values = [json!(200)];
    let sum = |terms: usize| vec!["self.val1"; terms].join(" + ");
    for terms in [3, crate::cel_env::SHALLOW_DEPTH + 20, 200] {
        let holds = format!("{} == {}", sum(terms), 200 * terms);
        let fails = format!("{} == 0", sum(terms));
        let model = compile_custom_resource(&json!({"type": "object",
            "properties": {"val1": types[0]},
            "x-kubernetes-validations": [{"rule": holds}]}))
        .expect("schema compiles");
        let rules = CelRules::compile(&model);
        assert_eq!(
            rules.depth() > crate::cel_env::SHALLOW_DEPTH,
            terms > crate::cel_env::SHALLOW_DEPTH,
            "{terms} terms"
        );
        assert_valid(&types, &values, &[&holds]);
        assert_eq!(
            root_rule(&types, &values, &fails),
            vec![format!(
                "<nil>: Invalid value: \"object\": failed rule: {fails}"
            )],
            "{terms} terms"
        );
    }
}

/// A root with a list `items` of strings (at most `max_length` long, at
/// most `max_items` of them) that carries `rules`; the errors of `items`,
/// with the rules estimated from the schema (the server's way) and
/// without (every rule counted), which must agree.
fn item_rules(max_length: usize, max_items: usize, rules: &[&str], items: Value) -> Vec<String> {
    let rules: Vec<Value> = rules.iter().map(|rule| json!({"rule": rule})).collect();
    let schema = json!({"type": "object", "properties": {"items": {
        "type": "array", "maxItems": max_items,
        "items": {"type": "string", "maxLength": max_length,
                  "x-kubernetes-validations": rules}}}});
    let object = json!({ "items": items });
    let model = compile_custom_resource(&schema).expect("schema compiles");
    let errors = |rules: &CelRules| -> Vec<String> {
        validate(&object, None, &model, rules)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let estimated = errors(&CelRules::compile_estimated(&model, Some(&schema)));
    assert_eq!(estimated, errors(&CelRules::compile(&model)));
    estimated
}

#[test]
fn the_runtime_budget_runs_out_across_items() {
    // Each evaluation costs 250002 (`self` twice, contains 500 × 500);
    // three rules per item: the budget (10M) has 249922 left at item 13.
    let item = "ab".repeat(2500);
    let rule = "self.contains(self)";
    let errors = item_rules(5000, 39, &[rule, rule, rule], json!(vec![item; 39]));
    assert_eq!(
        errors,
        vec![
            "items[13]: Invalid value: \"string\": validation failed due to running out of cost budget, no further validation rules will be run"
        ]
    );
}

#[test]
fn cheap_items_stay_under_the_budget() {
    let item = "ab".repeat(2500);
    let rule = "self.contains(self)";
    assert_eq!(
        item_rules(5000, 39, &[rule, rule, rule], json!(vec![item; 13])),
        Vec::<String>::new()
    );
}

#[test]
fn one_evaluation_over_the_per_call_limit_is_cancelled() {
    // 2000 × 2000: over PerCallLimit (1M); the later items are not run.
    let long = "ab".repeat(10_000);
    let errors = item_rules(
        20_000,
        2,
        &["self.contains(self)"],
        json!(["short", long, long]),
    );
    assert_eq!(
        errors,
        vec![
            "items[1]: Invalid value: \"string\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.contains(self)"
        ]
    );
}

#[test]
fn every_rule_of_a_schema_is_estimated() {
    let rule = json!([{"rule": "self.size() < 10"}]);
    let schema = json!({"type": "object", "x-kubernetes-validations": [{"rule": "has(self.spec)"}],
        "properties": {"spec": {"type": "object", "properties": {
            "list": {"type": "array", "maxItems": 4,
                     "items": {"type": "string", "maxLength": 8, "x-kubernetes-validations": rule}},
            "map": {"type": "object", "maxProperties": 4,
                    "additionalProperties": {"type": "string", "maxLength": 8,
                                             "x-kubernetes-validations": rule}},
            "all": {"type": "string", "maxLength": 8,
                    "allOf": [{"x-kubernetes-validations": rule}]}}}}});
    let model = compile_custom_resource(&schema).expect("schema compiles");
    let rules = CelRules::compile_estimated(&model, Some(&schema));
    let estimates: Vec<u64> = model
        .own_ids()
        .flat_map(|id| rules.of(id).iter().map(|rule| rule.estimated_cost))
        .collect();
    assert_eq!(estimates.len(), 4);
    assert!(estimates.iter().all(|cost| *cost < 10), "{estimates:?}");
}
