//! Container handlers and per-container policies
//! (`pkg/apis/core/validation/validation.go`): `validateHandler` (shared by
//! probes and lifecycle hooks), `validateLifecycle`, `validateSleepAction`,
//! `validateResizePolicy`.

use serde_json::Value;

use super::container::port_number_or_name;
use super::field::{self, child, index};
use crate::status::FieldError;

/// `validateHTTPGetAction`'s header loop: each header name must match
/// `IsHTTPHeaderName`; kube reports the list's path, not the item's.
fn http_headers(action: &Value, path: &str, errors: &mut Vec<FieldError>) {
    for header in field::items_at(action, "httpHeaders") {
        let name = field::str_at(header, "name");
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-');
        if !valid {
            errors.push(field::invalid(
                path,
                name,
                "a valid HTTP header must consist of alphanumeric characters or '-' \
                 (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
            ));
        }
    }
}

/// `validateHandler` over the handler kinds `holder` may carry (a probe's
/// `exec`/`httpGet`/`tcpSocket`/`grpc`, a lifecycle hook's
/// `exec`/`httpGet`/`tcpSocket`/`sleep`), in kube's order: the first one set
/// is checked, the others are `Forbidden`. `grace` is the pod's
/// `terminationGracePeriodSeconds` (for `sleep`).
pub fn handler(
    holder: &Value,
    kinds: &[&str],
    grace: Option<i64>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let mut handlers = 0;
    for kind in ["exec", "httpGet", "tcpSocket", "grpc", "sleep"] {
        if !kinds.contains(&kind) {
            continue;
        }
        let Some(action) = holder.get(kind).filter(|action| !action.is_null()) else {
            continue;
        };
        let handler_path = child(path, kind);
        if handlers > 0 {
            errors.push(field::forbidden(
                &handler_path,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        handlers += 1;
        match kind {
            "exec" => {
                if field::items_at(action, "command").is_empty() {
                    errors.push(field::required(&child(&handler_path, "command"), ""));
                }
            }
            "httpGet" => {
                if field::str_at(action, "path").is_empty() {
                    errors.push(field::required(&child(&handler_path, "path"), ""));
                }
                port_number_or_name(action.get("port"), &child(&handler_path, "port"), errors);
                let scheme = field::str_at(action, "scheme");
                if !["HTTP", "HTTPS"].contains(&scheme) {
                    errors.push(field::not_supported(
                        &child(&handler_path, "scheme"),
                        scheme,
                        &["HTTP", "HTTPS"],
                    ));
                }
                http_headers(action, &child(&handler_path, "httpHeaders"), errors);
            }
            "tcpSocket" => {
                port_number_or_name(action.get("port"), &child(&handler_path, "port"), errors)
            }
            "grpc" => {
                let port = field::int_at(action, "port").unwrap_or(0);
                for message in field::port_number_errors(port) {
                    errors.push(field::invalid_number(
                        &child(&handler_path, "port"),
                        port,
                        message,
                    ));
                }
            }
            _ => sleep(action, grace, &handler_path, errors),
        }
    }
    if handlers == 0 {
        errors.push(field::required(path, "must specify a handler type"));
    }
}

/// `validateSleepAction` with `AllowPodLifecycleSleepActionZeroValue`
/// (the `PodLifecycleSleepActionAllowZero` gate is on in 1.34): zero up to
/// the grace period. Without a grace period nothing is checked here.
fn sleep(action: &Value, grace: Option<i64>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(grace) = grace else {
        return;
    };
    let seconds = field::int_at(action, "seconds").unwrap_or(0);
    if seconds < 0 || seconds > grace {
        errors.push(field::invalid_number(
            path,
            seconds,
            format!("must be non-negative and less than terminationGracePeriodSeconds ({grace})"),
        ));
    }
}

/// `validateLifecycle`: `postStart` then `preStop`.
pub fn lifecycle(container: &Value, grace: Option<i64>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(lifecycle) = container.get("lifecycle").filter(|l| !l.is_null()) else {
        return;
    };
    let lifecycle_path = child(path, "lifecycle");
    for hook in ["postStart", "preStop"] {
        if let Some(hook_handler) = lifecycle.get(hook).filter(|h| !h.is_null()) {
            handler(
                hook_handler,
                &["exec", "httpGet", "tcpSocket", "sleep"],
                grace,
                &child(&lifecycle_path, hook),
                errors,
            );
        }
    }
}

/// `validateResizePolicy` of a container (`restart_policy` is the pod's).
pub fn resize_policy(
    container: &Value,
    restart_policy: &str,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let policy_path = child(path, "resizePolicy");
    let mut seen = std::collections::BTreeSet::new();
    for (position, policy) in field::items_at(container, "resizePolicy")
        .iter()
        .enumerate()
    {
        let resource = field::str_at(policy, "resourceName");
        if !seen.insert(resource) {
            errors.push(field::duplicate(&index(&policy_path, position), resource));
        }
        match resource {
            "cpu" | "memory" => {}
            "" => errors.push(field::required(&policy_path, "")),
            other => errors.push(field::not_supported(
                &policy_path,
                other,
                &["cpu", "memory"],
            )),
        }
        let restart = field::str_at(policy, "restartPolicy");
        match restart {
            "NotRequired" | "RestartContainer" => {}
            "" => errors.push(field::required(&policy_path, "")),
            other => errors.push(field::not_supported(
                &policy_path,
                other,
                &["NotRequired", "RestartContainer"],
            )),
        }
        if restart_policy == "Never" && restart != "NotRequired" {
            errors.push(field::invalid(
                &policy_path,
                restart,
                "must be 'NotRequired' when `restartPolicy` is 'Never'",
            ));
        }
    }
}
