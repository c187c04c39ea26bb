//! autoscaling HorizontalPodAutoscaler as `pkg/apis/autoscaling/validation`
//! checks it (`ValidateHorizontalPodAutoscaler`, `...Update`): replicas
//! bounds, `scaleTargetRef`, every metric source type, `behavior`.
//!
//! kube validates the internal object, whose field names are autoscaling/v2's:
//! an autoscaling/v1 write is converted to v2 first (`versions/hpa.rs`), so
//! a v1 `targetCPUUtilizationPercentage` of 0 is reported at
//! `spec.metrics[0].resource.target.averageUtilization`, as kube reports it.

use serde_json::Value;

use super::field::{self, child, index};
use super::quota;
use crate::status::FieldError;

/// `MaxPeriodSeconds`.
const MAX_PERIOD_SECONDS: i64 = 1800;
/// `MaxStabilizationWindowSeconds`.
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;
/// `validMetricSourceTypesList` (sorted, as `sets.String.List`).
const METRIC_SOURCE_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];
/// `validSelectPolicyTypesList`.
const SELECT_POLICIES: [&str; 3] = ["Disabled", "Max", "Min"];
/// `validPolicyTypesList`.
const POLICY_TYPES: [&str; 2] = ["Percent", "Pods"];

/// `ValidateHorizontalPodAutoscaler` (`old` unset) and
/// `ValidateHorizontalPodAutoscalerUpdate`: with HPAScaleToZero off (its
/// default in 1.34), `minReplicas` may be 0 only when it already was.
pub fn horizontal_pod_autoscaler(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let converted = as_v2(object);
    let object = converted.as_ref().unwrap_or(object);
    let old_min = old
        .and_then(|old| old.get("spec"))
        .and_then(|spec| field::int_at(spec, "minReplicas"));
    let lower_bound = if old_min == Some(0) { 0 } else { 1 };
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    spec_rules(spec, "spec", lower_bound, &mut errors);
    errors
}

/// An autoscaling/v1 object as v2 (kube's internal form); `None` when it is v2 already.
fn as_v2(object: &Value) -> Option<Value> {
    if object.get("apiVersion").and_then(Value::as_str) != Some("autoscaling/v1") {
        return None;
    }
    let mut converted = object.clone();
    crate::versions::convert(&mut converted, "autoscaling/v2").ok()?;
    Some(converted)
}

/// `validateHorizontalPodAutoscalerSpec`.
fn spec_rules(spec: &Value, path: &str, lower_bound: i64, errors: &mut Vec<FieldError>) {
    let min_replicas = field::int_at(spec, "minReplicas");
    let max_replicas = field::int_at(spec, "maxReplicas").unwrap_or(0);
    if let Some(min) = min_replicas {
        if min < lower_bound {
            errors.push(field::invalid_number(
                &child(path, "minReplicas"),
                min,
                format!("must be greater than or equal to {lower_bound}"),
            ));
        }
    }
    if max_replicas < 1 {
        errors.push(field::invalid_number(
            &child(path, "maxReplicas"),
            max_replicas,
            "must be greater than 0",
        ));
    }
    if min_replicas.is_some_and(|min| max_replicas < min) {
        errors.push(field::invalid_number(
            &child(path, "maxReplicas"),
            max_replicas,
            "must be greater than or equal to `minReplicas`",
        ));
    }
    cross_version_object_reference(
        spec.get("scaleTargetRef").unwrap_or(&Value::Null),
        &child(path, "scaleTargetRef"),
        errors,
    );
    metrics(
        field::items_at(spec, "metrics"),
        &child(path, "metrics"),
        min_replicas,
        errors,
    );
    if let Some(behavior) = spec.get("behavior").filter(|value| !value.is_null()) {
        let behavior_path = child(path, "behavior");
        for direction in ["scaleUp", "scaleDown"] {
            if let Some(rules) = behavior.get(direction).filter(|value| !value.is_null()) {
                scaling_rules(rules, &child(&behavior_path, direction), errors);
            }
        }
    }
}

/// `ValidateCrossVersionObjectReference`.
fn cross_version_object_reference(reference: &Value, path: &str, errors: &mut Vec<FieldError>) {
    for name in ["kind", "name"] {
        let value = field::str_at(reference, name);
        let value_path = child(path, name);
        if value.is_empty() {
            errors.push(field::required(&value_path, ""));
        } else {
            for message in crate::names::path_segment(value) {
                errors.push(field::invalid(&value_path, value, message));
            }
        }
    }
}

/// `validateMetrics`.
fn metrics(metrics: &[Value], path: &str, min_replicas: Option<i64>, errors: &mut Vec<FieldError>) {
    let mut has_object_or_external = false;
    for (position, metric) in metrics.iter().enumerate() {
        metric_spec(metric, &index(path, position), errors);
        has_object_or_external |= matches!(field::str_at(metric, "type"), "Object" | "External");
    }
    if min_replicas == Some(0) && !has_object_or_external {
        errors.push(field::forbidden(
            path,
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
}

/// The metric source fields in the order `validateMetricSpec` looks at them.
const SOURCES: [&str; 5] = [
    "object",
    "external",
    "pods",
    "resource",
    "containerResource",
];

/// `validateMetricSpec`.
fn metric_spec(metric: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let metric_type = field::str_at(metric, "type");
    let type_path = child(path, "type");
    if metric_type.is_empty() {
        errors.push(field::required(
            &type_path,
            "must specify a metric source type",
        ));
    }
    if !METRIC_SOURCE_TYPES.contains(&metric_type) {
        errors.push(field::not_supported(
            &type_path,
            metric_type,
            &METRIC_SOURCE_TYPES,
        ));
    }
    let present: Vec<&str> = SOURCES
        .into_iter()
        .filter(|source| field::is_set(metric, source))
        .collect();
    if let Some(first) = present.first() {
        let source = &metric[*first];
        let source_path = child(path, first);
        match *first {
            "object" => object_source(source, &source_path, errors),
            "external" => external_source(source, &source_path, errors),
            "pods" => pods_source(source, &source_path, errors),
            "resource" => resource_source(source, &source_path, false, errors),
            _ => resource_source(source, &source_path, true, errors),
        }
    }
    let expected = match metric_type {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        _ => {
            errors.push(field::not_supported(
                &type_path,
                metric_type,
                &METRIC_SOURCE_TYPES,
            ));
            ""
        }
    };
    if !expected.is_empty() && !present.contains(&expected) {
        errors.push(field::required(
            &child(path, expected),
            "must populate information for the given metric source",
        ));
    }
    if present.len() != 1 {
        // kube walks a Go map here (random order); sorted instead.
        let mut others: Vec<&str> = present
            .into_iter()
            .filter(|source| *source != expected)
            .collect();
        others.sort_unstable();
        for other in others {
            errors.push(field::forbidden(
                &child(path, other),
                "must populate the given metric source only",
            ));
        }
    }
}

/// `validateObjectSource`.
fn object_source(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    cross_version_object_reference(
        source.get("describedObject").unwrap_or(&Value::Null),
        &child(path, "describedObject"),
        errors,
    );
    metric_identifier(source, path, errors);
    let target = metric_target(source, path, errors);
    if !field::is_set(target, "value") && !field::is_set(target, "averageValue") {
        errors.push(field::required(
            &child(path, "target.averageValue"),
            "must set either a target value or averageValue",
        ));
    }
}

/// `validateExternalSource`.
fn external_source(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    metric_identifier(source, path, errors);
    let target = metric_target(source, path, errors);
    let value = field::is_set(target, "value");
    let average = field::is_set(target, "averageValue");
    if !value && !average {
        errors.push(field::required(
            &child(path, "target.averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if value && average {
        errors.push(field::forbidden(
            &child(path, "target.value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
}

/// `validatePodsSource`.
fn pods_source(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    metric_identifier(source, path, errors);
    let target = metric_target(source, path, errors);
    if !field::is_set(target, "averageValue") {
        errors.push(field::required(
            &child(path, "target.averageValue"),
            "must specify a positive target averageValue",
        ));
    }
}

/// `validateResourceSource` and `validateContainerResourceSource`.
fn resource_source(source: &Value, path: &str, container: bool, errors: &mut Vec<FieldError>) {
    let name = field::str_at(source, "name");
    let name_path = child(path, "name");
    if name.is_empty() {
        errors.push(field::required(&name_path, "must specify a resource name"));
    } else if container {
        container_resource_name(name, &name_path, errors);
    }
    if container {
        let container_name = field::str_at(source, "container");
        let container_path = child(path, "container");
        if container_name.is_empty() {
            errors.push(field::required(&container_path, "must specify a container"));
        } else {
            field::dns1123_label(&container_path, container_name, errors);
        }
    }
    let target = metric_target(source, path, errors);
    let utilization = field::is_set(target, "averageUtilization");
    let average = field::is_set(target, "averageValue");
    if !utilization && !average {
        errors.push(field::required(
            &child(path, "target.averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if utilization && average {
        errors.push(field::forbidden(
            &child(path, "target.averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
}

/// core/v1 `ValidateContainerResourceName` (the name printed quoted: it is a string there).
fn container_resource_name(name: &str, path: &str, errors: &mut Vec<FieldError>) {
    for message in crate::selector::is_qualified_name(name) {
        errors.push(field::invalid(path, name, message));
    }
    if !name.contains('/') {
        let standard = matches!(name, "cpu" | "memory" | "ephemeral-storage")
            || name.starts_with("hugepages-");
        if !standard {
            errors.push(field::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !quota::is_native(name) && !quota::is_extended(name) {
        errors.push(field::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
}

/// `validateMetricTarget` of `source.target`; returns the target.
fn metric_target<'a>(source: &'a Value, path: &str, errors: &mut Vec<FieldError>) -> &'a Value {
    let target = source.get("target").unwrap_or(&Value::Null);
    let path = child(path, "target");
    let target_type = field::str_at(target, "type");
    if target_type.is_empty() {
        errors.push(field::required(
            &child(&path, "type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(target_type, "Utilization" | "Value" | "AverageValue") {
        errors.push(field::invalid(
            &child(&path, "type"),
            target_type,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for name in ["value", "averageValue"] {
        if let Some(quantity) = target.get(name).filter(|value| !value.is_null()) {
            if quota::quantity(quantity).sign() != 1 {
                errors.push(field::invalid(
                    &child(&path, name),
                    quantity.as_str().unwrap_or_default(),
                    "must be positive",
                ));
            }
        }
    }
    if let Some(utilization) = field::int_at(target, "averageUtilization") {
        if utilization < 1 {
            errors.push(field::invalid_number(
                &child(&path, "averageUtilization"),
                utilization,
                "must be greater than 0",
            ));
        }
    }
    target
}

/// `validateMetricIdentifier` of `source.metric`.
fn metric_identifier(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let metric = source.get("metric").unwrap_or(&Value::Null);
    let name = field::str_at(metric, "name");
    let name_path = child(path, "metric.name");
    if name.is_empty() {
        errors.push(field::required(&name_path, "must specify a metric name"));
    } else {
        for message in crate::names::path_segment(name) {
            errors.push(field::invalid(&name_path, name, message));
        }
    }
}

/// `validateScalingRules`.
fn scaling_rules(rules: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(window) = field::int_at(rules, "stabilizationWindowSeconds") {
        let window_path = child(path, "stabilizationWindowSeconds");
        if window < 0 {
            errors.push(field::invalid_number(
                &window_path,
                window,
                "must be greater than or equal to zero",
            ));
        }
        if window > MAX_STABILIZATION_WINDOW_SECONDS {
            errors.push(field::invalid_number(
                &window_path,
                window,
                format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(select) = rules.get("selectPolicy").and_then(Value::as_str) {
        if !SELECT_POLICIES.contains(&select) {
            errors.push(field::not_supported(
                &child(path, "selectPolicy"),
                select,
                &SELECT_POLICIES,
            ));
        }
    }
    let policies_path = child(path, "policies");
    let policies = field::items_at(rules, "policies");
    // An autoscaling/v2 write was defaulted (`GenerateHPAScale{Up,Down}Rules`
    // fill a nil list), an autoscaling/v1 one is validated as converted from
    // its annotation, undefaulted, as kube validates the internal object.
    if policies.is_empty() {
        errors.push(field::required(
            &policies_path,
            "must specify at least one Policy",
        ));
    }
    for (position, policy) in policies.iter().enumerate() {
        let path = index(&policies_path, position);
        let policy_type = field::str_at(policy, "type");
        if !POLICY_TYPES.contains(&policy_type) {
            errors.push(field::not_supported(
                &child(&path, "type"),
                policy_type,
                &POLICY_TYPES,
            ));
        }
        let value = field::int_at(policy, "value").unwrap_or(0);
        if value <= 0 {
            errors.push(field::invalid_number(
                &child(&path, "value"),
                value,
                "must be greater than zero",
            ));
        }
        let period = field::int_at(policy, "periodSeconds").unwrap_or(0);
        let period_path = child(&path, "periodSeconds");
        if period <= 0 {
            errors.push(field::invalid_number(
                &period_path,
                period,
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            errors.push(field::invalid_number(
                &period_path,
                period,
                format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
}

#[cfg(test)]
#[path = "autoscaling_tests.rs"]
mod tests;
