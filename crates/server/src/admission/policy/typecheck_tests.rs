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
