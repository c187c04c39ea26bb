//! Events between `v1` (core, the storage version) and `events.k8s.io/v1`,
//! as kube's round trip through the internal `core.Event` maps them
//! (`pkg/apis/events/v1/conversion.go` `Convert_v1_Event_To_core_Event`,
//! `Convert_core_Event_To_v1_Event`; every other field keeps its name).
//!
//! Fields are renamed, not re-encoded. The result is what Go's encoder
//! writes for the target version's struct: empty strings and zero counts
//! behind `omitempty` there are dropped (`reportingController`,
//! `reportingInstance`, `deprecatedCount` of events.k8s.io/v1, which core/v1
//! serializes without `omitempty`), and the fields Go always writes are
//! added when missing (structs as `{}`, times as `null`, core's reporting
//! strings as `""`), so clients that require them (the Python client's
//! `involved_object`) read a converted event as they read kube's.

use serde_json::{Map, Value};

/// core/v1 name → events.k8s.io/v1 name of every field that differs.
const RENAMES: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// A core/v1 Event as events.k8s.io/v1.
pub fn core_to_events(object: &mut Map<String, Value>) {
    for (core, events) in RENAMES {
        rename(object, core, events);
    }
    // `omitempty` in events.k8s.io/v1 only.
    for field in ["reportingController", "reportingInstance"] {
        if object.get(field).and_then(Value::as_str) == Some("") {
            object.remove(field);
        }
    }
    if object.get("deprecatedCount").and_then(Value::as_i64) == Some(0) {
        object.remove("deprecatedCount");
    }
    always_written(
        object,
        &[
            ("eventTime", Value::Null),
            ("regarding", empty_struct()),
            ("deprecatedSource", empty_struct()),
            ("deprecatedFirstTimestamp", Value::Null),
            ("deprecatedLastTimestamp", Value::Null),
        ],
    );
    object.insert("apiVersion".into(), Value::from("events.k8s.io/v1"));
}

/// An events.k8s.io/v1 Event as core/v1.
pub fn events_to_core(object: &mut Map<String, Value>) {
    for (core, events) in RENAMES {
        rename(object, events, core);
    }
    if object.get("count").and_then(Value::as_i64) == Some(0) {
        object.remove("count");
    }
    always_written(
        object,
        &[
            ("involvedObject", empty_struct()),
            ("source", empty_struct()),
            ("firstTimestamp", Value::Null),
            ("lastTimestamp", Value::Null),
            ("eventTime", Value::Null),
            ("reportingComponent", Value::from("")),
            ("reportingInstance", Value::from("")),
        ],
    );
    object.insert("apiVersion".into(), Value::from("v1"));
}

fn empty_struct() -> Value {
    Value::Object(Map::new())
}

/// The fields Go writes whatever their value (no `omitempty`, or a struct
/// `omitempty` cannot leave out), with their zero values when missing.
fn always_written(object: &mut Map<String, Value>, fields: &[(&str, Value)]) {
    for (field, zero) in fields {
        if !object.contains_key(*field) {
            object.insert((*field).to_string(), zero.clone());
        }
    }
}

/// Moves `from` to `to`; a `to` already present (a field of the other
/// version, which the typed decoder would have refused) is replaced, as the
/// conversion overwrites it.
fn rename(object: &mut Map<String, Value>, from: &str, to: &str) {
    match object.remove(from) {
        Some(value) => {
            object.insert(to.to_string(), value);
        }
        None => {
            object.remove(to);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn every_field_maps_as_kube_maps_it() {
        let core = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "ns"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns", "fieldPath": "spec"},
            "reason": "Started", "message": "started container",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:01:00Z",
            "count": 3, "type": "Normal", "eventTime": "2026-01-01T00:00:00.000001Z",
            "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000001Z"},
            "action": "Start", "related": {"kind": "Node", "name": "n1"},
            "reportingComponent": "kubelet", "reportingInstance": "n1",
        });
        let mut events = map(core.clone());
        core_to_events(&mut events);
        assert_eq!(
            Value::Object(events.clone()),
            json!({
                "apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": "e", "namespace": "ns"},
                "regarding": {"kind": "Pod", "name": "p", "namespace": "ns", "fieldPath": "spec"},
                "reason": "Started", "note": "started container",
                "deprecatedSource": {"component": "kubelet", "host": "n1"},
                "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z",
                "deprecatedLastTimestamp": "2026-01-01T00:01:00Z",
                "deprecatedCount": 3, "type": "Normal", "eventTime": "2026-01-01T00:00:00.000001Z",
                "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000001Z"},
                "action": "Start", "related": {"kind": "Node", "name": "n1"},
                "reportingController": "kubelet", "reportingInstance": "n1",
            })
        );
        events_to_core(&mut events);
        assert_eq!(Value::Object(events), core, "the round trip is lossless");
    }

    #[test]
    fn go_zero_values_follow_the_target_versions_omitempty() {
        let mut events = map(json!({"apiVersion": "v1", "kind": "Event",
            "reportingComponent": "", "reportingInstance": "", "count": 0,
            "firstTimestamp": null}));
        core_to_events(&mut events);
        assert_eq!(
            Value::Object(events.clone()),
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                "eventTime": null, "regarding": {}, "deprecatedSource": {},
                "deprecatedFirstTimestamp": null, "deprecatedLastTimestamp": null})
        );
        events_to_core(&mut events);
        assert_eq!(
            Value::Object(events),
            json!({"apiVersion": "v1", "kind": "Event",
                "eventTime": null, "involvedObject": {}, "source": {},
                "firstTimestamp": null, "lastTimestamp": null,
                "reportingComponent": "", "reportingInstance": ""})
        );
    }
}
