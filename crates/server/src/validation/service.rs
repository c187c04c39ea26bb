//! Service validation (`pkg/apis/core/validation/validation.go`
//! `ValidateService`, `ValidateServiceUpdate`, `validateServicePort`): ports
//! required except for headless and ExternalName services, port names,
//! numbers, protocols and target ports, ExternalName rules, session affinity
//! and its ClientIP timeout, the cluster IP fields ([`service_ips`]), external
//! IPs, the type, node ports only outside ClusterIP, no duplicate (protocol,
//! port) or node port, load balancer source ranges (field or annotation),
//! class and node-port allocation, traffic policies and distribution.
//!
//! [`service_ips`]: super::service_ips

use std::collections::BTreeSet;

use serde_json::Value;

use super::container::port_number_or_name;
use super::field::{self, child, index};
use super::ip_field;
use super::service_ips::{self, is_headless};
use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind};

const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
/// `ports.KubeletPort`.
const KUBELET_PORT: i64 = 10250;
/// `core.MaxClientIPServiceAffinitySeconds`.
const MAX_AFFINITY_SECONDS: i64 = 86400;
const EXTERNAL_TRAFFIC_POLICIES: [&str; 2] = ["Cluster", "Local"];
const INTERNAL_TRAFFIC_POLICIES: [&str; 2] = ["Cluster", "Local"];
/// With `PreferSameTrafficDistribution` (beta, on by default in 1.34).
const TRAFFIC_DISTRIBUTIONS: [&str; 3] = ["PreferClose", "PreferSameZone", "PreferSameNode"];
const SOURCE_RANGES_ANNOTATION: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";
const TOPOLOGY_HINTS_ANNOTATION: &str = "service.kubernetes.io/topology-aware-hints";
const TOPOLOGY_MODE_ANNOTATION: &str = "service.kubernetes.io/topology-mode";
const ONLY_LOAD_BALANCER: &str = "may only be used when `type` is 'LoadBalancer'";

/// `apiservice.ExternallyAccessible`.
fn externally_accessible(spec: &Value) -> bool {
    match field::str_at(spec, "type") {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => !field::items_at(spec, "externalIPs").is_empty(),
        _ => false,
    }
}

/// `apiservice.NeedsHealthCheck`.
fn needs_health_check(spec: &Value) -> bool {
    field::str_at(spec, "type") == "LoadBalancer"
        && field::str_at(spec, "externalTrafficPolicy") == "Local"
}

fn spec_of(object: &Value) -> &Value {
    object.get("spec").unwrap_or(&Value::Null)
}

/// `ValidateServiceUpdate` (the ObjectMeta part is checked by the write path):
/// its own rules, then all of `ValidateService`.
pub fn service_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let (spec, old_spec) = (spec_of(object), spec_of(old));
    let mut errors = service_ips::upgrade_downgrade_cluster_ips(old_spec, spec);
    errors.extend(service_ips::upgrade_downgrade_ip_families(old_spec, spec));
    load_balancer_class(Some(old_spec), spec, &mut errors);
    if needs_health_check(old_spec)
        && needs_health_check(spec)
        && field::int_at(spec, "healthCheckNodePort").unwrap_or(0)
            != field::int_at(old_spec, "healthCheckNodePort").unwrap_or(0)
    {
        errors.push(field::forbidden(
            "spec.healthCheckNodePort",
            field::FIELD_IMMUTABLE,
        ));
    }
    errors.extend(service(object));
    errors
}

/// `ValidateService` (the ObjectMeta part is checked by the write path).
pub fn service(object: &Value) -> Vec<FieldError> {
    let spec = spec_of(object);
    let annotations = object.pointer("/metadata/annotations");
    let annotation = |name: &str| {
        annotations
            .and_then(|map| map.get(name))
            .map(|value| value.as_str().unwrap_or_default())
    };
    let mut errors = Vec::new();
    if let (Some(mode), Some(hints)) = (
        annotation(TOPOLOGY_MODE_ANNOTATION),
        annotation(TOPOLOGY_HINTS_ANNOTATION),
    ) {
        if mode != hints {
            errors.push(field::invalid(
                &field::key("metadata.annotations", TOPOLOGY_MODE_ANNOTATION),
                mode,
                format!(
                    "must match annotations[{TOPOLOGY_HINTS_ANNOTATION}] when both are specified"
                ),
            ));
        }
    }
    let kind = field::str_at(spec, "type");
    let ports = field::items_at(spec, "ports");
    let headless = is_headless(spec);
    if ports.is_empty() && !headless && kind != "ExternalName" {
        errors.push(field::required("spec.ports", ""));
    }
    match kind {
        "LoadBalancer" | "NodePort" if headless => errors.push(field::invalid(
            "spec.clusterIPs[0]",
            "None",
            format!("may not be set to 'None' for {kind} services"),
        )),
        _ => {}
    }
    if kind == "LoadBalancer" {
        for (position, port) in ports.iter().enumerate() {
            if field::int_at(port, "port") == Some(KUBELET_PORT) {
                errors.push(field::invalid_number(
                    &index("spec.ports", position),
                    KUBELET_PORT,
                    "may not expose port 10250 externally since it is used by kubelet",
                ));
            }
        }
    }
    if kind == "ExternalName" {
        // The strategy keeps `clusterIPs` in step with `clusterIP`.
        if !field::items_at(spec, "clusterIPs").is_empty() {
            errors.push(field::forbidden(
                "spec.clusterIPs",
                "may not be set for ExternalName services",
            ));
        }
        if !field::items_at(spec, "ipFamilies").is_empty() {
            errors.push(field::forbidden(
                "spec.ipFamilies",
                "may not be set for ExternalName services",
            ));
        }
        if field::is_set(spec, "ipFamilyPolicy") {
            errors.push(field::forbidden(
                "spec.ipFamilyPolicy",
                "may not be set for ExternalName services",
            ));
        }
        let external_name = field::str_at(spec, "externalName");
        let cname = external_name.strip_suffix('.').unwrap_or(external_name);
        if cname.is_empty() {
            errors.push(field::required("spec.externalName", ""));
        } else {
            field::dns1123_subdomain("spec.externalName", cname, &mut errors);
        }
    }
    let mut names = BTreeSet::new();
    for (position, port) in ports.iter().enumerate() {
        service_port(
            port,
            ports.len() > 1,
            &mut names,
            &index("spec.ports", position),
            &mut errors,
        );
    }
    field::labels(
        "spec.selector",
        field::map_at(spec, "selector"),
        &mut errors,
    );
    match field::str_at(spec, "sessionAffinity") {
        "" => errors.push(field::required("spec.sessionAffinity", "")),
        "None" | "ClientIP" => {}
        other => errors.push(field::not_supported(
            "spec.sessionAffinity",
            other,
            &["ClientIP", "None"],
        )),
    }
    match field::str_at(spec, "sessionAffinity") {
        "ClientIP" => client_ip_affinity_config(spec.get("sessionAffinityConfig"), &mut errors),
        "None" if field::is_set(spec, "sessionAffinityConfig") => errors.push(field::forbidden(
            "spec.sessionAffinityConfig",
            "must not be set when session affinity is None",
        )),
        _ => {}
    }
    errors.extend(service_ips::cluster_ips_related_fields(spec));
    for (position, ip) in field::items_at(spec, "externalIPs").iter().enumerate() {
        let path = index("spec.externalIPs", position);
        let ip = ip.as_str().unwrap_or_default();
        let before = errors.len();
        ip_field::valid_ip(&path, ip, &mut errors);
        if errors.len() == before {
            ip_field::non_special_ip(&path, ip, &mut errors);
        }
    }
    if kind.is_empty() {
        errors.push(field::required("spec.type", ""));
    } else if !TYPES.contains(&kind) {
        errors.push(field::not_supported("spec.type", kind, &TYPES));
    }
    if kind == "ClusterIP" {
        for (position, port) in ports.iter().enumerate() {
            if field::int_at(port, "nodePort").unwrap_or(0) != 0 {
                errors.push(field::forbidden(
                    &child(&index("spec.ports", position), "nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports = BTreeSet::new();
    for (position, port) in ports.iter().enumerate() {
        let node_port = field::int_at(port, "nodePort").unwrap_or(0);
        if node_port == 0 {
            continue;
        }
        if !node_ports.insert((field::str_at(port, "protocol"), node_port)) {
            errors.push(FieldError {
                kind: FieldErrorKind::Duplicate(node_port.to_string()),
                field: child(&index("spec.ports", position), "nodePort"),
                detail: String::new(),
            });
        }
    }
    let mut pairs = BTreeSet::new();
    for (position, port) in ports.iter().enumerate() {
        let protocol = field::str_at(port, "protocol");
        let number = field::int_at(port, "port").unwrap_or(0);
        if !pairs.insert((protocol, number)) {
            errors.push(FieldError {
                kind: FieldErrorKind::Duplicate(format!(
                    "core.ServicePort{{Name:\"\", Protocol:{}, AppProtocol:(*string)(nil), Port:{number}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}",
                    quote(protocol)
                )),
                field: index("spec.ports", position),
                detail: String::new(),
            });
        }
    }
    source_ranges(spec, annotation(SOURCE_RANGES_ANNOTATION), &mut errors);
    if field::is_set(spec, "allocateLoadBalancerNodePorts") && kind != "LoadBalancer" {
        errors.push(field::forbidden(
            "spec.allocateLoadBalancerNodePorts",
            ONLY_LOAD_BALANCER,
        ));
    }
    if kind == "LoadBalancer" && !field::is_set(spec, "allocateLoadBalancerNodePorts") {
        // kube's path lacks the `spec.` prefix.
        errors.push(field::required("allocateLoadBalancerNodePorts", ""));
    }
    load_balancer_class(None, spec, &mut errors);
    external_traffic_policy(spec, &mut errors);
    internal_traffic_policy(spec, &mut errors);
    if let Some(distribution) = spec.get("trafficDistribution").and_then(Value::as_str) {
        if !TRAFFIC_DISTRIBUTIONS.contains(&distribution) {
            errors.push(field::not_supported(
                "spec.trafficDistribution",
                distribution,
                &TRAFFIC_DISTRIBUTIONS,
            ));
        }
    }
    errors
}

/// `validateClientIPAffinityConfig` and `validateAffinityTimeout`.
fn client_ip_affinity_config(config: Option<&Value>, errors: &mut Vec<FieldError>) {
    const PATH: &str = "spec.sessionAffinityConfig";
    const WHEN: &str = "when session affinity type is ClientIP";
    let Some(config) = config.filter(|config| !config.is_null()) else {
        errors.push(field::required(PATH, WHEN));
        return;
    };
    let Some(client_ip) = config.get("clientIP").filter(|client| !client.is_null()) else {
        errors.push(field::required(&child(PATH, "clientIP"), WHEN));
        return;
    };
    let timeout_path = child(&child(PATH, "clientIP"), "timeoutSeconds");
    let Some(timeout) = field::int_at(client_ip, "timeoutSeconds") else {
        errors.push(field::required(&timeout_path, WHEN));
        return;
    };
    if timeout <= 0 || timeout > MAX_AFFINITY_SECONDS {
        errors.push(field::invalid_number(
            &timeout_path,
            timeout,
            format!("must be greater than 0 and less than {MAX_AFFINITY_SECONDS}"),
        ));
    }
}

/// `spec.loadBalancerSourceRanges`, or when empty the annotation.
fn source_ranges(spec: &Value, annotation: Option<&str>, errors: &mut Vec<FieldError>) {
    let is_load_balancer = field::str_at(spec, "type") == "LoadBalancer";
    let ranges = field::items_at(spec, "loadBalancerSourceRanges");
    if !ranges.is_empty() {
        // kube's path is the Go field name.
        const PATH: &str = "spec.LoadBalancerSourceRanges";
        if !is_load_balancer {
            errors.push(field::forbidden(PATH, ONLY_LOAD_BALANCER));
        }
        for (position, range) in ranges.iter().enumerate() {
            // Space-padded values are tolerated (a historical accident).
            let range = range.as_str().unwrap_or_default().trim();
            ip_field::valid_cidr(&index(PATH, position), range, errors);
        }
    } else if let Some(value) = annotation {
        let path = field::key("metadata.annotations", SOURCE_RANGES_ANNOTATION);
        if !is_load_balancer {
            errors.push(field::forbidden(&path, ONLY_LOAD_BALANCER));
        }
        let value = value.trim();
        if !value.is_empty() {
            for range in value.split(',') {
                ip_field::valid_cidr(&path, range.trim(), errors);
            }
        }
    }
}

/// `validateLoadBalancerClassField`; `old` on update.
fn load_balancer_class(old: Option<&Value>, spec: &Value, errors: &mut Vec<FieldError>) {
    const PATH: &str = "spec.loadBalancerClass";
    let class = spec.get("loadBalancerClass").and_then(Value::as_str);
    let is_load_balancer = |spec: &Value| field::str_at(spec, "type") == "LoadBalancer";
    if let Some(old) = old {
        let old_class = old.get("loadBalancerClass").and_then(Value::as_str);
        if is_load_balancer(old) && is_load_balancer(spec) && old_class != class {
            errors.push(field::invalid_rendered(
                PATH,
                &class.map_or_else(|| "null".to_string(), quote),
                "may not change once set",
            ));
        }
    }
    match class {
        Some(class) if is_load_balancer(spec) => field::label_name(PATH, class, errors),
        Some(_) => errors.push(field::forbidden(PATH, ONLY_LOAD_BALANCER)),
        None => {}
    }
}

/// `validateServiceExternalTrafficPolicy`.
fn external_traffic_policy(spec: &Value, errors: &mut Vec<FieldError>) {
    let policy = field::str_at(spec, "externalTrafficPolicy");
    if !externally_accessible(spec) {
        if !policy.is_empty() {
            errors.push(field::invalid(
                "spec.externalTrafficPolicy",
                policy,
                "may only be set for externally-accessible services",
            ));
        }
    } else if policy.is_empty() {
        errors.push(field::required("spec.externalTrafficPolicy", ""));
    } else if !EXTERNAL_TRAFFIC_POLICIES.contains(&policy) {
        errors.push(field::not_supported(
            "spec.externalTrafficPolicy",
            policy,
            &EXTERNAL_TRAFFIC_POLICIES,
        ));
    }
    let port = field::int_at(spec, "healthCheckNodePort").unwrap_or(0);
    if !needs_health_check(spec) {
        if port != 0 {
            errors.push(field::invalid_number(
                "spec.healthCheckNodePort",
                port,
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if port == 0 {
        errors.push(field::required("spec.healthCheckNodePort", ""));
    } else {
        for message in field::port_number_errors(port) {
            errors.push(field::invalid_number(
                "spec.healthCheckNodePort",
                port,
                message,
            ));
        }
    }
}

/// `validateServiceInternalTrafficFieldsValue`.
fn internal_traffic_policy(spec: &Value, errors: &mut Vec<FieldError>) {
    match spec.get("internalTrafficPolicy").and_then(Value::as_str) {
        None => {
            if matches!(
                field::str_at(spec, "type"),
                "NodePort" | "LoadBalancer" | "ClusterIP"
            ) {
                errors.push(field::required("spec.internalTrafficPolicy", ""));
            }
        }
        Some(policy) if !INTERNAL_TRAFFIC_POLICIES.contains(&policy) => {
            errors.push(field::not_supported(
                "spec.internalTrafficPolicy",
                policy,
                &INTERNAL_TRAFFIC_POLICIES,
            ));
        }
        Some(_) => {}
    }
}

/// `validateServicePort`.
fn service_port<'a>(
    port: &'a Value,
    require_name: bool,
    names: &mut BTreeSet<&'a str>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let name = field::str_at(port, "name");
    let name_path = child(path, "name");
    if require_name && name.is_empty() {
        errors.push(field::required(&name_path, ""));
    } else if !name.is_empty() {
        field::dns1123_label(&name_path, name, errors);
        if !names.insert(name) {
            errors.push(field::duplicate(&name_path, name));
        }
    }
    let number = field::int_at(port, "port").unwrap_or(0);
    for message in field::port_number_errors(number) {
        errors.push(field::invalid_number(&child(path, "port"), number, message));
    }
    let protocol = field::str_at(port, "protocol");
    if protocol.is_empty() {
        errors.push(field::required(&child(path, "protocol"), ""));
    } else if !PROTOCOLS.contains(&protocol) {
        errors.push(field::not_supported(
            &child(path, "protocol"),
            protocol,
            &PROTOCOLS,
        ));
    }
    port_number_or_name(port.get("targetPort"), &child(path, "targetPort"), errors);
    if let Some(app_protocol) = port.get("appProtocol").and_then(Value::as_str) {
        field::label_name(&child(path, "appProtocol"), app_protocol, errors);
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
