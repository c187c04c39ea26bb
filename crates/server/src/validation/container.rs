//! One container's rules (`validateContainerCommon` and what it calls in
//! `pkg/apis/core/validation/validation.go`): name, image, termination
//! message policy, ports, env, envFrom, volume mounts, pull policy,
//! resources, security context; and probes (`validateProbe`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::container_handler;
use super::field::{self, child, index};
use super::pod::choice;
use super::pod_security_context;
use super::pod_volumes;
use super::resource_requirements::{self, RequirementsContext};
use crate::quantity::Quantity;
use crate::status::FieldError;

const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// `validateContainerCommon`.
pub fn common(
    container: &Value,
    volumes: &BTreeSet<String>,
    pod: &PodContext<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let name = field::str_at(container, "name");
    let name_path = child(path, "name");
    if name.is_empty() {
        errors.push(field::required(&name_path, ""));
    } else {
        field::dns1123_label(&name_path, name, errors);
    }
    if field::str_at(container, "image").is_empty() {
        errors.push(field::required(&child(path, "image"), ""));
    }
    choice(
        field::str_at(container, "terminationMessagePolicy"),
        &["File", "FallbackToLogsOnError"],
        &child(path, "terminationMessagePolicy"),
        errors,
    );
    ports(
        field::items_at(container, "ports"),
        &child(path, "ports"),
        errors,
    );
    env(
        field::items_at(container, "env"),
        &child(path, "env"),
        errors,
    );
    env_from(
        field::items_at(container, "envFrom"),
        &child(path, "envFrom"),
        errors,
    );
    pod_volumes::mounts(
        field::items_at(container, "volumeMounts"),
        volumes,
        container,
        &child(path, "volumeMounts"),
        errors,
    );
    volume_devices(
        container,
        volumes,
        pod,
        &child(path, "volumeDevices"),
        errors,
    );
    choice(
        field::str_at(container, "imagePullPolicy"),
        &["Always", "IfNotPresent", "Never"],
        &child(path, "imagePullPolicy"),
        errors,
    );
    resource_requirements::container_requirements(
        container.get("resources").unwrap_or(&Value::Null),
        pod.requirements,
        &child(path, "resources"),
        errors,
    );
    container_handler::resize_policy(container, pod.restart_policy, path, errors);
    pod_security_context::container_security_context(
        container,
        &child(path, "securityContext"),
        pod.host_users,
        errors,
    );
}

/// What `validateContainerCommon` reads of the pod around the container.
pub struct PodContext<'a> {
    /// `spec.restartPolicy`.
    pub restart_policy: &'a str,
    /// `spec.hostUsers`, true when unset.
    pub host_users: bool,
    /// `spec.terminationGracePeriodSeconds`.
    pub grace_period: Option<i64>,
    /// `spec.volumes`, whose sources tell block-capable volumes.
    pub volume_sources: &'a [Value],
    /// The pod's claim names and hugepage option, for `resources`.
    pub requirements: RequirementsContext<'a>,
}

impl<'a> PodContext<'a> {
    pub fn of(spec: &'a Value, requirements: RequirementsContext<'a>) -> Self {
        PodContext {
            requirements,
            restart_policy: field::str_at(spec, "restartPolicy"),
            host_users: pod_security_context::host_users(spec),
            grace_period: field::int_at(spec, "terminationGracePeriodSeconds"),
            volume_sources: field::items_at(spec, "volumes"),
        }
    }

    /// `isMatchedDevice`'s second half: the (valid) volume `name` is a
    /// PersistentVolumeClaim or an ephemeral volume.
    fn is_claim_volume(&self, name: &str) -> bool {
        self.volume_sources.iter().any(|volume| {
            field::str_at(volume, "name") == name
                && (field::is_set(volume, "persistentVolumeClaim")
                    || field::is_set(volume, "ephemeral"))
        })
    }
}

/// `ValidateVolumeDevices`: named after a claim or ephemeral volume of the
/// pod, unique names and device paths, no backsteps, neither a name nor a
/// path also used by the container's volumeMounts.
fn volume_devices(
    container: &Value,
    volumes: &BTreeSet<String>,
    pod: &PodContext<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let mounts = field::items_at(container, "volumeMounts");
    let mount_named = |name: &str| mounts.iter().any(|m| field::str_at(m, "name") == name);
    let mount_at = |at: &str| mounts.iter().any(|m| field::str_at(m, "mountPath") == at);
    let mut names = BTreeSet::new();
    let mut paths = BTreeSet::new();
    for (position, device) in field::items_at(container, "volumeDevices")
        .iter()
        .enumerate()
    {
        let item_path = index(path, position);
        let name = field::str_at(device, "name");
        let device_path = field::str_at(device, "devicePath");
        let matched = volumes.contains(name);
        if name.is_empty() {
            errors.push(field::required(&child(&item_path, "name"), ""));
        }
        if names.contains(name) {
            errors.push(field::invalid(
                &child(&item_path, "name"),
                name,
                "must be unique",
            ));
        }
        if matched && !pod.is_claim_volume(name) {
            errors.push(field::invalid(
                &child(&item_path, "name"),
                name,
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            ));
        }
        if !matched {
            errors.push(field::not_found(&child(&item_path, "name"), name));
        }
        if device_path.is_empty() {
            errors.push(field::required(&child(&item_path, "devicePath"), ""));
        }
        if paths.contains(device_path) {
            errors.push(field::invalid(
                &child(&item_path, "devicePath"),
                device_path,
                "must be unique",
            ));
        }
        if !device_path.is_empty() && device_path.split('/').any(|part| part == "..") {
            errors.push(field::invalid(
                &child(&item_path, "devicePath"),
                device_path,
                "can not contain backsteps ('..')",
            ));
        } else {
            paths.insert(device_path);
        }
        if mount_named(name) {
            errors.push(field::invalid(
                &child(&item_path, "name"),
                name,
                "must not already exist in volumeMounts",
            ));
        }
        if mount_at(device_path) {
            errors.push(field::invalid(
                &child(&item_path, "devicePath"),
                device_path,
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !name.is_empty() {
            names.insert(name);
        }
    }
}

/// `validateContainerPorts`.
fn ports(list: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    let mut names = BTreeSet::new();
    for (position, port) in list.iter().enumerate() {
        let item_path = index(path, position);
        let name = field::str_at(port, "name");
        if !name.is_empty() {
            let messages = field::port_name_errors(name);
            if !messages.is_empty() {
                for message in messages {
                    errors.push(field::invalid(&child(&item_path, "name"), name, message));
                }
            } else if !names.insert(name) {
                errors.push(field::duplicate(&child(&item_path, "name"), name));
            }
        }
        let container_port = field::int_at(port, "containerPort").unwrap_or(0);
        if container_port == 0 {
            errors.push(field::required(&child(&item_path, "containerPort"), ""));
        } else {
            for message in field::port_number_errors(container_port) {
                errors.push(field::invalid_number(
                    &child(&item_path, "containerPort"),
                    container_port,
                    message,
                ));
            }
        }
        let host_port = field::int_at(port, "hostPort").unwrap_or(0);
        if host_port != 0 {
            for message in field::port_number_errors(host_port) {
                errors.push(field::invalid_number(
                    &child(&item_path, "hostPort"),
                    host_port,
                    message,
                ));
            }
        }
        choice(
            field::str_at(port, "protocol"),
            &PROTOCOLS,
            &child(&item_path, "protocol"),
            errors,
        );
    }
}

/// `AccumulateUniqueHostPorts` over a container list.
pub fn unique_host_ports(containers: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    let mut seen = BTreeSet::new();
    for (position, container) in containers.iter().enumerate() {
        let ports_path = child(&index(path, position), "ports");
        for (port_position, port) in field::items_at(container, "ports").iter().enumerate() {
            let host_port = field::int_at(port, "hostPort").unwrap_or(0);
            if host_port == 0 {
                continue;
            }
            let text = format!(
                "{}/{}/{host_port}",
                field::str_at(port, "hostIP"),
                field::str_at(port, "protocol")
            );
            if !seen.insert(text.clone()) {
                errors.push(field::duplicate(
                    &child(&index(&ports_path, port_position), "hostPort"),
                    &text,
                ));
            }
        }
    }
}

/// `validation.IsRelaxedEnvVarName` (RelaxedEnvironmentVariableValidation is GA).
fn env_name_errors(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.is_empty() {
        errors.push("environment variable name must be non-empty".to_string());
    }
    if name
        .chars()
        .any(|c| !c.is_ascii() || c.is_ascii_control() || c == '=')
    {
        errors.push(
            "a valid environment variable name must consist only of printable ASCII characters other than '='"
                .to_string(),
        );
    }
    errors
}

/// `ValidateEnv`.
fn env(list: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    for (position, variable) in list.iter().enumerate() {
        let item_path = index(path, position);
        let name = field::str_at(variable, "name");
        if name.is_empty() {
            errors.push(field::required(&child(&item_path, "name"), ""));
        }
        for message in env_name_errors(name) {
            errors.push(field::invalid(&child(&item_path, "name"), name, message));
        }
        env_value_from(variable, &child(&item_path, "valueFrom"), errors);
    }
}

const ENV_FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// `validateEnvVarValueFrom`.
fn env_value_from(variable: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(from) = variable.get("valueFrom").filter(|from| !from.is_null()) else {
        return;
    };
    let mut sources = 0;
    if let Some(field_ref) = from.get("fieldRef").filter(|v| !v.is_null()) {
        sources += 1;
        object_field_selector(
            field_ref,
            &ENV_FIELD_PATHS,
            &child(path, "fieldRef"),
            errors,
        );
    }
    if let Some(resource_ref) = from.get("resourceFieldRef").filter(|v| !v.is_null()) {
        sources += 1;
        resource_field_selector(
            resource_ref,
            false,
            &child(path, "resourceFieldRef"),
            errors,
        );
    }
    for source in ["configMapKeyRef", "secretKeyRef"] {
        if let Some(selector) = from.get(source).filter(|v| !v.is_null()) {
            sources += 1;
            key_selector(selector, &child(path, source), errors);
        }
    }
    if sources == 0 {
        errors.push(field::invalid(
            path,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        ));
    } else if !field::str_at(variable, "value").is_empty() {
        errors.push(field::invalid(
            path,
            "",
            "may not be specified when `value` is not empty",
        ));
    } else if sources > 1 {
        errors.push(field::invalid(
            path,
            "",
            "may not have more than one field specified at a time",
        ));
    }
}

/// `validateObjectFieldSelector` with the field paths `expressions` allows
/// (env vars' or downward API volumes').
pub fn object_field_selector(
    selector: &Value,
    expressions: &[&str],
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let api_version = field::str_at(selector, "apiVersion");
    let field_path = field::str_at(selector, "fieldPath");
    if api_version.is_empty() {
        errors.push(field::required(&child(path, "apiVersion"), ""));
        return;
    }
    if field_path.is_empty() {
        errors.push(field::required(&child(path, "fieldPath"), ""));
        return;
    }
    // podshelper.ConvertDownwardAPIFieldLabel.
    let conversion_error = if api_version != "v1" {
        Some(format!("unsupported pod version: {api_version}"))
    } else {
        None
    };
    // fieldpath.SplitMaybeSubscriptedPath: `path['subscript']`.
    let (base, subscript) = match field_path
        .strip_suffix("']")
        .and_then(|trimmed| trimmed.split_once("['"))
    {
        Some((base, subscript)) if !base.is_empty() => (base, Some(subscript)),
        _ => (field_path, None),
    };
    let conversion_error = conversion_error.or_else(|| match (base, subscript) {
        ("metadata.annotations" | "metadata.labels", Some(_)) => None,
        (_, Some(_)) => Some(format!("field label does not support subscript: {base}")),
        (
            "metadata.annotations"
            | "metadata.labels"
            | "metadata.name"
            | "metadata.namespace"
            | "metadata.uid"
            | "spec.nodeName"
            | "spec.restartPolicy"
            | "spec.serviceAccountName"
            | "spec.schedulerName"
            | "status.phase"
            | "status.hostIP"
            | "status.hostIPs"
            | "status.podIP"
            | "status.podIPs"
            | "spec.host",
            None,
        ) => None,
        _ => Some(format!("field label not supported: {field_path}")),
    });
    if let Some(error) = conversion_error {
        errors.push(field::invalid(
            &child(path, "fieldPath"),
            field_path,
            format!("error converting fieldPath: {error}"),
        ));
        return;
    }
    let internal = if base == "spec.host" {
        "spec.nodeName"
    } else {
        base
    };
    match subscript {
        Some(subscript) => {
            let name = if internal == "metadata.annotations" {
                subscript.to_lowercase()
            } else {
                subscript.to_string()
            };
            for message in crate::selector::is_qualified_name(&name) {
                errors.push(field::invalid(path, &name, message));
            }
        }
        None => {
            if !expressions.contains(&internal) {
                errors.push(field::not_supported(
                    &child(path, "fieldPath"),
                    internal,
                    expressions,
                ));
            }
        }
    }
}

const RESOURCE_FIELD_PATHS: [&str; 6] = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// `validateContainerResourceFieldSelector` (a downward API volume's
/// `volume` selector also needs a container name), then
/// `validateContainerResourceDivisor`.
pub fn resource_field_selector(
    selector: &Value,
    volume: bool,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let resource = field::str_at(selector, "resource");
    if volume && field::str_at(selector, "containerName").is_empty() {
        errors.push(field::required(&child(path, "containerName"), ""));
    } else if resource.is_empty() {
        errors.push(field::required(&child(path, "resource"), ""));
    } else if !RESOURCE_FIELD_PATHS.contains(&resource)
        && !resource.starts_with("limits.hugepages-")
        && !resource.starts_with("requests.hugepages-")
    {
        errors.push(field::not_supported(
            &child(path, "resource"),
            resource,
            &RESOURCE_FIELD_PATHS,
        ));
    }
    resource_divisor(resource, selector.get("divisor"), path, errors);
}

/// The divisors kube allows per resource
/// (`validContainerResourceDivisorForCPU`, `…ForMemory`,
/// `…ForEphemeralStorage`).
const CPU_DIVISORS: &[&str] = &["1m", "1"];
const BYTE_DIVISORS: &[&str] = &[
    "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
];

/// `validateContainerResourceDivisor`: an unset (zero) divisor is fine; a
/// cpu divisor is `1m` or `1`, a memory or ephemeral-storage one a power of
/// 1000 or 1024 of one byte, compared in the quantity's canonical form
/// (`divisor.String()`). The error's value is the resource name, as kube's.
fn resource_divisor(
    resource: &str,
    divisor: Option<&Value>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let Some(text) = divisor.and_then(Value::as_str) else {
        return;
    };
    let Ok(quantity) = Quantity::parse(text) else {
        return;
    };
    if quantity.is_zero() {
        return;
    }
    let canonical = quantity.to_string();
    let (allowed, message): (&[&str], &str) = match resource {
        "limits.cpu" | "requests.cpu" => (
            CPU_DIVISORS,
            "only divisor's values 1m and 1 are supported with the cpu resource",
        ),
        "limits.memory" | "requests.memory" => (
            BYTE_DIVISORS,
            "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource",
        ),
        "limits.ephemeral-storage" | "requests.ephemeral-storage" => (
            BYTE_DIVISORS,
            "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource",
        ),
        _ => return,
    };
    if !allowed.contains(&canonical.as_str()) {
        errors.push(field::invalid(&child(path, "divisor"), resource, message));
    }
}

/// `validateConfigMapKeySelector` / `validateSecretKeySelector`.
fn key_selector(selector: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let name = field::str_at(selector, "name");
    for message in crate::names::dns1123_subdomain(name) {
        errors.push(field::invalid(&child(path, "name"), name, message));
    }
    let selector_key = field::str_at(selector, "key");
    if selector_key.is_empty() {
        errors.push(field::required(&child(path, "key"), ""));
    } else {
        for message in field::config_map_key_errors(selector_key) {
            errors.push(field::invalid(&child(path, "key"), selector_key, message));
        }
    }
}

/// `ValidateEnvFrom`.
fn env_from(list: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    for (position, source) in list.iter().enumerate() {
        let item_path = index(path, position);
        let prefix = field::str_at(source, "prefix");
        if !prefix.is_empty() {
            for message in env_name_errors(prefix) {
                errors.push(field::invalid(
                    &child(&item_path, "prefix"),
                    prefix,
                    message,
                ));
            }
        }
        let mut sources = 0;
        for reference in ["configMapRef", "secretRef"] {
            if let Some(selector) = source.get(reference).filter(|v| !v.is_null()) {
                sources += 1;
                let name = field::str_at(selector, "name");
                let name_path = child(&child(&item_path, reference), "name");
                if name.is_empty() {
                    errors.push(field::required(&name_path, ""));
                } else {
                    field::dns1123_subdomain(&name_path, name, errors);
                }
            }
        }
        if sources == 0 {
            errors.push(field::invalid(
                path,
                "",
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if sources > 1 {
            errors.push(field::invalid(
                path,
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
}

/// The probes of a regular (or restartable init) container.
pub fn probes(container: &Value, path: &str, errors: &mut Vec<FieldError>) {
    for name in ["livenessProbe", "readinessProbe", "startupProbe"] {
        let Some(probe) = container.get(name).filter(|probe| !probe.is_null()) else {
            continue;
        };
        let probe_path = child(path, name);
        probe_rules(probe, &probe_path, errors);
        if name != "readinessProbe" {
            if let Some(threshold) = field::int_at(probe, "successThreshold") {
                if threshold != 1 {
                    errors.push(field::invalid_number(
                        &child(&probe_path, "successThreshold"),
                        threshold,
                        "must be 1",
                    ));
                }
            }
        } else if field::is_set(probe, "terminationGracePeriodSeconds") {
            let value = field::int_at(probe, "terminationGracePeriodSeconds").unwrap_or(0);
            errors.push(field::invalid_number(
                &child(&probe_path, "terminationGracePeriodSeconds"),
                value,
                "must not be set for readinessProbes",
            ));
        }
    }
}

/// `validateProbe`: one handler, non-negative timings.
fn probe_rules(probe: &Value, path: &str, errors: &mut Vec<FieldError>) {
    container_handler::handler(
        probe,
        &["exec", "httpGet", "tcpSocket", "grpc"],
        None,
        path,
        errors,
    );
    for timing in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        field::nonnegative(probe, timing, path, errors);
    }
    if let Some(grace) = field::int_at(probe, "terminationGracePeriodSeconds") {
        if grace <= 0 {
            errors.push(field::invalid_number(
                &child(path, "terminationGracePeriodSeconds"),
                grace,
                "must be greater than 0",
            ));
        }
    }
}

/// `ValidatePortNumOrName` of an int-or-string port.
pub fn port_number_or_name(port: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    match port {
        Some(Value::String(name)) => {
            for message in field::port_name_errors(name) {
                errors.push(field::invalid(path, name, message));
            }
        }
        other => {
            let number = other.and_then(Value::as_i64).unwrap_or(0);
            for message in field::port_number_errors(number) {
                errors.push(field::invalid_number(path, number, message));
            }
        }
    }
}
