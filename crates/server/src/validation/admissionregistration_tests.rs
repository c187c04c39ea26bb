//! Cases ported from kube's `admissionregistration/validation/validation_test.go`
//! (`TestValidateValidatingAdmissionPolicy`,
//! `TestValidateValidatingAdmissionPolicyBinding`, `TestValidateRuleWithOperations`,
//! `TestValidateValidatingAdmissionPolicyUpdate`), as kube prints each error.

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(FieldError::to_string).collect()
}

/// A policy as the defaulter leaves it, `spec` merged with `changes`
/// (a null removes a field).
fn policy(changes: Value) -> Value {
    let mut spec = json!({
        "failurePolicy": "Fail",
        "matchConstraints": {
            "matchPolicy": "Equivalent",
            "namespaceSelector": {},
            "objectSelector": {},
            "resourceRules": [{"operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]}],
        },
        "validations": [{"expression": "object.x < 100"}],
    });
    for (key, value) in changes.as_object().into_iter().flatten() {
        if value.is_null() {
            spec.as_object_mut().map(|spec| spec.remove(key));
        } else {
            spec[key] = value.clone();
        }
    }
    json!({"metadata": {"name": "config"}, "spec": spec})
}

fn binding(spec: Value) -> Value {
    json!({"metadata": {"name": "config"}, "spec": spec})
}

#[test]
fn policies_are_refused_as_kube_refuses_them() {
    let rules = |rule: Value| json!({"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}, "resourceRules": [rule]});
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("valid", policy(json!({})), vec![]),
        (
            "no validations and no audit annotations",
            policy(json!({"validations": null})),
            vec![
                "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
                "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item",
            ],
        ),
        (
            "expression required",
            policy(json!({"validations": [{"expression": ""}]})),
            vec!["spec.validations[0].expression: Required value: expression is not specified"],
        ),
        (
            "invalid expression",
            policy(json!({"validations": [{"expression": "object.x in [1, 2, "}]})),
            vec!["spec.validations[0].expression: Invalid value: \"object.x in [1, 2, \": compilation failed: ERROR: <input>:1:20: Syntax error: missing ']' at '<EOF>'\n | object.x in [1, 2, \n | ...................^"],
        ),
        (
            "message with a line break",
            policy(json!({"validations": [{"expression": "true", "message": "hello \n world"}]})),
            vec!["spec.validations[0].message: Invalid value: \"hello \\n world\": message must not contain line breaks"],
        ),
        (
            "blank message",
            policy(json!({"validations": [{"expression": "true", "message": "   "}]})),
            vec!["spec.validations[0].message: Invalid value: \"   \": message must be non-empty if specified"],
        ),
        (
            "blank messageExpression",
            policy(json!({"validations": [{"expression": "true", "messageExpression": "  "}]})),
            vec!["spec.validations[0].messageExpression: Invalid value: \"  \": must be non-empty if specified"],
        ),
        (
            "unknown reason",
            policy(json!({"validations": [{"expression": "true", "reason": "other"}]})),
            vec!["spec.validations[0].reason: Unsupported value: \"other\": supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\""],
        ),
        (
            "failurePolicy required",
            policy(json!({"failurePolicy": null})),
            vec!["spec.failurePolicy: Required value"],
        ),
        (
            "failurePolicy unknown",
            policy(json!({"failurePolicy": "other"})),
            vec!["spec.failurePolicy: Unsupported value: \"other\": supported values: \"Fail\", \"Ignore\""],
        ),
        (
            "matchConstraints required",
            policy(json!({"matchConstraints": null})),
            vec!["spec.matchConstraints: Required value"],
        ),
        (
            "resourceRules required",
            policy(json!({"matchConstraints": {"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}}})),
            vec!["spec.matchConstraints.resourceRules: Required value"],
        ),
        (
            "matchPolicy and selectors required",
            policy(json!({"matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]}]}})),
            vec![
                "spec.matchConstraints.matchPolicy: Required value",
                "spec.matchConstraints.namespaceSelector: Required value",
                "spec.matchConstraints.objectSelector: Required value",
            ],
        ),
        (
            "paramKind apiVersion and kind",
            policy(json!({"paramKind": {"apiVersion": "a/b/c", "kind": "Not_Valid"}})),
            vec![
                "spec.paramKind.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c",
                "spec.paramKind.kind: Invalid value: \"Not_Valid\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ],
        ),
        (
            "paramKind version required",
            policy(json!({"paramKind": {"apiVersion": "example.com/", "kind": "ReplicaLimit"}})),
            vec!["spec.paramKind.apiVersion: Invalid value: \"example.com/\": version must be specified"],
        ),
        (
            "operation wildcard with others",
            policy(json!({"matchConstraints": rules(json!({"operations": ["*", "CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]}))})),
            vec!["spec.matchConstraints.resourceRules[0].operations: Invalid value: []admissionregistration.OperationType{\"*\", \"CREATE\"}: if '*' is present, must not specify other operations"],
        ),
        (
            "unknown operation and scope",
            policy(json!({"matchConstraints": rules(json!({"operations": ["PATCH"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"], "scope": "other"}))})),
            vec![
                "spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
                "spec.matchConstraints.resourceRules[0].scope: Unsupported value: \"other\": supported values: \"*\", \"Cluster\", \"Namespaced\"",
            ],
        ),
        (
            "resources with wildcards",
            policy(json!({"matchConstraints": rules(json!({"operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["*/*", "a"]}))})),
            vec!["spec.matchConstraints.resourceRules[0].resources: Invalid value: []string{\"*/*\", \"a\"}: if '*/*' is present, must not specify other resources"],
        ),
        (
            "resource wildcard with subresource",
            policy(json!({"matchConstraints": rules(json!({"operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a/*", "a/x", "*/y", "b/y"]}))})),
            vec![
                "spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: \"a/x\": if 'a/*' is present, must not specify a/x",
                "spec.matchConstraints.resourceRules[0].resources[3]: Invalid value: \"b/y\": if '*/y' is present, must not specify b/y",
            ],
        ),
        (
            "single wildcard with plain resource",
            policy(json!({"matchConstraints": rules(json!({"operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["*", "a"]}))})),
            vec!["spec.matchConstraints.resourceRules[0].resources: Invalid value: []string{\"*\", \"a\"}: if '*' is present, must not specify other resources without subresources"],
        ),
        (
            "resource names",
            policy(json!({"matchConstraints": rules(json!({"operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"], "resourceNames": ["/./.", "x", "x"]}))})),
            vec![
                "spec.matchConstraints.resourceRules[0].resourceNames[0]: Invalid value: \"/./.\": may not contain '/'",
                "spec.matchConstraints.resourceRules[0].resourceNames[2]: Duplicate value: \"x\"",
            ],
        ),
        (
            "selector operator",
            policy(json!({"matchConstraints": {"matchPolicy": "Equivalent", "objectSelector": {}, "namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "Bad", "values": ["x"]}]}, "resourceRules": [{"operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]}]}})),
            vec!["spec.matchConstraints.namespaceSelector.matchExpressions[0].operator: Invalid value: \"Bad\": not a valid selector operator"],
        ),
        (
            "match conditions",
            policy(json!({"matchConditions": [{"name": "", "expression": "true"}, {"name": "a", "expression": ""}, {"name": "a", "expression": "true"}]})),
            vec![
                "spec.matchConditions[0].name: Required value",
                "spec.matchConditions[1].expression: Required value",
                "spec.matchConditions[2].name: Duplicate value: \"a\"",
            ],
        ),
        (
            "variables",
            policy(json!({"variables": [{"name": "", "expression": ""}, {"name": "4ever", "expression": "1"}, {"name": "in", "expression": "1"}]})),
            vec![
                "spec.variables[0].name: Required value: name is not specified",
                "spec.variables[0].expression: Required value: expression is not specified",
                "spec.variables[1].name: Invalid value: \"4ever\": name is not a valid CEL identifier",
                "spec.variables[2].name: Invalid value: \"in\": name is not a valid CEL identifier",
            ],
        ),
        (
            "audit annotations",
            policy(json!({"validations": null, "auditAnnotations": [
                {"key": "good", "valueExpression": "'x'"},
                {"key": "good", "valueExpression": "'y'"},
                {"key": "bad key", "valueExpression": ""},
            ]})),
            vec![
                "spec.auditAnnotations[1].key: Duplicate value: \"good\"",
                "spec.auditAnnotations[2].key: Invalid value: \"config/bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "spec.auditAnnotations[2].valueExpression: Required value: valueExpression is not specified",
            ],
        ),
    ];
    for (name, object, expected) in cases {
        assert_eq!(
            texts(&validating_admission_policy(&object, None)),
            expected,
            "{name}"
        );
    }
}

#[test]
fn too_many_audit_annotations_are_refused() {
    let annotations: Vec<Value> = (0..21)
        .map(|n| json!({"key": format!("k{n}"), "valueExpression": "'v'"}))
        .collect();
    let errors =
        validating_admission_policy(&policy(json!({"auditAnnotations": annotations})), None);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].field, "spec.auditAnnotations");
    assert!(errors[0]
        .to_string()
        .ends_with("must not have more than 20 auditAnnotations"));
    assert!(errors[0]
        .to_string()
        .contains("admissionregistration.AuditAnnotation{Key:\"k0\", ValueExpression:\"'v'\"}"));
}

#[test]
fn an_update_keeps_match_conditions_it_already_stored() {
    let bad = policy(json!({"matchConditions": [{"name": "a", "expression": "1 +"}]}));
    assert_eq!(validating_admission_policy(&bad, None).len(), 1);
    assert!(validating_admission_policy(&bad, Some(&bad)).is_empty());
    let other_kind = policy(json!({
        "matchConditions": [{"name": "a", "expression": "1 +"}],
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
    }));
    assert_eq!(
        validating_admission_policy(&other_kind, Some(&bad)).len(),
        1
    );
}

#[test]
fn bindings_are_refused_as_kube_refuses_them() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "valid",
            binding(json!({"policyName": "xyzlimit-scale.example.com", "validationActions": ["Deny"],
                "paramRef": {"name": "xyzlimit-scale-setting.example.com", "parameterNotFoundAction": "Allow"}})),
            vec![],
        ),
        (
            "policyName and validationActions required",
            binding(json!({})),
            vec![
                "spec.policyName: Required value",
                "spec.validationActions: Required value: at least one validation action is required",
            ],
        ),
        (
            "invalid policyName",
            binding(json!({"policyName": "Not.Valid", "validationActions": ["Deny"]})),
            vec!["spec.policyName: Invalid value: \"Not.Valid\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
        ),
        (
            "actions unknown, duplicate, Deny with Warn",
            binding(json!({"policyName": "p", "validationActions": ["Deny", "Warn", "Deny", "Nope"]})),
            vec![
                "spec.validationActions[2]: Duplicate value: \"Deny\"",
                "spec.validationActions[3]: Unsupported value: \"Nope\": supported values: \"Audit\", \"Deny\", \"Warn\"",
                "spec.validationActions: Invalid value: []admissionregistration.ValidationAction{\"Deny\", \"Warn\", \"Deny\", \"Nope\"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
            ],
        ),
        (
            "paramRef name and selector",
            binding(json!({"policyName": "p", "validationActions": ["Audit"],
                "paramRef": {"name": "a", "selector": {}, "parameterNotFoundAction": "Maybe"}})),
            vec![
                "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.parameterNotFoundAction: Unsupported value: \"Maybe\": supported values: \"Deny\", \"Allow\"",
            ],
        ),
        (
            "paramRef neither",
            binding(json!({"policyName": "p", "validationActions": ["Audit"], "paramRef": {}})),
            vec![
                "spec.paramRef: Required value: one of name or selector must be specified",
                "spec.paramRef.parameterNotFoundAction: Required value",
            ],
        ),
        (
            "matchResources at kube's misspelt path",
            binding(json!({"policyName": "p", "validationActions": ["Warn"],
                "matchResources": {"matchPolicy": "Other", "namespaceSelector": {}, "objectSelector": {}}})),
            vec!["spec.matchResouces.matchPolicy: Unsupported value: \"Other\": supported values: \"Equivalent\", \"Exact\""],
        ),
    ];
    for (name, object, expected) in cases {
        assert_eq!(
            texts(&validating_admission_policy_binding(&object)),
            expected,
            "{name}"
        );
    }
}

#[test]
fn cel_identifiers_as_kube() {
    for good in ["a", "_x", "a_1", "Inx"] {
        assert!(is_cel_identifier(good), "{good}");
    }
    for bad in ["", "1a", "a-b", "in", "namespace", "null"] {
        assert!(!is_cel_identifier(bad), "{bad}");
    }
}
