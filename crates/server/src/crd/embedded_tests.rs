//! Embedded resources against kube's texts (`objectmeta/validation.go`,
//! `ValidateObjectMeta`), as they read in the 422's message.

use serde_json::{json, Value};

use super::*;
use crate::schema::compile_values;

fn check(object: Value) -> Vec<String> {
    let schema = compile_values(&json!({"type": "object", "properties": {"spec": {
    "type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "x-kubernetes-preserve-unknown-fields": true},
        "items": {"type": "array", "items": {"type": "object",
                  "x-kubernetes-embedded-resource": true,
                  "x-kubernetes-preserve-unknown-fields": true}},
        "byName": {"type": "object", "additionalProperties": {"type": "object",
                   "x-kubernetes-embedded-resource": true,
                   "x-kubernetes-preserve-unknown-fields": true}},
    }}}}));
    validate(&json!({ "spec": object }), &schema)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn type_fields_are_required_and_checked() {
    assert_eq!(
        check(json!({"template": {}})),
        [
            "spec.template.apiVersion: Required value",
            "spec.template.kind: Required value",
        ]
    );
    assert_eq!(
        check(json!({"template": {"apiVersion": "", "kind": ""}})),
        [
            "spec.template.apiVersion: Required value",
            "spec.template.kind: Required value",
        ]
    );
    assert_eq!(
        check(json!({"template": {"apiVersion": "a/b/c", "kind": "Foo_Bar"}})),
        [
            r#"spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
            r#"spec.template.kind: Invalid value: "Foo_Bar": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
        ]
    );
    assert_eq!(
        check(json!({"template": {"apiVersion": 1, "kind": true}})),
        [
            "spec.template.apiVersion: Invalid value: 1: must be a string",
            "spec.template.kind: Invalid value: true: must be a string",
        ]
    );
    // Mixed case is fine, as is a core or grouped version.
    assert!(check(json!({"template": {"apiVersion": "v1", "kind": "ConfigMap"}})).is_empty());
    assert!(check(
        json!({"template": {"apiVersion": "apps/v1", "kind": "Deployment",
                                      "metadata": {"name": "Web_1"}}})
    )
    .is_empty());
}

#[test]
fn paths_follow_items_and_additional_properties() {
    assert_eq!(
        check(json!({
            "items": [{"apiVersion": "v1", "kind": "Pod"}, {"apiVersion": "v1"}],
            "byName": {"a": {"kind": "Pod"}},
        })),
        [
            "spec.byName[a].apiVersion: Required value",
            "spec.items[1].kind: Required value",
        ]
    );
}

#[test]
fn metadata_follows_object_meta_rules() {
    let template = |metadata: Value| json!({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": metadata}});
    assert_eq!(
        check(template(json!({"name": "a/b", "generateName": "x%"}))),
        [
            r#"spec.template.metadata.generateName: Invalid value: "x%": may not contain '%'"#,
            r#"spec.template.metadata.name: Invalid value: "a/b": may not contain '/'"#,
        ]
    );
    assert_eq!(
        check(template(json!({"name": ".."}))),
        [r#"spec.template.metadata.name: Invalid value: "..": may not be '..'"#]
    );
    assert_eq!(
        check(template(json!({"namespace": "Bad_NS", "generation": -1}))),
        [
            r#"spec.template.metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#,
            "spec.template.metadata.generation: Invalid value: -1: must be greater than or equal to 0",
        ]
    );
    assert_eq!(
        check(template(
            json!({"labels": {"a": "b c"}, "annotations": {"-x": "y"}})
        )),
        [
            r#"spec.template.metadata.labels: Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#,
            r#"spec.template.metadata.annotations: Invalid value: "-x": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#,
        ]
    );
    assert_eq!(
        check(template(
            json!({"ownerReferences": [{"apiVersion": "apps/", "kind": "", "name": "n", "uid": "u"}],
                              "finalizers": ["orphan", "foregroundDeletion"]})
        )),
        [
            r#"spec.template.metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty"#,
            r#"spec.template.metadata.ownerReferences.kind: Invalid value: "": must not be empty"#,
            r#"spec.template.metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set"#,
        ]
    );
    // No name is fine (kube validates it as "fakename"), as is null metadata.
    assert!(check(template(json!({"labels": {"app": "web"}}))).is_empty());
    assert!(check(template(json!(null))).is_empty());
}

#[test]
fn nodes_that_are_not_embedded_are_not_checked() {
    let schema = compile_values(&json!({"type": "object", "properties": {"spec": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": true}}}));
    assert!(validate(&json!({"spec": {"metadata": {"name": "a/b"}}}), &schema).is_empty());
}
