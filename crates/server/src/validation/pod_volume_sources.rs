//! Volume sources' own fields (`pkg/apis/core/validation/validation.go`):
//! `validateDownwardAPIVolumeSource`/`validateDownwardAPIVolumeFile`,
//! `validateProjectionSources` (secret, configMap, downwardAPI,
//! serviceAccountToken, clusterTrustBundle), and the small checks of
//! gcePersistentDisk, awsElasticBlockStore, glusterfs, flocker, rbd, cinder,
//! cephfs, fc, flexVolume, azureFile, azureDisk, gitRepo, iscsi, quobyte
//! (shared with PVs), vsphereVolume, photonPersistentDisk, portworxVolume,
//! scaleIO, storageos, csi and image (the ephemeral volume's claim template
//! is in `ephemeral_volume.rs`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::container::{object_field_selector, resource_field_selector};
use super::field::{self, child, index, key};
use super::pod_volumes::{file_mode, key_to_path, local_non_reserved_path};
use crate::status::FieldError;

/// `validVolumeDownwardAPIFieldPathExpressions`, sorted.
const VOLUME_FIELD_PATHS: [&str; 5] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];

/// `validateDownwardAPIVolumeFile`. kube passes the source's path, not the
/// item's, so every error names `<source>.path`, `<source>.fieldRef`, ...
fn downward_api_file(file: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let target = field::str_at(file, "path");
    let target_path = child(path, "path");
    if target.is_empty() {
        errors.push(field::required(&target_path, ""));
    }
    local_non_reserved_path(target, &target_path, errors);
    let field_ref = file.get("fieldRef").filter(|r| !r.is_null());
    let resource_ref = file.get("resourceFieldRef").filter(|r| !r.is_null());
    match (field_ref, resource_ref) {
        (Some(field_ref), resource_ref) => {
            object_field_selector(
                field_ref,
                &VOLUME_FIELD_PATHS,
                &child(path, "fieldRef"),
                errors,
            );
            if resource_ref.is_some() {
                errors.push(field::invalid(
                    path,
                    "resource",
                    "fieldRef and resourceFieldRef can not be specified simultaneously",
                ));
            }
        }
        (None, Some(resource_ref)) => {
            resource_field_selector(resource_ref, true, &child(path, "resourceFieldRef"), errors)
        }
        (None, None) => errors.push(field::required(
            path,
            "one of fieldRef and resourceFieldRef is required",
        )),
    }
    file_mode(file, "mode", path, errors);
}

/// The items of a `downwardAPI` volume (its `defaultMode` is checked by
/// the caller).
pub fn downward_api_items(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    for file in field::items_at(source, "items") {
        downward_api_file(file, path, errors);
    }
}

/// `validateProjectionSources`. `path` is the projected volume's.
pub fn projection_sources(projection: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let mut all_paths = BTreeSet::new();
    let mut claim = |target: &str, name: &str, errors: &mut Vec<FieldError>| {
        if !all_paths.insert(target.to_string()) {
            errors.push(field::invalid(path, name, "conflicting duplicate paths"));
        }
    };
    let sources_path = child(path, "sources");
    for (position, source) in field::items_at(projection, "sources").iter().enumerate() {
        let source_path = index(&sources_path, position);
        let mut count = 0;
        for kind in ["secret", "configMap"] {
            let Some(object) = source.get(kind).filter(|s| !s.is_null()) else {
                continue;
            };
            count += 1;
            let projection_path = child(&source_path, kind);
            let name = field::str_at(object, "name");
            if name.is_empty() {
                errors.push(field::required(&child(&projection_path, "name"), ""));
            }
            let items_path = child(&projection_path, "items");
            for (item_position, item) in field::items_at(object, "items").iter().enumerate() {
                key_to_path(item, &index(&items_path, item_position), errors);
                let target = field::str_at(item, "path");
                if !target.is_empty() {
                    claim(target, name, errors);
                }
            }
        }
        if let Some(object) = source.get("downwardAPI").filter(|s| !s.is_null()) {
            count += 1;
            let projection_path = child(&source_path, "downwardAPI");
            for file in field::items_at(object, "items") {
                downward_api_file(file, &projection_path, errors);
                let target = field::str_at(file, "path");
                if !target.is_empty() {
                    claim(target, target, errors);
                }
            }
        }
        if let Some(token) = source.get("serviceAccountToken").filter(|s| !s.is_null()) {
            count += 1;
            let projection_path = child(&source_path, "serviceAccountToken");
            let expiration = field::int_at(token, "expirationSeconds").unwrap_or(0);
            if expiration < 10 * 60 {
                errors.push(field::invalid_number(
                    &child(&projection_path, "expirationSeconds"),
                    expiration,
                    "may not specify a duration less than 10 minutes",
                ));
            }
            if expiration > 1 << 32 {
                errors.push(field::invalid_number(
                    &child(&projection_path, "expirationSeconds"),
                    expiration,
                    "may not specify a duration larger than 2^32 seconds",
                ));
            }
            // kube names the projected volume's `path` here, not the source's.
            let target = field::str_at(token, "path");
            if target.is_empty() {
                errors.push(field::required(&child(path, "path"), ""));
            } else {
                local_non_reserved_path(target, &child(path, "path"), errors);
            }
        }
        if let Some(bundle) = source.get("clusterTrustBundle").filter(|s| !s.is_null()) {
            count += 1;
            cluster_trust_bundle(bundle, &child(&source_path, "clusterTrustBundle"), errors);
            claim(
                field::str_at(bundle, "path"),
                field::str_at(bundle, "path"),
                errors,
            );
        }
        if count > 1 {
            errors.push(field::forbidden(
                &source_path,
                "may not specify more than 1 volume type per source",
            ));
        }
    }
}

/// The clusterTrustBundle part of `validateProjectionSources`: one of
/// `name` (a valid ClusterTrustBundle name, no label selector) and
/// `signerName` (`ValidateSignerName`, and its label selector), and a path.
fn cluster_trust_bundle(bundle: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let name = bundle.get("name").and_then(Value::as_str);
    let signer_name = bundle.get("signerName").and_then(Value::as_str);
    let selector = bundle.get("labelSelector").filter(|s| !s.is_null());
    match (name, signer_name) {
        (Some(_), Some(_)) => {
            let rendered = format!(
                "core.ClusterTrustBundleProjection{{Name:(*string)(0xc000000000), SignerName:(*string)(0xc000000000), LabelSelector:{}, Optional:{}, Path:{}}}",
                if selector.is_some() {
                    "(*v1.LabelSelector)(0xc000000000)"
                } else {
                    "(*v1.LabelSelector)(nil)"
                },
                if bundle.get("optional").is_some_and(|s| !s.is_null()) {
                    "(*bool)(0xc000000000)"
                } else {
                    "(*bool)(nil)"
                },
                crate::go::strconv::quote(field::str_at(bundle, "path")),
            );
            errors.push(field::invalid_rendered(
                path,
                &rendered,
                "only one of name and signerName may be used",
            ));
        }
        (Some(name), None) => {
            let name_path = child(path, "name");
            if name.is_empty() {
                errors.push(field::required(&name_path, "must be a valid object name"));
            }
            for message in cluster_trust_bundle_name_errors(name) {
                errors.push(field::invalid(
                    &name_path,
                    name,
                    format!("not a valid clustertrustbundlename: {message}"),
                ));
            }
            if selector.is_some() {
                errors.push(field::invalid_rendered(
                    &child(path, "labelSelector"),
                    "v1.LabelSelector{...}",
                    "labelSelector must be unset if name is specified",
                ));
            }
        }
        (None, Some(signer_name)) => {
            let signer_path = child(path, "signerName");
            if signer_name.is_empty() {
                errors.push(field::required(&signer_path, "must be a valid signer name"));
            }
            super::certificates::signer_name(&signer_path, signer_name, errors);
            if let Some(selector) = selector {
                super::selector::validate(selector, &child(path, "labelSelector"), errors);
            }
        }
        (None, None) => errors.push(field::required(
            path,
            "either name or signerName must be specified",
        )),
    }
    let target = field::str_at(bundle, "path");
    if target.is_empty() {
        errors.push(field::required(&child(path, "path"), ""));
    }
    local_non_reserved_path(target, &child(path, "path"), errors);
}

/// `ValidateClusterTrustBundleName` of the signer name
/// `extractSignerNameFromClusterTrustBundleName` reads from `name`
/// (`pkg/apis/certificates/validation`): a name with a `:` belongs to the
/// signer before its last `:` and must start with that signer's prefix.
fn cluster_trust_bundle_name_errors(name: &str) -> Vec<String> {
    let Some(split) = name.rfind(':') else {
        return crate::names::dns1123_subdomain(name);
    };
    let signer_name = name[..split].replace(':', "/");
    let prefix = format!("{}:", signer_name.replace('/', ":"));
    match name.strip_prefix(&prefix) {
        Some(rest) => crate::names::dns1123_subdomain(rest),
        None => vec![format!(
            "ClusterTrustBundle for signerName {signer_name} must be named with prefix {prefix}"
        )],
    }
}

fn require(source: &Value, name: &str, path: &str, errors: &mut Vec<FieldError>) {
    if field::str_at(source, name).is_empty() {
        errors.push(field::required(&child(path, name), ""));
    }
}

fn partition(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let value = field::int_at(source, "partition").unwrap_or(0);
    if !(0..=255).contains(&value) {
        errors.push(field::invalid_number(
            &child(path, "partition"),
            value,
            field::inclusive_range_error(1, 255),
        ));
    }
}

/// The sources `validateVolumeSource` checks with a small function of
/// their own; the others are accepted as they are.
pub fn other_source(kind: &str, source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    match kind {
        "gcePersistentDisk" => {
            require(source, "pdName", path, errors);
            partition(source, path, errors);
        }
        "awsElasticBlockStore" => {
            require(source, "volumeID", path, errors);
            partition(source, path, errors);
        }
        "glusterfs" => {
            require(source, "endpoints", path, errors);
            require(source, "path", path, errors);
        }
        "flocker" => {
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
        "rbd" => {
            if field::items_at(source, "monitors").is_empty() {
                errors.push(field::required(&child(path, "monitors"), ""));
            }
            require(source, "image", path, errors);
        }
        "cinder" => {
            require(source, "volumeID", path, errors);
            if let Some(reference) = source.get("secretRef").filter(|r| !r.is_null()) {
                if field::str_at(reference, "name").is_empty() {
                    errors.push(field::required(
                        &child(&child(path, "secretRef"), "name"),
                        "",
                    ));
                }
            }
        }
        "cephfs" if field::items_at(source, "monitors").is_empty() => {
            errors.push(field::required(&child(path, "monitors"), ""));
        }
        "fc" => super::pv_sources::fc(source, path, errors),
        "flexVolume" => {
            require(source, "driver", path, errors);
            for option in field::map_at(source, "options")
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                let namespace = option.split_once('/').map_or(option.as_str(), |(ns, _)| ns);
                let normalized = format!(".{}", namespace.to_lowercase());
                if normalized.ends_with(".kubernetes.io") || normalized.ends_with(".k8s.io") {
                    errors.push(field::invalid(
                        &key(&child(path, "options"), option),
                        option,
                        "kubernetes.io and k8s.io namespaces are reserved",
                    ));
                }
            }
        }
        "azureFile" => {
            require(source, "secretName", path, errors);
            require(source, "shareName", path, errors);
        }
        "azureDisk" => azure_disk(source, path, errors),
        "gitRepo" => {
            require(source, "repository", path, errors);
            super::pod_volumes::local_descending_path(
                field::str_at(source, "directory"),
                &child(path, "directory"),
                errors,
            );
        }
        "iscsi" => iscsi(source, path, errors),
        "quobyte" => super::pv_sources::quobyte(source, path, errors),
        "vsphereVolume" => require(source, "volumePath", path, errors),
        "photonPersistentDisk" => require(source, "pdID", path, errors),
        "portworxVolume" => require(source, "volumeID", path, errors),
        "scaleIO" => {
            for name in ["gateway", "system", "volumeName"] {
                require(source, name, path, errors);
            }
        }
        "storageos" => storageos(source, path, errors),
        "csi" => csi(source, path, errors),
        _ => {}
    }
}

/// `validateISCSIVolumeSource` (a pod's: the `secretRef` is a local
/// reference, not checked, and a name without a known prefix gets its own
/// message).
fn iscsi(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    const NO_PREFIX: &str = "must be valid format starting with iqn, eui, or naa";
    let has_prefix = |name: &str| ["iqn", "eui", "naa"].iter().any(|p| name.starts_with(p));
    require(source, "targetPortal", path, errors);
    let iqn = field::str_at(source, "iqn");
    if iqn.is_empty() {
        errors.push(field::required(&child(path, "iqn"), ""));
    } else if !has_prefix(iqn) {
        errors.push(field::invalid(&child(path, "iqn"), iqn, NO_PREFIX));
    } else if let Some(message) = super::pv_sources::iscsi_name_errors(iqn) {
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
    let secret = source.get("secretRef").filter(|r| !r.is_null());
    if (chap("chapAuthDiscovery") || chap("chapAuthSession")) && secret.is_none() {
        errors.push(field::required(&child(path, "secretRef"), ""));
    }
    if let Some(initiator) = source.get("initiatorName").filter(|n| !n.is_null()) {
        let initiator = initiator.as_str().unwrap_or_default();
        let initiator_path = child(path, "initiatorname");
        if !has_prefix(initiator) {
            errors.push(field::invalid(&initiator_path, initiator, NO_PREFIX));
        } else if let Some(message) = super::pv_sources::iscsi_name_errors(initiator) {
            errors.push(field::invalid(&initiator_path, initiator, message));
        }
    }
}

/// The check `validateVolumeSource` adds to an iSCSI volume with an
/// initiator name: `<volume name>:<target portal>` fits in 64 characters.
/// `volume_path` is the volume's own path.
pub fn iscsi_volume_name(
    source: &Value,
    volume_name: &str,
    volume_path: &str,
    errors: &mut Vec<FieldError>,
) {
    let portal = field::str_at(source, "targetPortal");
    if source.get("initiatorName").is_some_and(|n| !n.is_null())
        && volume_name.len() + 1 + portal.len() > 64
    {
        errors.push(field::invalid(
            &child(volume_path, "name"),
            volume_name,
            "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.",
        ));
    }
}

/// `validateStorageOSVolumeSource` (a pod's: the secret is a local reference).
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
    if let Some(secret) = source.get("secretRef").filter(|r| !r.is_null()) {
        require(secret, "name", &child(path, "secretRef"), errors);
    }
}

/// `validateCSIVolumeSource`: the driver's name (`ValidateCSIDriverName`)
/// and the node publish secret's name. kube reports an invalid secret name
/// under `csi.name`, not `csi.nodePublishSecretRef.name`.
fn csi(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    errors.extend(super::storage::csi_driver_name(
        field::str_at(source, "driver"),
        &child(path, "driver"),
    ));
    let Some(secret) = source.get("nodePublishSecretRef").filter(|r| !r.is_null()) else {
        return;
    };
    let name = field::str_at(secret, "name");
    if name.is_empty() {
        errors.push(field::required(
            &child(&child(path, "nodePublishSecretRef"), "name"),
            "",
        ));
    } else {
        for message in crate::names::dns1123_subdomain(name) {
            errors.push(field::invalid(&child(path, "name"), name, message));
        }
    }
}

const PULL_POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];

/// `validateImageVolumeSource`: a reference (only in a Pod's own spec, so
/// that a workload's template may leave it to a controller) and a pull policy.
pub fn image(source: &Value, path: &str, resource_is_pod: bool, errors: &mut Vec<FieldError>) {
    if resource_is_pod {
        require(source, "reference", path, errors);
    }
    let policy = field::str_at(source, "pullPolicy");
    let policy_path = child(path, "pullPolicy");
    if policy.is_empty() {
        errors.push(field::required(&policy_path, ""));
    } else if !PULL_POLICIES.contains(&policy) {
        errors.push(field::not_supported(&policy_path, policy, &PULL_POLICIES));
    }
}

/// `validateAzureDisk`.
fn azure_disk(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    require(source, "diskName", path, errors);
    require(source, "diskURI", path, errors);
    if let Some(mode) = source.get("cachingMode").and_then(Value::as_str) {
        if !["None", "ReadOnly", "ReadWrite"].contains(&mode) {
            errors.push(field::not_supported(
                &child(path, "cachingMode"),
                mode,
                &["None", "ReadOnly", "ReadWrite"],
            ));
        }
    }
    let kind = source.get("kind").and_then(Value::as_str);
    if let Some(kind) = kind {
        if !["Dedicated", "Managed", "Shared"].contains(&kind) {
            errors.push(field::not_supported(
                &child(path, "kind"),
                kind,
                &["Dedicated", "Managed", "Shared"],
            ));
        }
    }
    let uri = field::str_at(source, "diskURI");
    match kind {
        Some("Managed") if !uri.starts_with("/subscriptions/") => {
            errors.push(field::not_supported(
                &child(path, "diskURI"),
                uri,
                &["/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"],
            ))
        }
        Some(kind) if kind != "Managed" && !uri.starts_with("https://") => {
            errors.push(field::not_supported(
                &child(path, "diskURI"),
                uri,
                &["https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"],
            ))
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "pod_volume_sources_tests.rs"]
mod tests;
