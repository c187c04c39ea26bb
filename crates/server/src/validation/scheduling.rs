//! scheduling.k8s.io/v1 PriorityClass (`pkg/apis/scheduling/validation`:
//! `ValidatePriorityClass`, `ValidatePriorityClassUpdate`) and node.k8s.io/v1
//! RuntimeClass (`pkg/apis/node/validation`: `ValidateRuntimeClass`,
//! `ValidateRuntimeClassUpdate`): the kinds that steer where and how pods run.

use serde_json::Value;

use super::field::{self, index};
use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind};

/// `scheduling.SystemPriorityClassPrefix`.
const SYSTEM_PREFIX: &str = "system-";
/// `scheduling.HighestUserDefinablePriority`.
const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;
/// `scheduling.SystemCriticalPriority`.
const SYSTEM_CRITICAL_PRIORITY: i64 = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;

/// `schedulingapiv1.IsKnownSystemPriorityClass`'s error, if any.
fn unknown_system_class(name: &str, value: i64, global_default: bool) -> Option<String> {
    let known = [
        ("system-node-critical", SYSTEM_CRITICAL_PRIORITY + 1000),
        ("system-cluster-critical", SYSTEM_CRITICAL_PRIORITY),
    ];
    let Some((_, known_value)) = known.iter().find(|(known_name, _)| *known_name == name) else {
        return Some(format!("{name} is not a known system priority class"));
    };
    if *known_value != value {
        return Some(format!(
            "value of {name} PriorityClass must be {known_value}"
        ));
    }
    if global_default {
        return Some(format!(
            "globalDefault of {name} PriorityClass must be false"
        ));
    }
    None
}

/// Core's `ValidatePreemptionPolicy`.
fn preemption_policy(object: &Value, errors: &mut Vec<FieldError>) {
    let Some(policy) = object.get("preemptionPolicy").and_then(Value::as_str) else {
        return;
    };
    match policy {
        "PreemptLowerPriority" | "Never" => {}
        "" => errors.push(field::required("preemptionPolicy", "")),
        other => errors.push(field::not_supported(
            "preemptionPolicy",
            other,
            &["PreemptLowerPriority", "Never"],
        )),
    }
}

/// `ValidatePriorityClass`.
pub fn priority_class(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = crate::object::name(object);
    let value = field::int_at(object, "value").unwrap_or(0);
    let global_default = object
        .get("globalDefault")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if name.starts_with(SYSTEM_PREFIX) {
        if let Some(error) = unknown_system_class(name, value, global_default) {
            errors.push(field::forbidden(
                "metadata.name",
                format!("priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {error}"),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        errors.push(field::forbidden(
            "value",
            format!(
                "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    preemption_policy(object, &mut errors);
    errors
}

/// `ValidatePriorityClassUpdate`: value and preemptionPolicy cannot change.
pub fn priority_class_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if field::int_at(object, "value") != field::int_at(old, "value") {
        errors.push(field::forbidden(
            "value",
            "may not be changed in an update.",
        ));
    }
    let policy = object.get("preemptionPolicy").and_then(Value::as_str);
    if policy != old.get("preemptionPolicy").and_then(Value::as_str) {
        errors.push(field::invalid_rendered(
            "preemptionPolicy",
            &policy.map_or("null".to_string(), quote),
            field::FIELD_IMMUTABLE,
        ));
    }
    errors
}

/// `ValidateRuntimeClass` (`pkg/apis/node/validation/validation.go`).
pub fn runtime_class(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    field::dns1123_label("handler", field::str_at(object, "handler"), &mut errors);
    if let Some(overhead) = object.get("overhead").filter(|value| !value.is_null()) {
        // `validateOverhead`: `ValidateContainerResourceRequirements` of
        // `{Limits: overhead.PodFixed}`, so kube reports at `overhead.limits[...]`.
        let limits = overhead.get("podFixed").cloned().unwrap_or(Value::Null);
        super::resource_requirements::container_requirements(
            &serde_json::json!({ "limits": limits }),
            super::resource_requirements::RequirementsContext {
                claim_names: &std::collections::BTreeSet::new(),
                allow_indivisible_huge_pages: false,
            },
            "overhead",
            &mut errors,
        );
    }
    if let Some(scheduling) = object.get("scheduling").filter(|value| !value.is_null()) {
        field::labels(
            "scheduling.nodeSelector",
            field::map_at(scheduling, "nodeSelector"),
            &mut errors,
        );
        let tolerations = field::items_at(scheduling, "tolerations");
        // kube nests the path twice (`validateTolerations` adds "tolerations" again).
        super::pod::tolerations(
            tolerations,
            "scheduling.tolerations.tolerations",
            &mut errors,
        );
        let mut seen = Vec::new();
        for (position, toleration) in tolerations.iter().enumerate() {
            let list_key: Vec<&str> = ["key", "operator", "value", "effect"]
                .iter()
                .map(|name| field::str_at(toleration, name))
                .collect();
            if seen.contains(&list_key) {
                errors.push(FieldError {
                    kind: FieldErrorKind::Duplicate(go_toleration(toleration)),
                    field: index("scheduling.tolerations", position),
                    detail: String::new(),
                });
            } else {
                seen.push(list_key);
            }
        }
    }
    errors
}

/// Go's `%#v` of a `core.Toleration`.
fn go_toleration(toleration: &Value) -> String {
    let seconds = field::int_at(toleration, "tolerationSeconds")
        .map_or("(*int64)(nil)".to_string(), |seconds| format!("&{seconds}"));
    format!(
        "core.Toleration{{Key:{}, Operator:{}, Value:{}, Effect:{}, TolerationSeconds:{seconds}}}",
        quote(field::str_at(toleration, "key")),
        quote(field::str_at(toleration, "operator")),
        quote(field::str_at(toleration, "value")),
        quote(field::str_at(toleration, "effect")),
    )
}

/// The RuntimeClass strategy's `ValidateUpdate`: the create rules, then the
/// handler is immutable.
pub fn runtime_class_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = runtime_class(object);
    errors.extend(field::immutable_string(
        "handler",
        field::str_at(object, "handler"),
        field::str_at(old, "handler"),
    ));
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    fn class(name: &str, value: i64) -> Value {
        json!({"metadata": {"name": name}, "value": value, "preemptionPolicy": "PreemptLowerPriority"})
    }

    /// Cases from kube's `TestValidatePriorityClass` and `TestValidatePriorityClassUpdate`.
    #[test]
    fn priority_classes() {
        assert!(priority_class(&class("tier1", 100)).is_empty());
        assert!(priority_class(&class("system-node-critical", 2_000_001_000)).is_empty());
        assert!(priority_class(&class("system-cluster-critical", 2_000_000_000)).is_empty());
        let cases = [
            (
                class("tier1", 1_000_000_001),
                "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
            ),
            (
                class("system-foo", 100),
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-foo is not a known system priority class",
            ),
            (
                class("system-node-critical", 100),
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000",
            ),
            (
                json!({"metadata": {"name": "system-cluster-critical"}, "value": 2_000_000_000, "globalDefault": true}),
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: globalDefault of system-cluster-critical PriorityClass must be false",
            ),
            (
                json!({"metadata": {"name": "tier1"}, "value": 1, "preemptionPolicy": "Sometimes"}),
                "preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"PreemptLowerPriority\", \"Never\"",
            ),
        ];
        for (object, expected) in cases {
            assert_eq!(texts(&priority_class(&object)), vec![expected], "{object}");
        }
        let old = class("tier1", 100);
        let mut described = old.clone();
        described["description"] = json!("now described");
        described["globalDefault"] = json!(true);
        assert!(priority_class_update(&described, &old).is_empty());
        let mut changed = class("tier1", 200);
        changed["preemptionPolicy"] = json!("Never");
        assert_eq!(
            texts(&priority_class_update(&changed, &old)),
            vec![
                "value: Forbidden: may not be changed in an update.",
                "preemptionPolicy: Invalid value: \"Never\": field is immutable",
            ]
        );
    }

    /// Cases from kube's `TestValidateRuntimeClass`, `TestValidateRuntimeUpdate`,
    /// `TestValidateScheduling`.
    #[test]
    fn runtime_classes() {
        let class = |handler: &str| json!({"metadata": {"name": "foo"}, "handler": handler});
        assert!(runtime_class(&class("bar-baz")).is_empty());
        assert_eq!(
            texts(&runtime_class(&class("Bar"))),
            vec!["handler: Invalid value: \"Bar\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]
        );
        assert_eq!(runtime_class(&class("")).len(), 1);
        assert_eq!(
            texts(&runtime_class_update(&class("other"), &class("bar"))),
            vec!["handler: Invalid value: \"other\": field is immutable"]
        );
        let mut scheduled = class("bar");
        scheduled["scheduling"] = json!({
            "nodeSelector": {"valid": "yes", "not a key": "x"},
            "tolerations": [
                {"key": "a", "operator": "Equal", "value": "b", "effect": "NoSchedule"},
                {"key": "a", "operator": "Equal", "value": "b", "effect": "NoSchedule"},
            ],
        });
        let errors = texts(&runtime_class(&scheduled));
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].starts_with("scheduling.nodeSelector: Invalid value: \"not a key\""));
        assert_eq!(
            errors[1],
            "scheduling.tolerations[1]: Duplicate value: core.Toleration{Key:\"a\", Operator:\"Equal\", Value:\"b\", Effect:\"NoSchedule\", TolerationSeconds:(*int64)(nil)}"
        );
    }

    /// Cases from kube's `TestValidateOverhead` (`node/validation/validation_test.go`).
    #[test]
    fn runtime_class_overhead() {
        let class = |fixed: Value| json!({"metadata": {"name": "foo"}, "handler": "bar", "overhead": {"podFixed": fixed}});
        for fixed in [
            json!({"cpu": "10", "memory": "10G"}),
            json!({"hugepages-2Mi": "2Mi", "memory": "1Gi"}),
            json!({}),
        ] {
            assert_eq!(
                texts(&runtime_class(&class(fixed.clone()))),
                Vec::<String>::new(),
                "{fixed}"
            );
        }
        let cases = [
            (
                json!({"cpu": "-10m"}),
                vec!["overhead.limits[cpu]: Invalid value: \"-10m\": must be greater than or equal to 0"],
            ),
            (
                json!({"gpu": "1"}),
                vec![
                    "overhead.limits[gpu]: Invalid value: gpu: must be a standard resource type or fully qualified",
                    "overhead.limits[gpu]: Invalid value: gpu: must be a standard resource for containers",
                ],
            ),
            (
                json!({"hugepages-2Mi": "2Mi"}),
                vec!["overhead: Forbidden: HugePages require cpu or memory"],
            ),
        ];
        for (fixed, expected) in cases {
            assert_eq!(
                texts(&runtime_class(&class(fixed.clone()))),
                expected,
                "{fixed}"
            );
        }
    }
}
