//! HorizontalPodAutoscalers between `autoscaling/v2` (the storage version)
//! and `autoscaling/v1`, as kube's round trip through the internal type
//! does it (`pkg/apis/autoscaling/v1/conversion.go`
//! `Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler`
//! and back, `pkg/apis/autoscaling/v2/conversion.go`, and
//! `DropRoundTripHorizontalPodAutoscalerAnnotations` in `helpers.go`).
//!
//! v1 holds only a CPU utilization target; everything else v2 has travels
//! in annotations so that a v1 client that reads and writes back loses
//! nothing:
//! - `autoscaling.alpha.kubernetes.io/metrics`: the metrics other than the
//!   CPU utilization one, as v1 `MetricSpec`s;
//! - `…/current-metrics`: every current metric, as v1 `MetricStatus`es;
//! - `…/conditions`: the conditions;
//! - `…/behavior`: `spec.behavior` as Go marshals the *internal* type (no
//!   json tags: `ScaleUp`, `StabilizationWindowSeconds`, … and `null`s),
//!   read back case-insensitively, and ignored when it does not decode.
//!
//! v2 never shows them: converting to v2 drops all of them.

use serde_json::{json, Map, Value};

use super::go_json::{self, GoObject};
use super::hpa_metrics::{self as metrics};
use super::Error;

pub const METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/metrics";
pub const CURRENT_METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
pub const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";
pub const BEHAVIOR_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// The tolerance annotations of `autoscaling/v2beta2` (1.33): not served,
/// but dropped with the others.
const ROUND_TRIP_ANNOTATIONS: [&str; 6] = [
    METRICS_ANNOTATION,
    BEHAVIOR_ANNOTATION,
    "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
    "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
    CURRENT_METRICS_ANNOTATION,
    CONDITIONS_ANNOTATION,
];

/// `autoscaling.DefaultCPUUtilization`.
const DEFAULT_CPU_UTILIZATION: i64 = 80;

fn present<'a>(object: &'a Value, key: &str) -> Option<&'a Value> {
    object.get(key).filter(|value| !value.is_null())
}

fn items(value: Option<&Value>) -> Vec<Value> {
    value.and_then(Value::as_array).cloned().unwrap_or_default()
}

/// `metadata.annotations`, created when missing.
fn annotations_mut(object: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    let metadata = object
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?;
    let annotations = metadata
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    annotations.as_object_mut()
}

fn annotation(object: &Map<String, Value>, key: &str) -> Option<String> {
    object
        .get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()
        .map(str::to_string)
}

/// `DropRoundTripHorizontalPodAutoscalerAnnotations`; an emptied map is
/// left out (Go's `omitempty`).
fn drop_round_trip_annotations(object: &mut Map<String, Value>) {
    let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(annotations) = metadata
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if !ROUND_TRIP_ANNOTATIONS
        .iter()
        .any(|key| annotations.contains_key(*key))
    {
        return;
    }
    for key in ROUND_TRIP_ANNOTATIONS {
        annotations.remove(key);
    }
    if annotations.is_empty() {
        metadata.remove("annotations");
    }
}

/// The CPU utilization metric v1's `targetCPUUtilizationPercentage` is.
fn is_cpu_resource(metric: &Value) -> bool {
    metric.get("type").and_then(Value::as_str) == Some("Resource")
        && present(metric, "resource")
            .and_then(|resource| resource.get("name"))
            .and_then(Value::as_str)
            == Some("cpu")
}

fn cpu_target(metric: &Value) -> Option<&Value> {
    present(metric, "resource")
        .and_then(|resource| present(resource, "target"))
        .and_then(|target| present(target, "averageUtilization"))
}

fn copy(from: &Value, to: &mut Map<String, Value>, key: &str) {
    if let Some(value) = from.get(key) {
        to.insert(key.to_string(), value.clone());
    }
}

/// An `autoscaling/v2` HPA as `autoscaling/v1`.
pub fn v2_to_v1(object: &mut Map<String, Value>) {
    let spec = object.remove("spec").unwrap_or(Value::Null);
    let status = object.remove("status").filter(|status| !status.is_null());
    drop_round_trip_annotations(object);

    let mut v1_spec = Map::new();
    for key in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        copy(&spec, &mut v1_spec, key);
    }
    let spec_metrics = items(present(&spec, "metrics"));
    // The first CPU resource metric decides, with a target or not.
    if let Some(cpu) = spec_metrics.iter().find(|metric| is_cpu_resource(metric)) {
        if let Some(target) = cpu_target(cpu) {
            v1_spec.insert("targetCPUUtilizationPercentage".into(), target.clone());
        }
    }
    let other_metrics: Vec<Value> = spec_metrics
        .into_iter()
        .filter(|metric| !(is_cpu_resource(metric) && cpu_target(metric).is_some()))
        .collect();
    if !spec.is_null() {
        object.insert("spec".into(), Value::Object(v1_spec));
    }

    let current_metrics = items(status.as_ref().and_then(|s| present(s, "currentMetrics")));
    let conditions = items(status.as_ref().and_then(|s| present(s, "conditions")));
    // v1's status is a struct whose replica counts have no `omitempty`: Go
    // writes them, zero or not.
    let mut v1_status = Map::new();
    v1_status.insert("currentReplicas".into(), Value::from(0));
    v1_status.insert("desiredReplicas".into(), Value::from(0));
    if let Some(status) = &status {
        for key in [
            "observedGeneration",
            "lastScaleTime",
            "currentReplicas",
            "desiredReplicas",
        ] {
            copy(status, &mut v1_status, key);
        }
        // The last CPU resource metric with a utilization decides.
        for metric in current_metrics
            .iter()
            .filter(|metric| is_cpu_resource(metric))
        {
            if let Some(utilization) = present(metric, "resource")
                .and_then(|resource| present(resource, "current"))
                .and_then(|current| present(current, "averageUtilization"))
            {
                v1_status.insert(
                    "currentCPUUtilizationPercentage".into(),
                    utilization.clone(),
                );
            }
        }
    }
    object.insert("status".into(), Value::Object(v1_status));

    let mut added: Vec<(&str, String)> = Vec::new();
    if !other_metrics.is_empty() {
        added.push((
            METRICS_ANNOTATION,
            metrics::list_text(&other_metrics, metrics::spec_v2_to_v1_text),
        ));
    }
    if !current_metrics.is_empty() {
        added.push((
            CURRENT_METRICS_ANNOTATION,
            metrics::list_text(&current_metrics, metrics::status_v2_to_v1_text),
        ));
    }
    if !conditions.is_empty() {
        added.push((
            CONDITIONS_ANNOTATION,
            metrics::list_text(&conditions, metrics::condition_text),
        ));
    }
    if let Some(behavior) = present(&spec, "behavior") {
        added.push((BEHAVIOR_ANNOTATION, internal_behavior_text(behavior)));
    }
    if !added.is_empty() {
        if let Some(annotations) = annotations_mut(object) {
            for (key, text) in added {
                annotations.insert(key.to_string(), Value::String(text));
            }
        }
    }
    object.insert("apiVersion".into(), Value::from("autoscaling/v1"));
}

/// An `autoscaling/v1` HPA as `autoscaling/v2`; an annotation that does
/// not decode as its v1 type is an error, as `json.Unmarshal`'s is.
pub fn v1_to_v2(object: &mut Map<String, Value>) -> Result<(), Error> {
    let spec = object.remove("spec").unwrap_or(Value::Null);
    let status = object.remove("status").filter(|status| !status.is_null());

    let mut v2_spec = Map::new();
    for key in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        copy(&spec, &mut v2_spec, key);
    }
    let mut spec_metrics: Vec<Value> = present(&spec, "targetCPUUtilizationPercentage")
        .map(|target| {
            vec![json!({"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": target}}})]
        })
        .unwrap_or_default();
    if let Some(text) = annotation(object, METRICS_ANNOTATION) {
        let mut others: Vec<Value> = decode_list(&text, "[]v1.MetricSpec")?
            .iter()
            .map(metrics::spec_v1_to_v2)
            .collect();
        others.append(&mut spec_metrics);
        spec_metrics = others;
    }
    if spec_metrics.is_empty() {
        // autoscaling/v1's implicit default, made explicit.
        spec_metrics.push(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}));
    }
    v2_spec.insert("metrics".into(), Value::Array(spec_metrics));
    if let Some(behavior) = annotation(object, BEHAVIOR_ANNOTATION)
        .as_deref()
        .and_then(behavior_from_internal_text)
    {
        v2_spec.insert("behavior".into(), behavior);
    }
    object.insert("spec".into(), Value::Object(v2_spec));

    // v2's `desiredReplicas` has no `omitempty`: Go writes it, zero or not.
    let mut v2_status = Map::new();
    v2_status.insert("desiredReplicas".into(), Value::from(0));
    if let Some(status) = &status {
        for key in [
            "observedGeneration",
            "lastScaleTime",
            "currentReplicas",
            "desiredReplicas",
        ] {
            copy(status, &mut v2_status, key);
        }
        if let Some(utilization) = present(status, "currentCPUUtilizationPercentage") {
            v2_status.insert(
                "currentMetrics".into(),
                json!([{"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": utilization}}}]),
            );
        }
    }
    if let Some(text) = annotation(object, CURRENT_METRICS_ANNOTATION) {
        let current: Vec<Value> = decode_list(&text, "[]v1.MetricStatus")?
            .iter()
            .map(metrics::status_v1_to_v2)
            .collect();
        v2_status.insert("currentMetrics".into(), Value::Array(current));
    }
    if let Some(text) = annotation(object, CONDITIONS_ANNOTATION) {
        let conditions: Vec<Value> = decode_list(&text, "[]v1.HorizontalPodAutoscalerCondition")?
            .into_iter()
            .map(|condition| match condition {
                Value::Object(mut fields) => {
                    fields.retain(|_, value| !value.is_null());
                    Value::Object(fields)
                }
                other => other,
            })
            .collect();
        v2_status.insert("conditions".into(), Value::Array(conditions));
    }
    object.insert("status".into(), Value::Object(v2_status));
    drop_round_trip_annotations(object);
    object.insert("apiVersion".into(), Value::from("autoscaling/v2"));
    Ok(())
}

/// An annotation's JSON list (`null` is an empty one, as Go decodes it).
fn decode_list(text: &str, go_type: &str) -> Result<Vec<Value>, Error> {
    if let Some(syntax) = crate::decode_error::go_json_syntax_error(text.as_bytes()) {
        return Err(Error::Annotation(syntax));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => {
            if let Some(item) = items
                .iter()
                .find(|item| !item.is_object() && !item.is_null())
            {
                return Err(Error::Annotation(format!(
                    "json: cannot unmarshal {} into Go value of type {}",
                    go_kind(item),
                    go_type.trim_start_matches("[]")
                )));
            }
            Ok(items.into_iter().filter(Value::is_object).collect())
        }
        Ok(Value::Null) => Ok(Vec::new()),
        Ok(other) => Err(Error::Annotation(format!(
            "json: cannot unmarshal {} into Go value of type {go_type}",
            go_kind(&other)
        ))),
        Err(error) => Err(Error::Annotation(error.to_string())),
    }
}

/// The JSON kind Go names in `UnmarshalTypeError`.
fn go_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// v2 `spec.behavior` as Go marshals the internal
/// `HorizontalPodAutoscalerBehavior` (no json tags, nil pointers as `null`).
fn internal_behavior_text(behavior: &Value) -> String {
    let rules = |key: &str| match present(behavior, key) {
        None => "null".to_string(),
        Some(rules) => {
            let policies = match present(rules, "policies").and_then(Value::as_array) {
                None => "null".to_string(),
                Some(policies) => go_json::array(policies.iter().map(|policy| {
                    GoObject::new()
                        .value("Type", policy.get("type").unwrap_or(&Value::from("")))
                        .value("Value", policy.get("value").unwrap_or(&Value::from(0)))
                        .value(
                            "PeriodSeconds",
                            policy.get("periodSeconds").unwrap_or(&Value::from(0)),
                        )
                        .finish()
                })),
            };
            GoObject::new()
                .value(
                    "StabilizationWindowSeconds",
                    rules
                        .get("stabilizationWindowSeconds")
                        .unwrap_or(&Value::Null),
                )
                .value(
                    "SelectPolicy",
                    rules.get("selectPolicy").unwrap_or(&Value::Null),
                )
                .raw("Policies", &policies)
                .value("Tolerance", rules.get("tolerance").unwrap_or(&Value::Null))
                .finish()
        }
    };
    GoObject::new()
        .raw("ScaleUp", &rules("scaleUp"))
        .raw("ScaleDown", &rules("scaleDown"))
        .finish()
}

/// A field of a Go struct without json tags: `encoding/json` matches the
/// key case-insensitively.
fn go_field<'a>(object: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    object
        .get(name)
        .or_else(|| {
            object
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| value)
        })
        .filter(|value| !value.is_null())
}

/// The behavior annotation back as v2's `spec.behavior`; `None` when it
/// does not decode or is empty (`behavior != HorizontalPodAutoscalerBehavior{}`).
fn behavior_from_internal_text(text: &str) -> Option<Value> {
    let Ok(Value::Object(internal)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    let mut behavior = Map::new();
    for (go_name, name) in [("ScaleUp", "scaleUp"), ("ScaleDown", "scaleDown")] {
        let Some(rules) = go_field(&internal, go_name) else {
            continue;
        };
        behavior.insert(name.into(), rules_from_internal(rules)?);
    }
    (!behavior.is_empty()).then_some(Value::Object(behavior))
}

fn rules_from_internal(rules: &Value) -> Option<Value> {
    let rules = rules.as_object()?;
    let mut out = Map::new();
    if let Some(window) = go_field(rules, "StabilizationWindowSeconds") {
        out.insert(
            "stabilizationWindowSeconds".into(),
            Value::from(window.as_i64()?),
        );
    }
    if let Some(select) = go_field(rules, "SelectPolicy") {
        out.insert("selectPolicy".into(), Value::from(select.as_str()?));
    }
    if let Some(policies) = go_field(rules, "Policies") {
        let mut converted = Vec::new();
        for policy in policies.as_array()? {
            let policy = policy.as_object()?;
            let field = |name: &str| go_field(policy, name);
            converted.push(json!({
                "type": field("Type").map_or(Some(""), Value::as_str)?,
                "value": field("Value").map_or(Some(0), Value::as_i64)?,
                "periodSeconds": field("PeriodSeconds").map_or(Some(0), Value::as_i64)?,
            }));
        }
        out.insert("policies".into(), Value::Array(converted));
    }
    if let Some(tolerance) = go_field(rules, "Tolerance") {
        out.insert("tolerance".into(), Value::from(tolerance.as_str()?));
    }
    Some(Value::Object(out))
}

#[cfg(test)]
#[path = "hpa_tests.rs"]
mod tests;
