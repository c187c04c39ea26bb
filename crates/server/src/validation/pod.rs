//! Pod and pod template validation (`pkg/apis/core/validation/validation.go`
//! `ValidatePodCreate`, `ValidatePodSpec`, `validateContainers`,
//! `validateInitContainers`, `validateContainerCommon`, `ValidatePodTemplate`,
//! `ValidatePodTemplateSpec`): the main rules of a pod spec, in kube's order.
//! Volumes and mounts are in [`super::pod_volumes`], container details
//! (ports, env, resources, probes) in [`super::container`], updates in
//! [`super::pod_update`].

use std::collections::BTreeSet;

use serde_json::Value;

use super::container;
use super::container_handler;
use super::field::{self, child, index};
use super::pod_options::PodValidationOptions;
use super::resource_requirements::{self, RequirementsContext};
use super::{
    pod_annotations, pod_os, pod_resource_claims, pod_scheduling, pod_security_context, pod_volumes,
};
use crate::status::FieldError;

/// `ValidatePodCreate` (the ObjectMeta part is checked by the write path).
pub fn pod(object: &Value) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = pod_metadata_and_spec(object, PodValidationOptions::default());
    if !field::items_at(spec, "ephemeralContainers").is_empty() {
        errors.push(field::forbidden(
            "spec.ephemeralContainers",
            "cannot be set on create",
        ));
    }
    if !field::str_at(spec, "nodeName").is_empty()
        && !field::items_at(spec, "schedulingGates").is_empty()
    {
        errors.push(field::forbidden(
            "spec.nodeName",
            "cannot be set until all schedulingGates have been cleared",
        ));
    }
    pod_annotations::match_fields_on_create(object, spec, &mut errors);
    errors
}

/// `validatePodMetadataAndSpec` (shared by create and update; the
/// ObjectMeta part is checked by the write path): the pod's annotations,
/// then its spec.
pub fn pod_metadata_and_spec(object: &Value, options: PodValidationOptions) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    pod_annotations::pod_specific(object, spec, "metadata.annotations", options, &mut errors);
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    errors.extend(pod_spec_named(spec, "spec", true, name, options));
    if field::str_at(spec, "serviceAccountName").is_empty() {
        for (volume_position, volume) in field::items_at(spec, "volumes").iter().enumerate() {
            let Some(projected) = volume.get("projected").filter(|p| !p.is_null()) else {
                continue;
            };
            let sources_path = format!("spec.volumes[{volume_position}].projected.sources");
            for (position, source) in field::items_at(projected, "sources").iter().enumerate() {
                if source
                    .get("serviceAccountToken")
                    .is_some_and(|t| !t.is_null())
                {
                    errors.push(field::forbidden(
                        &child(&index(&sources_path, position), "serviceAccountToken"),
                        "must not be specified when serviceAccountName is not set",
                    ));
                }
            }
        }
    }
    // validateContainersOnlyForPod.
    for list in ["containers", "initContainers"] {
        for (position, item) in field::items_at(spec, list).iter().enumerate() {
            let image = field::str_at(item, "image");
            if image.trim() != image {
                errors.push(field::invalid(
                    &format!("spec.{list}[{position}].image"),
                    image,
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    errors
}

/// `validateSchedulingGates`: names are qualified names, unique.
fn scheduling_gates(gates: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    let mut seen = BTreeSet::new();
    for (position, gate) in gates.iter().enumerate() {
        let name = field::str_at(gate, "name");
        field::label_name(&index(path, position), name, errors);
        if !seen.insert(name) {
            errors.push(field::duplicate(&index(path, position), name));
        }
    }
}

/// `ValidatePodTemplate` (`ValidatePodTemplateUpdate` when `old` is the
/// stored object, whose template gives the options): the template of a
/// PodTemplate object.
pub fn pod_template(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let options = match old {
        None => PodValidationOptions::default(),
        Some(old) => PodValidationOptions::from_old_template(old.get("template")),
    };
    pod_template_spec_with(object.get("template"), "template", options)
}

/// `ValidatePodTemplateSpec`: template metadata's labels and annotations,
/// the pod-specific annotations (mirror pod, tolerations, deletion cost,
/// seccomp, AppArmor), the pod spec, and no ephemeral containers. A missing template is the
/// zero template, whose spec has no containers.
pub fn pod_template_spec(template: Option<&Value>, path: &str) -> Vec<FieldError> {
    pod_template_spec_with(template, path, PodValidationOptions::default())
}

/// `ValidatePodTemplateSpec` with the options an update took from the old template.
pub fn pod_template_spec_with(
    template: Option<&Value>,
    path: &str,
    options: PodValidationOptions,
) -> Vec<FieldError> {
    let template = template.unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    let metadata = template.get("metadata").unwrap_or(&Value::Null);
    let metadata_path = child(path, "metadata");
    field::labels(
        &child(&metadata_path, "labels"),
        field::map_at(metadata, "labels"),
        &mut errors,
    );
    if let Some(annotations) = field::map_at(metadata, "annotations") {
        for name in annotations.keys() {
            for message in crate::selector::is_qualified_name(&name.to_lowercase()) {
                errors.push(field::invalid(
                    &child(&metadata_path, "annotations"),
                    name,
                    message,
                ));
            }
        }
    }
    let spec = template.get("spec").unwrap_or(&Value::Null);
    // `ValidatePodSpecificAnnotations` of the template, at `<path>.annotations`.
    pod_annotations::pod_specific(
        template,
        spec,
        &child(path, "annotations"),
        options,
        &mut errors,
    );
    let spec_path = child(path, "spec");
    errors.extend(pod_spec_named(
        spec,
        &spec_path,
        false,
        field::str_at(metadata, "name"),
        options,
    ));
    if !field::items_at(spec, "ephemeralContainers").is_empty() {
        errors.push(field::forbidden(
            &child(&spec_path, "ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errors
}

const RESTART_POLICIES: [&str; 3] = ["Always", "OnFailure", "Never"];
const DNS_POLICIES: [&str; 4] = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
const MAX_INT32: i64 = 2_147_483_647;

/// `ValidatePodSpec`'s main rules. `resource_is_pod` is kube's
/// `PodValidationOptions.ResourceIsPod`: a Pod's own spec, not a template's.
pub fn pod_spec(
    spec: &Value,
    path: &str,
    resource_is_pod: bool,
    options: PodValidationOptions,
) -> Vec<FieldError> {
    pod_spec_named(spec, path, resource_is_pod, "", options)
}

/// `ValidatePodSpec` with the name of the pod (or template) metadata, which
/// names the claims of its ephemeral volumes.
pub fn pod_spec_named(
    spec: &Value,
    path: &str,
    resource_is_pod: bool,
    pod_name: &str,
    options: PodValidationOptions,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if !field::is_set(spec, "terminationGracePeriodSeconds") {
        errors.push(field::required(
            &child(path, "terminationGracePeriodSeconds"),
            "",
        ));
    }
    let volumes = pod_volumes::volumes(
        field::items_at(spec, "volumes"),
        pod_volumes::PodContext {
            pod_name,
            resource_is_pod,
        },
        &child(path, "volumes"),
        &mut errors,
    );
    pod_resource_claims::pod_resource_claims(spec, path, &mut errors);
    let claim_names = resource_requirements::pod_claim_names(spec);
    let requirements = RequirementsContext {
        claim_names: &claim_names,
        allow_indivisible_huge_pages: options.allow_indivisible_huge_pages_values,
    };
    let restart_policy = field::str_at(spec, "restartPolicy");
    containers(spec, &volumes, requirements, path, &mut errors);
    init_containers(spec, &volumes, requirements, path, &mut errors);
    resource_requirements::pod_resources(spec, requirements, path, &mut errors);
    host_network_ports(spec, path, resource_is_pod, &mut errors);
    choice(
        restart_policy,
        &RESTART_POLICIES,
        &child(path, "restartPolicy"),
        &mut errors,
    );
    choice(
        field::str_at(spec, "dnsPolicy"),
        &DNS_POLICIES,
        &child(path, "dnsPolicy"),
        &mut errors,
    );
    field::labels(
        &child(path, "nodeSelector"),
        field::map_at(spec, "nodeSelector"),
        &mut errors,
    );
    pod_security_context::pod_spec_security_context(spec, path, &mut errors);
    pod_scheduling::affinity(spec, path, options, &mut errors);
    dns_config(spec, path, &mut errors);
    pod_scheduling::readiness_gates(spec, path, &mut errors);
    scheduling_gates(
        field::items_at(spec, "schedulingGates"),
        &child(path, "schedulingGates"),
        &mut errors,
    );
    pod_scheduling::topology_spread_constraints(spec, path, options, &mut errors);
    pod_security_context::windows_host_process(spec, path, &mut errors);
    pod_security_context::host_users_rules(spec, path, &mut errors);
    for (name, check) in [
        (
            "serviceAccountName",
            crate::names::dns1123_subdomain as fn(&str) -> Vec<String>,
        ),
        ("nodeName", crate::names::dns1123_subdomain),
    ] {
        let value = field::str_at(spec, name);
        if !value.is_empty() {
            for message in check(value) {
                errors.push(field::invalid(&child(path, name), value, message));
            }
        }
    }
    if let Some(deadline) = field::int_at(spec, "activeDeadlineSeconds") {
        if !(1..=MAX_INT32).contains(&deadline) {
            errors.push(field::invalid_number(
                &child(path, "activeDeadlineSeconds"),
                deadline,
                field::inclusive_range_error(1, MAX_INT32),
            ));
        }
    }
    for name in ["hostname", "subdomain"] {
        let value = field::str_at(spec, name);
        if !value.is_empty() {
            field::dns1123_label(&child(path, name), value, &mut errors);
        }
    }
    tolerations(
        field::items_at(spec, "tolerations"),
        &child(path, "tolerations"),
        &mut errors,
    );
    pod_scheduling::host_aliases(spec, path, &mut errors);
    let priority_class = field::str_at(spec, "priorityClassName");
    if !priority_class.is_empty() {
        field::dns1123_subdomain(
            &child(path, "priorityClassName"),
            priority_class,
            &mut errors,
        );
    }
    if let Some(policy) = spec.get("preemptionPolicy").and_then(Value::as_str) {
        choice(
            policy,
            &["Never", "PreemptLowerPriority"],
            &child(path, "preemptionPolicy"),
            &mut errors,
        );
    }
    // `validateOverhead`: the container resource rules, as limits (no claim names).
    if let Some(overhead) = spec.get("overhead").filter(|overhead| !overhead.is_null()) {
        resource_requirements::container_requirements(
            &serde_json::json!({ "limits": overhead }),
            RequirementsContext {
                claim_names: &BTreeSet::new(),
                ..requirements
            },
            &child(path, "overhead"),
            &mut errors,
        );
    }
    pod_os::os(spec, path, &mut errors);
    errors
}

/// `validatePodHostNetworkDeps`: with `hostNetwork`, a container's
/// `hostPort` equals its `containerPort` (in a template, 0 is also allowed:
/// it is defaulted when the pod is created).
fn host_network_ports(
    spec: &Value,
    path: &str,
    resource_is_pod: bool,
    errors: &mut Vec<FieldError>,
) {
    if spec.get("hostNetwork").and_then(Value::as_bool) != Some(true) {
        return;
    }
    let list_path = child(path, "containers");
    for (position, item) in field::items_at(spec, "containers").iter().enumerate() {
        let ports_path = child(&index(&list_path, position), "ports");
        for (port_position, port) in field::items_at(item, "ports").iter().enumerate() {
            let host_port = field::int_at(port, "hostPort").unwrap_or(0);
            let container_port = field::int_at(port, "containerPort").unwrap_or(0);
            if (resource_is_pod || host_port != 0) && host_port != container_port {
                errors.push(field::invalid_number(
                    &child(&index(&ports_path, port_position), "hostPort"),
                    host_port,
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
}

/// A required enum field: `Required` when empty, `NotSupported` when unknown.
pub fn choice(value: &str, supported: &[&str], path: &str, errors: &mut Vec<FieldError>) {
    if value.is_empty() {
        errors.push(field::required(path, ""));
    } else if !supported.contains(&value) {
        errors.push(field::not_supported(path, value, supported));
    }
}

/// `validateContainers`: at least one, common rules, unique names, probes,
/// no `restartPolicy`, host ports unique across containers.
fn containers(
    spec: &Value,
    volumes: &BTreeSet<String>,
    requirements: RequirementsContext<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let list_path = child(path, "containers");
    let list = field::items_at(spec, "containers");
    if list.is_empty() {
        errors.push(field::required(&list_path, ""));
        return;
    }
    let pod = container::PodContext::of(spec, requirements);
    let mut names = BTreeSet::new();
    for (position, item) in list.iter().enumerate() {
        let item_path = index(&list_path, position);
        container::common(item, volumes, &pod, &item_path, errors);
        let name = field::str_at(item, "name");
        if !names.insert(name) {
            errors.push(field::duplicate(&child(&item_path, "name"), name));
        }
        container_handler::lifecycle(item, pod.grace_period, &item_path, errors);
        container::probes(item, &item_path, errors);
        if field::is_set(item, "restartPolicy") {
            errors.push(field::forbidden(
                &child(&item_path, "restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    container::unique_host_ports(list, &list_path, errors);
}

/// `validateInitContainers`.
fn init_containers(
    spec: &Value,
    volumes: &BTreeSet<String>,
    requirements: RequirementsContext<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let list_path = child(path, "initContainers");
    let mut names: BTreeSet<&str> = field::items_at(spec, "containers")
        .iter()
        .map(|item| field::str_at(item, "name"))
        .collect();
    let pod = container::PodContext::of(spec, requirements);
    for (position, item) in field::items_at(spec, "initContainers").iter().enumerate() {
        let item_path = index(&list_path, position);
        container::common(item, volumes, &pod, &item_path, errors);
        let mut restart_always = false;
        if let Some(policy) = item.get("restartPolicy").and_then(Value::as_str) {
            if policy != "Always" {
                errors.push(field::not_supported(
                    &child(&item_path, "restartPolicy"),
                    policy,
                    &["Always"],
                ));
            }
            restart_always = policy == "Always";
        }
        let name = field::str_at(item, "name");
        if names.contains(name) {
            errors.push(field::duplicate(&child(&item_path, "name"), name));
        } else if !name.is_empty() {
            names.insert(name);
        }
        if restart_always {
            container_handler::lifecycle(item, pod.grace_period, &item_path, errors);
            container::probes(item, &item_path, errors);
        } else {
            for forbidden in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if field::is_set(item, forbidden) {
                    errors.push(field::forbidden(
                        &child(&item_path, forbidden),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }
}

/// `validation.IsValidUserID` / `IsValidGroupID` of an optional id.
pub fn id_in_range(context: &Value, name: &str, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(id) = field::int_at(context, name) {
        if !(0..=MAX_INT32).contains(&id) {
            errors.push(field::invalid_number(
                &child(path, name),
                id,
                field::inclusive_range_error(0, MAX_INT32),
            ));
        }
    }
}

/// `validatePodDNSConfig`: `dnsPolicy: None` needs a config with nameservers.
fn dns_config(spec: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if field::str_at(spec, "dnsPolicy") != "None" {
        return;
    }
    let config_path = child(path, "dnsConfig");
    match spec.get("dnsConfig").filter(|config| !config.is_null()) {
        None => errors.push(field::required(
            &config_path,
            "must provide `dnsConfig` when `dnsPolicy` is None",
        )),
        Some(config) => {
            if field::items_at(config, "nameservers").is_empty() {
                errors.push(field::required(
                    &child(&config_path, "nameservers"),
                    "must provide at least one DNS nameserver when `dnsPolicy` is None",
                ));
            }
        }
    }
}

/// `ValidateTolerations`.
pub fn tolerations(list: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    for (position, toleration) in list.iter().enumerate() {
        let item_path = index(path, position);
        let key = field::str_at(toleration, "key");
        let operator = field::str_at(toleration, "operator");
        let value = field::str_at(toleration, "value");
        let effect = field::str_at(toleration, "effect");
        if !key.is_empty() {
            field::label_name(&child(&item_path, "key"), key, errors);
        }
        if key.is_empty() && operator != "Exists" {
            errors.push(field::invalid(
                &child(&item_path, "operator"),
                operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if field::is_set(toleration, "tolerationSeconds") && effect != "NoExecute" {
            errors.push(field::invalid(
                &child(&item_path, "effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            "Equal" | "" => {
                let messages = crate::selector::is_valid_label_value(value);
                if !messages.is_empty() {
                    errors.push(field::invalid(
                        &child(&item_path, "operator"),
                        value,
                        messages.join(";"),
                    ));
                }
            }
            "Exists" if !value.is_empty() => {
                // kube prints the whole core.Toleration with %#v.
                let rendered = format!(
                    "core.Toleration{{Key:{}, Operator:{}, Value:{}, Effect:{}, TolerationSeconds:{}}}",
                    crate::go::strconv::quote(key),
                    crate::go::strconv::quote(operator),
                    crate::go::strconv::quote(value),
                    crate::go::strconv::quote(effect),
                    match field::int_at(toleration, "tolerationSeconds") {
                        Some(_) => "(*int64)(0xc000000000)".to_string(),
                        None => "(*int64)(nil)".to_string(),
                    }
                );
                errors.push(field::invalid_rendered(
                    &child(&item_path, "operator"),
                    &rendered,
                    "value must be empty when `operator` is 'Exists'",
                ));
            }
            "Exists" => {}
            other => errors.push(field::not_supported(
                &child(&item_path, "operator"),
                other,
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect)
        {
            errors.push(field::not_supported(
                &child(&item_path, "effect"),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
}

#[cfg(test)]
#[path = "pod_tests.rs"]
mod tests;
