//! ValidatingAdmissionPolicy (`admission/plugin/policy/validating`,
//! `policy/generic`, `policy/matching`): the policies and bindings read
//! from the store and compiled once per stored version ([`Policies`], as
//! `webhook/mod.rs` follows its configurations), and the dispatcher run in
//! the validating stage (`validating/dispatcher.go` `Dispatch`): for each
//! policy that matches, each of its bindings that matches, each param the
//! binding's `paramRef` selects, the matchConditions and validations; the
//! first `Deny` answers the request with kube's message and reason, `Warn`
//! adds kube's warning, `Audit` adds the
//! `validation.policy.admission.k8s.io/validation_failure` audit annotation,
//! and each `auditAnnotations` value becomes the annotation
//! `<policy>/<key>` (`publishValidationFailureAnnotation`,
//! `auditAnnotationCollector`). `status.typeChecking` is written by the status
//! controller (`controllers/policy_status.rs`) from [`typecheck`].

pub mod authorizer;
pub mod compile;
pub mod evaluate;
pub mod matching;
pub mod typecheck;

use std::sync::{Arc, Mutex};

use serde_json::Value;

use self::compile::{Binding, Policy, Reason};
use self::evaluate::{AuditAnnotation, Evaluation, Inputs};
use self::matching::Matched;
use super::attributes::{Attributes, Caller};
use super::webhook::config::FailurePolicy;
use crate::label_selector::Selector;
use crate::object::ObjectStore;
use crate::registry::{LiveRegistry, ResourceDef};
use crate::status::{Cause, Result, Status};

const POLICY_PREFIX: &str = "/registry/validatingadmissionpolicies/";
const BINDING_PREFIX: &str = "/registry/validatingadmissionpolicybindings/";

/// A policy with the bindings that name it, in name order.
#[derive(Debug)]
pub struct Hook {
    /// The policy's store key.
    key: String,
    pub policy: Arc<Policy>,
    pub bindings: Vec<Arc<Binding>>,
}

/// The compiled policies of one set of stored objects.
#[derive(Debug, Default)]
pub struct Compiled {
    /// Each object's key and mod revision: what this was compiled from.
    stamp: super::stamp::Stamp,
    /// Policies by name, each with its bindings.
    pub hooks: Vec<Hook>,
}

/// The policies and bindings, followed from the store: a request compares
/// the stored objects' revisions with the compiled ones' and recompiles
/// only what changed (a policy's CEL programs are compiled again only when
/// its own object changed).
#[derive(Default)]
pub struct Policies {
    compiled: Mutex<Arc<Compiled>>,
}

impl Policies {
    /// The policies the store holds now.
    pub fn current(&self, store: &ObjectStore) -> Arc<Compiled> {
        let snapshot = store.snapshot();
        let stored = || {
            snapshot
                .range(POLICY_PREFIX, None)
                .chain(snapshot.range(BINDING_PREFIX, None))
                .map(|(key, entry)| (key, entry.mod_revision))
        };
        let previous = match self.compiled.lock() {
            Ok(compiled) => compiled.clone(),
            Err(_) => Arc::new(Compiled::default()),
        };
        if super::stamp::unchanged(&previous.stamp, stored()) {
            return previous;
        }
        let stamp = super::stamp::of(stored());
        let bindings: Vec<Arc<Binding>> = snapshot
            .range(BINDING_PREFIX, None)
            .filter_map(|(_, entry)| entry.object.value())
            .map(|object| Arc::new(compile::binding(&object)))
            .collect();
        let mut hooks = Vec::new();
        for (key, entry) in snapshot.range(POLICY_PREFIX, None) {
            let unchanged = previous
                .stamp
                .iter()
                .any(|(k, revision)| k == key && *revision == entry.mod_revision);
            let reused = previous
                .hooks
                .iter()
                .find(|hook| unchanged && hook.key == *key)
                .map(|hook| hook.policy.clone());
            let policy = match reused {
                Some(policy) => policy,
                None => match entry.object.value().as_ref().and_then(compile::policy) {
                    Some(policy) => Arc::new(policy),
                    None => continue,
                },
            };
            let bindings = bindings
                .iter()
                .filter(|binding| binding.policy_name == policy.name)
                .cloned()
                .collect();
            hooks.push(Hook {
                key: key.clone(),
                policy,
                bindings,
            });
        }
        let fresh = Arc::new(Compiled { stamp, hooks });
        if let Ok(mut compiled) = self.compiled.lock() {
            *compiled = fresh.clone();
        }
        fresh
    }
}

/// A matched policy's verdict for the request.
struct Denied {
    policy: String,
    binding: Option<String>,
    message: String,
    reason: Reason,
}

/// `dispatcher.Dispatch`.
pub fn validate(
    store: &ObjectStore,
    registry: Option<&LiveRegistry>,
    compiled: &Compiled,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    caller: &Caller,
    authorizer: Option<&crate::authz::Authorizer>,
) -> Result<()> {
    if super::webhook::matching::is_exempt(attributes) {
        return Ok(());
    }
    let checker =
        authorizer.map(|authorizer| authorizer::RequestChecker::shared(authorizer, attributes));
    let own_inputs = with_checker(Inputs::new(store, attributes, object), &checker);
    let mut denied: Vec<Denied> = Vec::new();
    for hook in &compiled.hooks {
        let policy = &hook.policy;
        let config_error = |denied: &mut Vec<Denied>, binding: Option<&str>, error: String| {
            if policy.failure_policy == FailurePolicy::Fail {
                let message = match binding {
                    Some(_) => format!("failed to configure binding: {error}"),
                    None => format!("failed to configure policy: {error}"),
                };
                denied.push(Denied {
                    policy: policy.name.clone(),
                    binding: binding.map(str::to_string),
                    message,
                    reason: Reason::Invalid,
                });
            }
        };
        let matched = match matching::matches(store, &policy.match_constraints, attributes, object)
        {
            Ok(Some(matched)) => matched,
            Ok(None) => continue,
            Err(status) => {
                config_error(&mut denied, None, status.message);
                continue;
            }
        };
        // Matched at an equivalent resource: evaluated on the objects at
        // its version (`NewVersionedAttributes`).
        let (converted, converted_old);
        let versioned;
        let equivalent_inputs;
        let inputs = match &matched {
            Matched::Own => &own_inputs,
            Matched::Equivalent(equivalent) => {
                converted = object
                    .map(|object| equivalent.to_this(object))
                    .transpose()?;
                converted_old = attributes
                    .old_object
                    .map(|old| equivalent.to_this(old))
                    .transpose()?;
                versioned = equivalent.attributes(attributes, converted_old.as_ref());
                equivalent_inputs = with_checker(
                    Inputs::at_equivalent(store, &versioned, attributes, converted.as_ref()),
                    &checker,
                );
                &equivalent_inputs
            }
        };
        let mut collected = AnnotationCollector::default();
        for binding in &hook.bindings {
            if let Some(criteria) = &binding.match_resources {
                match matching::matches(store, criteria, attributes, object) {
                    Ok(Some(_)) => {}
                    Ok(None) => continue,
                    Err(status) => {
                        config_error(&mut denied, Some(&binding.name), status.message);
                        continue;
                    }
                }
            }
            let params = match collect_params(store, registry, policy, binding, attributes) {
                Ok(params) => params,
                Err(error) => {
                    config_error(&mut denied, Some(&binding.name), error);
                    continue;
                }
            };
            for param in &params {
                let evaluate = || {
                    let evaluation = Evaluation::new(policy, inputs, param.as_ref());
                    match evaluation.match_conditions() {
                        Ok(false) => (Vec::new(), Vec::new()),
                        Ok(true) => (
                            evaluation.validations_indexed(),
                            evaluation.audit_annotations(),
                        ),
                        Err(message) => (
                            vec![(
                                0,
                                evaluate::Denial {
                                    message,
                                    reason: Reason::Invalid,
                                },
                            )],
                            Vec::new(),
                        ),
                    }
                };
                let (denials, annotations) = if policy.depth > crate::cel_env::SHALLOW_DEPTH {
                    on_a_large_stack(evaluate).unwrap_or_else(|| {
                        let denial = evaluate::Denial {
                            message: "the policy could not be evaluated".into(),
                            reason: Reason::Invalid,
                        };
                        (vec![(0, denial)], Vec::new())
                    })
                } else {
                    evaluate()
                };
                for (expression_index, denial) in denials {
                    if binding.audit {
                        caller.annotate_audit(
                            VALIDATION_FAILURE_KEY,
                            &validation_failure_value(binding, expression_index, &denial.message),
                        );
                    }
                    if binding.deny {
                        denied.push(Denied {
                            policy: policy.name.clone(),
                            binding: Some(binding.name.clone()),
                            message: denial.message.clone(),
                            reason: denial.reason,
                        });
                    }
                    if binding.warn {
                        let text = format!(
                            "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
                            policy.name, binding.name, denial.message
                        );
                        if let Some(header) = crate::field_validation::warning_header_value(&text) {
                            caller.warn(header);
                        }
                    }
                }
                for annotation in annotations {
                    match annotation {
                        AuditAnnotation::Publish(key, value) => {
                            collected.add(key, truncated(value, MAX_AUDIT_ANNOTATION_VALUE_BYTES))
                        }
                        AuditAnnotation::Error(message) => denied.push(Denied {
                            policy: policy.name.clone(),
                            binding: Some(binding.name.clone()),
                            message,
                            reason: Reason::Invalid,
                        }),
                    }
                }
            }
        }
        collected.publish(&policy.name, caller);
    }
    match denied.into_iter().next() {
        Some(first) => Err(denial_status(attributes, object, &first)),
        None => Ok(()),
    }
}

/// `inputs` answering the `authorizer` variable with `checker`, if any.
fn with_checker<'a>(
    inputs: Inputs<'a>,
    checker: &Option<Arc<dyn crate::cel_env::authz::Checker>>,
) -> Inputs<'a> {
    match checker {
        Some(checker) => inputs.with_authorizer(checker.clone()),
        None => inputs,
    }
}

/// The audit annotation of an `Audit` binding's failed validation.
const VALIDATION_FAILURE_KEY: &str = "validation.policy.admission.k8s.io/validation_failure";
/// `maxAuditAnnotationValueLength`.
const MAX_AUDIT_ANNOTATION_VALUE_BYTES: usize = 10 * 1024;

/// `publishValidationFailureAnnotation`'s value: a one-item JSON list of
/// `ValidationFailureValue`, as Go's `json.Marshal` writes it.
fn validation_failure_value(binding: &Binding, expression_index: usize, message: &str) -> String {
    // Written field by field: the order is the Go struct's.
    let text = |value: &str| Value::String(value.to_string()).to_string();
    let actions: Vec<String> = binding.actions.iter().map(|action| text(action)).collect();
    let json = format!(
        r#"[{{"message":{},"policy":{},"binding":{},"expressionIndex":{expression_index},"validationActions":[{}]}}]"#,
        text(message),
        text(&binding.policy_name),
        text(&binding.name),
        actions.join(",")
    );
    crate::versions::html_escape(&json)
}

/// The first `max` bytes of `value` (`value[:max]`, kept on a character
/// boundary).
fn truncated(mut value: String, max: usize) -> String {
    if value.len() > max {
        let mut end = max;
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        value.truncate(end);
    }
    value
}

/// `auditAnnotationCollector`: one policy's annotation values over its
/// bindings and params, each distinct value once.
#[derive(Default)]
struct AnnotationCollector {
    annotations: Vec<(String, Vec<String>)>,
}

impl AnnotationCollector {
    fn add(&mut self, key: String, value: String) {
        match self.annotations.iter_mut().find(|(k, _)| *k == key) {
            Some((_, values)) => {
                if !values.contains(&value) {
                    values.push(value);
                }
            }
            None => self.annotations.push((key, vec![value])),
        }
    }

    /// `publish`: `<policy>/<key>`, several values joined with ", ".
    fn publish(self, policy: &str, caller: &Caller) {
        for (key, values) in self.annotations {
            caller.annotate_audit(&format!("{policy}/{key}"), &values.join(", "));
        }
    }
}

/// Runs `work` on a thread with the CEL parser's stack (evaluation recurses
/// as deep as the expression nests); `None` if it panicked.
fn on_a_large_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("cel-evaluate".into())
            .stack_size(crate::crd::cel_rules::CEL_STACK_BYTES)
            .spawn_scoped(scope, work)
            .ok()
            .and_then(|handle| handle.join().ok())
    })
}

/// The first denial as kube answers it: `admission.NewForbidden` with the
/// validation's reason and its code, the message repeated as a cause.
fn denial_status(attributes: &Attributes<'_>, object: Option<&Value>, denied: &Denied) -> Status {
    let message = match &denied.binding {
        Some(binding) => format!(
            "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
            denied.policy, binding, denied.message
        ),
        None => format!(
            "ValidatingAdmissionPolicy '{}' denied request: {}",
            denied.policy, denied.message
        ),
    };
    let mut status = super::namespace_lifecycle::forbidden(attributes, object, &message);
    status.reason = denied.reason.as_str();
    status.code = denied.reason.code();
    if let Some(details) = status.details.as_mut() {
        details.causes.push(Cause {
            reason: String::new(),
            message,
            field: String::new(),
        });
    }
    status
}

/// `schema.GroupVersionKind.String()`.
fn gvk_string(api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}

/// The served resource of `paramKind`.
fn param_resource(
    registry: &LiveRegistry,
    api_version: &str,
    kind: &str,
) -> Option<&'static ResourceDef> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let registry = registry.load();
    let found = registry.resources().iter().copied().find(|resource| {
        resource.group == group && resource.version == version && resource.kind == kind
    });
    found
}

/// `generic.CollectParams`: the params a binding selects, `[None]` when
/// the policy has no `paramKind` or the binding no `paramRef`.
fn collect_params(
    store: &ObjectStore,
    registry: Option<&LiveRegistry>,
    policy: &Policy,
    binding: &Binding,
    attributes: &Attributes<'_>,
) -> std::result::Result<Vec<Option<Value>>, String> {
    let (Some((api_version, kind)), Some(param_ref)) = (&policy.param_kind, &binding.param_ref)
    else {
        return Ok(vec![None]);
    };
    let Some(resource) = registry.and_then(|registry| param_resource(registry, api_version, kind))
    else {
        return Err(format!(
            "paramKind kind `{}` not known",
            gvk_string(api_version, kind)
        ));
    };
    let namespace = if resource.namespaced {
        if !param_ref.namespace.is_empty() {
            param_ref.namespace.as_str()
        } else if !attributes.namespace.is_empty() && !attributes.is_namespace() {
            attributes.namespace
        } else {
            return Err(
                "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                    .into(),
            );
        }
    } else {
        if !param_ref.namespace.is_empty() {
            return Err(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
            );
        }
        ""
    };
    let prefix = if resource.namespaced {
        format!("/registry/{}/{namespace}/", resource.storage)
    } else {
        format!("/registry/{}/", resource.storage)
    };
    let snapshot = store.snapshot();
    let with_type = |mut object: Value| {
        if let Some(fields) = object.as_object_mut() {
            fields
                .entry("apiVersion")
                .or_insert_with(|| Value::String(api_version.clone()));
            fields
                .entry("kind")
                .or_insert_with(|| Value::String(kind.clone()));
        }
        Some(object)
    };
    let params: Vec<Option<Value>> = if !param_ref.name.is_empty() {
        if param_ref.selector.is_some() {
            return Err("paramRef.name and paramRef.selector are mutually exclusive".into());
        }
        snapshot
            .get(&format!("{prefix}{}", param_ref.name))
            .and_then(|entry| entry.object.value())
            .and_then(with_type)
            .into_iter()
            .map(Some)
            .collect()
    } else if let Some(selector) = &param_ref.selector {
        let selector: &Selector = selector.as_ref().map_err(ToString::to_string)?;
        snapshot
            .range(&prefix, None)
            .filter_map(|(_, entry)| entry.object.value())
            .filter(|object| {
                selector.matches_labels(
                    object
                        .pointer("/metadata/labels")
                        .and_then(Value::as_object),
                )
            })
            .filter_map(with_type)
            .map(Some)
            .collect()
    } else {
        return Err("one of name or selector must be provided".into());
    };
    if params.is_empty() && param_ref.deny_when_missing {
        return Err(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    Ok(params)
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
