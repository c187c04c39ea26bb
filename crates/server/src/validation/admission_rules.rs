//! The rules ValidatingAdmissionPolicies, their bindings and the webhook
//! configurations share (`pkg/apis/admissionregistration/validation/validation.go`
//! `validateRuleWithOperations`, `validateRule`, `validateResources`,
//! `validateNamedRuleWithOperations`, `validateMatchResources`, and
//! `metav1validation.ValidateLabelSelector` with its
//! `AllowInvalidLabelValueInSelector` option).

use std::collections::HashSet;

use serde_json::Value;

use super::field::{self, child, index};
use crate::go::strconv::quote;
use crate::names::path_segment;
use crate::status::FieldError;

const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];

/// Strings of a `[]string` field; a non-string item reads as "".
pub fn strings(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().map(|v| v.as_str().unwrap_or("")).collect())
        .unwrap_or_default()
}

/// Go's `%#v` of a slice of a string type named `type_name`.
pub fn go_slice(type_name: &str, values: &[&str]) -> String {
    let rendered: Vec<String> = values.iter().map(|v| quote(v)).collect();
    format!("[]{type_name}{{{}}}", rendered.join(", "))
}

pub fn set(value: Option<&Value>) -> Option<&Value> {
    value.filter(|value| !value.is_null())
}

/// `validateResources` (subresources allowed).
fn resources(resources: &[&str], path: &str, errors: &mut Vec<FieldError>) {
    if resources.is_empty() {
        errors.push(field::required(path, ""));
    }
    let mut with_wildcard_subresource = HashSet::new();
    let mut subresources_with_wildcard_resource = HashSet::new();
    let mut has_double_wildcard = false;
    let mut has_single_wildcard = false;
    let mut has_resource_without_subresource = false;
    for (position, resource) in resources.iter().enumerate() {
        let at = index(path, position);
        if resource.is_empty() {
            errors.push(field::required(&at, ""));
            continue;
        }
        has_double_wildcard |= *resource == "*/*";
        has_single_wildcard |= *resource == "*";
        let Some((main, sub)) = resource.split_once('/') else {
            has_resource_without_subresource = *resource != "*";
            continue;
        };
        if with_wildcard_subresource.contains(main) {
            errors.push(field::invalid(
                &at,
                resource,
                format!("if '{main}/*' is present, must not specify {resource}"),
            ));
        }
        if subresources_with_wildcard_resource.contains(sub) {
            errors.push(field::invalid(
                &at,
                resource,
                format!("if '*/{sub}' is present, must not specify {resource}"),
            ));
        }
        if sub == "*" {
            with_wildcard_subresource.insert(main);
        }
        if main == "*" {
            subresources_with_wildcard_resource.insert(sub);
        }
    }
    if resources.len() > 1 && has_double_wildcard {
        errors.push(field::invalid_rendered(
            path,
            &go_slice("string", resources),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if has_single_wildcard && has_resource_without_subresource {
        errors.push(field::invalid_rendered(
            path,
            &go_slice("string", resources),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
}

/// `validateRuleWithOperations` (with `validateRule`, subresources allowed).
pub fn rule_with_operations(rule: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let operations = strings(rule.get("operations"));
    let operations_path = child(path, "operations");
    if operations.is_empty() {
        errors.push(field::required(&operations_path, ""));
    }
    if operations.len() > 1 && operations.contains(&"*") {
        errors.push(field::invalid_rendered(
            &operations_path,
            &go_slice("admissionregistration.OperationType", &operations),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (position, operation) in operations.iter().enumerate() {
        if !OPERATIONS.contains(operation) {
            errors.push(field::not_supported(
                &index(&operations_path, position),
                operation,
                OPERATIONS,
            ));
        }
    }
    for (name, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let values = strings(rule.get(name));
        let at = child(path, name);
        if values.is_empty() {
            errors.push(field::required(&at, ""));
        }
        if values.len() > 1 && values.contains(&"*") {
            errors.push(field::invalid_rendered(
                &at,
                &go_slice("string", &values),
                format!("if '*' is present, must not specify other {what}"),
            ));
        }
        if name == "apiVersions" {
            for (position, version) in values.iter().enumerate() {
                if version.is_empty() {
                    errors.push(field::required(&index(&at, position), ""));
                }
            }
        }
    }
    resources(
        &strings(rule.get("resources")),
        &child(path, "resources"),
        errors,
    );
    if let Some(scope) = set(rule.get("scope")) {
        let scope = scope.as_str().unwrap_or("");
        if !SCOPES.contains(&scope) {
            errors.push(field::not_supported(&child(path, "scope"), scope, SCOPES));
        }
    }
}

/// `metav1validation.ValidateLabelSelector`; with `allow_invalid_values`
/// (`AllowInvalidLabelValueInSelector`) the values of `matchExpressions`
/// are not checked.
pub fn label_selector(
    selector: &Value,
    path: &str,
    allow_invalid_values: bool,
    errors: &mut Vec<FieldError>,
) {
    super::selector::validate_with(selector, path, allow_invalid_values, errors);
}

/// Whether a selector breaks the strict label value rules.
pub fn has_invalid_label_value(selector: Option<&Value>) -> bool {
    let Some(selector) = set(selector) else {
        return false;
    };
    super::selector::has_errors(selector)
}

pub fn one_of(
    value: Option<&Value>,
    path: &str,
    supported: &[&str],
    required: bool,
    errors: &mut Vec<FieldError>,
) {
    match set(value) {
        None if required => errors.push(field::required(path, "")),
        None => {}
        Some(value) => {
            let value = value.as_str().unwrap_or("");
            if !supported.contains(&value) {
                errors.push(field::not_supported(path, value, supported));
            }
        }
    }
}

/// `validateNamedRuleWithOperations`.
fn named_rule_with_operations(rule: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let names_path = child(path, "resourceNames");
    let mut seen = HashSet::new();
    for (position, name) in strings(rule.get("resourceNames")).iter().enumerate() {
        let at = index(&names_path, position);
        for message in path_segment(name) {
            errors.push(field::invalid(&at, name, message));
        }
        if !seen.insert(*name) {
            errors.push(field::duplicate(&at, name));
        }
    }
    rule_with_operations(rule, path, errors);
}

/// `validateMatchResources` of a set `matchConstraints` / `matchResources`.
pub fn match_resources(resources: &Value, path: &str, errors: &mut Vec<FieldError>) {
    one_of(
        resources.get("matchPolicy"),
        &child(path, "matchPolicy"),
        MATCH_POLICIES,
        true,
        errors,
    );
    for name in ["namespaceSelector", "objectSelector"] {
        match set(resources.get(name)) {
            None => errors.push(field::required(&child(path, name), "")),
            Some(selector) => label_selector(selector, &child(path, name), false, errors),
        }
    }
    for name in ["resourceRules", "excludeResourceRules"] {
        let rules_path = child(path, name);
        for (position, rule) in field::items_at(resources, name).iter().enumerate() {
            named_rule_with_operations(rule, &index(&rules_path, position), errors);
        }
    }
}
