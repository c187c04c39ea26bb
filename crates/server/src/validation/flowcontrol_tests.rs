//! Cases from kube's `TestFlowSchemaValidation`,
//! `TestPriorityLevelConfigurationValidation`, `TestValidateNonResourceURLPath`
//! (`flowcontrol/validation/validation_test.go`), and the server's own
//! bootstrap objects, which must pass.

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn bootstrap_objects_pass() {
    for object in bootstrap::mandatory_flow_schemas()
        .into_iter()
        .chain(bootstrap::suggested_flow_schemas())
    {
        assert!(
            flow_schema(&object).is_empty(),
            "{object}: {:?}",
            texts(&flow_schema(&object))
        );
    }
    for object in bootstrap::mandatory_priority_levels()
        .into_iter()
        .chain(bootstrap::suggested_priority_levels())
    {
        let errors = priority_level_configuration(&object);
        assert!(errors.is_empty(), "{object}: {:?}", texts(&errors));
    }
}

fn schema(name: &str, spec: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": spec})
}

fn rule(subjects: Value, resource_rules: Value) -> Value {
    json!({"subjects": subjects, "resourceRules": resource_rules})
}

fn user() -> Value {
    json!([{"kind": "User", "user": {"name": "noxu"}}])
}

fn resource_rule(verbs: Value, namespaces: Value) -> Value {
    json!([{"verbs": verbs, "apiGroups": ["*"], "resources": ["*"], "namespaces": namespaces}])
}

#[test]
fn flow_schemas_as_kube_validates_them() {
    let valid = schema(
        "system-foo",
        json!({"matchingPrecedence": 50,
        "priorityLevelConfiguration": {"name": "system-bar"},
        "rules": [rule(user(), resource_rule(json!(["get"]), json!(["default"])))]}),
    );
    assert!(
        flow_schema(&valid).is_empty(),
        "{:?}",
        texts(&flow_schema(&valid))
    );
    // The default precedence (1000) applies when it is missing.
    assert!(flow_schema(&schema(
        "f",
        json!({"priorityLevelConfiguration": {"name": "p"}})
    ))
    .is_empty());
    let cases = [
        (schema("f", json!({"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "p"}})),
            vec!["spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"]),
        (schema("f", json!({"matchingPrecedence": 10001, "priorityLevelConfiguration": {"name": "p"}})),
            vec!["spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"]),
        (schema("f", json!({"matchingPrecedence": -1, "priorityLevelConfiguration": {"name": "p"}})),
            vec!["spec.matchingPrecedence: Invalid value: -1: must be a positive value"]),
        (schema("f", json!({})), vec!["spec.priorityLevelConfiguration.name: Required value: must reference a priority level"]),
        (schema("f", json!({"priorityLevelConfiguration": {"name": "p"}, "distinguisherMethod": {"type": "ByBogus"}})),
            vec!["spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:\"ByBogus\"}: supported values: \"ByNamespace\", \"ByUser\""]),
        (schema("f", json!({"priorityLevelConfiguration": {"name": "p"}, "rules": [{"subjects": []}]})),
            vec![
                "spec.rules[0].subjects: Required value: subjects must contain at least one value",
                "spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty",
            ]),
        (schema("f", json!({"priorityLevelConfiguration": {"name": "p"}, "rules": [rule(json!([{"kind": "ServiceAccount", "serviceAccount": {"name": "a"}, "user": {"name": "u"}}]), resource_rule(json!(["*", "get"]), json!(["*", "default"])))]})),
            vec![
                "spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account",
                "spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User'",
                "spec.rules[0].resourceRules[0].verbs: Invalid value: []string{\"*\", \"get\"}: if '*' is present, must not specify other verbs",
                "spec.rules[0].resourceRules[0].namespaces: Invalid value: []string{\"*\", \"default\"}: if '*' is present, must not specify other namespaces",
            ]),
        (schema("f", json!({"priorityLevelConfiguration": {"name": "p"}, "rules": [rule(json!([{"kind": "Robot"}, {"kind": "Group"}]), resource_rule(json!(["feed"]), json!([])))]})),
            vec![
                "spec.rules[0].subjects[0].kind: Unsupported value: \"Robot\": supported values: \"Group\", \"ServiceAccount\", \"User\"",
                "spec.rules[0].subjects[1].group: Required value: group is required when subject kind is 'Group'",
                "spec.rules[0].resourceRules[0].verbs: Unsupported value: []string{\"feed\"}: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\"",
                "spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace",
            ]),
        (schema("f", json!({"priorityLevelConfiguration": {"name": "p"}, "rules": [rule(user(), resource_rule(json!(["get"]), json!(["-bad"])))]})),
            vec!["spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: \"-bad\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
        (schema("f", json!({"priorityLevelConfiguration": {"name": "p"}, "rules": [{"subjects": user(), "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/a/*/b", "healthz", "/a b", "//x", ""]}]}]})),
            vec![
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"/a/*/b\": wildcard can only do suffix matching",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: \"healthz\": must start with slash",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[2]: Invalid value: \"/a b\": must not contain white-space",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[3]: Invalid value: \"//x\": must not contain double slash",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[4]: Invalid value: \"\": must not be empty",
            ]),
    ];
    for (object, expected) in cases {
        assert_eq!(texts(&flow_schema(&object)), expected, "{object}");
    }
}

#[test]
fn mandatory_flow_schemas_keep_their_spec() {
    let mut exempt = bootstrap::mandatory_flow_schemas().remove(0);
    exempt["spec"]["matchingPrecedence"] = json!(2);
    let errors = texts(&flow_schema(&exempt));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("spec: Invalid value: "), "{errors:?}");
    assert!(
        errors[0].ends_with(": spec of 'exempt' must equal the fixed value"),
        "{errors:?}"
    );
}

fn level(name: &str, spec: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": spec})
}

#[test]
fn priority_levels_as_kube_validates_them() {
    let queue = |queuing: Value| {
        json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
        "limitResponse": {"type": "Queue", "queuing": queuing}}})
    };
    assert!(priority_level_configuration(&level("p", queue(json!({})))).is_empty());
    assert!(priority_level_configuration(&level("p", json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 0, "limitResponse": {"type": "Reject"}}}))).is_empty());
    let cases = [
        (level("p", json!({"type": "Exempt"})), vec!["spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"]),
        (level("p", json!({"type": "Limited"})), vec!["spec.limited: Required value: must not be empty when type is Limited"]),
        (level("p", json!({"type": "Bogus"})), vec!["spec.type: Unsupported value: \"Bogus\": supported values: \"Exempt\", \"Limited\""]),
        (level("p", json!({"type": "Limited", "exempt": {}, "limited": {"nominalConcurrencyShares": -1, "lendablePercent": 101, "borrowingLimitPercent": -1, "limitResponse": {"type": "Reject", "queuing": {}}}})),
            vec![
                "spec.exempt: Forbidden: must be nil if the type is Limited",
                "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
                "spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited",
                "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
                "spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer",
            ]),
        (level("p", json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue"}}})),
            vec!["spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited"]),
        (level("p", queue(json!({"queues": 512, "handSize": 8, "queueLengthLimit": -1}))),
            vec![
                "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive",
                "spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy bits of deckSize 512 and handSize 8 should not be greater than 60",
            ]),
        (level("p", queue(json!({"queues": 7, "handSize": 8}))),
            vec!["spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (7)"]),
        (level("p", queue(json!({"queues": 10_000_001, "handSize": -1}))),
            vec![
                "spec.limited.limitResponse.queuing.queues: Invalid value: 10000001: must not be greater than 10000000",
                "spec.limited.limitResponse.queuing.handSize: Invalid value: -1: must be positive",
            ]),
        (level("exempt", json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": -1, "lendablePercent": 101}})),
            vec![
                "spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
                "spec.exempt.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
            ]),
    ];
    for (object, expected) in cases {
        assert_eq!(
            texts(&priority_level_configuration(&object)),
            expected,
            "{object}"
        );
    }
}

#[test]
fn mandatory_levels_keep_their_spec_but_exempts_own_field() {
    let mut exempt = bootstrap::mandatory_priority_levels().remove(0);
    exempt["spec"]["exempt"] = json!({"nominalConcurrencyShares": 10, "lendablePercent": 50});
    assert!(priority_level_configuration(&exempt).is_empty());
    let mut catch_all = bootstrap::mandatory_priority_levels().remove(1);
    catch_all["spec"]["limited"]["nominalConcurrencyShares"] = json!(6);
    let errors = texts(&priority_level_configuration(&catch_all));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].ends_with(": spec of 'catch-all' must equal the fixed value"),
        "{errors:?}"
    );
    // Without the fields v1 defaults, the catch-all level is still the fixed one.
    let mut defaulted = bootstrap::mandatory_priority_levels().remove(1);
    if let Some(limited) = defaulted["spec"]["limited"].as_object_mut() {
        limited.remove("lendablePercent");
    }
    assert!(priority_level_configuration(&defaulted).is_empty());
}
