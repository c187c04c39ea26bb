//! Cases from kube's `TestValidateMinAvailablePodDisruptionBudgetSpec`,
//! `TestValidateMinAvailablePodAndMaxUnavailableDisruptionBudgetSpec`,
//! `TestValidateUnhealthyPodEvictionPolicyDisruptionBudgetSpec`,
//! `TestValidatePodDisruptionBudgetStatus` (`policy/validation/validation_test.go`).

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn budget(spec: Value) -> Value {
    json!({"metadata": {"name": "pdb", "namespace": "default"}, "spec": spec})
}

#[test]
fn valid_budgets_pass() {
    for spec in [
        json!({"minAvailable": 0}),
        json!({"minAvailable": "10%"}),
        json!({"maxUnavailable": 1, "selector": {"matchLabels": {"app": "a"}}}),
        json!({"maxUnavailable": "100%", "unhealthyPodEvictionPolicy": "AlwaysAllow"}),
        json!({"minAvailable": 1, "unhealthyPodEvictionPolicy": "IfHealthyBudget"}),
        json!({}),
    ] {
        assert_eq!(
            texts(&pod_disruption_budget(&budget(spec.clone()), None)),
            Vec::<String>::new(),
            "{spec}"
        );
    }
}

#[test]
fn invalid_budgets_report_kube_paths_and_messages() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"minAvailable": -1}),
            vec!["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0".into()],
        ),
        (
            json!({"minAvailable": "101%"}),
            vec!["spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"101%\"}: must not be greater than 100%".into()],
        ),
        (
            json!({"maxUnavailable": "1.1%"}),
            vec!["spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"1.1%\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')".into()],
        ),
        (
            json!({"minAvailable": 1, "maxUnavailable": 1}),
            vec!["spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:&intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}, Selector:(*v1.LabelSelector)(nil), MaxUnavailable:&intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}, UnhealthyPodEvictionPolicy:(*policy.UnhealthyPodEvictionPolicyType)(nil)}: minAvailable and maxUnavailable cannot be both set".into()],
        ),
        (
            json!({"minAvailable": 1, "unhealthyPodEvictionPolicy": "Invalid"}),
            vec!["spec.unhealthyPodEvictionPolicy: Unsupported value: \"Invalid\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"".into()],
        ),
        (
            json!({"selector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}),
            vec!["spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'".into()],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            texts(&pod_disruption_budget(&budget(spec.clone()), None)),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn budget_status_updates() {
    let condition = json!({"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
                           "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1, "message": ""});
    let status = |status: Value| json!({"metadata": {"name": "pdb"}, "status": status});
    assert!(pod_disruption_budget_status(&status(json!({
        "disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2,
        "conditions": [condition.clone()],
    })))
    .is_empty());
    assert_eq!(
        texts(&pod_disruption_budget_status(&status(
            json!({"disruptionsAllowed": -1, "expectedPods": -2})
        ))),
        vec![
            "status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0",
            "status.expectedPods: Invalid value: -2: must be greater than or equal to 0",
        ]
    );
    let bad = json!({"type": "DisruptionAllowed", "status": "Maybe", "reason": "1bad", "observedGeneration": -1});
    assert_eq!(
        texts(&pod_disruption_budget_status(&status(json!({"conditions": [condition.clone(), condition, bad]})))),
        vec![
            "status.conditions[1].type: Duplicate value: \"DisruptionAllowed\"".to_string(),
            "status.conditions[2].type: Duplicate value: \"DisruptionAllowed\"".to_string(),
            "status.conditions[2].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"".to_string(),
            "status.conditions[2].observedGeneration: Invalid value: -1: must be greater than or equal to zero".to_string(),
            "status.conditions[2].lastTransitionTime: Required value: must be set".to_string(),
            format!("status.conditions[2].reason: Invalid value: \"1bad\": {CONDITION_REASON_FORMAT}"),
        ]
    );
}
