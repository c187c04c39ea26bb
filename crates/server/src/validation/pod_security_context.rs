//! Security contexts of pods and containers, as
//! `pkg/apis/core/validation/validation.go` checks them:
//! `validatePodSpecSecurityContext` (ids, `shareProcessNamespace`,
//! `validateSysctls`, `validateFSGroupChangePolicy`, seccomp, Windows
//! options, AppArmor, `validateSupplementalGroupsPolicy`,
//! `validateSELinuxChangePolicy`), `ValidateSecurityContext` (a container's:
//! `privileged` under `--allow-privileged`, ids, `procMount`, seccomp,
//! `allowPrivilegeEscalation: false` with `privileged` or `CAP_SYS_ADMIN`,
//! Windows options, AppArmor), `validateHostUsers` and
//! `validateWindowsHostProcessPod`.
//!
//! kube keeps `hostNetwork`, `hostPID`, `hostIPC`, `hostUsers` and
//! `shareProcessNamespace` in the internal pod security context, so its
//! paths for them are built from `spec.securityContext` or `spec` as the
//! upstream functions build them, not from where v1 keeps them.

use serde_json::Value;

use super::capabilities;
use super::field::{self, child, index};
use super::pod::id_in_range;
use super::pod_volumes::local_descending_path;
use crate::status::FieldError;

const MAX_INT32: i64 = 2_147_483_647;

/// A pointer field of an internal struct as Go's `%#v` prints it: the address
/// is not reproducible, so every non-nil one prints as `0xc000000000`.
fn go_pointer(object: &Value, name: &str, go_type: &str) -> String {
    if object.get(name).is_some_and(|value| !value.is_null()) {
        format!("(*{go_type})(0xc000000000)")
    } else {
        format!("(*{go_type})(nil)")
    }
}

/// `core.SecurityContext` printed with `%#v` (what `field.Invalid` shows for
/// the whole context).
fn render_container_context(context: &Value) -> String {
    let fields = [
        ("Capabilities", "capabilities", "core.Capabilities"),
        ("Privileged", "privileged", "bool"),
        ("SELinuxOptions", "seLinuxOptions", "core.SELinuxOptions"),
        (
            "WindowsOptions",
            "windowsOptions",
            "core.WindowsSecurityContextOptions",
        ),
        ("RunAsUser", "runAsUser", "int64"),
        ("RunAsGroup", "runAsGroup", "int64"),
        ("RunAsNonRoot", "runAsNonRoot", "bool"),
        ("ReadOnlyRootFilesystem", "readOnlyRootFilesystem", "bool"),
        (
            "AllowPrivilegeEscalation",
            "allowPrivilegeEscalation",
            "bool",
        ),
        ("ProcMount", "procMount", "core.ProcMountType"),
        ("SeccompProfile", "seccompProfile", "core.SeccompProfile"),
        ("AppArmorProfile", "appArmorProfile", "core.AppArmorProfile"),
    ];
    let rendered: Vec<String> = fields
        .iter()
        .map(|(go_name, name, go_type)| format!("{go_name}:{}", go_pointer(context, name, go_type)))
        .collect();
    format!("core.SecurityContext{{{}}}", rendered.join(", "))
}

fn object_at<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|value| !value.is_null())
}

/// `ValidateSecurityContext` of a container (`hostUsers` is the pod's,
/// true unless `spec.hostUsers: false`).
pub fn container_security_context(
    container: &Value,
    path: &str,
    host_users: bool,
    errors: &mut Vec<FieldError>,
) {
    let Some(context) = object_at(container, "securityContext") else {
        return;
    };
    let privileged = context.get("privileged").and_then(Value::as_bool);
    if privileged == Some(true) && !capabilities::allow_privileged() {
        errors.push(field::forbidden(
            &child(path, "privileged"),
            "disallowed by cluster policy",
        ));
    }
    for name in ["runAsUser", "runAsGroup"] {
        id_in_range(context, name, path, errors);
    }
    if let Some(proc_mount) = context.get("procMount").and_then(Value::as_str) {
        let proc_mount_path = child(path, "procMount");
        if !["Default", "Unmasked"].contains(&proc_mount) {
            errors.push(field::not_supported(
                &proc_mount_path,
                proc_mount,
                &["Default", "Unmasked"],
            ));
        }
        if host_users && proc_mount == "Unmasked" {
            errors.push(field::invalid(
                &proc_mount_path,
                proc_mount,
                "`hostUsers` must be false to use `Unmasked`",
            ));
        }
    }
    seccomp_profile_field(
        object_at(context, "seccompProfile"),
        &child(path, "seccompProfile"),
        errors,
    );
    if context
        .get("allowPrivilegeEscalation")
        .and_then(Value::as_bool)
        == Some(false)
    {
        if privileged == Some(true) {
            errors.push(field::invalid_rendered(
                path,
                &render_container_context(context),
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        let added = context
            .get("capabilities")
            .map(|capabilities| field::items_at(capabilities, "add"))
            .unwrap_or_default();
        for capability in added {
            if capability.as_str() == Some("CAP_SYS_ADMIN") {
                errors.push(field::invalid_rendered(
                    path,
                    &render_container_context(context),
                    "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
                ));
            }
        }
    }
    windows_options(
        object_at(context, "windowsOptions"),
        &child(path, "windowsOptions"),
        errors,
    );
    app_armor_profile_field(
        object_at(context, "appArmorProfile"),
        &child(path, "appArmorProfile"),
        errors,
    );
}

/// The pod's `hostUsers` as `ValidatePodSpec` computes it (default true).
pub fn host_users(spec: &Value) -> bool {
    spec.get("hostUsers")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

/// `validatePodSpecSecurityContext`. `spec_path` is the pod spec's path.
pub fn pod_spec_security_context(spec: &Value, spec_path: &str, errors: &mut Vec<FieldError>) {
    let path = child(spec_path, "securityContext");
    let context = spec.get("securityContext").unwrap_or(&Value::Null);
    for name in ["fsGroup", "runAsUser", "runAsGroup"] {
        id_in_range(context, name, &path, errors);
    }
    for (position, group) in field::items_at(context, "supplementalGroups")
        .iter()
        .enumerate()
    {
        if let Some(group) = group.as_i64() {
            if !(0..=MAX_INT32).contains(&group) {
                errors.push(field::invalid_number(
                    &index(&child(&path, "supplementalGroups"), position),
                    group,
                    field::inclusive_range_error(0, MAX_INT32),
                ));
            }
        }
    }
    if spec.get("shareProcessNamespace").and_then(Value::as_bool) == Some(true)
        && flag(spec, "hostPID")
    {
        errors.push(field::invalid_rendered(
            &child(&path, "shareProcessNamespace"),
            "true",
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    let sysctl_list = field::items_at(context, "sysctls");
    if !sysctl_list.is_empty() {
        sysctls(spec, sysctl_list, &child(&path, "sysctls"), errors);
    }
    if let Some(policy) = context.get("fsGroupChangePolicy").and_then(Value::as_str) {
        if !["Always", "OnRootMismatch"].contains(&policy) {
            errors.push(field::not_supported(
                &child(&path, "fsGroupChangePolicy"),
                policy,
                &["Always", "OnRootMismatch"],
            ));
        }
    }
    seccomp_profile_field(
        object_at(context, "seccompProfile"),
        &child(&path, "seccompProfile"),
        errors,
    );
    windows_options(
        object_at(context, "windowsOptions"),
        &child(&path, "windowsOptions"),
        errors,
    );
    app_armor_profile_field(
        object_at(context, "appArmorProfile"),
        &child(&path, "appArmorProfile"),
        errors,
    );
    if let Some(policy) = context
        .get("supplementalGroupsPolicy")
        .and_then(Value::as_str)
    {
        if !["Merge", "Strict"].contains(&policy) {
            errors.push(field::not_supported(
                &child(&path, "supplementalGroupsPolicy"),
                policy,
                &["Merge", "Strict"],
            ));
        }
    }
    if let Some(policy) = context.get("seLinuxChangePolicy").and_then(Value::as_str) {
        if !["MountOption", "Recursive"].contains(&policy) {
            errors.push(field::not_supported(
                &child(&path, "seLinuxChangePolicy"),
                policy,
                &["MountOption", "Recursive"],
            ));
        }
    }
}

fn flag(spec: &Value, name: &str) -> bool {
    spec.get(name).and_then(Value::as_bool).unwrap_or(false)
}

const SYSCTL_MAX_LENGTH: usize = 253;
const SYSCTL_REGEX: &str =
    r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";

/// `IsValidSysctlName`: at most 253 characters, segments of
/// `[a-z0-9]([-_a-z0-9]*[a-z0-9])?` joined by `.` or `/`.
pub fn is_valid_sysctl_name(name: &str) -> bool {
    name.len() <= SYSCTL_MAX_LENGTH
        && name.split(['.', '/']).all(|segment| {
            let bytes = segment.as_bytes();
            let edge = |byte: &u8| byte.is_ascii_lowercase() || byte.is_ascii_digit();
            match (bytes.first(), bytes.last()) {
                (Some(first), Some(last)) => {
                    edge(first)
                        && edge(last)
                        && bytes
                            .iter()
                            .all(|byte| edge(byte) || *byte == b'-' || *byte == b'_')
                }
                _ => false,
            }
        })
}

/// `utilsysctl.GetNamespace` (after `NormalizeName`): `"net"`, `"ipc"` or
/// `""` for a sysctl not known to be namespaced.
fn sysctl_namespace(name: &str) -> &'static str {
    let normalized: String = if name
        .find(['.', '/'])
        .is_some_and(|at| name[at..].starts_with('/'))
    {
        name.chars()
            .map(|c| match c {
                '/' => '.',
                '.' => '/',
                other => other,
            })
            .collect()
    } else {
        name.to_string()
    };
    if normalized == "kernel.sem"
        || ["kernel.shm", "kernel.msg", "fs.mqueue."]
            .iter()
            .any(|prefix| normalized.starts_with(prefix))
    {
        "ipc"
    } else if normalized.starts_with("net.") {
        "net"
    } else {
        ""
    }
}

/// `validateSysctls` with `ValidateHostSysctl`.
fn sysctls(spec: &Value, list: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    let mut names = std::collections::BTreeSet::new();
    for (position, sysctl) in list.iter().enumerate() {
        let name = field::str_at(sysctl, "name");
        let name_path = child(&index(path, position), "name");
        if name.is_empty() {
            errors.push(field::required(&name_path, ""));
        } else if !is_valid_sysctl_name(name) {
            errors.push(field::invalid(
                &name_path,
                name,
                format!("must have at most {SYSCTL_MAX_LENGTH} characters and match regex {SYSCTL_REGEX}"),
            ));
        } else if names.contains(name) {
            errors.push(field::duplicate(&name_path, name));
        }
        match sysctl_namespace(name) {
            "net" if flag(spec, "hostNetwork") => errors.push(field::invalid(
                &name_path,
                name,
                "may not be specified when 'hostNetwork' is true",
            )),
            "ipc" if flag(spec, "hostIPC") => errors.push(field::invalid(
                &name_path,
                name,
                "may not be specified when 'hostIPC' is true",
            )),
            _ => {}
        }
        names.insert(name);
    }
}

/// `validateSeccompProfileField`.
fn seccomp_profile_field(profile: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(profile) = profile else {
        return;
    };
    let kind = field::str_at(profile, "type");
    let type_path = child(path, "type");
    match kind {
        "Localhost" | "RuntimeDefault" | "Unconfined" => {}
        "" => errors.push(field::required(
            &type_path,
            "type is required when seccompProfile is set",
        )),
        other => errors.push(field::not_supported(
            &type_path,
            other,
            &["Localhost", "RuntimeDefault", "Unconfined"],
        )),
    }
    let localhost = profile.get("localhostProfile").and_then(Value::as_str);
    let localhost_path = child(path, "localhostProfile");
    if kind == "Localhost" {
        match localhost {
            None => errors.push(field::required(
                &localhost_path,
                "must be set when seccomp type is Localhost",
            )),
            Some(target) => local_descending_path(target, &localhost_path, errors),
        }
    } else if localhost.is_some() {
        let rendered = format!(
            "core.SeccompProfile{{Type:{}, LocalhostProfile:(*string)(0xc000000000)}}",
            crate::go::strconv::quote(kind)
        );
        errors.push(field::invalid_rendered(
            &localhost_path,
            &rendered,
            "can only be set when seccomp type is Localhost",
        ));
    }
}

/// `ValidateAppArmorProfileField`.
pub fn app_armor_profile_field(profile: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(profile) = profile else {
        return;
    };
    let localhost = profile.get("localhostProfile").and_then(Value::as_str);
    let localhost_path = child(path, "localhostProfile");
    match field::str_at(profile, "type") {
        "Localhost" => match localhost {
            None => errors.push(field::required(
                &localhost_path,
                "must be set when AppArmor type is Localhost",
            )),
            Some(name) => {
                let trimmed = name.trim_matches(|c: char| c.is_whitespace());
                if trimmed != name {
                    errors.push(field::invalid(
                        &localhost_path,
                        name,
                        "must not be padded with whitespace",
                    ));
                } else if trimmed.is_empty() {
                    errors.push(field::required(
                        &localhost_path,
                        "must be set when AppArmor type is Localhost",
                    ));
                }
                if name.len() > 4095 {
                    errors.push(field::too_long(&localhost_path, 4095));
                }
            }
        },
        "RuntimeDefault" | "Unconfined" => {
            if let Some(name) = localhost {
                errors.push(field::invalid(
                    &localhost_path,
                    name,
                    "can only be set when AppArmor type is Localhost",
                ));
            }
        }
        "" => errors.push(field::required(
            &child(path, "type"),
            "type is required when appArmorProfile is set",
        )),
        other => errors.push(field::not_supported(
            &child(path, "type"),
            other,
            &["Localhost", "RuntimeDefault", "Unconfined"],
        )),
    }
}

const MAX_GMSA_CREDENTIAL_SPEC_LENGTH: usize = 64 * 1024;
const MAX_RUN_AS_USER_NAME_DOMAIN_LENGTH: usize = 256;
const MAX_RUN_AS_USER_NAME_USER_LENGTH: usize = 104;

/// `validWindowsUserDomainDNSRegex`: DNS labels of letters, digits and
/// dashes (either case) joined by dots.
fn is_windows_dns_domain(domain: &str) -> bool {
    domain.split('.').all(|label| {
        let bytes = label.as_bytes();
        (1..=63).contains(&bytes.len())
            && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
            && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
            && bytes
                .iter()
                .all(|byte| byte.is_ascii_alphanumeric() || *byte == b'-')
    })
}

/// `validNetBiosRegex`: `^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$`.
fn is_net_bios_domain(domain: &str) -> bool {
    let forbidden = |c: char| "\\/:*?\"<>|".contains(c);
    let mut chars = domain.chars();
    match chars.next() {
        Some(first) if !forbidden(first) && first != '.' => {
            let rest: Vec<char> = chars.collect();
            rest.len() <= 14 && !rest.iter().any(|c| forbidden(*c))
        }
        _ => false,
    }
}

/// `validateWindowsSecurityContextOptions`.
fn windows_options(options: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(options) = options else {
        return;
    };
    if let Some(name) = options
        .get("gmsaCredentialSpecName")
        .and_then(Value::as_str)
    {
        for message in crate::names::dns1123_subdomain(name) {
            errors.push(field::invalid(
                &child(path, "gmsaCredentialSpecName"),
                name,
                message,
            ));
        }
    }
    if let Some(spec) = options.get("gmsaCredentialSpec").and_then(Value::as_str) {
        let spec_path = child(path, "gmsaCredentialSpec");
        if spec.is_empty() {
            errors.push(field::invalid(
                &spec_path,
                spec,
                "gmsaCredentialSpec cannot be an empty string",
            ));
        } else if spec.len() > MAX_GMSA_CREDENTIAL_SPEC_LENGTH {
            errors.push(field::invalid(
                &spec_path,
                spec,
                "gmsaCredentialSpec size must be under 64 KiB",
            ));
        }
    }
    let Some(user_name) = options.get("runAsUserName").and_then(Value::as_str) else {
        return;
    };
    let name_path = child(path, "runAsUserName");
    let mut refuse = |message: &str| errors.push(field::invalid(&name_path, user_name, message));
    if user_name.is_empty() {
        refuse("runAsUserName cannot be an empty string");
        return;
    }
    // Go's `[[:cntrl:]]`: ASCII control characters.
    if user_name.chars().any(|c| c.is_ascii_control()) {
        refuse("runAsUserName cannot contain control characters");
        return;
    }
    let parts: Vec<&str> = user_name.split('\\').collect();
    if parts.len() > 2 {
        refuse("runAsUserName cannot contain more than one backslash");
        return;
    }
    let (domain, user) = match parts.as_slice() {
        [domain, user] => (Some(*domain), *user),
        _ => (None, user_name),
    };
    if domain.unwrap_or_default().len() >= MAX_RUN_AS_USER_NAME_DOMAIN_LENGTH {
        refuse(&format!(
            "runAsUserName's Domain length must be under {MAX_RUN_AS_USER_NAME_DOMAIN_LENGTH} characters"
        ));
    }
    if let Some(domain) = domain {
        if !(is_net_bios_domain(domain) || is_windows_dns_domain(domain)) {
            refuse("runAsUserName's Domain doesn't match the NetBios nor the DNS format");
        }
    }
    if user.is_empty() {
        refuse("runAsUserName's User cannot be empty");
    } else if user.len() > MAX_RUN_AS_USER_NAME_USER_LENGTH {
        refuse(&format!(
            "runAsUserName's User length must not be longer than {MAX_RUN_AS_USER_NAME_USER_LENGTH} characters"
        ));
    }
    if !user.is_empty() && user.chars().all(|c| c == '.' || c == ' ') {
        refuse("runAsUserName's User cannot contain only periods or spaces");
    }
    if user.chars().any(|c| "\"/\\:;|=,+*?<>@[]".contains(c)) {
        refuse(r#"runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]"#);
    }
}

/// Every container with its path, in `podshelper.VisitContainersWithPath`'s
/// order: init containers, containers, ephemeral containers.
pub fn visit_containers<'a>(spec: &'a Value, spec_path: &str) -> Vec<(&'a Value, String)> {
    let mut visited = Vec::new();
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let list_path = child(spec_path, list);
        for (position, container) in field::items_at(spec, list).iter().enumerate() {
            visited.push((container, index(&list_path, position)));
        }
    }
    visited
}

/// `validateWindowsHostProcessPod`.
pub fn windows_host_process(spec: &Value, spec_path: &str, errors: &mut Vec<FieldError>) {
    let host_process = |context: Option<&Value>| {
        context
            .and_then(|context| context.get("windowsOptions"))
            .and_then(|options| options.get("hostProcess"))
            .and_then(Value::as_bool)
    };
    let pod_host_process = host_process(spec.get("securityContext"));
    let mut containers = 0;
    let mut host_process_containers = 0;
    for (container, path) in visit_containers(spec, spec_path) {
        containers += 1;
        let container_host_process = host_process(container.get("securityContext"));
        if let (Some(pod), Some(own)) = (pod_host_process, container_host_process) {
            if pod != own {
                errors.push(field::invalid_rendered(
                    &child(
                        &child(&child(&path, "securityContext"), "windowsOptions"),
                        "hostProcess",
                    ),
                    &own.to_string(),
                    format!(
                        "pod hostProcess value must be identical if both are specified, was {pod}"
                    ),
                ));
            }
        }
        if container_host_process.or(pod_host_process) == Some(true) {
            host_process_containers += 1;
        }
    }
    if host_process_containers == 0 {
        return;
    }
    if host_process_containers != containers {
        errors.push(field::invalid(
            spec_path,
            "",
            "If pod contains any hostProcess containers then all containers must be HostProcess containers",
        ));
    }
    if !flag(spec, "hostNetwork") {
        errors.push(field::invalid_rendered(
            &child(spec_path, "hostNetwork"),
            "false",
            "hostNetwork must be true if pod contains any hostProcess containers",
        ));
    }
    if !capabilities::allow_privileged() {
        errors.push(field::forbidden(
            spec_path,
            "hostProcess containers are disallowed by cluster policy",
        ));
    }
}

/// `validateHostUsers`: `hostUsers: false` excludes the host namespaces
/// (kube's paths, capitals included).
pub fn host_users_rules(spec: &Value, spec_path: &str, errors: &mut Vec<FieldError>) {
    if host_users(spec) {
        return;
    }
    for (name, path_name) in [
        ("hostNetwork", "hostNetwork"),
        ("hostPID", "HostPID"),
        ("hostIPC", "HostIPC"),
    ] {
        if flag(spec, name) {
            errors.push(field::forbidden(
                &child(spec_path, path_name),
                "when `pod.Spec.HostUsers` is false",
            ));
        }
    }
}

#[cfg(test)]
#[path = "pod_security_tests.rs"]
mod tests;
