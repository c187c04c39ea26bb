//! apiregistration.k8s.io/v1 APIService as kube-aggregator checks it
//! (`staging/src/k8s.io/kube-aggregator/pkg/apis/apiregistration/validation`
//! `ValidateAPIService`; an update runs the same rules): the name is
//! `<version>.<group>`, group and version are DNS names, both priorities
//! in range, a local APIService (no `service`) has no CA bundle nor
//! `insecureSkipTLSVerify`, a remote one names its Service and a valid port;
//! `/status` (`ValidateAPIServiceStatusUpdate`): known condition statuses.

use base64::Engine as _;
use serde_json::Value;

use super::field;
use crate::status::FieldError;

/// `ValidateAPIService`.
pub fn api_service(object: &Value) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let group = field::str_at(spec, "group");
    let version = field::str_at(spec, "version");
    let mut errors = Vec::new();
    // The name function of its ObjectMeta: a path segment (checked with the
    // other ObjectMeta rules) that must be `version.group`.
    let name = crate::object::name(object);
    let required_name = format!("{version}.{group}");
    if !name.is_empty() && crate::names::path_segment(name).is_empty() && name != required_name {
        errors.push(field::invalid(
            "metadata.name",
            name,
            format!(
                "must be `spec.version+\".\"+spec.group`: {}",
                crate::go::strconv::quote(&required_name)
            ),
        ));
    }
    if group.is_empty() && version != "v1" {
        errors.push(field::required(
            "spec.group",
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        field::dns1123_subdomain("spec.group", group, &mut errors);
    }
    for message in crate::names::dns1035_label(version) {
        errors.push(field::invalid("spec.version", version, message));
    }
    let group_priority = field::int_at(spec, "groupPriorityMinimum").unwrap_or(0);
    if group_priority <= 0 || group_priority > 20000 {
        errors.push(field::invalid_number(
            "spec.groupPriorityMinimum",
            group_priority,
            "must be positive and less than 20000",
        ));
    }
    let version_priority = field::int_at(spec, "versionPriority").unwrap_or(0);
    if version_priority <= 0 || version_priority > 1000 {
        errors.push(field::invalid_number(
            "spec.versionPriority",
            version_priority,
            "must be positive and less than 1000",
        ));
    }
    let ca_bundle = ca_bundle_len(spec);
    let insecure = spec
        .get("insecureSkipTLSVerify")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let Some(service) = spec.get("service").filter(|value| !value.is_null()) else {
        if ca_bundle != 0 {
            errors.push(field::invalid(
                "spec.caBundle",
                &format!("{ca_bundle} bytes"),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            errors.push(field::invalid_rendered(
                "spec.insecureSkipTLSVerify",
                "true",
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errors;
    };
    for name in ["namespace", "name"] {
        if field::str_at(service, name).is_empty() {
            errors.push(field::required(&format!("spec.service.{name}"), ""));
        }
    }
    // `utilvalidation.IsValidPortNum` (v1 defaults an absent port to 443).
    if let Some(port) = field::int_at(service, "port") {
        let messages = field::port_number_errors(port);
        if !messages.is_empty() {
            errors.push(field::invalid_number(
                "spec.service.port",
                port,
                format!("port is not valid: {}", messages.join(", ")),
            ));
        }
    }
    if insecure && ca_bundle > 0 {
        errors.push(field::invalid_rendered(
            "spec.insecureSkipTLSVerify",
            "true",
            "may not be true if caBundle is present",
        ));
    }
    errors
}

/// `ValidateAPIServiceStatus` (the `/status` update's rule besides
/// ObjectMeta): each condition's status is `True`, `False` or `Unknown`.
pub fn api_service_status(object: &Value) -> Vec<FieldError> {
    let status = object.get("status").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    for (position, condition) in field::items_at(status, "conditions").iter().enumerate() {
        let value = field::str_at(condition, "status");
        if !matches!(value, "True" | "False" | "Unknown") {
            errors.push(field::not_supported(
                &format!("status.conditions[{position}].status"),
                value,
                &["True", "False", "Unknown"],
            ));
        }
    }
    errors
}

/// The decoded length of `spec.caBundle` (base64 in JSON).
fn ca_bundle_len(spec: &Value) -> usize {
    let text = field::str_at(spec, "caBundle");
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_or(text.len(), |bytes| bytes.len())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    fn service(name: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": spec})
    }

    /// Cases from kube-aggregator's `TestValidateAPIService`-style checks.
    #[test]
    fn api_services() {
        let remote = json!({"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
            "versionPriority": 100, "service": {"namespace": "kube-system", "name": "metrics-server"}, "caBundle": "Y2E="});
        assert!(api_service(&service("v1beta1.metrics.k8s.io", remote.clone())).is_empty());
        let local = json!({"version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1});
        assert!(api_service(&service("v1.", local)).is_empty());
        assert_eq!(
            texts(&api_service(&service("v1.metrics.k8s.io", remote))),
            ["metadata.name: Invalid value: \"v1.metrics.k8s.io\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.k8s.io\""]
        );
        assert_eq!(
            texts(&api_service(&service("V1.", json!({"version": "V1", "caBundle": "Y2E=", "insecureSkipTLSVerify": true})))),
            [
                "spec.group: Required value: only v1 may have an empty group and it better be legacy kube",
                "spec.version: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
                "spec.versionPriority: Invalid value: 0: must be positive and less than 1000",
                "spec.caBundle: Invalid value: \"2 bytes\": local APIServices may not have a caBundle",
                "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
            ]
        );
        assert_eq!(
            texts(&api_service(&service("v1.a.io", json!({"group": "a.io", "version": "v1", "groupPriorityMinimum": 1,
                "versionPriority": 1001, "service": {}, "caBundle": "Y2E=", "insecureSkipTLSVerify": true})))),
            [
                "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
                "spec.service.namespace: Required value",
                "spec.service.name: Required value",
                "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
            ]
        );
        assert_eq!(
            texts(&api_service(&service("v1.a.io", json!({"group": "a.io", "version": "v1", "groupPriorityMinimum": 1,
                "versionPriority": 1, "service": {"namespace": "n", "name": "s", "port": 0}})))),
            ["spec.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"]
        );
    }

    /// kube-aggregator's `ValidateAPIServiceStatus`.
    #[test]
    fn api_service_statuses() {
        let with = |conditions: Value| json!({"metadata": {"name": "v1.a.io"}, "status": {"conditions": conditions}});
        assert!(api_service_status(&with(json!([{"type": "Available", "status": "True"}, {"type": "Available", "status": "Unknown"}]))).is_empty());
        assert_eq!(
            texts(&api_service_status(&with(json!([{"type": "Available", "status": "Maybe"}, {"type": "Available"}])))),
            [
                "status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"True\", \"False\", \"Unknown\"",
                "status.conditions[1].status: Unsupported value: \"\": supported values: \"True\", \"False\", \"Unknown\"",
            ]
        );
    }
}
