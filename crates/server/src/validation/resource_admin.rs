//! Admin access to devices (`pkg/registry/resource/utils.go`
//! `AuthorizedForAdmin`, `AuthorizedForAdminStatus`; DRAAdminAccess is beta
//! and on in 1.34): a claim or claim template whose `exactly` request asks
//! for `adminAccess`, or a claim status whose new allocation grants it, is
//! refused unless the claim's namespace carries the
//! `resource.kubernetes.io/admin-access: true` label. kube's strategies run
//! this before the kind's validation, so its error comes first.

use serde_json::{Map, Value};

use super::field::{self, index};
use crate::status::FieldError;

/// `resource.DRAAdminNamespaceLabelKey`.
pub const ADMIN_NAMESPACE_LABEL: &str = "resource.kubernetes.io/admin-access";

/// The requests of a claim's or claim template's spec.
fn requests(object: &Value, template: bool) -> &[Value] {
    let spec = if template {
        object.pointer("/spec/spec")
    } else {
        object.get("spec")
    };
    spec.and_then(|spec| spec.get("devices"))
        .map(|devices| field::items_at(devices, "requests"))
        .unwrap_or_default()
}

/// The path of the first request asking for admin access (subrequests
/// cannot), if any: kube reports it at `spec.devices.requests[i].adminAccess`
/// for claims and templates alike.
pub fn requested_in_spec(object: &Value, template: bool) -> Option<String> {
    requests(object, template)
        .iter()
        .position(|request| {
            request
                .pointer("/exactly/adminAccess")
                .and_then(Value::as_bool)
                == Some(true)
        })
        .map(|position| format!("{}.adminAccess", index("spec.devices.requests", position)))
}

/// `adminRequested`: the path of the first allocation result granting admin access.
fn requested_in_results(object: &Value) -> Option<String> {
    object
        .pointer("/status/allocation/devices/results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .position(|result| result.get("adminAccess").and_then(Value::as_bool) == Some(true))
        .map(|position| {
            format!(
                "{}.adminAccess",
                index("status.allocation.devices.results", position)
            )
        })
}

/// `AuthorizedForAdminStatus`: only a new grant is checked (an allocation
/// that already granted it is immutable).
pub fn requested_in_status(object: &Value, old: &Value) -> Option<String> {
    if requested_in_results(old).is_some() {
        return None;
    }
    requested_in_results(object)
}

/// The refusal at `path` unless the namespace's `labels` carry the admin label.
pub fn check_namespace(path: &str, labels: Option<&Map<String, Value>>) -> Option<FieldError> {
    let labelled = labels
        .and_then(|labels| labels.get(ADMIN_NAMESPACE_LABEL))
        .and_then(Value::as_str)
        == Some("true");
    (!labelled).then(|| {
        field::forbidden(
            path,
            format!(
                "admin access to devices requires the `{ADMIN_NAMESPACE_LABEL}: true` label on the containing namespace"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn admin_access_needs_the_namespace_label() {
        let claim = json!({"spec": {"devices": {"requests": [
            {"name": "a", "exactly": {"deviceClassName": "c"}},
            {"name": "b", "exactly": {"deviceClassName": "c", "adminAccess": true}},
        ]}}});
        let path = requested_in_spec(&claim, false);
        assert_eq!(
            path.as_deref(),
            Some("spec.devices.requests[1].adminAccess")
        );
        let template = json!({"spec": {"spec": claim["spec"].clone()}});
        assert_eq!(requested_in_spec(&template, true), path);
        assert_eq!(requested_in_spec(&json!({"spec": {}}), false), None);
        let refusal = check_namespace("spec.devices.requests[1].adminAccess", None)
            .map(|error| error.to_string());
        assert_eq!(
            refusal.as_deref(),
            Some("spec.devices.requests[1].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace")
        );
        let labels = json!({ADMIN_NAMESPACE_LABEL: "true"});
        assert!(check_namespace("x", labels.as_object()).is_none());

        let granted = json!({"status": {"allocation": {"devices": {"results": [
            {"request": "b", "driver": "d", "pool": "p", "device": "x", "adminAccess": true}]}}}});
        assert_eq!(
            requested_in_status(&granted, &json!({})).as_deref(),
            Some("status.allocation.devices.results[0].adminAccess")
        );
        assert_eq!(requested_in_status(&granted, &granted), None);
    }
}
