//! The field rules of a PersistentVolume's deprecated in-tree volume sources,
//! as `ValidatePersistentVolumeSpec` calls them
//! (`pkg/apis/core/validation/validation.go`: the `PersistentVolume`
//! variants where kube has one — `validateGlusterfsPersistentVolumeSource`,
//! `validateRBDPersistentVolumeSource`, `validateCephFSPersistentVolumeSource`,
//! `validateISCSIPersistentVolumeSource`, `validateCinderPersistentVolumeSource`,
//! `validateFlexPersistentVolumeSource`, `validateAzureFilePV`,
//! `validateScaleIOPersistentVolumeSource`,
//! `validateStorageOSPersistentVolumeSource` — and the shared
//! `validateFlockerVolumeSource`, `validateQuobyteVolumeSource`,
//! `validateFCVolumeSource`, `validateVsphereVolumeSource`,
//! `validatePhotonPersistentDiskVolumeSource`, `validatePortworxVolumeSource`
//! and `validateAzureDisk`).

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::field::{self, child, key};
use crate::status::FieldError;

/// `iscsiInitiatorIqnRegex` (not anchored at the start, as kube's), with
/// Go's ASCII `\d` and `\s`.
static ISCSI_IQN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"iqn\.[0-9]{4}-[0-9]{2}\.([[:alnum:].\-]+)(:[^,;*&$|\t\n\f\r ]+)$").ok()
});
static ISCSI_EUI: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^eui.[[:alnum:]]{16}$").ok());
static ISCSI_NAA: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^naa.[[:alnum:]]{32}$").ok());

const AZURE_CACHING_MODES: [&str; 3] = ["None", "ReadOnly", "ReadWrite"];
const AZURE_DISK_KINDS: [&str; 3] = ["Dedicated", "Managed", "Shared"];

fn set<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|value| !value.is_null())
}

fn required_string(source: &Value, name: &str, path: &str, errors: &mut Vec<FieldError>) {
    if field::str_at(source, name).is_empty() {
        errors.push(field::required(&child(path, name), ""));
    }
}

/// The rules of the in-tree source `name` (a key of `PersistentVolumeSpec`)
/// reported under `path`; `pv_name` is the volume's name (iSCSI limits it).
pub fn in_tree(
    name: &str,
    source: &Value,
    path: &str,
    pv_name: &str,
    errors: &mut Vec<FieldError>,
) {
    match name {
        "glusterfs" => glusterfs(source, path, errors),
        "flocker" => flocker(source, path, errors),
        "rbd" => {
            if field::items_at(source, "monitors").is_empty() {
                errors.push(field::required(&child(path, "monitors"), ""));
            }
            required_string(source, "image", path, errors);
        }
        "quobyte" => quobyte(source, path, errors),
        "cephfs" if field::items_at(source, "monitors").is_empty() => {
            errors.push(field::required(&child(path, "monitors"), ""));
        }
        "iscsi" => iscsi(source, pv_name, path, errors),
        "cinder" => {
            required_string(source, "volumeID", path, errors);
            secret_reference(source, path, errors);
        }
        "fc" => fc(source, path, errors),
        "flexVolume" => flex(source, path, errors),
        "azureFile" => {
            required_string(source, "secretName", path, errors);
            required_string(source, "shareName", path, errors);
            if source
                .get("secretNamespace")
                .and_then(Value::as_str)
                .is_some_and(str::is_empty)
            {
                errors.push(field::required(&child(path, "secretNamespace"), ""));
            }
        }
        "vsphereVolume" => required_string(source, "volumePath", path, errors),
        "photonPersistentDisk" => required_string(source, "pdID", path, errors),
        "portworxVolume" => required_string(source, "volumeID", path, errors),
        "azureDisk" => azure_disk(source, path, errors),
        "scaleIO" => {
            for name in ["gateway", "system", "volumeName"] {
                required_string(source, name, path, errors);
            }
        }
        "storageos" => storageos(source, path, errors),
        _ => {}
    }
}

/// `validateGlusterfsPersistentVolumeSource`.
fn glusterfs(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    required_string(source, "endpoints", path, errors);
    required_string(source, "path", path, errors);
    let Some(namespace) = source.get("endpointsNamespace").and_then(Value::as_str) else {
        return;
    };
    let namespace_path = child(path, "endpointsNamespace");
    if namespace.is_empty() {
        errors.push(field::invalid(
            &namespace_path,
            namespace,
            "if the endpointnamespace is set, it must be a valid namespace name",
        ));
    } else {
        for message in crate::names::dns1123_label(namespace) {
            errors.push(field::invalid(&namespace_path, namespace, message));
        }
    }
}

/// `validateFlockerVolumeSource`.
fn flocker(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let name = field::str_at(source, "datasetName");
    let uuid = field::str_at(source, "datasetUUID");
    if name.is_empty() && uuid.is_empty() {
        errors.push(field::required(
            path,
            "one of datasetName and datasetUUID is required",
        ));
    }
    if !name.is_empty() && !uuid.is_empty() {
        errors.push(field::invalid(
            path,
            "resource",
            "datasetName and datasetUUID can not be specified simultaneously",
        ));
    }
    if name.contains('/') {
        errors.push(field::invalid(
            &child(path, "datasetName"),
            name,
            "must not contain '/'",
        ));
    }
}

/// Whether Go's `net.SplitHostPort` accepts `address`.
fn splits_into_host_and_port(address: &str) -> bool {
    let Some(last_colon) = address.rfind(':') else {
        return false;
    };
    let (mut host_start, mut host_end) = (0, 0);
    if address.starts_with('[') {
        let Some(end) = address.find(']') else {
            return false;
        };
        if end + 1 != last_colon {
            return false;
        }
        (host_start, host_end) = (1, end + 1);
    } else if address[..last_colon].contains(':') {
        return false;
    }
    !address[host_start..].contains('[') && !address[host_end..].contains(']')
}

/// `validateQuobyteVolumeSource`.
pub(super) fn quobyte(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    const REGISTRY: &str = "must be a host:port pair or multiple pairs separated by commas";
    let registry = field::str_at(source, "registry");
    if registry.is_empty() {
        errors.push(field::required(&child(path, "registry"), REGISTRY));
    } else if field::str_at(source, "tenant").len() >= 65 {
        errors.push(field::required(
            &child(path, "tenant"),
            "must be a UUID and may not exceed a length of 64 characters",
        ));
    } else {
        for pair in registry.split(',') {
            if !splits_into_host_and_port(pair) {
                errors.push(field::invalid(&child(path, "registry"), registry, REGISTRY));
            }
        }
    }
    required_string(source, "volume", path, errors);
}

/// Whether an iSCSI qualified name has a known prefix and its format.
pub(super) fn iscsi_name_errors(name: &str) -> Option<&'static str> {
    let matches = |regex: &LazyLock<Option<Regex>>| {
        regex
            .as_ref()
            .is_some_and(|regex: &Regex| regex.is_match(name))
    };
    if !name.starts_with("iqn") && !name.starts_with("eui") && !name.starts_with("naa") {
        return Some("must be valid format");
    }
    let valid = if name.starts_with("iqn") {
        matches(&ISCSI_IQN)
    } else if name.starts_with("eui") {
        matches(&ISCSI_EUI)
    } else {
        matches(&ISCSI_NAA)
    };
    (!valid).then_some("must be valid format")
}

/// `validateISCSIPersistentVolumeSource`.
fn iscsi(source: &Value, pv_name: &str, path: &str, errors: &mut Vec<FieldError>) {
    let portal = field::str_at(source, "targetPortal");
    if portal.is_empty() {
        errors.push(field::required(&child(path, "targetPortal"), ""));
    }
    let initiator = set(source, "initiatorName").map(|name| name.as_str().unwrap_or_default());
    if initiator.is_some() && pv_name.len() + 1 + portal.len() > 64 {
        errors.push(field::invalid(
            &child(path, "targetportal"),
            portal,
            "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.",
        ));
    }
    let iqn = field::str_at(source, "iqn");
    if iqn.is_empty() {
        errors.push(field::required(&child(path, "iqn"), ""));
    } else if let Some(message) = iscsi_name_errors(iqn) {
        errors.push(field::invalid(&child(path, "iqn"), iqn, message));
    }
    let lun = field::int_at(source, "lun").unwrap_or(0);
    if !(0..=255).contains(&lun) {
        errors.push(field::invalid_number(
            &child(path, "lun"),
            lun,
            field::inclusive_range_error(0, 255),
        ));
    }
    let chap = |name: &str| source.get(name).and_then(Value::as_bool) == Some(true);
    let secret = set(source, "secretRef");
    if (chap("chapAuthDiscovery") || chap("chapAuthSession")) && secret.is_none() {
        errors.push(field::required(&child(path, "secretRef"), ""));
    }
    if let Some(secret) = secret {
        if field::str_at(secret, "name").is_empty() {
            errors.push(field::required(
                &child(&child(path, "secretRef"), "name"),
                "",
            ));
        }
    }
    if let Some(initiator) = initiator {
        if let Some(message) = iscsi_name_errors(initiator) {
            errors.push(field::invalid(
                &child(path, "initiatorname"),
                initiator,
                message,
            ));
        }
    }
}

/// `validateFCVolumeSource` (pod volumes and PersistentVolumes share it).
pub(super) fn fc(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let targets = field::items_at(source, "targetWWNs");
    let ids = field::items_at(source, "wwids");
    let targets_path = child(path, "targetWWNs");
    if targets.is_empty() && ids.is_empty() {
        errors.push(field::required(
            &targets_path,
            "must specify either targetWWNs or wwids, but not both",
        ));
    }
    if !targets.is_empty() && !ids.is_empty() {
        errors.push(field::invalid_rendered(
            &targets_path,
            &super::selector::go_string_slice(source.get("targetWWNs")),
            "targetWWNs and wwids can not be specified simultaneously",
        ));
    }
    if !targets.is_empty() {
        match field::int_at(source, "lun") {
            None => errors.push(field::required(
                &child(path, "lun"),
                "lun is required if targetWWNs is specified",
            )),
            Some(lun) if !(0..=255).contains(&lun) => errors.push(field::invalid_number(
                &child(path, "lun"),
                lun,
                field::inclusive_range_error(0, 255),
            )),
            Some(_) => {}
        }
    }
}

/// `validateFlexPersistentVolumeSource`: a driver, and no option key in the
/// `kubernetes.io` or `k8s.io` namespaces.
fn flex(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    required_string(source, "driver", path, errors);
    let options_path = child(path, "options");
    for option in field::map_at(source, "options")
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        let namespace = option.split_once('/').map_or(option.as_str(), |(ns, _)| ns);
        let normalized = format!(".{}", namespace.to_lowercase());
        if normalized.ends_with(".kubernetes.io") || normalized.ends_with(".k8s.io") {
            errors.push(field::invalid(
                &key(&options_path, option),
                option,
                "kubernetes.io and k8s.io namespaces are reserved",
            ));
        }
    }
}

/// `validateAzureDisk`.
fn azure_disk(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    required_string(source, "diskName", path, errors);
    let uri = field::str_at(source, "diskURI");
    if uri.is_empty() {
        errors.push(field::required(&child(path, "diskURI"), ""));
    }
    if let Some(mode) = set(source, "cachingMode") {
        let mode = mode.as_str().unwrap_or_default();
        if !AZURE_CACHING_MODES.contains(&mode) {
            errors.push(field::not_supported(
                &child(path, "cachingMode"),
                mode,
                &AZURE_CACHING_MODES,
            ));
        }
    }
    let Some(kind) = set(source, "kind") else {
        return;
    };
    let kind = kind.as_str().unwrap_or_default();
    if !AZURE_DISK_KINDS.contains(&kind) {
        errors.push(field::not_supported(
            &child(path, "kind"),
            kind,
            &AZURE_DISK_KINDS,
        ));
    }
    if kind == "Managed" && !uri.starts_with("/subscriptions/") {
        errors.push(field::not_supported(
            &child(path, "diskURI"),
            uri,
            &["/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"],
        ));
    }
    if kind != "Managed" && !uri.starts_with("https://") {
        errors.push(field::not_supported(
            &child(path, "diskURI"),
            uri,
            &["https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"],
        ));
    }
}

/// `validateStorageOSPersistentVolumeSource`.
fn storageos(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let volume = field::str_at(source, "volumeName");
    if volume.is_empty() {
        errors.push(field::required(&child(path, "volumeName"), ""));
    } else {
        field::dns1123_label(&child(path, "volumeName"), volume, errors);
    }
    let namespace = field::str_at(source, "volumeNamespace");
    if !namespace.is_empty() {
        field::dns1123_label(&child(path, "volumeNamespace"), namespace, errors);
    }
    secret_reference(source, path, errors);
}

/// A PV source's `secretRef` (a `SecretReference`): when set, a name and a namespace.
fn secret_reference(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(secret) = set(source, "secretRef") else {
        return;
    };
    let secret_path = child(path, "secretRef");
    required_string(secret, "name", &secret_path, errors);
    required_string(secret, "namespace", &secret_path, errors);
}

#[cfg(test)]
#[path = "pv_sources_tests.rs"]
mod tests;
