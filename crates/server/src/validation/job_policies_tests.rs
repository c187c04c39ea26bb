//! Cases ported from kube's `TestValidateJob` (pod failure policy, success
//! policy, backoff limit per index, pod replacement policy).

use super::*;
use serde_json::json;

fn messages(spec: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    index_counts(spec, "spec", &mut errors);
    if field::str_at(spec, "completionMode") == "Indexed" {
        indexed_limits(spec, "spec", &mut errors);
    }
    policies(spec, "spec", &mut errors);
    errors
        .iter()
        .map(|error| format!("{}: {}", error.field, error.body()))
        .collect()
}

fn template() -> Value {
    json!({"spec": {"containers": [{"name": "main"}], "restartPolicy": "Never"}})
}

#[test]
fn backoff_limit_per_index_rules() {
    assert_eq!(
        messages(
            &json!({"completionMode": "NonIndexed", "backoffLimitPerIndex": 1, "maxFailedIndexes": 1})
        ),
        [
            "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
            "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode",
        ]
    );
    assert_eq!(
        messages(&json!({"completionMode": "Indexed", "completions": 2, "maxFailedIndexes": 3})),
        [
            "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
            "spec.maxFailedIndexes: Invalid value: 3: must be less than or equal to completions",
        ]
    );
    assert_eq!(
        messages(&json!({"completionMode": "Indexed", "completions": 200000, "parallelism": 20000, "backoffLimitPerIndex": 1})),
        [
            "spec.maxFailedIndexes: Required value: must be specified when completions is above 100000",
            "spec.parallelism: Invalid value: 20000: must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index",
        ]
    );
}

#[test]
fn pod_failure_policy_rules() {
    let spec = json!({"completionMode": "NonIndexed", "template": template(), "podReplacementPolicy": "TerminatingOrFailed",
    "podFailurePolicy": {"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "containerName": "other", "values": [0, 3, 2, 2]}},
        {"action": "Wait", "onPodConditions": [{"type": "DisruptionTarget"}]},
        {"action": "FailIndex", "onExitCodes": {"operator": "Between", "values": []}, "onPodConditions": [{"type": "a b", "status": "Maybe"}]},
        {"action": ""},
    ]}});
    assert_eq!(
        messages(&spec),
        [
            "spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: \"other\": must be one of the container or initContainer names in the pod template",
            "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
            "spec.podFailurePolicy.rules[0].onExitCodes.values[3]: Duplicate value: 2",
            "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 3, 2, 2}: must be ordered",
            "spec.podFailurePolicy.rules[1].action: Unsupported value: \"Wait\": supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\"",
            "spec.podFailurePolicy.rules[1].onPodConditions[0].status: Required value: valid values: [\"False\" \"True\" \"Unknown\"]",
            "spec.podFailurePolicy.rules[2].action: Invalid value: \"FailIndex\": requires the backoffLimitPerIndex to be set",
            "spec.podFailurePolicy.rules[2].onExitCodes.operator: Unsupported value: \"Between\": supported values: \"In\", \"NotIn\"",
            "spec.podFailurePolicy.rules[2].onExitCodes.values: Invalid value: []int32{}: at least one value is required",
            "spec.podFailurePolicy.rules[2].onPodConditions[0].type: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            "spec.podFailurePolicy.rules[2].onPodConditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
            "spec.podFailurePolicy.rules[2]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
            "spec.podFailurePolicy.rules[3].action: Required value: valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
            "spec.podFailurePolicy.rules[3]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
            "spec.podReplacementPolicy: Unsupported value: \"TerminatingOrFailed\": supported values: \"Failed\"",
        ]
    );
}

#[test]
fn success_policy_rules() {
    assert_eq!(
        messages(&json!({"completionMode": "NonIndexed", "successPolicy": {"rules": [{"succeededCount": 1}]}})),
        ["spec.successPolicy: Invalid value: batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{batch.SuccessPolicyRule{SucceededIndexes:(*string)(nil), SucceededCount:1}}}: requires indexed completion mode"]
    );
    assert_eq!(
        messages(&json!({"completionMode": "Indexed", "completions": 5, "successPolicy": {"rules": [
            {},
            {"succeededIndexes": "0-2,1", "succeededCount": 6},
            {"succeededIndexes": "0-1", "succeededCount": 3},
        ]}})),
        [
            "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified",
            "spec.successPolicy.rules[1].succeededIndexes: Invalid value: \"0-2,1\": error parsing succeededIndexes: non-increasing order, previous: 2, current: 1",
            "spec.successPolicy.rules[1].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)",
            "spec.successPolicy.rules[1].succeededCount: Invalid value: 6: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)",
            "spec.successPolicy.rules[2].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)",
        ]
    );
    assert_eq!(
        messages(&json!({"completionMode": "Indexed", "completions": 5, "successPolicy": {"rules": []}})),
        ["spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is specified"]
    );
}
