//! Baseline checks on security contexts and their annotations
//! (`policy/check_privileged.go`, `check_capabilities_baseline.go`,
//! `check_procMount.go`, `check_seLinuxOptions.go`,
//! `check_seccompProfile_baseline.go`, `check_appArmorProfile.go`,
//! `check_sysctls.go`).

use serde_json::Value;

use super::{
    containers_phrase, flag, join_quote, name, pluralize, present, security_context, text,
    Forbidden, Pod, SortedSet,
};
use crate::go::strconv::quote;

/// `privileged_1_0`: no container sets `privileged: true`.
pub fn privileged(pod: &Pod<'_>) -> Option<Forbidden> {
    let containers: Vec<String> = pod
        .containers()
        .filter(|container| flag(security_context(container), "privileged") == Some(true))
        .map(name)
        .collect();
    if containers.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "privileged",
        format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&containers)
        ),
    ))
}

/// The capabilities a container runtime grants by default
/// (`capabilities_allowed_1_0`).
const DEFAULT_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

/// A container's `securityContext.capabilities.<list>` entries.
pub fn capabilities<'a>(capabilities: &'a Value, list: &str) -> impl Iterator<Item = &'a str> {
    capabilities
        .get(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// `capabilitiesBaseline_1_0`: `capabilities.add` only from the default set.
pub fn capabilities_baseline(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut containers = Vec::new();
    let mut added = SortedSet::new();
    for container in pod.containers() {
        let Some(caps) = present(security_context(container).and_then(|c| c.get("capabilities")))
        else {
            continue;
        };
        let mut valid = true;
        for capability in capabilities(caps, "add") {
            if !DEFAULT_CAPABILITIES.contains(&capability) {
                valid = false;
                added.insert(capability.to_string());
            }
        }
        if !valid {
            containers.push(name(container));
        }
    }
    if containers.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&containers),
            join_quote(&added)
        ),
    ))
}

/// `procMount_1_0`: `procMount` unset or `Default`.
pub fn proc_mount(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut containers = Vec::new();
    let mut types = SortedSet::new();
    for container in pod.containers() {
        let Some(proc_mount) = security_context(container)
            .and_then(|context| context.get("procMount"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        if proc_mount != "Default" {
            containers.push(name(container));
            types.insert(proc_mount.to_string());
        }
    }
    if containers.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "procMount",
        format!(
            "{} must not set securityContext.procMount to {}",
            containers_phrase(&containers),
            join_quote(&types)
        ),
    ))
}

const SELINUX_TYPES_1_0: &[&str] = &["", "container_t", "container_init_t", "container_kvm_t"];
const SELINUX_TYPES_1_31: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

/// `seLinuxOptions_1_0`.
pub fn se_linux_options_1_0(pod: &Pod<'_>) -> Option<Forbidden> {
    se_linux_options(pod, SELINUX_TYPES_1_0)
}

/// `seLinuxOptions1_31`: `container_engine_t` allowed too.
pub fn se_linux_options_1_31(pod: &Pod<'_>) -> Option<Forbidden> {
    se_linux_options(pod, SELINUX_TYPES_1_31)
}

/// `seLinuxOptions.type` from `allowed_types`, no `user` or `role`.
fn se_linux_options(pod: &Pod<'_>, allowed_types: &[&str]) -> Option<Forbidden> {
    let mut bad_types = SortedSet::new();
    let (mut set_user, mut set_role) = (false, false);
    let mut valid = |context: Option<&Value>| -> bool {
        let Some(options) = present(context.and_then(|c| c.get("seLinuxOptions"))) else {
            return true;
        };
        let mut valid = true;
        let selinux_type = text(Some(options), "type");
        if !allowed_types.contains(&selinux_type) {
            valid = false;
            bad_types.insert(selinux_type.to_string());
        }
        if !text(Some(options), "user").is_empty() {
            valid = false;
            set_user = true;
        }
        if !text(Some(options), "role").is_empty() {
            valid = false;
            set_role = true;
        }
        valid
    };
    let mut setters = Vec::new();
    if !valid(pod.security_context()) {
        setters.push("pod".to_string());
    }
    let containers: Vec<String> = pod
        .containers()
        .filter(|container| !valid(security_context(container)))
        .map(name)
        .collect();
    if !containers.is_empty() {
        setters.push(containers_phrase(&containers));
    }
    if setters.is_empty() {
        return None;
    }
    let mut data = Vec::new();
    if !bad_types.is_empty() {
        data.push(format!(
            "{} {}",
            pluralize("type", "types", bad_types.len()),
            join_quote(&bad_types)
        ));
    }
    if set_user {
        data.push("user may not be set".to_string());
    }
    if set_role {
        data.push("role may not be set".to_string());
    }
    Some(Forbidden::new(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters.join(" and "),
            data.join("; ")
        ),
    ))
}

const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

/// `validSeccompAnnotationValue`.
fn valid_seccomp_annotation(value: &str) -> bool {
    value == "runtime/default" || value == "docker/default" || value.starts_with("localhost/")
}

/// `validSeccomp`: `RuntimeDefault` or `Localhost`.
pub fn valid_seccomp_type(profile_type: &str) -> bool {
    profile_type == "RuntimeDefault" || profile_type == "Localhost"
}

/// `seccompProfileBaseline_1_0`: the alpha seccomp annotations, when set,
/// name a runtime default or localhost profile.
pub fn seccomp_baseline_annotations(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut forbidden = SortedSet::new();
    let mut check = |key: &str| {
        if let Some(value) = pod.annotation(key) {
            if !valid_seccomp_annotation(value) {
                forbidden.insert(format!("{key}={}", quote(value)));
            }
        }
    };
    check(SECCOMP_POD_ANNOTATION);
    for container in pod.containers() {
        check(&format!(
            "{SECCOMP_CONTAINER_ANNOTATION_PREFIX}{}",
            name(container)
        ));
    }
    if forbidden.is_empty() {
        return None;
    }
    let entries: Vec<&str> = forbidden.iter().map(String::as_str).collect();
    Some(Forbidden::new(
        "seccompProfile",
        format!(
            "forbidden {} {}",
            pluralize("annotation", "annotations", entries.len()),
            entries.join(", ")
        ),
    ))
}

/// A `seccompProfile` set on `context` with a type other than the allowed
/// ones: its type.
pub fn bad_seccomp_type(context: Option<&Value>) -> Option<String> {
    let profile = present(context.and_then(|c| c.get("seccompProfile")))?;
    let profile_type = text(Some(profile), "type");
    (!valid_seccomp_type(profile_type)).then(|| profile_type.to_string())
}

/// `seccompProfileBaseline_1_19`: a `seccompProfile` set on the pod or a
/// container is `RuntimeDefault` or `Localhost`.
pub fn seccomp_baseline_fields(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut setters = Vec::new();
    let mut values = SortedSet::new();
    if let Some(bad) = bad_seccomp_type(pod.security_context()) {
        setters.push("pod".to_string());
        values.insert(bad);
    }
    let mut containers = Vec::new();
    for container in pod.containers() {
        if let Some(bad) = bad_seccomp_type(security_context(container)) {
            containers.push(name(container));
            values.insert(bad);
        }
    }
    if !containers.is_empty() {
        setters.push(containers_phrase(&containers));
    }
    if setters.is_empty() {
        return None;
    }
    Some(seccomp_forbidden_types(&setters, &values))
}

/// `... must not set securityContext.seccompProfile.type to "Unconfined"`.
pub fn seccomp_forbidden_types(setters: &[String], values: &SortedSet) -> Forbidden {
    Forbidden::new(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote(values)
        ),
    )
}

const APPARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

/// `allowedAnnotationValue`.
fn allowed_app_armor_annotation(value: &str) -> bool {
    value.is_empty() || value == "runtime/default" || value.starts_with("localhost/")
}

/// An `appArmorProfile` set on `context` with a type other than
/// `RuntimeDefault` or `Localhost`: its type.
fn bad_app_armor_type(context: Option<&Value>) -> Option<String> {
    let profile = present(context.and_then(|c| c.get("appArmorProfile")))?;
    let profile_type = text(Some(profile), "type");
    (!matches!(profile_type, "RuntimeDefault" | "Localhost")).then(|| profile_type.to_string())
}

/// `appArmorProfile_1_0`: AppArmor profile fields and the deprecated
/// per-container annotations must not be unconfined.
pub fn app_armor_profile(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut setters = Vec::new();
    let mut values = SortedSet::new();
    if let Some(bad) = bad_app_armor_type(pod.security_context()) {
        setters.push("pod".to_string());
        values.insert(bad);
    }
    let mut containers = Vec::new();
    for container in pod.containers() {
        if let Some(bad) = bad_app_armor_type(security_context(container)) {
            containers.push(name(container));
            values.insert(bad);
        }
    }
    if !containers.is_empty() {
        setters.push(containers_phrase(&containers));
    }
    let mut annotations: Vec<String> = pod
        .annotations()
        .filter(|(key, value)| {
            key.starts_with(APPARMOR_ANNOTATION_PREFIX) && !allowed_app_armor_annotation(value)
        })
        .map(|(key, value)| format!("{key}={}", quote(value)))
        .collect();
    let mut bad_values: Vec<String> = values.into_iter().collect();
    if !annotations.is_empty() {
        annotations.sort();
        setters.push(pluralize("annotation", "annotations", annotations.len()).to_string());
        bad_values.append(&mut annotations);
    }
    if setters.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            bad_values.len(),
        ),
        format!(
            "{} must not set AppArmor profile type to {}",
            setters.join(" and "),
            join_quote(&bad_values)
        ),
    ))
}

const SYSCTLS_1_0: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
];
const SYSCTLS_1_27: &[&str] = &["net.ipv4.ip_local_reserved_ports"];
const SYSCTLS_1_29: &[&str] = &[
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
const SYSCTLS_1_32: &[&str] = &["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"];

/// `sysctlsV1Dot0`: only the safe sysctls of 1.0.
pub fn sysctls_1_0(pod: &Pod<'_>) -> Option<Forbidden> {
    sysctls(pod, &[SYSCTLS_1_0])
}

/// `sysctlsV1Dot27`: adds `net.ipv4.ip_local_reserved_ports`.
pub fn sysctls_1_27(pod: &Pod<'_>) -> Option<Forbidden> {
    sysctls(pod, &[SYSCTLS_1_0, SYSCTLS_1_27])
}

/// `sysctlsV1Dot29`: adds the TCP keepalive and fin timeout sysctls.
pub fn sysctls_1_29(pod: &Pod<'_>) -> Option<Forbidden> {
    sysctls(pod, &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29])
}

/// `sysctlsV1Dot32`: adds `net.ipv4.tcp_rmem` and `tcp_wmem`.
pub fn sysctls_1_32(pod: &Pod<'_>) -> Option<Forbidden> {
    sysctls(
        pod,
        &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29, SYSCTLS_1_32],
    )
}

fn sysctls(pod: &Pod<'_>, allowed: &[&[&str]]) -> Option<Forbidden> {
    let forbidden: Vec<&str> = pod
        .security_context()
        .and_then(|context| context.get("sysctls"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|sysctl| text(Some(sysctl), "name"))
        .filter(|name| !allowed.iter().any(|set| set.contains(name)))
        .collect();
    if forbidden.is_empty() {
        return None;
    }
    Some(Forbidden::new("forbidden sysctls", forbidden.join(", ")))
}
