//! `pkg/api/pod/warnings.go` (kube 1.34) `GetWarningsForPod` and
//! `GetWarningsForPodTemplate` (`warningsForPodSpecAndMeta`), with
//! `pkg/api/node`'s deprecated node labels and `pkg/api/persistentvolumeclaim`'s
//! `GetWarningsForPersistentVolumeClaimSpec`: the `Warning` headers a pod
//! create and a workload's template get after validation. Go walks some
//! maps and sets here in random order; these walks are in key order.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::app_armor;
use crate::quantity::Quantity;
use crate::validation::field;
use crate::validation::pod_security_context::visit_containers;

/// `nodeapi.GetNodeLabelDeprecatedMessage`.
fn deprecated_node_label(key: &str) -> Option<&'static str> {
    Some(match key {
        "beta.kubernetes.io/arch" => r#"deprecated since v1.14; use "kubernetes.io/arch" instead"#,
        "beta.kubernetes.io/os" => r#"deprecated since v1.14; use "kubernetes.io/os" instead"#,
        "failure-domain.beta.kubernetes.io/region" => {
            r#"deprecated since v1.17; use "topology.kubernetes.io/region" instead"#
        }
        "failure-domain.beta.kubernetes.io/zone" => {
            r#"deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#
        }
        "beta.kubernetes.io/instance-type" => {
            r#"deprecated since v1.17; use "node.kubernetes.io/instance-type" instead"#
        }
        "app.kubernetes.io/created-by" => "deprecated since v1.9",
        "scheduler.alpha.kubernetes.io/preferAvoidPods" => {
            "deprecated since v1.22; use Taints and Tolerations instead"
        }
        "node-role.kubernetes.io/master" => {
            r#"use "node-role.kubernetes.io/control-plane" instead"#
        }
        _ => return None,
    })
}

const DEPRECATED_ANNOTATIONS: [(&str, &str); 3] = [
    (
        "scheduler.alpha.kubernetes.io/critical-pod",
        r#"non-functional in v1.16+; use the "priorityClassName" field instead"#,
    ),
    (
        "security.alpha.kubernetes.io/sysctls",
        r#"non-functional in v1.11+; use the "sysctls" field instead"#,
    ),
    (
        "security.alpha.kubernetes.io/unsafe-sysctls",
        r#"non-functional in v1.11+; use the "sysctls" field instead"#,
    ),
];

/// Removed volume plugins, in kube's order: the JSON field, the name in the
/// path (Go's field name), the message.
const DEPRECATED_VOLUMES: [(&str, &str, &str); 7] = [
    (
        "photonPersistentDisk",
        "photonPersistentDisk",
        "deprecated in v1.11, non-functional in v1.16+",
    ),
    ("gitRepo", "gitRepo", "deprecated in v1.11"),
    (
        "scaleIO",
        "scaleIO",
        "deprecated in v1.16, non-functional in v1.22+",
    ),
    (
        "flocker",
        "flocker",
        "deprecated in v1.22, non-functional in v1.25+",
    ),
    (
        "storageos",
        "storageOS",
        "deprecated in v1.22, non-functional in v1.25+",
    ),
    (
        "quobyte",
        "quobyte",
        "deprecated in v1.22, non-functional in v1.25+",
    ),
    (
        "glusterfs",
        "glusterfs",
        "deprecated in v1.25, non-functional in v1.26+",
    ),
];

const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";
const APP_ARMOR_CONTAINER_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
const SECCOMP_MESSAGE: &str = r#"non-functional in v1.27+; use the "seccompProfile" field instead"#;

fn is_set(value: Option<&Value>) -> bool {
    value.is_some_and(|value| !value.is_null())
}

/// `podStrategy.WarningsOnCreate`: the name as a hostname, then
/// `GetWarningsForPod`.
pub(super) fn pod_create_warnings(pod: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    let name = crate::object::name(pod);
    let messages = crate::names::dns1123_label(name);
    if !messages.is_empty() {
        warnings.push(format!(
            "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [{}]",
            messages.join(" ")
        ));
    }
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let metadata = pod.get("metadata").unwrap_or(&Value::Null);
    warnings.extend(spec_and_meta("", false, spec, metadata));
    warnings
}

/// `GetWarningsForPodTemplate` of the template at `pointer`, its field path
/// `path` (`spec.template`).
pub(super) fn template_warnings(object: &Value, pointer: &str, path: &str) -> Vec<String> {
    let Some(template) = object
        .pointer(pointer)
        .filter(|template| !template.is_null())
    else {
        return Vec::new();
    };
    let spec = template.get("spec").unwrap_or(&Value::Null);
    let metadata = template.get("metadata").unwrap_or(&Value::Null);
    spec_and_meta(&format!("{path}."), true, spec, metadata)
}

/// A quantity that is not a whole number of bytes (`MilliValue() % 1000 != 0`).
fn fractional_bytes(quantity: Option<&Value>) -> Option<&str> {
    let text = quantity?.as_str()?;
    let value = text.parse::<Quantity>().ok()?;
    (value.scaled_value(3) % 1000 != 0).then_some(text)
}

fn fractional_warning(path: &str, value: &str) -> String {
    format!("{path}: fractional byte value {value:?} is invalid, must be an integer")
}

/// `warningsForPodSpecAndMeta`; `prefix` is the template's path and a dot,
/// or empty for a pod.
fn spec_and_meta(prefix: &str, is_template: bool, spec: &Value, metadata: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    let annotations = field::map_at(metadata, "annotations");
    let has_annotation = |key: &str| annotations.is_some_and(|map| map.contains_key(key));
    // Deprecated node labels in selectors, node affinity, spread constraints.
    for key in field::map_at(spec, "nodeSelector")
        .into_iter()
        .flatten()
        .map(|(key, _)| key)
    {
        if let Some(message) = deprecated_node_label(key) {
            warnings.push(format!("{prefix}spec.nodeSelector[{key}]: {message}"));
        }
    }
    if let Some(node_affinity) = spec.pointer("/affinity/nodeAffinity") {
        let required = node_affinity
            .pointer("/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
            .and_then(Value::as_array);
        for (position, term) in required.into_iter().flatten().enumerate() {
            node_selector_term(
                term,
                &format!("{prefix}spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{position}]"),
                &mut warnings,
            );
        }
        let preferred = field::items_at(
            node_affinity,
            "preferredDuringSchedulingIgnoredDuringExecution",
        );
        for (position, term) in preferred.iter().enumerate() {
            node_selector_term(
                term.get("preference").unwrap_or(&Value::Null),
                &format!("{prefix}spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{position}].preference"),
                &mut warnings,
            );
        }
    }
    for (position, constraint) in field::items_at(spec, "topologySpreadConstraints")
        .iter()
        .enumerate()
    {
        let path = format!("{prefix}spec.topologySpreadConstraints[{position}]");
        let key = field::str_at(constraint, "topologyKey");
        if let Some(message) = deprecated_node_label(key) {
            warnings.push(format!("{path}.topologyKey: {key} is {message}"));
        }
        if !is_set(constraint.get("labelSelector")) {
            warnings.push(format!(
                "{path}.labelSelector: a null labelSelector results in matching no pod"
            ));
        }
    }
    for (key, message) in DEPRECATED_ANNOTATIONS {
        if has_annotation(key) {
            warnings.push(format!("{prefix}metadata.annotations[{key}]: {message}"));
        }
    }
    // Deprecated and removed volume plugins.
    for (position, volume) in field::items_at(spec, "volumes").iter().enumerate() {
        let path = format!("{prefix}spec.volumes[{position}]");
        for (json, name, message) in DEPRECATED_VOLUMES {
            if is_set(volume.get(json)) {
                warnings.push(format!("{path}.{name}: {message}"));
            }
        }
        if let Some(template_spec) = volume
            .pointer("/ephemeral/volumeClaimTemplate")
            .filter(|template| !template.is_null())
            .map(|template| template.get("spec").unwrap_or(&Value::Null))
        {
            claim_spec_warnings(
                template_spec,
                &format!("{path}.ephemeral.volumeClaimTemplate.spec"),
                &mut warnings,
            );
        }
        for (json, message) in [
            ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
            ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
        ] {
            if is_set(volume.get(json)) {
                warnings.push(format!("{path}.{json}: {message}"));
            }
        }
    }
    super::volume_path_overlaps::warnings(field::items_at(spec, "volumes"), &mut warnings);
    duplicates(
        field::items_at(spec, "hostAliases"),
        "ip",
        &format!("{prefix}spec.hostAliases"),
        "duplicate ip",
        &mut warnings,
    );
    let pull_secrets = field::items_at(spec, "imagePullSecrets");
    duplicates(
        pull_secrets,
        "name",
        &format!("{prefix}spec.imagePullSecrets"),
        "duplicate name",
        &mut warnings,
    );
    for (position, secret) in pull_secrets.iter().enumerate() {
        if field::str_at(secret, "name").is_empty() {
            warnings.push(format!(
                "{prefix}spec.imagePullSecrets[{position}].name: invalid empty name \"\""
            ));
        }
    }
    let overhead = spec.get("overhead");
    for resource in ["memory", "ephemeral-storage"] {
        if let Some(value) = fractional_bytes(overhead.and_then(|overhead| overhead.get(resource)))
        {
            warnings.push(fractional_warning(
                &format!("{prefix}spec.overhead[{resource}]"),
                value,
            ));
        }
    }
    let pod_context = spec.get("securityContext");
    if !is_set(pod_context.and_then(|context| context.get("seccompProfile")))
        && has_annotation(SECCOMP_POD_ANNOTATION)
    {
        warnings.push(format!(
            "{prefix}metadata.annotations[{SECCOMP_POD_ANNOTATION}]: {SECCOMP_MESSAGE}"
        ));
    }
    let has_pod_app_armor = is_set(pod_context.and_then(|context| context.get("appArmorProfile")));
    let containers = visit_containers(spec, &format!("{prefix}spec"));
    for (container, path) in &containers {
        let name = field::str_at(container, "name");
        let context = container.get("securityContext");
        let seccomp_key = format!("{SECCOMP_CONTAINER_PREFIX}{name}");
        if !is_set(context.and_then(|context| context.get("seccompProfile")))
            && has_annotation(&seccomp_key)
        {
            warnings.push(format!(
                "{prefix}metadata.annotations[{seccomp_key}]: {SECCOMP_MESSAGE}"
            ));
        }
        // Pods get theirs from the AppArmor version skew of PrepareForCreate.
        let has_app_armor =
            has_pod_app_armor || is_set(context.and_then(|context| context.get("appArmorProfile")));
        let app_armor_key = format!("{APP_ARMOR_CONTAINER_PREFIX}{name}");
        if is_template && !has_app_armor && has_annotation(&app_armor_key) {
            warnings.push(app_armor::deprecation_warning(prefix, &app_armor_key));
        }
        let resources = container.get("resources");
        for resource in ["memory", "ephemeral-storage"] {
            for list in ["limits", "requests"] {
                let value = resources
                    .and_then(|resources| resources.get(list))
                    .and_then(|list| list.get(resource));
                if let Some(value) = fractional_bytes(value) {
                    warnings.push(fractional_warning(
                        &format!("{path}.resources.{list}[{resource}]"),
                        value,
                    ));
                }
            }
        }
        env_duplicates(container, path, &mut warnings);
    }
    port_warnings(&containers, &mut warnings);
    if field::int_at(spec, "terminationGracePeriodSeconds").is_some_and(|seconds| seconds < 0) {
        warnings.push(format!(
            "{prefix}spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"
        ));
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(affinity) = spec.get("affinity").and_then(|affinity| affinity.get(kind)) else {
            continue;
        };
        let path = format!("{prefix}spec.affinity.{kind}");
        let required = field::items_at(affinity, "requiredDuringSchedulingIgnoredDuringExecution");
        for (position, term) in required.iter().enumerate() {
            if !is_set(term.get("labelSelector")) {
                warnings.push(format!("{path}.requiredDuringSchedulingIgnoredDuringExecution[{position}].labelSelector: a null labelSelector results in matching no pod"));
            }
        }
        let preferred =
            field::items_at(affinity, "preferredDuringSchedulingIgnoredDuringExecution");
        for (position, term) in preferred.iter().enumerate() {
            if !is_set(term.pointer("/podAffinityTerm/labelSelector")) {
                warnings.push(format!("{path}.preferredDuringSchedulingIgnoredDuringExecution[{position}].podAffinityTerm.labelSelector: a null labelSelector results in matching no pod"));
            }
        }
    }
    warnings
}

/// `nodeapi.GetWarningsForNodeSelectorTerm`.
fn node_selector_term(term: &Value, path: &str, warnings: &mut Vec<String>) {
    for (position, expression) in field::items_at(term, "matchExpressions").iter().enumerate() {
        let key = field::str_at(expression, "key");
        if let Some(message) = deprecated_node_label(key) {
            warnings.push(format!(
                "{path}.matchExpressions[{position}].key: {key} is {message}"
            ));
        }
    }
}

/// `pvcutil.GetWarningsForPersistentVolumeClaimSpec`.
pub(super) fn claim_spec_warnings(spec: &Value, path: &str, warnings: &mut Vec<String>) {
    for list in ["requests", "limits"] {
        let value = spec
            .pointer(&format!("/resources/{list}"))
            .and_then(|list| list.get("storage"));
        if let Some(value) = fractional_bytes(value) {
            warnings.push(fractional_warning(
                &format!("{path}.resources.{list}[storage]"),
                value,
            ));
        }
    }
}

/// The rest of `statefulSetStrategy.WarningsOnCreate`/`WarningsOnUpdate`:
/// each claim template's spec (at `spec.volumeClaimTemplates[i]` then
/// `claim_suffix`, as kube names it: nothing on create, `.Spec` on update)
/// and a negative `revisionHistoryLimit`.
pub(super) fn stateful_set_warnings(object: &Value, claim_suffix: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    let spec = object.get("spec").unwrap_or(&Value::Null);
    for (position, claim) in field::items_at(spec, "volumeClaimTemplates")
        .iter()
        .enumerate()
    {
        claim_spec_warnings(
            claim.get("spec").unwrap_or(&Value::Null),
            &format!("spec.volumeClaimTemplates[{position}]{claim_suffix}"),
            &mut warnings,
        );
    }
    if field::int_at(spec, "revisionHistoryLimit").is_some_and(|limit| limit < 0) {
        warnings.push(
            "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended"
                .into(),
        );
    }
    warnings
}

/// The second and later items whose `key` repeats an earlier one's.
fn duplicates(items: &[Value], key: &str, path: &str, what: &str, warnings: &mut Vec<String>) {
    if items.len() < 2 {
        return;
    }
    let mut seen = BTreeSet::new();
    for (position, item) in items.iter().enumerate() {
        let value = field::str_at(item, key);
        if !seen.insert(value) {
            warnings.push(format!("{path}[{position}].{key}: {what} {value:?}"));
        }
    }
}

/// Duplicate `env` names whose later definition hides the earlier one.
fn env_duplicates(container: &Value, path: &str, warnings: &mut Vec<String>) {
    let env = field::items_at(container, "env");
    if env.len() < 2 {
        return;
    }
    let mut seen = BTreeSet::new();
    for (position, item) in env.iter().enumerate() {
        let name = field::str_at(item, "name");
        if seen.insert(name) {
            continue;
        }
        let reference = format!("$({name})");
        let value = field::str_at(item, "value");
        let hides =
            is_set(item.get("valueFrom")) || value == reference || !value.contains(&reference);
        if hides {
            warnings.push(format!(
                "{path}.env[{position}]: hides previous definition of {name:?}, which may be dropped when using apply"
            ));
        }
    }
}

/// The ports of every container: a host IP without a host port, and
/// definitions of the same container port and protocol that collide.
fn port_warnings(containers: &[(&Value, String)], warnings: &mut Vec<String>) {
    struct Port<'a> {
        path: String,
        host_ip: &'a str,
        host_port: i64,
    }
    let mut all: BTreeMap<String, Vec<Port<'_>>> = BTreeMap::new();
    for (container, container_path) in containers {
        for (position, port) in field::items_at(container, "ports").iter().enumerate() {
            let path = format!("{container_path}.ports[{position}]");
            let host_ip = field::str_at(port, "hostIP");
            let host_port = field::int_at(port, "hostPort").unwrap_or(0);
            let container_port = field::int_at(port, "containerPort").unwrap_or(0);
            let protocol = field::str_at(port, "protocol");
            if !host_ip.is_empty() && host_port == 0 {
                // Go's `%+v` of the internal `core.ContainerPort`.
                warnings.push(format!(
                    "{path}: hostIP set without hostPort: {{Name:{} HostPort:{host_port} ContainerPort:{container_port} Protocol:{protocol} HostIP:{host_ip}}}",
                    field::str_at(port, "name")
                ));
            }
            let others = all
                .entry(format!("{container_port}/{protocol}"))
                .or_default();
            for other in others.iter() {
                let message = if host_ip == other.host_ip && host_port == other.host_port {
                    "duplicate port definition with"
                } else if host_port == 0 || other.host_port == 0 {
                    "overlapping port definition with"
                } else if host_port == other.host_port
                    && (host_ip.is_empty() != other.host_ip.is_empty())
                {
                    "dangerously ambiguous port definition with"
                } else {
                    continue;
                };
                warnings.push(format!("{path}: {message} {}", other.path));
            }
            others.push(Port {
                path,
                host_ip,
                host_port,
            });
        }
    }
}

#[cfg(test)]
#[path = "pod_warnings_tests.rs"]
mod tests;
