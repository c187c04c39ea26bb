//! PersistentVolume and PersistentVolumeClaim validation
//! (`pkg/apis/core/validation/validation.go` `ValidatePersistentVolume`,
//! `ValidatePersistentVolumeSpec`, `ValidatePersistentVolumeUpdate`,
//! `ValidatePersistentVolumeClaim`, `ValidatePersistentVolumeClaimSpec`,
//! `ValidatePersistentVolumeClaimUpdate`), with the VolumeAttributesClass
//! feature on as in 1.34. Of the volume sources, exactly one must be set;
//! hostPath, local, nfs, csi, gcePersistentDisk and awsElasticBlockStore get
//! their own field rules here, the other (deprecated in-tree) sources theirs
//! in `pv_sources.rs`; `nodeAffinity` is `validateVolumeNodeAffinity` and,
//! on update, `validatePvNodeAffinity`.

use serde_json::{Map, Value};

use super::field::{self, child, key};
use super::{node_selector, pod_volumes, pv_sources, quota, selector};
use crate::status::FieldError;

const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
const RECLAIM_POLICIES: [&str; 3] = ["Delete", "Recycle", "Retain"];
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];
const MORE_THAN_ONE: &str = "may not specify more than 1 volume type";

/// The PV sources in the order kube checks them, with the path a second one
/// is reported at (kube spells `cephFS` there).
const PV_SOURCES: [(&str, &str); 22] = [
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephFS"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
];

fn spec(object: &Value) -> &Value {
    object.get("spec").unwrap_or(&Value::Null)
}

fn set<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|value| !value.is_null())
}

/// The access mode rules PVs and PVCs share.
fn access_modes(spec: &Value, path: &str, required_detail: &str, errors: &mut Vec<FieldError>) {
    let modes_path = child(path, "accessModes");
    let modes = field::items_at(spec, "accessModes");
    if modes.is_empty() {
        errors.push(field::required(&modes_path, required_detail));
    }
    let (mut once_pod, mut other) = (false, false);
    for mode in modes {
        let mode = mode.as_str().unwrap_or_default();
        if !ACCESS_MODES.contains(&mode) {
            errors.push(field::not_supported(&modes_path, mode, &ACCESS_MODES));
        }
        if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else if ACCESS_MODES.contains(&mode) {
            other = true;
        }
    }
    if once_pod && other {
        errors.push(field::forbidden(
            &modes_path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
}

fn class_name(path: &str, name: &str, errors: &mut Vec<FieldError>) {
    field::dns1123_subdomain(path, name, errors);
}

/// Go's `%#v` of a `core.ResourceList` (quantities printed as strings).
fn resource_list_go(list: Option<&Map<String, Value>>) -> String {
    match list {
        None => "core.ResourceList(nil)".to_string(),
        Some(list) => {
            let entries: Vec<String> = list
                .iter()
                .map(|(name, value)| {
                    format!(
                        "{}:{}",
                        crate::go::strconv::quote(name),
                        crate::go::strconv::quote(value.as_str().unwrap_or_default())
                    )
                })
                .collect();
            format!("core.ResourceList{{{}}}", entries.join(", "))
        }
    }
}

/// `validateCSIPersistentVolumeSource`.
fn csi(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let driver = field::str_at(source, "driver");
    let driver_path = child(path, "driver");
    if driver.is_empty() {
        errors.push(field::required(&driver_path, ""));
    }
    if driver.len() > 63 {
        errors.push(field::too_long(&driver_path, 63));
    }
    for message in crate::names::dns1123_subdomain(&driver.to_lowercase()) {
        errors.push(field::invalid(&driver_path, driver, message));
    }
    if field::str_at(source, "volumeHandle").is_empty() {
        errors.push(field::required(&child(path, "volumeHandle"), ""));
    }
    for reference in [
        "controllerPublishSecretRef",
        "controllerExpandSecretRef",
        "nodePublishSecretRef",
        "nodeExpandSecretRef",
    ] {
        let Some(secret) = set(source, reference) else {
            continue;
        };
        let reference_path = child(path, reference);
        let name = field::str_at(secret, "name");
        if name.is_empty() {
            errors.push(field::required(&child(&reference_path, "name"), ""));
        } else {
            field::dns1123_subdomain(&child(&reference_path, "name"), name, errors);
        }
        let namespace = field::str_at(secret, "namespace");
        if namespace.is_empty() {
            errors.push(field::required(&child(&reference_path, "namespace"), ""));
        } else {
            field::dns1123_label(&child(&reference_path, "namespace"), namespace, errors);
        }
    }
}

/// The field rules of the one source a PV spec at `spec_path` names.
fn source_rules(
    name: &str,
    source: &Value,
    spec_path: &str,
    pv_name: &str,
    node_affinity: bool,
    errors: &mut Vec<FieldError>,
) {
    let path = child(spec_path, name);
    let path = path.as_str();
    match name {
        "hostPath" => pod_volumes::host_path(source, path, errors),
        "local" => {
            let local_path = field::str_at(source, "path");
            // `validatePathNoBacksteps`: `filepath.ToSlash` is the identity
            // on the Linux kube-apiserver, so only `/` separates elements.
            if local_path.is_empty() {
                errors.push(field::required(&child(path, "path"), ""));
            } else if local_path.split('/').any(|part| part == "..") {
                errors.push(field::invalid(
                    &child(path, "path"),
                    local_path,
                    "must not contain '..'",
                ));
            }
            if !node_affinity {
                errors.push(field::required(
                    &child(spec_path, "nodeAffinity"),
                    "Local volume requires node affinity",
                ));
            }
        }
        "nfs" => {
            let nfs_path = field::str_at(source, "path");
            if field::str_at(source, "server").is_empty() {
                errors.push(field::required(&child(path, "server"), ""));
            }
            if nfs_path.is_empty() {
                errors.push(field::required(&child(path, "path"), ""));
            }
            if !nfs_path.starts_with('/') {
                errors.push(field::invalid(
                    &child(path, "path"),
                    nfs_path,
                    "must be an absolute path",
                ));
            }
        }
        "csi" => csi(source, path, errors),
        "gcePersistentDisk" | "awsElasticBlockStore" => {
            // kube reports a GCE disk under `persistentDisk`.
            let (id, report_path) = if name == "gcePersistentDisk" {
                ("pdName", child(spec_path, "persistentDisk"))
            } else {
                ("volumeID", path.to_string())
            };
            if field::str_at(source, id).is_empty() {
                errors.push(field::required(&child(&report_path, id), ""));
            }
            let partition = field::int_at(source, "partition").unwrap_or(0);
            if !(0..=255).contains(&partition) {
                errors.push(field::invalid_number(
                    &child(&report_path, "partition"),
                    partition,
                    field::inclusive_range_error(1, 255),
                ));
            }
        }
        _ => pv_sources::in_tree(name, source, path, pv_name, errors),
    }
}

/// `validateVolumeNodeAffinity`: whether `nodeAffinity` is set (a local
/// volume needs it), and its `required` node selector's rules. Label values
/// of the selector are not checked when `allow_invalid_label_values` (an
/// update of a PV whose stored selector already has invalid ones,
/// `ValidationOptionsForPersistentVolume`).
fn volume_node_affinity(
    affinity: &Value,
    path: &str,
    allow_invalid_label_values: bool,
    errors: &mut Vec<FieldError>,
) -> bool {
    let required_path = child(path, "required");
    match set(affinity, "required") {
        Some(required) => node_selector::node_selector_with(
            required,
            &required_path,
            allow_invalid_label_values,
            errors,
        ),
        None => errors.push(field::required(
            &required_path,
            "must specify required node constraints",
        )),
    }
    true
}

/// `PersistentVolumeSpecValidationOptions` and the `validateInlinePersistentVolumeSpec`
/// argument of `ValidatePersistentVolumeSpec`.
#[derive(Clone, Copy, Default)]
pub struct SpecOptions {
    /// A VolumeAttachment's `inlineVolumeSpec`, not a stored PV.
    pub inline: bool,
    /// `EnableVolumeAttributesClass` (on for PVs in 1.34, off for inline specs).
    pub volume_attributes_class: bool,
    /// `AllowInvalidLabelValueInRequiredNodeAffinity`.
    pub allow_invalid_label_values: bool,
}

const INLINE_FORBIDDEN: &str = "may not be specified in the context of inline volumes";

/// `ValidatePersistentVolume` of a stored (not inline) PV.
pub fn persistent_volume(object: &Value) -> Vec<FieldError> {
    persistent_volume_with(object, false)
}

fn persistent_volume_with(object: &Value, allow_invalid_label_values: bool) -> Vec<FieldError> {
    let pv_name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let options = SpecOptions {
        inline: false,
        volume_attributes_class: true,
        allow_invalid_label_values,
    };
    let mut errors = Vec::new();
    persistent_volume_spec(spec(object), pv_name, "spec", options, &mut errors);
    errors
}

/// `ValidatePersistentVolumeSpec` of the spec at `path`.
pub fn persistent_volume_spec(
    spec: &Value,
    pv_name: &str,
    path: &str,
    options: SpecOptions,
    errors: &mut Vec<FieldError>,
) {
    let capacity = field::map_at(spec, "capacity");
    let capacity_path = child(path, "capacity");
    if options.inline {
        if set(spec, "claimRef").is_some() {
            errors.push(field::forbidden(&child(path, "claimRef"), INLINE_FORBIDDEN));
        }
        if capacity.is_some_and(|capacity| !capacity.is_empty()) {
            errors.push(field::forbidden(&capacity_path, INLINE_FORBIDDEN));
        }
        if set(spec, "csi").is_none() {
            errors.push(field::required(
                &child(path, "csi"),
                "has to be specified in the context of inline volumes",
            ));
        }
    }
    access_modes(spec, path, "", errors);
    if !options.inline {
        if capacity.is_none_or(Map::is_empty) {
            errors.push(field::required(&capacity_path, ""));
        }
        if capacity.is_none_or(|capacity| !capacity.contains_key("storage") || capacity.len() > 1) {
            errors.push(FieldError {
                kind: crate::status::FieldErrorKind::NotSupported(
                    resource_list_go(capacity),
                    vec!["\"storage\"".to_string()],
                ),
                field: capacity_path.clone(),
                detail: String::new(),
            });
        }
        for (name, value) in capacity.into_iter().flatten() {
            let quantity_path = key(&capacity_path, name);
            quota::basic_resource(value, &quantity_path, errors);
            quota::positive_quantity(value, &quantity_path, errors);
        }
    }
    let reclaim = field::str_at(spec, "persistentVolumeReclaimPolicy");
    let reclaim_path = child(path, "persistentVolumeReclaimPolicy");
    if !reclaim.is_empty() {
        if options.inline {
            if reclaim != "Retain" {
                errors.push(field::forbidden(
                    &reclaim_path,
                    "may only be Retain in the context of inline volumes",
                ));
            }
        } else if !RECLAIM_POLICIES.contains(&reclaim) {
            errors.push(field::not_supported(
                &reclaim_path,
                reclaim,
                &RECLAIM_POLICIES,
            ));
        }
    }
    let mut node_affinity = false;
    if let Some(affinity) = set(spec, "nodeAffinity") {
        let affinity_path = child(path, "nodeAffinity");
        if options.inline {
            errors.push(field::forbidden(&affinity_path, INLINE_FORBIDDEN));
        } else {
            node_affinity = volume_node_affinity(
                affinity,
                &affinity_path,
                options.allow_invalid_label_values,
                errors,
            );
        }
    }
    let mut sources = 0;
    for (name, second_path) in PV_SOURCES {
        let Some(source) = set(spec, name) else {
            continue;
        };
        if sources > 0 && name != "flexVolume" {
            errors.push(field::forbidden(&child(path, second_path), MORE_THAN_ONE));
            continue;
        }
        sources += 1;
        source_rules(name, source, path, pv_name, node_affinity, errors);
    }
    if sources == 0 {
        errors.push(field::required(path, "must specify a volume type"));
    }
    if let Some(host_path) = set(spec, "hostPath") {
        let cleaned = field::str_at(host_path, "path").trim_end_matches('/');
        if cleaned.is_empty()
            && !field::str_at(host_path, "path").is_empty()
            && reclaim == "Recycle"
        {
            errors.push(field::forbidden(
                &reclaim_path,
                "may not be 'recycle' for a hostPath mount of '/'",
            ));
        }
    }
    let class = field::str_at(spec, "storageClassName");
    if !class.is_empty() {
        let class_path = child(path, "storageClassName");
        if options.inline {
            errors.push(field::forbidden(&class_path, INLINE_FORBIDDEN));
        } else {
            class_name(&class_path, class, errors);
        }
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        let mode_path = child(path, "volumeMode");
        if options.inline {
            if mode != "Filesystem" {
                errors.push(field::forbidden(
                    &mode_path,
                    "may not specify volumeMode other than Filesystem in the context of inline volumes",
                ));
            }
        } else if !VOLUME_MODES.contains(&mode) {
            errors.push(field::not_supported(&mode_path, mode, &VOLUME_MODES));
        }
    }
    let attributes = spec
        .get("volumeAttributesClassName")
        .and_then(Value::as_str);
    if let Some(attributes) = attributes.filter(|_| options.volume_attributes_class) {
        let attributes_path = child(path, "volumeAttributesClassName");
        if attributes.is_empty() {
            errors.push(field::required(
                &attributes_path,
                "an empty string is disallowed",
            ));
        } else {
            class_name(&attributes_path, attributes, errors);
        }
        if set(spec, "csi").is_none() {
            errors.push(field::required(
                &child(path, "csi"),
                "has to be specified when using volumeAttributesClassName",
            ));
        }
    }
}

/// Every PV source field, for the immutability check.
fn pv_source(spec: &Value) -> Map<String, Value> {
    PV_SOURCES
        .iter()
        .filter_map(|(name, _)| set(spec, name).map(|value| (name.to_string(), value.clone())))
        .collect()
}

/// `ValidatePersistentVolumeUpdate`: the source and volume mode are fixed;
/// a CSI `controllerExpandSecretRef` may be added; the attributes class may
/// not be removed once set; a set `nodeAffinity` is fixed but for beta
/// topology labels moved to their GA names (`validatePvNodeAffinity`).
pub fn persistent_volume_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let allow_invalid_label_values = old
        .pointer("/spec/nodeAffinity/required")
        .is_some_and(node_selector::has_invalid_label_value);
    let mut errors = persistent_volume_with(new, allow_invalid_label_values);
    let (new_spec, old_spec) = (spec(new), spec(old));
    let mut new_source = pv_source(new_spec);
    let old_source = pv_source(old_spec);
    let old_has_expand = old_source
        .get("csi")
        .is_some_and(|csi| set(csi, "controllerExpandSecretRef").is_some());
    if !old_has_expand {
        if let Some(Value::Object(csi)) = new_source.get_mut("csi") {
            csi.remove("controllerExpandSecretRef");
        }
    }
    if new_source != old_source {
        errors.push(field::forbidden(
            "spec.persistentvolumesource",
            format!(
                "spec.persistentvolumesource is immutable after creation\n{}",
                super::pod_update::value_diff(
                    "core.PersistentVolumeSource",
                    &Value::Object(old_source),
                    &Value::Object(new_source)
                )
            ),
        ));
    }
    let new_mode = new_spec.get("volumeMode").and_then(Value::as_str);
    let old_mode = old_spec.get("volumeMode").and_then(Value::as_str);
    if new_mode != old_mode {
        errors.push(field::invalid_rendered(
            "volumeMode",
            &immutable_mode_value(new_mode),
            field::FIELD_IMMUTABLE,
        ));
    }
    if let Some(old_affinity) = set(old_spec, "nodeAffinity") {
        let new_affinity = set(new_spec, "nodeAffinity");
        if !super::pv_node_affinity::equal_but_ga_labels(new_affinity, old_affinity) {
            errors.push(field::invalid_rendered(
                "nodeAffinity",
                &super::pv_node_affinity::go_value(new_affinity),
                "field is immutable, except for updating from beta label to GA",
            ));
        }
    }
    if set(old_spec, "volumeAttributesClassName").is_some()
        && set(new_spec, "volumeAttributesClassName").is_none()
    {
        errors.push(field::forbidden(
            "spec.volumeAttributesClassName",
            "update from non-nil value to nil is forbidden",
        ));
    }
    errors
}

/// How `ValidateImmutableField` prints a `*core.PersistentVolumeMode`.
fn immutable_mode_value(mode: Option<&str>) -> String {
    mode.map_or("null".to_string(), crate::go::strconv::quote)
}

/// `validateDataSource` / `validateDataSourceRef`.
fn data_source(source: &Value, path: &str, with_namespace: bool, errors: &mut Vec<FieldError>) {
    if field::str_at(source, "name").is_empty() {
        errors.push(field::required(&child(path, "name"), ""));
    }
    let kind = field::str_at(source, "kind");
    if kind.is_empty() {
        errors.push(field::required(&child(path, "kind"), ""));
    }
    let group = field::str_at(source, "apiGroup");
    if group.is_empty() && kind != "PersistentVolumeClaim" {
        errors.push(field::invalid(
            path,
            kind,
            "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
        ));
    }
    if !group.is_empty() {
        field::dns1123_subdomain(&child(path, "apiGroup"), group, errors);
    }
    if with_namespace {
        let namespace = field::str_at(source, "namespace");
        if !namespace.is_empty() {
            field::dns1123_label(&child(path, "namespace"), namespace, errors);
        }
    }
}

/// `ValidatePersistentVolumeClaim` (its spec part).
pub fn persistent_volume_claim(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    persistent_volume_claim_spec(spec(object), "spec", &mut errors);
    errors
}

/// `ValidatePersistentVolumeClaimSpec` of the spec at `path` (a claim's, or
/// an ephemeral volume's claim template's), with the 1.34 options of a new
/// object: label values checked, the attributes class validated.
pub fn persistent_volume_claim_spec(spec: &Value, path: &str, errors: &mut Vec<FieldError>) {
    access_modes(spec, path, "at least 1 access mode is required", errors);
    if let Some(claim_selector) = set(spec, "selector") {
        selector::validate(claim_selector, &child(path, "selector"), errors);
    }
    let storage_path = key(&child(path, "resources"), "storage");
    match spec.pointer("/resources/requests/storage") {
        None => errors.push(field::required(&storage_path, "")),
        Some(storage) => {
            if quota::positive_quantity(storage, &storage_path, errors) {
                quota::resource_quantity_value("storage", storage, &storage_path, errors);
            }
        }
    }
    if let Some(class) = spec.get("storageClassName").and_then(Value::as_str) {
        if !class.is_empty() {
            class_name(&child(path, "storageClassName"), class, errors);
        }
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if !VOLUME_MODES.contains(&mode) {
            errors.push(field::not_supported(
                &child(path, "volumeMode"),
                mode,
                &VOLUME_MODES,
            ));
        }
    }
    let source = set(spec, "dataSource");
    let reference = set(spec, "dataSourceRef");
    if let Some(source) = source {
        data_source(source, &child(path, "dataSource"), false, errors);
    }
    if let Some(reference) = reference {
        data_source(reference, &child(path, "dataSourceRef"), true, errors);
    }
    let cross_namespace =
        reference.is_some_and(|reference| !field::str_at(reference, "namespace").is_empty());
    if cross_namespace {
        if source.is_some() {
            errors.push(field::invalid_rendered(
                path,
                &child(path, "dataSource"),
                "may not be specified when dataSourceRef.namespace is specified",
            ));
        }
    } else if let (Some(source), Some(reference)) = (source, reference) {
        let same = ["apiGroup", "kind", "name"]
            .iter()
            .all(|name| source.get(*name) == reference.get(*name));
        if !same {
            errors.push(field::invalid_rendered(
                path,
                &child(path, "dataSource"),
                "must match dataSourceRef",
            ));
        }
    }
    if let Some(attributes) = spec
        .get("volumeAttributesClassName")
        .and_then(Value::as_str)
    {
        if !attributes.is_empty() {
            class_name(
                &child(path, "volumeAttributesClassName"),
                attributes,
                errors,
            );
        }
    }
}

/// `ValidatePersistentVolumeClaimUpdate`: the spec is fixed except the storage
/// request (which may only grow), `volumeName` once, a storage class taken
/// from the beta annotation or set from nil, and the attributes class of a
/// bound claim.
pub fn persistent_volume_claim_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = persistent_volume_claim(new);
    let (new_spec, old_spec) = (spec(new), spec(old));
    let mut new_clone = new_spec.clone();
    let mut old_clone = old_spec.clone();
    let (Some(new_map), Some(old_map)) = (new_clone.as_object_mut(), old_clone.as_object_mut())
    else {
        return errors;
    };
    if field::str_at(old_spec, "volumeName").is_empty() {
        match new_map.get("volumeName") {
            Some(name) => old_map.insert("volumeName".into(), name.clone()),
            None => old_map.remove("volumeName"),
        };
    }
    let annotation = |object: &Value| {
        object
            .pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let (old_annotation, new_annotation) = (annotation(old), annotation(new));
    let old_class = old_spec.get("storageClassName").and_then(Value::as_str);
    let new_class = new_spec.get("storageClassName").and_then(Value::as_str);
    let upgrade_from_annotation = old_annotation.is_some()
        && old_class.is_none()
        && new_class.is_some()
        && new_class == old_annotation.as_deref()
        && (new_annotation.is_none() || new_annotation == old_annotation);
    if upgrade_from_annotation {
        new_map.remove("storageClassName");
    } else {
        if new_annotation != old_annotation {
            errors.push(field::invalid(
                "metadata.annotations.volume.beta.kubernetes.io/storage-class",
                new_annotation.as_deref().unwrap_or_default(),
                field::FIELD_IMMUTABLE,
            ));
        }
        let from_nil = new_class.is_some()
            && old_class.is_none()
            && (old_annotation.is_none() || new_class == old_annotation.as_deref());
        if from_nil {
            new_map.remove("storageClassName");
        }
    }
    let bound = new
        .get("status")
        .map(|status| field::str_at(status, "phase"))
        == Some("Bound");
    if bound {
        if let Some(requests) = new_map
            .get_mut("resources")
            .and_then(|resources| resources.get_mut("requests"))
            .and_then(Value::as_object_mut)
        {
            match old_spec.pointer("/resources/requests/storage") {
                Some(storage) => requests.insert("storage".into(), storage.clone()),
                None => requests.remove("storage"),
            };
        }
        if new_map.contains_key("volumeAttributesClassName") {
            match old_map.get("volumeAttributesClassName") {
                Some(class) => new_map.insert("volumeAttributesClassName".into(), class.clone()),
                None => new_map.remove("volumeAttributesClassName"),
            };
        }
    }
    if semantic(&new_clone) != semantic(&old_clone) {
        errors.push(field::forbidden(
            "spec",
            format!(
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{}",
                super::pod_update::value_diff("core.PersistentVolumeClaimSpec", &old_clone, &new_clone)
            ),
        ));
    }
    let size = |spec: &Value| {
        spec.pointer("/resources/requests/storage")
            .map(quota::quantity)
    };
    if let (Some(new_size), Some(old_size)) = (size(new_spec), size(old_spec)) {
        if new_size.cmp_value(&old_size) == std::cmp::Ordering::Less {
            let status_size = old.pointer("/status/capacity/storage").map(quota::quantity);
            // RecoverVolumeExpansionFailure is on in 1.34: shrinking down to
            // (but not to or below) the recorded capacity is allowed.
            if status_size
                .is_none_or(|status| new_size.cmp_value(&status) != std::cmp::Ordering::Greater)
            {
                errors.push(field::forbidden(
                    "spec.resources.requests.storage",
                    "field can not be less than status.capacity",
                ));
            }
        }
    }
    let new_mode = new_spec.get("volumeMode").and_then(Value::as_str);
    let old_mode = old_spec.get("volumeMode").and_then(Value::as_str);
    if new_mode != old_mode {
        errors.push(field::invalid_rendered(
            "volumeMode",
            &immutable_mode_value(new_mode),
            field::FIELD_IMMUTABLE,
        ));
    }
    if old_spec
        .get("volumeAttributesClassName")
        .and_then(Value::as_str)
        .is_some()
    {
        match new_spec
            .get("volumeAttributesClassName")
            .and_then(Value::as_str)
        {
            None => errors.push(field::forbidden(
                "spec.volumeAttributesClassName",
                "update from non-nil value to nil is forbidden",
            )),
            Some("") => errors.push(field::forbidden(
                "spec.volumeAttributesClassName",
                "update from non-nil value to an empty string is forbidden",
            )),
            Some(_) => {}
        }
    }
    errors
}

/// Semantic equality as `apiequality.Semantic.DeepEqual` sees it: absent and
/// empty collections alike (quantities are canonical after decoding, so their
/// text compares by value).
fn semantic(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !is_empty(v))
                .map(|(k, v)| (k.clone(), semantic(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
#[path = "storage_core_tests.rs"]
mod tests;
