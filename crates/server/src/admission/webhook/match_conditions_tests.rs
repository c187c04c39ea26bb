use serde_json::json;

use super::*;
use crate::admission::attributes::{GroupVersionName, Operation};

fn attributes<'a>(old: Option<&'a Value>) -> Attributes<'a> {
    Attributes {
        operation: if old.is_some() {
            Operation::Update
        } else {
            Operation::Create
        },
        kind: GroupVersionName::new("", "v1", "ConfigMap"),
        resource: GroupVersionName::new("", "v1", "configmaps"),
        subresource: "",
        name: "cm",
        namespace: "default",
        old_object: old,
        options: Value::Null,
        dry_run: false,
        user: None,
    }
}

fn conditions(expressions: &[&str]) -> Vec<MatchCondition> {
    let list: Vec<Value> = expressions
        .iter()
        .enumerate()
        .map(|(index, expression)| json!({"name": format!("c{index}"), "expression": expression}))
        .collect();
    compile(Some(&Value::Array(list)))
}

fn object() -> Value {
    json!({"metadata": {"name": "cm", "labels": {"team": "a"}}, "data": {"k": "v"}})
}

#[test]
fn every_condition_must_be_true() {
    let object = object();
    let outcome = |expressions: &[&str], policy| {
        evaluate(
            &conditions(expressions),
            policy,
            &attributes(None),
            Some(&object),
        )
    };
    assert_eq!(outcome(&[], FailurePolicy::Fail), Outcome::Call);
    assert_eq!(
        outcome(
            &[
                "object.metadata.labels.team == 'a'",
                "request.operation == 'CREATE' && request.resource.resource == 'configmaps'",
                "oldObject == null",
                "request.namespace == 'default' && request.name == 'cm'",
            ],
            FailurePolicy::Fail
        ),
        Outcome::Call
    );
    assert_eq!(
        outcome(&["true", "object.data.k == 'other'"], FailurePolicy::Fail),
        Outcome::Skip
    );
}

#[test]
fn a_false_condition_wins_over_errors() {
    let object = object();
    let outcome = evaluate(
        &conditions(&["object.missing == 1", "false"]),
        FailurePolicy::Fail,
        &attributes(None),
        Some(&object),
    );
    assert_eq!(outcome, Outcome::Skip);
}

#[test]
fn errors_follow_the_failure_policy() {
    let object = object();
    let failing = conditions(&["object.metadata.missing == 'x'", "true"]);
    assert_eq!(
        evaluate(
            &failing,
            FailurePolicy::Ignore,
            &attributes(None),
            Some(&object)
        ),
        Outcome::Skip
    );
    assert_eq!(
        evaluate(
            &failing,
            FailurePolicy::Fail,
            &attributes(None),
            Some(&object)
        ),
        Outcome::Refuse(
            "expression 'object.metadata.missing == 'x'' resulted in error: no such key: missing"
                .into()
        )
    );
    let two = conditions(&["1 / 0 == 1", "object.nope"]);
    assert_eq!(
        evaluate(&two, FailurePolicy::Fail, &attributes(None), Some(&object)),
        Outcome::Refuse(
            "[expression '1 / 0 == 1' resulted in error: division by zero, expression 'object.nope' resulted in error: no such key: nope]"
                .into()
        )
    );
}

#[test]
fn updates_see_the_old_object() {
    let object = object();
    let old = json!({"metadata": {"name": "cm"}, "data": {"k": "before"}});
    let outcome = evaluate(
        &conditions(&["oldObject.data.k == 'before' && object.data.k == 'v'"]),
        FailurePolicy::Fail,
        &attributes(Some(&old)),
        Some(&object),
    );
    assert_eq!(outcome, Outcome::Call);
}

#[test]
fn kubes_libraries_are_there() {
    let object = json!({"metadata": {"name": "cm"}, "data": {"a": "3", "b": "1"}});
    let outcome = evaluate(
        &conditions(&["object.data.a.find('[0-9]') == '3' && [3, 1].max() == 3"]),
        FailurePolicy::Fail,
        &attributes(None),
        Some(&object),
    );
    assert_eq!(outcome, Outcome::Call);
}

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn configurations_are_validated_as_kube_validates_them() {
    let mut errors = Vec::new();
    validate(
        Some(&json!([
            {"name": "ok", "expression": "true"},
            {"name": "ok", "expression": "  "},
            {"name": "", "expression": "object.x =="},
            {"name": "bad name!", "expression": "true"},
        ])),
        "webhooks[0].matchConditions",
        false,
        &mut errors,
    );
    assert_eq!(
        texts(&errors),
        [
            "webhooks[0].matchConditions[1].expression: Required value",
            r#"webhooks[0].matchConditions[1].name: Duplicate value: "ok""#,
            "webhooks[0].matchConditions[2].expression: Invalid value: \"object.x ==\": compilation failed: ERROR: <input>:1:12: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.x ==\n | ...........^",
            "webhooks[0].matchConditions[2].name: Required value",
            "webhooks[0].matchConditions[3].name: Invalid value: \"bad name!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ]
    );
}

/// Conditions are type-checked as kube compiles them
/// (`plugin/cel/compile.go`): undeclared names and mistyped requests fail
/// with cel-go's issues, a result that is not a bool with `must evaluate
/// to bool`.
#[test]
fn conditions_are_type_checked_as_kube_compiles_them() {
    let mut errors = Vec::new();
    validate(
        Some(&json!([
            {"name": "a", "expression": "object.metadata.name == 'x' && request.userInfo.username != ''"},
            {"name": "b", "expression": "bogus == 1"},
            {"name": "c", "expression": "request.operation + 1 == 2"},
            {"name": "d", "expression": "request.name"},
        ])),
        "webhooks[0].matchConditions",
        false,
        &mut errors,
    );
    assert_eq!(
        texts(&errors),
        [
            "webhooks[0].matchConditions[1].expression: Invalid value: \"bogus == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'bogus' (in container '')\n | bogus == 1\n | ^",
            "webhooks[0].matchConditions[2].expression: Invalid value: \"request.operation + 1 == 2\": compilation failed: ERROR: <input>:1:19: found no matching overload for '_+_' applied to '(string, int)'\n | request.operation + 1 == 2\n | ..................^",
            "webhooks[0].matchConditions[3].expression: Invalid value: \"request.name\": must evaluate to bool",
        ]
    );
}

#[test]
fn at_most_64_conditions() {
    let many: Vec<Value> = (0..65)
        .map(|index| json!({"name": format!("c{index}"), "expression": "true"}))
        .collect();
    let mut errors = Vec::new();
    validate(
        Some(&Value::Array(many)),
        "webhooks[0].matchConditions",
        false,
        &mut errors,
    );
    assert_eq!(
        texts(&errors),
        ["webhooks[0].matchConditions: Too many: 65: must have at most 64 items"]
    );
}

/// Answers `check` as allowed for `create` only, naming what it saw.
#[derive(Debug)]
struct CreateOnly;

impl crate::cel_env::authz::Checker for CreateOnly {
    fn check(
        &self,
        request: &crate::cel_env::authz::CheckRequest,
    ) -> crate::cel_env::authz::Decision {
        let resource = request.resource.clone().unwrap_or_default();
        crate::cel_env::authz::Decision {
            allowed: request.verb == "create",
            reason: format!(
                "{}/{}/{}",
                resource.resource, resource.namespace, resource.name
            ),
            error: None,
        }
    }
}

#[test]
fn conditions_can_ask_the_authorizer() {
    let object = object();
    let outcome = |expression: &str| {
        evaluate_with(
            &conditions(&[expression]),
            FailurePolicy::Fail,
            &attributes(None),
            Some(&object),
            Some(Arc::new(CreateOnly)),
        )
    };
    assert_eq!(
        outcome("authorizer.requestResource.check('create').allowed()"),
        Outcome::Call
    );
    assert_eq!(
        outcome("authorizer.requestResource.check('create').reason() == 'configmaps/default/cm'"),
        Outcome::Call
    );
    assert_eq!(
        outcome("authorizer.group('apps').resource('deployments').check('delete').allowed()"),
        Outcome::Skip
    );
}

#[test]
fn the_runtime_cost_limits_apply_per_the_failure_policy() {
    // 1200 × 1200 for a 12000-character string: over PerCallLimit (1M),
    // within the budget (a cost over what is left of the budget fails on
    // the budget first, as in kube).
    let long = json!({"data": {"k": "ab".repeat(6_000)}});
    let expensive = "object.data.k.contains(object.data.k)";
    let outcome = |expressions: &[&str], policy, object: &Value| {
        evaluate(
            &conditions(expressions),
            policy,
            &attributes(None),
            Some(object),
        )
    };
    assert_eq!(
        outcome(&[expensive], FailurePolicy::Fail, &long),
        Outcome::Refuse(format!(
            "expression '{expensive}' resulted in error: operation cancelled: actual cost limit exceeded"
        ))
    );
    assert_eq!(
        outcome(&[expensive], FailurePolicy::Ignore, &long),
        Outcome::Skip
    );
    let longer = json!({"data": {"k": "ab".repeat(10_000)}});
    assert_eq!(
        outcome(&[expensive], FailurePolicy::Fail, &longer),
        Outcome::Refuse(OUT_OF_BUDGET.into())
    );
    // 640006 each for 8000 characters: three fit in the 2.5M budget of
    // matchConditions, four do not.
    let medium = json!({"data": {"k": "ab".repeat(4_000)}});
    assert_eq!(
        outcome(&[expensive; 3], FailurePolicy::Fail, &medium),
        Outcome::Call
    );
    assert_eq!(
        outcome(&[expensive; 4], FailurePolicy::Fail, &medium),
        Outcome::Refuse(OUT_OF_BUDGET.into())
    );
    assert_eq!(
        outcome(&[expensive; 4], FailurePolicy::Ignore, &medium),
        Outcome::Skip
    );
}
