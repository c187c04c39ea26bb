//! Restricted checks (`policy/check_allowPrivilegeEscalation.go`,
//! `check_capabilities_restricted.go`, `check_restrictedVolumes.go`,
//! `check_runAsNonRoot.go`, `check_runAsUser.go`,
//! `check_seccompProfile_restricted.go`). From policy version 1.25 kube
//! skips allowPrivilegeEscalation, capabilities and seccomp for pods whose
//! `spec.os.name` is `windows` (the API refuses those fields there).

use serde_json::Value;

use super::host::volumes;
use super::linux::{bad_seccomp_type, capabilities, seccomp_forbidden_types};
use super::{
    containers_phrase, flag, join_quote, name, pluralize, present, security_context, Forbidden,
    Pod, SortedSet,
};

/// `allowPrivilegeEscalation_1_8`: every container sets
/// `allowPrivilegeEscalation: false`.
pub fn allow_privilege_escalation(pod: &Pod<'_>) -> Option<Forbidden> {
    let containers: Vec<String> = pod
        .containers()
        .filter(|container| {
            flag(security_context(container), "allowPrivilegeEscalation") != Some(false)
        })
        .map(name)
        .collect();
    if containers.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "allowPrivilegeEscalation != false",
        format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_phrase(&containers)
        ),
    ))
}

/// `allowPrivilegeEscalation_1_25`: Windows pods exempt.
pub fn allow_privilege_escalation_1_25(pod: &Pod<'_>) -> Option<Forbidden> {
    if pod.is_windows() {
        return None;
    }
    allow_privilege_escalation(pod)
}

/// `capabilitiesRestricted_1_22`: every container drops `ALL` and adds at
/// most `NET_BIND_SERVICE`.
pub fn capabilities_restricted(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut missing_drop_all = Vec::new();
    let mut adding_forbidden = Vec::new();
    let mut forbidden_capabilities = SortedSet::new();
    for container in pod.containers() {
        let Some(caps) = present(security_context(container).and_then(|c| c.get("capabilities")))
        else {
            missing_drop_all.push(name(container));
            continue;
        };
        if !capabilities(caps, "drop").any(|capability| capability == "ALL") {
            missing_drop_all.push(name(container));
        }
        let mut added_forbidden = false;
        for capability in capabilities(caps, "add") {
            if capability != "NET_BIND_SERVICE" {
                added_forbidden = true;
                forbidden_capabilities.insert(capability.to_string());
            }
        }
        if added_forbidden {
            adding_forbidden.push(name(container));
        }
    }
    let mut details = Vec::new();
    if !missing_drop_all.is_empty() {
        details.push(format!(
            r#"{} must set securityContext.capabilities.drop=["ALL"]"#,
            containers_phrase(&missing_drop_all)
        ));
    }
    if !adding_forbidden.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding_forbidden),
            join_quote(&forbidden_capabilities)
        ));
    }
    if details.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "unrestricted capabilities",
        details.join("; "),
    ))
}

/// `capabilitiesRestricted_1_25`: Windows pods exempt.
pub fn capabilities_restricted_1_25(pod: &Pod<'_>) -> Option<Forbidden> {
    if pod.is_windows() {
        return None;
    }
    capabilities_restricted(pod)
}

/// The volume sources the restricted level allows.
const ALLOWED_VOLUME_SOURCES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// The restricted volume sources, in the order kube names the first one
/// found.
const RESTRICTED_VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

/// `restrictedVolumes_1_0`: only the allowed inline volume sources.
pub fn restricted_volumes(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut bad_volumes = Vec::new();
    let mut bad_types = SortedSet::new();
    for volume in volumes(pod) {
        let has = |source: &&str| present(volume.get(*source)).is_some();
        if ALLOWED_VOLUME_SOURCES.iter().any(&has) {
            continue;
        }
        bad_volumes.push(name(volume));
        let source = RESTRICTED_VOLUME_SOURCES
            .iter()
            .find(|source| has(source))
            .copied()
            .unwrap_or("unknown");
        bad_types.insert(source.to_string());
    }
    if bad_volumes.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", bad_volumes.len()),
            join_quote(&bad_volumes),
            pluralize("uses", "use", bad_volumes.len()),
            pluralize(
                "restricted volume type",
                "restricted volume types",
                bad_types.len()
            ),
            join_quote(&bad_types)
        ),
    ))
}

/// `runAsNonRoot_1_0`: `runAsNonRoot: true` on the pod or every container,
/// and never `false`.
pub fn run_as_non_root(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut setters = Vec::new();
    let mut pod_run_as_non_root = false;
    match flag(pod.security_context(), "runAsNonRoot") {
        Some(false) => setters.push("pod".to_string()),
        Some(true) => pod_run_as_non_root = true,
        None => {}
    }
    let mut explicitly_bad = Vec::new();
    let mut implicitly_bad = Vec::new();
    for container in pod.containers() {
        match flag(security_context(container), "runAsNonRoot") {
            Some(false) => explicitly_bad.push(name(container)),
            Some(true) => {}
            None if !pod_run_as_non_root => implicitly_bad.push(name(container)),
            None => {}
        }
    }
    if !explicitly_bad.is_empty() {
        setters.push(containers_phrase(&explicitly_bad));
    }
    if !setters.is_empty() {
        return Some(Forbidden::new(
            "runAsNonRoot != true",
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                setters.join(" and ")
            ),
        ));
    }
    if implicitly_bad.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "runAsNonRoot != true",
        format!(
            "pod or {} must set securityContext.runAsNonRoot=true",
            containers_phrase(&implicitly_bad)
        ),
    ))
}

/// `runAsUser_1_23`: no `runAsUser: 0` on the pod or a container.
pub fn run_as_user(pod: &Pod<'_>) -> Option<Forbidden> {
    let is_root = |context: Option<&Value>| {
        context
            .and_then(|context| context.get("runAsUser"))
            .and_then(Value::as_i64)
            == Some(0)
    };
    let mut setters = Vec::new();
    if is_root(pod.security_context()) {
        setters.push("pod".to_string());
    }
    let containers: Vec<String> = pod
        .containers()
        .filter(|container| is_root(security_context(container)))
        .map(name)
        .collect();
    if !containers.is_empty() {
        setters.push(containers_phrase(&containers));
    }
    if setters.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", setters.join(" and ")),
    ))
}

/// `seccompProfileRestricted_1_19`: a `RuntimeDefault` or `Localhost`
/// profile on the pod or on every container.
pub fn seccomp_restricted(pod: &Pod<'_>) -> Option<Forbidden> {
    let mut setters = Vec::new();
    let mut values = SortedSet::new();
    let pod_context = pod.security_context();
    let mut pod_seccomp_set = false;
    if present(pod_context.and_then(|c| c.get("seccompProfile"))).is_some() {
        match bad_seccomp_type(pod_context) {
            Some(bad) => {
                setters.push("pod".to_string());
                values.insert(bad);
            }
            None => pod_seccomp_set = true,
        }
    }
    let mut explicitly_bad = Vec::new();
    let mut implicitly_bad = Vec::new();
    for container in pod.containers() {
        let context = security_context(container);
        if present(context.and_then(|c| c.get("seccompProfile"))).is_some() {
            if let Some(bad) = bad_seccomp_type(context) {
                explicitly_bad.push(name(container));
                values.insert(bad);
            }
        } else if !pod_seccomp_set {
            implicitly_bad.push(name(container));
        }
    }
    if !explicitly_bad.is_empty() {
        setters.push(containers_phrase(&explicitly_bad));
    }
    if !setters.is_empty() {
        return Some(seccomp_forbidden_types(&setters, &values));
    }
    if implicitly_bad.is_empty() {
        return None;
    }
    Some(Forbidden::new(
        "seccompProfile",
        format!(
            r#"pod or {} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#,
            containers_phrase(&implicitly_bad)
        ),
    ))
}

/// `seccompProfileRestricted_1_25`: Windows pods exempt.
pub fn seccomp_restricted_1_25(pod: &Pod<'_>) -> Option<Forbidden> {
    if pod.is_windows() {
        return None;
    }
    seccomp_restricted(pod)
}
