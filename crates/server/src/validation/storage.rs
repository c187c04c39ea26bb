//! storage.k8s.io/v1 kinds as `pkg/apis/storage/validation/validation.go`
//! checks them: StorageClass (`ValidateStorageClass`,
//! `ValidateStorageClassUpdate`), CSIDriver (`ValidateCSIDriver`,
//! `ValidateCSIDriverUpdate`), CSINode (`ValidateCSINode`,
//! `ValidateCSINodeUpdate`) and VolumeAttachment (`ValidateVolumeAttachment`,
//! `ValidateVolumeAttachmentV1`, `ValidateVolumeAttachmentUpdate`; an
//! `inlineVolumeSpec` is `ValidatePersistentVolumeSpec` for inline volumes).

use std::collections::BTreeSet;

use serde_json::Value;

use super::field::{self, child, index};
use super::storage_core;
use crate::go::strconv::quote;
use crate::status::FieldError;

const MAX_PROVISIONER_PARAMETER_SIZE: usize = 256 * 1024;
const MAX_PROVISIONER_PARAMETER_LEN: usize = 512;
const MAX_ATTACHED_VOLUME_METADATA_SIZE: usize = 256 * 1024;
const MAX_VOLUME_ERROR_MESSAGE_SIZE: usize = 1024;
/// `csiNodeIDLongerMaxLength`: the registry always allows long node IDs.
const CSI_NODE_ID_MAX_LENGTH: usize = 256;

/// `ValidateStorageClass`.
pub fn storage_class(object: &Value) -> Vec<FieldError> {
    let mut errors = provisioner(field::str_at(object, "provisioner"), "provisioner");
    parameters(object.get("parameters"), "parameters", &mut errors);
    let reclaim_policy = field::str_at(object, "reclaimPolicy");
    if !reclaim_policy.is_empty() && !matches!(reclaim_policy, "Delete" | "Retain") {
        errors.push(field::not_supported(
            "reclaimPolicy",
            reclaim_policy,
            &["Delete", "Retain"],
        ));
    }
    match object.get("volumeBindingMode").and_then(Value::as_str) {
        None => errors.push(field::required("volumeBindingMode", "")),
        Some("Immediate" | "WaitForFirstConsumer") => {}
        Some(other) => errors.push(field::not_supported(
            "volumeBindingMode",
            other,
            &["Immediate", "WaitForFirstConsumer"],
        )),
    }
    allowed_topologies(
        field::items_at(object, "allowedTopologies"),
        "allowedTopologies",
        &mut errors,
    );
    errors
}

/// The StorageClass strategy's `ValidateUpdate`: the create rules, then
/// `ValidateStorageClassUpdate` (parameters, provisioner, reclaimPolicy and
/// volumeBindingMode cannot change).
pub fn storage_class_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = storage_class(object);
    let set = |value: &Value, name: &str| value.get(name).filter(|v| !v.is_null()).cloned();
    if set(object, "parameters") != set(old, "parameters") {
        errors.push(field::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    if field::str_at(object, "provisioner") != field::str_at(old, "provisioner") {
        errors.push(field::forbidden(
            "provisioner",
            "updates to provisioner are forbidden.",
        ));
    }
    if field::str_at(object, "reclaimPolicy") != field::str_at(old, "reclaimPolicy") {
        errors.push(field::forbidden(
            "reclaimPolicy",
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    errors.extend(field::immutable_string(
        "volumeBindingMode",
        field::str_at(object, "volumeBindingMode"),
        field::str_at(old, "volumeBindingMode"),
    ));
    errors
}

/// `validateProvisioner`: required, and a qualified name once lowercased.
pub fn provisioner(value: &str, path: &str) -> Vec<FieldError> {
    if value.is_empty() {
        return vec![field::required(path, "")];
    }
    let lowered = value.to_lowercase();
    crate::selector::is_qualified_name(&lowered)
        .into_iter()
        .map(|message| field::invalid(path, &lowered, message))
        .collect()
}

/// `validateParameters` (empty allowed).
pub fn parameters(value: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(parameters) = value.and_then(Value::as_object) else {
        return;
    };
    if parameters.len() > MAX_PROVISIONER_PARAMETER_LEN {
        errors.push(field::too_long(path, MAX_PROVISIONER_PARAMETER_LEN));
        return;
    }
    let mut total = 0;
    for (key, value) in parameters {
        if key.is_empty() {
            errors.push(field::invalid(path, key, "field can not be empty."));
        }
        total += key.len() + value.as_str().map_or(0, str::len);
    }
    if total > MAX_PROVISIONER_PARAMETER_SIZE {
        errors.push(field::too_long(path, MAX_PROVISIONER_PARAMETER_SIZE));
    }
}

/// `validateAllowedTopologies` with core's `ValidateTopologySelectorTerm`.
fn allowed_topologies(terms: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    // kube starts its list of seen terms with one nil map per term, and a nil
    // map equals an empty one semantically: a term without expressions is a duplicate.
    let mut seen: Vec<Vec<(String, BTreeSet<String>)>> = Vec::new();
    for (position, term) in terms.iter().enumerate() {
        let term_path = index(path, position);
        let expressions_path = child(&term_path, "matchLabelExpressions");
        let mut keys: Vec<(String, BTreeSet<String>)> = Vec::new();
        for (expression_position, requirement) in field::items_at(term, "matchLabelExpressions")
            .iter()
            .enumerate()
        {
            let requirement_path = index(&expressions_path, expression_position);
            let values_path = child(&requirement_path, "values");
            let values = field::items_at(requirement, "values");
            if values.is_empty() {
                errors.push(field::required(&values_path, ""));
            }
            let mut set = BTreeSet::new();
            for (value_position, value) in values.iter().enumerate() {
                let value = value.as_str().unwrap_or_default();
                if !set.insert(value.to_string()) {
                    errors.push(field::duplicate(
                        &index(&values_path, value_position),
                        value,
                    ));
                }
            }
            let key = field::str_at(requirement, "key");
            field::label_name(&child(&requirement_path, "key"), key, errors);
            if keys.iter().any(|(existing, _)| existing == key) {
                errors.push(field::duplicate(&child(&requirement_path, "key"), key));
                keys.retain(|(existing, _)| existing != key);
            }
            keys.push((key.to_string(), set));
        }
        keys.sort();
        if keys.is_empty() || seen.contains(&keys) {
            errors.push(field::duplicate(&expressions_path, ""));
        }
        seen.push(keys);
    }
}

/// Core's `ValidateCSIDriverName`.
pub fn csi_driver_name(name: &str, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if name.is_empty() {
        errors.push(field::required(path, ""));
    }
    if name.len() > 63 {
        errors.push(field::too_long(path, 63));
    }
    for message in crate::names::dns1123_subdomain(&name.to_lowercase()) {
        errors.push(field::invalid(path, name, message));
    }
    errors
}

fn spec_of(object: &Value) -> &Value {
    object.get("spec").unwrap_or(&Value::Null)
}

/// `ValidateCSIDriver`'s spec rules (`validateCSIDriverSpec`; kube's path
/// for `attachRequired` is `spec.attachedRequired`).
fn csi_driver_spec(spec: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (name, path) in [
        ("attachRequired", "spec.attachedRequired"),
        ("podInfoOnMount", "spec.podInfoOnMount"),
        ("storageCapacity", "spec.storageCapacity"),
    ] {
        if !field::is_set(spec, name) {
            errors.push(field::required(path, ""));
        }
    }
    if let Some(policy) = spec.get("fsGroupPolicy").and_then(Value::as_str) {
        let supported = ["File", "None", "ReadWriteOnceWithFSType"];
        if !supported.contains(&policy) {
            errors.push(field::not_supported(
                "spec.fsGroupPolicy",
                policy,
                &supported,
            ));
        }
    }
    let mut audiences = BTreeSet::new();
    for (position, request) in field::items_at(spec, "tokenRequests").iter().enumerate() {
        let path = index("spec.tokenRequests", position);
        let audience = field::str_at(request, "audience");
        if !audiences.insert(audience) {
            errors.push(field::duplicate(&child(&path, "audience"), audience));
            continue;
        }
        if let Some(seconds) = field::int_at(request, "expirationSeconds") {
            let seconds_path = child(&path, "expirationSeconds");
            if seconds < 600 {
                errors.push(field::invalid_number(
                    &seconds_path,
                    seconds,
                    "may not specify a duration less than 10 minutes",
                ));
            }
            if seconds > 1 << 32 {
                errors.push(field::invalid_number(
                    &seconds_path,
                    seconds,
                    "may not specify a duration larger than 2^32 seconds",
                ));
            }
        }
    }
    for mode in field::items_at(spec, "volumeLifecycleModes") {
        let mode = mode.as_str().unwrap_or_default();
        if !matches!(mode, "Persistent" | "Ephemeral") {
            errors.push(field::not_supported(
                "spec.volumeLifecycleModes",
                mode,
                &["Persistent", "Ephemeral"],
            ));
        }
    }
    // `SELinuxMountReadWriteOncePod` is on in 1.34: the field is required (and defaulted).
    if !field::is_set(spec, "seLinuxMount") {
        errors.push(field::required("spec.seLinuxMount", ""));
    }
    if let Some(period) = field::int_at(spec, "nodeAllocatableUpdatePeriodSeconds") {
        if period < 10 {
            errors.push(field::invalid_number(
                "spec.nodeAllocatableUpdatePeriodSeconds",
                period,
                "must be greater than or equal to 10 seconds",
            ));
        }
    }
    errors
}

/// `ValidateCSIDriver`.
pub fn csi_driver(object: &Value) -> Vec<FieldError> {
    csi_driver_spec(spec_of(object))
}

/// `ValidateCSIDriverUpdate`: the spec rules, then `attachRequired` and
/// `volumeLifecycleModes` are immutable.
pub fn csi_driver_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let (spec, old_spec) = (spec_of(object), spec_of(old));
    let mut errors = csi_driver_spec(spec);
    let attach = spec.get("attachRequired").filter(|v| !v.is_null());
    if attach != old_spec.get("attachRequired").filter(|v| !v.is_null()) {
        errors.push(field::invalid_rendered(
            "spec.attachedRequired",
            &attach.map_or("null".to_string(), ToString::to_string),
            field::FIELD_IMMUTABLE,
        ));
    }
    let modes = |spec: &Value| -> Vec<String> {
        field::items_at(spec, "volumeLifecycleModes")
            .iter()
            .map(|mode| mode.as_str().unwrap_or_default().to_string())
            .collect()
    };
    if modes(spec) != modes(old_spec) {
        let rendered = match spec.get("volumeLifecycleModes").filter(|v| !v.is_null()) {
            None => "[]storage.VolumeLifecycleMode(nil)".to_string(),
            Some(_) => format!(
                "[]storage.VolumeLifecycleMode{{{}}}",
                modes(spec)
                    .iter()
                    .map(|mode| quote(mode))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        errors.push(field::invalid_rendered(
            "spec.volumeLifecycleModes",
            &rendered,
            field::FIELD_IMMUTABLE,
        ));
    }
    errors
}

/// `ValidateCSINode`.
pub fn csi_node(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for (position, driver) in field::items_at(spec_of(object), "drivers")
        .iter()
        .enumerate()
    {
        let path = index("spec.drivers", position);
        let name = field::str_at(driver, "name");
        errors.extend(csi_driver_name(name, &child(&path, "name")));
        let node_id = field::str_at(driver, "nodeID");
        let node_id_path = child(&path, "nodeID");
        if node_id.is_empty() {
            errors.push(field::required(&node_id_path, ""));
        }
        if node_id.len() > CSI_NODE_ID_MAX_LENGTH {
            errors.push(field::invalid(
                &node_id_path,
                node_id,
                format!("must be {CSI_NODE_ID_MAX_LENGTH} characters or less"),
            ));
        }
        if let Some(count) = driver
            .get("allocatable")
            .and_then(|allocatable| field::int_at(allocatable, "count"))
        {
            if count < 0 {
                errors.push(field::invalid_number(
                    &child(&child(&path, "allocatable"), "count"),
                    count,
                    field::IS_NEGATIVE,
                ));
            }
        }
        if !names.insert(name) {
            errors.push(field::duplicate(&child(&path, "name"), name));
        }
        let mut keys = BTreeSet::new();
        for key in field::items_at(driver, "topologyKeys") {
            let key = key.as_str().unwrap_or_default();
            if key.is_empty() {
                errors.push(field::required(&path, ""));
            }
            if !keys.insert(key) {
                errors.push(field::duplicate(&path, key));
            }
            field::label_name(&path, key, &mut errors);
        }
    }
    errors
}

/// Go's `%#v` of a `storage.CSINodeDriver` with its `Allocatable` cleared (as
/// the update check compares them with `MutableCSINodeAllocatableCount` on).
fn go_csi_node_driver(driver: &Value) -> String {
    let keys = match driver.get("topologyKeys").filter(|v| !v.is_null()) {
        None => "[]string(nil)".to_string(),
        Some(list) => super::selector::go_string_slice(Some(list)),
    };
    format!(
        "storage.CSINodeDriver{{Name:{}, NodeID:{}, TopologyKeys:{keys}, Allocatable:(*storage.VolumeNodeResources)(nil)}}",
        quote(field::str_at(driver, "name")),
        quote(field::str_at(driver, "nodeID")),
    )
}

/// `ValidateCSINodeUpdate`: the create rules, and a driver that stays may
/// only change its allocatable count.
pub fn csi_node_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = csi_node(object);
    let comparable = |driver: &Value| {
        (
            field::str_at(driver, "nodeID").to_string(),
            driver.get("topologyKeys").filter(|v| !v.is_null()).cloned(),
        )
    };
    for old_driver in field::items_at(spec_of(old), "drivers") {
        for driver in field::items_at(spec_of(object), "drivers") {
            if field::str_at(old_driver, "name") == field::str_at(driver, "name")
                && comparable(old_driver) != comparable(driver)
            {
                errors.push(field::invalid_rendered(
                    "spec.drivers",
                    &go_csi_node_driver(driver),
                    field::FIELD_IMMUTABLE,
                ));
            }
        }
    }
    errors
}

/// `ValidateVolumeAttachment` then `ValidateVolumeAttachmentV1`.
pub fn volume_attachment(object: &Value) -> Vec<FieldError> {
    let spec = spec_of(object);
    let mut errors = Vec::new();
    let attacher = field::str_at(spec, "attacher");
    if attacher.is_empty() {
        errors.push(field::required("spec.attacher", ""));
    }
    let source = spec.get("source").unwrap_or(&Value::Null);
    let inline = field::is_set(source, "inlineVolumeSpec");
    let volume_name = source.get("persistentVolumeName").and_then(Value::as_str);
    match (inline, volume_name) {
        (false, None) => errors.push(field::required(
            "spec.source",
            "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
        )),
        (true, Some(_)) => errors.push(field::forbidden(
            "spec.source",
            "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
        )),
        (false, Some("")) => errors.push(field::required(
            "spec.source.persistentVolumeName",
            "must specify non empty persistentVolumeName",
        )),
        (true, None) => storage_core::persistent_volume_spec(
            source.get("inlineVolumeSpec").unwrap_or(&Value::Null),
            "",
            "spec.source.inlineVolumeSpec",
            storage_core::SpecOptions {
                inline: true,
                ..storage_core::SpecOptions::default()
            },
            &mut errors,
        ),
        (false, Some(_)) => {}
    }
    field::dns1123_subdomain(
        "spec.nodeName",
        field::str_at(spec, "nodeName"),
        &mut errors,
    );
    let status = object.get("status").unwrap_or(&Value::Null);
    let metadata_size: usize = field::map_at(status, "attachmentMetadata")
        .into_iter()
        .flatten()
        .map(|(key, value)| key.len() + value.as_str().map_or(0, str::len))
        .sum();
    if metadata_size > MAX_ATTACHED_VOLUME_METADATA_SIZE {
        errors.push(field::too_long(
            "status.attachmentMetadata",
            MAX_ATTACHED_VOLUME_METADATA_SIZE,
        ));
    }
    for name in ["attachError", "detachError"] {
        let Some(error) = status.get(name).filter(|v| !v.is_null()) else {
            continue;
        };
        let path = child("status", name);
        if field::str_at(error, "message").len() > MAX_VOLUME_ERROR_MESSAGE_SIZE {
            // kube reports the metadata limit here, not the message's.
            errors.push(field::too_long(
                &child(&path, "message"),
                MAX_ATTACHED_VOLUME_METADATA_SIZE,
            ));
        }
        if let Some(code) = field::int_at(error, "errorCode").filter(|code| *code < 0) {
            errors.push(field::invalid_number(
                &child(&path, "errorCode"),
                code,
                field::inclusive_range_error(0, i64::from(i32::MAX)),
            ));
        }
    }
    // `ValidateVolumeAttachmentV1`.
    errors.extend(csi_driver_name(attacher, "spec.attacher"));
    if let Some(name) = volume_name {
        field::dns1123_subdomain("spec.source.persistentVolumeName", name, &mut errors);
    }
    errors
}

/// `ValidateVolumeAttachmentUpdate`: the spec is read-only. kube prints the
/// whole `VolumeAttachmentSpec` with `%#v` (pointer addresses included); the
/// value here names the spec's fields without addresses.
pub fn volume_attachment_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = volume_attachment(object);
    let spec = spec_of(object);
    if spec != spec_of(old) {
        let volume_name = spec
            .pointer("/source/persistentVolumeName")
            .and_then(Value::as_str);
        let rendered = format!(
            "storage.VolumeAttachmentSpec{{Attacher:{}, Source:storage.VolumeAttachmentSource{{PersistentVolumeName:{}}}, NodeName:{}}}",
            quote(field::str_at(spec, "attacher")),
            volume_name.map_or("(*string)(nil)".to_string(), quote),
            quote(field::str_at(spec, "nodeName")),
        );
        errors.push(field::invalid_rendered(
            "spec",
            &rendered,
            field::FIELD_IMMUTABLE,
        ));
    }
    errors
}

#[cfg(test)]
#[path = "storage_tests.rs"]
mod tests;
