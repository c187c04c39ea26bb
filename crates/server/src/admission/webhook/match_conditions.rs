//! Webhook `matchConditions`: CEL expressions that must all be true for a
//! webhook to be called (`plugin/webhook/matchconditions/matcher.go`
//! `Match`, called from `generic/webhook.go` `ShouldCallHook` once the
//! rules and selectors matched), and their validation in a configuration
//! (`admissionregistration/validation/validation.go`
//! `validateMatchConditions`, `validateMatchCondition`).
//!
//! The variables are `object`, `oldObject` (null when absent) and
//! `request` (the AdmissionRequest without its objects, as
//! `plugin/cel/condition.go` `CreateAdmissionRequest` builds it). A
//! condition that is false skips the webhook at once; errors count only
//! when no condition is false: under `failurePolicy: Fail` the request is
//! refused with kube's 403, under `Ignore` the webhook is skipped.
//!
//! At create, conditions are type-checked as kube compiles them (`object`
//! and `oldObject` dyn, `request`, `namespaceObject` and `authorizer`
//! typed: `typecheck::admission_declarations`): `compilation failed: …`
//! for undeclared references and mismatched types, `must evaluate to bool`.
//!
//! The runtime cost limits (`plugin/cel/filter.go` `ForInput` with
//! `RuntimeCELCostBudgetMatchConditions`): a condition whose static
//! estimate can exceed `PerCallLimit` is evaluated counting its actual cost
//! (`cel_env::runtime_cost`) and fails over it (`expression '…' resulted
//! in error: operation cancelled: actual cost limit exceeded`); when the
//! estimates add up past the budget every condition is counted, and once
//! the budget is spent the conditions fail as a whole (`validation failed
//! due to running out of cost budget, no further validation rules will be
//! run`), per the failurePolicy.
//!
//! Not done: the `authorizer` variable at evaluation (a condition reading
//! it fails to evaluate).

use std::collections::HashSet;
use std::sync::Arc;

use cel::{Context, ExecutionError, Program};
use serde_json::Value;

use super::config::FailurePolicy;
use crate::admission::attributes::Attributes;
use crate::cel_env::runtime_cost::{
    self, Halt, COST_LIMIT_EXCEEDED, OUT_OF_BUDGET, PER_CALL_LIMIT,
    RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS,
};
use crate::crd::cel_rules::CEL_STACK_BYTES;
use crate::crd::cel_syntax;
use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind};

/// kube's limit on the conditions of one webhook.
pub const MAX_MATCH_CONDITIONS: usize = 64;

/// One condition, compiled.
#[derive(Debug, Clone)]
pub struct MatchCondition {
    pub name: String,
    pub expression: String,
    /// The program, or the parse error (`compilation failed: …`), which
    /// configuration validation already refuses.
    program: Result<Arc<Program>, String>,
    /// The static estimate's most one evaluation costs (`u64::MAX` when
    /// not estimated).
    estimated_cost: u64,
}

/// The conditions of one webhook (`matchConditions`), compiled on a thread
/// with the parser's stack.
pub fn compile(conditions: Option<&Value>) -> Vec<MatchCondition> {
    let Some(conditions) = conditions.and_then(Value::as_array) else {
        return Vec::new();
    };
    let sources: Vec<(String, String)> = conditions
        .iter()
        .map(|condition| {
            let text = |field: &str| {
                condition
                    .get(field)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            (text("name"), text("expression"))
        })
        .collect();
    if sources.is_empty() {
        return Vec::new();
    }
    let build = || {
        sources
            .iter()
            .map(|(name, expression)| MatchCondition {
                name: name.clone(),
                expression: expression.clone(),
                program: match cel_syntax::check(expression) {
                    Err(error) => Err(format!("compilation failed: {error}")),
                    Ok(()) => crate::cel_env::env()
                        .compile(expression)
                        .map(Arc::new)
                        .map_err(|error| format!("compilation failed: {error}")),
                },
                estimated_cost: u64::MAX,
            })
            .map(|mut condition| {
                if let Ok(program) = &condition.program {
                    condition.estimated_cost =
                        crate::cel_env::cost_estimate::estimate(program.expression(), &Value::Null)
                            .max;
                }
                condition
            })
            .collect::<Vec<_>>()
    };
    on_cel_thread("cel-compile", build).unwrap_or_else(|| {
        sources
            .iter()
            .map(|(name, expression)| MatchCondition {
                name: name.clone(),
                expression: expression.clone(),
                program: Err("internal error: the expression could not be compiled".into()),
                estimated_cost: u64::MAX,
            })
            .collect()
    })
}

/// Runs `work` on a thread with the CEL parser's stack; `None` when the
/// thread could not start or panicked.
fn on_cel_thread<T: Send>(name: &str, work: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name(name.into())
            .stack_size(CEL_STACK_BYTES)
            .spawn_scoped(scope, work)
            .ok()
            .and_then(|handle| handle.join().ok())
    })
}

/// What the conditions decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every condition is true: the webhook is called.
    Call,
    /// A condition is false, or one failed under `failurePolicy: Ignore`.
    Skip,
    /// A condition failed under `failurePolicy: Fail`: the request is
    /// refused with this reason (kube's 403 `… is forbidden: <reason>`).
    Refuse(String),
}

/// `matcher.Match`: the conditions evaluated in order against the request.
pub fn evaluate(
    conditions: &[MatchCondition],
    failure_policy: FailurePolicy,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Outcome {
    evaluate_with(conditions, failure_policy, attributes, object, None)
}

/// [`evaluate`] with the `authorizer` variable (kube's `authz.go`) bound
/// to checks `checker` answers, when there is one.
pub fn evaluate_with(
    conditions: &[MatchCondition],
    failure_policy: FailurePolicy,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    checker: Option<Arc<dyn crate::cel_env::authz::Checker>>,
) -> Outcome {
    if conditions.is_empty() {
        return Outcome::Call;
    }
    let authorizer = checker.map(|checker| {
        (
            crate::cel_env::authz::authorizer(checker.clone()),
            crate::cel_env::authz::request_resource(
                checker,
                crate::admission::policy::authorizer::request_resource(attributes),
            ),
        )
    });
    let object_value = object.map_or(cel::Value::Null, crate::cel_env::from_json);
    let old_value = attributes
        .old_object
        .map_or(cel::Value::Null, crate::cel_env::from_json);
    let request_value = crate::cel_env::from_json(&request(attributes));
    let run = move || -> Outcome {
        let mut context = Context::with_env(crate::cel_env::env().clone());
        context.add_variable_from_value("object", object_value);
        context.add_variable_from_value("oldObject", old_value);
        context.add_variable_from_value("request", request_value);
        if let Some((authorizer, request_resource)) = authorizer {
            context.add_variable_from_value("authorizer", authorizer);
            context.add_variable_from_value("authorizer.requestResource", request_resource);
        }
        let mut errors = Vec::new();
        let exact = conditions.iter().fold(0u64, |sum, condition| {
            sum.saturating_add(condition.estimated_cost)
        }) > RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS;
        let mut remaining = RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS;
        for condition in conditions {
            let program = match &condition.program {
                Ok(program) => program,
                Err(error) => {
                    errors.push(format!("compilation error: {error}"));
                    continue;
                }
            };
            let result = if exact || condition.estimated_cost > PER_CALL_LIMIT {
                let evaluation =
                    runtime_cost::evaluate(program.expression(), &context, PER_CALL_LIMIT);
                if exact {
                    if evaluation.cost > remaining {
                        // `Match`'s answer to `ForInput`'s error.
                        return match failure_policy {
                            FailurePolicy::Ignore => Outcome::Skip,
                            FailurePolicy::Fail => Outcome::Refuse(OUT_OF_BUDGET.into()),
                        };
                    }
                    remaining -= evaluation.cost;
                }
                evaluation.result
            } else {
                program.execute(&context).map_err(Halt::Error)
            };
            match result {
                Ok(cel::Value::Bool(true)) => {}
                Ok(cel::Value::Bool(false)) => return Outcome::Skip,
                Ok(_) => errors.push(format!(
                    "expression '{}' resulted in error: no such overload",
                    condition.expression
                )),
                Err(Halt::Cancelled) => errors.push(format!(
                    "expression '{}' resulted in error: {COST_LIMIT_EXCEEDED}",
                    condition.expression,
                )),
                Err(Halt::Error(error)) => errors.push(format!(
                    "expression '{}' resulted in error: {}",
                    condition.expression,
                    error_text(&error)
                )),
            }
        }
        if errors.is_empty() {
            return Outcome::Call;
        }
        match failure_policy {
            FailurePolicy::Ignore => Outcome::Skip,
            // `utilerrors.NewAggregate`'s message.
            FailurePolicy::Fail if errors.len() == 1 => Outcome::Refuse(errors.remove(0)),
            FailurePolicy::Fail => Outcome::Refuse(format!("[{}]", errors.join(", "))),
        }
    };
    on_cel_thread("cel-match", run).unwrap_or_else(|| match failure_policy {
        FailurePolicy::Ignore => Outcome::Skip,
        FailurePolicy::Fail => {
            Outcome::Refuse("internal error: the match conditions could not be evaluated".into())
        }
    })
}

/// cel-go's text for an evaluation error, where cel-rust's has a
/// counterpart.
fn error_text(error: &ExecutionError) -> String {
    match error {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::DivisionByZero(_) => "division by zero".into(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".into(),
        ExecutionError::Overflow(..) => "integer overflow".into(),
        ExecutionError::NoSuchOverload(_) => "no such overload".into(),
        ExecutionError::UndeclaredReference(name) => format!("no such attribute: {name}"),
        ExecutionError::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// The `request` variable: the AdmissionRequest a webhook would receive,
/// without `uid`, `object` and `oldObject`.
fn request(attributes: &Attributes<'_>) -> Value {
    let mut review = super::review::request("", attributes, None);
    let mut request = review
        .get_mut("request")
        .map(Value::take)
        .unwrap_or(Value::Null);
    if let Some(fields) = request.as_object_mut() {
        for absent in ["uid", "object", "oldObject"] {
            fields.remove(absent);
        }
    }
    request
}

/// `validateMatchConditions` for `webhook.matchConditions` at `path`
/// (`webhooks[i].matchConditions`, or a policy's `spec.matchConditions`,
/// where `has_params` when it has a `paramKind`).
pub fn validate(
    conditions: Option<&Value>,
    path: &str,
    has_params: bool,
    errors: &mut Vec<FieldError>,
) {
    let Some(conditions) = conditions.and_then(Value::as_array) else {
        return;
    };
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errors.push(FieldError {
            kind: FieldErrorKind::TooMany(conditions.len() as i64, MAX_MATCH_CONDITIONS as i64),
            field: path.to_string(),
            detail: String::new(),
        });
    }
    let mut names = HashSet::new();
    for (index, condition) in conditions.iter().enumerate() {
        let path = format!("{path}[{index}]");
        let text = |field: &str| {
            condition
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let expression = text("expression").trim();
        let expression_path = format!("{path}.expression");
        if expression.is_empty() {
            errors.push(FieldError::required(&expression_path, ""));
        } else if let Some(detail) = crate::validation::admissionregistration::compile_error(
            expression,
            crate::validation::admissionregistration::ExpressionKind::Condition,
            has_params,
        ) {
            errors.push(FieldError::invalid(&expression_path, expression, detail));
        }
        let name = text("name");
        let name_path = format!("{path}.name");
        if name.is_empty() {
            errors.push(FieldError::required(&name_path, ""));
        } else {
            for message in crate::selector::is_qualified_name(name) {
                errors.push(FieldError::invalid(&name_path, name, message));
            }
        }
        if !name.is_empty() && !names.insert(name) {
            errors.push(FieldError {
                kind: FieldErrorKind::Duplicate(quote(name)),
                field: name_path,
                detail: String::new(),
            });
        }
    }
}

#[cfg(test)]
#[path = "match_conditions_tests.rs"]
mod tests;
