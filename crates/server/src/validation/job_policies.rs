//! A Job spec's failure and success policies (`pkg/apis/batch/validation/validation.go`
//! `validateJobSpec`'s backoffLimitPerIndex/maxFailedIndexes rules,
//! `validatePodFailurePolicy`, `validatePodFailurePolicyRule`,
//! `validatePodFailurePolicyRuleOnExitCodes`, `…OnPodConditions`,
//! `validateSuccessPolicy`, `validateSuccessPolicyRule`, `validatePodReplacementPolicy`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::field::{self, child, index};
use super::job_status::indexes_format;
use crate::status::{FieldError, FieldErrorKind};

const MAX_FAILED_INDEXES: i64 = 100_000;
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
const PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_FAILED_INDEXES_FOR_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_POD_FAILURE_POLICY_RULES: i64 = 20;
const MAX_EXIT_CODE_VALUES: i64 = 255;
const MAX_POD_CONDITION_PATTERNS: i64 = 20;
const MAX_SUCCEEDED_INDEXES_LENGTH: usize = 64 * 1024;
const MAX_SUCCESS_POLICY_RULES: i64 = 20;

const ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];
const OPERATORS: [&str; 2] = ["In", "NotIn"];
const CONDITION_STATUSES: [&str; 3] = ["False", "True", "Unknown"];

fn set(spec: &Value, name: &str) -> bool {
    spec.get(name).is_some_and(|value| !value.is_null())
}

fn too_many(path: &str, actual: usize, max: i64) -> FieldError {
    FieldError {
        kind: FieldErrorKind::TooMany(i64::try_from(actual).unwrap_or(i64::MAX), max),
        field: path.to_string(),
        detail: String::new(),
    }
}

fn invalid_omitted(path: &str, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::InvalidOmitted,
        field: path.to_string(),
        detail: detail.to_string(),
    }
}

/// Go's `%q` of a string list: `["a" "b"]`.
fn quoted_list(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|value| format!("{value:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

/// The non-negative counts and the `required` rule (after backoffLimit and ttl).
pub fn index_counts(spec: &Value, path: &str, errors: &mut Vec<FieldError>) {
    field::nonnegative(spec, "backoffLimitPerIndex", path, errors);
    if set(spec, "maxFailedIndexes") {
        field::nonnegative(spec, "maxFailedIndexes", path, errors);
        if !set(spec, "backoffLimitPerIndex") {
            errors.push(field::required(
                &child(path, "backoffLimitPerIndex"),
                "when maxFailedIndexes is specified",
            ));
        }
    }
}

/// The rules of an Indexed job's limits (inside kube's Indexed branch).
pub fn indexed_limits(spec: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let completions = field::int_at(spec, "completions");
    let max_failed = field::int_at(spec, "maxFailedIndexes");
    let max_failed_path = child(path, "maxFailedIndexes");
    if let (Some(completions), Some(max_failed)) = (completions, max_failed) {
        if max_failed > completions {
            errors.push(field::invalid_number(
                &max_failed_path,
                max_failed,
                "must be less than or equal to completions",
            ));
        }
    }
    if let Some(max_failed) = max_failed.filter(|max_failed| *max_failed > MAX_FAILED_INDEXES) {
        errors.push(field::invalid_number(
            &max_failed_path,
            max_failed,
            format!("must be less than or equal to {MAX_FAILED_INDEXES}"),
        ));
    }
    if completions.is_some_and(|completions| completions > COMPLETIONS_SOFT_LIMIT)
        && set(spec, "backoffLimitPerIndex")
    {
        if max_failed.is_none() {
            errors.push(field::required(
                &max_failed_path,
                format!("must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"),
            ));
        }
        let high = format!(
            "when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        );
        if let Some(parallelism) = field::int_at(spec, "parallelism")
            .filter(|parallelism| *parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS)
        {
            errors.push(field::invalid_number(
                &child(path, "parallelism"),
                parallelism,
                format!(
                    "must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} {high}"
                ),
            ));
        }
        if let Some(max_failed) =
            max_failed.filter(|max_failed| *max_failed > MAX_FAILED_INDEXES_FOR_HIGH_COMPLETIONS)
        {
            errors.push(field::invalid_number(
                &max_failed_path,
                max_failed,
                format!("must be less than or equal to {MAX_FAILED_INDEXES_FOR_HIGH_COMPLETIONS} {high}"),
            ));
        }
    }
}

/// The rest: per-index limits of non-indexed jobs, the pod failure and
/// success policies, the pod replacement policy.
pub fn policies(spec: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let indexed = field::str_at(spec, "completionMode") == "Indexed";
    if !indexed {
        for name in ["backoffLimitPerIndex", "maxFailedIndexes"] {
            if let Some(value) = field::int_at(spec, name) {
                errors.push(field::invalid_number(
                    &child(path, name),
                    value,
                    "requires indexed completion mode",
                ));
            }
        }
    }
    if let Some(policy) = spec
        .get("podFailurePolicy")
        .filter(|policy| !policy.is_null())
    {
        pod_failure_policy(spec, policy, &child(path, "podFailurePolicy"), errors);
    }
    if let Some(policy) = spec.get("successPolicy").filter(|policy| !policy.is_null()) {
        let policy_path = child(path, "successPolicy");
        if indexed {
            success_policy(spec, policy, &policy_path, errors);
        } else {
            errors.push(FieldError {
                kind: FieldErrorKind::Invalid(render_success_policy(policy)),
                field: policy_path,
                detail: "requires indexed completion mode".to_string(),
            });
        }
    }
    if let Some(replacement) = spec.get("podReplacementPolicy").and_then(Value::as_str) {
        let replacement_path = child(path, "podReplacementPolicy");
        if set(spec, "podFailurePolicy") {
            if replacement != "Failed" {
                errors.push(field::not_supported(
                    &replacement_path,
                    replacement,
                    &["Failed"],
                ));
            }
        } else if !matches!(replacement, "Failed" | "TerminatingOrFailed") {
            errors.push(field::not_supported(
                &replacement_path,
                replacement,
                &["Failed", "TerminatingOrFailed"],
            ));
        }
    }
}

/// `validatePodFailurePolicy`.
fn pod_failure_policy(spec: &Value, policy: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let rules_path = child(path, "rules");
    let rules = field::items_at(policy, "rules");
    if rules.len() > 20 {
        errors.push(too_many(
            &rules_path,
            rules.len(),
            MAX_POD_FAILURE_POLICY_RULES,
        ));
    }
    let template_spec = spec.pointer("/template/spec").unwrap_or(&Value::Null);
    let containers: BTreeSet<&str> = field::items_at(template_spec, "containers")
        .iter()
        .chain(field::items_at(template_spec, "initContainers"))
        .map(|container| field::str_at(container, "name"))
        .collect();
    for (position, rule) in rules.iter().enumerate() {
        let rule_path = index(&rules_path, position);
        let action_path = child(&rule_path, "action");
        match field::str_at(rule, "action") {
            "" => errors.push(field::required(
                &action_path,
                format!("valid values: {}", quoted_list(&ACTIONS)),
            )),
            "FailIndex" if !set(spec, "backoffLimitPerIndex") => {
                errors.push(field::invalid(
                    &action_path,
                    "FailIndex",
                    "requires the backoffLimitPerIndex to be set",
                ));
            }
            "FailIndex" => {}
            action if !ACTIONS.contains(&action) => {
                errors.push(field::not_supported(&action_path, action, &ACTIONS));
            }
            _ => {}
        }
        let on_exit_codes = rule.get("onExitCodes").filter(|codes| !codes.is_null());
        if let Some(codes) = on_exit_codes {
            exit_codes(
                codes,
                &child(&rule_path, "onExitCodes"),
                &containers,
                errors,
            );
        }
        let conditions = field::items_at(rule, "onPodConditions");
        if !conditions.is_empty() {
            pod_conditions(conditions, &child(&rule_path, "onPodConditions"), errors);
        }
        if on_exit_codes.is_some() && !conditions.is_empty() {
            errors.push(invalid_omitted(
                &rule_path,
                "specifying both OnExitCodes and OnPodConditions is not supported",
            ));
        }
        if on_exit_codes.is_none() && conditions.is_empty() {
            errors.push(invalid_omitted(
                &rule_path,
                "specifying one of OnExitCodes and OnPodConditions is required",
            ));
        }
    }
}

/// `validatePodFailurePolicyRuleOnPodConditions`.
fn pod_conditions(patterns: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    if patterns.len() > 20 {
        errors.push(too_many(path, patterns.len(), MAX_POD_CONDITION_PATTERNS));
    }
    for (position, pattern) in patterns.iter().enumerate() {
        let pattern_path = index(path, position);
        field::label_name(
            &child(&pattern_path, "type"),
            field::str_at(pattern, "type"),
            errors,
        );
        let status_path = child(&pattern_path, "status");
        match field::str_at(pattern, "status") {
            "" => errors.push(field::required(
                &status_path,
                format!("valid values: {}", quoted_list(&CONDITION_STATUSES)),
            )),
            status if !CONDITION_STATUSES.contains(&status) => {
                errors.push(field::not_supported(
                    &status_path,
                    status,
                    &CONDITION_STATUSES,
                ));
            }
            _ => {}
        }
    }
}

/// `validatePodFailurePolicyRuleOnExitCodes`.
fn exit_codes(
    codes: &Value,
    path: &str,
    containers: &BTreeSet<&str>,
    errors: &mut Vec<FieldError>,
) {
    let operator = field::str_at(codes, "operator");
    let operator_path = child(path, "operator");
    if operator.is_empty() {
        errors.push(field::required(
            &operator_path,
            format!("valid values: {}", quoted_list(&OPERATORS)),
        ));
    } else if !OPERATORS.contains(&operator) {
        errors.push(field::not_supported(&operator_path, operator, &OPERATORS));
    }
    if let Some(container) = codes.get("containerName").and_then(Value::as_str) {
        if !containers.contains(container) {
            errors.push(field::invalid(
                &child(path, "containerName"),
                container,
                "must be one of the container or initContainer names in the pod template",
            ));
        }
    }
    let values_path = child(path, "values");
    let values: Vec<i64> = field::items_at(codes, "values")
        .iter()
        .map(|value| value.as_i64().unwrap_or(0))
        .collect();
    let rendered = render_int32s(codes.get("values"), &values);
    if values.is_empty() {
        errors.push(FieldError {
            kind: FieldErrorKind::Invalid(rendered.clone()),
            field: values_path.clone(),
            detail: "at least one value is required".to_string(),
        });
    } else if values.len() > 255 {
        errors.push(too_many(&values_path, values.len(), MAX_EXIT_CODE_VALUES));
    }
    let mut seen = BTreeSet::new();
    for (position, value) in values.iter().enumerate() {
        let value_path = index(&values_path, position);
        if operator == "In" && *value == 0 {
            errors.push(field::invalid_number(
                &value_path,
                0,
                "must not be 0 for the In operator",
            ));
        }
        if !seen.insert(*value) {
            errors.push(FieldError {
                kind: FieldErrorKind::Duplicate(value.to_string()),
                field: value_path,
                detail: String::new(),
            });
        }
    }
    if values.windows(2).any(|pair| pair[0] > pair[1]) {
        errors.push(FieldError {
            kind: FieldErrorKind::Invalid(rendered),
            field: values_path,
            detail: "must be ordered".to_string(),
        });
    }
}

/// Go's `%#v` of a `[]int32`.
fn render_int32s(raw: Option<&Value>, values: &[i64]) -> String {
    if raw.is_none_or(Value::is_null) {
        return "[]int32(nil)".to_string();
    }
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    format!("[]int32{{{}}}", items.join(", "))
}

/// `validateSuccessPolicy` (Indexed jobs only).
fn success_policy(spec: &Value, policy: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let rules_path = child(path, "rules");
    let rules = field::items_at(policy, "rules");
    if rules.is_empty() {
        errors.push(field::required(
            &rules_path,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if rules.len() > 20 {
        errors.push(too_many(&rules_path, rules.len(), MAX_SUCCESS_POLICY_RULES));
    }
    // kube dereferences completions here; Indexed jobs without it were refused already.
    let Some(completions) = field::int_at(spec, "completions") else {
        return;
    };
    for (position, rule) in rules.iter().enumerate() {
        let rule_path = index(&rules_path, position);
        let count = field::int_at(rule, "succeededCount");
        let indexes = rule.get("succeededIndexes").and_then(Value::as_str);
        if count.is_none() && indexes.is_none() {
            errors.push(field::required(
                &rule_path,
                "at least one of succeededCount or succeededIndexes must be specified",
            ));
        }
        let mut total = 0;
        if let Some(indexes) = indexes {
            let indexes_path = child(&rule_path, "succeededIndexes");
            if indexes.len() > MAX_SUCCEEDED_INDEXES_LENGTH {
                errors.push(field::too_long(&indexes_path, MAX_SUCCEEDED_INDEXES_LENGTH));
            }
            match indexes_format(indexes, completions) {
                Ok(count) => total = count,
                Err(error) => errors.push(field::invalid(
                    &indexes_path,
                    indexes,
                    format!("error parsing succeededIndexes: {error}"),
                )),
            }
        }
        if let Some(count) = count {
            let count_path = child(&rule_path, "succeededCount");
            field::nonnegative(rule, "succeededCount", &rule_path, errors);
            if count > completions {
                errors.push(field::invalid_number(
                    &count_path,
                    count,
                    format!("must be less than or equal to {completions} (the number of specified completions)"),
                ));
            }
            if indexes.is_some() && count > total {
                errors.push(field::invalid_number(
                    &count_path,
                    count,
                    format!("must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"),
                ));
            }
        }
    }
}

/// Go's `%#v` of a `batch.SuccessPolicy` (pointers print as addresses in
/// Go; here as their values).
fn render_success_policy(policy: &Value) -> String {
    let rules: Vec<String> = field::items_at(policy, "rules")
        .iter()
        .map(|rule| {
            let indexes = rule
                .get("succeededIndexes")
                .and_then(Value::as_str)
                .map_or("(*string)(nil)".to_string(), |text| format!("{text:?}"));
            let count = field::int_at(rule, "succeededCount")
                .map_or("(*int32)(nil)".to_string(), |count| count.to_string());
            format!("batch.SuccessPolicyRule{{SucceededIndexes:{indexes}, SucceededCount:{count}}}")
        })
        .collect();
    format!(
        "batch.SuccessPolicy{{Rules:[]batch.SuccessPolicyRule{{{}}}}}",
        rules.join(", ")
    )
}

#[cfg(test)]
#[path = "job_policies_tests.rs"]
mod tests;
