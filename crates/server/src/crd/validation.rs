//! `ValidateCustomResourceDefinition` and `…Update`
//! (`apiextensions-apiserver/pkg/apis/apiextensions/validation`): the rules
//! on the CRD's name, group, scope, versions, names and conversion, with
//! kube's field paths and messages. Each version's own rules (schema,
//! subresources, printer columns, selectable fields) are in
//! `version_rules.rs`, the conversion settings in `conversion_rules.rs`.
//!
//! Where kube prints a Go struct as the invalid value (`spec.versions`), the
//! value is an approximation: kube's `%#v` includes pointer addresses.

use serde_json::Value;

use crate::names::{dns1035_label, dns1123_subdomain};
use crate::status::{FieldError, FieldErrorKind};

const SCOPES: &[&str] = &["Cluster", "Namespaced"];
fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn texts<'a>(value: &'a Value, pointer: &str) -> Vec<&'a str> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `field.Invalid` with a value already rendered as kube prints it.
fn invalid_rendered(field: &str, rendered: String, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(rendered),
        field: field.to_string(),
        detail: detail.to_string(),
    }
}

/// The errors of a CRD being created (`old` None) or updated.
pub fn validate(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = text(crd, "/metadata/name");
    let group = text(crd, "/spec/group");
    let plural = text(crd, "/spec/names/plural");
    if old.is_none() && name != format!("{plural}.{group}") {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            r#"must be spec.names.plural+"."+spec.group"#,
        ));
    }
    spec(crd, old, &mut errors);
    if let Some(old) = old {
        update(crd, old, &mut errors);
    }
    errors
}

fn spec(crd: &Value, old: Option<&Value>, errors: &mut Vec<FieldError>) {
    let group = text(crd, "/spec/group");
    if group.is_empty() {
        errors.push(FieldError::required("spec.group", ""));
    } else {
        let problems = dns1123_subdomain(group);
        if !problems.is_empty() {
            errors.push(FieldError::invalid("spec.group", group, problems.join(",")));
        } else if !group.contains('.') {
            errors.push(FieldError::invalid(
                "spec.group",
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    match text(crd, "/spec/scope") {
        "" => errors.push(FieldError::required("spec.scope", "")),
        scope if SCOPES.contains(&scope) => {}
        scope => errors.push(FieldError::not_supported("spec.scope", scope, SCOPES)),
    }
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    // `requireOpenAPISchema`: not tightened for a stored CRD that had none.
    if old.is_none_or(every_version_has_a_schema) {
        for (index, version) in versions.iter().enumerate() {
            if !has_schema(version) {
                errors.push(FieldError::required(
                    &format!("spec.versions[{index}].schema.openAPIV3Schema"),
                    "schemas are required",
                ));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut unique = true;
    let mut storage = 0;
    for (index, version) in versions.iter().enumerate() {
        let name = text(version, "/name");
        if version.get("storage").and_then(Value::as_bool) == Some(true) {
            storage += 1;
        }
        if !seen.insert(name) {
            unique = false;
        }
        let problems = dns1035_label(name);
        if !problems.is_empty() {
            errors.push(FieldError::invalid(
                &format!("spec.versions[{index}].name"),
                name,
                problems.join(","),
            ));
        }
        // kube's `versionsWithUnchangedSchemas`: on update, a version whose
        // schema is as it was.
        let unchanged_schema = old
            .and_then(|old| old.pointer("/spec/versions").and_then(Value::as_array))
            .and_then(|old_versions| {
                old_versions.iter().find(|old_version| {
                    old_version.get("name").and_then(Value::as_str) == Some(name)
                })
            })
            .is_some_and(|old_version| old_version.get("schema") == version.get("schema"));
        errors.extend(super::version_rules::validate_with(
            version,
            index,
            unchanged_schema,
        ));
    }
    let rendered = render_versions(versions);
    if !unique {
        errors.push(invalid_rendered(
            "spec.versions",
            rendered.clone(),
            "must contain unique version names",
        ));
    }
    if storage != 1 {
        errors.push(invalid_rendered(
            "spec.versions",
            rendered,
            "must have exactly one version marked as storage version",
        ));
    }
    for field in ["plural", "singular", "kind", "listKind"] {
        if text(crd, &format!("/spec/names/{field}")).is_empty() {
            errors.push(FieldError::required(&format!("spec.names.{field}"), ""));
        }
    }
    names(crd, "/spec/names", "spec.names", errors);
    // `requireRecognizedConversionReviewVersion`: not tightened for a
    // stored CRD whose review versions kube no longer speaks.
    let require_recognized =
        old.is_none_or(super::conversion_rules::has_recognized_review_version_or_none);
    errors.extend(super::conversion_rules::validate(crd, require_recognized));
}

fn has_schema(version: &Value) -> bool {
    version
        .pointer("/schema/openAPIV3Schema")
        .is_some_and(|schema| !schema.is_null())
}

/// `allVersionsSpecifyOpenAPISchema`.
fn every_version_has_a_schema(crd: &Value) -> bool {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .is_none_or(|versions| versions.iter().all(has_schema))
}

/// `ValidateCustomResourceDefinitionNames`.
fn names(crd: &Value, pointer: &str, path: &str, errors: &mut Vec<FieldError>) {
    let field = |name: &str| text(crd, &format!("{pointer}/{name}"));
    for name in ["plural", "singular"] {
        let value = field(name);
        let problems = dns1035_label(value);
        if !value.is_empty() && !problems.is_empty() {
            errors.push(FieldError::invalid(
                &format!("{path}.{name}"),
                value,
                problems.join(","),
            ));
        }
    }
    for name in ["kind", "listKind"] {
        let value = field(name);
        let problems = dns1035_label(&value.to_lowercase());
        if !value.is_empty() && !problems.is_empty() {
            errors.push(FieldError::invalid(
                &format!("{path}.{name}"),
                value,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    problems.join(",")
                ),
            ));
        }
    }
    for (list, name) in [("shortNames", "shortNames"), ("categories", "categories")] {
        for (index, value) in texts(crd, &format!("{pointer}/{list}")).iter().enumerate() {
            let problems = dns1035_label(value);
            if !problems.is_empty() {
                errors.push(FieldError::invalid(
                    &format!("{path}.{name}[{index}]"),
                    value,
                    problems.join(","),
                ));
            }
        }
    }
    let (kind, list_kind) = (field("kind"), field("listKind"));
    if !kind.is_empty() && kind == list_kind {
        errors.push(FieldError::invalid(
            &format!("{path}.listKind"),
            list_kind,
            "kind and listKind may not be the same",
        ));
    }
}

/// `ValidateCustomResourceDefinitionSpecUpdate`: the group and plural name
/// the stored resources; scope and kind too once Established.
fn update(crd: &Value, old: &Value, errors: &mut Vec<FieldError>) {
    let established = super::condition_true(old, "Established");
    let mut immutable = |pointer: &str, path: &str| {
        let value = text(crd, pointer);
        if value != text(old, pointer) {
            errors.push(FieldError::invalid(path, value, "field is immutable"));
        }
    };
    if established {
        immutable("/spec/scope", "spec.scope");
        immutable("/spec/names/kind", "spec.names.kind");
    }
    immutable("/spec/group", "spec.group");
    immutable("/spec/names/plural", "spec.names.plural");
}

/// An approximation of kube's `%#v` of `[]apiextensions.CustomResourceDefinitionVersion`.
fn render_versions(versions: &[Value]) -> String {
    let items: Vec<String> =
        versions
            .iter()
            .map(|version| {
                format!(
                "apiextensions.CustomResourceDefinitionVersion{{Name:{}, Served:{}, Storage:{}}}",
                crate::go::strconv::quote(text(version, "/name")),
                version.get("served").and_then(Value::as_bool).unwrap_or(false),
                version.get("storage").and_then(Value::as_bool).unwrap_or(false),
            )
            })
            .collect();
    format!(
        "[]apiextensions.CustomResourceDefinitionVersion{{{}}}",
        items.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DNS1035_MESSAGE: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

    fn crd() -> Value {
        json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema()}],
            },
        })
    }

    fn schema() -> Value {
        json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}})
    }

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(FieldError::to_string).collect()
    }

    #[test]
    fn a_well_formed_crd_passes() {
        assert_eq!(validate(&crd(), None), vec![]);
    }

    #[test]
    fn kube_rules_and_messages() {
        let mut bad = crd();
        bad["metadata"]["name"] = json!("things.example.com");
        bad["spec"]["group"] = json!("example");
        bad["spec"]["scope"] = json!("Global");
        bad["spec"]["versions"] = json!([
            {"name": "V1", "served": true, "storage": false, "schema": schema()},
            {"name": "V1", "served": true, "storage": false, "schema": schema(),
             "additionalPrinterColumns": [{"name": "", "type": "text", "jsonPath": ".x"}]},
        ]);
        bad["spec"]["names"]["listKind"] = json!("Widget");
        bad["spec"]["names"]["shortNames"] = json!(["W"]);
        let versions = "[]apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:\"V1\", Served:true, Storage:false}, apiextensions.CustomResourceDefinitionVersion{Name:\"V1\", Served:true, Storage:false}}";
        let dns1035 = "DNS1035";
        let expected = [
            "metadata.name: Invalid value: \"things.example.com\": must be spec.names.plural+\".\"+spec.group".to_string(),
            "spec.group: Invalid value: \"example\": should be a domain with at least one dot".to_string(),
            "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\"".to_string(),
            format!("spec.versions[0].name: Invalid value: \"V1\": {dns1035}"),
            format!("spec.versions[1].name: Invalid value: \"V1\": {dns1035}"),
            "spec.versions[1].additionalPrinterColumns[0].name: Required value".to_string(),
            "spec.versions[1].additionalPrinterColumns[0].type: Invalid value: \"text\": must be one of boolean,date,integer,number,string".to_string(),
            format!("spec.versions: Invalid value: {versions}: must contain unique version names"),
            format!("spec.versions: Invalid value: {versions}: must have exactly one version marked as storage version"),
            format!("spec.names.shortNames[0]: Invalid value: \"W\": {dns1035}"),
            "spec.names.listKind: Invalid value: \"Widget\": kind and listKind may not be the same".to_string(),
        ];
        let expected: Vec<String> = expected
            .iter()
            .map(|line| line.replace("DNS1035", DNS1035_MESSAGE))
            .collect();
        assert_eq!(messages(&validate(&bad, None)), expected);
    }

    #[test]
    fn schemas_and_conversion_settings_in_kube_order() {
        let mut bad = crd();
        bad["spec"]["versions"] = json!([
            {"name": "v1", "served": true, "storage": true, "schema": schema()},
            {"name": "v2", "served": false, "storage": false},
        ]);
        bad["spec"]["conversion"] =
            json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}});
        let expected = [
            "spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required",
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
        ];
        assert_eq!(messages(&validate(&bad, None)), expected);
        // A CRD stored without schemas keeps being updatable without them.
        let mut old = bad.clone();
        old["spec"]["conversion"] = json!({"strategy": "None"});
        assert_eq!(messages(&validate(&bad, Some(&old))), expected[1..]);
    }

    #[test]
    fn group_and_plural_are_immutable_and_scope_once_established() {
        let mut old = crd();
        old["status"] = json!({"conditions": [{"type": "Established", "status": "True"}]});
        let mut new = crd();
        new["spec"]["scope"] = json!("Cluster");
        new["spec"]["group"] = json!("other.example.com");
        assert_eq!(
            messages(&validate(&new, Some(&old))),
            [
                "spec.scope: Invalid value: \"Cluster\": field is immutable",
                "spec.group: Invalid value: \"other.example.com\": field is immutable",
            ]
        );
    }
}
