//! core/v1 Event validation (`pkg/apis/core/validation/events.go`
//! `ValidateEventCreate` / `ValidateEventUpdate` for a core/v1 request, which
//! run only `legacyValidateEvent`: the involved object's namespace agrees with
//! the event's, and an event with `eventTime` names its reporter, action and reason).

use serde_json::Value;

use super::field;
use crate::status::FieldError;

const REPORTING_INSTANCE_LENGTH_LIMIT: usize = 128;
const ACTION_LENGTH_LIMIT: usize = 128;
const REASON_LENGTH_LIMIT: usize = 128;
const NOTE_LENGTH_LIMIT: usize = 1024;

const NAMESPACE_MISMATCH: &str = "does not match event.namespace";

/// `legacyValidateEvent`.
pub fn event(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let namespace = crate::object::namespace(object);
    let involved_namespace = object
        .get("involvedObject")
        .map(|involved| field::str_at(involved, "namespace"))
        .unwrap_or_default();
    let mismatch = || {
        field::invalid(
            "involvedObject.namespace",
            involved_namespace,
            NAMESPACE_MISMATCH,
        )
    };
    if !field::is_set(object, "eventTime") {
        if involved_namespace.is_empty() {
            // An event about a cluster-scoped object lives in "" or, for old clients, "default".
            if !namespace.is_empty() && namespace != "default" {
                errors.push(mismatch());
            }
        } else if namespace != involved_namespace {
            errors.push(mismatch());
        }
    } else {
        if involved_namespace.is_empty() && namespace != "default" && namespace != "kube-system" {
            errors.push(mismatch());
        }
        let controller = field::str_at(object, "reportingComponent");
        if controller.is_empty() {
            errors.push(field::required("reportingController", ""));
        }
        for message in crate::selector::is_qualified_name(controller) {
            errors.push(field::invalid("reportingController", controller, message));
        }
        let bounded = [
            (
                "reportingInstance",
                "reportingInstance",
                REPORTING_INSTANCE_LENGTH_LIMIT,
                true,
            ),
            ("action", "action", ACTION_LENGTH_LIMIT, true),
            ("reason", "reason", REASON_LENGTH_LIMIT, true),
            ("message", "message", NOTE_LENGTH_LIMIT, false),
        ];
        for (json_field, path, limit, required) in bounded {
            let value = field::str_at(object, json_field);
            if required && value.is_empty() {
                errors.push(field::required(path, ""));
            }
            if value.len() > limit {
                errors.push(field::invalid(
                    path,
                    "",
                    format!("can have at most {limit} characters"),
                ));
            }
        }
    }
    for message in crate::names::dns1123_subdomain(namespace) {
        errors.push(field::invalid("namespace", namespace, message));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(object: Value) -> Vec<String> {
        event(&object).iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestValidateEvent` (core/v1 requests).
    #[test]
    fn events_as_kube_validates_them() {
        let ns = |namespace: &str, involved: &str| json!({"metadata": {"name": "e", "namespace": namespace}, "involvedObject": {"namespace": involved}});
        assert!(texts(ns("foo", "foo")).is_empty());
        assert!(texts(ns("default", "")).is_empty());
        assert_eq!(
            texts(ns("foo", "bar")),
            ["involvedObject.namespace: Invalid value: \"bar\": does not match event.namespace"]
        );
        assert_eq!(
            texts(ns("foo", "")),
            ["involvedObject.namespace: Invalid value: \"\": does not match event.namespace"]
        );
        let new_style = json!({
            "metadata": {"name": "e", "namespace": "foo"},
            "involvedObject": {"namespace": "foo"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingComponent": "example.com/controller",
            "reportingInstance": "node-1",
            "action": "Scheduled",
            "reason": "Because",
        });
        assert!(texts(new_style).is_empty());
        let incomplete = json!({
            "metadata": {"name": "e", "namespace": "foo"},
            "involvedObject": {},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "message": "x".repeat(1025),
        });
        assert_eq!(
            texts(incomplete),
            [
                "involvedObject.namespace: Invalid value: \"\": does not match event.namespace",
                "reportingController: Required value",
                "reportingController: Invalid value: \"\": name part must be non-empty",
                "reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "reportingInstance: Required value",
                "action: Required value",
                "reason: Required value",
                "message: Invalid value: \"\": can have at most 1024 characters",
            ]
        );
    }
}
