//! Label selectors in workload specs: `ValidateLabelSelector`
//! (`apimachinery/pkg/apis/meta/v1/validation`), `LabelSelectorAsSelector`
//! and matching, and Go's `%#v` of the selector and label maps kube puts in
//! its messages.

use serde_json::{Map, Value};

use super::field::{self, child, index};
use crate::go::strconv::quote;
use crate::status::FieldError;

/// `ValidateLabelSelector` (strict label values).
pub fn validate(selector: &Value, path: &str, errors: &mut Vec<FieldError>) {
    validate_with(selector, path, false, errors);
}

/// `ValidateLabelSelector` with `LabelSelectorValidationOptions`: with
/// `allow_invalid_values` (`AllowInvalidLabelValueInSelector`, which update
/// strategies set when the old object already held such a value) the values
/// of `matchExpressions` are not checked; `matchLabels` always are.
pub fn validate_with(
    selector: &Value,
    path: &str,
    allow_invalid_values: bool,
    errors: &mut Vec<FieldError>,
) {
    field::labels(
        &child(path, "matchLabels"),
        field::map_at(selector, "matchLabels"),
        errors,
    );
    let expressions_path = child(path, "matchExpressions");
    for (position, requirement) in field::items_at(selector, "matchExpressions")
        .iter()
        .enumerate()
    {
        let item_path = index(&expressions_path, position);
        let values = field::items_at(requirement, "values");
        match field::str_at(requirement, "operator") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errors.push(field::required(
                        &child(&item_path, "values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errors.push(field::forbidden(
                        &child(&item_path, "values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            other => errors.push(field::invalid(
                &child(&item_path, "operator"),
                other,
                "not a valid selector operator",
            )),
        }
        field::label_name(
            &child(&item_path, "key"),
            field::str_at(requirement, "key"),
            errors,
        );
        if allow_invalid_values {
            continue;
        }
        for (value_position, value) in values.iter().enumerate() {
            let text = value.as_str().unwrap_or_default();
            for message in crate::selector::is_valid_label_value(text) {
                errors.push(field::invalid(
                    &index(&child(&item_path, "values"), value_position),
                    text,
                    message,
                ));
            }
        }
    }
}

/// Whether strict `ValidateLabelSelector` finds anything wrong with the
/// selector (the strategies' `hasInvalidLabelValueIn...` checks).
pub fn has_errors(selector: &Value) -> bool {
    let mut errors = Vec::new();
    validate(selector, "", &mut errors);
    !errors.is_empty()
}

/// Whether the selector has no requirement (`{}`: it selects everything).
pub fn is_empty(selector: &Value) -> bool {
    field::map_at(selector, "matchLabels").is_none_or(Map::is_empty)
        && field::items_at(selector, "matchExpressions").is_empty()
}

/// `metav1.LabelSelectorAsSelector` succeeding: every key, value and operator valid.
pub fn converts(selector: &Value) -> bool {
    let mut errors = Vec::new();
    validate(selector, "", &mut errors);
    errors.is_empty()
}

/// Whether a (convertible, non-empty) selector matches `labels`.
pub fn matches(selector: &Value, labels: Option<&Map<String, Value>>) -> bool {
    let label = |name: &str| {
        labels
            .and_then(|labels| labels.get(name))
            .and_then(Value::as_str)
    };
    let labels_match = field::map_at(selector, "matchLabels")
        .into_iter()
        .flatten()
        .all(|(name, value)| label(name) == value.as_str());
    labels_match
        && field::items_at(selector, "matchExpressions")
            .iter()
            .all(|requirement| {
                let value = label(field::str_at(requirement, "key"));
                let listed = |value: &str| {
                    field::items_at(requirement, "values")
                        .iter()
                        .any(|item| item.as_str() == Some(value))
                };
                match field::str_at(requirement, "operator") {
                    "In" => value.is_some_and(listed),
                    "NotIn" => !value.is_some_and(listed),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    _ => false,
                }
            })
}

/// Go's `%#v` of a `map[string]string` (keys sorted, as fmt prints maps).
pub fn go_string_map(map: Option<&Value>) -> String {
    match map.and_then(Value::as_object) {
        None => "map[string]string(nil)".to_string(),
        Some(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(name, value)| {
                    format!(
                        "{}:{}",
                        quote(name),
                        quote(value.as_str().unwrap_or_default())
                    )
                })
                .collect();
            format!("map[string]string{{{}}}", entries.join(", "))
        }
    }
}

/// Go's `%#v` of a `[]string`.
pub fn go_string_slice(list: Option<&Value>) -> String {
    match list.and_then(Value::as_array) {
        None => "[]string(nil)".to_string(),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|item| quote(item.as_str().unwrap_or_default()))
                .collect();
            format!("[]string{{{}}}", items.join(", "))
        }
    }
}

/// Go's `%#v` of a `metav1.LabelSelector` (as `field.Error` prints a pointer's target).
pub fn go_label_selector(selector: &Value) -> String {
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|requirement| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        quote(field::str_at(requirement, "key")),
                        quote(field::str_at(requirement, "operator")),
                        go_string_slice(requirement.get("values"))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}",
        go_string_map(selector.get("matchLabels"))
    )
}
