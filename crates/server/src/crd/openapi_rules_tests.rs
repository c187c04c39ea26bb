//! kube's texts for the OpenAPI rules of CRD schemas.

use super::*;
use serde_json::json;

const ROOT: &str = "spec.versions[0].schema.openAPIV3Schema";

fn messages(schema: Value) -> Vec<String> {
    validate(&schema, ROOT, true)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn spec(property: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"p": property}}}})
}

#[test]
fn well_formed_extensions_pass() {
    assert!(messages(spec(json!({"type": "array",
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"],
        "items": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "port": {"type": "integer", "default": 80}}}})))
    .is_empty());
    assert!(messages(spec(
        json!({"type": "array", "x-kubernetes-list-type": "set",
        "items": {"type": "object", "x-kubernetes-map-type": "atomic"}})
    ))
    .is_empty());
    assert!(messages(spec(
        json!({"type": "object", "x-kubernetes-map-type": "granular",
        "properties": {"a": {"type": "string"}}, "additionalProperties": true})
    ))
    .is_empty());
    assert!(
        messages(spec(json!({"type": "string", "x-kubernetes-validations": [
        {"rule": "self.size() > 1", "message": "short", "reason": "FieldValueInvalid"}]})))
        .is_empty()
    );
}

#[test]
fn forbidden_fields_and_kube_texts() {
    let p = format!("{ROOT}.properties[spec].properties[p]");
    let cases: Vec<(Value, Vec<String>)> = vec![
        (json!({"$ref": "#/definitions/x"}), vec![format!("{p}.$ref: Forbidden: $ref is not supported")]),
        (json!({"type": "string", "id": "x"}), vec![format!("{p}.id: Forbidden: id is not supported")]),
        (json!({"type": "object", "definitions": {"d": {"type": "string"}}}), vec![
            format!("{p}.definitions: Forbidden: definitions is not supported"),
        ]),
        (json!({"type": "object", "dependencies": {"a": ["b"]}}), vec![
            format!("{p}.dependencies: Forbidden: dependencies is not supported"),
        ]),
        (json!({"type": "object", "patternProperties": {"^a": {"type": "string"}}}), vec![
            format!("{p}.patternProperties: Forbidden: patternProperties is not supported"),
        ]),
        (json!({"type": "array", "items": {"type": "string"}, "additionalItems": false}), vec![
            format!("{p}.additionalItems: Forbidden: additionalItems is not supported"),
        ]),
        (json!({"type": "array", "items": [{"type": "string"}]}), vec![
            format!("{p}.items: Forbidden: items must be a schema object and not an array"),
        ]),
        (json!({"type": "null"}), vec![
            format!(r#"{p}.type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string""#),
            format!("{p}.type: Forbidden: type cannot be set to null, use nullable as an alternative"),
        ]),
        (json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}}), vec![
            format!("{p}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"),
        ]),
        (json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}), vec![
            format!("{p}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"),
        ]),
        (json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}), vec![
            format!("{p}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"),
        ]),
        (json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false}), vec![
            format!("{p}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"),
        ]),
        (json!({"type": "string", "x-kubernetes-map-type": "loose"}), vec![
            format!(r#"{p}.type: Invalid value: "string": must be object if x-kubernetes-map-type is specified"#),
            format!(r#"{p}.x-kubernetes-map-type: Unsupported value: "loose": supported values: "atomic", "granular""#),
        ]),
        (json!({"x-kubernetes-list-type": "bag", "x-kubernetes-preserve-unknown-fields": true}), vec![
            format!("{p}.type: Required value: must be array if x-kubernetes-list-type is specified"),
            format!(r#"{p}.x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map""#),
        ]),
        (json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}), vec![
            format!(r#"{p}.items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set"#),
        ]),
        (json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "string"}}}), vec![
            format!(r#"{p}.items.x-kubernetes-list-type: Invalid value: "set": must be atomic as item of a list with x-kubernetes-list-type=set"#),
        ]),
        (json!({"type": "array", "x-kubernetes-list-map-keys": ["a"], "items": {"type": "string"}}), vec![
            format!("{p}.x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty"),
        ]),
        (json!({"type": "array", "x-kubernetes-list-type": "atomic", "x-kubernetes-list-map-keys": ["a"], "items": {"type": "string"}}), vec![
            format!(r#"{p}.x-kubernetes-list-type: Invalid value: "atomic": must be map if x-kubernetes-list-map-keys is non-empty"#),
        ]),
        (json!({"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "string"}}), vec![
            format!("{p}.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"),
            format!(r#"{p}.items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map"#),
        ]),
        (json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b", "a"],
            "items": {"type": "object", "required": ["a"], "properties": {"a": {"type": "object"}}}}), vec![
            format!(r#"{p}.items.properties[a].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map"#),
            format!(r#"{p}.x-kubernetes-list-map-keys: Invalid value: []string{{"a", "b", "a"}}: entries must all be names of item properties"#),
            format!(r#"{p}.items.properties[a].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map"#),
            format!(r#"{p}.x-kubernetes-list-map-keys: Invalid value: []string{{"a", "b", "a"}}: must not contain duplicate entries"#),
        ]),
        (json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "nullable": true, "properties": {"name": {"type": "string", "nullable": true}}}}), vec![
            format!("{p}.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map"),
            format!("{p}.items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"),
            format!("{p}.items.properties[name].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable"),
        ]),
        (json!({"type": "string", "x-kubernetes-validations": [
            {"rule": " "}, {"rule": "a", "message": " "}, {"rule": "a\nb"}, {"rule": "a", "reason": "Nope"},
            {"rule": "a", "fieldPath": ".nope"}]}), vec![
            format!("{p}.x-kubernetes-validations[0].rule: Required value: rule is not specified"),
            format!(r#"{p}.x-kubernetes-validations[1].message: Invalid value: " ": message must be non-empty if specified"#),
            format!("{p}.x-kubernetes-validations[2].message: Required value: message must be specified if rule contains line breaks"),
            format!(r#"{p}.x-kubernetes-validations[3].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#),
            format!(r#"{p}.x-kubernetes-validations[4].fieldPath: Invalid value: ".nope": fieldPath must be a valid path"#),
        ]),
    ];
    for (property, expected) in cases {
        assert_eq!(messages(spec(property.clone())), expected, "{property}");
    }
}

#[test]
fn defaults_in_resource_meta_and_embedded_resources() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {
            "name": {"type": "string", "default": "n"}}}}}), vec![
            format!("{ROOT}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata"),
        ]),
        (json!({"type": "object", "properties": {"kind": {"type": "string", "default": "K"}}}), vec![
            format!("{ROOT}.properties[kind].default: Forbidden: must not be set in top-level kind"),
        ]),
        (json!({"type": "object", "properties": {"e": {"type": "object", "x-kubernetes-embedded-resource": true,
            "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object",
                "additionalProperties": {"type": "string", "default": "x"}}}}}}}}), vec![
            format!("{ROOT}.properties[e].properties[metadata].properties[labels].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata"),
        ]),
        (json!({"type": "object", "properties": {"metadata": {"type": "object",
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}), vec![
            format!("{ROOT}.properties[metadata].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource meta"),
        ]),
    ];
    for (schema, expected) in cases {
        assert_eq!(messages(schema.clone()), expected, "{schema}");
    }
}

#[test]
fn rules_that_do_not_parse_are_refused_wherever_they_sit() {
    let p = format!("{ROOT}.properties[spec].properties[p]");
    let expecting = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
    let got = messages(json!({"type": "object",
    "x-kubernetes-validations": [{"rule": "self.spec.p != ''"}, {"rule": "self.x >"}],
    "properties": {"spec": {"type": "object", "properties": {"p": {"type": "string",
        "x-kubernetes-validations": [
            {"rule": "self.size() > 0", "messageExpression": "'bad: ' + this does not compile", "reason": "FieldValueInvalid"},
            {"rule": "(self", "message": "m", "messageExpression": "self +"},
            {"rule": "self.size() > 2 || self == \"\"", "messageExpression": "'size ' + string(self.size())"},
        ]}}}}}));
    // cel-go says `expecting <EOF>` here: Go's ANTLR runtime reports the
    // expected tokens after a full-context prediction, antlr4rust the
    // tokens of the enclosing rules.
    assert_eq!(
        got,
        vec![
            format!(
                r#"{p}.x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{{Rule:"self.size() > 0", Message:"", MessageExpression:"'bad: ' + this does not compile", Reason:(*apiextensions.FieldValueErrorReason)(0xc000000000), FieldPath:"", OptionalOldSelf:(*bool)(nil)}}: messageExpression compilation failed: ERROR: <input>:1:16: Syntax error: mismatched input 'does' expecting {{<EOF>, '==', '!=', 'in', '<', '<=', '>=', '>', '&&', '||', '[', '.', '-', '?', '+', '*', '/', '%'}}
 | 'bad: ' + this does not compile
 | ...............^"#
            ),
            format!(
                r#"{p}.x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule{{Rule:"(self", Message:"m", MessageExpression:"self +", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:6: Syntax error: missing ')' at '<EOF>'
 | (self
 | .....^"#
            ),
            format!(
                r#"{ROOT}.x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule{{Rule:"self.x >", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {expecting}
 | self.x >
 | ........^"#
            ),
        ]
    );
}

#[test]
fn rules_are_not_parsed_beside_schema_errors_or_in_non_structural_schemas() {
    let p = format!("{ROOT}.properties[spec].properties[p]");
    // A schema error at the node (or deeper) skips its rules, as in kube.
    let got = messages(spec(json!({"type": "string", "x-kubernetes-validations": [
        {"rule": "self >", "reason": "Nope"}]})));
    assert_eq!(
        got,
        vec![format!(
            r#"{p}.x-kubernetes-validations[0].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#
        )]
    );
    // An error deeper down skips the parent's rules, not the siblings'.
    let got = messages(
        json!({"type": "object", "x-kubernetes-validations": [{"rule": "self >"}],
        "properties": {"a": {"type": "string", "uniqueItems": true}}}),
    );
    assert_eq!(got, vec![format!("{ROOT}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic")]);
    let schema = spec(json!({"type": "string", "x-kubernetes-validations": [{"rule": "self >"}]}));
    assert!(validate(&schema, ROOT, false).is_empty());
}

#[test]
fn rules_over_the_estimated_cost_are_forbidden_unless_the_schema_is_unchanged() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "names": {"type": "array", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.all(n, n.matches('^[a-z]+$'))"}]}}}}});
    let rule =
        format!("{ROOT}.properties[spec].properties[names].x-kubernetes-validations[0].rule");
    let errors = super::validate(&schema, ROOT, true);
    assert!(
        errors.iter().any(|error| error.field == rule
            && error
                .detail
                .starts_with("estimated rule cost exceeds budget by factor of more than 100x")),
        "{errors:?}"
    );
    // An update that left the schema as it was: only the total counts.
    let suppressed = super::validate_with(&schema, ROOT, true, true);
    assert!(
        suppressed
            .iter()
            .all(|error| !error.detail.starts_with("estimated rule cost")),
        "{suppressed:?}"
    );
    assert_eq!(
        suppressed.last().map(|error| error.field.as_str()),
        Some(ROOT),
        "{suppressed:?}"
    );
}

/// The rules are type-checked against the schema (`compilation.go`
/// `compileRule`: `env.Compile` checks, then the result must be a bool and
/// a `messageExpression` a string).
#[test]
fn rules_that_do_not_type_check_are_refused_with_cel_gos_errors() {
    let p = format!("{ROOT}.properties[spec]");
    let got = messages(json!({"type": "object",
    "x-kubernetes-validations": [
        {"rule": "self.metadata.name == 'a' && self.spec.replicas > 0"},
        {"rule": "self.metadata.namespace == 'a'"},
    ],
    "properties": {"spec": {"type": "object",
        "properties": {"replicas": {"type": "integer"}, "name": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "self.foo == 1"},
            {"rule": "self.name + 1 == 2"},
            {"rule": "self.replicas"},
            {"rule": "self.replicas > 1", "messageExpression": "self.replicas"},
            {"rule": "self.replicas > 1", "messageExpression": "'too many: ' + self.bar"},
            {"rule": "self.replicas > 1", "messageExpression": "'replicas ' + string(self.replicas)"},
        ]}}}));
    let rule = |rule: &str, message_expression: &str| {
        format!(
            r#"apiextensions.ValidationRule{{Rule:"{rule}", Message:"", MessageExpression:"{message_expression}", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}}"#
        )
    };
    assert_eq!(
        got,
        vec![
            format!(
                "{p}.x-kubernetes-validations[0].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:5: undefined field 'foo'\n | self.foo == 1\n | ....^",
                rule("self.foo == 1", "")
            ),
            format!(
                "{p}.x-kubernetes-validations[1].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:11: found no matching overload for '_+_' applied to '(string, int)'\n | self.name + 1 == 2\n | ..........^",
                rule("self.name + 1 == 2", "")
            ),
            format!(
                "{p}.x-kubernetes-validations[2].rule: Invalid value: {}: cel expression must evaluate to a bool",
                rule("self.replicas", "")
            ),
            format!(
                "{p}.x-kubernetes-validations[3].messageExpression: Invalid value: {}: messageExpression must evaluate to a string",
                rule("self.replicas > 1", "self.replicas")
            ),
            format!(
                "{p}.x-kubernetes-validations[4].messageExpression: Invalid value: {}: messageExpression compilation failed: ERROR: <input>:1:20: undefined field 'bar'\n | 'too many: ' + self.bar\n | ...................^",
                rule("self.replicas > 1", "'too many: ' + self.bar")
            ),
            format!(
                "{ROOT}.x-kubernetes-validations[1].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:14: undefined field 'namespace'\n | self.metadata.namespace == 'a'\n | .............^",
                rule("self.metadata.namespace == 'a'", "")
            ),
        ]
    );
}
