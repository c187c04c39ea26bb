//! events.k8s.io/v1 Event validation: the strict half of
//! `pkg/apis/core/validation/events.go` (`ValidateEventCreate` /
//! `ValidateEventUpdate` for a request of a version other than core/v1),
//! which runs after the legacy rules every Event passes ([`super::event`]).
//!
//! kube validates the internal (core) Event, so the object is converted to
//! core/v1 first (`versions/event.rs`) and the paths are the internal names:
//! `reportingController`, `message` (events.k8s.io's `note`),
//! `involvedObject` (`regarding`), `source` (`deprecatedSource`) ...

use serde_json::Value;

use super::event;
use super::field;
use crate::status::FieldError;

/// `ValidateEventCreate` for events.k8s.io/v1.
pub fn event_create(object: &Value) -> Vec<FieldError> {
    let core = as_core(object);
    let object = core.as_ref().unwrap_or(object);
    let mut errors = event::event(object);
    series(object, &mut errors);
    if !field::is_set(object, "eventTime") {
        errors.push(field::required("eventTime", ""));
    }
    let event_type = field::str_at(object, "type");
    if event_type != "Normal" && event_type != "Warning" {
        errors.push(field::invalid(
            "type",
            "",
            format!("has invalid value: {event_type}"),
        ));
    }
    for unset in ["firstTimestamp", "lastTimestamp"] {
        if field::is_set(object, unset) {
            errors.push(field::invalid(unset, "", "needs to be unset"));
        }
    }
    if field::int_at(object, "count").is_some_and(|count| count != 0) {
        errors.push(field::invalid("count", "", "needs to be unset"));
    }
    let source = object.get("source").unwrap_or(&Value::Null);
    if !field::str_at(source, "component").is_empty() || !field::str_at(source, "host").is_empty() {
        errors.push(field::invalid("source", "", "needs to be unset"));
    }
    errors
}

/// `ValidateEventUpdate` for events.k8s.io/v1: the series when it changed,
/// and every other field immutable.
pub fn event_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let core = as_core(object);
    let object = core.as_ref().unwrap_or(object);
    let old_core = as_core(old);
    let old = old_core.as_ref().unwrap_or(old);
    let mut errors = event::event(object);
    if present(object, "series") != present(old, "series") {
        series(object, &mut errors);
    }
    // kube's list, `reason` twice included.
    let immutable: [(&str, Render); 14] = [
        ("involvedObject", Render::Reference),
        ("reason", Render::Text),
        ("message", Render::Text),
        ("source", Render::Source),
        ("firstTimestamp", Render::Time),
        ("lastTimestamp", Render::Time),
        ("count", Render::Number),
        ("reason", Render::Text),
        ("type", Render::Text),
        ("eventTime", Render::Time),
        ("action", Render::Text),
        ("related", Render::OptionalReference),
        ("reportingComponent", Render::Text),
        ("reportingInstance", Render::Text),
    ];
    for (name, render) in immutable {
        if !same(present(object, name), present(old, name)) {
            let path = if name == "reportingComponent" {
                "reportingController"
            } else {
                name
            };
            errors.push(field::invalid_rendered(
                path,
                &render.go(present(object, name)),
                field::FIELD_IMMUTABLE,
            ));
        }
    }
    errors
}

/// An events.k8s.io/v1 object as core/v1 (kube's internal form); `None` when it is core already.
fn as_core(object: &Value) -> Option<Value> {
    if object.get("apiVersion").and_then(Value::as_str) != Some("events.k8s.io/v1") {
        return None;
    }
    let mut converted = object.clone();
    crate::versions::convert(&mut converted, "v1").ok()?;
    Some(converted)
}

/// `validateV1EventSeries`.
fn series(object: &Value, errors: &mut Vec<FieldError>) {
    let Some(series) = present(object, "series") else {
        return;
    };
    if field::int_at(series, "count").unwrap_or(0) < 2 {
        errors.push(field::invalid("series.count", "", "should be at least 2"));
    }
    if !field::is_set(series, "lastObservedTime") {
        errors.push(field::required("series.lastObservedTime", ""));
    }
}

fn present<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|value| !value.is_null())
}

/// `apiequality.Semantic.DeepEqual` on decoded values: absent and Go's zero
/// value are the same (an empty string, 0, an empty object).
fn same(new: Option<&Value>, old: Option<&Value>) -> bool {
    fn zero(value: Option<&Value>) -> bool {
        match value {
            None | Some(Value::Null) => true,
            Some(Value::String(text)) => text.is_empty(),
            Some(Value::Number(number)) => number.as_f64() == Some(0.0),
            Some(Value::Object(map)) => map.values().all(|value| zero(Some(value))),
            _ => false,
        }
    }
    match (new, old) {
        (Some(Value::Object(new)), Some(Value::Object(old))) => new
            .keys()
            .chain(old.keys())
            .all(|key| same(new.get(key), old.get(key))),
        (Some(new), Some(old)) if new == old => true,
        (new, old) => zero(new) && zero(old),
    }
}

/// How `field.Invalid` prints a value of the internal Event (`ErrorBody`:
/// strings quoted, numbers bare, `Stringer`s such as `metav1.Time` by their
/// `String()`, structs as `%#v`, a nil pointer as `null`).
#[derive(Clone, Copy)]
enum Render {
    Text,
    Number,
    Time,
    Reference,
    OptionalReference,
    Source,
}

impl Render {
    fn go(self, value: Option<&Value>) -> String {
        let value_or_null = value.unwrap_or(&Value::Null);
        let text = |name: &str| crate::go::strconv::quote(field::str_at(value_or_null, name));
        match self {
            Render::Text => crate::go::strconv::quote(value.and_then(Value::as_str).unwrap_or_default()),
            Render::Number => value.and_then(Value::as_i64).unwrap_or(0).to_string(),
            Render::Time => go_time_string(value.and_then(Value::as_str).unwrap_or_default()),
            Render::OptionalReference if value.is_none() => "null".to_string(),
            Render::Reference | Render::OptionalReference => format!(
                "core.ObjectReference{{Kind:{}, Namespace:{}, Name:{}, UID:{}, APIVersion:{}, ResourceVersion:{}, FieldPath:{}}}",
                text("kind"),
                text("namespace"),
                text("name"),
                text("uid"),
                text("apiVersion"),
                text("resourceVersion"),
                text("fieldPath"),
            ),
            Render::Source => format!(
                "core.EventSource{{Component:{}, Host:{}}}",
                text("component"),
                text("host")
            ),
        }
    }
}

/// Go's `time.Time.String()` of an RFC 3339 UTC time (`2006-01-02
/// 15:04:05.999999999 -0700 MST`); the zero time when absent or unreadable.
fn go_time_string(rfc3339: &str) -> String {
    const ZERO: &str = "0001-01-01 00:00:00 +0000 UTC";
    let Some((seconds, nanos)) = crate::go::time::parse_time(rfc3339) else {
        return ZERO.to_string();
    };
    let Some(whole) = crate::go::time::format_time(seconds, 0, false) else {
        return ZERO.to_string();
    };
    let mut out = whole.trim_end_matches('Z').replacen('T', " ", 1);
    if nanos > 0 {
        let fraction = format!("{nanos:09}");
        out.push('.');
        out.push_str(fraction.trim_end_matches('0'));
    }
    out.push_str(" +0000 UTC");
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    fn valid() -> Value {
        json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "default"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reportingController": "example.com/controller",
            "reportingInstance": "node-1",
            "action": "Scheduled",
            "reason": "Because",
            "type": "Normal",
            "note": "hello",
        })
    }

    fn with(changes: Value) -> Value {
        let mut event = valid();
        if let (Some(event), Some(changes)) = (event.as_object_mut(), changes.as_object()) {
            for (key, value) in changes {
                if value.is_null() {
                    event.remove(key);
                } else {
                    event.insert(key.clone(), value.clone());
                }
            }
        }
        event
    }

    /// Cases from kube's `TestValidateEventForNewV1beta1Events`
    /// (`TestValidateEventCreate` for events.k8s.io).
    #[test]
    fn creates_as_kube_validates_them() {
        assert!(
            event_create(&valid()).is_empty(),
            "{:?}",
            texts(&event_create(&valid()))
        );
        let cases = [
            (json!({"reportingController": null}), vec!["reportingController: Required value", "reportingController: Invalid value: \"\": name part must be non-empty", "reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
            (json!({"eventTime": null}), vec!["eventTime: Required value"]),
            (json!({"type": "Bogus"}), vec!["type: Invalid value: \"\": has invalid value: Bogus"]),
            (json!({"action": "a".repeat(129)}), vec!["action: Invalid value: \"\": can have at most 128 characters"]),
            (json!({"note": "n".repeat(1025)}), vec!["message: Invalid value: \"\": can have at most 1024 characters"]),
            (json!({"series": {"count": 1}}), vec!["series.count: Invalid value: \"\": should be at least 2", "series.lastObservedTime: Required value"]),
            (json!({"deprecatedCount": 3, "deprecatedSource": {"component": "kubelet"}, "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z"}),
                vec!["firstTimestamp: Invalid value: \"\": needs to be unset", "count: Invalid value: \"\": needs to be unset", "source: Invalid value: \"\": needs to be unset"]),
        ];
        for (changes, expected) in cases {
            assert_eq!(
                texts(&event_create(&with(changes.clone()))),
                expected,
                "{changes}"
            );
        }
    }

    /// Cases from kube's `TestEventV1EventTimeImmutability`, `TestValidateEventUpdate`.
    #[test]
    fn updates_keep_every_field() {
        assert!(event_update(&valid(), &valid()).is_empty());
        let series = with(
            json!({"series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}}),
        );
        assert!(event_update(&series, &valid()).is_empty());
        let changed = with(
            json!({"note": "changed", "eventTime": "2026-01-01T00:00:01.500000Z", "reportingInstance": "node-2"}),
        );
        assert_eq!(
            texts(&event_update(&changed, &valid())),
            [
                "message: Invalid value: \"changed\": field is immutable",
                "eventTime: Invalid value: 2026-01-01 00:00:01.5 +0000 UTC: field is immutable",
                "reportingInstance: Invalid value: \"node-2\": field is immutable",
            ]
        );
        let regarding = with(
            json!({"regarding": {"kind": "Pod", "name": "q", "namespace": "default"}, "reason": "Other"}),
        );
        assert_eq!(
            texts(&event_update(&regarding, &valid())),
            [
                "involvedObject: Invalid value: core.ObjectReference{Kind:\"Pod\", Namespace:\"default\", Name:\"q\", UID:\"\", APIVersion:\"\", ResourceVersion:\"\", FieldPath:\"\"}: field is immutable",
                "reason: Invalid value: \"Other\": field is immutable",
                "reason: Invalid value: \"Other\": field is immutable",
            ]
        );
    }

    #[test]
    fn go_time_strings() {
        assert_eq!(
            go_time_string("2026-01-01T00:00:00Z"),
            "2026-01-01 00:00:00 +0000 UTC"
        );
        assert_eq!(
            go_time_string("2026-01-01T00:00:00.120000Z"),
            "2026-01-01 00:00:00.12 +0000 UTC"
        );
        assert_eq!(go_time_string(""), "0001-01-01 00:00:00 +0000 UTC");
    }
}
