//! ValidatingAdmissionPolicies and their bindings
//! (`admissionregistration.k8s.io/v1`) compiled once per stored version into
//! what the dispatcher reads: match constraints, the CEL programs of
//! matchConditions, variables, validations and messageExpressions, each
//! with the request variables it reads, and the binding's paramRef, match
//! resources and actions (`policy/validating/plugin.go` `compilePolicy`,
//! `policy/generic/policy_source.go`). Defaults as
//! `pkg/apis/admissionregistration/v1/defaults.go` sets them.

use crate::admission::webhook::config::strings;
use cel::Program;
use serde_json::Value;

use crate::admission::webhook::config::{FailurePolicy, MatchPolicy, Rule, Scope};
use crate::crd::cel_rules::{env, CEL_STACK_BYTES};
use crate::label_selector::{LabelSelectorError, Selector};

/// The request variables a program reads: only these are converted to CEL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Uses {
    pub object: bool,
    pub old_object: bool,
    pub request: bool,
    pub params: bool,
    pub namespace_object: bool,
    pub variables: bool,
    pub authorizer: bool,
}

impl Uses {
    /// What either reads.
    pub fn union(self, other: Uses) -> Uses {
        Uses {
            object: self.object || other.object,
            old_object: self.old_object || other.old_object,
            request: self.request || other.request,
            params: self.params || other.params,
            namespace_object: self.namespace_object || other.namespace_object,
            variables: self.variables || other.variables,
            authorizer: self.authorizer || other.authorizer,
        }
    }
}

/// One CEL expression, compiled.
#[derive(Debug)]
pub struct Expression {
    pub source: String,
    /// The program, or cel-rust's parse error.
    pub program: Result<Program, String>,
    pub uses: Uses,
    /// How deep its syntax tree nests: evaluation recurses as deep.
    pub depth: usize,
    /// The static estimate's most one evaluation costs
    /// (`cel_env::cost_estimate`, sizes unknown; `u64::MAX` for a deep
    /// expression, not estimated): over `PerCallLimit` it is evaluated
    /// counting its actual cost (`evaluate.rs`).
    pub estimated_cost: u64,
    /// The estimate when no string, list or map of the inputs is longer
    /// than each of [`INPUT_BOUNDS`]: a request's objects are small, so
    /// an expression whose estimate without sizes is unbounded (`'k' in
    /// object.metadata.labels`) is still known to stay under the limits
    /// without counting.
    pub bounded_estimates: [u64; INPUT_BOUNDS.len()],
}

/// The input sizes [`Expression::bounded_estimates`] are estimated for.
pub const INPUT_BOUNDS: [u64; 7] = [
    1 << 10,
    1 << 12,
    1 << 14,
    1 << 16,
    1 << 18,
    1 << 20,
    1 << 22,
];

/// A policy's variables whose values come from the request (not computed
/// by its expressions): no string, list or map in them is longer than the
/// largest the request's JSON holds.
pub const INPUTS: [&str; 5] = [
    "object",
    "oldObject",
    "request",
    "params",
    "namespaceObject",
];

impl Expression {
    pub fn compile(source: &str) -> Expression {
        let program = env().compile(source).map_err(|errors| errors.to_string());
        let uses = match &program {
            Ok(program) => {
                let references = program.references();
                Uses {
                    object: references.has_variable("object"),
                    old_object: references.has_variable("oldObject"),
                    request: references.has_variable("request"),
                    params: references.has_variable("params"),
                    namespace_object: references.has_variable("namespaceObject"),
                    variables: references.has_variable("variables"),
                    authorizer: references.has_variable("authorizer"),
                }
            }
            Err(_) => Uses::default(),
        };
        let depth = program
            .as_ref()
            .map_or(0, |program| crate::cel_env::depth(program.expression()));
        let estimated_cost = match &program {
            Ok(program) if depth <= crate::cel_env::SHALLOW_DEPTH => {
                crate::cel_env::cost_estimate::estimate(
                    program.expression(),
                    &serde_json::Value::Null,
                )
                .max
            }
            Ok(_) => u64::MAX,
            Err(_) => 0,
        };
        let bounded_estimates = INPUT_BOUNDS.map(|bound| match &program {
            Ok(program) if depth <= crate::cel_env::SHALLOW_DEPTH => {
                crate::cel_env::cost_estimate::estimate_with_bounded_inputs(
                    program.expression(),
                    &INPUTS,
                    bound,
                )
                .max
                .min(estimated_cost)
            }
            _ => estimated_cost,
        });
        Expression {
            source: source.to_string(),
            program,
            uses,
            depth,
            estimated_cost,
            bounded_estimates,
        }
    }

    /// The estimate of one evaluation on inputs holding no string, list or
    /// map longer than `input_extent`.
    pub fn estimate_for(&self, input_extent: u64) -> u64 {
        INPUT_BOUNDS
            .iter()
            .position(|bound| input_extent <= *bound)
            .map_or(self.estimated_cost, |at| self.bounded_estimates[at])
    }
}

/// A `validations` entry.
#[derive(Debug)]
pub struct Validation {
    pub expression: Expression,
    pub message: String,
    pub message_expression: Option<Expression>,
    /// `reason`, one of kube's four (default `Invalid`).
    pub reason: Reason,
}

/// `validations[].reason` and the HTTP code kube answers with
/// (`reasonToCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Invalid,
    Forbidden,
    Unauthorized,
    RequestEntityTooLarge,
}

impl Reason {
    fn parse(value: Option<&str>) -> Reason {
        match value {
            Some("Forbidden") => Reason::Forbidden,
            Some("Unauthorized") => Reason::Unauthorized,
            Some("RequestEntityTooLarge") => Reason::RequestEntityTooLarge,
            _ => Reason::Invalid,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Invalid => "Invalid",
            Reason::Forbidden => "Forbidden",
            Reason::Unauthorized => "Unauthorized",
            Reason::RequestEntityTooLarge => "RequestEntityTooLarge",
        }
    }

    pub fn code(self) -> u16 {
        match self {
            Reason::Invalid => 422,
            Reason::Forbidden => 403,
            Reason::Unauthorized => 401,
            Reason::RequestEntityTooLarge => 413,
        }
    }
}

/// A `resourceRules` / `excludeResourceRules` entry
/// (`NamedRuleWithOperations`).
#[derive(Debug, Clone)]
pub struct NamedRule {
    pub rule: Rule,
    pub resource_names: Vec<String>,
}

/// `matchConstraints` of a policy or `matchResources` of a binding.
#[derive(Debug)]
pub struct MatchResources {
    pub namespace_selector: Result<Selector, LabelSelectorError>,
    pub object_selector: Result<Selector, LabelSelectorError>,
    pub resource_rules: Vec<NamedRule>,
    pub exclude_resource_rules: Vec<NamedRule>,
    pub match_policy: MatchPolicy,
}

/// A compiled ValidatingAdmissionPolicy.
#[derive(Debug)]
pub struct Policy {
    pub name: String,
    pub failure_policy: FailurePolicy,
    /// `paramKind`: apiVersion and kind.
    pub param_kind: Option<(String, String)>,
    pub match_constraints: MatchResources,
    /// `matchConditions`: name and expression.
    pub match_conditions: Vec<(String, Expression)>,
    pub variables: Vec<(String, Expression)>,
    pub validations: Vec<Validation>,
    /// `auditAnnotations`: key and `valueExpression`.
    pub audit_annotations: Vec<(String, Expression)>,
    /// The deepest expression's depth: a deep one is evaluated on a thread
    /// with the parser's stack, not the request's.
    pub depth: usize,
}

impl Policy {
    /// Every expression of the policy.
    pub fn expressions(&self) -> impl Iterator<Item = &Expression> {
        self.match_conditions
            .iter()
            .chain(&self.variables)
            .chain(&self.audit_annotations)
            .map(|(_, expression)| expression)
            .chain(self.validations.iter().flat_map(|validation| {
                std::iter::once(&validation.expression).chain(&validation.message_expression)
            }))
    }
}

/// `paramRef` of a binding.
#[derive(Debug)]
pub struct ParamRef {
    pub name: String,
    pub namespace: String,
    /// `selector`, when set.
    pub selector: Option<Result<Selector, LabelSelectorError>>,
    /// `parameterNotFoundAction: Deny`.
    pub deny_when_missing: bool,
}

/// A compiled ValidatingAdmissionPolicyBinding.
#[derive(Debug)]
pub struct Binding {
    pub name: String,
    pub policy_name: String,
    pub param_ref: Option<ParamRef>,
    pub match_resources: Option<MatchResources>,
    pub deny: bool,
    pub warn: bool,
    /// `Audit`: a failed validation becomes the request's
    /// `validation.policy.admission.k8s.io/validation_failure` audit annotation.
    pub audit: bool,
    /// `validationActions` as written, for that annotation's value.
    pub actions: Vec<String>,
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn selector(value: Option<&Value>) -> Result<Selector, LabelSelectorError> {
    match value {
        Some(selector) if selector.is_object() => Selector::parse(selector),
        _ => Selector::parse(&Value::Null),
    }
}

fn named_rules(value: Option<&Value>) -> Vec<NamedRule> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|rule| NamedRule {
            rule: Rule {
                operations: strings(rule.get("operations")),
                api_groups: strings(rule.get("apiGroups")),
                api_versions: strings(rule.get("apiVersions")),
                resources: strings(rule.get("resources")),
                scope: match rule.get("scope").and_then(Value::as_str) {
                    None | Some("*") => Scope::All,
                    Some("Cluster") => Scope::Cluster,
                    Some("Namespaced") => Scope::Namespaced,
                    Some(_) => Scope::Other,
                },
            },
            resource_names: strings(rule.get("resourceNames")),
        })
        .collect()
}

fn match_resources(value: &Value) -> MatchResources {
    MatchResources {
        namespace_selector: selector(value.get("namespaceSelector")),
        object_selector: selector(value.get("objectSelector")),
        resource_rules: named_rules(value.get("resourceRules")),
        exclude_resource_rules: named_rules(value.get("excludeResourceRules")),
        match_policy: match value.get("matchPolicy").and_then(Value::as_str) {
            Some("Exact") => MatchPolicy::Exact,
            _ => MatchPolicy::Equivalent,
        },
    }
}

fn named_expressions(value: Option<&Value>) -> Vec<(String, Expression)> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|item| {
            (
                text(item, "/name").to_string(),
                Expression::compile(text(item, "/expression")),
            )
        })
        .collect()
}

/// Compiles a policy object. The CEL parser recurses as deep as an
/// expression nests: it runs on a thread with the CRD rules' stack.
pub fn policy(object: &Value) -> Option<Policy> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("cel-compile".into())
            .stack_size(CEL_STACK_BYTES)
            .spawn_scoped(scope, || policy_on_this_thread(object))
            .ok()
            .and_then(|handle| handle.join().ok())
    })
}

fn policy_on_this_thread(object: &Value) -> Policy {
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let param_kind = spec
        .get("paramKind")
        .filter(|kind| kind.is_object())
        .map(|kind| {
            (
                text(kind, "/apiVersion").to_string(),
                text(kind, "/kind").to_string(),
            )
        });
    let validations: Vec<Validation> = spec
        .get("validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|validation| Validation {
            expression: Expression::compile(text(validation, "/expression")),
            message: text(validation, "/message").to_string(),
            message_expression: Some(text(validation, "/messageExpression"))
                .filter(|source| !source.is_empty())
                .map(Expression::compile),
            reason: Reason::parse(validation.get("reason").and_then(Value::as_str)),
        })
        .collect();
    let match_conditions = named_expressions(spec.get("matchConditions"));
    let variables = named_expressions(spec.get("variables"));
    let audit_annotations: Vec<(String, Expression)> = spec
        .get("auditAnnotations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|item| {
            (
                text(item, "/key").to_string(),
                Expression::compile(text(item, "/valueExpression").trim()),
            )
        })
        .collect();
    let depth = validations
        .iter()
        .flat_map(|validation| {
            std::iter::once(&validation.expression).chain(&validation.message_expression)
        })
        .chain(match_conditions.iter().map(|(_, expression)| expression))
        .chain(variables.iter().map(|(_, expression)| expression))
        .chain(audit_annotations.iter().map(|(_, expression)| expression))
        .map(|expression| expression.depth)
        .max()
        .unwrap_or(0);
    Policy {
        name: text(object, "/metadata/name").to_string(),
        failure_policy: match spec.get("failurePolicy").and_then(Value::as_str) {
            Some("Ignore") => FailurePolicy::Ignore,
            _ => FailurePolicy::Fail,
        },
        param_kind,
        match_constraints: match_resources(spec.get("matchConstraints").unwrap_or(&Value::Null)),
        match_conditions,
        variables,
        validations,
        audit_annotations,
        depth,
    }
}

/// Compiles a binding object.
pub fn binding(object: &Value) -> Binding {
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let actions = strings(spec.get("validationActions"));
    let has = |action: &str| actions.iter().any(|a| a == action);
    Binding {
        name: text(object, "/metadata/name").to_string(),
        policy_name: text(&spec, "/policyName").to_string(),
        param_ref: spec
            .get("paramRef")
            .filter(|r| r.is_object())
            .map(|r| ParamRef {
                name: text(r, "/name").to_string(),
                namespace: text(r, "/namespace").to_string(),
                selector: r
                    .get("selector")
                    .filter(|s| s.is_object())
                    .map(Selector::parse),
                deny_when_missing: text(r, "/parameterNotFoundAction") == "Deny",
            }),
        match_resources: spec
            .get("matchResources")
            .filter(|m| m.is_object())
            .map(match_resources),
        deny: has("Deny"),
        warn: has("Warn"),
        audit: has("Audit"),
        actions: actions.clone(),
    }
}
