//! One policy evaluated for one binding and one param
//! (`policy/validating/validator.go` `validator.Validate`, with
//! `plugin/cel/condition.go`'s activation and errors and
//! `webhook/matchconditions/matcher.go` for matchConditions): the CEL
//! variables `object`, `oldObject`, `request`, `params`,
//! `namespaceObject` and `variables`, each converted from JSON only when a
//! program that runs reads it, and `variables.<name>` evaluated only when
//! an expression names it, once per param.
//!
//! The runtime cost limits (`plugin/cel/filter.go` `ForInput`): an
//! expression whose static estimate can exceed `PerCallLimit` is evaluated
//! counting its actual cost (`cel_env::runtime_cost`) and fails over the
//! limit (`expression '…' resulted in error: operation cancelled: actual
//! cost limit exceeded`, then the failurePolicy applies); when the
//! estimates of a policy's expressions add up past `RuntimeCELCostBudget`,
//! every expression is counted and the policy fails as a whole once the
//! budget is spent (`validation failed due to running out of cost budget,
//! no further validation rules will be run`). Expressions estimated under
//! the limits run as before.

use std::cell::{Cell, OnceCell};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::value::Val;
use cel::{Context, ExecutionError};
use serde_json::{Map, Value};

use super::compile::{Expression, Policy, Reason, Uses};
use crate::admission::attributes::Attributes;
use crate::admission::webhook::config::FailurePolicy;
use crate::cel_env::runtime_cost::{
    self, Halt, COST_LIMIT_EXCEEDED, OUT_OF_BUDGET, PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET,
    RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS,
};
use crate::crd::cel_rules::env;
use crate::object::ObjectStore;

/// kube's `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// A validation that did not pass (`PolicyDecision` with `ActionDeny`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    pub message: String,
    pub reason: Reason,
}

/// The request's CEL inputs, shared by every binding and param of the
/// request: the JSON CEL reads (the objects as they are; `request` and
/// `namespaceObject` built on first use), bound to each evaluation as
/// values that borrow it ([`to_val`]).
pub struct Inputs<'a> {
    store: &'a ObjectStore,
    attributes: &'a Attributes<'a>,
    /// The request's own attributes (`requestKind`, `requestResource`)
    /// when `attributes` are an equivalent resource's.
    requested: &'a Attributes<'a>,
    object: Option<&'a Value>,
    request_json: OnceLock<Value>,
    namespace_json: OnceLock<Value>,
    /// Answers the `authorizer` variable's checks.
    authorizer: Option<Arc<dyn crate::cel_env::authz::Checker>>,
}

/// JSON `null`, for an input that is absent.
static NULL: Value = Value::Null;

impl<'a> Inputs<'a> {
    pub fn new(
        store: &'a ObjectStore,
        attributes: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> Self {
        Inputs {
            store,
            attributes,
            requested: attributes,
            object,
            request_json: OnceLock::new(),
            namespace_json: OnceLock::new(),
            authorizer: None,
        }
    }

    /// The inputs of a request matched at an equivalent resource:
    /// `attributes` and `object` are at its version (`NewVersionedAttributes`),
    /// `requested` the request's own.
    pub fn at_equivalent(
        store: &'a ObjectStore,
        attributes: &'a Attributes<'a>,
        requested: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> Self {
        Inputs {
            requested,
            ..Inputs::new(store, attributes, object)
        }
    }

    /// Binds `authorizer` (and `authorizer.requestResource`) to checks
    /// `checker` answers.
    pub fn with_authorizer(mut self, checker: Arc<dyn crate::cel_env::authz::Checker>) -> Self {
        self.authorizer = Some(checker);
        self
    }

    fn object(&self) -> &Value {
        self.object.unwrap_or(&NULL)
    }

    fn old_object(&self) -> &Value {
        self.attributes.old_object.unwrap_or(&NULL)
    }

    fn request(&self) -> &Value {
        self.request_json
            .get_or_init(|| request_object_as(self.attributes, self.requested))
    }

    /// `CreateNamespaceObject`: the request's namespace with the metadata
    /// kube exposes; null for cluster-scoped requests and Namespaces.
    fn namespace_object(&self) -> &Value {
        self.namespace_json.get_or_init(|| {
            let attributes = self.attributes;
            if attributes.namespace.is_empty()
                || (attributes.kind.group.is_empty()
                    && attributes.kind.version == "v1"
                    && attributes.kind.name == "Namespace")
            {
                return Value::Null;
            }
            let snapshot = self.store.snapshot();
            let Some(namespace) = snapshot
                .get(&format!("/registry/namespaces/{}", attributes.namespace))
                .and_then(|entry| entry.object.value())
            else {
                return Value::Null;
            };
            namespace_object(&namespace)
        })
    }
}

/// `CreateAdmissionRequest` as CEL's `request` sees it: the review's
/// request without the objects.
pub fn request_object(attributes: &Attributes<'_>) -> Value {
    request_object_as(attributes, attributes)
}

/// [`request_object`] of a request matched at an equivalent resource:
/// `kind` and `resource` from `attributes`, `requestKind` and
/// `requestResource` from `requested`.
fn request_object_as(attributes: &Attributes<'_>, requested: &Attributes<'_>) -> Value {
    let mut review = crate::admission::webhook::review::request_as("", attributes, requested, None);
    let mut request = review
        .get_mut("request")
        .map(Value::take)
        .unwrap_or(Value::Null);
    if let Some(fields) = request.as_object_mut() {
        fields.remove("object");
        fields.remove("oldObject");
        fields.remove("uid");
    }
    request
}

/// `CreateNamespaceObject`.
fn namespace_object(namespace: &Value) -> Value {
    let mut metadata = Map::new();
    if let Some(stored) = namespace.get("metadata").and_then(Value::as_object) {
        for field in [
            "name",
            "generateName",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "labels",
            "annotations",
            "finalizers",
        ] {
            if let Some(value) = stored.get(field) {
                metadata.insert(field.into(), value.clone());
            }
        }
    }
    let mut out = Map::new();
    out.insert("metadata".into(), Value::Object(metadata));
    for field in ["spec", "status"] {
        if let Some(value) = namespace.get(field) {
            out.insert(field.into(), value.clone());
        }
    }
    Value::Object(out)
}

/// The longest string (in bytes, at least its code points), list or map
/// (its entries or a key) in the inputs `policy` reads.
fn input_extent(policy: &Policy, inputs: &Inputs<'_>, params: &Value) -> u64 {
    fn extent(value: &Value) -> u64 {
        match value {
            Value::String(text) => text.len() as u64,
            Value::Array(items) => items.iter().map(extent).fold(items.len() as u64, u64::max),
            Value::Object(map) => map
                .iter()
                .map(|(key, field)| extent(field).max(key.len() as u64))
                .fold(map.len() as u64, u64::max),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
    }
    let uses = policy
        .expressions()
        .fold(Uses::default(), |all, expression| {
            all.union(expression.uses)
        });
    let mut most = 0;
    for (used, value) in [
        (uses.object, inputs.object()),
        (uses.old_object, inputs.old_object()),
        (uses.params, params),
    ] {
        if used {
            most = most.max(extent(value));
        }
    }
    if uses.request {
        most = most.max(extent(inputs.request()));
    }
    if uses.namespace_object {
        most = most.max(extent(inputs.namespace_object()));
    }
    most
}

/// A JSON value as CEL sees it (`UnstructuredToVal` without a schema):
/// integers as ints, other numbers as doubles; built as the interpreter's
/// own values, its strings and keys borrowing the JSON's (binding a
/// [`cel::Value`] converts it into these, copying every map and string).
pub fn to_val(value: &Value) -> Box<dyn Val + '_> {
    match value {
        Value::Null => Box::new(CelNull),
        Value::Bool(flag) => Box::new(CelBool::from(*flag)),
        Value::Number(number) => match number.as_i64() {
            Some(int) => Box::new(CelInt::from(int)),
            None => match number.as_u64() {
                Some(uint) => Box::new(CelUInt::from(uint)),
                None => Box::new(CelDouble::from(number.as_f64().unwrap_or(f64::NAN))),
            },
        },
        Value::String(text) => Box::new(CelString::from(text.as_str())),
        Value::Array(items) => Box::new(CelList::from(
            items.iter().map(to_val).collect::<Vec<Box<dyn Val + '_>>>(),
        )),
        Value::Object(map) => Box::new(CelMap::from(
            map.iter()
                .map(|(key, field)| (CelMapKey::from(key.as_str()), to_val(field)))
                .collect::<HashMap<CelMapKey<'_>, Box<dyn Val + '_>>>(),
        )),
    }
}

/// A JSON value as CEL sees it (`UnstructuredToVal` without a schema):
/// integers as ints, other numbers as doubles.
pub fn to_cel(value: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(flag) => cel::Value::Bool(*flag),
        Value::Number(number) => match number.as_i64() {
            Some(int) => cel::Value::Int(int),
            None => match number.as_u64() {
                Some(uint) => cel::Value::UInt(uint),
                None => cel::Value::Float(number.as_f64().unwrap_or(f64::NAN)),
            },
        },
        Value::String(text) => cel::Value::String(Arc::new(text.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(map) => {
            let out: HashMap<String, cel::Value> = map
                .iter()
                .map(|(key, field)| (key.clone(), to_cel(field)))
                .collect();
            out.into()
        }
    }
}

/// The names an expression reads as `variables.<name>`; `None` when it
/// reads `variables` some other way (then every variable is bound).
fn variable_names(source: &str) -> Option<Vec<&str>> {
    let mut names = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("variables") {
        let before = source.len() - rest.len() + at;
        let preceded_by_ident = source[..before]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
        let after = &rest[at + "variables".len()..];
        rest = after;
        if preceded_by_ident {
            continue;
        }
        let Some(field) = after.strip_prefix('.') else {
            if after
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            return None;
        };
        let end = field
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(field.len());
        names.push(&field[..end]);
    }
    Some(names)
}

/// One binding's evaluation of a policy with one param.
pub struct Evaluation<'p, 'i> {
    policy: &'p Policy,
    inputs: &'i Inputs<'i>,
    params: &'i Value,
    /// Each variable's value or error, once evaluated.
    variables: Vec<OnceCell<Result<cel::Value, String>>>,
    /// The inputs the policy's expressions read, bound once (borrowing
    /// their JSON) and shared by each expression's scope.
    base: OnceCell<Context<'i, 'i>>,
    /// The longest string, list or map of the inputs the policy reads.
    input_extent: u64,
    /// Every expression's actual cost is counted against the budget: the
    /// estimates of the policy's expressions add up past it.
    exact: bool,
    /// What is left of `RuntimeCELCostBudget` (counted when `exact`).
    remaining: Cell<i64>,
    /// The budget ran out: no further expression runs.
    out_of_budget: Cell<bool>,
}

impl<'p, 'i> Evaluation<'p, 'i> {
    pub fn new(policy: &'p Policy, inputs: &'i Inputs<'i>, params: Option<&'i Value>) -> Self {
        let params = params.unwrap_or(&NULL);
        let input_extent = input_extent(policy, inputs, params);
        Evaluation {
            policy,
            inputs,
            params,
            variables: policy.variables.iter().map(|_| OnceCell::new()).collect(),
            base: OnceCell::new(),
            input_extent,
            exact: policy.expressions().fold(0u64, |sum, expression| {
                sum.saturating_add(expression.estimate_for(input_extent))
            }) > RUNTIME_CEL_COST_BUDGET,
            remaining: Cell::new(RUNTIME_CEL_COST_BUDGET as i64),
            out_of_budget: Cell::new(false),
        }
    }

    /// Starts a new budget (kube's matchConditions and validations each
    /// have their own).
    fn reset_budget(&self, budget: u64) {
        self.remaining.set(budget as i64);
        self.out_of_budget.set(false);
    }

    /// The variable at `index`, seeing only the variables before it.
    fn variable(&self, index: usize) -> &Result<cel::Value, String> {
        self.variables[index].get_or_init(|| {
            let (_, expression) = &self.policy.variables[index];
            self.run(expression, index)
        })
    }

    /// Runs `expression` with the variables before `visible` in scope;
    /// errors in kube's words (`expression '…' resulted in error: …`).
    fn run(&self, expression: &Expression, visible: usize) -> Result<cel::Value, String> {
        let program = match &expression.program {
            Ok(program) => program,
            Err(error) => return Err(format!("compilation error: {error}")),
        };
        let base = self.base.get_or_init(|| self.base_context());
        let mut context = base.new_inner_scope();
        let uses = expression.uses;
        if uses.variables {
            let mut bound: HashMap<String, cel::Value> = HashMap::new();
            let wanted = variable_names(&expression.source);
            for (index, (name, _)) in self.policy.variables.iter().enumerate().take(visible) {
                if wanted
                    .as_ref()
                    .is_some_and(|names| !names.contains(&name.as_str()))
                {
                    continue;
                }
                match self.variable(index) {
                    Ok(value) => {
                        bound.insert(name.clone(), value.clone());
                    }
                    Err(error) => return Err(error.clone()),
                }
            }
            context.add_variable_from_value("variables", bound);
        }
        let resulted_in = |detail: &str| {
            format!(
                "expression '{}' resulted in error: {detail}",
                expression.source
            )
        };
        if !self.exact && expression.estimate_for(self.input_extent) <= PER_CALL_LIMIT {
            return program
                .execute(&context)
                .map_err(|error| resulted_in(&execution_error(&error)));
        }
        if self.out_of_budget.get() {
            return Err(OUT_OF_BUDGET.to_string());
        }
        let evaluation = runtime_cost::evaluate(program.expression(), &context, PER_CALL_LIMIT);
        if self.exact {
            let cost = i64::try_from(evaluation.cost).unwrap_or(i64::MAX);
            if cost > self.remaining.get() {
                self.out_of_budget.set(true);
                return Err(OUT_OF_BUDGET.to_string());
            }
            self.remaining.set(self.remaining.get() - cost);
        }
        evaluation.result.map_err(|halt| match halt {
            Halt::Cancelled => resulted_in(COST_LIMIT_EXCEEDED),
            Halt::Error(error) => resulted_in(&execution_error(&error)),
        })
    }

    /// The answer of a policy whose budget ran out (`Validate`'s decision
    /// for `ForInput`'s error): a denial under `failurePolicy: Fail`.
    fn out_of_budget<T>(&self, denial: impl FnOnce(String) -> T) -> Option<Vec<T>> {
        if !self.out_of_budget.get() {
            return None;
        }
        Some(match self.policy.failure_policy {
            FailurePolicy::Fail => vec![denial(OUT_OF_BUDGET.to_string())],
            FailurePolicy::Ignore => Vec::new(),
        })
    }

    /// A context with every input some expression of the policy reads.
    fn base_context(&self) -> Context<'i, 'i> {
        let mut context = Context::with_env(Arc::clone(env()));
        let uses = self
            .policy
            .expressions()
            .fold(Uses::default(), |all, expression| {
                all.union(expression.uses)
            });
        let inputs = self.inputs;
        if uses.object {
            context.add_variable_as_val("object", to_val(inputs.object()));
        }
        if uses.old_object {
            context.add_variable_as_val("oldObject", to_val(inputs.old_object()));
        }
        if uses.request {
            context.add_variable_as_val("request", to_val(inputs.request()));
        }
        if uses.params {
            context.add_variable_as_val("params", to_val(self.params));
        }
        if uses.namespace_object {
            context.add_variable_as_val("namespaceObject", to_val(inputs.namespace_object()));
        }
        if let Some(checker) = inputs.authorizer.as_ref().filter(|_| uses.authorizer) {
            context.add_variable_from_value(
                "authorizer",
                crate::cel_env::authz::authorizer(checker.clone()),
            );
            context.add_variable_from_value(
                "authorizer.requestResource",
                crate::cel_env::authz::request_resource(
                    checker.clone(),
                    super::authorizer::request_resource(inputs.attributes),
                ),
            );
        }
        context
    }

    /// `matchConditions` (`matchconditions.Matcher.Match`): `Ok(false)` when
    /// one is false; errors follow the failurePolicy (`Err` under `Fail`).
    pub fn match_conditions(&self) -> Result<bool, String> {
        self.reset_budget(RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS);
        let matched = self.match_conditions_within_budget();
        let matched = match self.policy.failure_policy {
            // `Match`'s answer to `ForInput`'s error.
            _ if !self.out_of_budget.get() => matched,
            FailurePolicy::Ignore => Ok(false),
            FailurePolicy::Fail => Err(OUT_OF_BUDGET.to_string()),
        };
        self.reset_budget(RUNTIME_CEL_COST_BUDGET);
        matched
    }

    fn match_conditions_within_budget(&self) -> Result<bool, String> {
        let mut errors = Vec::new();
        for (_, condition) in &self.policy.match_conditions {
            match self.run(condition, self.policy.variables.len()) {
                Ok(cel::Value::Bool(false)) => return Ok(false),
                Ok(_) => {}
                Err(error) => errors.push(error),
            }
        }
        if errors.is_empty() {
            return Ok(true);
        }
        match self.policy.failure_policy {
            FailurePolicy::Ignore => Ok(false),
            FailurePolicy::Fail => Err(aggregate(&errors)),
        }
    }

    /// The validations' denials, in order (`validator.Validate`); an
    /// evaluation error is a denial under `failurePolicy: Fail`.
    pub fn validations(&self) -> Vec<Denial> {
        self.validations_indexed()
            .into_iter()
            .map(|(_, denial)| denial)
            .collect()
    }

    /// The validations' denials, each with the index of its validation
    /// (the `expressionIndex` of an `Audit` annotation).
    pub fn validations_indexed(&self) -> Vec<(usize, Denial)> {
        let mut denials = Vec::new();
        let visible = self.policy.variables.len();
        for (index, validation) in self.policy.validations.iter().enumerate() {
            match self.run(&validation.expression, visible) {
                Ok(cel::Value::Bool(true)) => {}
                Err(error) => {
                    if self.policy.failure_policy == FailurePolicy::Fail {
                        denials.push((
                            index,
                            Denial {
                                message: error,
                                reason: Reason::Invalid,
                            },
                        ));
                    }
                }
                Ok(_) => {
                    let evaluated = validation
                        .message_expression
                        .as_ref()
                        .and_then(|expression| match self.run(expression, visible) {
                            Ok(cel::Value::String(text)) => {
                                let trimmed = text.trim();
                                (trimmed.len() <= MAX_MESSAGE_BYTES && !trimmed.contains('\n'))
                                    .then(|| trimmed.to_string())
                            }
                            _ => None,
                        })
                        .filter(|message| !message.is_empty());
                    let message = evaluated
                        .or_else(|| {
                            Some(validation.message.trim().to_string())
                                .filter(|message| !message.is_empty())
                        })
                        .unwrap_or_else(|| {
                            format!("failed expression: {}", validation.expression.source.trim())
                        });
                    denials.push((
                        index,
                        Denial {
                            message,
                            reason: validation.reason,
                        },
                    ));
                }
            }
        }
        if let Some(denials) = self.out_of_budget(|message| {
            (
                0,
                Denial {
                    message,
                    reason: Reason::Invalid,
                },
            )
        }) {
            return denials;
        }
        denials
    }

    /// The `auditAnnotations`' values (`validator.Validate`'s second half):
    /// a non-empty string is published, null or blank is left out, an error
    /// or another type denies the request (errors only under
    /// `failurePolicy: Fail`).
    pub fn audit_annotations(&self) -> Vec<AuditAnnotation> {
        let visible = self.policy.variables.len();
        let mut results = Vec::new();
        for (key, expression) in &self.policy.audit_annotations {
            match self.run(expression, visible) {
                Ok(cel::Value::String(text)) => {
                    let value = text.trim();
                    if !value.is_empty() {
                        results.push(AuditAnnotation::Publish(key.clone(), value.to_string()));
                    }
                }
                Ok(cel::Value::Null) => {}
                Ok(other) => results.push(AuditAnnotation::Error(format!(
                    "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
                    expression.source,
                    cel_type_name(&other)
                ))),
                Err(error) => {
                    if self.policy.failure_policy == FailurePolicy::Fail {
                        results.push(AuditAnnotation::Error(error));
                    }
                }
            }
        }
        if let Some(results) = self.out_of_budget(AuditAnnotation::Error) {
            return results;
        }
        results
    }
}

/// What one audit annotation evaluated to (`PolicyAuditAnnotation`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditAnnotation {
    /// `AuditAnnotationActionPublish`: the key and its value.
    Publish(String, String),
    /// `AuditAnnotationActionError`: denies the request with this message.
    Error(String),
}

/// cel-go's name of a value's type (`ref.Type.String()`).
fn cel_type_name(value: &cel::Value) -> &'static str {
    match value {
        cel::Value::Int(_) => "int",
        cel::Value::UInt(_) => "uint",
        cel::Value::Float(_) => "double",
        cel::Value::Bool(_) => "bool",
        cel::Value::String(_) => "string",
        cel::Value::Bytes(_) => "bytes",
        cel::Value::List(_) => "list",
        cel::Value::Map(_) => "map",
        cel::Value::Null => "null_type",
        _ => "unknown",
    }
}

use crate::go::errors::aggregate;

/// cel-rust's error in cel-go's words where they have a counterpart.
fn execution_error(error: &ExecutionError) -> String {
    match error {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_string(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_string(),
        ExecutionError::Overflow(..) => "integer overflow".to_string(),
        ExecutionError::NoSuchOverload(_) => "no such overload".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[path = "evaluate_tests.rs"]
mod tests;
