//! PodSecurity (`plugin/pkg/admission/security/podsecurity/admission.go`
//! over `k8s.io/pod-security-admission`): the Pod Security Standards
//! enforced per namespace from its `pod-security.kubernetes.io/*` labels.
//!
//! * Pods (create, update that changes containers, the `ephemeralcontainers`
//!   subresource): `enforce` refuses with 403 `violates PodSecurity
//!   "<level>:<version>": …`, `warn` adds a `Warning`, `audit` an audit
//!   annotation.
//! * Pod controllers (Deployments, ReplicaSets, StatefulSets, DaemonSets,
//!   Jobs, CronJobs, ReplicationControllers, PodTemplates): warn and audit
//!   on their pod template, never enforce.
//! * Namespaces: invalid label values are 422 on create (and on update when
//!   they change); a stricter enforce level is tried on the existing pods,
//!   whose violations come back as warnings.
//!
//! The policy of a namespace without labels and the exempt users,
//! namespaces and runtime classes come from the plugin's configuration in
//! `--admission-control-config-file` ([`configuration`]); without one,
//! every mode is `privileged:latest` and nothing is exempt.

pub mod checks;
pub mod configuration;
pub mod evaluation;
pub mod level;
pub mod namespace;

use serde_json::Value;

use super::attributes::{Attributes, Caller, Operation};
use crate::object::ObjectStore;
use crate::status::{GroupResource, Result, Status};
use checks::Pod;
pub use configuration::PodSecurityConfiguration;
use level::{policy_to_evaluate, AUDIT_ANNOTATION_PREFIX};

/// Pod subresources PodSecurity never looks at (`ignoredPodSubresources`);
/// any other (`ephemeralcontainers`, `resize`) carries a Pod and is
/// evaluated.
const IGNORED_POD_SUBRESOURCES: &[&str] = &[
    "exec",
    "attach",
    "binding",
    "eviction",
    "log",
    "portforward",
    "proxy",
    "status",
];

/// `Plugin.Validate`: `object` is the object as it will be stored.
pub fn validate(
    store: &ObjectStore,
    configuration: &PodSecurityConfiguration,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    caller: &Caller,
) -> Result<()> {
    if !matches!(attributes.operation, Operation::Create | Operation::Update) {
        return Ok(());
    }
    let Some(object) = object else {
        return Ok(());
    };
    let group = attributes.resource.group.as_str();
    let resource = attributes.resource.name.as_str();
    if group.is_empty() && resource == "namespaces" {
        let warnings = namespace::validate(store, configuration, attributes, object)?;
        warn(caller, &warnings);
        return Ok(());
    }
    if !evaluation::has_pod_spec(group, resource) {
        return Ok(());
    }
    let is_pod = group.is_empty() && resource == "pods";
    if is_pod && IGNORED_POD_SUBRESOURCES.contains(&attributes.subresource) {
        return Ok(());
    }
    if !is_pod && !attributes.subresource.is_empty() {
        return Ok(());
    }
    // Exempt namespaces and users (`sharedAllowedBy…ExemptionResponse`).
    let username = attributes.user.map_or("", |user| user.name.as_str());
    if configuration.exempt_namespace(attributes.namespace) {
        return exempt(caller, "namespace");
    }
    if configuration.exempt_user(username) {
        return exempt(caller, "user");
    }
    let Some(namespace) = namespace_object(store, attributes.namespace) else {
        // NamespaceLifecycle already refused writes into a missing namespace.
        return Ok(());
    };
    let (policy, errors) = policy_to_evaluate(
        namespace.pointer("/metadata/labels"),
        configuration.defaults,
    );
    let fully_privileged = if is_pod {
        policy.fully_privileged()
    } else {
        policy.warn.level == level::Level::Privileged
            && policy.audit.level == level::Level::Privileged
    };
    if errors.is_empty() && fully_privileged {
        if is_pod {
            // `sharedAllowedPrivilegedResponse`.
            caller.annotate_audit(
                &format!("{AUDIT_ANNOTATION_PREFIX}enforce-policy"),
                "privileged:latest",
            );
        }
        return Ok(());
    }
    let pod = if is_pod {
        if attributes.operation == Operation::Update {
            if let Some(old) = attributes.old_object {
                if !evaluation::is_significant_pod_update(object, old) {
                    return Ok(());
                }
            }
        }
        Pod {
            metadata: object.get("metadata").unwrap_or(&Value::Null),
            spec: object.get("spec").unwrap_or(&Value::Null),
        }
    } else {
        match evaluation::template_of(resource, object) {
            Some(pod) => pod,
            None => return Ok(()),
        }
    };
    if configuration.exempt_runtime_class(pod.spec) {
        return exempt(caller, "runtimeClass");
    }
    let error_text = (!errors.is_empty()).then(|| crate::status::FieldError::aggregate(&errors));
    let decision = evaluation::evaluate_pod(&policy, error_text, &pod, is_pod);
    for (key, value) in &decision.audit_annotations {
        caller.annotate_audit(&format!("{AUDIT_ANNOTATION_PREFIX}{key}"), value);
    }
    warn(caller, &decision.warnings);
    match decision.denied {
        Some(why) => Err(Status::forbidden(
            &GroupResource::new(group, resource),
            attributes.name,
            &why,
        )),
        None => Ok(()),
    }
}

/// An exempt request: allowed with the `exempt` audit annotation
/// (`ExemptionReasonAnnotationKey`) saying why.
fn exempt(caller: &Caller, reason: &str) -> Result<()> {
    caller.annotate_audit(&format!("{AUDIT_ANNOTATION_PREFIX}exempt"), reason);
    Ok(())
}

/// The namespace object a namespaced write goes to. Most namespaces carry
/// no Pod Security label: a byte search of the stored JSON finds those
/// without parsing them, and answers an empty namespace (the default
/// policy).
fn namespace_object(store: &ObjectStore, namespace: &str) -> Option<Value> {
    if namespace.is_empty() {
        return None;
    }
    let snapshot = store.snapshot();
    let entry = snapshot.get(&format!("/registry/namespaces/{namespace}"))?;
    let labelled = entry.object.json().is_none_or(|json| {
        memchr::memmem::find(json, AUDIT_ANNOTATION_PREFIX.as_bytes()).is_some()
    });
    if !labelled {
        return Some(Value::Null);
    }
    entry.object.value()
}

fn warn(caller: &Caller, warnings: &[String]) {
    for warning in warnings {
        if let Some(header) = crate::field_validation::warning_header_value(warning) {
            caller.warn(header);
        }
    }
}

#[cfg(test)]
mod tests;
