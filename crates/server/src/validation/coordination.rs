//! coordination.k8s.io/v1 Lease as `pkg/apis/coordination/validation`
//! checks it (`ValidateLease`, `ValidateLeaseUpdate`: the same spec rules).

use serde_json::Value;

use super::field;
use crate::status::FieldError;

/// `validLeaseStrategies`.
const LEASE_STRATEGIES: [&str; 1] = ["OldestEmulationVersion"];

/// `ValidateLeaseSpec`.
pub fn lease(object: &Value) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    if let Some(seconds) = field::int_at(spec, "leaseDurationSeconds") {
        if seconds <= 0 {
            errors.push(field::invalid_number(
                "spec.leaseDurationSeconds",
                seconds,
                "must be greater than 0",
            ));
        }
    }
    if let Some(transitions) = field::int_at(spec, "leaseTransitions") {
        if transitions < 0 {
            errors.push(field::invalid_number(
                "spec.leaseTransitions",
                transitions,
                "must be greater than or equal to 0",
            ));
        }
    }
    let strategy = spec.get("strategy").and_then(Value::as_str);
    if let Some(strategy) = strategy {
        if strategy.contains('/') {
            for message in crate::selector::is_qualified_name(strategy) {
                errors.push(field::invalid("spec.strategy", strategy, message));
            }
        } else if !LEASE_STRATEGIES.contains(&strategy) {
            errors.push(field::not_supported(
                "spec.strategy",
                strategy,
                &LEASE_STRATEGIES,
            ));
        }
    }
    let preferred_holder = spec.get("preferredHolder").and_then(Value::as_str);
    if preferred_holder.is_some_and(|holder| !holder.is_empty())
        && strategy.is_none_or(str::is_empty)
    {
        errors.push(field::forbidden(
            "spec.preferredHolder",
            "may only be specified if `strategy` is defined",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Cases from kube's `TestValidateLease`, `TestValidateLeaseSpecUpdate`.
    #[test]
    fn leases() {
        let lease_with = |spec: serde_json::Value| json!({"metadata": {"name": "l"}, "spec": spec});
        assert!(lease(&lease_with(
            json!({"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0})
        ))
        .is_empty());
        assert!(lease(&lease_with(
            json!({"strategy": "OldestEmulationVersion", "preferredHolder": "a"})
        ))
        .is_empty());
        assert!(lease(&lease_with(json!({"strategy": "example.com/custom"}))).is_empty());
        let cases = [
            (json!({"leaseDurationSeconds": 0}), "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"),
            (json!({"leaseTransitions": -1}), "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"),
            (json!({"strategy": "Newest"}), "spec.strategy: Unsupported value: \"Newest\": supported values: \"OldestEmulationVersion\""),
            (json!({"preferredHolder": "a"}), "spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"),
        ];
        for (spec, expected) in cases {
            let errors: Vec<String> = lease(&lease_with(spec.clone()))
                .iter()
                .map(ToString::to_string)
                .collect();
            assert_eq!(errors, vec![expected], "{spec}");
        }
    }
}
