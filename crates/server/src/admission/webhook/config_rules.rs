//! Validation of Validating and MutatingWebhookConfigurations
//! (`pkg/apis/admissionregistration/validation/validation.go`
//! `validateValidatingWebhookConfiguration`, `validateMutatingWebhook…`,
//! `validateAdmissionReviewVersions`, `validateRuleWithOperations`), with
//! kube's paths and texts, and its relaxations on update (a rule the old
//! object already broke is not enforced).
//!
//! `matchConditions` are checked by `match_conditions::validate` (parsed
//! and type-checked); the rules and selectors by the checks the policies
//! share (`validation/admission_rules.rs`). Dispatched from
//! `validation/mod.rs`.

use std::collections::HashSet;

use serde_json::Value;

use crate::crd::conversion_rules::{webhook_service, webhook_url};
use crate::go::strconv::quote;
use crate::names::{dns1035_label, dns1123_subdomain};
use crate::status::{FieldError, FieldErrorKind};
use crate::validation::admission_rules::{
    has_invalid_label_value, label_selector, rule_with_operations,
};

const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];
const NO_SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun"];
const SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun", "Some", "Unknown"];

/// What an update still enforces (all of it on create).
struct Options {
    require_no_side_effects: bool,
    require_recognized_review_version: bool,
    require_unique_names: bool,
    /// `!ignoreMatchConditions`: on update, only when some webhook's
    /// `matchConditions` changed (or the number of webhooks did).
    validate_match_conditions: bool,
    /// `allowInvalidLabelValueInSelector`: on update, when some old
    /// webhook's selector already had an invalid label value.
    allow_invalid_label_value_in_selector: bool,
}

fn webhooks(configuration: &Value) -> &[Value] {
    configuration
        .get("webhooks")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn strings(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().map(|v| v.as_str().unwrap_or("")).collect())
        .unwrap_or_default()
}

/// Go's `%#v` of a `[]string`.
fn go_strings(values: &[&str]) -> String {
    let rendered: Vec<String> = values.iter().map(|v| quote(v)).collect();
    format!("[]string{{{}}}", rendered.join(", "))
}

/// Every rule `configuration` breaks; `old` for an update; `mutating`
/// for a MutatingWebhookConfiguration.
pub fn validate(configuration: &Value, old: Option<&Value>, mutating: bool) -> Vec<FieldError> {
    let options = match old {
        None => Options {
            require_no_side_effects: true,
            require_recognized_review_version: true,
            require_unique_names: true,
            validate_match_conditions: true,
            allow_invalid_label_value_in_selector: false,
        },
        Some(old) => {
            let old_hooks = webhooks(old);
            Options {
                require_no_side_effects: old_hooks.iter().all(|hook| {
                    NO_SIDE_EFFECTS.contains(
                        &hook
                            .get("sideEffects")
                            .and_then(Value::as_str)
                            .unwrap_or(""),
                    )
                }),
                require_recognized_review_version: old_hooks.iter().all(|hook| {
                    let versions = strings(hook.get("admissionReviewVersions"));
                    versions.is_empty() || versions.iter().any(|v| REVIEW_VERSIONS.contains(v))
                }),
                validate_match_conditions: {
                    let new_hooks = webhooks(configuration);
                    new_hooks.len() != old_hooks.len()
                        || new_hooks.iter().zip(old_hooks).any(|(new, old)| {
                            new.get("matchConditions") != old.get("matchConditions")
                        })
                },
                allow_invalid_label_value_in_selector: old_hooks.iter().any(|hook| {
                    has_invalid_label_value(hook.get("namespaceSelector"))
                        || has_invalid_label_value(hook.get("objectSelector"))
                }),
                require_unique_names: {
                    let mut names = HashSet::new();
                    old_hooks.iter().all(|hook| {
                        names.insert(hook.get("name").and_then(Value::as_str).unwrap_or(""))
                    })
                },
            }
        }
    };
    let mut errors = Vec::new();
    let mut names = HashSet::new();
    for (index, hook) in webhooks(configuration).iter().enumerate() {
        let path = format!("webhooks[{index}]");
        webhook_rules(hook, &path, &options, mutating, &mut errors);
        review_versions(
            &strings(hook.get("admissionReviewVersions")),
            options.require_recognized_review_version,
            &format!("{path}.admissionReviewVersions"),
            &mut errors,
        );
        let name = hook.get("name").and_then(Value::as_str).unwrap_or("");
        if options.require_unique_names && !name.is_empty() && !names.insert(name) {
            errors.push(FieldError {
                kind: FieldErrorKind::Duplicate(quote(name)),
                field: format!("{path}.name"),
                detail: String::new(),
            });
        }
    }
    errors
}

/// `utilvalidation.IsFullyQualifiedName`.
fn fully_qualified_name(path: &str, name: &str, errors: &mut Vec<FieldError>) {
    if name.is_empty() {
        errors.push(FieldError::required(path, ""));
        return;
    }
    let problems = dns1123_subdomain(name);
    if !problems.is_empty() {
        errors.push(FieldError::invalid(path, name, problems.join(",")));
        return;
    }
    if name.split('.').count() < 3 {
        errors.push(FieldError::invalid(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        ));
    }
}

fn one_of(hook: &Value, field: &str, path: &str, supported: &[&str], errors: &mut Vec<FieldError>) {
    if let Some(value) = hook.get(field).filter(|value| !value.is_null()) {
        let value = value.as_str().unwrap_or("");
        if !supported.contains(&value) {
            errors.push(FieldError::not_supported(
                &format!("{path}.{field}"),
                value,
                supported,
            ));
        }
    }
}

/// `validateValidatingWebhook` / `validateMutatingWebhook`.
fn webhook_rules(
    hook: &Value,
    path: &str,
    options: &Options,
    mutating: bool,
    errors: &mut Vec<FieldError>,
) {
    let name = hook.get("name").and_then(Value::as_str).unwrap_or("");
    fully_qualified_name(&format!("{path}.name"), name, errors);
    for (index, rule) in hook
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        rule_with_operations(rule, &format!("{path}.rules[{index}]"), errors);
    }
    one_of(hook, "failurePolicy", path, &["Fail", "Ignore"], errors);
    one_of(hook, "matchPolicy", path, &["Equivalent", "Exact"], errors);
    let allowed = if options.require_no_side_effects {
        NO_SIDE_EFFECTS
    } else {
        SIDE_EFFECTS
    };
    match hook.get("sideEffects").filter(|value| !value.is_null()) {
        None => errors.push(FieldError::required(
            &format!("{path}.sideEffects"),
            format!("must specify one of {}", allowed.join(", ")),
        )),
        Some(value) => {
            let value = value.as_str().unwrap_or("");
            if !allowed.contains(&value) {
                errors.push(FieldError::not_supported(
                    &format!("{path}.sideEffects"),
                    value,
                    allowed,
                ));
            }
        }
    }
    if let Some(timeout) = hook.get("timeoutSeconds").and_then(Value::as_i64) {
        if !(1..=30).contains(&timeout) {
            errors.push(FieldError {
                kind: FieldErrorKind::Invalid(timeout.to_string()),
                field: format!("{path}.timeoutSeconds"),
                detail: "the timeout value must be between 1 and 30 seconds".into(),
            });
        }
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        if let Some(value) = hook.get(selector).filter(|value| !value.is_null()) {
            label_selector(
                value,
                &format!("{path}.{selector}"),
                options.allow_invalid_label_value_in_selector,
                errors,
            );
        }
    }
    if mutating {
        one_of(
            hook,
            "reinvocationPolicy",
            path,
            &["IfNeeded", "Never"],
            errors,
        );
    }
    let client = hook.get("clientConfig");
    let url = client.and_then(|c| c.get("url")).filter(|v| !v.is_null());
    let service = client
        .and_then(|c| c.get("service"))
        .filter(|v| !v.is_null());
    let client_path = format!("{path}.clientConfig");
    match (url, service) {
        (Some(url), None) => webhook_url(
            &format!("{client_path}.url"),
            url.as_str().unwrap_or(""),
            errors,
        ),
        (None, Some(service)) => {
            webhook_service(&format!("{client_path}.service"), service, errors)
        }
        _ => errors.push(FieldError::required(
            &client_path,
            "exactly one of url or service is required",
        )),
    }
    if options.validate_match_conditions {
        super::match_conditions::validate(
            hook.get("matchConditions"),
            &format!("{path}.matchConditions"),
            false,
            errors,
        );
    }
}

/// `validateAdmissionReviewVersions`.
fn review_versions(
    versions: &[&str],
    require_recognized: bool,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    if versions.is_empty() {
        errors.push(FieldError::required(
            path,
            format!("must specify one of {}", REVIEW_VERSIONS.join(", ")),
        ));
        return;
    }
    let mut seen = HashSet::new();
    let mut recognized = false;
    for (index, version) in versions.iter().enumerate() {
        let at = format!("{path}[{index}]");
        if !seen.insert(*version) {
            errors.push(FieldError::invalid(&at, version, "duplicate version"));
            continue;
        }
        for problem in dns1035_label(version) {
            errors.push(FieldError::invalid(&at, version, problem));
        }
        recognized |= REVIEW_VERSIONS.contains(version);
    }
    if require_recognized && !recognized {
        errors.push(FieldError {
            kind: FieldErrorKind::Invalid(go_strings(versions)),
            field: path.to_string(),
            detail: format!(
                "must include at least one of {}",
                REVIEW_VERSIONS.join(", ")
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(FieldError::to_string).collect()
    }

    fn hook(extra: Value) -> Value {
        let mut hook = json!({
            "name": "deny.example.com",
            "clientConfig": {"url": "https://127.0.0.1:8443/validate"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        });
        for (key, value) in extra.as_object().unwrap() {
            hook[key] = value.clone();
        }
        hook
    }

    #[test]
    fn configurations_are_refused_as_kube_refuses_them() {
        assert!(validate(&json!({"webhooks": [hook(json!({}))]}), None, false).is_empty());
        let bad = json!({"webhooks": [
            hook(json!({"name": "short.name", "sideEffects": "Unknown", "timeoutSeconds": 31,
                        "admissionReviewVersions": ["v2"], "failurePolicy": "Maybe"})),
            hook(json!({"sideEffects": null, "clientConfig": {}, "admissionReviewVersions": [],
                        "rules": [{"operations": ["*", "CREATE"], "apiGroups": [], "apiVersions": ["v1"], "resources": []}]})),
            hook(json!({})),
        ]});
        assert_eq!(
            texts(&validate(&bad, None, false)),
            vec![
                r#"webhooks[0].name: Invalid value: "short.name": should be a domain with at least three segments separated by dots"#,
                r#"webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore""#,
                r#"webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun""#,
                "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
                r#"webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1"#,
                r#"webhooks[1].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if '*' is present, must not specify other operations"#,
                "webhooks[1].rules[0].apiGroups: Required value",
                "webhooks[1].rules[0].resources: Required value",
                "webhooks[1].sideEffects: Required value: must specify one of None, NoneOnDryRun",
                "webhooks[1].clientConfig: Required value: exactly one of url or service is required",
                "webhooks[1].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
                r#"webhooks[2].name: Duplicate value: "deny.example.com""#,
            ]
        );
    }

    #[test]
    fn selectors_are_checked_and_kept_on_update_when_already_invalid() {
        let bad = json!({"webhooks": [hook(json!({
            "objectSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["not valid"]}]},
        }))]});
        assert_eq!(
            texts(&validate(&bad, None, false)),
            vec![
                r#"webhooks[0].objectSelector.matchExpressions[0].values[0]: Invalid value: "not valid": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#
            ]
        );
        assert!(validate(&bad, Some(&bad), false).is_empty());
    }

    #[test]
    fn updates_keep_what_the_old_object_already_had() {
        let old = json!({"webhooks": [hook(json!({"sideEffects": "Unknown"}))]});
        assert!(validate(&old, Some(&old), false).is_empty());
        assert!(!validate(&old, None, false).is_empty());
    }
}
