//! HPA metric specs and statuses between `autoscaling/v2` and the
//! `autoscaling/v1` types kube marshals into the round-trip annotations
//! (`pkg/apis/autoscaling/v1/conversion.go`: `Convert_*_ObjectMetricSource_*`,
//! `PodsMetricSource`, `ResourceMetricSource`, `ExternalMetricSource`,
//! their `*MetricStatus` peers, and the generated `MetricSpec`/`MetricStatus`
//! and `ContainerResource*` functions).
//!
//! v2 → v1 produces Go's JSON text of the v1 struct (field order, `omitempty`,
//! a non-pointer `resource.Quantity` as `"0"` when unset); v1 → v2 produces
//! the v2 tree as the internal type round-trips into it.

use serde_json::{json, Map, Value};

use super::go_json::{self, GoObject};

/// A field, unless absent or `null` (a nil pointer).
fn present<'a>(object: &'a Value, key: &str) -> Option<&'a Value> {
    object.get(key).filter(|value| !value.is_null())
}

fn string_or_empty(object: &Value, key: &str) -> Value {
    present(object, key)
        .cloned()
        .unwrap_or_else(|| Value::from(""))
}

/// A non-pointer `resource.Quantity`: the zero quantity is `"0"`.
fn quantity_or_zero(object: &Value, key: &str) -> Value {
    present(object, key)
        .cloned()
        .unwrap_or_else(|| Value::from("0"))
}

fn empty() -> Value {
    Value::Object(Map::new())
}

/// `metav1.LabelSelector` as Go writes it: `matchLabels` before
/// `matchExpressions` (each requirement's fields, `key`, `operator`,
/// `values`, are in sorted order already).
fn selector_text(selector: &Value) -> String {
    GoObject::new()
        .optional(
            "matchLabels",
            present(selector, "matchLabels").filter(|labels| !is_empty_map(labels)),
        )
        .optional(
            "matchExpressions",
            present(selector, "matchExpressions").filter(|list| !is_empty_list(list)),
        )
        .finish()
}

fn is_empty_map(value: &Value) -> bool {
    value.as_object().is_some_and(Map::is_empty)
}

fn is_empty_list(value: &Value) -> bool {
    value.as_array().is_some_and(Vec::is_empty)
}

fn with_selector(object: GoObject, key: &str, selector: Option<&Value>) -> GoObject {
    match selector {
        Some(selector) => object.raw(key, &selector_text(selector)),
        None => object,
    }
}

/// v2 `CrossVersionObjectReference` as v1's (`kind`, `name`, `apiVersion,omitempty`).
fn reference_text(reference: &Value) -> String {
    GoObject::new()
        .value("kind", &string_or_empty(reference, "kind"))
        .value("name", &string_or_empty(reference, "name"))
        .optional(
            "apiVersion",
            present(reference, "apiVersion").filter(|version| version.as_str() != Some("")),
        )
        .finish()
}

/// The `metric` identifier of a v2 source: its name and selector.
fn identifier(source: &Value) -> (Value, Option<&Value>) {
    let metric = present(source, "metric");
    let name = metric
        .map(|metric| string_or_empty(metric, "name"))
        .unwrap_or_else(|| Value::from(""));
    (name, metric.and_then(|metric| present(metric, "selector")))
}

/// A v2 `MetricSpec` as the text of a v1 `MetricSpec`.
pub fn spec_v2_to_v1_text(metric: &Value) -> String {
    let mut out = GoObject::new().value("type", &string_or_empty(metric, "type"));
    if let Some(object) = present(metric, "object") {
        let target = present(object, "target").cloned().unwrap_or_else(empty);
        let (name, selector) = identifier(object);
        let described = present(object, "describedObject")
            .cloned()
            .unwrap_or_else(empty);
        let text = GoObject::new()
            .raw("target", &reference_text(&described))
            .value("metricName", &name)
            .value("targetValue", &quantity_or_zero(&target, "value"));
        let text = with_selector(text, "selector", selector)
            .optional("averageValue", present(&target, "averageValue"))
            .finish();
        out = out.raw("object", &text);
    }
    if let Some(pods) = present(metric, "pods") {
        let target = present(pods, "target").cloned().unwrap_or_else(empty);
        let (name, selector) = identifier(pods);
        let text = GoObject::new().value("metricName", &name).value(
            "targetAverageValue",
            &quantity_or_zero(&target, "averageValue"),
        );
        out = out.raw("pods", &with_selector(text, "selector", selector).finish());
    }
    for (key, container) in [("resource", false), ("containerResource", true)] {
        if let Some(resource) = present(metric, key) {
            let target = present(resource, "target").cloned().unwrap_or_else(empty);
            let mut text = GoObject::new()
                .value("name", &string_or_empty(resource, "name"))
                .optional(
                    "targetAverageUtilization",
                    present(&target, "averageUtilization"),
                )
                .optional("targetAverageValue", present(&target, "averageValue"));
            if container {
                text = text.value("container", &string_or_empty(resource, "container"));
            }
            out = out.raw(key, &text.finish());
        }
    }
    if let Some(external) = present(metric, "external") {
        let target = present(external, "target").cloned().unwrap_or_else(empty);
        let (name, selector) = identifier(external);
        let text = GoObject::new().value("metricName", &name);
        let text = with_selector(text, "metricSelector", selector)
            .optional("targetValue", present(&target, "value"))
            .optional("targetAverageValue", present(&target, "averageValue"))
            .finish();
        out = out.raw("external", &text);
    }
    out.finish()
}

/// A v2 `MetricStatus` as the text of a v1 `MetricStatus`.
pub fn status_v2_to_v1_text(metric: &Value) -> String {
    let mut out = GoObject::new().value("type", &string_or_empty(metric, "type"));
    if let Some(object) = present(metric, "object") {
        let current = present(object, "current").cloned().unwrap_or_else(empty);
        let (name, selector) = identifier(object);
        let described = present(object, "describedObject")
            .cloned()
            .unwrap_or_else(empty);
        let text = GoObject::new()
            .raw("target", &reference_text(&described))
            .value("metricName", &name)
            .value("currentValue", &quantity_or_zero(&current, "value"));
        let text = with_selector(text, "selector", selector)
            .optional("averageValue", present(&current, "averageValue"))
            .finish();
        out = out.raw("object", &text);
    }
    if let Some(pods) = present(metric, "pods") {
        let current = present(pods, "current").cloned().unwrap_or_else(empty);
        let (name, selector) = identifier(pods);
        let text = GoObject::new().value("metricName", &name).value(
            "currentAverageValue",
            &quantity_or_zero(&current, "averageValue"),
        );
        out = out.raw("pods", &with_selector(text, "selector", selector).finish());
    }
    for (key, container) in [("resource", false), ("containerResource", true)] {
        if let Some(resource) = present(metric, key) {
            let current = present(resource, "current").cloned().unwrap_or_else(empty);
            let mut text = GoObject::new()
                .value("name", &string_or_empty(resource, "name"))
                .optional(
                    "currentAverageUtilization",
                    present(&current, "averageUtilization"),
                )
                .value(
                    "currentAverageValue",
                    &quantity_or_zero(&current, "averageValue"),
                );
            if container {
                text = text.value("container", &string_or_empty(resource, "container"));
            }
            out = out.raw(key, &text.finish());
        }
    }
    if let Some(external) = present(metric, "external") {
        let current = present(external, "current").cloned().unwrap_or_else(empty);
        let (name, selector) = identifier(external);
        let text = GoObject::new().value("metricName", &name);
        let text = with_selector(text, "metricSelector", selector)
            .value("currentValue", &quantity_or_zero(&current, "value"))
            .optional("currentAverageValue", present(&current, "averageValue"))
            .finish();
        out = out.raw("external", &text);
    }
    out.finish()
}

/// v1 `CrossVersionObjectReference` as v2's (the same fields).
fn reference_v1_to_v2(reference: Option<&Value>) -> Value {
    let reference = reference.cloned().unwrap_or_else(empty);
    let mut out = Map::new();
    out.insert("kind".into(), string_or_empty(&reference, "kind"));
    out.insert("name".into(), string_or_empty(&reference, "name"));
    if let Some(version) = present(&reference, "apiVersion").filter(|v| v.as_str() != Some("")) {
        out.insert("apiVersion".into(), version.clone());
    }
    Value::Object(out)
}

/// A v2 `MetricIdentifier` from a v1 source's name and selector fields.
fn identifier_v1_to_v2(source: &Value, selector_key: &str) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), string_or_empty(source, "metricName"));
    if let Some(selector) = present(source, selector_key) {
        out.insert("selector".into(), selector.clone());
    }
    Value::Object(out)
}

/// Keeps only the entries whose value is present.
fn compact(entries: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .filter_map(|(key, value)| value.map(|value| (key.to_string(), value)))
            .collect(),
    )
}

/// A v1 `MetricSpec` (from the `metrics` annotation) as v2's.
pub fn spec_v1_to_v2(metric: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), string_or_empty(metric, "type"));
    if let Some(object) = present(metric, "object") {
        let average = present(object, "averageValue").cloned();
        let kind = if average.is_none() {
            "Value"
        } else {
            "AverageValue"
        };
        out.insert(
            "object".into(),
            json!({
                "describedObject": reference_v1_to_v2(present(object, "target")),
                "metric": identifier_v1_to_v2(object, "selector"),
                "target": compact(vec![
                    ("type", Some(Value::from(kind))),
                    ("value", Some(quantity_or_zero(object, "targetValue"))),
                    ("averageValue", average),
                ]),
            }),
        );
    }
    if let Some(pods) = present(metric, "pods") {
        out.insert(
            "pods".into(),
            json!({
                "metric": identifier_v1_to_v2(pods, "selector"),
                "target": {"type": "AverageValue",
                           "averageValue": quantity_or_zero(pods, "targetAverageValue")},
            }),
        );
    }
    for (key, container) in [("resource", false), ("containerResource", true)] {
        if let Some(resource) = present(metric, key) {
            let utilization = present(resource, "targetAverageUtilization").cloned();
            let kind = if utilization.is_none() {
                "AverageValue"
            } else {
                "Utilization"
            };
            let mut converted = Map::new();
            converted.insert("name".into(), string_or_empty(resource, "name"));
            if container {
                converted.insert("container".into(), string_or_empty(resource, "container"));
            }
            converted.insert(
                "target".into(),
                compact(vec![
                    ("type", Some(Value::from(kind))),
                    (
                        "averageValue",
                        present(resource, "targetAverageValue").cloned(),
                    ),
                    ("averageUtilization", utilization),
                ]),
            );
            out.insert(key.into(), Value::Object(converted));
        }
    }
    if let Some(external) = present(metric, "external") {
        let value = present(external, "targetValue").cloned();
        let kind = if value.is_none() {
            "AverageValue"
        } else {
            "Value"
        };
        out.insert(
            "external".into(),
            json!({
                "metric": identifier_v1_to_v2(external, "metricSelector"),
                "target": compact(vec![
                    ("type", Some(Value::from(kind))),
                    ("value", value),
                    ("averageValue", present(external, "targetAverageValue").cloned()),
                ]),
            }),
        );
    }
    Value::Object(out)
}

/// A v1 `MetricStatus` (from the `current-metrics` annotation) as v2's.
pub fn status_v1_to_v2(metric: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), string_or_empty(metric, "type"));
    if let Some(object) = present(metric, "object") {
        out.insert(
            "object".into(),
            json!({
                "current": compact(vec![
                    ("value", Some(quantity_or_zero(object, "currentValue"))),
                    ("averageValue", present(object, "averageValue").cloned()),
                ]),
                "describedObject": reference_v1_to_v2(present(object, "target")),
                "metric": identifier_v1_to_v2(object, "selector"),
            }),
        );
    }
    if let Some(pods) = present(metric, "pods") {
        out.insert(
            "pods".into(),
            json!({
                "current": {"averageValue": quantity_or_zero(pods, "currentAverageValue")},
                "metric": identifier_v1_to_v2(pods, "selector"),
            }),
        );
    }
    for (key, container) in [("resource", false), ("containerResource", true)] {
        if let Some(resource) = present(metric, key) {
            let mut converted = Map::new();
            converted.insert("name".into(), string_or_empty(resource, "name"));
            if container {
                converted.insert("container".into(), string_or_empty(resource, "container"));
            }
            converted.insert(
                "current".into(),
                compact(vec![
                    (
                        "averageValue",
                        Some(quantity_or_zero(resource, "currentAverageValue")),
                    ),
                    (
                        "averageUtilization",
                        present(resource, "currentAverageUtilization").cloned(),
                    ),
                ]),
            );
            out.insert(key.into(), Value::Object(converted));
        }
    }
    if let Some(external) = present(metric, "external") {
        out.insert(
            "external".into(),
            json!({
                "current": compact(vec![
                    ("value", Some(quantity_or_zero(external, "currentValue"))),
                    ("averageValue", present(external, "currentAverageValue").cloned()),
                ]),
                "metric": identifier_v1_to_v2(external, "metricSelector"),
            }),
        );
    }
    Value::Object(out)
}

/// A v2 condition as the text of a v1 `HorizontalPodAutoscalerCondition`
/// (`lastTransitionTime` is a struct: `omitempty` keeps it, `null` when unset).
pub fn condition_text(condition: &Value) -> String {
    GoObject::new()
        .value("type", &string_or_empty(condition, "type"))
        .value("status", &string_or_empty(condition, "status"))
        .value(
            "lastTransitionTime",
            present(condition, "lastTransitionTime").unwrap_or(&Value::Null),
        )
        .optional(
            "reason",
            present(condition, "reason").filter(|reason| reason.as_str() != Some("")),
        )
        .optional(
            "message",
            present(condition, "message").filter(|message| message.as_str() != Some("")),
        )
        .finish()
}

/// The text of a list of converted items.
pub fn list_text(items: &[Value], each: fn(&Value) -> String) -> String {
    go_json::array(items.iter().map(each))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_source_round_trips_through_v1() {
        let specs = json!([
            {"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "AverageValue", "averageValue": "100Mi"}}},
            {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app",
                "target": {"type": "Utilization", "averageUtilization": 50}}},
            {"type": "Pods", "pods": {"metric": {"name": "qps", "selector": {"matchLabels": {"a": "b"}}},
                "target": {"type": "AverageValue", "averageValue": "1k"}}},
            {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "s", "apiVersion": "v1"},
                "metric": {"name": "hits"}, "target": {"type": "Value", "value": "10"}}},
            {"type": "External", "external": {"metric": {"name": "queue",
                "selector": {"matchExpressions": [{"key": "q", "operator": "In", "values": ["x"]}], "matchLabels": {"z": "y"}}},
                "target": {"type": "AverageValue", "averageValue": "30"}}},
        ]);
        for spec in specs.as_array().into_iter().flatten() {
            let text = spec_v2_to_v1_text(spec);
            let v1: Value = serde_json::from_str(&text).expect("valid JSON");
            assert_eq!(&spec_v1_to_v2(&v1), spec, "{text}");
        }
        assert_eq!(
            spec_v2_to_v1_text(&specs[2]),
            r#"{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k","selector":{"matchLabels":{"a":"b"}}}}"#
        );
        assert_eq!(
            spec_v2_to_v1_text(&specs[4]),
            r#"{"type":"External","external":{"metricName":"queue","metricSelector":{"matchLabels":{"z":"y"},"matchExpressions":[{"key":"q","operator":"In","values":["x"]}]},"targetAverageValue":"30"}}"#
        );
    }

    #[test]
    fn metric_statuses_round_trip_through_v1() {
        let statuses = json!([
            {"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": 12, "averageValue": "120m"}}},
            {"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "5"}}},
            {"type": "External", "external": {"metric": {"name": "queue"},
                "current": {"value": "7"}}},
        ]);
        for status in statuses.as_array().into_iter().flatten() {
            let text = status_v2_to_v1_text(status);
            let v1: Value = serde_json::from_str(&text).expect("valid JSON");
            assert_eq!(&status_v1_to_v2(&v1), status, "{text}");
        }
        assert_eq!(
            status_v2_to_v1_text(&statuses[0]),
            r#"{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":12,"currentAverageValue":"120m"}}"#
        );
    }

    #[test]
    fn conditions_are_written_in_go_field_order() {
        assert_eq!(
            condition_text(&json!({"type": "AbleToScale", "status": "True",
                "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "ReadyForNewScale", "message": "m"})),
            r#"{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"ReadyForNewScale","message":"m"}"#
        );
        assert_eq!(
            condition_text(&json!({"type": "ScalingActive", "status": "False"})),
            r#"{"type":"ScalingActive","status":"False","lastTransitionTime":null}"#
        );
    }
}
