//! Cases ported from kube's `TestValidateJobUpdateStatus` and
//! `pkg/registry/batch/job/strategy_test.go` `TestStatusStrategy_ValidateUpdate`.

use super::*;
use serde_json::json;

fn job(spec: Value, status: Value) -> Value {
    json!({"metadata": {"name": "j"}, "spec": spec, "status": status})
}

fn messages(errors: &[FieldError]) -> Vec<String> {
    errors
        .iter()
        .map(|error| format!("{}: {}", error.field, error.body()))
        .collect()
}

fn update(old_status: Value, new_status: Value) -> Vec<String> {
    let spec = json!({"completions": 4, "parallelism": 4});
    messages(&job_status_update(
        &job(spec.clone(), new_status),
        &job(spec, old_status),
    ))
}

const START: &str = "2024-01-01T00:00:00Z";
const LATER: &str = "2024-01-01T00:10:00Z";

#[test]
fn counts_and_uncounted_pods() {
    assert_eq!(
        update(
            json!({"active": 1, "succeeded": 2, "failed": 3}),
            json!({"active": -1, "succeeded": 1, "failed": 2, "ready": 2,
                "uncountedTerminatedPods": {"succeeded": ["a", ""], "failed": ["a"]}})
        ),
        [
            "status.active: Invalid value: -1: must be greater than or equal to 0",
            "status.uncountedTerminatedPods.succeeded[1]: Invalid value: \"\": must not be empty",
            "status.uncountedTerminatedPods.failed[0]: Duplicate value: \"a\"",
            "status.ready: Invalid value: 2: cannot set more ready pods than active",
            "status.failed: Invalid value: 2: cannot decrease the failed counter",
            "status.succeeded: Invalid value: 1: cannot decrease the succeeded counter",
        ]
    );
}

#[test]
fn terminal_conditions_need_their_fields_and_stay() {
    let complete = json!([{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]);
    let finished = json!({"startTime": START, "completionTime": LATER, "succeeded": 4, "conditions": complete});
    assert!(update(json!({"startTime": START, "active": 4}), finished.clone()).is_empty());
    assert_eq!(
        update(finished.clone(), json!({"startTime": START, "completionTime": LATER, "succeeded": 4})),
        [
            "status.completionTime: Invalid value: 2024-01-01 00:10:00 +0000 UTC: cannot set completionTime when there is no Complete=True condition",
            "status.conditions: Invalid value: cannot disable the terminal Complete=True condition",
            "status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition",
        ]
    );
    assert_eq!(
        update(
            json!({"active": 1}),
            json!({"active": 1, "terminating": 1, "conditions": [{"type": "Complete", "status": "True"}]})
        ),
        [
            "status.completionTime: Required value: completionTime is required for Complete jobs",
            "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
            "status.active: Invalid value: 1: active>0 is invalid for finished job",
            "status.startTime: Required value: startTime is required for finished job",
            "status.terminating: Invalid value: 1: terminating>0 is invalid for finished job",
        ]
    );
    assert_eq!(
        update(
            json!({"startTime": START}),
            json!({"startTime": START, "conditions": [{"type": "Failed", "status": "True"}]})
        ),
        ["status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition"]
    );
    assert_eq!(
        update(
            json!({"startTime": LATER, "completionTime": LATER, "conditions": complete}),
            json!({"startTime": LATER, "completionTime": START, "conditions": complete})
        ),
        [
            "status.completionTime: Invalid value: 2024-01-01 00:00:00 +0000 UTC: completionTime cannot be set before startTime",
            "status.completionTime: Invalid value: 2024-01-01 00:00:00 +0000 UTC: completionTime cannot be mutated",
        ]
    );
}

#[test]
fn rules_apply_only_to_changed_fields() {
    // A bad old status does not block an unrelated write.
    let bad = json!({"active": 2, "conditions": [{"type": "Complete", "status": "True"}]});
    let mut same = bad.clone();
    same["ready"] = json!(0);
    assert!(update(bad, same).is_empty());
}

#[test]
fn indexes_are_kubes() {
    let spec = json!({"completions": 5, "parallelism": 5, "completionMode": "Indexed", "backoffLimitPerIndex": 1});
    let write = |status: Value| {
        messages(&job_status_update(
            &job(spec.clone(), status),
            &job(spec.clone(), json!({})),
        ))
    };
    assert!(write(json!({"completedIndexes": "0,2-3", "failedIndexes": "1,4"})).is_empty());
    assert_eq!(
        write(json!({"completedIndexes": "0-2-3", "failedIndexes": "3,1"})),
        [
            "status.completedIndexes: Invalid value: \"0-2-3\": error parsing completedIndexes: the fragment \"0-2-3\" violates the requirement that an index interval can have at most two parts separated by '-'",
            "status.failedIndexes: Invalid value: \"3,1\": error parsing failedIndexes: non-increasing order, previous: 3, current: 1",
        ]
    );
    assert_eq!(
        write(json!({"completedIndexes": "0-2,7", "failedIndexes": "2"})),
        [
            "status.completedIndexes: Invalid value: \"0-2,7\": error parsing completedIndexes: too large index: \"7\"",
            "status.failedIndexes: Invalid value: \"2\": failedIndexes and completedIndexes overlap at index: 2",
        ]
    );
    let plain = json!({"completions": 5, "parallelism": 2});
    let errors = messages(&job_status_update(
        &job(
            plain.clone(),
            json!({"completedIndexes": "1", "failedIndexes": "2"}),
        ),
        &job(plain, json!({})),
    ));
    assert_eq!(
        errors,
        [
            "status.completedIndexes: Invalid value: \"1\": cannot set non-empty completedIndexes when non-indexed completion mode",
            "status.failedIndexes: Invalid value: \"2\": cannot set non-null failedIndexes when backoffLimitPerIndex is null",
        ]
    );
}
