//! Evaluating one pod or pod template against a namespace's policy
//! (`pod-security-admission/admission/admission.go` `EvaluatePod`,
//! `DefaultPodSpecExtractor`, `isSignificantPodUpdate`): enforce refuses
//! (pods only), audit records an annotation, warn adds a `Warning`.

use serde_json::Value;

use super::checks::{self, Pod};
use super::level::{LevelVersion, Policy};

/// What the evaluation decided.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// The enforce violation: `violates PodSecurity "restricted:latest": …`.
    pub denied: Option<String>,
    /// `Warning` texts.
    pub warnings: Vec<String>,
    /// Audit annotations, keys without the `pod-security.kubernetes.io/`
    /// prefix (`enforce-policy`, `audit-violations`, `error`).
    pub audit_annotations: Vec<(String, String)>,
}

/// `EvaluatePod`: `enforce` only for pods themselves, never for pod
/// controllers. `policy_errors` are the namespace labels' parse errors.
pub fn evaluate_pod(
    policy: &Policy,
    policy_errors: Option<String>,
    pod: &Pod<'_>,
    enforce: bool,
) -> Decision {
    let mut decision = Decision::default();
    if let Some(errors) = policy_errors {
        decision
            .audit_annotations
            .push(("error".into(), format!("Failed to parse policy: {errors}")));
    }
    let mut cache: Vec<(LevelVersion, Vec<checks::Forbidden>)> = Vec::new();
    let mut results = |level_version: LevelVersion| -> Vec<checks::Forbidden> {
        if let Some((_, cached)) = cache.iter().find(|(key, _)| *key == level_version) {
            return cached.clone();
        }
        let results = checks::evaluate(level_version, pod);
        cache.push((level_version, results.clone()));
        results
    };
    if enforce {
        decision
            .audit_annotations
            .push(("enforce-policy".into(), policy.enforce.to_string()));
        let forbidden = results(policy.enforce);
        if !forbidden.is_empty() {
            decision.denied = Some(format!(
                "violates PodSecurity \"{}\": {}",
                policy.enforce,
                checks::forbidden_detail(&forbidden)
            ));
        }
    }
    let audit = results(policy.audit);
    if !audit.is_empty() {
        decision.audit_annotations.push((
            "audit-violations".into(),
            format!(
                "would violate PodSecurity \"{}\": {}",
                policy.audit,
                checks::forbidden_detail(&audit)
            ),
        ));
    }
    // No warnings on a request refused anyway.
    if decision.denied.is_none() {
        let warn = results(policy.warn);
        if !warn.is_empty() {
            decision.warnings.push(format!(
                "would violate PodSecurity \"{}\": {}",
                policy.warn,
                checks::forbidden_detail(&warn)
            ));
        }
    }
    decision
}

/// The resources whose objects carry a pod spec (`defaultPodSpecResources`),
/// as (group, resource).
const POD_SPEC_RESOURCES: &[(&str, &str)] = &[
    ("", "pods"),
    ("", "replicationcontrollers"),
    ("", "podtemplates"),
    ("apps", "replicasets"),
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
];

/// `HasPodSpec`.
pub fn has_pod_spec(group: &str, resource: &str) -> bool {
    POD_SPEC_RESOURCES.contains(&(group, resource))
}

/// `ExtractPodSpec` for a pod controller: its template's metadata and
/// spec, `None` when it has no template (a ReplicationController may not).
pub fn template_of<'a>(resource: &str, object: &'a Value) -> Option<Pod<'a>> {
    let template = match resource {
        "podtemplates" => object.get("template"),
        "cronjobs" => object.pointer("/spec/jobTemplate/spec/template"),
        _ => object.pointer("/spec/template"),
    };
    let template = template.filter(|template| !template.is_null())?;
    Some(Pod {
        metadata: template.get("metadata").unwrap_or(&Value::Null),
        spec: template.get("spec").unwrap_or(&Value::Null),
    })
}

/// `isSignificantPodUpdate`: only a change of containers (their number or
/// images), an added ephemeral container or a changed per-container
/// seccomp annotation makes kube evaluate a pod update again.
pub fn is_significant_pod_update(pod: &Value, old_pod: &Value) -> bool {
    let list = |object: &'_ Value, key: &str| -> Vec<Value> {
        object
            .pointer(&format!("/spec/{key}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let annotations = |object: &Value| object.pointer("/metadata/annotations").cloned();
    let (new_annotations, old_annotations) = (annotations(pod), annotations(old_pod));
    let significant = |container: &Value, old_container: &Value| -> bool {
        if container.get("image") != old_container.get("image") {
            return true;
        }
        let key = format!(
            "container.seccomp.security.alpha.kubernetes.io/{}",
            checks::name(container)
        );
        let annotation = |annotations: &Option<Value>| {
            annotations
                .as_ref()
                .and_then(|annotations| annotations.get(&key))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        annotation(&new_annotations) != annotation(&old_annotations)
    };
    for key in ["containers", "initContainers"] {
        let (new, old) = (list(pod, key), list(old_pod, key));
        if new.len() != old.len() {
            return true;
        }
        if new.iter().zip(&old).any(|(new, old)| significant(new, old)) {
            return true;
        }
    }
    let old_ephemeral = list(old_pod, "ephemeralContainers");
    list(pod, "ephemeralContainers").iter().any(|container| {
        let name = checks::name(container);
        match old_ephemeral.iter().find(|old| checks::name(old) == name) {
            None => true,
            Some(old) => significant(container, old),
        }
    })
}
