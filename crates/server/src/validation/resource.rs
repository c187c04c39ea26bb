//! resource.k8s.io/v1 (dynamic resource allocation) as
//! `pkg/apis/resource/validation` checks it, main rules only:
//!
//! - DeviceClass (`ValidateDeviceClass`/`Update`): selectors name a CEL
//!   expression (at most 10 Ki, compiled), config entries are
//!   opaque with a CSI driver name and a JSON object of parameters;
//! - ResourceClaim (`ValidateResourceClaim`/`Update`) and ResourceClaimTemplate
//!   (`ValidateResourceClaimTemplate`/`Update`): device requests (names,
//!   uniqueness, exactly one of `exactly`/`firstAvailable`, device class,
//!   allocation mode and count), constraints and config naming existing
//!   requests; the spec immutable on update;
//! - ResourceSlice (`ValidateResourceSlice`/`Update`): driver, pool (name,
//!   generation, slice count), exactly one node selection field, devices'
//!   names unique DNS labels; driver, pool name and node name immutable.
//!
//! v1's defaults (allocation mode `ExactCount`, count 1) are applied by
//! `defaults_non_core.rs` and read in place here too. Devices' attributes
//! and capacities are in `resource_device.rs`, the claim's `/status` in
//! `resource_claim_status.rs`, CEL selectors' compilation and cost in
//! `resource_cel.rs`. Not ported: counters, taints and tolerations (alpha in 1.34).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::field::{self, child, index};
use super::storage::csi_driver_name;
use crate::status::{FieldError, FieldErrorKind};

/// `resource.DeviceRequestsMaxSize`, `DeviceConstraintsMaxSize`, `DeviceConfigMaxSize`.
const REQUESTS_MAX: usize = 32;
const CONSTRAINTS_MAX: usize = 32;
const CONFIG_MAX: usize = 32;
/// `resource.FirstAvailableDeviceRequestMaxSize`.
const FIRST_AVAILABLE_MAX: usize = 8;
/// `resource.DeviceSelectorsMaxSize`.
const SELECTORS_MAX: usize = 32;
/// `resource.ResourceSliceMaxDevices`.
const SLICE_DEVICES_MAX: usize = 128;
/// `resource.PoolNameMaxLength`.
const POOL_NAME_MAX: usize = 253;
/// `resource.CELSelectorExpressionMaxLength`.
const CEL_MAX: usize = 10 * 1024;
/// `resource.OpaqueParametersMaxLength`.
const OPAQUE_PARAMETERS_MAX: usize = 10 * 1024;
const ONE_NODE_FIELD: &str =
    "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";

fn too_many(path: &str, actual: usize, max: usize) -> FieldError {
    FieldError {
        kind: FieldErrorKind::TooMany(actual as i64, max as i64),
        field: path.to_string(),
        detail: String::new(),
    }
}

/// `validateSlice` and, with a key, `validateSet`: every item, then the
/// size bound, then duplicates of the key at `<item>.<key field>`.
pub(super) fn each<'a>(
    items: &'a [Value],
    max: usize,
    path: &str,
    key_field: Option<&str>,
    errors: &mut Vec<FieldError>,
    mut check: impl FnMut(&'a Value, &str, &mut Vec<FieldError>),
) {
    for (position, item) in items.iter().enumerate() {
        check(item, &index(path, position), errors);
    }
    if items.len() > max {
        errors.push(too_many(path, items.len(), max));
    }
    if let Some(key_field) = key_field {
        let mut seen = BTreeSet::new();
        for (position, item) in items.iter().enumerate() {
            let key = field::str_at(item, key_field);
            if !seen.insert(key) {
                errors.push(field::duplicate(
                    &child(&index(path, position), key_field),
                    key,
                ));
            }
        }
    }
}

/// `ValidateDeviceClass` (`old` on update: unchanged selectors count as
/// stored and are not compiled again).
pub fn device_class(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let selectors = spec.get("selectors").filter(|value| !value.is_null());
    let stored = old.is_some_and(|old| {
        selectors
            == old
                .pointer("/spec/selectors")
                .filter(|value| !value.is_null())
    });
    let mut errors = Vec::new();
    each(
        field::items_at(spec, "selectors"),
        SELECTORS_MAX,
        "spec.selectors",
        None,
        &mut errors,
        |item, path, errors| {
            if stored {
                if item.get("cel").is_none_or(Value::is_null) {
                    errors.push(field::required(&child(path, "cel"), ""));
                }
            } else {
                selector(item, path, errors);
            }
        },
    );
    each(
        field::items_at(spec, "config"),
        CONFIG_MAX,
        "spec.config",
        None,
        &mut errors,
        device_configuration,
    );
    errors
}

/// `validateSelector`: a CEL selector with a bounded expression.
fn selector(selector: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(cel) = selector.get("cel").filter(|value| !value.is_null()) else {
        errors.push(field::required(&child(path, "cel"), ""));
        return;
    };
    let expression = field::str_at(cel, "expression");
    let expression_path = child(&child(path, "cel"), "expression");
    if expression.is_empty() {
        errors.push(field::required(&expression_path, ""));
    } else if expression.len() > CEL_MAX {
        errors.push(field::too_long(&expression_path, CEL_MAX));
    } else {
        errors.extend(super::resource_cel::selector_error(
            expression,
            &expression_path,
        ));
    }
}

/// `validateDeviceConfiguration`: an opaque configuration.
pub(super) fn device_configuration(config: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(opaque) = config.get("opaque").filter(|value| !value.is_null()) else {
        errors.push(field::required(&child(path, "opaque"), ""));
        return;
    };
    let path = child(path, "opaque");
    errors.extend(csi_driver_name(
        field::str_at(opaque, "driver"),
        &child(&path, "driver"),
    ));
    let parameters_path = child(&path, "parameters");
    match opaque.get("parameters").filter(|value| !value.is_null()) {
        None => errors.push(field::required(&parameters_path, "")),
        Some(parameters) => {
            if parameters.to_string().len() > OPAQUE_PARAMETERS_MAX {
                errors.push(field::too_long(&parameters_path, OPAQUE_PARAMETERS_MAX));
            } else if !parameters.is_object() {
                errors.push(field::invalid_rendered(
                    &parameters_path,
                    "\"<value omitted>\"",
                    "parameters must be a valid JSON object",
                ));
            }
        }
    }
}

/// `ValidateResourceClaim`.
pub fn resource_claim(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    claim_spec(
        object.get("spec").unwrap_or(&Value::Null),
        "spec",
        &mut errors,
    );
    errors
}

/// `ValidateResourceClaimUpdate` and `ValidateResourceClaimTemplateUpdate`:
/// the spec is immutable (only that is checked, as kube does).
pub fn spec_immutable(object: &Value, old: &Value) -> Vec<FieldError> {
    let spec = object.get("spec").filter(|value| !value.is_null());
    if spec == old.get("spec").filter(|value| !value.is_null()) {
        return Vec::new();
    }
    vec![field::invalid_rendered(
        "spec",
        &spec.map_or("null".to_string(), Value::to_string),
        field::FIELD_IMMUTABLE,
    )]
}

/// `ValidateResourceClaimTemplate`: the template's metadata labels and
/// annotations, and the claim spec at `spec.spec`.
pub fn resource_claim_template(object: &Value) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    if let Some(metadata) = spec.get("metadata") {
        field::labels(
            "spec.metadata.labels",
            field::map_at(metadata, "labels"),
            &mut errors,
        );
        if let Some(annotations) = field::map_at(metadata, "annotations") {
            for key in annotations.keys() {
                for message in crate::selector::is_qualified_name(&key.to_lowercase()) {
                    errors.push(field::invalid("spec.metadata.annotations", key, message));
                }
            }
        }
    }
    claim_spec(
        spec.get("spec").unwrap_or(&Value::Null),
        "spec.spec",
        &mut errors,
    );
    errors
}

/// The request names of a claim, each with its subrequest names.
pub(super) fn request_names(devices: &Value) -> BTreeMap<&str, BTreeSet<&str>> {
    field::items_at(devices, "requests")
        .iter()
        .map(|request| {
            let subrequests = field::items_at(request, "firstAvailable")
                .iter()
                .map(|subrequest| field::str_at(subrequest, "name"))
                .collect();
            (field::str_at(request, "name"), subrequests)
        })
        .collect()
}

/// `requestNames.Has`: `request` or `request/subrequest`.
pub(super) fn names_request(names: &BTreeMap<&str, BTreeSet<&str>>, reference: &str) -> bool {
    let mut segments = reference.split('/');
    let (Some(request), subrequest, None) = (segments.next(), segments.next(), segments.next())
    else {
        return false;
    };
    match (names.get(request), subrequest) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(subrequests), Some(subrequest)) => subrequests.contains(subrequest),
    }
}

/// `validateDeviceClaim` at `<path>.devices`.
fn claim_spec(spec: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let devices = spec.get("devices").unwrap_or(&Value::Null);
    let path = child(path, "devices");
    let names = request_names(devices);
    each(
        field::items_at(devices, "requests"),
        REQUESTS_MAX,
        &child(&path, "requests"),
        Some("name"),
        errors,
        device_request,
    );
    each(
        field::items_at(devices, "constraints"),
        CONSTRAINTS_MAX,
        &child(&path, "constraints"),
        None,
        errors,
        |constraint, path, errors| {
            request_references(constraint, path, &names, errors);
            if let Some(name) = constraint.get("matchAttribute").and_then(Value::as_str) {
                super::resource_device::fully_qualified_name(
                    name,
                    &child(path, "matchAttribute"),
                    errors,
                );
            } else if !field::is_set(constraint, "distinctAttribute") {
                errors.push(field::required(&child(path, "matchAttribute"), ""));
            }
        },
    );
    each(
        field::items_at(devices, "config"),
        CONFIG_MAX,
        &child(&path, "config"),
        None,
        errors,
        |config, path, errors| {
            request_references(config, path, &names, errors);
            device_configuration(config, path, errors);
        },
    );
}

/// The `requests` of a constraint or config: each names a request (or subrequest).
pub(super) fn request_references(
    item: &Value,
    path: &str,
    names: &BTreeMap<&str, BTreeSet<&str>>,
    errors: &mut Vec<FieldError>,
) {
    let requests = field::items_at(item, "requests");
    let requests_path = child(path, "requests");
    for (position, reference) in requests.iter().enumerate() {
        let reference = reference.as_str().unwrap_or_default();
        request_reference(reference, &index(&requests_path, position), names, errors);
    }
    let mut seen = BTreeSet::new();
    for (position, reference) in requests.iter().enumerate() {
        let reference = reference.as_str().unwrap_or_default();
        if !seen.insert(reference) {
            errors.push(field::duplicate(
                &index(&requests_path, position),
                reference,
            ));
        }
    }
}

const REQUEST_REFERENCE: &str = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";

/// `validateRequestNameRef`: one or two DNS-1123 labels naming a request
/// (or a request's subrequest) of the claim.
pub(super) fn request_reference(
    name: &str,
    path: &str,
    names: &BTreeMap<&str, BTreeSet<&str>>,
    errors: &mut Vec<FieldError>,
) {
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() > 2 {
        errors.push(field::invalid(path, name, REQUEST_REFERENCE));
        return;
    }
    for segment in segments {
        field::dns1123_label(path, segment, errors);
    }
    if !names_request(names, name) {
        errors.push(field::invalid(path, name, REQUEST_REFERENCE));
    }
}

/// `validateDeviceRequest`.
fn device_request(request: &Value, path: &str, errors: &mut Vec<FieldError>) {
    field::dns1123_label(&child(path, "name"), field::str_at(request, "name"), errors);
    let first_available = field::items_at(request, "firstAvailable");
    let exactly = request.get("exactly").filter(|value| !value.is_null());
    match (first_available.is_empty(), exactly) {
        (true, None) => errors.push(field::required(
            path,
            "exactly one of `exactly` or `firstAvailable` is required",
        )),
        (false, Some(_)) => errors.push(field::invalid_rendered(
            path,
            "null",
            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
        )),
        (false, None) => each(
            first_available,
            FIRST_AVAILABLE_MAX,
            &child(path, "firstAvailable"),
            Some("name"),
            errors,
            |subrequest, path, errors| {
                field::dns1123_label(
                    &child(path, "name"),
                    field::str_at(subrequest, "name"),
                    errors,
                );
                exact_request(subrequest, path, errors);
            },
        ),
        (true, Some(exactly)) => exact_request(exactly, &child(path, "exactly"), errors),
    }
}

/// `validateExactDeviceRequest` (and the same rules of a subrequest).
fn exact_request(request: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let class = field::str_at(request, "deviceClassName");
    let class_path = child(path, "deviceClassName");
    if class.is_empty() {
        errors.push(field::required(&class_path, ""));
    } else {
        field::dns1123_subdomain(&class_path, class, errors);
    }
    each(
        field::items_at(request, "selectors"),
        SELECTORS_MAX,
        &child(path, "selectors"),
        None,
        errors,
        selector,
    );
    let mode = match field::str_at(request, "allocationMode") {
        "" => "ExactCount",
        other => other,
    };
    let count = field::int_at(request, "count").unwrap_or(0);
    let count_path = child(path, "count");
    match mode {
        "All" => {
            if count != 0 {
                errors.push(field::invalid_number(
                    &count_path,
                    count,
                    "must not be specified when allocationMode is 'All'",
                ));
            }
        }
        "ExactCount" => {
            // v1 defaults a missing count of ExactCount to 1.
            if field::is_set(request, "count") && count <= 0 {
                errors.push(field::invalid_number(
                    &count_path,
                    count,
                    "must be greater than zero",
                ));
            }
        }
        other => errors.push(field::not_supported(
            &child(path, "allocationMode"),
            other,
            &["All", "ExactCount"],
        )),
    }
}

/// `ValidateResourceSlice` (`old` on update: driver, pool name and node name immutable).
pub fn resource_slice(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = csi_driver_name(field::str_at(spec, "driver"), "spec.driver");
    let pool = spec.get("pool").unwrap_or(&Value::Null);
    let pool_name = field::str_at(pool, "name");
    if pool_name.is_empty() {
        errors.push(field::required("spec.pool.name", ""));
    } else {
        if pool_name.len() > POOL_NAME_MAX {
            errors.push(field::too_long("spec.pool.name", POOL_NAME_MAX));
        }
        for part in pool_name.split('/') {
            field::dns1123_subdomain("spec.pool.name", part, &mut errors);
        }
    }
    let slice_count = field::int_at(pool, "resourceSliceCount").unwrap_or(0);
    if slice_count <= 0 {
        errors.push(field::invalid_number(
            "spec.pool.resourceSliceCount",
            slice_count,
            "must be greater than zero",
        ));
    }
    let generation = field::int_at(pool, "generation").unwrap_or(0);
    if generation < 0 {
        errors.push(field::invalid_number(
            "spec.pool.generation",
            generation,
            "must be greater than or equal to zero",
        ));
    }
    if let Some(old) = old {
        let old_spec = old.get("spec").unwrap_or(&Value::Null);
        let old_pool = old_spec.get("pool").unwrap_or(&Value::Null);
        for (path, new, old) in [
            ("spec.pool.name", pool_name, field::str_at(old_pool, "name")),
            (
                "spec.driver",
                field::str_at(spec, "driver"),
                field::str_at(old_spec, "driver"),
            ),
        ] {
            errors.extend(field::immutable_string(path, new, old));
        }
        let node_name = spec.get("nodeName").and_then(Value::as_str);
        if node_name != old_spec.get("nodeName").and_then(Value::as_str) {
            errors.push(field::invalid_rendered(
                "spec.nodeName",
                &node_name.map_or("null".to_string(), crate::go::strconv::quote),
                field::FIELD_IMMUTABLE,
            ));
        }
    }
    let mut set = Vec::new();
    if let Some(node_name) = spec.get("nodeName").and_then(Value::as_str) {
        if node_name.is_empty() {
            errors.push(field::invalid(
                "spec.nodeName",
                "",
                "must be either unset or set to a non-empty string",
            ));
        } else {
            set.push("`nodeName`");
            field::dns1123_subdomain("spec.nodeName", node_name, &mut errors);
        }
    }
    if let Some(selector) = spec.get("nodeSelector").filter(|value| !value.is_null()) {
        set.push("`nodeSelector`");
        super::node_selector::node_selector(selector, "spec.nodeSelector", &mut errors);
        let terms = field::items_at(selector, "nodeSelectorTerms");
        if terms.len() != 1 {
            errors.push(field::invalid_rendered(
                "spec.nodeSelector.nodeSelectorTerms",
                &Value::Array(terms.to_vec()).to_string(),
                "must have exactly one node selector term",
            ));
        }
    }
    for flag in ["allNodes", "perDeviceNodeSelection"] {
        match spec.get(flag).and_then(Value::as_bool) {
            Some(true) => set.push(if flag == "allNodes" {
                "`allNodes`"
            } else {
                "`perDeviceNodeSelection`"
            }),
            Some(false) => errors.push(field::invalid_rendered(
                &child("spec", flag),
                "false",
                "must be either unset or set to true",
            )),
            None => {}
        }
    }
    match set.len() {
        0 => errors.push(field::required("spec", ONE_NODE_FIELD)),
        1 => {}
        _ => errors.push(field::invalid(
            "spec",
            &format!("{{{}}}", set.join(", ")),
            format!("{ONE_NODE_FIELD}, but multiple fields are set"),
        )),
    }
    each(
        field::items_at(spec, "devices"),
        SLICE_DEVICES_MAX,
        "spec.devices",
        Some("name"),
        &mut errors,
        |device, path, errors| {
            field::dns1123_label(&child(path, "name"), field::str_at(device, "name"), errors);
            super::resource_device::device_attributes_and_capacity(device, path, errors);
        },
    );
    errors
}

#[cfg(test)]
#[path = "resource_tests.rs"]
mod tests;
