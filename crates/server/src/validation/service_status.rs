//! `services/status` writes (`pkg/apis/core/validation/validation.go`
//! `ValidateServiceStatusUpdate`, `ValidateLoadBalancerStatus`, as of
//! kubernetes commit 000f26050b9b, with 1.34's gates: `LoadBalancerIPMode` on,
//! `AllowServiceLBStatusOnNonLB` off): load balancer ingress points only on
//! LoadBalancer services, valid IPs with an `ipMode`, DNS hostnames.

use serde_json::Value;

use super::field::{self, child, index};
use super::ip_field::{self, parse_ip_sloppy};
use crate::status::FieldError;

const IP_MODES: [&str; 2] = ["Proxy", "VIP"];

/// `ValidateServiceStatusUpdate` (ObjectMeta is the write path's).
pub fn service_status_update(new: &Value) -> Vec<FieldError> {
    let spec = new.get("spec").unwrap_or(&Value::Null);
    let status = new.pointer("/status/loadBalancer").unwrap_or(&Value::Null);
    load_balancer_status(status, "status.loadBalancer", field::str_at(spec, "type"))
}

/// `ValidateLoadBalancerStatus`.
pub fn load_balancer_status(status: &Value, path: &str, service_type: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let ingress_path = child(path, "ingress");
    let ingress = field::items_at(status, "ingress");
    if service_type != "LoadBalancer" && !ingress.is_empty() {
        errors.push(field::forbidden(
            &ingress_path,
            "may only be used when `spec.type` is 'LoadBalancer'",
        ));
        return errors;
    }
    for (position, point) in ingress.iter().enumerate() {
        let point_path = index(&ingress_path, position);
        let ip = field::str_at(point, "ip");
        if !ip.is_empty() {
            ip_field::valid_ip(&child(&point_path, "ip"), ip, &mut errors);
        }
        let mode_path = child(&point_path, "ipMode");
        match point.get("ipMode").and_then(Value::as_str) {
            None if !ip.is_empty() => {
                errors.push(field::required(
                    &mode_path,
                    "must be specified when `ip` is set",
                ));
            }
            None => {}
            Some(_) if ip.is_empty() => errors.push(field::forbidden(
                &mode_path,
                "may not be specified when `ip` is not set",
            )),
            Some(mode) if !IP_MODES.contains(&mode) => {
                errors.push(field::not_supported(&mode_path, mode, &IP_MODES));
            }
            Some(_) => {}
        }
        let hostname = field::str_at(point, "hostname");
        if !hostname.is_empty() {
            let hostname_path = child(&point_path, "hostname");
            field::dns1123_subdomain(&hostname_path, hostname, &mut errors);
            if parse_ip_sloppy(hostname).is_some() {
                errors.push(field::invalid(
                    &hostname_path,
                    hostname,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errors
}

/// `SetDefaults_LoadBalancerStatus` (applied when kube decodes the status
/// write): an ingress point with an `ip` and no `ipMode` is `VIP`.
pub fn default_ip_mode(service: &mut Value) {
    let Some(points) = service
        .pointer_mut("/status/loadBalancer/ingress")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for point in points {
        let Some(point) = point.as_object_mut() else {
            continue;
        };
        let has_ip = point
            .get("ip")
            .and_then(Value::as_str)
            .is_some_and(|ip| !ip.is_empty());
        if has_ip && point.get("ipMode").is_none_or(Value::is_null) {
            point.insert("ipMode".into(), Value::String("VIP".into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn service(kind: &str, ingress: Value) -> Value {
        json!({"spec": {"type": kind}, "status": {"loadBalancer": {"ingress": ingress}}})
    }

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors
            .iter()
            .map(|error| format!("{}: {}", error.field, error.body()))
            .collect()
    }

    /// Cases of `TestValidateLoadBalancerStatus` and `TestValidateServiceStatusUpdate`.
    #[test]
    fn ingress_points_are_kubes() {
        let good = json!([{"ip": "1.2.3.4", "ipMode": "VIP"}, {"hostname": "lb.example.com"}]);
        assert!(service_status_update(&service("LoadBalancer", good.clone())).is_empty());
        assert_eq!(
            messages(&service_status_update(&service("ClusterIP", good))),
            ["status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"]
        );
        let bad = json!([
            {"ip": "1.2.3"},
            {"ipMode": "VIP"},
            {"ip": "1.2.3.4", "ipMode": "Tunnel"},
            {"hostname": "1.2.3.4"},
        ]);
        assert_eq!(
            messages(&service_status_update(&service("LoadBalancer", bad))),
            [
                "status.loadBalancer.ingress[0].ip: Invalid value: \"1.2.3\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "status.loadBalancer.ingress[0].ipMode: Required value: must be specified when `ip` is set",
                "status.loadBalancer.ingress[1].ipMode: Forbidden: may not be specified when `ip` is not set",
                "status.loadBalancer.ingress[2].ipMode: Unsupported value: \"Tunnel\": supported values: \"Proxy\", \"VIP\"",
                "status.loadBalancer.ingress[3].hostname: Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address",
            ]
        );
        let mut defaulted = service("LoadBalancer", json!([{"ip": "1.2.3.4"}]));
        default_ip_mode(&mut defaulted);
        assert_eq!(
            defaulted["status"]["loadBalancer"]["ingress"][0]["ipMode"],
            "VIP"
        );
    }
}
