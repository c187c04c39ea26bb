//! PodSecurity on Namespaces (`admission.go` `ValidateNamespace`,
//! `EvaluatePodsInNamespace`, `prioritizePods`): labels are validated on
//! create and when changed on update, and a stricter enforce level is tried
//! on the namespace's existing pods, whose violations come back as warnings.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::checks::{self, Pod};
use super::configuration::PodSecurityConfiguration;
use super::level::{
    policy_to_evaluate, Level, LevelVersion, Policy, AUDIT_LEVEL_LABEL, AUDIT_VERSION_LABEL,
    ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL, WARN_LEVEL_LABEL, WARN_VERSION_LABEL,
};
use crate::admission::attributes::{Attributes, Operation};
use crate::object::ObjectStore;
use crate::status::{Result, Status};

/// `defaultNamespaceMaxPodsToCheck`.
const MAX_PODS_TO_CHECK: usize = 3000;

/// `ValidateNamespace`: `Ok(warnings)` or kube's 422 for bad labels.
pub fn validate(
    store: &ObjectStore,
    configuration: &PodSecurityConfiguration,
    attributes: &Attributes<'_>,
    object: &Value,
) -> Result<Vec<String>> {
    if !attributes.subresource.is_empty() {
        return Ok(Vec::new());
    }
    let labels = |object: &Value| object.pointer("/metadata/labels").cloned();
    let new_labels = labels(object);
    let (new_policy, new_errors) = policy_to_evaluate(new_labels.as_ref(), configuration.defaults);
    // A namespace's admission attributes carry its own name as namespace.
    let name = crate::object::name(object);
    let exempt_warning = || {
        exempt_namespace_warning(configuration, name, &new_policy, new_labels.as_ref())
            .into_iter()
            .collect()
    };
    let invalid = || {
        Status::invalid(
            &attributes.kind.group,
            &attributes.kind.name,
            attributes.name,
            &new_errors,
        )
    };
    match attributes.operation {
        Operation::Create if !new_errors.is_empty() => Err(invalid()),
        Operation::Create if configuration.exempt_namespace(name) => Ok(exempt_warning()),
        Operation::Update => {
            let old_labels = attributes.old_object.and_then(labels);
            let (old_policy, old_errors) =
                policy_to_evaluate(old_labels.as_ref(), configuration.defaults);
            if !new_errors.is_empty() && (old_errors.is_empty() || new_errors != old_errors) {
                return Err(invalid());
            }
            let (new, old) = (new_policy.enforce, old_policy.enforce);
            if new == old
                || new.level == Level::Privileged
                || (new.version == old.version && new.level <= old.level)
            {
                return Ok(Vec::new());
            }
            if configuration.exempt_namespace(name) {
                return Ok(exempt_warning());
            }
            Ok(evaluate_pods_in_namespace(
                store,
                configuration,
                attributes.name,
                new,
            ))
        }
        _ => Ok(Vec::new()),
    }
}

/// `exemptNamespaceWarning`: an exempt namespace whose labels set a policy
/// that is neither fully privileged nor the default's is told it is ignored,
/// naming the non-privileged modes its labels set.
fn exempt_namespace_warning(
    configuration: &PodSecurityConfiguration,
    namespace: &str,
    policy: &Policy,
    labels: Option<&Value>,
) -> Option<String> {
    if policy.fully_privileged() || policy.equivalent(&configuration.defaults) {
        return None;
    }
    let has = |key: &str| labels.and_then(|labels| labels.get(key)).is_some();
    let modes = [
        (
            "enforce",
            policy.enforce,
            ENFORCE_LEVEL_LABEL,
            ENFORCE_VERSION_LABEL,
        ),
        (
            "audit",
            policy.audit,
            AUDIT_LEVEL_LABEL,
            AUDIT_VERSION_LABEL,
        ),
        ("warn", policy.warn, WARN_LEVEL_LABEL, WARN_VERSION_LABEL),
    ];
    let set: Vec<String> = modes
        .iter()
        .filter(|(_, mode, level, version)| {
            mode.level != Level::Privileged && (has(level) || has(version))
        })
        .map(|(name, mode, _, _)| format!("{name}={mode}"))
        .collect();
    Some(format!(
        "namespace {} is exempt from Pod Security, and the policy ({}) will be ignored",
        crate::go::strconv::quote(namespace),
        set.join(", ")
    ))
}

/// `EvaluatePodsInNamespace`: the namespace's pods tried against `enforce`,
/// one warning per distinct violation (prefixed by the first pod's name and
/// how many others share it), after a header line.
pub fn evaluate_pods_in_namespace(
    store: &ObjectStore,
    configuration: &PodSecurityConfiguration,
    namespace: &str,
    enforce: LevelVersion,
) -> Vec<String> {
    let snapshot = store.snapshot();
    let prefix = format!("/registry/pods/{namespace}/");
    let pods: Vec<Value> = snapshot
        .range(&prefix, None)
        .filter_map(|(_, entry)| entry.object.value())
        .collect();
    let mut pods = prioritize(configuration, pods);
    let total = pods.len();
    pods.truncate(MAX_PODS_TO_CHECK);
    // Violation text → (lexically first pod name, pod count).
    let mut counts: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for pod in &pods {
        let view = Pod {
            metadata: pod.get("metadata").unwrap_or(&Value::Null),
            spec: pod.get("spec").unwrap_or(&Value::Null),
        };
        let forbidden = checks::evaluate(enforce, &view);
        if forbidden.is_empty() {
            continue;
        }
        let name = crate::object::name(pod).to_string();
        let entry = counts
            .entry(checks::forbidden_reason(&forbidden))
            .or_insert_with(|| (name.clone(), 0));
        if name < entry.0 {
            entry.0 = name;
        }
        entry.1 += 1;
    }
    let mut warnings = Vec::new();
    if pods.len() < total {
        warnings.push(format!(
            "new PodSecurity enforce level only checked against the first {} of {total} existing pods",
            pods.len()
        ));
    }
    if !counts.is_empty() {
        warnings.push(format!(
            "existing pods in namespace {} violate the new PodSecurity enforce level {}",
            crate::go::strconv::quote(namespace),
            crate::go::strconv::quote(&enforce.to_string())
        ));
    }
    let mut pod_warnings: Vec<String> = counts
        .into_iter()
        .map(|(warning, (pod, count))| match count {
            1 => format!("{pod}: {warning}"),
            2 => format!("{pod} (and 1 other pod): {warning}"),
            _ => format!("{pod} (and {} other pods): {warning}", count - 1),
        })
        .collect();
    pod_warnings.sort();
    warnings.extend(pod_warnings);
    warnings
}

/// `prioritizePods`: pods of exempt runtime classes left out; pods without
/// a controller, and the first pod of each controller, before the other
/// replicas of a controller already seen.
fn prioritize(configuration: &PodSecurityConfiguration, pods: Vec<Value>) -> Vec<Value> {
    let mut first = Vec::with_capacity(pods.len());
    let mut duplicates = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for pod in pods {
        if configuration.exempt_runtime_class(pod.get("spec").unwrap_or(&Value::Null)) {
            continue;
        }
        let controller_uid = pod
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .and_then(|references| {
                references.iter().find(|reference| {
                    reference.get("controller").and_then(Value::as_bool) == Some(true)
                })
            })
            .map(|reference| {
                reference
                    .get("uid")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            });
        match controller_uid {
            None => first.push(pod),
            Some(uid) if seen.contains(&uid) => duplicates.push(pod),
            Some(uid) => {
                seen.insert(uid);
                first.push(pod);
            }
        }
    }
    first.extend(duplicates);
    first
}
