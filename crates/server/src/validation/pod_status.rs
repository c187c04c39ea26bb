//! `pods/status` writes (`pkg/apis/core/validation/validation.go`
//! `ValidatePodStatusUpdate`, `validatePodConditions`,
//! `ValidateContainerStateTransition`, `ValidateInitContainerStateTransition`,
//! `validatePodResourceClaimStatuses`, `validatePodIPs`, `validateHostIPs`,
//! `validateContainerStatusUsers`, `validateContainerStatusAllocatedResourcesStatus`,
//! as of kubernetes commit 000f26050b9b). The spec is the old one by now
//! (`podStatusStrategy.PrepareForUpdate`).

use std::collections::BTreeSet;
use std::net::IpAddr;

use serde_json::Value;

use super::field::{self, child, index};
use super::ip_address::parse_ip_sloppy;
use super::ip_field;
use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind};

const MAX_INT32: i64 = 2_147_483_647;

/// `ValidatePodStatusUpdate` (ObjectMeta is the write path's).
pub fn pod_status_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let null = Value::Null;
    let status = new.get("status").unwrap_or(&null);
    let old_status = old.get("status").unwrap_or(&null);
    let spec = new.get("spec").unwrap_or(&null);
    let old_spec = old.get("spec").unwrap_or(&null);
    let mut errors = Vec::new();
    // kube builds this path from `metadata` (and capitalizes `Type`).
    conditions(
        field::items_at(status, "conditions"),
        "metadata.conditions",
        &mut errors,
    );
    let nominated = field::str_at(status, "nominatedNodeName");
    if nominated != field::str_at(old_status, "nominatedNodeName") && !nominated.is_empty() {
        field::dns1123_subdomain("status.nominatedNodeName", nominated, &mut errors);
    }
    let qos = field::str_at(status, "qosClass");
    if qos != field::str_at(old_status, "qosClass") {
        errors.push(field::invalid(
            "status.qosClass",
            qos,
            field::FIELD_IMMUTABLE,
        ));
    }
    let restart_policy = match field::str_at(old_spec, "restartPolicy") {
        "" => "Always",
        policy => policy,
    };
    let restartable_init: BTreeSet<&str> = field::items_at(old_spec, "initContainers")
        .iter()
        .filter(|container| field::str_at(container, "restartPolicy") == "Always")
        .map(|container| field::str_at(container, "name"))
        .collect();
    for (list, policy, skipped) in [
        ("containerStatuses", restart_policy, &BTreeSet::new()),
        ("initContainerStatuses", restart_policy, &restartable_init),
        // The kubelet never restarts ephemeral containers.
        ("ephemeralContainerStatuses", "Never", &BTreeSet::new()),
    ] {
        state_transitions(
            field::items_at(status, list),
            field::items_at(old_status, list),
            &child("status", list),
            policy,
            skipped,
            &mut errors,
        );
    }
    resource_claim_statuses(status, spec, &mut errors);
    pod_ips(status, &mut errors);
    host_ips(status, &mut errors);
    let windows = spec.pointer("/os/name").and_then(Value::as_str) == Some("windows");
    for list in [
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
    ] {
        container_status_users(
            field::items_at(status, list),
            &child("status", list),
            windows,
            &mut errors,
        );
    }
    allocated_resources_status(
        field::items_at(status, "containerStatuses"),
        "status.containerStatuses",
        field::items_at(spec, "containers"),
        &mut errors,
    );
    allocated_resources_status(
        field::items_at(status, "initContainerStatuses"),
        "status.initContainerStatuses",
        field::items_at(spec, "initContainers"),
        &mut errors,
    );
    for (position, ephemeral) in field::items_at(status, "ephemeralContainerStatuses")
        .iter()
        .enumerate()
    {
        if !field::items_at(ephemeral, "allocatedResourcesStatus").is_empty() {
            errors.push(field::forbidden(
                &child(
                    &index("status.ephemeralContainerStatuses", position),
                    "allocatedResourcesStatus",
                ),
                "must not be specified in container status",
            ));
        }
    }
    errors
}

/// `validatePodConditions`: custom condition types are qualified names.
fn conditions(list: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    for (position, condition) in list.iter().enumerate() {
        let kind = field::str_at(condition, "type");
        if matches!(kind, "PodScheduled" | "Ready" | "Initialized") {
            continue;
        }
        field::label_name(&child(&index(path, position), "Type"), kind, errors);
    }
}

/// `ValidateContainerStateTransition` (and the init containers' variant,
/// which also lets restartable init containers leave the terminated state).
fn state_transitions(
    new: &[Value],
    old: &[Value],
    path: &str,
    restart_policy: &str,
    restartable: &BTreeSet<&str>,
    errors: &mut Vec<FieldError>,
) {
    if restart_policy == "Always" {
        return;
    }
    let terminated = |status: &Value| {
        status
            .pointer("/state/terminated")
            .is_some_and(|state| !state.is_null())
    };
    for (position, old_status) in old.iter().enumerate() {
        if !terminated(old_status) {
            continue;
        }
        let exit_code = old_status
            .pointer("/state/terminated/exitCode")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if exit_code != 0 && restart_policy == "OnFailure" {
            continue;
        }
        let name = field::str_at(old_status, "name");
        if restartable.contains(name) {
            continue;
        }
        for new_status in new {
            if field::str_at(new_status, "name") == name && !terminated(new_status) {
                errors.push(field::forbidden(
                    &child(&index(path, position), "state"),
                    "may not be transitioned to non-terminated state",
                ));
            }
        }
    }
}

/// `validatePodResourceClaimStatuses`.
fn resource_claim_statuses(status: &Value, spec: &Value, errors: &mut Vec<FieldError>) {
    let claims: BTreeSet<&str> = field::items_at(spec, "resourceClaims")
        .iter()
        .map(|claim| field::str_at(claim, "name"))
        .collect();
    let mut seen = BTreeSet::new();
    let path = "status.resourceClaimStatuses";
    for (position, claim_status) in field::items_at(status, "resourceClaimStatuses")
        .iter()
        .enumerate()
    {
        let name_path = child(&index(path, position), "name");
        let name = field::str_at(claim_status, "name");
        if !claims.contains(name) {
            errors.push(field::invalid(
                &name_path,
                name,
                "must match the name of an entry in `spec.resourceClaims`",
            ));
        }
        if !seen.insert(name) {
            errors.push(field::duplicate(&name_path, name));
        }
        if let Some(claim_name) = claim_status
            .get("resourceClaimName")
            .and_then(Value::as_str)
        {
            field::dns1123_subdomain(&name_path, claim_name, errors);
        }
    }
}

/// `validatePodIPs`.
fn pod_ips(status: &Value, errors: &mut Vec<FieldError>) {
    let path = "status.podIPs";
    let list = field::items_at(status, "podIPs");
    for (position, entry) in list.iter().enumerate() {
        ip_field::valid_ip(&index(path, position), field::str_at(entry, "ip"), errors);
    }
    if list.len() > 1 {
        if !dual_stack(list) || list.len() > 2 {
            errors.push(ip_list_invalid(path, "PodIP", list));
        }
        duplicates(list, path, "PodIP", errors);
    }
}

/// `validateHostIPs`.
fn host_ips(status: &Value, errors: &mut Vec<FieldError>) {
    let path = "status.hostIPs";
    let list = field::items_at(status, "hostIPs");
    let Some(first) = list.first() else {
        return;
    };
    if field::str_at(status, "hostIP") != field::str_at(first, "ip") {
        errors.push(field::invalid(
            &child(&index(path, 0), "ip"),
            field::str_at(first, "ip"),
            "must be equal to `hostIP`",
        ));
    }
    for (position, entry) in list.iter().enumerate() {
        ip_field::valid_ip(&index(path, position), field::str_at(entry, "ip"), errors);
    }
    if list.len() > 1 {
        duplicates(list, path, "HostIP", errors);
        if !dual_stack(list) || list.len() > 2 {
            errors.push(ip_list_invalid(path, "HostIP", list));
        }
    }
}

/// `netutils.IsDualStackIPStrings`: one IPv4 and one IPv6 address at least
/// (an unparsable entry makes it false; kube adds an internal error too).
fn dual_stack(list: &[Value]) -> bool {
    let mut v4 = false;
    let mut v6 = false;
    for entry in list {
        match parse_ip_sloppy(field::str_at(entry, "ip")) {
            Some(IpAddr::V4(_)) => v4 = true,
            Some(IpAddr::V6(address)) if address.to_ipv4_mapped().is_some() => v4 = true,
            Some(IpAddr::V6(_)) => v6 = true,
            None => return false,
        }
    }
    v4 && v6
}

/// Go's `%#v` of one `core.PodIP` / `core.HostIP`.
fn render_ip(type_name: &str, entry: &Value) -> String {
    format!(
        "core.{type_name}{{IP:{}}}",
        quote(field::str_at(entry, "ip"))
    )
}

fn ip_list_invalid(path: &str, type_name: &str, list: &[Value]) -> FieldError {
    let items: Vec<String> = list
        .iter()
        .map(|entry| render_ip(type_name, entry))
        .collect();
    FieldError {
        kind: FieldErrorKind::Invalid(format!("[]core.{type_name}{{{}}}", items.join(", "))),
        field: path.to_string(),
        detail: "may specify no more than one IP for each IP family".to_string(),
    }
}

fn duplicates(list: &[Value], path: &str, type_name: &str, errors: &mut Vec<FieldError>) {
    let mut seen = BTreeSet::new();
    for (position, entry) in list.iter().enumerate() {
        if !seen.insert(field::str_at(entry, "ip")) {
            errors.push(FieldError {
                kind: FieldErrorKind::Duplicate(render_ip(type_name, entry)),
                field: index(path, position),
                detail: String::new(),
            });
        }
    }
}

/// `validateContainerStatusUsers` (kube's path leaves out `user`).
fn container_status_users(list: &[Value], path: &str, windows: bool, errors: &mut Vec<FieldError>) {
    for (position, status) in list.iter().enumerate() {
        let Some(user) = status.get("user").filter(|user| !user.is_null()) else {
            continue;
        };
        let linux_path = child(&index(path, position), "linux");
        let linux = user.get("linux").filter(|linux| !linux.is_null());
        if windows {
            if linux.is_some() {
                errors.push(field::forbidden(
                    &linux_path,
                    "cannot be set for a windows pod",
                ));
            }
            continue;
        }
        let Some(linux) = linux else {
            continue;
        };
        let range = field::inclusive_range_error(0, MAX_INT32);
        for id in ["uid", "gid"] {
            let value = field::int_at(linux, id).unwrap_or(0);
            if !(0..=MAX_INT32).contains(&value) {
                errors.push(field::invalid_number(
                    &child(&linux_path, id),
                    value,
                    range.clone(),
                ));
            }
        }
        for (group_position, group) in field::items_at(linux, "supplementalGroups")
            .iter()
            .enumerate()
        {
            let value = group.as_i64().unwrap_or(0);
            if !(0..=MAX_INT32).contains(&value) {
                errors.push(field::invalid_number(
                    &index(&child(&linux_path, "supplementalGroups"), group_position),
                    value,
                    range.clone(),
                ));
            }
        }
    }
}

/// `validateContainerStatusAllocatedResourcesStatus`: names match the
/// container's requests or claims, health is a known value, IDs are unique.
fn allocated_resources_status(
    statuses: &[Value],
    path: &str,
    containers: &[Value],
    errors: &mut Vec<FieldError>,
) {
    for (position, status) in statuses.iter().enumerate() {
        let name = field::str_at(status, "name");
        let container = containers
            .iter()
            .find(|container| field::str_at(container, "name") == name);
        let list_path = child(&index(path, position), "allocatedResourcesStatus");
        for (entry_position, allocated) in field::items_at(status, "allocatedResourcesStatus")
            .iter()
            .enumerate()
        {
            let entry_path = index(&list_path, entry_position);
            let resource = field::str_at(allocated, "name");
            if let Some(container) = container {
                let (found, message) = if resource.starts_with("claim:") {
                    let found = field::items_at(
                        container.get("resources").unwrap_or(&Value::Null),
                        "claims",
                    )
                    .iter()
                    .any(|claim| {
                        let mut claim_name = format!("claim:{}", field::str_at(claim, "name"));
                        let request = field::str_at(claim, "request");
                        if !request.is_empty() {
                            claim_name.push('/');
                            claim_name.push_str(request);
                        }
                        claim_name == resource
                    });
                    (found, "must match one of the container's resource claims in a format 'claim:<claimName>/<request>' or 'claim:<claimName>' if request is empty")
                } else {
                    let found = container
                        .pointer("/resources/requests")
                        .and_then(Value::as_object)
                        .is_some_and(|requests| requests.contains_key(resource));
                    (found, "must match one of the container's resource requests")
                };
                if !found {
                    errors.push(field::invalid(
                        &child(&entry_path, "name"),
                        resource,
                        message,
                    ));
                }
            }
            let mut seen = BTreeSet::new();
            for (resource_position, entry) in
                field::items_at(allocated, "resources").iter().enumerate()
            {
                let resource_path = index(&child(&entry_path, "resources"), resource_position);
                let health = field::str_at(entry, "health");
                if !matches!(health, "Healthy" | "Unhealthy" | "Unknown") {
                    errors.push(field::not_supported(
                        &child(&resource_path, "health"),
                        health,
                        &["Healthy", "Unhealthy", "Unknown"],
                    ));
                }
                let id = field::str_at(entry, "resourceID");
                if !seen.insert(id) {
                    errors.push(field::duplicate(&child(&resource_path, "resourceID"), id));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "pod_status_tests.rs"]
mod tests;
