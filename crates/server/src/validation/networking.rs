//! networking.k8s.io/v1 kinds as `pkg/apis/networking/validation/validation.go`
//! checks them: Ingress (`ValidateIngressCreate`, `ValidateIngressUpdate`,
//! `ValidateIngressStatusUpdate`), IngressClass (`ValidateIngressClass`,
//! `ValidateIngressClassUpdate`) and NetworkPolicy (`ValidateNetworkPolicy`,
//! `ValidateNetworkPolicyUpdate`).

use serde_json::Value;

use super::field::{self, child, index};
use super::ip_address;
use crate::go::strconv::quote;
use crate::status::FieldError;

const ANNOTATION_INGRESS_CLASS: &str = "kubernetes.io/ingress.class";
const MAX_INGRESS_CLASS_CONTROLLER: usize = 250;
const INVALID_PATH_SEQUENCES: [&str; 5] = ["//", "/./", "/../", "%2f", "%2F"];
const INVALID_PATH_SUFFIXES: [&str; 2] = ["/..", "/."];
const PATH_TYPES: [&str; 3] = ["Exact", "ImplementationSpecific", "Prefix"];

const WILDCARD_DNS1123_SUBDOMAIN: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// `IngressValidationOptions`: leniencies an update keeps for data an older
/// server accepted.
#[derive(Debug, Default, Clone, Copy)]
struct IngressOptions {
    allow_invalid_secret_name: bool,
    allow_invalid_wildcard_host_rule: bool,
}

/// `validation.IsWildcardDNS1123Subdomain`.
pub fn wildcard_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push("must be no more than 253 characters".to_string());
    }
    let valid = value.strip_prefix("*.").is_some_and(|rest| {
        !rest.is_empty()
            && crate::names::dns1123_subdomain(rest)
                .iter()
                .all(|message| message.starts_with("must be no more than"))
    });
    if !valid {
        errors.push(WILDCARD_DNS1123_SUBDOMAIN.to_string());
    }
    errors
}

/// `ValidateIngressCreate`.
pub fn ingress(object: &Value) -> Vec<FieldError> {
    let mut errors = ingress_spec(object, IngressOptions::default());
    let annotation = object
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(ANNOTATION_INGRESS_CLASS))
        .and_then(Value::as_str);
    let class_name = object
        .pointer("/spec/ingressClassName")
        .and_then(Value::as_str);
    if let (Some(annotation), Some(class_name)) = (annotation, class_name) {
        if annotation != class_name {
            errors.push(field::invalid(
                &child("annotations", ANNOTATION_INGRESS_CLASS),
                annotation,
                "must match `ingressClassName` when both are specified",
            ));
        }
    }
    errors
}

/// `ValidateIngressUpdate`: the create rules, lenient where the old object was already invalid.
pub fn ingress_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let old_spec = spec_of(old);
    let allow_invalid_secret_name = field::items_at(old_spec, "tls")
        .iter()
        .any(|tls| !tls_secret_name_errors(field::str_at(tls, "secretName")).is_empty());
    let allow_invalid_wildcard_host_rule = field::items_at(old_spec, "rules")
        .iter()
        .any(|rule| field::str_at(rule, "host").contains('*') && !rule_value(rule, "").is_empty());
    ingress_spec(
        object,
        IngressOptions {
            allow_invalid_secret_name,
            allow_invalid_wildcard_host_rule,
        },
    )
}

/// `ValidateIngressStatusUpdate`: the load balancer's IPs and hostnames.
pub fn ingress_status_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let old_ips: Vec<&str> = old
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|ingress| field::str_at(ingress, "ip"))
        .filter(|ip| !ip.is_empty())
        .collect();
    let list = object
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (position, ingress) in list.iter().enumerate() {
        let path = index("status.loadBalancer.ingress", position);
        let ip = field::str_at(ingress, "ip");
        if !ip.is_empty() && !old_ips.contains(&ip) && ip_address::parse_ip_sloppy(ip).is_none() {
            errors.push(field::invalid(
                &child(&path, "ip"),
                ip,
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            ));
        }
        let hostname = field::str_at(ingress, "hostname");
        if !hostname.is_empty() {
            field::dns1123_subdomain(&child(&path, "hostname"), hostname, &mut errors);
            if ip_address::parse_ip_sloppy(hostname).is_some() {
                errors.push(field::invalid(
                    &child(&path, "hostname"),
                    hostname,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errors
}

fn spec_of(object: &Value) -> &Value {
    object.get("spec").unwrap_or(&Value::Null)
}

/// `ValidateIngressSpec`.
fn ingress_spec(object: &Value, options: IngressOptions) -> Vec<FieldError> {
    let spec = spec_of(object);
    let mut errors = Vec::new();
    let rules = field::items_at(spec, "rules");
    let default_backend = spec.get("defaultBackend").filter(|value| !value.is_null());
    if rules.is_empty() && default_backend.is_none() {
        let rendered = if spec.get("rules").is_some_and(Value::is_array) {
            "[]networking.IngressRule{}"
        } else {
            "[]networking.IngressRule(nil)"
        };
        errors.push(field::invalid_rendered(
            "spec",
            rendered,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = default_backend {
        ingress_backend(backend, "spec.defaultBackend", &mut errors);
    }
    for (position, rule) in rules.iter().enumerate() {
        let path = index("spec.rules", position);
        let host = field::str_at(rule, "host");
        let mut wildcard = false;
        if !host.is_empty() {
            let host_path = child(&path, "host");
            if ip_address::parse_ip_sloppy(host).is_some() {
                errors.push(field::invalid(
                    &host_path,
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            if host.contains('*') {
                for message in wildcard_dns1123_subdomain(host) {
                    errors.push(field::invalid(&host_path, host, message));
                }
                wildcard = true;
            } else {
                field::dns1123_subdomain(&host_path, host, &mut errors);
            }
        }
        if !wildcard || !options.allow_invalid_wildcard_host_rule {
            errors.extend(rule_value(rule, &path));
        }
    }
    for (tls_position, tls) in field::items_at(spec, "tls").iter().enumerate() {
        let tls_path = index("spec.tls", tls_position);
        for (position, host) in field::items_at(tls, "hosts").iter().enumerate() {
            let host = host.as_str().unwrap_or_default();
            let host_path = index(&child(&tls_path, "hosts"), position);
            if host.contains('*') {
                for message in wildcard_dns1123_subdomain(host) {
                    errors.push(field::invalid(&host_path, host, message));
                }
            } else {
                field::dns1123_subdomain(&host_path, host, &mut errors);
            }
        }
        if !options.allow_invalid_secret_name {
            let secret_name = field::str_at(tls, "secretName");
            for message in tls_secret_name_errors(secret_name) {
                errors.push(field::invalid(
                    &child(&tls_path, "secretName"),
                    secret_name,
                    message,
                ));
            }
        }
    }
    if let Some(class_name) = spec.get("ingressClassName").and_then(Value::as_str) {
        field::dns1123_subdomain("spec.ingressClassName", class_name, &mut errors);
    }
    errors
}

fn tls_secret_name_errors(name: &str) -> Vec<String> {
    if name.is_empty() {
        Vec::new()
    } else {
        crate::names::dns1123_subdomain(name)
    }
}

/// `validateIngressRuleValue` / `validateHTTPIngressRuleValue`.
fn rule_value(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(http) = rule.get("http").filter(|value| !value.is_null()) else {
        return errors;
    };
    let paths_path = child(&child(path, "http"), "paths");
    let paths = field::items_at(http, "paths");
    if paths.is_empty() {
        errors.push(field::required(&paths_path, ""));
    }
    for (position, http_path) in paths.iter().enumerate() {
        http_ingress_path(http_path, &index(&paths_path, position), &mut errors);
    }
    errors
}

/// `validateHTTPIngressPath`.
fn http_ingress_path(http_path: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(path_type) = http_path.get("pathType").and_then(Value::as_str) else {
        errors.push(field::required(
            &child(path, "pathType"),
            "pathType must be specified",
        ));
        return;
    };
    let value = field::str_at(http_path, "path");
    let value_path = child(path, "path");
    match path_type {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errors.push(field::invalid(
                    &value_path,
                    value,
                    "must be an absolute path",
                ));
            }
            if !value.is_empty() {
                for sequence in INVALID_PATH_SEQUENCES {
                    if value.contains(sequence) {
                        errors.push(field::invalid(
                            &value_path,
                            value,
                            format!("must not contain '{sequence}'"),
                        ));
                    }
                }
                for suffix in INVALID_PATH_SUFFIXES {
                    if value.ends_with(suffix) {
                        errors.push(field::invalid(
                            &value_path,
                            value,
                            format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errors.push(field::invalid(
                    &value_path,
                    value,
                    "must be an absolute path",
                ));
            }
        }
        other => errors.push(field::not_supported(
            &child(path, "pathType"),
            other,
            &PATH_TYPES,
        )),
    }
    ingress_backend(
        http_path.get("backend").unwrap_or(&Value::Null),
        &child(path, "backend"),
        errors,
    );
}

/// `validateIngressBackend` (service names as `ValidateServiceName`: the
/// `RelaxedServiceNameValidation` gate is off in 1.34).
fn ingress_backend(backend: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let resource = backend.get("resource").filter(|value| !value.is_null());
    let service = backend.get("service").filter(|value| !value.is_null());
    match (resource, service) {
        (Some(_), Some(_)) => errors.push(field::invalid(
            path,
            "",
            "cannot set both resource and service backends",
        )),
        (Some(resource), None) => {
            typed_local_object_reference(resource, &child(path, "resource"), errors);
        }
        (None, Some(service)) => {
            let name_path = child(&child(path, "service"), "name");
            let name = field::str_at(service, "name");
            if name.is_empty() {
                errors.push(field::required(&name_path, ""));
            } else {
                for message in crate::names::dns1035_label(name) {
                    errors.push(field::invalid(&name_path, name, message));
                }
            }
            let port = service.get("port").unwrap_or(&Value::Null);
            let port_path = child(&child(path, "service"), "port");
            let port_name = field::str_at(port, "name");
            let port_number = field::int_at(port, "number").unwrap_or(0);
            match (port_name.is_empty(), port_number == 0) {
                (false, false) => errors.push(field::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                )),
                (false, true) => {
                    for message in field::port_name_errors(port_name) {
                        errors.push(field::invalid(
                            &child(&port_path, "name"),
                            port_name,
                            message,
                        ));
                    }
                }
                (true, false) => {
                    for message in field::port_number_errors(port_number) {
                        errors.push(field::invalid_number(
                            &child(&port_path, "number"),
                            port_number,
                            message,
                        ));
                    }
                }
                (true, true) => {
                    errors.push(field::required(path, "port name or number is required"))
                }
            }
        }
        (None, None) => errors.push(field::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
}

/// `validateIngressTypedLocalObjectReference`.
fn typed_local_object_reference(reference: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(group) = reference.get("apiGroup").and_then(Value::as_str) {
        field::dns1123_subdomain(&child(path, "apiGroup"), group, errors);
    }
    for name in ["kind", "name"] {
        let value = field::str_at(reference, name);
        if value.is_empty() {
            errors.push(field::required(&child(path, name), ""));
        } else {
            for message in crate::names::path_segment(value) {
                errors.push(field::invalid(&child(path, name), value, message));
            }
        }
    }
}

/// `ValidateIngressClass`.
pub fn ingress_class(object: &Value) -> Vec<FieldError> {
    let spec = spec_of(object);
    let mut errors = Vec::new();
    let controller = field::str_at(spec, "controller");
    if controller.is_empty() {
        errors.push(field::required("spec.controller", ""));
    } else {
        if controller.len() > MAX_INGRESS_CLASS_CONTROLLER {
            errors.push(field::too_long(
                "spec.controller",
                MAX_INGRESS_CLASS_CONTROLLER,
            ));
        }
        errors.extend(domain_prefixed_path("spec.controller", controller));
    }
    if let Some(parameters) = spec.get("parameters").filter(|value| !value.is_null()) {
        ingress_class_parameters(parameters, "spec.parameters", &mut errors);
    }
    errors
}

/// `ValidateIngressClassUpdate`: the controller is immutable, then the create rules.
pub fn ingress_class_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = field::immutable_string(
        "spec.controller",
        field::str_at(spec_of(object), "controller"),
        field::str_at(spec_of(old), "controller"),
    )
    .into_iter()
    .collect();
    errors.extend(ingress_class(object));
    errors
}

/// `validation.IsDomainPrefixedPath`.
pub fn domain_prefixed_path(path: &str, value: &str) -> Vec<FieldError> {
    if value.is_empty() {
        return vec![field::required(path, "")];
    }
    let Some((host, rest)) = value
        .split_once('/')
        .filter(|(host, rest)| !host.is_empty() && !rest.is_empty())
    else {
        return vec![field::invalid(
            path,
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )];
    };
    let mut errors = Vec::new();
    field::dns1123_subdomain(path, host, &mut errors);
    let http_path = rest
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&byte));
    if !http_path {
        errors.push(field::invalid(
            path,
            rest,
            "must be a valid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
        ));
    }
    errors
}

/// `validateIngressClassParametersReference`.
fn ingress_class_parameters(parameters: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(group) = parameters.get("apiGroup").and_then(Value::as_str) {
        field::dns1123_subdomain(&child(path, "apiGroup"), group, errors);
    }
    for name in ["kind", "name"] {
        let value = field::str_at(parameters, name);
        if value.is_empty() {
            errors.push(field::required(&child(path, name), ""));
        } else {
            for message in crate::names::path_segment(value) {
                errors.push(field::invalid(&child(path, name), value, message));
            }
        }
    }
    let Some(scope) = parameters.get("scope").and_then(Value::as_str) else {
        errors.push(field::required(&child(path, "scope"), ""));
        return;
    };
    let namespace = parameters.get("namespace").and_then(Value::as_str);
    let namespace_path = child(path, "namespace");
    match scope {
        "Namespace" => match namespace {
            None => errors.push(field::required(
                &namespace_path,
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some(namespace) => field::dns1123_label(&namespace_path, namespace, errors),
        },
        "Cluster" => {
            if namespace.is_some() {
                errors.push(field::forbidden(
                    &namespace_path,
                    "`parameters.scope` is set to 'Cluster'",
                ));
            }
        }
        other => errors.push(field::not_supported(
            &child(path, "scope"),
            other,
            &["Cluster", "Namespace"],
        )),
    }
}

/// `ValidateNetworkPolicy`.
pub fn network_policy(object: &Value) -> Vec<FieldError> {
    network_policy_spec(spec_of(object), &[], false)
}

/// `ValidateNetworkPolicyUpdate`: the CIDRs the old policy held stay allowed
/// as they are; `ValidationOptionsForNetworking`'s `AllowInvalidLabelValueInSelector`
/// when the old `podSelector` fails strict validation (its peers' selectors
/// do not count) lets every selector of the new policy skip its values.
pub fn network_policy_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let old_spec = spec_of(old);
    let allow_invalid_values =
        super::selector::has_errors(old_spec.get("podSelector").unwrap_or(&Value::Null));
    let mut existing: Vec<&str> = Vec::new();
    for (rules, peers) in [("ingress", "from"), ("egress", "to")] {
        for rule in field::items_at(old_spec, rules) {
            for peer in field::items_at(rule, peers) {
                if let Some(block) = peer.get("ipBlock").filter(|value| !value.is_null()) {
                    existing.push(field::str_at(block, "cidr"));
                    existing.extend(
                        field::items_at(block, "except")
                            .iter()
                            .map(|except| except.as_str().unwrap_or_default()),
                    );
                }
            }
        }
    }
    network_policy_spec(spec_of(object), &existing, allow_invalid_values)
}

/// `ValidateNetworkPolicySpec`.
fn network_policy_spec(
    spec: &Value,
    existing_cidrs: &[&str],
    allow_invalid_values: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    super::selector::validate_with(
        spec.get("podSelector").unwrap_or(&Value::Null),
        "spec.podSelector",
        allow_invalid_values,
        &mut errors,
    );
    for (rules, peers) in [("ingress", "from"), ("egress", "to")] {
        for (position, rule) in field::items_at(spec, rules).iter().enumerate() {
            let rule_path = index(&child("spec", rules), position);
            for (port_position, port) in field::items_at(rule, "ports").iter().enumerate() {
                network_policy_port(
                    port,
                    &index(&child(&rule_path, "ports"), port_position),
                    &mut errors,
                );
            }
            for (peer_position, peer) in field::items_at(rule, peers).iter().enumerate() {
                network_policy_peer(
                    peer,
                    &index(&child(&rule_path, peers), peer_position),
                    existing_cidrs,
                    allow_invalid_values,
                    &mut errors,
                );
            }
        }
    }
    let types = field::items_at(spec, "policyTypes");
    if types.len() > 2 {
        let rendered: Vec<String> = types
            .iter()
            .map(|value| quote(value.as_str().unwrap_or_default()))
            .collect();
        errors.push(field::invalid_rendered(
            "spec.policyTypes",
            &format!("[]networking.PolicyType{{{}}}", rendered.join(", ")),
            "may not specify more than two policyTypes",
        ));
        return errors;
    }
    for (position, policy_type) in types.iter().enumerate() {
        let policy_type = policy_type.as_str().unwrap_or_default();
        if !matches!(policy_type, "Ingress" | "Egress") {
            errors.push(field::not_supported(
                &index("spec.policyTypes", position),
                policy_type,
                &["Ingress", "Egress"],
            ));
        }
    }
    errors
}

/// `ValidateNetworkPolicyPort`.
fn network_policy_port(port: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str) {
        if !matches!(protocol, "TCP" | "UDP" | "SCTP") {
            errors.push(field::not_supported(
                &child(path, "protocol"),
                protocol,
                &["TCP", "UDP", "SCTP"],
            ));
        }
    }
    let end_port = field::int_at(port, "endPort");
    let end_port_path = child(path, "endPort");
    match port.get("port").filter(|value| !value.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end_port) = end_port {
                errors.push(field::invalid_number(
                    &end_port_path,
                    end_port,
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for message in field::port_name_errors(name) {
                errors.push(field::invalid(&child(path, "port"), name, message));
            }
        }
        Some(number) => {
            let number = number.as_i64().unwrap_or(0);
            for message in field::port_number_errors(number) {
                errors.push(field::invalid_number(&child(path, "port"), number, message));
            }
            if let Some(end_port) = end_port {
                if end_port < number {
                    errors.push(field::invalid_number(
                        &end_port_path,
                        end_port,
                        "must be greater than or equal to `port`",
                    ));
                }
                for message in field::port_number_errors(end_port) {
                    errors.push(field::invalid_number(&end_port_path, end_port, message));
                }
            }
        }
        None => {
            if let Some(end_port) = end_port {
                errors.push(field::invalid_number(
                    &end_port_path,
                    end_port,
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
}

/// `ValidateNetworkPolicyPeer`.
fn network_policy_peer(
    peer: &Value,
    path: &str,
    existing_cidrs: &[&str],
    allow_invalid_values: bool,
    errors: &mut Vec<FieldError>,
) {
    let mut peers = 0;
    for selector in ["podSelector", "namespaceSelector"] {
        if let Some(value) = peer.get(selector).filter(|value| !value.is_null()) {
            peers += 1;
            super::selector::validate_with(
                value,
                &child(path, selector),
                allow_invalid_values,
                errors,
            );
        }
    }
    let block = peer.get("ipBlock").filter(|value| !value.is_null());
    if let Some(block) = block {
        peers += 1;
        ip_block(block, &child(path, "ipBlock"), existing_cidrs, errors);
    }
    if peers == 0 {
        errors.push(field::required(path, "must specify a peer"));
    } else if peers > 1 && block.is_some() {
        errors.push(field::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
}

/// `ValidateIPBlock`.
fn ip_block(block: &Value, path: &str, existing_cidrs: &[&str], errors: &mut Vec<FieldError>) {
    let cidr_text = field::str_at(block, "cidr");
    let cidr_path = child(path, "cidr");
    if cidr_text.is_empty() {
        errors.push(field::required(&cidr_path, ""));
        return;
    }
    errors.extend(ip_address::cidr_for_legacy_field(
        &cidr_path,
        cidr_text,
        existing_cidrs,
    ));
    let Some(cidr) = ip_address::parse_cidr_sloppy(cidr_text) else {
        return;
    };
    for (position, except) in field::items_at(block, "except").iter().enumerate() {
        let except = except.as_str().unwrap_or_default();
        let except_path = index(&child(path, "except"), position);
        errors.extend(ip_address::cidr_for_legacy_field(
            &except_path,
            except,
            existing_cidrs,
        ));
        let Some(except_cidr) = ip_address::parse_cidr_sloppy(except) else {
            continue;
        };
        if !cidr.contains(except_cidr.network) || cidr.prefix >= except_cidr.prefix {
            errors.push(field::invalid(
                &except_path,
                except,
                "must be a strict subset of `cidr`",
            ));
        }
    }
}

#[cfg(test)]
#[path = "networking_tests.rs"]
mod tests;
