//! Volume sources' own fields (`pkg/apis/core/validation/validation.go`):
//! `validateDownwardAPIVolumeSource`/`validateDownwardAPIVolumeFile`,
//! `validateProjectionSources` (secret, configMap, downwardAPI,
//! serviceAccountToken, clusterTrustBundle), and the small checks of
//! gcePersistentDisk, awsElasticBlockStore, glusterfs, flocker, rbd, cinder,
//! cephfs, fc, flexVolume, azureFile and azureDisk.

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
/// `name` and `signerName`, and a path. The name's and signer name's
/// formats and the label selector are not checked here.
fn cluster_trust_bundle(bundle: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let name = bundle.get("name").and_then(Value::as_str);
    let signer_name = bundle.get("signerName").and_then(Value::as_str);
    match (name, signer_name) {
        (Some(_), Some(_)) => {
            let rendered = format!(
                "core.ClusterTrustBundleProjection{{Name:(*string)(0xc000000000), SignerName:(*string)(0xc000000000), LabelSelector:{}, Optional:{}, Path:{}}}",
                if bundle.get("labelSelector").is_some_and(|s| !s.is_null()) {
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
            if name.is_empty() {
                errors.push(field::required(
                    &child(path, "name"),
                    "must be a valid object name",
                ));
            }
            if bundle.get("labelSelector").is_some_and(|s| !s.is_null()) {
                errors.push(field::invalid_rendered(
                    &child(path, "labelSelector"),
                    "v1.LabelSelector{...}",
                    "labelSelector must be unset if name is specified",
                ));
            }
        }
        (None, Some(signer_name)) => {
            if signer_name.is_empty() {
                errors.push(field::required(
                    &child(path, "signerName"),
                    "must be a valid signer name",
                ));
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
        "fc" => fibre_channel(source, path, errors),
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
        _ => {}
    }
}

/// `validateFCVolumeSource`.
fn fibre_channel(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let targets = field::items_at(source, "targetWWNs");
    let wwids = field::items_at(source, "wwids");
    let targets_path = child(path, "targetWWNs");
    if targets.is_empty() && wwids.is_empty() {
        errors.push(field::required(
            &targets_path,
            "must specify either targetWWNs or wwids, but not both",
        ));
    }
    if !targets.is_empty() && !wwids.is_empty() {
        let rendered = format!(
            "[]string{{{}}}",
            targets
                .iter()
                .map(|t| crate::go::strconv::quote(t.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        errors.push(field::invalid_rendered(
            &targets_path,
            &rendered,
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
