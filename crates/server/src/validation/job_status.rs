//! `jobs/status` writes (`pkg/apis/batch/validation/validation.go`
//! `ValidateJobUpdateStatus`, `validateJobStatus`, `ValidateJobStatusUpdate`,
//! `validateIndexesFormat`, `parseIndexInterval`,
//! `validateFailedIndexesNotOverlapCompleted`), with the options
//! `pkg/registry/batch/job/strategy.go` `getStatusValidationOptions` sets
//! while `JobManagedBy` is on (beta in 1.34): most rules apply only when the
//! fields they look at change, so a write unrelated to a bad old status passes.

use std::collections::BTreeSet;

use serde_json::Value;

use super::field::{self, child, index};
use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind};

/// `JobStatusValidationOptions` (`AllowForSuccessCriteriaMetInExtendedScope`
/// is always true with `JobManagedBy`, so its rules never apply).
#[derive(Debug, Default)]
struct Options {
    decreasing_succeeded: bool,
    invalid_completed_indexes: bool,
    invalid_failed_indexes: bool,
    failed_indexes_overlapping_completed: bool,
    completed_indexes_for_non_indexed: bool,
    failed_indexes_without_backoff_limit_per_index: bool,
    failed_without_failure_target: bool,
    complete_without_success_criteria_met: bool,
    finished_with_active_pods: bool,
    finished_without_start_time: bool,
    finished_with_uncounted_terminated_pods: bool,
    start_time_update_for_unsuspended: bool,
    completion_time_before_start_time: bool,
    complete_without_completion_time: bool,
    not_complete_with_completion_time: bool,
    complete_with_failed_condition: bool,
    complete_with_failure_target_condition: bool,
    more_ready_than_active: bool,
    finished_with_terminating_pods: bool,
}

fn status(job: &Value) -> &Value {
    job.get("status").unwrap_or(&Value::Null)
}

fn spec(job: &Value) -> &Value {
    job.get("spec").unwrap_or(&Value::Null)
}

/// `IsConditionTrue`.
fn condition_true(job: &Value, kind: &str) -> bool {
    field::items_at(status(job), "conditions")
        .iter()
        .any(|condition| {
            field::str_at(condition, "type") == kind && field::str_at(condition, "status") == "True"
        })
}

fn is_finished(job: &Value) -> bool {
    condition_true(job, "Complete") || condition_true(job, "Failed")
}

fn changed(new: &Value, old: &Value, name: &str) -> bool {
    let value = |job: &Value| {
        status(job)
            .get(name)
            .filter(|value| !value.is_null())
            .cloned()
    };
    value(new) != value(old)
}

fn is_indexed(job: &Value) -> bool {
    field::str_at(spec(job), "completionMode") == "Indexed"
}

/// `getStatusValidationOptions` with `JobManagedBy` on.
fn options(new: &Value, old: &Value) -> Options {
    let flipped = |kind: &str| condition_true(new, kind) != condition_true(old, kind);
    let finished = is_finished(new) != is_finished(old);
    let complete = flipped("Complete");
    let failed = flipped("Failed");
    let failure_target = flipped("FailureTarget");
    let success_criteria_met = flipped("SuccessCriteriaMet");
    let completed_indexes = field::str_at(status(new), "completedIndexes")
        != field::str_at(status(old), "completedIndexes");
    let failed_indexes = changed(new, old, "failedIndexes");
    // `active` is a plain int32: 0 and absent are the same.
    let active = field::int_at(status(new), "active").unwrap_or(0)
        != field::int_at(status(old), "active").unwrap_or(0);
    let start_time = changed(new, old, "startTime");
    let completion_time = changed(new, old, "completionTime");
    // `Semantic.DeepEqual` of a pointer: `{}` is not nil, empty lists are.
    let uncounted = !super::semantic_equal::fields_equal(
        status(new).get("uncountedTerminatedPods"),
        status(old).get("uncountedTerminatedPods"),
        "uncountedTerminatedPods",
    );
    let completions = spec(new).get("completions");
    Options {
        // Indexed jobs with parallelism == completions may be scaled down.
        decreasing_succeeded: !is_indexed(new) || completions != spec(new).get("parallelism"),
        invalid_completed_indexes: completed_indexes,
        invalid_failed_indexes: failed_indexes,
        failed_indexes_overlapping_completed: failed_indexes || completed_indexes,
        completed_indexes_for_non_indexed: completed_indexes,
        failed_indexes_without_backoff_limit_per_index: failed_indexes,
        failed_without_failure_target: failed || failure_target,
        complete_without_success_criteria_met: complete || success_criteria_met,
        finished_with_active_pods: finished || active,
        finished_without_start_time: finished || start_time,
        finished_with_uncounted_terminated_pods: finished || uncounted,
        start_time_update_for_unsuspended: start_time,
        completion_time_before_start_time: start_time || completion_time,
        complete_without_completion_time: complete || completion_time,
        not_complete_with_completion_time: complete || completion_time,
        complete_with_failed_condition: complete || failed,
        complete_with_failure_target_condition: complete || failure_target,
        more_ready_than_active: changed(new, old, "ready") || active,
        finished_with_terminating_pods: finished || changed(new, old, "terminating"),
    }
}

fn conditions_invalid(detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::InvalidOmitted,
        field: "status.conditions".to_string(),
        detail: detail.to_string(),
    }
}

/// A `*metav1.Time` as the error prints it (`time.Time.String()`, in UTC).
fn go_time(rfc3339: &str) -> String {
    match rfc3339.strip_suffix('Z') {
        Some(utc) => format!("{} +0000 UTC", utc.replacen('T', " ", 1)),
        None => rfc3339.to_string(),
    }
}

fn time_invalid(path: &str, rfc3339: &str, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(go_time(rfc3339)),
        field: path.to_string(),
        detail: detail.to_string(),
    }
}

/// `ValidateJobUpdateStatus` (ObjectMeta is the write path's).
pub fn job_status_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let options = options(new, old);
    let mut errors = job_status(new, &options);
    let new_status = status(new);
    let old_status = status(old);
    for kind in ["Failed", "Complete", "FailureTarget"] {
        if condition_true(old, kind) && !condition_true(new, kind) {
            errors.push(conditions_invalid(&format!(
                "cannot disable the terminal {kind}=True condition"
            )));
        }
    }
    let count = |status: &Value, name: &str| field::int_at(status, name).unwrap_or(0);
    let failed = count(new_status, "failed");
    if failed < count(old_status, "failed") {
        errors.push(field::invalid_number(
            "status.failed",
            failed,
            "cannot decrease the failed counter",
        ));
    }
    let succeeded = count(new_status, "succeeded");
    if options.decreasing_succeeded && succeeded < count(old_status, "succeeded") {
        errors.push(field::invalid_number(
            "status.succeeded",
            succeeded,
            "cannot decrease the succeeded counter",
        ));
    }
    let completion = new_status.get("completionTime").and_then(Value::as_str);
    let old_completion = old_status.get("completionTime").and_then(Value::as_str);
    if let (Some(completion), Some(old_completion)) = (completion, old_completion) {
        if completion != old_completion {
            errors.push(time_invalid(
                "status.completionTime",
                completion,
                "completionTime cannot be mutated",
            ));
        }
    }
    if options.start_time_update_for_unsuspended
        && old_status
            .get("startTime")
            .is_some_and(|time| !time.is_null())
        && spec(new).get("suspend").and_then(Value::as_bool) != Some(true)
    {
        errors.push(field::required(
            "status.startTime",
            "startTime cannot be removed for unsuspended job",
        ));
    }
    if condition_true(old, "SuccessCriteriaMet") && !condition_true(new, "SuccessCriteriaMet") {
        errors.push(conditions_invalid(
            "cannot disable the SuccessCriteriaMet=True condition",
        ));
    }
    if condition_true(old, "Complete")
        && !condition_true(old, "SuccessCriteriaMet")
        && condition_true(new, "SuccessCriteriaMet")
    {
        errors.push(conditions_invalid(
            "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
        ));
    }
    errors
}

/// `validateJobStatus`.
fn job_status(job: &Value, options: &Options) -> Vec<FieldError> {
    let status = status(job);
    let spec = spec(job);
    let mut errors = Vec::new();
    for name in ["active", "succeeded", "failed", "ready", "terminating"] {
        field::nonnegative(status, name, "status", &mut errors);
    }
    uncounted_terminated_pods(status, &mut errors);
    let complete = condition_true(job, "Complete");
    let failed = condition_true(job, "Failed");
    let failure_target = condition_true(job, "FailureTarget");
    let success_criteria_met = condition_true(job, "SuccessCriteriaMet");
    if options.complete_with_failed_condition && complete && failed {
        errors.push(conditions_invalid(
            "cannot set Complete=True and Failed=true conditions",
        ));
    }
    if options.complete_with_failure_target_condition && complete && failure_target {
        errors.push(conditions_invalid(
            "cannot set Complete=True and FailureTarget=true conditions",
        ));
    }
    let completion = status.get("completionTime").and_then(Value::as_str);
    let start = status.get("startTime").and_then(Value::as_str);
    if let (true, Some(completion), false) = (
        options.not_complete_with_completion_time,
        completion,
        complete,
    ) {
        errors.push(time_invalid(
            "status.completionTime",
            completion,
            "cannot set completionTime when there is no Complete=True condition",
        ));
    }
    if options.complete_without_completion_time && completion.is_none() && complete {
        errors.push(field::required(
            "status.completionTime",
            "completionTime is required for Complete jobs",
        ));
    }
    if let (true, Some(start), Some(completion)) =
        (options.completion_time_before_start_time, start, completion)
    {
        // Both are RFC 3339 UTC timestamps of one form: text order is time order.
        if completion < start {
            errors.push(time_invalid(
                "status.completionTime",
                completion,
                "completionTime cannot be set before startTime",
            ));
        }
    }
    if options.failed_without_failure_target && failed && !failure_target {
        errors.push(conditions_invalid(
            "cannot set Failed=True condition without the FailureTarget=true condition",
        ));
    }
    if options.complete_without_success_criteria_met && complete && !success_criteria_met {
        errors.push(conditions_invalid(
            "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
        ));
    }
    let finished = complete || failed;
    let active = field::int_at(status, "active").unwrap_or(0);
    if options.finished_with_active_pods && active > 0 && finished {
        errors.push(field::invalid_number(
            "status.active",
            active,
            "active>0 is invalid for finished job",
        ));
    }
    if options.finished_without_start_time && start.is_none() && finished {
        errors.push(field::required(
            "status.startTime",
            "startTime is required for finished job",
        ));
    }
    let uncounted = status
        .get("uncountedTerminatedPods")
        .filter(|value| !value.is_null());
    if let (true, true, Some(uncounted)) = (
        options.finished_with_uncounted_terminated_pods,
        finished,
        uncounted,
    ) {
        if !field::items_at(uncounted, "succeeded").is_empty()
            || !field::items_at(uncounted, "failed").is_empty()
        {
            errors.push(FieldError {
                kind: FieldErrorKind::Invalid(render_uncounted(uncounted)),
                field: "status.uncountedTerminatedPods".to_string(),
                detail: "uncountedTerminatedPods needs to be empty for finished job".to_string(),
            });
        }
    }
    indexes(job, options, &mut errors);
    if let Some(terminating) = field::int_at(status, "terminating") {
        if options.finished_with_terminating_pods && terminating > 0 && finished {
            errors.push(field::invalid_number(
                "status.terminating",
                terminating,
                "terminating>0 is invalid for finished job",
            ));
        }
    }
    if let Some(ready) = field::int_at(status, "ready") {
        if options.more_ready_than_active && ready > active {
            errors.push(field::invalid_number(
                "status.ready",
                ready,
                "cannot set more ready pods than active",
            ));
        }
    }
    if success_criteria_met && failed {
        errors.push(conditions_invalid(
            "cannot set SuccessCriteriaMet=True and Failed=true conditions",
        ));
    }
    if success_criteria_met && failure_target {
        errors.push(conditions_invalid(
            "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
        ));
    }
    if spec
        .get("successPolicy")
        .is_some_and(|policy| !policy.is_null())
        && !success_criteria_met
        && complete
    {
        errors.push(conditions_invalid(
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
        ));
    }
    errors
}

/// `uncountedTerminatedPods`: UIDs non-empty and unique across both lists.
fn uncounted_terminated_pods(status: &Value, errors: &mut Vec<FieldError>) {
    let Some(uncounted) = status
        .get("uncountedTerminatedPods")
        .filter(|value| !value.is_null())
    else {
        return;
    };
    let mut seen = BTreeSet::new();
    for list in ["succeeded", "failed"] {
        for (position, uid) in field::items_at(uncounted, list).iter().enumerate() {
            let path = index(&child("status.uncountedTerminatedPods", list), position);
            let uid = uid.as_str().unwrap_or_default();
            if uid.is_empty() {
                errors.push(field::invalid(&path, uid, "must not be empty"));
            } else if !seen.insert(uid) {
                errors.push(field::duplicate(&path, uid));
            }
        }
    }
}

/// Go's `%#v` of a `batch.UncountedTerminatedPods`.
fn render_uncounted(uncounted: &Value) -> String {
    let list = |name: &str| {
        let items = field::items_at(uncounted, name);
        if uncounted.get(name).is_none_or(Value::is_null) {
            "[]types.UID(nil)".to_string()
        } else {
            let quoted: Vec<String> = items
                .iter()
                .map(|uid| quote(uid.as_str().unwrap_or_default()))
                .collect();
            format!("[]types.UID{{{}}}", quoted.join(", "))
        }
    };
    format!(
        "batch.UncountedTerminatedPods{{Succeeded:{}, Failed:{}}}",
        list("succeeded"),
        list("failed")
    )
}

/// The completed and failed index rules.
fn indexes(job: &Value, options: &Options, errors: &mut Vec<FieldError>) {
    let status = status(job);
    let spec = spec(job);
    let completions = field::int_at(spec, "completions");
    let completed = field::str_at(status, "completedIndexes");
    let failed = status.get("failedIndexes").and_then(Value::as_str);
    let backoff_per_index = spec
        .get("backoffLimitPerIndex")
        .is_some_and(|limit| !limit.is_null());
    if let (true, Some(completions)) = (options.invalid_completed_indexes, completions) {
        if let Err(error) = indexes_format(completed, completions) {
            errors.push(field::invalid(
                "status.completedIndexes",
                completed,
                format!("error parsing completedIndexes: {error}"),
            ));
        }
    }
    if let (true, Some(completions), true, Some(failed)) = (
        options.invalid_failed_indexes,
        completions,
        backoff_per_index,
        failed,
    ) {
        if let Err(error) = indexes_format(failed, completions) {
            errors.push(field::invalid(
                "status.failedIndexes",
                failed,
                format!("error parsing failedIndexes: {error}"),
            ));
        }
    }
    if options.completed_indexes_for_non_indexed && !completed.is_empty() && !is_indexed(job) {
        errors.push(field::invalid(
            "status.completedIndexes",
            completed,
            "cannot set non-empty completedIndexes when non-indexed completion mode",
        ));
    }
    if let (true, false, Some(failed)) = (
        options.failed_indexes_without_backoff_limit_per_index,
        backoff_per_index,
        failed,
    ) {
        errors.push(field::invalid(
            "status.failedIndexes",
            failed,
            "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
        ));
    }
    if let (true, Some(completions), Some(failed)) = (
        options.failed_indexes_overlapping_completed,
        completions,
        failed,
    ) {
        if let Some(index) = overlap(completed, failed, completions) {
            errors.push(field::invalid(
                "status.failedIndexes",
                failed,
                format!("failedIndexes and completedIndexes overlap at index: {index}"),
            ));
        }
    }
}

/// `parseIndexInterval`: `x` or `x-y` with `x < y < completions`.
fn interval(text: &str, completions: i64) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = text.split('-').collect();
    if limits.len() > 2 {
        return Err(format!(
            "the fragment {} violates the requirement that an index interval can have at most two parts separated by '-'",
            quote(text)
        ));
    }
    let parse = |limit: &str| -> Result<i64, String> {
        let value = limit.parse::<i64>().map_err(|_| {
            format!(
                "cannot convert string to integer for index: {}",
                quote(limit)
            )
        })?;
        if value >= completions {
            return Err(format!("too large index: {}", quote(limit)));
        }
        Ok(value)
    };
    let first = parse(limits[0])?;
    match limits.get(1) {
        None => Ok((first, first)),
        Some(second) => {
            let second = parse(second)?;
            if first >= second {
                return Err(format!(
                    "non-increasing order, previous: {first}, current: {second}"
                ));
            }
            Ok((first, second))
        }
    }
}

/// `validateIndexesFormat`: intervals in increasing order; the number of indexes.
pub(super) fn indexes_format(text: &str, completions: i64) -> Result<i64, String> {
    if text.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    for part in text.split(',') {
        let (first, end) = interval(part, completions)?;
        if let Some(last) = last.filter(|last| *last >= first) {
            return Err(format!(
                "non-increasing order, previous: {last}, current: {first}"
            ));
        }
        total += end - first + 1;
        last = Some(end);
    }
    Ok(total)
}

/// `validateFailedIndexesNotOverlapCompleted`: the first index in both
/// (intervals that do not parse are skipped; the format rule reports them).
fn overlap(completed: &str, failed: &str, completions: i64) -> Option<i64> {
    if completed.is_empty() || failed.is_empty() {
        return None;
    }
    let completed: Vec<Result<(i64, i64), String>> = completed
        .split(',')
        .map(|part| interval(part, completions))
        .collect();
    let failed: Vec<Result<(i64, i64), String>> = failed
        .split(',')
        .map(|part| interval(part, completions))
        .collect();
    let (mut c, mut f) = (0, 0);
    while c < completed.len() && f < failed.len() {
        match (&completed[c], &failed[f]) {
            (Err(_), _) => c += 1,
            (_, Err(_)) => f += 1,
            (Ok((cx, cy)), Ok((fx, fy))) => {
                if cx <= fy && fx <= cy {
                    return Some(*cx.max(fx));
                }
                if cx <= fx {
                    c += 1;
                } else {
                    f += 1;
                }
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "job_status_tests.rs"]
mod tests;
