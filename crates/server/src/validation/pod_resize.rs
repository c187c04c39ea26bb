//! Writes through `pods/resize` (`pkg/apis/core/validation/validation.go`
//! `ValidatePodResize`, `validateContainerResize`, `resourcesRemoved`,
//! `dropCPUMemoryResourcesFromContainer`, `isPodResizeRequestSupported`, as
//! of kubernetes commit 000f26050b9b, with the memory-limit-decrease rule
//! that 1.34 removed (kubernetes#133012) left out): the pod's own rules,
//! then only the cpu and memory of regular and sidecar containers may change,
//! without removing a request or limit and without changing the QoS class.

use serde_json::{Map, Value};

use super::field::{self, child, index};
use super::pod::pod_spec;
use super::pod_options::PodValidationOptions;
use super::pod_qos;
use super::pod_update::normalized;
use crate::status::FieldError;

const ONLY_CPU_AND_MEMORY: &str = "only cpu and memory resources are mutable";

/// `ValidatePodResize` (metadata is the write path's).
pub fn pod_resize(new: &Value, old: &Value) -> Vec<FieldError> {
    let null = Value::Null;
    let new_spec = new.get("spec").unwrap_or(&null);
    let old_spec = old.get("spec").unwrap_or(&null);
    let mut errors = pod_spec(
        new_spec,
        "spec",
        true,
        PodValidationOptions::from_old_pod(old),
    );
    let has_pod_level_resources = |spec: &Value| {
        ["requests", "limits"].iter().any(|list| {
            spec.pointer(&format!("/resources/{list}"))
                .is_some_and(non_empty)
        })
    };
    if has_pod_level_resources(old_spec) || has_pod_level_resources(new_spec) {
        return vec![field::forbidden(
            "",
            "pods with pod-level resources cannot be resized",
        )];
    }
    if old
        .pointer("/metadata/annotations/kubernetes.io~1config.mirror")
        .is_some()
    {
        return vec![field::forbidden("", "static pods cannot be resized")];
    }
    if old_spec.pointer("/os/name").and_then(Value::as_str) == Some("windows") {
        return vec![field::forbidden("", "windows pods cannot be resized")];
    }
    if pod_qos::get_pod_qos(old) != pod_qos::compute_pod_qos(new) {
        let recorded = new
            .pointer("/status/qosClass")
            .and_then(Value::as_str)
            .unwrap_or_default();
        errors.push(field::invalid(
            "spec",
            recorded,
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    if !resize_request_supported(old) {
        errors.push(field::forbidden(
            "spec",
            "Pod running on node without support for resize",
        ));
    }
    let new_containers = field::items_at(new_spec, "containers");
    let new_init = field::items_at(new_spec, "initContainers");
    let old_containers = field::items_at(old_spec, "containers");
    let old_init = field::items_at(old_spec, "initContainers");
    // kube indexes the new lists by the old positions (and panics when they
    // are shorter); a list of another length is refused here instead.
    if new_containers.len() != old_containers.len() || new_init.len() != old_init.len() {
        errors.push(field::forbidden("spec", ONLY_CPU_AND_MEMORY));
        return errors;
    }
    for (position, (old_container, new_container)) in old_init.iter().zip(new_init).enumerate() {
        if is_restartable(old_container) {
            container_resize(
                new_container,
                old_container,
                &child(&index("spec.initContainers", position), "resources"),
                &mut errors,
            );
        }
    }
    for (position, (old_container, new_container)) in
        old_containers.iter().zip(new_containers).enumerate()
    {
        container_resize(
            new_container,
            old_container,
            &child(&index("spec.containers", position), "resources"),
            &mut errors,
        );
    }
    let mut munged_spec = new_spec.clone();
    for (position, (old_container, new_container)) in
        old_containers.iter().zip(new_containers).enumerate()
    {
        let munged = with_old_cpu_and_memory(new_container, old_container);
        if normalized(&munged) != normalized(old_container) {
            errors.push(field::forbidden("spec", ONLY_CPU_AND_MEMORY));
        }
        set_container(&mut munged_spec, "containers", position, munged);
    }
    for (position, (old_container, new_container)) in old_init.iter().zip(new_init).enumerate() {
        // `isRestartableInitContainer` of the new container, as kube reads it.
        if is_restartable(new_container) {
            let munged = with_old_cpu_and_memory(new_container, old_container);
            if normalized(&munged) != normalized(old_container) {
                errors.push(field::forbidden(
                    "spec",
                    "only cpu and memory resources for sidecar containers are mutable",
                ));
            }
            set_container(&mut munged_spec, "initContainers", position, munged);
        } else if normalized(new_container) != normalized(old_container) {
            errors.push(field::forbidden(
                "spec",
                "resources for non-sidecar init containers are immutable",
            ));
        }
    }
    if !errors.is_empty() {
        return errors;
    }
    if normalized(&munged_spec) != normalized(old_spec) {
        errors.push(field::forbidden("spec", ONLY_CPU_AND_MEMORY));
    }
    errors
}

fn non_empty(value: &Value) -> bool {
    value.as_object().is_some_and(|map| !map.is_empty())
}

/// `isRestartableInitContainer`: an init container with `restartPolicy: Always`.
fn is_restartable(container: &Value) -> bool {
    field::str_at(container, "restartPolicy") == "Always"
}

/// `isPodResizeRequestSupported`: the first running container's status
/// reports resources (a node that knows in-place resize); no running
/// container says nothing, and is allowed.
fn resize_request_supported(pod: &Value) -> bool {
    let statuses = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for status in statuses {
        if status
            .pointer("/state/running")
            .is_some_and(|running| !running.is_null())
        {
            return status
                .get("resources")
                .is_some_and(|resources| !resources.is_null());
        }
    }
    true
}

/// `validateContainerResize` as 1.34 has it: requests and limits may not be removed.
fn container_resize(new: &Value, old: &Value, path: &str, errors: &mut Vec<FieldError>) {
    for (list, message) in [
        ("requests", "resource requests cannot be removed"),
        ("limits", "resource limits cannot be removed"),
    ] {
        let pointer = format!("/resources/{list}");
        let empty = Map::new();
        let new_list = new
            .pointer(&pointer)
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let old_list = old
            .pointer(&pointer)
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if old_list.keys().any(|name| !new_list.contains_key(name)) {
            errors.push(field::forbidden(&child(path, list), message));
        }
    }
}

/// `dropCPUMemoryResourcesFromContainer`: the new container whose cpu and
/// memory requests and limits are the old ones (a list the old container
/// lacks is dropped; `claims` is dropped too, as kube rebuilds the struct).
fn with_old_cpu_and_memory(new: &Value, old: &Value) -> Value {
    let mut munged = new.clone();
    let mut resources = Map::new();
    for list in ["limits", "requests"] {
        let Some(old_list) = old
            .pointer(&format!("/resources/{list}"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let mut kept = new
            .pointer(&format!("/resources/{list}"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for name in ["cpu", "memory"] {
            match old_list.get(name) {
                Some(quantity) => kept.insert(name.into(), quantity.clone()),
                None => kept.remove(name),
            };
        }
        resources.insert(list.into(), Value::Object(kept));
    }
    if let Some(container) = munged.as_object_mut() {
        container.insert("resources".into(), Value::Object(resources));
    }
    munged
}

/// Puts `munged` in place of `spec[list][position]`.
fn set_container(spec: &mut Value, list: &str, position: usize, munged: Value) {
    if let Some(slot) = spec
        .get_mut(list)
        .and_then(Value::as_array_mut)
        .and_then(|items| items.get_mut(position))
    {
        *slot = munged;
    }
}

#[cfg(test)]
#[path = "pod_resize_tests.rs"]
mod tests;
