//! Pod volumes and volume mounts (`ValidateVolumes`, `validateVolumeSource`,
//! `ValidateVolumeMounts` in `pkg/apis/core/validation/validation.go`): unique
//! DNS-1123 names, exactly one source, the common sources' required fields
//! (the others' in `pod_volume_sources.rs` and `ephemeral_volume.rs`), no
//! claim an ephemeral volume creates referenced, mounts that name a volume,
//! unique mount paths, relative sub-paths.

use std::collections::BTreeSet;

use serde_json::Value;

use super::field::{self, child, index};
use super::{ephemeral_volume, pod_volume_sources, quota};
use crate::status::FieldError;

/// Every volume source of `core.VolumeSource`, in the order
/// `validateVolumeSource` looks at them.
const SOURCES: [&str; 30] = [
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
];

const FILE_MODE_ERROR: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// What `ValidateVolumes` knows of the pod beyond its volumes: its name
/// (`podMeta.Name`, empty for most templates) and kube's
/// `PodValidationOptions.ResourceIsPod`.
#[derive(Clone, Copy)]
pub struct PodContext<'a> {
    pub pod_name: &'a str,
    pub resource_is_pod: bool,
}

/// `ValidateVolumes`: the names of the valid volumes.
pub fn volumes(
    list: &[Value],
    pod: PodContext<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) -> BTreeSet<String> {
    // The claims this pod's ephemeral volumes will create.
    let created_claims: BTreeSet<String> = if pod.pod_name.is_empty() {
        BTreeSet::new()
    } else {
        list.iter()
            .filter(|volume| volume.get("ephemeral").is_some_and(|e| !e.is_null()))
            .map(|volume| format!("{}-{}", pod.pod_name, field::str_at(volume, "name")))
            .collect()
    };
    let mut names = BTreeSet::new();
    for (position, volume) in list.iter().enumerate() {
        let item_path = index(path, position);
        let name_path = child(&item_path, "name");
        let mut volume_errors = Vec::new();
        let name = field::str_at(volume, "name");
        source(volume, pod, &item_path, &mut volume_errors);
        if name.is_empty() {
            volume_errors.push(field::required(&name_path, ""));
        } else {
            field::dns1123_label(&name_path, name, &mut volume_errors);
        }
        if names.contains(name) {
            volume_errors.push(field::duplicate(&name_path, name));
        }
        if volume_errors.is_empty() {
            names.insert(name.to_string());
        } else {
            errors.extend(volume_errors);
        }
        if let Some(claim) = volume
            .get("persistentVolumeClaim")
            .filter(|claim| !claim.is_null())
        {
            let claim_name = field::str_at(claim, "claimName");
            if created_claims.contains(claim_name) {
                errors.push(field::invalid(
                    &child(&child(&item_path, "persistentVolumeClaim"), "claimName"),
                    claim_name,
                    "must not reference a PVC that gets created for an ephemeral volume",
                ));
            }
        }
    }
    names
}

/// The path a second source is reported at (kube's spelling), and the path
/// a source's own rules report under.
fn source_paths(name: &str) -> (&str, &str) {
    match name {
        "cephfs" => ("cephFS", "cephfs"),
        "downwardAPI" => ("downwarAPI", "downwardAPI"),
        "gcePersistentDisk" => ("gcePersistentDisk", "persistentDisk"),
        other => (other, other),
    }
}

/// `validateVolumeSource`: exactly one source, and its own rules.
fn source(volume: &Value, pod: PodContext<'_>, path: &str, errors: &mut Vec<FieldError>) {
    let volume_name = field::str_at(volume, "name");
    let mut count = 0;
    for name in SOURCES {
        let Some(source) = volume.get(name).filter(|source| !source.is_null()) else {
            continue;
        };
        let (forbidden_path, rules_path) = source_paths(name);
        if count > 0 {
            errors.push(field::forbidden(
                &child(path, forbidden_path),
                "may not specify more than 1 volume type",
            ));
            if name == "iscsi" {
                pod_volume_sources::iscsi_volume_name(source, volume_name, path, errors);
            }
            continue;
        }
        count += 1;
        let source_path = child(path, rules_path);
        match name {
            "emptyDir" => {
                if let Some(limit) = source.get("sizeLimit").filter(|l| !l.is_null()) {
                    if quota::quantity(limit).sign() < 0 {
                        errors.push(field::forbidden(
                            &child(&source_path, "sizeLimit"),
                            "SizeLimit field must be a valid resource quantity",
                        ));
                    }
                }
            }
            "hostPath" => host_path(source, &source_path, errors),
            "secret" => {
                if field::str_at(source, "secretName").is_empty() {
                    errors.push(field::required(&child(&source_path, "secretName"), ""));
                }
                projection(source, &source_path, errors);
            }
            "configMap" => {
                if field::str_at(source, "name").is_empty() {
                    errors.push(field::required(&child(&source_path, "name"), ""));
                }
                projection(source, &source_path, errors);
            }
            "persistentVolumeClaim" => errors.extend(
                field::str_at(source, "claimName")
                    .is_empty()
                    .then(|| field::required(&child(&source_path, "claimName"), "")),
            ),
            "nfs" => {
                if field::str_at(source, "server").is_empty() {
                    errors.push(field::required(&child(&source_path, "server"), ""));
                }
                let nfs_path = field::str_at(source, "path");
                if nfs_path.is_empty() {
                    errors.push(field::required(&child(&source_path, "path"), ""));
                }
                // `path.IsAbs("")` is false: an empty path gets both errors.
                if !nfs_path.starts_with('/') {
                    errors.push(field::invalid(
                        &child(&source_path, "path"),
                        nfs_path,
                        "must be an absolute path",
                    ));
                }
            }
            "downwardAPI" => {
                default_mode(source, &source_path, errors);
                pod_volume_sources::downward_api_items(source, &source_path, errors);
            }
            "projected" => {
                default_mode(source, &source_path, errors);
                pod_volume_sources::projection_sources(source, &source_path, errors);
            }
            "iscsi" => {
                pod_volume_sources::other_source(name, source, &source_path, errors);
                pod_volume_sources::iscsi_volume_name(source, volume_name, path, errors);
            }
            "ephemeral" => {
                ephemeral_volume::ephemeral_source(source, &source_path, errors);
                errors.extend(ephemeral_volume::claim_name(
                    pod.pod_name,
                    volume_name,
                    path,
                ));
            }
            "image" => pod_volume_sources::image(source, &source_path, pod.resource_is_pod, errors),
            other => pod_volume_sources::other_source(other, source, &source_path, errors),
        }
    }
    if count == 0 {
        errors.push(field::required(path, "must specify a volume type"));
    }
}

const HOST_PATH_TYPES: [&str; 8] = [
    "",
    "DirectoryOrCreate",
    "Directory",
    "FileOrCreate",
    "File",
    "Socket",
    "CharDevice",
    "BlockDevice",
];

/// `validateHostPathVolumeSource`.
pub fn host_path(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let host_path = field::str_at(source, "path");
    if host_path.is_empty() {
        errors.push(field::required(&child(path, "path"), ""));
        return;
    }
    // `validatePathNoBacksteps`: `filepath.ToSlash` leaves `\` alone on
    // the Linux kube-apiserver runs on, so only `/` separates elements.
    if host_path.split('/').any(|part| part == "..") {
        errors.push(field::invalid(
            &child(path, "path"),
            host_path,
            "must not contain '..'",
        ));
    }
    let kind = field::str_at(source, "type");
    if !HOST_PATH_TYPES.contains(&kind) {
        errors.push(field::not_supported(
            &child(path, "type"),
            kind,
            &HOST_PATH_TYPES,
        ));
    }
}

fn default_mode(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    file_mode(source, "defaultMode", path, errors);
}

/// The `defaultMode` and `items` (`validateKeyToPath`) of a Secret or ConfigMap volume.
fn projection(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    default_mode(source, path, errors);
    let items_path = child(path, "items");
    for (position, item) in field::items_at(source, "items").iter().enumerate() {
        key_to_path(item, &index(&items_path, position), errors);
    }
}

/// `validateKeyToPath`.
pub fn key_to_path(item: &Value, item_path: &str, errors: &mut Vec<FieldError>) {
    if field::str_at(item, "key").is_empty() {
        errors.push(field::required(&child(item_path, "key"), ""));
    }
    let target = field::str_at(item, "path");
    let target_path = child(item_path, "path");
    if target.is_empty() {
        errors.push(field::required(&target_path, ""));
    }
    local_non_reserved_path(target, &target_path, errors);
    file_mode(item, "mode", item_path, errors);
}

/// A file mode field (`mode`, `defaultMode`) within 0..=0777.
pub fn file_mode(holder: &Value, name: &str, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(mode) = field::int_at(holder, name) {
        if !(0..=0o777).contains(&mode) {
            errors.push(field::invalid_number(
                &child(path, name),
                mode,
                FILE_MODE_ERROR,
            ));
        }
    }
}

/// `ValidateLocalNonReservedPath`: relative, no `..` element, not starting
/// with `..` (reported once when it starts with `../`).
pub fn local_non_reserved_path(target: &str, path: &str, errors: &mut Vec<FieldError>) {
    local_descending_path(target, path, errors);
    if target.starts_with("..") && !target.starts_with("../") {
        errors.push(field::invalid(path, target, "must not start with '..'"));
    }
}

/// `validateLocalDescendingPath`: relative, no `..` element.
pub fn local_descending_path(target: &str, path: &str, errors: &mut Vec<FieldError>) {
    if target.starts_with('/') {
        errors.push(field::invalid(path, target, "must be a relative path"));
    }
    if target.split('/').any(|part| part == "..") {
        errors.push(field::invalid(path, target, "must not contain '..'"));
    }
}

/// `ValidateVolumeMounts` of `container`'s mounts.
pub fn mounts(
    list: &[Value],
    volumes: &BTreeSet<String>,
    container: &Value,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let mut mount_points = BTreeSet::new();
    for (position, mount) in list.iter().enumerate() {
        let item_path = index(path, position);
        let name = field::str_at(mount, "name");
        if name.is_empty() {
            errors.push(field::required(&child(&item_path, "name"), ""));
        }
        if !volumes.contains(name) {
            errors.push(field::not_found(&child(&item_path, "name"), name));
        }
        let mount_path = field::str_at(mount, "mountPath");
        if mount_path.is_empty() {
            errors.push(field::required(&child(&item_path, "mountPath"), ""));
        }
        if !mount_points.insert(mount_path) {
            errors.push(field::invalid(
                &child(&item_path, "mountPath"),
                mount_path,
                "must be unique",
            ));
        }
        // `mountNameAlreadyExists`, `mountPathAlreadyExists`.
        let devices = field::items_at(container, "volumeDevices");
        if devices.iter().any(|d| field::str_at(d, "name") == name) {
            errors.push(field::invalid(
                &child(&item_path, "name"),
                name,
                "must not already exist in volumeDevices",
            ));
        }
        if devices
            .iter()
            .any(|d| field::str_at(d, "devicePath") == mount_path)
        {
            errors.push(field::invalid(
                &child(&item_path, "mountPath"),
                mount_path,
                "must not already exist as a path in volumeDevices",
            ));
        }
        // kube passes the list's path, not the item's, for these two.
        let sub_path = field::str_at(mount, "subPath");
        if !sub_path.is_empty() {
            local_descending_path(sub_path, &child(path, "subPath"), errors);
        }
        let sub_path_expr = field::str_at(mount, "subPathExpr");
        if !sub_path_expr.is_empty() {
            if !sub_path.is_empty() {
                errors.push(field::invalid(
                    &child(&item_path, "subPathExpr"),
                    sub_path_expr,
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            local_descending_path(sub_path_expr, &child(path, "subPathExpr"), errors);
        }
        // The list's path again, as kube passes it.
        if let Some(mode) = mount.get("mountPropagation").and_then(Value::as_str) {
            mount_propagation(mode, container, &child(path, "mountPropagation"), errors);
        }
        recursive_read_only(mount, &child(path, "recursiveReadOnly"), errors);
    }
}

/// `validateMountPropagation`: a known mode, and `Bidirectional` only in a
/// privileged container.
fn mount_propagation(mode: &str, container: &Value, path: &str, errors: &mut Vec<FieldError>) {
    const MODES: [&str; 3] = ["Bidirectional", "HostToContainer", "None"];
    if !MODES.contains(&mode) {
        errors.push(field::not_supported(path, mode, &MODES));
    }
    let privileged = container
        .pointer("/securityContext/privileged")
        .and_then(Value::as_bool)
        == Some(true);
    if mode == "Bidirectional" && !privileged {
        errors.push(field::forbidden(
            path,
            "Bidirectional mount propagation is available only to privileged containers",
        ));
    }
}

/// `validateMountRecursiveReadOnly`: `Enabled` and `IfPossible` need
/// `readOnly: true` and a propagation of `None` or none at all.
fn recursive_read_only(mount: &Value, path: &str, errors: &mut Vec<FieldError>) {
    const MODES: [&str; 3] = ["Disabled", "Enabled", "IfPossible"];
    let Some(mode) = mount.get("recursiveReadOnly").and_then(Value::as_str) else {
        return;
    };
    match mode {
        "Disabled" => {}
        "Enabled" | "IfPossible" => {
            if mount.get("readOnly").and_then(Value::as_bool) != Some(true) {
                errors.push(field::forbidden(
                    path,
                    "may only be specified when readOnly is true",
                ));
            }
            let propagation = mount.get("mountPropagation").and_then(Value::as_str);
            if propagation.is_some_and(|propagation| propagation != "None") {
                errors.push(field::forbidden(
                    path,
                    "may only be specified when mountPropagation is None or not specified",
                ));
            }
        }
        _ => errors.push(field::not_supported(path, mode, &MODES)),
    }
}
