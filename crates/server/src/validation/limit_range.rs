//! LimitRange validation (`pkg/apis/core/validation/validation.go`
//! `ValidateLimitRange`, `validateLimitRangeTypeName`,
//! `validateLimitRangeResourceName`); an update runs the same rules.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::Value;

use super::field::{self, child, index, key};
use super::quota::{self, quantity};
use crate::status::FieldError;

/// `validateLimitRangeTypeName`.
fn type_name(value: &str, path: &str, errors: &mut Vec<FieldError>) {
    let messages = crate::selector::is_qualified_name(value);
    if !messages.is_empty() {
        for message in messages {
            errors.push(field::invalid(path, value, message));
        }
        return;
    }
    if !value.contains('/') && !matches!(value, "Pod" | "Container" | "PersistentVolumeClaim") {
        errors.push(field::invalid(
            path,
            value,
            "must be a standard limit type or fully qualified",
        ));
    }
}

fn resource_name(limit_type: &str, name: &str, path: &str, errors: &mut Vec<FieldError>) {
    match limit_type {
        "Pod" | "Container" => {
            super::resource_requirements::container_resource_name(name, path, errors)
        }
        _ => {
            quota::resource_name(name, path, errors);
        }
    }
}

/// The entries of one resource list of a limit, sorted (Go map order is random).
fn entries<'a>(limit: &'a Value, list: &str) -> BTreeMap<&'a str, &'a Value> {
    field::map_at(limit, list)
        .into_iter()
        .flatten()
        .map(|(name, value)| (name.as_str(), value))
        .collect()
}

/// `ValidateLimitRange`.
pub fn limit_range(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let limits = object
        .get("spec")
        .map(|spec| field::items_at(spec, "limits"))
        .unwrap_or_default();
    let mut seen_types: Vec<&str> = Vec::new();
    for (position, limit) in limits.iter().enumerate() {
        let path = index("spec.limits", position);
        let limit_type = field::str_at(limit, "type");
        type_name(limit_type, &child(&path, "type"), &mut errors);
        if seen_types.contains(&limit_type) {
            errors.push(field::duplicate(&child(&path, "type"), limit_type));
        }
        seen_types.push(limit_type);

        let max = entries(limit, "max");
        let min = entries(limit, "min");
        let mut defaults = BTreeMap::new();
        let mut default_requests = BTreeMap::new();
        for (list, values) in [("max", &max), ("min", &min)] {
            for name in values.keys() {
                resource_name(
                    limit_type,
                    name,
                    &key(&child(&path, list), name),
                    &mut errors,
                );
            }
        }
        if limit_type == "Pod" {
            for list in ["default", "defaultRequest"] {
                if !entries(limit, list).is_empty() {
                    errors.push(field::forbidden(
                        &child(&path, list),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        } else {
            defaults = entries(limit, "default");
            default_requests = entries(limit, "defaultRequest");
            for (list, values) in [
                ("default", &defaults),
                ("defaultRequest", &default_requests),
            ] {
                for name in values.keys() {
                    resource_name(
                        limit_type,
                        name,
                        &key(&child(&path, list), name),
                        &mut errors,
                    );
                }
            }
        }
        if limit_type == "PersistentVolumeClaim"
            && !min.contains_key("storage")
            && !max.contains_key("storage")
        {
            errors.push(field::required(
                &child(&path, "limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        let ratios = entries(limit, "maxLimitRequestRatio");
        for name in ratios.keys() {
            resource_name(
                limit_type,
                name,
                &key(&child(&path, "maxLimitRequestRatio"), name),
                &mut errors,
            );
        }
        let mut names: Vec<&str> = max
            .keys()
            .chain(min.keys())
            .chain(defaults.keys())
            .chain(default_requests.keys())
            .chain(ratios.keys())
            .copied()
            .collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            relations(
                &path,
                name,
                [
                    min.get(name),
                    max.get(name),
                    defaults.get(name),
                    default_requests.get(name),
                    ratios.get(name),
                ],
                &mut errors,
            );
        }
    }
    errors
}

/// The order rules between one resource's min, max, default, default request and ratio.
fn relations(
    path: &str,
    name: &str,
    [min, max, default, default_request, ratio]: [Option<&&Value>; 5],
    errors: &mut Vec<FieldError>,
) {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    let greater = |a: &Value, b: &Value| quantity(a).cmp_value(&quantity(b)) == Ordering::Greater;
    let at = |list: &str| key(&child(path, list), name);
    if let (Some(min), Some(max)) = (min, max) {
        if greater(min, max) {
            errors.push(field::invalid(
                &at("min"),
                &text(min),
                format!(
                    "min value {} is greater than max value {}",
                    text(min),
                    text(max)
                ),
            ));
        }
    }
    if let Some(request) = default_request {
        if let Some(min) = min.filter(|min| greater(min, request)) {
            errors.push(field::invalid(
                &at("defaultRequest"),
                &text(request),
                format!(
                    "min value {} is greater than default request value {}",
                    text(min),
                    text(request)
                ),
            ));
        }
        if let Some(max) = max.filter(|max| greater(request, max)) {
            errors.push(field::invalid(
                &at("defaultRequest"),
                &text(request),
                format!(
                    "default request value {} is greater than max value {}",
                    text(request),
                    text(max)
                ),
            ));
        }
        if let Some(default) = default.filter(|default| greater(request, default)) {
            errors.push(field::invalid(
                &at("defaultRequest"),
                &text(request),
                format!(
                    "default request value {} is greater than default limit value {}",
                    text(request),
                    text(default)
                ),
            ));
        }
    }
    if let Some(default) = default {
        if let Some(min) = min.filter(|min| greater(min, default)) {
            errors.push(field::invalid(
                &at("default"),
                &text(min),
                format!(
                    "min value {} is greater than default value {}",
                    text(min),
                    text(default)
                ),
            ));
        }
        if let Some(max) = max.filter(|max| greater(default, max)) {
            errors.push(field::invalid(
                &at("default"),
                &text(max),
                format!(
                    "default value {} is greater than max value {}",
                    text(default),
                    text(max)
                ),
            ));
        }
    }
    if let Some(ratio) = ratio {
        let ratio_quantity = quantity(ratio);
        if ratio_quantity.scaled_value(3) < 1000 {
            errors.push(field::invalid(
                &at("maxLimitRequestRatio"),
                &text(ratio),
                format!("ratio {} is less than 1", text(ratio)),
            ));
        }
        if let (Some(min), Some(max)) = (min, max) {
            ratio_within_bounds(path, name, ratio, min, max, errors);
        }
    }
    if !quota::is_native(name) || name.starts_with("hugepages-") {
        if let (Some(default), Some(request)) = (default, default_request) {
            if quantity(default).cmp_value(&quantity(request)) != Ordering::Equal {
                errors.push(field::invalid(
                    &at("defaultRequest"),
                    &text(request),
                    format!(
                        "default value {} must equal to defaultRequest value {} in {name}",
                        text(default),
                        text(request)
                    ),
                ));
            }
        }
    }
}

/// `maxLimitRequestRatio` may not exceed max/min (`%f` prints six decimals).
fn ratio_within_bounds(
    path: &str,
    name: &str,
    ratio: &Value,
    min: &Value,
    max: &Value,
    errors: &mut Vec<FieldError>,
) {
    const MAX_MILLI_VALUE: i64 = i64::MAX / 1000;
    let (ratio_q, min_q, max_q) = (quantity(ratio), quantity(min), quantity(max));
    let (mut ratio_value, mut min_value, mut max_value) = (
        ratio_q.scaled_value(0) as f64,
        min_q.scaled_value(0),
        max_q.scaled_value(0),
    );
    if ratio_q.scaled_value(0) < MAX_MILLI_VALUE
        && min_value < MAX_MILLI_VALUE
        && max_value < MAX_MILLI_VALUE
    {
        ratio_value = ratio_q.scaled_value(3) as f64 / 1000.0;
        min_value = min_q.scaled_value(3);
        max_value = max_q.scaled_value(3);
    }
    let limit = max_value as f64 / min_value as f64;
    if ratio_value > limit {
        let text = ratio.as_str().unwrap_or_default();
        errors.push(field::invalid(
            &key(&child(path, "maxLimitRequestRatio"), name),
            text,
            format!("ratio {text} is greater than max/min = {limit:.6}"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(object: Value) -> Vec<String> {
        limit_range(&object)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Cases from kube's `TestValidateLimitRange`.
    #[test]
    fn limit_ranges_as_kube_validates_them() {
        assert!(texts(json!({"spec": {"limits": [
            {"type": "Pod", "max": {"cpu": "100m", "memory": "10000"}, "min": {"cpu": "5m", "memory": "100"}, "maxLimitRequestRatio": {"cpu": "10"}},
            {"type": "Container", "max": {"cpu": "100m"}, "min": {"cpu": "5m"}, "default": {"cpu": "50m"}, "defaultRequest": {"cpu": "10m"}},
            {"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}, "min": {"storage": "5Gi"}},
            {"type": "example.com/thing", "max": {"example.com/foo": "4"}}
        ]}})).is_empty());
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (
                json!({"spec": {"limits": [{"type": "Pod", "max": {"cpu": "1"}}, {"type": "Pod", "max": {"cpu": "2"}}]}}),
                vec!["spec.limits[1].type: Duplicate value: \"Pod\""],
            ),
            (
                json!({"spec": {"limits": [{"type": "Pod", "default": {"cpu": "1"}}]}}),
                vec!["spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"],
            ),
            (
                json!({"spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}}),
                vec!["spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1"],
            ),
            (
                json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}, "defaultRequest": {"cpu": "2"}}]}}),
                vec!["spec.limits[0].defaultRequest[cpu]: Invalid value: \"2\": default request value 2 is greater than max value 1"],
            ),
            (
                json!({"spec": {"limits": [{"type": "Container", "maxLimitRequestRatio": {"cpu": "800m"}}]}}),
                vec!["spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: \"800m\": ratio 800m is less than 1"],
            ),
            (
                json!({"spec": {"limits": [{"type": "Pod", "min": {"memory": "10"}, "max": {"memory": "20"}, "maxLimitRequestRatio": {"memory": "3"}}]}}),
                vec!["spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: \"3\": ratio 3 is greater than max/min = 2.000000"],
            ),
            (
                json!({"spec": {"limits": [{"type": "PersistentVolumeClaim", "max": {"cpu": "1"}}]}}),
                vec!["spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided"],
            ),
            (
                json!({"spec": {"limits": [{"type": "Container", "max": {"storage": "1"}}]}}),
                vec!["spec.limits[0].max[storage]: Invalid value: storage: must be a standard resource for containers"],
            ),
            (
                json!({"spec": {"limits": [{"type": "Widget", "max": {"cpu": "1"}}]}}),
                vec!["spec.limits[0].type: Invalid value: \"Widget\": must be a standard limit type or fully qualified"],
            ),
            (
                json!({"spec": {"limits": [{"type": "Container", "default": {"example.com/gpu": "2"}, "defaultRequest": {"example.com/gpu": "1"}}]}}),
                vec!["spec.limits[0].defaultRequest[example.com/gpu]: Invalid value: \"1\": default value 2 must equal to defaultRequest value 1 in example.com/gpu"],
            ),
        ];
        for (object, expected) in cases {
            assert_eq!(texts(object.clone()), expected, "{object}");
        }
    }
}
