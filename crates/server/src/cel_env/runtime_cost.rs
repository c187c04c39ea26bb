//! The actual (runtime) cost of a CEL evaluation, as cel-go's
//! `interpreter/runtimecost.go` counts it (`CostObserver`, `costCall`)
//! with kube's `apiserver/pkg/cel/library/cost.go` (`CallCost`) for kube's
//! functions, and the limits kube sets (`apiserver/pkg/apis/cel/config.go`:
//! `PerCallLimit`, `RuntimeCELCostBudget`).
//!
//! cel-rust counts no cost, so this is a second walk over the same syntax
//! tree: it charges each node as cel-go's observer does (identifiers and
//! selections 1, constants 0, calls their `costCall`, list/map/message
//! literals 10/30/40, `&&`, `||` and `?:` nothing of their own) and
//! evaluates, through cel-rust, only what decides the cost: the branch
//! taken, the arguments whose sizes a call's cost reads, the range of a
//! comprehension and its accumulator at every iteration (a comprehension
//! costs its range, its init, and its condition and step per iteration
//! until the condition is false, then its result). Each node's value is
//! cel-rust's evaluation of it, except `&&`, `||`, `?:` and
//! comprehensions, which the walk combines from their parts as cel-rust
//! does; when anything fails, the whole expression is evaluated by cel-rust
//! for its error, so the walk changes no result. Callers run it only for expressions whose static
//! estimate (`cost_estimate`, an upper bound of this cost) can exceed a
//! limit; every other expression runs as before and pays nothing.
//!
//! Where this differs from cel-go: cel-go fuses a chain of selections and
//! indexes into one attribute, which makes a few of its costs one lower
//! (`has(a.b.c)` is 2 there, 3 here; `m[k]` with an identifier key is 2
//! there, 3 here); after an evaluation error inside a comprehension's step,
//! the remaining iterations are not charged here.

use cel::common::ast::{operators, EntryExpr, Expr};
use cel::parser::Expression;
use cel::{Context, ExecutionError, Value};

/// `celconfig.PerCallLimit`: the most one evaluation of one expression
/// may cost.
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// `celconfig.RuntimeCELCostBudget`: the most all the expressions run for
/// one request (a custom resource's rules, a policy's expressions) may cost
/// together.
pub const RUNTIME_CEL_COST_BUDGET: u64 = 10_000_000;
/// `celconfig.RuntimeCELCostBudgetMatchConditions`: the budget of one
/// webhook's or policy's `matchConditions`.
pub const RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS: u64 = 2_500_000;
/// kube's error when the budget is spent (CRD rules, `ForInput`).
pub const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";
/// cel-go's `EvalCancelledError` message for `CostLimitExceeded`.
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

const STRING_TRAVERSAL_COST_FACTOR: f64 = 0.1;
const REGEX_STRING_LENGTH_COST_FACTOR: f64 = 0.25;
const LIST_CREATE_BASE_COST: u64 = 10;
const MAP_CREATE_BASE_COST: u64 = 30;
const STRUCT_CREATE_BASE_COST: u64 = 40;

/// Why an evaluation stopped.
#[derive(Debug)]
pub enum Halt {
    /// cel-rust's evaluation error.
    Error(ExecutionError),
    /// The cost went over the limit ([`COST_LIMIT_EXCEEDED`]).
    Cancelled,
}

/// The outcome of [`evaluate`]: the result, and the cost counted (when
/// cancelled, the cost at the node that went over, as cel-go's
/// `ActualCost` after a cancellation).
#[derive(Debug)]
pub struct Evaluation {
    pub result: Result<Value, Halt>,
    pub cost: u64,
}

/// How long the walk may take before it gives up counting (see
/// [`evaluate`]).
const PATIENCE: std::time::Duration = std::time::Duration::from_millis(50);

/// Evaluates `expression` in `context`, counting its actual cost and
/// cancelling it when the cost exceeds `limit`.
///
/// The walk re-evaluates subtrees through cel-rust and copies the values it
/// reads, so on large inputs it can take far longer than the evaluation it
/// counts. Past [`PATIENCE`] it gives up: the expression is evaluated by
/// cel-rust without a limit (as before runtime costs were counted) and
/// charged what was counted so far. A client's large object cannot make
/// the server spend more than that on counting.
pub fn evaluate(expression: &Expression, context: &Context, limit: u64) -> Evaluation {
    evaluate_with_patience(expression, context, limit, PATIENCE)
}

fn evaluate_with_patience(
    expression: &Expression,
    context: &Context,
    limit: u64,
    patience: std::time::Duration,
) -> Evaluation {
    let mut tracker = Tracker {
        cost: 0,
        limit,
        steps: 0,
        give_up_at: std::time::Instant::now() + patience,
        gave_up: false,
    };
    let walked = tracker.walk(expression, context);
    let result = match walked {
        Ok(value) => Ok(value),
        Err(Halt::Cancelled) if tracker.gave_up => {
            Value::resolve(expression, context).map_err(Halt::Error)
        }
        Err(Halt::Cancelled) => Err(Halt::Cancelled),
        // cel-rust's own error, as its evaluation reports it.
        Err(Halt::Error(_)) => Value::resolve(expression, context).map_err(Halt::Error),
    };
    Evaluation {
        result,
        cost: tracker.cost,
    }
}

struct Tracker {
    cost: u64,
    limit: u64,
    /// Nodes walked, to look at the clock now and then.
    steps: u64,
    give_up_at: std::time::Instant,
    /// The walk stopped at `give_up_at` (reported as `Cancelled`, then
    /// evaluated without a limit by [`evaluate`]).
    gave_up: bool,
}

/// The links of a chain of selections ending in an identifier
/// (`object.metadata.name`: 3), `None` for anything else.
fn selection_chain(expression: &Expression) -> Option<u64> {
    match &expression.expr {
        Expr::Ident(_) => Some(1),
        Expr::Select(select) if !select.test => selection_chain(&select.operand).map(|n| n + 1),
        _ => None,
    }
}

fn resolve(expression: &Expression, context: &Context) -> Result<Value, Halt> {
    Value::resolve(expression, context).map_err(Halt::Error)
}

impl Tracker {
    fn charge(&mut self, cost: u64) -> Result<(), Halt> {
        self.cost = self.cost.saturating_add(cost);
        if self.cost > self.limit {
            Err(Halt::Cancelled)
        } else {
            Ok(())
        }
    }

    fn walk(&mut self, expression: &Expression, context: &Context) -> Result<Value, Halt> {
        self.steps += 1;
        if self.steps % 64 == 1 && std::time::Instant::now() >= self.give_up_at {
            self.gave_up = true;
        }
        if self.gave_up {
            return Err(Halt::Cancelled);
        }
        match &expression.expr {
            Expr::Literal(_) | Expr::Unspecified => resolve(expression, context),
            Expr::Ident(_) => {
                self.charge(1)?;
                resolve(expression, context)
            }
            Expr::Select(select) => {
                // A chain on an identifier is charged one per link and
                // resolved once: resolving its links one by one would copy
                // the whole variable (`object`) to read one field of it.
                if let Some(links) = selection_chain(&select.operand) {
                    self.charge(links + 1)?;
                    return resolve(expression, context);
                }
                self.walk(&select.operand, context)?;
                self.charge(1)?;
                resolve(expression, context)
            }
            Expr::List(list) => {
                for element in &list.elements {
                    self.walk(element, context)?;
                }
                self.charge(LIST_CREATE_BASE_COST)?;
                resolve(expression, context)
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        self.walk(&entry.key, context)?;
                        self.walk(&entry.value, context)?;
                    }
                }
                self.charge(MAP_CREATE_BASE_COST)?;
                resolve(expression, context)
            }
            Expr::Struct(structure) => {
                for entry in &structure.entries {
                    if let EntryExpr::StructField(field) = &entry.expr {
                        self.walk(&field.value, context)?;
                    }
                }
                self.charge(STRUCT_CREATE_BASE_COST)?;
                resolve(expression, context)
            }
            Expr::Comprehension(comprehension) => {
                self.comprehension(expression, comprehension, context)
            }
            Expr::Call(call) => self.call(expression, call, context),
        }
    }

    /// `evalFold`: the range and init, then per item the condition (the
    /// loop stops when it is `false`) and the step, then the result.
    fn comprehension(
        &mut self,
        expression: &Expression,
        comprehension: &cel::common::ast::ComprehensionExpr,
        context: &Context,
    ) -> Result<Value, Halt> {
        let range = self.walk(&comprehension.iter_range, context)?;
        let mut accumulator = self.walk(&comprehension.accu_init, context)?;
        let items: Vec<(Value, Option<Value>)> = match &range {
            Value::List(items) => items
                .iter()
                .enumerate()
                .map(|(index, item)| match comprehension.iter_var2 {
                    Some(_) => (Value::Int(index as i64), Some(item.clone())),
                    None => (item.clone(), None),
                })
                .collect(),
            Value::Map(map) => map
                .map
                .iter()
                .map(|(key, value)| (Value::from(key), Some(value.clone())))
                .collect(),
            _ => return resolve(expression, context),
        };
        for (first, second) in items {
            let mut scope = context.new_inner_scope();
            scope.add_variable_from_value(comprehension.accu_var.as_str(), accumulator.clone());
            scope.add_variable_from_value(comprehension.iter_var.as_str(), first);
            if let (Some(name), Some(second)) = (&comprehension.iter_var2, second) {
                scope.add_variable_from_value(name.as_str(), second);
            }
            match self.walk(&comprehension.loop_cond, &scope) {
                Ok(Value::Bool(false)) => break,
                Ok(_) => {}
                Err(Halt::Error(_)) => return resolve(expression, context),
                Err(Halt::Cancelled) => return Err(Halt::Cancelled),
            }
            accumulator = match self.walk(&comprehension.loop_step, &scope) {
                Ok(value) => value,
                Err(Halt::Error(_)) => return resolve(expression, context),
                Err(Halt::Cancelled) => return Err(Halt::Cancelled),
            };
        }
        let mut scope = context.new_inner_scope();
        scope.add_variable_from_value(comprehension.accu_var.as_str(), accumulator);
        self.walk(&comprehension.result, &scope)
    }

    fn call(
        &mut self,
        expression: &Expression,
        call: &cel::common::ast::CallExpr,
        context: &Context,
    ) -> Result<Value, Halt> {
        let name = call.func_name.as_str();
        match (name, call.args.as_slice()) {
            (operators::CONDITIONAL, [condition, when, otherwise]) => {
                return match self.walk(condition, context)? {
                    Value::Bool(true) => self.walk(when, context),
                    Value::Bool(false) => self.walk(otherwise, context),
                    _ => resolve(expression, context),
                };
            }
            (operators::LOGICAL_AND | operators::LOGICAL_OR, [left, right]) => {
                let short = Value::Bool(name == operators::LOGICAL_OR);
                let left = self.walk(left, context);
                match &left {
                    Ok(value) if *value == short => return Ok(short),
                    Err(Halt::Cancelled) => return Err(Halt::Cancelled),
                    _ => {}
                }
                let right = self.walk(right, context);
                return match (left, right) {
                    (_, Err(Halt::Cancelled)) => Err(Halt::Cancelled),
                    (_, Ok(value)) if value == short => Ok(short),
                    (Ok(Value::Bool(_)), Ok(Value::Bool(right))) => Ok(Value::Bool(right)),
                    _ => resolve(expression, context),
                };
            }
            (operators::NOT_STRICTLY_FALSE, [argument]) => {
                let value = match self.walk(argument, context) {
                    Err(Halt::Cancelled) => return Err(Halt::Cancelled),
                    Ok(Value::Bool(false)) => false,
                    _ => true,
                };
                self.charge(1)?;
                return Ok(Value::Bool(value));
            }
            _ => {}
        }
        let mut values = Vec::with_capacity(call.args.len() + 1);
        if let Some(target) = &call.target {
            values.push(self.walk(target, context)?);
        }
        for argument in &call.args {
            values.push(self.walk(argument, context)?);
        }
        let result = resolve(expression, context);
        self.charge(call_cost(name, &values))?;
        result
    }
}

/// The size cel-go's `actualSize` reads: code points of a string, bytes,
/// items of a list, entries of a map, else 1.
fn actual_size(value: &Value) -> u64 {
    match value {
        Value::String(text) => text.chars().count() as u64,
        Value::Bytes(bytes) => bytes.len() as u64,
        Value::List(items) => items.len() as u64,
        Value::Map(map) => map.map.len() as u64,
        _ => 1,
    }
}

fn traversal(size: u64) -> u64 {
    (size as f64 * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64
}

fn is_text(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Bytes(_))
}

/// kube's `traversalCost`: what reading every element of a value costs.
fn traversal_cost(value: &Value) -> u64 {
    match value {
        Value::String(text) => (text.len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64,
        Value::Bytes(bytes) => (bytes.len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64,
        Value::List(items) => items.iter().map(traversal_cost).sum(),
        Value::Map(map) => map
            .map
            .iter()
            .map(|(key, value)| traversal_cost(&Value::from(key)) + traversal_cost(value))
            .sum(),
        _ => 1,
    }
}

fn regex_cost(text: &Value, regex: &Value) -> u64 {
    let text_cost = ((1.0 + actual_size(text) as f64) * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64;
    let regex_cost = (actual_size(regex) as f64 * REGEX_STRING_LENGTH_COST_FACTOR).ceil() as u64;
    text_cost.saturating_mul(regex_cost)
}

/// `CostTracker.costCall` with kube's `CallCost`: `values` are the
/// receiver (if any) then the arguments.
pub fn call_cost(function: &str, values: &[Value]) -> u64 {
    match (function, values) {
        ("startsWith" | "endsWith", [text, _]) if is_text(text) => traversal(actual_size(text)),
        ("bytes", [Value::String(_)]) | ("string", [Value::Bytes(_)]) => {
            traversal(actual_size(&values[0]))
        }
        // `InList` traverses the list; a map's `in` is a lookup (cost 1).
        (operators::IN, [_, Value::List(items)]) => items.len() as u64,
        (operators::EQUALS | operators::NOT_EQUALS, [left, right]) => {
            traversal(actual_size(left).min(actual_size(right)))
        }
        (
            operators::LESS
            | operators::LESS_EQUALS
            | operators::GREATER
            | operators::GREATER_EQUALS,
            [left, right],
        ) if is_text(left) && is_text(right) => {
            traversal(actual_size(left).min(actual_size(right)))
        }
        (operators::ADD, [left, right]) if is_text(left) && is_text(right) => {
            traversal(actual_size(left) + actual_size(right))
        }
        ("matches" | "find" | "findAll", [text, regex, ..]) => regex_cost(text, regex),
        ("contains", [text, needle]) if is_text(text) => {
            traversal(actual_size(text)).saturating_mul(traversal(actual_size(needle)))
        }
        // kube's list functions: one traversal of the list.
        ("isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf", [Value::List(_), ..]) => {
            traversal_cost(&values[0])
        }
        // kube's string functions that read the whole string.
        (
            "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" | "indexOf" | "lastIndexOf"
            | "replace" | "split" | "join" | "reverse" | "quote" | "strings.quote",
            [first, ..],
        ) => traversal(actual_size(first)).max(1),
        _ => 1,
    }
}

#[cfg(test)]
#[path = "runtime_cost_tests.rs"]
mod tests;
