use serde_json::{json, Value};

use super::shape::MAX_ERRORS;
use super::*;
use crate::openapi::OpenApi;
use crate::registry::builtin_resources;

fn openapi() -> OpenApi {
    OpenApi::new(builtin_resources())
}

fn s(list: &[&str]) -> Vec<String> {
    list.iter().map(|x| x.to_string()).collect()
}

/// kube's test/integration/apiserver/field_validation_test.go invalidBodyJSON.
const INVALID_DEPLOYMENT: &str = r#"
	{
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {
			"name": "test",
			"labels": {"app": "nginx"}
		},
		"spec": {
			"unknown1": "val1",
			"unknownDupe": "valDupe",
			"unknownDupe": "valDupe2",
			"paused": true,
			"paused": false,
			"selector": {
				"matchLabels": {
					"app": "nginx"
				}
			},
			"template": {
				"metadata": {
					"labels": {
						"app": "nginx"
					}
				},
				"spec": {
					"containers": [{
						"name":  "nginx",
						"image": "nginx:latest",
						"unknownNested": "val1",
						"imagePullPolicy": "Always",
						"imagePullPolicy": "Never"
					}]
				}
			}
		}
	}"#;

#[test]
fn deployment_fixture_in_body_order() {
    let api = openapi();
    let errors = strict_errors(
        &api,
        "apps",
        "v1",
        "Deployment",
        INVALID_DEPLOYMENT.as_bytes(),
    );
    assert_eq!(
        errors,
        s(&[
            r#"unknown field "spec.unknown1""#,
            r#"unknown field "spec.unknownDupe""#,
            r#"duplicate field "spec.paused""#,
            r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
            r#"duplicate field "spec.template.spec.containers[0].imagePullPolicy""#,
        ])
    );
    assert_eq!(
        strict_decoding_bad_request("Deployment", "v1", "Deployment", &errors),
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: \
         unknown field \"spec.unknown1\", unknown field \"spec.unknownDupe\", duplicate field \"spec.paused\", \
         unknown field \"spec.template.spec.containers[0].unknownNested\", \
         duplicate field \"spec.template.spec.containers[0].imagePullPolicy\""
    );
    assert_eq!(
        warning_header_value(&errors[0]).as_deref(),
        Some(r#"299 - "unknown field \"spec.unknown1\"""#)
    );
}

#[test]
fn sorted_walk_and_drop() {
    let api = openapi();
    let mut object: Value = serde_json::from_str(INVALID_DEPLOYMENT).expect("json");
    let found = unknown_fields(&api, "apps", "v1", "Deployment", &object);
    // serde_json keeps keys sorted: template < unknown1 < unknownDupe.
    assert_eq!(
        found,
        s(&[
            r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
            r#"unknown field "spec.unknown1""#,
            r#"unknown field "spec.unknownDupe""#,
        ])
    );
    let dropped = drop_unknown_fields(&api, "apps", "v1", "Deployment", &mut object);
    assert_eq!(dropped, found);
    assert!(object["spec"].get("unknown1").is_none());
    assert!(object["spec"]["template"]["spec"]["containers"][0]
        .get("unknownNested")
        .is_none());
    assert_eq!(object["spec"]["paused"], json!(false));
    assert!(unknown_fields(&api, "apps", "v1", "Deployment", &object).is_empty());
}

#[test]
fn configmap_metadata_and_maps() {
    let api = openapi();
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","Metadata":{},"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"},"bogus":1,"managedFields":[{"fieldsV1":{"f:a":{},"f:a":{}}}]},"data":{"k":"v","k":"w"},"spec":{"foo":1}}"#;
    assert_eq!(
        strict_errors(&api, "", "v1", "ConfigMap", body),
        s(&[
            r#"unknown field "Metadata""#,
            r#"duplicate field "metadata.name""#,
            r#"duplicate field "metadata.labels.x""#,
            r#"unknown field "metadata.bogus""#,
            r#"duplicate field "data.k""#,
            r#"unknown field "spec""#,
        ])
    );
    // Custom resources: duplicates everywhere, no unknown fields.
    assert_eq!(
        strict_errors(&api, "example.com", "v1", "Widget", body),
        s(&[
            r#"duplicate field "metadata.name""#,
            r#"duplicate field "metadata.labels.x""#,
            r#"duplicate field "metadata.managedFields[0].fieldsV1.f:a""#,
            r#"duplicate field "data.k""#,
        ])
    );
}

#[test]
fn top_level_duplicates_dedupe_and_opaque_values() {
    let api = openapi();
    let body = br#"{"kind":"ControllerRevision","kind":"ControllerRevision","data":{"anything":{"goes":1,"goes":2}},"x":1,"x":2,"revision":1}"#;
    assert_eq!(
        strict_errors(&api, "apps", "v1", "ControllerRevision", body),
        s(&[r#"duplicate field "kind""#, r#"unknown field "x""#])
    );
    assert_eq!(
        duplicate_fields(br#"{"a":[{"b":1,"b":2},{"c":{"d":1,"d":1}}],"a":null}"#),
        s(&[
            r#"duplicate field "a[0].b""#,
            r#"duplicate field "a[1].c.d""#,
            r#"duplicate field "a""#,
        ])
    );
}

#[test]
fn empty_structs_and_crd_schemas() {
    let api = openapi();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {"bogus": true}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {"type": "object", "x-bogus": 1,
                        "additionalProperties": {"type": "string"}}},
                    "default": {"free": "form"},
                }},
            }],
        },
    });
    assert_eq!(
        unknown_fields(
            &api,
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            &crd
        ),
        s(&[
            r#"unknown field "spec.versions[0].schema.openAPIV3Schema.properties.spec.x-bogus""#,
            r#"unknown field "spec.versions[0].subresources.status.bogus""#,
        ])
    );
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"known": {"type": "string"},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
    }});
    let object = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "nope": 1},
        "spec": {"known": "x", "unknown": 1, "free": {"anything": {"at": "all"}}},
        "status": {}});
    assert_eq!(
        unknown_fields_in_schema(&api, &schema, &object),
        s(&[
            r#"unknown field "metadata.nope""#,
            r#"unknown field "spec.unknown""#,
            r#"unknown field "status""#,
        ])
    );
}

#[test]
fn yaml_bodies_as_kube_reports_them() {
    let api = openapi();
    let body = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: test\n  labels:\n    app: nginx\nspec:\n  unknown1: val1\n  unknownDupe: valDupe\n  unknownDupe: valDupe2\n  paused: true\n  paused: false\n  selector:\n    matchLabels:\n      app: nginx\n  template:\n    metadata:\n      labels:\n        app: nginx\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:latest\n        unknownNested: val1\n        imagePullPolicy: Always\n        imagePullPolicy: Never";
    let converted = crate::yaml::yaml_to_json(body.as_bytes()).expect("yaml");
    let errors = yaml_strict_errors(
        &api,
        "apps",
        "v1",
        "Deployment",
        body.as_bytes(),
        &converted,
    );
    assert_eq!(
        errors,
        s(&[
            "error converting YAML to JSON: yaml: unmarshal errors:\n  line 10: key \"unknownDupe\" already set in map\n  line 12: key \"paused\" already set in map\n  line 26: key \"imagePullPolicy\" already set in map",
            r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
            r#"unknown field "spec.unknown1""#,
            r#"unknown field "spec.unknownDupe""#,
        ])
    );
    // The order kube's integration test expects for Warn.
    assert_eq!(
        warnings(&errors),
        s(&[
            r#"line 10: key "unknownDupe" already set in map"#,
            r#"line 12: key "paused" already set in map"#,
            r#"line 26: key "imagePullPolicy" already set in map"#,
            r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
            r#"unknown field "spec.unknown1""#,
            r#"unknown field "spec.unknownDupe""#,
        ])
    );
}

#[test]
fn directives_and_headers() {
    assert_eq!(FieldValidation::parse(None), Ok(FieldValidation::Warn));
    assert_eq!(FieldValidation::parse(Some("")), Ok(FieldValidation::Warn));
    assert_eq!(
        FieldValidation::parse(Some("Strict")),
        Ok(FieldValidation::Strict)
    );
    assert_eq!(
        FieldValidation::parse(Some("Ignore")),
        Ok(FieldValidation::Ignore)
    );
    assert_eq!(
        FieldValidation::parse(Some("strict")),
        Err("strict".to_string())
    );
    assert_eq!(warning_header_value(""), None);
    assert_eq!(
        warning_header_value("a\\b\nc").as_deref(),
        Some(r#"299 - "a\\b c""#)
    );
    assert_eq!(
        strict_decoding_error(&s(&[
            r#"duplicate field "metadata.name""#,
            r#"unknown field "dta""#
        ])),
        r#"strict decoding error: duplicate field "metadata.name", unknown field "dta""#
    );
}

#[test]
fn malformed_and_hostile_bodies_do_not_panic() {
    let api = openapi();
    for body in [
        &b""[..],
        b"{",
        b"{\"a\"",
        b"{\"a\":",
        b"[",
        b"\"\\u12",
        b"{\"a\":1,}",
        b"}}}}",
        b"{\"spec\":{\"x\":[1,{]}}",
    ] {
        let _ = strict_errors(&api, "apps", "v1", "Deployment", body);
        let _ = duplicate_fields(body);
    }
    let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
    assert!(duplicate_fields(deep.as_bytes()).is_empty());
    let many: String = (0..300)
        .map(|i| format!("\"k{i}\":1,\"k{i}\":2,"))
        .collect();
    let body = format!("{{{many}\"z\":0}}");
    assert_eq!(duplicate_fields(body.as_bytes()).len(), MAX_ERRORS);
}
