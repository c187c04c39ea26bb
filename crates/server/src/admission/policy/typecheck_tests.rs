use serde_json::json;

use super::{check, ExpressionWarning};
use crate::registry::{builtin_resources, Registry};

fn policy(validations: serde_json::Value) -> serde_json::Value {
    json!({
        "metadata": {"name": "p", "generation": 1},
        "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{
                "apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["deployments", "deployments/scale"],
            }]},
            "variables": [{"name": "replicas", "expression": "object.spec.replicas"}],
            "validations": validations,
        }
    })
}

#[test]
fn mistyped_expressions_warn_per_kind_as_kube_does() {
    let registry = Registry::new(builtin_resources());
    let got = check(
        &policy(json!([
            {"expression": "object.spec.replicas > 1 && object.metadata.name.startsWith('a')"},
            {"expression": "object.spec.replicasx > 1"},
            {"expression": "variables.replicas == 'a'", "messageExpression": "params.data.x + 1"},
            {"expression": "request.userInfo.username != '' && params.data['k'] == 'v' && authorizer.group('apps').resource('deployments').check('get').allowed()"},
        ])),
        &registry,
    );
    assert_eq!(
        got,
        vec![
            ExpressionWarning {
                field_ref: "spec.validations[1].expression".into(),
                warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicasx'\n | object.spec.replicasx > 1\n | ...........^\n".into(),
            },
            ExpressionWarning {
                field_ref: "spec.validations[2].expression".into(),
                warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:20: found no matching overload for '_==_' applied to '(int, string)'\n | variables.replicas == 'a'\n | ...................^\n".into(),
            },
            ExpressionWarning {
                field_ref: "spec.validations[2].messageExpression".into(),
                warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:15: found no matching overload for '_+_' applied to '(string, int)'\n | params.data.x + 1\n | ..............^\n".into(),
            },
        ]
    );
}

#[test]
fn wildcards_and_unknown_resources_are_not_checked() {
    let registry = Registry::new(builtin_resources());
    let mut wildcard = policy(json!([{"expression": "object.nope"}]));
    wildcard["spec"]["matchConstraints"]["resourceRules"][0]["apiGroups"] = json!(["*"]);
    assert_eq!(check(&wildcard, &registry), vec![]);
    let mut unknown = policy(json!([{"expression": "object.nope"}]));
    unknown["spec"]["matchConstraints"]["resourceRules"][0]["resources"] = json!(["widgets"]);
    assert_eq!(check(&unknown, &registry), vec![]);
}

#[test]
fn params_are_undeclared_without_a_param_kind() {
    let registry = Registry::new(builtin_resources());
    let mut policy = policy(json!([{"expression": "params.data.x == 'a'"}]));
    policy["spec"]
        .as_object_mut()
        .map(|spec| spec.remove("paramKind"));
    assert_eq!(
        check(&policy, &registry),
        vec![ExpressionWarning {
            field_ref: "spec.validations[0].expression".into(),
            warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.data.x == 'a'\n | ^\n".into(),
        }]
    );
}

/// A registry serving one Established CRD `widgets.example.com/v1` (kind
/// Widget) with `spec.size` an integer.
fn registry_with_widgets() -> Registry {
    let crd = json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
            }}}],
        },
        "status": {
            "acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "conditions": [{"type": "Established", "status": "True"}, {"type": "NamesAccepted", "status": "True"}],
        },
    });
    let custom = crate::crd::served_versions(&crd)
        .into_iter()
        .map(|(definition, facts)| (definition, std::sync::Arc::new(facts)))
        .collect();
    Registry::with_custom(builtin_resources(), custom)
}

#[test]
fn custom_resource_kinds_and_params_are_typed_from_their_schema_with_full_object_meta() {
    let registry = registry_with_widgets();
    let policy = json!({
        "metadata": {"name": "p", "generation": 1},
        "spec": {
            "paramKind": {"apiVersion": "example.com/v1", "kind": "Widget"},
            "matchConstraints": {"resourceRules": [{
                "apiGroups": ["example.com"], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["widgets"],
            }]},
            "validations": [
                {"expression": "object.spec.size <= params.spec.size && 'a' in object.metadata.labels && object.kind == 'Widget'"},
                {"expression": "object.spec.colour == 'red'"},
            ],
        }
    });
    assert_eq!(
        check(&policy, &registry),
        vec![ExpressionWarning {
            field_ref: "spec.validations[1].expression".into(),
            warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'colour'\n | object.spec.colour == 'red'\n | ...........^\n".into(),
        }]
    );
}

#[test]
fn admission_declarations_type_request_and_leave_objects_dyn() {
    use crate::crd::cel_syntax::{check_typed, Expected, TypedError};
    let declarations = super::admission_declarations(false);
    for expression in [
        "object.metadata.name == 'a' && oldObject == null",
        "request.userInfo.groups.exists(g, g == 'x') && request.dryRun",
        "namespaceObject.metadata.labels['team'] == 'a'",
        "authorizer.group('').resource('pods').check('get').allowed()",
        "authorizer.requestResource.check('get').allowed()",
    ] {
        assert!(
            check_typed(expression, &declarations, Expected::Bool).is_ok(),
            "{expression}"
        );
    }
    let error = |expression: &str| match check_typed(expression, &declarations, Expected::Bool) {
        Err(TypedError::Compile(error)) => error.to_string(),
        other => panic!("{expression}: {other:?}"),
    };
    assert_eq!(
        error("params.x == 1"),
        "ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"
    );
    assert_eq!(
        error("request.userName == 'a'"),
        "ERROR: <input>:1:8: undefined field 'userName'\n | request.userName == 'a'\n | .......^"
    );
    assert!(matches!(
        check_typed("request.name", &declarations, Expected::Bool),
        Err(TypedError::ResultType)
    ));
}

/// The policies of `admission_policies.rs` and the bench's `policy-create`
/// scenario are well typed: no warnings (no false positives).
#[test]
fn well_typed_policies_get_no_warnings() {
    let registry = Registry::new(builtin_resources());
    let deployments = policy(json!([
        {"expression": "variables.replicas <= int(params.data.maxReplicas)",
         "messageExpression": "'replicas ' + string(variables.replicas) + ' is more than ' + params.data.maxReplicas"},
        {"expression": "has(object.metadata.labels) && 'team' in object.metadata.labels"},
        {"expression": "object.spec.template.spec.containers.all(c, c.image.contains(':') && !c.image.endsWith(':latest'))"},
        {"expression": "object.spec.selector.matchLabels.size() > 0 && object.metadata.creationTimestamp < timestamp('2100-01-01T00:00:00Z')"},
        {"expression": "request.operation == 'CREATE' || oldObject.spec.replicas != object.spec.replicas"},
        {"expression": "object.spec.strategy.rollingUpdate.maxSurge == 1 || object.spec.strategy.rollingUpdate.maxSurge == '25%'"},
    ]));
    assert_eq!(check(&deployments, &registry), vec![]);
    let mut config_maps = policy(json!([
        {"expression": "has(object.metadata.labels) && 'ferrokube-bench/run' in object.metadata.labels"},
        {"expression": "!has(object.data) || !('payload' in object.data) || size(object.data.payload) <= 1048576"},
        {"expression": "object.metadata.name.startsWith('bench-')"},
    ]));
    config_maps["spec"]["matchConstraints"]["resourceRules"] = json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]);
    assert_eq!(check(&config_maps, &registry), vec![]);
}

/// Expressions of admission configurations are type-checked on write with
/// dyn objects (`validation/admissionregistration.rs` `compile_error`).
#[test]
fn configurations_are_compiled_with_dyn_objects_on_write() {
    use crate::validation::admissionregistration::{compile_error, ExpressionKind};
    assert_eq!(
        compile_error("object.spec.replicas > 1", ExpressionKind::Condition, false),
        None
    );
    assert_eq!(
        compile_error("variables.a + params.b", ExpressionKind::Variable, true),
        None
    );
    assert_eq!(
        compile_error("params.x == 1", ExpressionKind::Condition, false).as_deref(),
        Some("compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^")
    );
    assert_eq!(
        compile_error("request.name", ExpressionKind::Condition, false).as_deref(),
        Some("must evaluate to bool")
    );
    assert_eq!(
        compile_error("1 + 1", ExpressionKind::Message, false).as_deref(),
        Some("must evaluate to string")
    );
    assert_eq!(
        compile_error("1 + 1", ExpressionKind::AuditValue, false).as_deref(),
        Some("must evaluate to one of [string null_type]")
    );
    assert_eq!(
        compile_error("'a' + request.name", ExpressionKind::AuditValue, false),
        None
    );
}
