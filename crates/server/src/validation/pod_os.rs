//! `spec.os` (`pkg/apis/core/validation/validation.go` `validateOS`,
//! `validateLinux`, `validateWindows`): a known OS name, then the security
//! fields that OS cannot use.

use serde_json::Value;

use super::field::{self, child};
use super::pod_security_context::visit_containers;
use crate::status::FieldError;

const FOR_WINDOWS: &str = "cannot be set for a windows pod";

/// The tail of `ValidatePodSpec`: `validateOS`, then `validateLinux` or
/// `validateWindows` when the name is valid.
pub fn os(spec: &Value, spec_path: &str, errors: &mut Vec<FieldError>) {
    let Some(os) = spec.get("os").filter(|os| !os.is_null()) else {
        return;
    };
    let os_path = child(spec_path, "os");
    match field::str_at(os, "name") {
        "" => errors.push(field::required(&child(&os_path, "name"), "cannot be empty")),
        "linux" => linux(spec, spec_path, errors),
        "windows" => windows(spec, spec_path, errors),
        other => errors.push(field::not_supported(&os_path, other, &["linux", "windows"])),
    }
}

fn is_set(object: &Value, name: &str) -> bool {
    object.get(name).is_some_and(|value| !value.is_null())
}

/// `validateLinux`.
fn linux(spec: &Value, spec_path: &str, errors: &mut Vec<FieldError>) {
    let message = "windows options cannot be set for a linux pod";
    let context = spec.get("securityContext").unwrap_or(&Value::Null);
    if is_set(context, "windowsOptions") {
        errors.push(field::forbidden(
            &child(&child(spec_path, "securityContext"), "windowsOptions"),
            message,
        ));
    }
    for (container, path) in visit_containers(spec, spec_path) {
        let context = container.get("securityContext").unwrap_or(&Value::Null);
        if is_set(context, "windowsOptions") {
            errors.push(field::forbidden(
                &child(&child(&path, "securityContext"), "windowsOptions"),
                message,
            ));
        }
    }
}

/// `validateWindows`. kube keeps `hostUsers`, `hostPID`, `hostIPC` and
/// `shareProcessNamespace` in the internal pod security context and names
/// them under `spec`.
fn windows(spec: &Value, spec_path: &str, errors: &mut Vec<FieldError>) {
    let context_path = child(spec_path, "securityContext");
    let context = spec.get("securityContext").unwrap_or(&Value::Null);
    let in_context = |name: &str| child(&context_path, name);
    let in_spec = |name: &str| child(spec_path, name);
    let truthy = |name: &str| spec.get(name).and_then(Value::as_bool) == Some(true);
    let checks: [(bool, String); 14] = [
        (
            is_set(context, "appArmorProfile"),
            in_context("appArmorProfile"),
        ),
        (
            is_set(context, "seLinuxOptions"),
            in_context("seLinuxOptions"),
        ),
        (is_set(spec, "hostUsers"), in_spec("hostUsers")),
        (truthy("hostPID"), in_spec("hostPID")),
        (truthy("hostIPC"), in_spec("hostIPC")),
        (
            is_set(context, "seccompProfile"),
            in_context("seccompProfile"),
        ),
        (is_set(context, "fsGroup"), in_context("fsGroup")),
        (
            is_set(context, "fsGroupChangePolicy"),
            in_context("fsGroupChangePolicy"),
        ),
        (
            !field::items_at(context, "sysctls").is_empty(),
            in_context("sysctls"),
        ),
        (
            is_set(spec, "shareProcessNamespace"),
            in_spec("shareProcessNamespace"),
        ),
        (is_set(context, "runAsUser"), in_context("runAsUser")),
        (is_set(context, "runAsGroup"), in_context("runAsGroup")),
        // A nil slice in Go: an empty list survives decoding as non-nil.
        (
            context
                .get("supplementalGroups")
                .is_some_and(Value::is_array),
            in_context("supplementalGroups"),
        ),
        (
            is_set(context, "supplementalGroupsPolicy"),
            in_context("supplementalGroupsPolicy"),
        ),
    ];
    for (set, path) in checks {
        if set {
            errors.push(field::forbidden(&path, FOR_WINDOWS));
        }
    }
    if is_set(context, "seLinuxChangePolicy") {
        errors.push(field::forbidden(
            &in_context("seLinuxChangePolicy"),
            FOR_WINDOWS,
        ));
    }
    for (container, path) in visit_containers(spec, spec_path) {
        let Some(context) = container.get("securityContext").filter(|c| !c.is_null()) else {
            continue;
        };
        let context_path = child(&path, "securityContext");
        for name in [
            "appArmorProfile",
            "seLinuxOptions",
            "seccompProfile",
            "capabilities",
            "readOnlyRootFilesystem",
            "privileged",
            "allowPrivilegeEscalation",
            "procMount",
            "runAsUser",
            "runAsGroup",
        ] {
            if is_set(context, name) {
                errors.push(field::forbidden(&child(&context_path, name), FOR_WINDOWS));
            }
        }
    }
}
