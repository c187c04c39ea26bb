//! policy/v1 PodDisruptionBudget as `pkg/apis/policy/validation/validation.go`
//! checks it (`ValidatePodDisruptionBudget` on create and update: the spec
//! is mutable; `ValidatePodDisruptionBudgetStatusUpdate` on `/status`), with
//! `ValidateConditions` of `apimachinery/pkg/apis/meta/v1/validation`.

use std::collections::BTreeSet;

use serde_json::Value;

use super::field::{self, child, index};
use super::int_or_percent::{go_int_or_string, int_or_percent_value, positive_int_or_percent};
use crate::status::FieldError;

const CONDITION_REASON_MAX: usize = 1024;
const CONDITION_MESSAGE_MAX: usize = 32768;
const CONDITION_REASON_FORMAT: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";

fn set<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|value| !value.is_null())
}

/// Go's `%#v` of an `*intstr.IntOrString` field inside a struct: kube prints
/// a pointer's address, which no client can rely on; this prints its target.
fn go_int_or_string_pointer(value: Option<&Value>) -> String {
    value.map_or("(*intstr.IntOrString)(nil)".to_string(), |value| {
        format!("&{}", go_int_or_string(value))
    })
}

/// `ValidatePodDisruptionBudget` (`ValidatePodDisruptionBudgetSpec`), with
/// the strategy's `PodDisruptionBudgetValidationOptions`: on update (`old`),
/// `AllowInvalidLabelValueInSelector` when the old selector already fails
/// strict validation (`hasInvalidLabelValueInLabelSelector`).
pub fn pod_disruption_budget(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let allow_invalid_values = old
        .and_then(|old| old.get("spec"))
        .and_then(|spec| set(spec, "selector"))
        .is_some_and(super::selector::has_errors);
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    let min_available = set(spec, "minAvailable");
    let max_unavailable = set(spec, "maxUnavailable");
    if min_available.is_some() && max_unavailable.is_some() {
        let selector = set(spec, "selector")
            .map_or("(*v1.LabelSelector)(nil)".to_string(), |selector| {
                format!("&{}", super::selector::go_label_selector(selector))
            });
        let policy = set(spec, "unhealthyPodEvictionPolicy")
            .and_then(Value::as_str)
            .map_or(
                "(*policy.UnhealthyPodEvictionPolicyType)(nil)".to_string(),
                |policy| format!("&{}", crate::go::strconv::quote(policy)),
            );
        errors.push(field::invalid_rendered(
            "spec",
            &format!(
                "policy.PodDisruptionBudgetSpec{{MinAvailable:{}, Selector:{selector}, MaxUnavailable:{}, UnhealthyPodEvictionPolicy:{policy}}}",
                go_int_or_string_pointer(min_available),
                go_int_or_string_pointer(max_unavailable),
            ),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (name, value) in [
        ("minAvailable", min_available),
        ("maxUnavailable", max_unavailable),
    ] {
        let Some(value) = value else { continue };
        let path = child("spec", name);
        positive_int_or_percent(Some(value), &path, &mut errors);
        if let Value::String(text) = value {
            if text.ends_with('%') && int_or_percent_value(Some(value)) > 100 {
                errors.push(field::invalid_rendered(
                    &path,
                    &go_int_or_string(value),
                    "must not be greater than 100%",
                ));
            }
        }
    }
    if let Some(selector) = set(spec, "selector") {
        super::selector::validate_with(
            selector,
            "spec.selector",
            allow_invalid_values,
            &mut errors,
        );
    }
    if let Some(policy) = set(spec, "unhealthyPodEvictionPolicy").and_then(Value::as_str) {
        if !matches!(policy, "AlwaysAllow" | "IfHealthyBudget") {
            errors.push(field::not_supported(
                "spec.unhealthyPodEvictionPolicy",
                policy,
                &["AlwaysAllow", "IfHealthyBudget"],
            ));
        }
    }
    errors
}

/// `ValidatePodDisruptionBudgetStatusUpdate` (policy/v1).
pub fn pod_disruption_budget_status(object: &Value) -> Vec<FieldError> {
    let status = object.get("status").unwrap_or(&Value::Null);
    let mut errors = conditions(field::items_at(status, "conditions"), "status.conditions");
    for name in [
        "disruptionsAllowed",
        "currentHealthy",
        "desiredHealthy",
        "expectedPods",
    ] {
        field::nonnegative(status, name, "status", &mut errors);
    }
    errors
}

fn is_condition_reason(reason: &str) -> bool {
    let bytes = reason.as_bytes();
    let middle = |byte: &u8| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b',' | b':');
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphabetic()
                && (bytes.len() == 1 || last.is_ascii_alphanumeric() || *last == b'_')
                && bytes.iter().all(middle)
        }
        _ => false,
    }
}

/// `metav1validation.ValidateConditions`.
pub fn conditions(list: &[Value], path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut types = BTreeSet::new();
    for (position, condition) in list.iter().enumerate() {
        let item = index(path, position);
        let kind = field::str_at(condition, "type");
        if !types.insert(kind) {
            errors.push(field::duplicate(&child(&item, "type"), kind));
        }
        field::label_name(&child(&item, "type"), kind, &mut errors);
        let status = field::str_at(condition, "status");
        if !matches!(status, "True" | "False" | "Unknown") {
            errors.push(field::not_supported(
                &child(&item, "status"),
                status,
                &["False", "True", "Unknown"],
            ));
        }
        if let Some(generation) = field::int_at(condition, "observedGeneration") {
            if generation < 0 {
                errors.push(field::invalid_number(
                    &child(&item, "observedGeneration"),
                    generation,
                    "must be greater than or equal to zero",
                ));
            }
        }
        if field::str_at(condition, "lastTransitionTime").is_empty() {
            errors.push(field::required(
                &child(&item, "lastTransitionTime"),
                "must be set",
            ));
        }
        let reason = field::str_at(condition, "reason");
        let reason_path = child(&item, "reason");
        if reason.is_empty() {
            errors.push(field::required(&reason_path, "must be set"));
        } else {
            if !is_condition_reason(reason) {
                errors.push(field::invalid(
                    &reason_path,
                    reason,
                    CONDITION_REASON_FORMAT,
                ));
            }
            if reason.len() > CONDITION_REASON_MAX {
                errors.push(field::too_long(&reason_path, CONDITION_REASON_MAX));
            }
        }
        if field::str_at(condition, "message").len() > CONDITION_MESSAGE_MAX {
            errors.push(field::too_long(
                &child(&item, "message"),
                CONDITION_MESSAGE_MAX,
            ));
        }
    }
    errors
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
