//! `pkg/api/service/warnings.go` `GetWarningsForService`: what
//! `svcStrategy.WarningsOnCreate`/`WarningsOnUpdate` add as `Warning`
//! headers after validation.

use serde_json::Value;

use crate::validation::ip_warnings::{warnings_for_cidr, warnings_for_ip};

const TOPOLOGY_AWARE_HINTS: &str = "service.kubernetes.io/topology-aware-hints";
const TOPOLOGY_MODE: &str = "service.kubernetes.io/topology-mode";

fn text<'a>(spec: &'a Value, name: &str) -> &'a str {
    spec.get(name).and_then(Value::as_str).unwrap_or_default()
}

fn texts<'a>(spec: &'a Value, name: &str) -> Vec<&'a str> {
    spec.get(name)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `GetWarningsForService(service, oldService)` (the old service is unused
/// in 1.34).
pub fn warnings(service: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    if service
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(TOPOLOGY_AWARE_HINTS))
        .is_some()
    {
        warnings.push(format!(
            "annotation {TOPOLOGY_AWARE_HINTS} is deprecated, please use {TOPOLOGY_MODE} instead"
        ));
    }
    let null = Value::Null;
    let spec = service.get("spec").unwrap_or(&null);
    let cluster_ip = text(spec, "clusterIP");
    let service_type = text(spec, "type");
    let external_ips = texts(spec, "externalIPs");
    // `helper.IsServiceIPSet`: neither empty nor "None".
    if !cluster_ip.is_empty() && cluster_ip != "None" {
        for (position, ip) in texts(spec, "clusterIPs").into_iter().enumerate() {
            warnings.extend(warnings_for_ip(&format!("spec.clusterIPs[{position}]"), ip));
        }
    }
    let headless = service_type == "ClusterIP" && cluster_ip == "None";
    if headless {
        if !text(spec, "loadBalancerIP").is_empty() {
            warnings.push("spec.loadBalancerIP is ignored for headless services".into());
        }
        if !external_ips.is_empty() {
            warnings.push("spec.externalIPs is ignored for headless services".into());
        }
        if text(spec, "sessionAffinity") != "None" {
            warnings.push("spec.SessionAffinity is ignored for headless services".into());
        }
    }
    for (position, ip) in external_ips.iter().enumerate() {
        warnings.extend(warnings_for_ip(
            &format!("spec.externalIPs[{position}]"),
            ip,
        ));
    }
    if !external_ips.is_empty() && !headless && service_type != "ExternalName" {
        warnings.push(
            "spec.externalIPs is deprecated and may no longer be implemented in some clusters"
                .into(),
        );
    }
    let load_balancer_ip = text(spec, "loadBalancerIP");
    if !load_balancer_ip.is_empty() {
        warnings.extend(warnings_for_ip("spec.loadBalancerIP", load_balancer_ip));
    }
    for (position, cidr) in texts(spec, "loadBalancerSourceRanges")
        .into_iter()
        .enumerate()
    {
        warnings.extend(warnings_for_cidr(
            &format!("spec.loadBalancerSourceRanges[{position}]"),
            cidr,
        ));
    }
    if service_type == "ExternalName" && !external_ips.is_empty() {
        warnings.push("spec.externalIPs is ignored when spec.type is \"ExternalName\"".into());
    }
    if service_type != "ExternalName" && !text(spec, "externalName").is_empty() {
        warnings.push("spec.externalName is ignored when spec.type is not \"ExternalName\"".into());
    }
    if text(spec, "trafficDistribution") == "PreferClose" {
        warnings.push(
            "spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\""
                .into(),
        );
    }
    warnings
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::warnings;

    /// Cases of `TestGetWarningsForService` and
    /// `TestGetWarningsForServiceClusterIPs` (`pkg/api/service/warnings_test.go`).
    #[test]
    fn services_warn_as_kube() {
        let service = |spec: serde_json::Value| json!({"metadata": {"name": "s"}, "spec": spec});
        assert!(warnings(&service(json!({"type": "ClusterIP", "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "sessionAffinity": "None"}))).is_empty());
        assert_eq!(
            warnings(&service(json!({"type": "ClusterIP", "clusterIP": "2001:db8:0:0::2", "clusterIPs": ["2001:db8:0:0::2", "192.012.2.2"], "sessionAffinity": "None"}))),
            [
                "spec.clusterIPs[0]: IPv6 address \"2001:db8:0:0::2\" should be in RFC 5952 canonical format (\"2001:db8::2\")",
                "spec.clusterIPs[1]: non-standard IP address \"192.012.2.2\" will be considered invalid in a future Kubernetes release: use \"192.12.2.2\"",
            ]
        );
        assert_eq!(
            warnings(&service(
                json!({"type": "ClusterIP", "clusterIP": "None", "loadBalancerIP": "1.2.3.4", "externalIPs": ["1.2.3.4"], "sessionAffinity": "ClientIP"})
            )),
            [
                "spec.loadBalancerIP is ignored for headless services",
                "spec.externalIPs is ignored for headless services",
                "spec.SessionAffinity is ignored for headless services",
            ]
        );
        assert_eq!(
            warnings(&service(
                json!({"type": "ExternalName", "externalName": "x.example", "externalIPs": ["1.2.3.4"], "sessionAffinity": "None"})
            )),
            ["spec.externalIPs is ignored when spec.type is \"ExternalName\""]
        );
        assert_eq!(
            warnings(&service(
                json!({"type": "ClusterIP", "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "externalIPs": ["1.2.3.4"], "externalName": "x.example", "sessionAffinity": "None", "trafficDistribution": "PreferClose"})
            )),
            [
                "spec.externalIPs is deprecated and may no longer be implemented in some clusters",
                "spec.externalName is ignored when spec.type is not \"ExternalName\"",
                "spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\"",
            ]
        );
        assert_eq!(
            warnings(&json!({"metadata": {"annotations": {"service.kubernetes.io/topology-aware-hints": "auto"}}, "spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "sessionAffinity": "None", "loadBalancerSourceRanges": ["10.1.2.3/8"]}})),
            [
                "annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead",
                "spec.loadBalancerSourceRanges[0]: CIDR value \"10.1.2.3/8\" is ambiguous in this context (should be \"10.0.0.0/8\" or \"10.1.2.3/32\"?)",
            ]
        );
    }
}
