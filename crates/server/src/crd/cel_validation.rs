//! Enforcement of `x-kubernetes-validations` on custom resources:
//! apiextensions `apiserver/schema/cel/validation.go` (`Validator.validate`,
//! `validateExpressions`, `validateMap`, `validateArray`), run by the
//! custom-resource strategy after the schema checks (`mod.rs`).
//!
//! Every non-null value whose schema node has rules is bound to `self` (and,
//! on update, the value it correlates with to `oldSelf`: the same key of a
//! map that is not atomic, the item of an `x-kubernetes-list-type: map`
//! list with the same keys; set and atomic lists do not correlate). A
//! transition rule (one that reads `oldSelf`) runs only when there is an old
//! value, unless `optionalOldSelf` binds `oldSelf` as an optional. A rule
//! that fails is reported at its node's path (plus its `fieldPath`) with
//! its `reason` (`FieldValueInvalid` by default) and its message: `message`,
//! else `messageExpression`'s string, else `failed rule: <rule>`; the
//! invalid value is the node's type (`Invalid value: "object": …`), as kube
//! prints it. Failures of rules without `oldSelf` on values an update left
//! unchanged are not reported (`CRDValidationRatcheting`; kube turns them
//! into warnings).
//!
//! The runtime cost limits (`cel_env::runtime_cost`): a rule whose static
//! estimate can exceed `PerCallLimit` is evaluated counting its actual cost
//! and cancelled over the limit (`'operation cancelled: actual cost limit
//! exceeded': no further validation rules will be run due to call cost
//! exceeds limit for rule: …`); every rule's cost counts toward the
//! request's `RuntimeCELCostBudget` (`validation failed due to running out
//! of cost budget, no further validation rules will be run`), and once
//! either fires no further rule runs. Cheap rules are charged their static
//! estimate (an upper bound of their actual cost) and run as before; only
//! when those bounds add up past the budget is the object validated again
//! with every rule's actual cost counted, as kube counts it.
//!
//! Not done: `date-time`/`duration` strings as timestamps and durations, `byte`
//! strings as bytes, and set/map-list equality ignoring order (values are
//! plain strings and lists).

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::types::CelOptional;
use cel::common::value::Val;
use cel::{Context, ExecutionError};
use serde_json::Value;

use super::cel_rules::{env, CelRules, CompiledRule, CEL_STACK_BYTES};
use super::schema::field_schema;
use crate::cel_env::runtime_cost::{
    self, Halt, COST_LIMIT_EXCEEDED, OUT_OF_BUDGET, PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET,
};
use crate::go::strconv::quote;
use crate::schema::value_rules::{ListType, ValueRules};
use crate::schema::{MapType, Model, NodeId, SchemaType};
use crate::status::{FieldError, FieldErrorKind};

/// kube's `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// Every failing rule of `object` (a custom resource after defaulting,
/// pruning and the schema checks); `old` on update.
pub fn validate(
    object: &Value,
    old: Option<&Value>,
    model: &Model,
    rules: &CelRules,
) -> Vec<FieldError> {
    let Some(root) = model.schema_root() else {
        return Vec::new();
    };
    if rules.is_empty() {
        return Vec::new();
    }
    let run = || {
        let walk = |exact: bool| {
            let mut walk = Walk {
                model,
                rules,
                errors: Vec::new(),
                budget: Budget::new(exact),
            };
            walk.node("", object, old, root, root, true, false);
            walk
        };
        let bounded = walk(false);
        if bounded.budget.recount {
            return walk(true).errors;
        }
        bounded.errors
    };
    // Evaluation recurses as deep as the expression nests (the object's
    // depth is bounded at decoding): shallow rules on the request's thread,
    // deep ones on a thread with the parser's stack. Starting that thread
    // for every object cost a create more than its rules.
    if rules.depth() <= crate::cel_env::SHALLOW_DEPTH {
        return run();
    }
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("cel-validate".into())
            .stack_size(CEL_STACK_BYTES)
            .spawn_scoped(scope, run)
            .ok()
            .and_then(|handle| handle.join().ok())
    })
    .unwrap_or_else(|| {
        vec![FieldError {
            kind: FieldErrorKind::Invalid(quote("null")),
            field: "<nil>".into(),
            detail: "internal error: the validation rules could not be evaluated".into(),
        }]
    })
}

struct Walk<'a> {
    model: &'a Model,
    rules: &'a CelRules,
    errors: Vec<FieldError>,
    budget: Budget,
}

/// kube's `remainingBudget` of one object's rules.
struct Budget {
    /// Every rule's actual cost is counted (kube's accounting); otherwise
    /// a rule estimated under `PerCallLimit` is charged its estimate.
    exact: bool,
    /// What is left of `RuntimeCELCostBudget` (a lower bound of kube's
    /// when not exact).
    remaining: i64,
    /// kube returned -1: no further rule runs.
    stopped: bool,
    /// Not exact, and the estimates went past the budget: the object is
    /// validated again, exactly.
    recount: bool,
}

impl Budget {
    fn new(exact: bool) -> Budget {
        Budget {
            exact,
            remaining: RUNTIME_CEL_COST_BUDGET as i64,
            stopped: false,
            recount: false,
        }
    }

    fn done(&self) -> bool {
        self.stopped || self.recount
    }

    /// Charges an actual `cost`; `false` when it is more than what is
    /// left (exact: kube's out-of-budget failure; else a recount).
    fn charge(&mut self, cost: u64) -> bool {
        let cost = i64::try_from(cost).unwrap_or(i64::MAX);
        if cost > self.remaining {
            if self.exact {
                self.stopped = true;
            } else {
                self.recount = true;
            }
            return false;
        }
        self.remaining -= cost;
        true
    }
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn field_of(path: &str) -> String {
    if path.is_empty() {
        "<nil>".into()
    } else {
        path.to_string()
    }
}

/// The schema's `type` as kube prints it as the invalid value.
fn type_name(model: &Model, id: NodeId) -> &'static str {
    match model.node(id).schema_type {
        Some(SchemaType::String) => "string",
        Some(SchemaType::Integer) => "integer",
        Some(SchemaType::Number) => "number",
        Some(SchemaType::Boolean) => "boolean",
        Some(SchemaType::Object) => "object",
        Some(SchemaType::Array) => "array",
        Some(SchemaType::Other) | None => "",
    }
}

impl Walk<'_> {
    /// `Validator.validate` at one node: its rules (and those of its
    /// `allOf` schemas), then its children. `type_node` names the value's
    /// type (the node itself, or the node an `allOf` schema sits on);
    /// `parent_unchanged`: the nearest ancestor that correlated is equal to
    /// its old value (ratcheting where this value does not correlate).
    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        path: &str,
        value: &Value,
        old: Option<&Value>,
        id: NodeId,
        type_node: NodeId,
        resource_root: bool,
        parent_unchanged: bool,
    ) {
        if value.is_null() || self.budget.done() {
            return;
        }
        let old = old.filter(|old| !old.is_null());
        let unchanged = match old {
            Some(old) => old == value,
            None => parent_unchanged,
        };
        let table = self.rules;
        let rules = table.of(id);
        if !rules.is_empty() {
            self.expressions(path, value, old, rules, type_node, resource_root, unchanged);
            if self.budget.done() {
                return;
            }
        }
        let all_of = self
            .model
            .values(id)
            .rules
            .as_deref()
            .map(|rules| rules.junct().all_of.clone())
            .unwrap_or_default();
        for schema in all_of {
            // kube does not ratchet allOf errors by their own value.
            self.node(
                path,
                value,
                old,
                schema,
                type_node,
                resource_root,
                parent_unchanged,
            );
        }
        let model = self.model;
        match value {
            Value::Object(map) => {
                let node = model.node(id);
                let correlatable = node.map_type != Some(MapType::Atomic);
                let child_parent = old.map_or(parent_unchanged, |_| unchanged);
                for (key, field) in map {
                    if self.budget.done() {
                        return;
                    }
                    let (next, nested) = match node.property(key) {
                        Some(property) => (property, child(path, key)),
                        None => match super::schema::additional(model, id) {
                            Some(additional) => (additional, format!("{path}[{key}]")),
                            None => continue,
                        },
                    };
                    let old_field = old
                        .filter(|_| correlatable)
                        .and_then(|old| old.get(key.as_str()));
                    let embedded = model.values(next).embedded_resource;
                    self.node(
                        &nested,
                        field,
                        old_field,
                        next,
                        next,
                        embedded,
                        child_parent,
                    );
                }
            }
            Value::Array(items) => {
                let Some(item_schema) = model.node(id).items else {
                    return;
                };
                let keys = match model.values(id).rules.as_deref().map(ValueRules::list) {
                    Some(ListType::Map(keys)) => Some(keys.as_slice()),
                    _ => None,
                };
                let old_items = old.and_then(Value::as_array);
                let child_parent = old.map_or(parent_unchanged, |_| unchanged);
                let embedded = model.values(item_schema).embedded_resource;
                for (index, item) in items.iter().enumerate() {
                    if self.budget.done() {
                        return;
                    }
                    let old_item = match (keys, old_items) {
                        (Some(keys), Some(old_items)) => old_items
                            .iter()
                            .find(|candidate| same_keys(candidate, item, keys)),
                        _ => None,
                    };
                    self.node(
                        &format!("{path}[{index}]"),
                        item,
                        old_item,
                        item_schema,
                        item_schema,
                        embedded,
                        child_parent,
                    );
                }
            }
            _ => {}
        }
    }

    /// `validateExpressions`: each rule of one node against its value.
    #[allow(clippy::too_many_arguments)]
    fn expressions(
        &mut self,
        path: &str,
        value: &Value,
        old: Option<&Value>,
        rules: &[CompiledRule],
        type_node: NodeId,
        resource_root: bool,
        unchanged: bool,
    ) {
        let model = self.model;
        let type_text = type_name(model, type_node);
        if self.budget.remaining <= 0 {
            if self.budget.exact {
                self.errors
                    .push(invalid(path, type_text, OUT_OF_BUDGET.to_string()));
                self.budget.stopped = true;
            } else {
                self.budget.recount = true;
            }
            return;
        }
        let self_value = to_cel(value, model, Some(type_node), resource_root);
        let old_value = old.map(|old| to_cel(old, model, Some(type_node), resource_root));
        let mut context = Context::with_env(Arc::clone(env()));
        context.add_variable_from_value("self", self_value.clone());
        if let Some(old_value) = &old_value {
            context.add_variable_from_value("oldSelf", old_value.clone());
        }
        let mut optional_context = Context::with_env(Arc::clone(env()));
        optional_context.add_variable_from_value("self", self_value);
        let optional: CelOptional<'static> = match &old_value {
            Some(old_value) => match Box::<dyn Val>::try_from(old_value.clone()) {
                Ok(inner) => CelOptional::of(inner),
                Err(_) => CelOptional::none(),
            },
            None => CelOptional::none(),
        };
        optional_context.add_variable_as_val("oldSelf", Box::new(optional));
        for compiled in rules {
            let rule = &compiled.spec;
            let program = match &compiled.program {
                Ok(program) => program,
                Err(error) => {
                    self.errors.push(invalid(
                        path,
                        type_text,
                        format!("rule compile error: {error}"),
                    ));
                    continue;
                }
            };
            if compiled.uses_old_self && old.is_none() && !rule.optional_old_self {
                continue;
            }
            let activation = if rule.optional_old_self {
                &optional_context
            } else {
                &context
            };
            let tracked = self.budget.exact || compiled.estimated_cost > PER_CALL_LIMIT;
            let result = if tracked {
                let evaluation =
                    runtime_cost::evaluate(program.expression(), activation, PER_CALL_LIMIT);
                if !self.budget.charge(evaluation.cost) {
                    if self.budget.stopped {
                        self.errors
                            .push(invalid(path, type_text, OUT_OF_BUDGET.to_string()));
                    }
                    return;
                }
                evaluation.result
            } else {
                if !self.budget.charge(compiled.estimated_cost) {
                    return;
                }
                program.execute(activation).map_err(Halt::Error)
            };
            match result {
                Ok(cel::Value::Bool(true)) => continue,
                Ok(_) => {}
                Err(Halt::Cancelled) => {
                    self.errors.push(invalid(
                        path,
                        type_text,
                        format!(
                            "'{COST_LIMIT_EXCEEDED}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                            rule_error_string(compiled)
                        ),
                    ));
                    self.budget.stopped = true;
                    return;
                }
                Err(Halt::Error(error)) => {
                    self.errors.push(invalid(
                        path,
                        type_text,
                        evaluation_error(&error, &rule_error_string(compiled)),
                    ));
                    continue;
                }
            }
            if !compiled.uses_old_self && unchanged {
                continue;
            }
            let at = if compiled.field_path.is_empty() {
                path.to_string()
            } else {
                child(path, &compiled.field_path)
            };
            let message = match &compiled.message {
                Some(message) => {
                    let evaluation =
                        runtime_cost::evaluate(message.expression(), &context, PER_CALL_LIMIT);
                    if !self.budget.charge(evaluation.cost) {
                        if self.budget.stopped {
                            self.errors.push(invalid(&at, type_text, "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run".to_string()));
                        }
                        return;
                    }
                    match evaluation.result {
                        Err(Halt::Cancelled) => {
                            self.errors.push(invalid(
                                &at,
                                type_text,
                                format!(
                                    "no further validation rules will be run due to call cost exceeds limit for messageExpression: {}",
                                    quote(&rule.message_expression)
                                ),
                            ));
                            self.budget.stopped = true;
                            return;
                        }
                        Err(Halt::Error(_)) => None,
                        Ok(value) => evaluated_message(value),
                    }
                }
                None => None,
            };
            let detail = message.unwrap_or_else(|| rule_message_or_default(compiled));
            self.errors.push(error_for_reason(
                &at,
                type_text,
                detail,
                rule.reason.as_deref(),
            ));
        }
    }
}

/// Whether two items of a map list have the same values at `keys`.
fn same_keys(a: &Value, b: &Value, keys: &[String]) -> bool {
    keys.iter()
        .all(|key| a.get(key.as_str()) == b.get(key.as_str()))
}

fn invalid(path: &str, type_text: &str, detail: String) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(quote(type_text)),
        field: field_of(path),
        detail,
    }
}

/// `fieldErrorForReason`.
fn error_for_reason(
    path: &str,
    type_text: &str,
    detail: String,
    reason: Option<&str>,
) -> FieldError {
    let kind = match reason {
        Some("FieldValueForbidden") => FieldErrorKind::Forbidden,
        Some("FieldValueRequired") => FieldErrorKind::Required,
        Some("FieldValueDuplicate") => {
            return FieldError {
                kind: FieldErrorKind::Duplicate(quote(type_text)),
                field: field_of(path),
                detail: String::new(),
            }
        }
        _ => FieldErrorKind::Invalid(quote(type_text)),
    };
    FieldError {
        kind,
        field: field_of(path),
        detail,
    }
}

/// `ruleMessageOrDefault`.
fn rule_message_or_default(rule: &CompiledRule) -> String {
    if rule.spec.message.is_empty() {
        format!("failed rule: {}", rule_error_string(rule))
    } else {
        rule.spec.message.trim().to_string()
    }
}

/// `ruleErrorString`.
fn rule_error_string(rule: &CompiledRule) -> String {
    if rule.spec.message.is_empty() {
        rule.spec.rule.trim().to_string()
    } else {
        rule.spec.message.trim().to_string()
    }
}

/// `evalMessageExpression`: the trimmed string, or `None` (kube then uses
/// the rule's message) when it fails, is not a string, is empty, has line
/// breaks or is longer than 5 KiB.
fn evaluated_message(value: cel::Value) -> Option<String> {
    match value {
        cel::Value::String(text) => {
            let trimmed = text.trim();
            (!trimmed.is_empty() && !trimmed.contains('\n') && trimmed.len() <= MAX_MESSAGE_BYTES)
                .then(|| trimmed.to_string())
        }
        _ => None,
    }
}

/// The detail of a rule that failed to evaluate, in cel-go's words where
/// cel-rust's error has a counterpart.
fn evaluation_error(error: &ExecutionError, rule: &str) -> String {
    let text = match error {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_string(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_string(),
        ExecutionError::Overflow(..) => "integer overflow".to_string(),
        ExecutionError::IndexOutOfBounds(index) => match index {
            cel::Value::Int(index) => format!("index out of bounds: {index}"),
            other => format!("index out of bounds: {other:?}"),
        },
        ExecutionError::NoSuchOverload(_) => {
            return format!(
                "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {rule}"
            )
        }
        // kube's library functions' own texts (`min called on empty list`).
        ExecutionError::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    };
    format!("{text} evaluating rule: {rule}")
}

/// `UnstructuredToVal`: a JSON value as CEL sees it under its schema:
/// numbers of `type: number` as doubles, integers as ints, objects as maps
/// (a resource root's `metadata` reduced to `name` and `generateName`, as
/// `WithTypeAndObjectMeta` declares it).
pub fn to_cel(value: &Value, model: &Model, id: Option<NodeId>, resource_root: bool) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(flag) => cel::Value::Bool(*flag),
        Value::Number(number) => {
            let double =
                id.is_some_and(|id| model.node(id).schema_type == Some(SchemaType::Number));
            match (double, number.as_i64()) {
                (false, Some(int)) => cel::Value::Int(int),
                _ => match number.as_u64() {
                    Some(uint) if !double && number.as_i64().is_none() => cel::Value::UInt(uint),
                    _ => cel::Value::Float(number.as_f64().unwrap_or(f64::NAN)),
                },
            }
        }
        Value::String(text) => cel::Value::String(Arc::new(text.clone())),
        Value::Array(items) => {
            let item_schema = id.and_then(|id| model.node(id).items);
            let embedded = item_schema.is_some_and(|item| model.values(item).embedded_resource);
            cel::Value::List(Arc::new(
                items
                    .iter()
                    .map(|item| to_cel(item, model, item_schema, embedded))
                    .collect(),
            ))
        }
        Value::Object(map) => {
            let mut out: HashMap<String, cel::Value> = HashMap::with_capacity(map.len());
            for (key, field) in map {
                if resource_root && key == "metadata" {
                    let mut meta: HashMap<String, cel::Value> = HashMap::new();
                    for name in ["name", "generateName"] {
                        if let Some(Value::String(text)) = field.get(name) {
                            meta.insert(
                                name.to_string(),
                                cel::Value::String(Arc::new(text.clone())),
                            );
                        }
                    }
                    out.insert(key.clone(), meta.into());
                    continue;
                }
                let next = id.and_then(|id| field_schema(model, id, key));
                let embedded = next.is_some_and(|next| model.values(next).embedded_resource);
                out.insert(key.clone(), to_cel(field, model, next, embedded));
            }
            out.into()
        }
    }
}

#[cfg(test)]
#[path = "cel_validation_tests.rs"]
mod tests;
