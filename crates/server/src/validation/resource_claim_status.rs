//! A ResourceClaim's `/status` (`pkg/apis/resource/validation/validation.go`
//! `ValidateResourceClaimStatusUpdate`, `validateResourceClaimStatusUpdate`,
//! `validateAllocationResult`, `validateDeviceStatus`,
//! `validateNetworkDeviceData`): consumers in `reservedFor` (at most 256,
//! unique uids, only with an allocation, none added once the claim is being
//! deleted), the allocation (immutable once set; a new one names requests
//! of the claim, drivers, pools and devices, config sources), and the
//! devices' reported status (allocated devices only, conditions, data,
//! network data). 1.34's alpha fields (binding conditions, tolerations,
//! share IDs) are not checked.

use std::collections::BTreeSet;
use std::net::IpAddr;

use serde_json::Value;

use super::field::{self, child, index};
use super::resource::{device_configuration, each, request_names, request_reference};
use super::storage::csi_driver_name;
use crate::status::FieldError;

/// `resource.ResourceClaimReservedForMaxSize`.
const RESERVED_FOR_MAX: usize = 256;
/// `resource.AllocationResultsMaxSize`.
const RESULTS_MAX: usize = 32;
/// `2 * resource.DeviceConfigMaxSize` (class and claim).
const ALLOCATION_CONFIG_MAX: usize = 64;
/// `resource.AllocatedDeviceStatusMaxConditions`.
const CONDITIONS_MAX: usize = 8;
/// `resource.AllocatedDeviceStatusDataMaxLength`.
const DATA_MAX: usize = 10 * 1024;
/// `resource.NetworkDeviceDataInterfaceNameMaxLength`.
const INTERFACE_NAME_MAX: usize = 256;
/// `resource.NetworkDeviceDataHardwareAddressMaxLength`.
const HARDWARE_ADDRESS_MAX: usize = 128;
/// `resource.NetworkDeviceDataMaxIPs`.
const IPS_MAX: usize = 16;
/// `resource.PoolNameMaxLength`.
const POOL_NAME_MAX: usize = 253;

fn set<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|value| !value.is_null())
}

/// `validatePoolName`.
fn pool_name(name: &str, path: &str, errors: &mut Vec<FieldError>) {
    if name.is_empty() {
        errors.push(field::required(path, ""));
        return;
    }
    if name.len() > POOL_NAME_MAX {
        errors.push(field::too_long(path, POOL_NAME_MAX));
    }
    for part in name.split('/') {
        field::dns1123_subdomain(path, part, errors);
    }
}

/// `structured.MakeDeviceID(...).String()`.
fn device_id(item: &Value) -> String {
    format!(
        "{}/{}/{}",
        field::str_at(item, "driver"),
        field::str_at(item, "pool"),
        field::str_at(item, "device")
    )
}

/// `ValidateResourceClaimStatusUpdate` (after core's metadata update rules).
pub fn resource_claim_status_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let status = object.get("status").unwrap_or(&Value::Null);
    let old_status = old.get("status").unwrap_or(&Value::Null);
    let devices = object.pointer("/spec/devices").unwrap_or(&Value::Null);
    let names = request_names(devices);
    let deleted = object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|value| !value.is_null());
    let mut errors = Vec::new();
    let reserved_for = field::items_at(status, "reservedFor");
    each(
        reserved_for,
        RESERVED_FOR_MAX,
        "status.reservedFor",
        Some("uid"),
        &mut errors,
        |reference, path, errors| {
            for name in ["resource", "name", "uid"] {
                if field::str_at(reference, name).is_empty() {
                    errors.push(field::required(&child(path, name), ""));
                }
            }
        },
    );
    let allocation = set(status, "allocation");
    let allocated: BTreeSet<String> = allocation
        .and_then(|allocation| allocation.get("devices"))
        .map(|devices| field::items_at(devices, "results"))
        .unwrap_or_default()
        .iter()
        .map(device_id)
        .collect();
    let device_statuses = field::items_at(status, "devices");
    for (position, device) in device_statuses.iter().enumerate() {
        device_status(
            device,
            &index("status.devices", position),
            &allocated,
            &mut errors,
        );
    }
    let mut seen = BTreeSet::new();
    for (position, device) in device_statuses.iter().enumerate() {
        let id = device_id(device);
        if !seen.insert(id.clone()) {
            errors.push(FieldError {
                kind: crate::status::FieldErrorKind::Duplicate(id),
                field: child(&index("status.devices", position), "deviceID"),
                detail: String::new(),
            });
        }
    }
    if !reserved_for.is_empty() {
        if allocation.is_none() {
            errors.push(field::forbidden(
                "status.reservedFor",
                "may not be specified when `allocated` is not set",
            ));
        } else if deleted {
            let old_reserved = field::items_at(old_status, "reservedFor");
            if reserved_for
                .iter()
                .any(|entry| !old_reserved.contains(entry))
            {
                errors.push(field::forbidden(
                    "status.reservedFor",
                    "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                ));
            }
        }
    }
    match (allocation, set(old_status, "allocation")) {
        (Some(allocation), Some(old_allocation)) => {
            if allocation != old_allocation {
                errors.push(field::invalid_rendered(
                    "status.allocation",
                    &allocation.to_string(),
                    field::FIELD_IMMUTABLE,
                ));
            }
        }
        (Some(allocation), None) => {
            allocation_result(allocation, "status.allocation", &names, &mut errors);
        }
        (None, _) => {}
    }
    errors
}

type RequestNames<'a> = std::collections::BTreeMap<&'a str, BTreeSet<&'a str>>;

/// `validateAllocationResult` for a new allocation.
fn allocation_result(
    allocation: &Value,
    path: &str,
    names: &RequestNames<'_>,
    errors: &mut Vec<FieldError>,
) {
    let devices = allocation.get("devices").unwrap_or(&Value::Null);
    let devices_path = child(path, "devices");
    each(
        field::items_at(devices, "results"),
        RESULTS_MAX,
        &child(&devices_path, "results"),
        None,
        errors,
        |result, path, errors| {
            request_reference(
                field::str_at(result, "request"),
                &child(path, "request"),
                names,
                errors,
            );
            errors.extend(csi_driver_name(
                field::str_at(result, "driver"),
                &child(path, "driver"),
            ));
            pool_name(field::str_at(result, "pool"), &child(path, "pool"), errors);
            field::dns1123_label(
                &child(path, "device"),
                field::str_at(result, "device"),
                errors,
            );
        },
    );
    each(
        field::items_at(devices, "config"),
        ALLOCATION_CONFIG_MAX,
        &child(&devices_path, "config"),
        None,
        errors,
        |config, path, errors| {
            let source_path = child(path, "source");
            match field::str_at(config, "source") {
                "" => errors.push(field::required(&source_path, "")),
                "FromClaim" | "FromClass" => {}
                other => errors.push(field::not_supported(
                    &source_path,
                    other,
                    &["FromClaim", "FromClass"],
                )),
            }
            let requests = field::items_at(config, "requests");
            let requests_path = child(path, "requests");
            let mut seen = BTreeSet::new();
            for (position, reference) in requests.iter().enumerate() {
                let reference = reference.as_str().unwrap_or_default();
                request_reference(reference, &index(&requests_path, position), names, errors);
            }
            for (position, reference) in requests.iter().enumerate() {
                let reference = reference.as_str().unwrap_or_default();
                if !seen.insert(reference) {
                    errors.push(field::duplicate(
                        &index(&requests_path, position),
                        reference,
                    ));
                }
            }
            device_configuration(config, path, errors);
        },
    );
    if let Some(selector) = set(allocation, "nodeSelector") {
        super::node_selector::node_selector(selector, &child(path, "nodeSelector"), errors);
    }
}

/// `validateDeviceStatus`.
fn device_status(
    device: &Value,
    path: &str,
    allocated: &BTreeSet<String>,
    errors: &mut Vec<FieldError>,
) {
    errors.extend(csi_driver_name(
        field::str_at(device, "driver"),
        &child(path, "driver"),
    ));
    pool_name(field::str_at(device, "pool"), &child(path, "pool"), errors);
    field::dns1123_label(
        &child(path, "device"),
        field::str_at(device, "device"),
        errors,
    );
    let id = device_id(device);
    if !allocated.contains(&id) {
        errors.push(field::invalid_rendered(
            path,
            &id,
            "must be an allocated device in the claim",
        ));
    }
    let conditions = field::items_at(device, "conditions");
    let conditions_path = child(path, "conditions");
    if conditions.len() > CONDITIONS_MAX {
        errors.push(FieldError {
            kind: crate::status::FieldErrorKind::TooMany(
                conditions.len() as i64,
                CONDITIONS_MAX as i64,
            ),
            field: conditions_path.clone(),
            detail: String::new(),
        });
    }
    errors.extend(super::policy::conditions(conditions, &conditions_path));
    if let Some(data) = set(device, "data") {
        let data_path = child(path, "data");
        if data.to_string().len() > DATA_MAX {
            errors.push(field::too_long(&data_path, DATA_MAX));
        } else if !data.is_object() {
            errors.push(field::invalid(
                &data_path,
                "<value omitted>",
                "must be a valid JSON object",
            ));
        }
    }
    if let Some(network) = set(device, "networkData") {
        network_data(network, &child(path, "networkData"), errors);
    }
}

/// `validateNetworkDeviceData`.
fn network_data(network: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if field::str_at(network, "interfaceName").len() > INTERFACE_NAME_MAX {
        errors.push(field::too_long(
            &child(path, "interfaceName"),
            INTERFACE_NAME_MAX,
        ));
    }
    if field::str_at(network, "hardwareAddress").len() > HARDWARE_ADDRESS_MAX {
        errors.push(field::too_long(
            &child(path, "hardwareAddress"),
            HARDWARE_ADDRESS_MAX,
        ));
    }
    let ips = field::items_at(network, "ips");
    let ips_path = child(path, "ips");
    if ips.len() > IPS_MAX {
        errors.push(FieldError {
            kind: crate::status::FieldErrorKind::TooMany(ips.len() as i64, IPS_MAX as i64),
            field: ips_path,
            detail: String::new(),
        });
        return;
    }
    let mut seen = BTreeSet::new();
    for (position, ip) in ips.iter().enumerate() {
        let ip = ip.as_str().unwrap_or_default();
        interface_address(ip, &index(&ips_path, position), errors);
    }
    for (position, ip) in ips.iter().enumerate() {
        let ip = ip.as_str().unwrap_or_default();
        if !seen.insert(ip) {
            errors.push(field::duplicate(&index(&ips_path, position), ip));
        }
    }
}

/// `validation.IsValidInterfaceAddress`: an address with its prefix
/// length, in canonical form.
fn interface_address(value: &str, path: &str, errors: &mut Vec<FieldError>) {
    let parsed = value.split_once('/').and_then(|(address, _)| {
        super::ip_address::parse_cidr_sloppy(value).zip(super::ip_address::parse_ip_sloppy(address))
    });
    let Some((cidr, address)) = parsed else {
        errors.push(field::invalid(
            path,
            value,
            "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)",
        ));
        return;
    };
    let (address, prefix) = match address {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) if cidr.prefix > 32 => (IpAddr::V4(v4), cidr.prefix - 96),
            Some(v4) => (IpAddr::V4(v4), cidr.prefix),
            None => (address, cidr.prefix),
        },
        v4 => (v4, cidr.prefix),
    };
    let canonical = format!("{address}/{prefix}");
    if value != canonical {
        errors.push(field::invalid(
            path,
            value,
            format!(
                "must be in canonical form ({})",
                crate::go::strconv::quote(&canonical)
            ),
        ));
    }
}

#[cfg(test)]
#[path = "resource_claim_status_tests.rs"]
mod tests;
