//! The estimator against costs worked out by hand from cel-go's
//! `checker/cost.go` rules and kube's schema sizes.

use serde_json::json;

use super::{estimate, estimate_with_bounded_inputs, max_cardinality, max_size, Range};

fn cost(expression: &str, schema: serde_json::Value) -> Range {
    let program = crate::cel_env::env()
        .compile(expression)
        .expect("the expression parses");
    estimate(program.expression(), &schema)
}

#[test]
fn kubes_sizes_from_the_schema() {
    assert_eq!(
        max_size(&json!({"type": "string", "maxLength": 64})),
        Some(64)
    );
    assert_eq!(max_size(&json!({"type": "string"})), Some(3_145_726));
    assert_eq!(
        max_size(&json!({"type": "string", "enum": ["a", "abc"]})),
        Some(3)
    );
    assert_eq!(
        max_size(&json!({"type": "array", "items": {"type": "string"}})),
        Some(3_145_726 / 3)
    );
    assert_eq!(
        max_size(&json!({"type": "array", "maxItems": 5, "items": {"type": "string"}})),
        Some(5)
    );
    assert_eq!(
        max_size(&json!({"type": "object", "additionalProperties": {"type": "integer"}})),
        Some(3_145_726 / 7)
    );
    assert_eq!(max_size(&json!({"type": "integer"})), None);
    assert_eq!(max_cardinality(2), 1_048_576);
}

#[test]
fn scalar_rules_cost_one_per_identifier_and_call() {
    let schema = json!({"type": "string", "maxLength": 10});
    // ident 1 + size() 1 + `<` on ints 1
    assert_eq!(cost("self.size() < 10", schema), Range::fixed(3));
    let schema = json!({"type": "object", "properties": {"replicas": {"type": "integer"}}});
    // ident 1 + select 1 + `>=` 1
    assert_eq!(cost("self.replicas >= 0", schema), Range::fixed(3));
}

#[test]
fn string_comparisons_traverse_the_shorter_string() {
    let schema = json!({"type": "string", "maxLength": 100});
    // ident 1 + ceil(min(100, 3) * 0.1) = 1
    assert_eq!(cost("self == 'abc'", schema), Range::fixed(2));
}

#[test]
fn a_comprehension_costs_its_range_times_its_loop() {
    let schema = json!({
        "type": "array",
        "maxItems": 10,
        "items": {"type": "string", "maxLength": 20}
    });
    // range 1, init 0, result 1; per item: @not_strictly_false(@result) 2,
    // `@result && x.matches('^a$')`: 1 + (1 + ceil(21 * 0.1) * ceil(3 * 0.25)) = 5
    let estimate = cost("self.all(x, x.matches('^a$'))", schema);
    assert_eq!(estimate.max, 1 + 1 + 10 * 7);
}

#[test]
fn an_unbounded_list_of_unbounded_strings_is_far_over_budget() {
    let schema = json!({"type": "array", "items": {"type": "string"}});
    let estimate = cost("self.all(x, x.matches('^[a-z]+$'))", schema);
    assert!(estimate.max > 100 * 10_000_000, "{estimate:?}");
    let bounded = json!({
        "type": "array",
        "maxItems": 100,
        "items": {"type": "string", "maxLength": 253}
    });
    let estimate = cost("self.all(x, x.matches('^[a-z]+$'))", bounded);
    assert!(estimate.max < 10_000, "{estimate:?}");
}

#[test]
fn nested_comprehensions_multiply() {
    let schema = json!({
        "type": "array",
        "maxItems": 100,
        "items": {"type": "array", "maxItems": 100, "items": {"type": "integer"}}
    });
    let estimate = cost("self.all(x, x.all(y, y > 0))", schema);
    // inner per item: 2 + 1 + (1 + 1) = 5; inner total 1 + 1 + 100 * 5 = 502
    // outer per item: 2 + 1 + 502 = 505; total 1 + 1 + 100 * 505
    assert_eq!(estimate.max, 2 + 100 * 505);
}

#[test]
fn numbers_and_converted_scalars_are_not_strings() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}}});
    // idents 2 + selects 2 + `+` 1 + `<` 1
    assert_eq!(
        cost("self.a + self.b < 10", schema.clone()),
        Range::fixed(6)
    );
    let estimate = cost("'a is ' + string(self.a)", schema);
    assert!(estimate.max < 10, "{estimate:?}");
}

#[test]
fn inputs_of_a_known_extent_bound_what_no_schema_sizes() {
    let bounded = |expression: &str, bound: u64| {
        let program = crate::cel_env::env().compile(expression).expect("compiles");
        estimate_with_bounded_inputs(program.expression(), &["object", "request"], bound)
    };
    // Without a schema a map's size is unknown: `in` may traverse it all.
    let labels = "'app' in object.metadata.labels";
    let program = crate::cel_env::env().compile(labels).expect("compiles");
    assert_eq!(
        estimate(program.expression(), &serde_json::Value::Null).max,
        u64::MAX
    );
    // Bounded by the inputs' longest list or map: selections, indexes
    // and comprehension variables of an input are inputs too.
    // `object`, `.metadata`, `.labels` cost 1 each, the literal nothing.
    assert_eq!(bounded(labels, 1024).max, 1024 + 3);
    assert!(bounded("object.spec.items.all(i, i.name.size() < 10)", 1024).max < 1_000_000);
    assert!(bounded("object.spec.items[0].name.contains(request.name)", 1024).max < 1_000_000);
    // A variable that is not an input keeps its unknown size.
    assert_eq!(bounded("'app' in variables.labels", 1024).max, u64::MAX);
    // A sum or comparison of values of unknown size (variables, function
    // results) is not bounded by the inputs: `variables.v + variables.v`
    // doubles whatever `v` is.
    assert_eq!(bounded("variables.v + variables.v", 1024).max, u64::MAX);
    assert!(bounded("variables.count + 1 > 3", 1024).max < 1_000);
    assert!(bounded("object.metadata.name + 'x'", 1024).max < 1_000);
    // Quadratic work on large inputs is still over the per-call limit.
    assert!(
        bounded("object.data.a.contains(object.data.b)", 1 << 20).max > 1_000_000,
        "a counted expression stays counted"
    );
}
