//! Baseline checks on what a pod shares with its host
//! (`policy/check_hostNamespaces.go`, `check_hostPathVolumes.go`,
//! `check_hostPorts.go`, `check_hostProbesAndhostLifecycle.go`,
//! `check_windowsHostProcess.go`).

use serde_json::Value;

use super::{
    containers_phrase, flag, join_quote, name, pluralize, present, security_context, Forbidden,
    Pod, SortedSet,
};

/// `hostNamespaces_1_0`: hostNetwork, hostPID and hostIPC must not be true.
pub fn host_namespaces(pod: &Pod<'_>) -> Option<Forbidden> {
    let shared: SortedSet = ["hostNetwork", "hostPID", "hostIPC"]
        .into_iter()
        .filter(|field| flag(Some(pod.spec), field) == Some(true))
        .map(str::to_string)
        .collect();
    if shared.is_empty() {
        return None;
    }
    let names: Vec<&str> = shared.iter().map(String::as_str).collect();
    Some(Forbidden::new("host namespaces", names.join(", ")))
}

/// `hostPathVolumes_1_0`: no `hostPath` volume.
pub fn host_path_volumes(pod: &Pod<'_>) -> Option<Forbidden> {
    let names: Vec<String> = volumes(pod)
        .filter(|volume| present(volume.get("hostPath")).is_some())
        .map(name)
        .collect();
    if names.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "hostPath volumes",
        format!(
            "{} {}",
            pluralize("volume", "volumes", names.len()),
            join_quote(&names)
        ),
    ))
}

/// `spec.volumes`.
pub fn volumes<'a>(pod: &Pod<'a>) -> impl Iterator<Item = &'a Value> + 'a {
    pod.spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// `hostPorts_1_0`: every `ports[*].hostPort` unset or 0.
pub fn host_ports(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut containers = Vec::new();
    let mut ports = SortedSet::new();
    for container in pod.containers() {
        let mut valid = true;
        for port in container
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let host_port = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            if host_port != 0 {
                valid = false;
                ports.insert(host_port.to_string());
            }
        }
        if !valid {
            containers.push(name(container));
        }
    }
    if containers.is_empty() {
        return None;
    }
    let ports: Vec<&str> = ports.iter().map(String::as_str).collect();
    Some(Forbidden::new(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&containers),
            pluralize("uses", "use", containers.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        ),
    ))
}

/// `hostProbesAndHostLifecycleV1Dot34`: no `host` in probes' and
/// lifecycle handlers' `httpGet` or `tcpSocket`.
pub fn host_probes_and_lifecycle(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut containers = SortedSet::new();
    let mut hosts = SortedSet::new();
    for container in pod.containers() {
        let handlers = ["livenessProbe", "readinessProbe", "startupProbe"]
            .into_iter()
            .map(|probe| container.get(probe))
            .chain(["postStart", "preStop"].into_iter().map(|hook| {
                present(container.get("lifecycle")).and_then(|lifecycle| lifecycle.get(hook))
            }));
        for handler in handlers.filter_map(present) {
            for action in ["httpGet", "tcpSocket"] {
                let host = present(handler.get(action))
                    .and_then(|action| action.get("host"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !host.is_empty() {
                    containers.insert(name(container));
                    hosts.insert(host.to_string());
                }
            }
        }
    }
    if containers.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "probe or lifecycle host",
        format!(
            "{} {} {} {} {}",
            pluralize("container", "containers", containers.len()),
            join_quote(&containers),
            pluralize("uses", "use", containers.len()),
            pluralize(
                "probe or lifecycle host",
                "probe or lifecycle hosts",
                hosts.len()
            ),
            join_quote(&hosts)
        ),
    ))
}

/// `windowsHostProcess_1_0`: `windowsOptions.hostProcess` must not be true
/// on the pod or any container.
pub fn windows_host_process(pod: &Pod<'_>) -> Option<Forbidden> {
    let host_process = |context: Option<&Value>| {
        flag(context.and_then(|c| c.get("windowsOptions")), "hostProcess")
    };
    let containers: Vec<String> = pod
        .containers()
        .filter(|container| host_process(security_context(container)) == Some(true))
        .map(name)
        .collect();
    let mut setters = Vec::new();
    if host_process(pod.security_context()) == Some(true) {
        setters.push("pod".to_string());
    }
    if !containers.is_empty() {
        setters.push(containers_phrase(&containers));
    }
    if setters.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "hostProcess",
        format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            setters.join(" and ")
        ),
    ))
}
