//! `x-kubernetes-validations` rules are parsed at CRD create and update as
//! kube compiles them (apiextensions `validation.go`
//! `ValidateCustomResourceDefinitionOpenAPISchema`): a rule that does not
//! parse is refused with kube's path and `compilation failed:` text; rules
//! that parse are stored and published in OpenAPI v3.

use super::*;
use kube::runtime::wait::{await_condition, conditions};

fn crd_with_rules(group: &str, rules: Value) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "metadata": {"name": format!("rules.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "rules", "kind": "Rule"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object",
                    "x-kubernetes-validations": rules,
                    "properties": {
                        "x": {"type": "integer"},
                        "y": {"type": "string"},
                        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                    }}},
            }}}],
        },
    }))
    .unwrap()
}

#[tokio::test]
async fn crds_with_cel_rules_are_parsed_as_kube_parses_them() {
    let env = TestEnv::new("crd-cel").await;
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let group = format!("g{}.example.com", suffix());

    let bad = crd_with_rules(
        &group,
        json!([{"rule": "self.x > 0"}, {"rule": "self.x >"}]),
    );
    let status = match crds.create(&PostParams::default(), &bad).await {
        Err(kube::Error::Api(status)) => status,
        other => panic!("a CRD with a rule that does not parse answered {other:?}"),
    };
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert_eq!(
        status.message,
        format!(
            r#"CustomResourceDefinition.apiextensions.k8s.io "rules.{group}" is invalid: spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule{{Rule:"self.x >", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {{'[', '{{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}}
 | self.x >
 | ........^"#
        )
    );
    let details = status.details.expect("details");
    let cause = &details.causes[0];
    assert_eq!(cause.reason, "FieldValueInvalid");
    assert_eq!(
        cause.field,
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule"
    );
    assert!(crds
        .get_opt(&bad.metadata.name.clone().unwrap())
        .await
        .unwrap()
        .is_none());

    let rules = json!([
        {"rule": "self.x > 0"},
        {"rule": "has(self.y)", "message": "y is required"},
        {"rule": "self.tags.all(k, k != \"\")", "messageExpression": "'empty key in ' + string(self.x)"},
        {"rule": "[1, 2].exists(n, n == self.x) || self.y in ['a', \"b\"]"},
    ]);
    let good = crd_with_rules(&group, rules.clone());
    let name = good.metadata.name.clone().unwrap();
    crds.create(&PostParams::default(), &good).await.unwrap();
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(crds.clone(), &name, conditions::is_crd_established()),
    )
    .await
    .expect("established in time")
    .unwrap();

    // An update that breaks a rule is refused as well.
    let mut broken = crds.get(&name).await.unwrap();
    let mut schema = serde_json::to_value(&broken.spec.versions[0].schema).unwrap();
    schema["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"][0]
        ["messageExpression"] = json!("'x is ' + ");
    broken.spec.versions[0].schema = Some(serde_json::from_value(schema).unwrap());
    let status = match crds.replace(&name, &PostParams::default(), &broken).await {
        Err(kube::Error::Api(status)) => status,
        other => panic!("an update with a bad messageExpression answered {other:?}"),
    };
    assert_eq!(status.code, 422);
    assert!(
        status.message.contains(
            "properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:\"self.x > 0\""
        ) && status.message.contains(": messageExpression compilation failed: ERROR: <input>:1:11: Syntax error: "),
        "{}",
        status.message
    );

    // Rules that parse are published as written.
    let gv_key = format!("apis/{group}/v1");
    let index = env.raw("GET", "/openapi/v3", None, vec![]).await.json();
    let url = index["paths"][&gv_key]["serverRelativeURL"]
        .as_str()
        .unwrap_or_else(|| panic!("{gv_key} not in the v3 index: {index}"))
        .to_string();
    let doc = env.raw("GET", &url, None, vec![]).await.json();
    // `util.ToRESTFriendlyName`: the group reversed.
    let reversed: Vec<&str> = group.split('.').rev().collect();
    let definition = format!("{}.v1.Rule", reversed.join("."));
    let spec = &doc["components"]["schemas"][&definition]["properties"]["spec"];
    assert_eq!(spec["x-kubernetes-validations"], rules, "{doc}");
}
