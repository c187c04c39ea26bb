//! discovery.k8s.io/v1 EndpointSlice as `pkg/apis/discovery/validation`
//! checks it (`ValidateEndpointSliceCreate`, `ValidateEndpointSliceUpdate`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::field::{self, child, index};
use super::ip_address;
use crate::status::{FieldError, FieldErrorKind};

const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 100;
const MAX_ENDPOINTS: usize = 1000;
const SUPPORTED_ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
/// With the deprecated `IP` type, which an update may keep.
const UPDATE_ADDRESS_TYPES: [&str; 4] = ["FQDN", "IP", "IPv4", "IPv6"];

fn too_many(path: &str, actual: usize, max: usize) -> FieldError {
    FieldError {
        kind: FieldErrorKind::TooMany(
            i64::try_from(actual).unwrap_or(i64::MAX),
            i64::try_from(max).unwrap_or(i64::MAX),
        ),
        field: path.to_string(),
        detail: String::new(),
    }
}

/// `ValidateEndpointSliceCreate`.
pub fn endpoint_slice(object: &Value) -> Vec<FieldError> {
    validate(object, &SUPPORTED_ADDRESS_TYPES)
}

/// `ValidateEndpointSliceUpdate`: `addressType` is immutable.
pub fn endpoint_slice_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = validate(object, &UPDATE_ADDRESS_TYPES);
    errors.extend(field::immutable_string(
        "addressType",
        field::str_at(object, "addressType"),
        field::str_at(old, "addressType"),
    ));
    errors
}

/// `ValidateEndpointSlice`.
fn validate(object: &Value, address_types: &[&str]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let address_type = field::str_at(object, "addressType");
    if address_type.is_empty() {
        errors.push(field::required("addressType", ""));
    } else if !address_types.contains(&address_type) {
        errors.push(field::not_supported(
            "addressType",
            address_type,
            address_types,
        ));
    }
    endpoints(
        field::items_at(object, "endpoints"),
        address_type,
        &mut errors,
    );
    ports(field::items_at(object, "ports"), &mut errors);
    errors
}

/// `validation.IsFullyQualifiedDomainName`.
fn fully_qualified_domain_name(path: &str, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![field::required(path, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let subdomain = crate::names::dns1123_subdomain(name);
    if !subdomain.is_empty() {
        return vec![field::invalid(path, name, subdomain.join(","))];
    }
    if name.split('.').count() < 2 {
        return vec![field::invalid(
            path,
            name,
            "should be a domain with at least two segments separated by dots",
        )];
    }
    for label in name.split('.') {
        let label_errors = crate::names::dns1123_label(label);
        if !label_errors.is_empty() {
            return vec![field::invalid(path, label, label_errors.join(","))];
        }
    }
    Vec::new()
}

fn endpoints(list: &[Value], address_type: &str, errors: &mut Vec<FieldError>) {
    if list.len() > MAX_ENDPOINTS {
        errors.push(too_many("endpoints", list.len(), MAX_ENDPOINTS));
        return;
    }
    for (position, endpoint) in list.iter().enumerate() {
        let path = index("endpoints", position);
        let addresses_path = child(&path, "addresses");
        let addresses = field::items_at(endpoint, "addresses");
        if addresses.is_empty() {
            errors.push(field::required(
                &addresses_path,
                "must contain at least 1 address",
            ));
        } else if addresses.len() > MAX_ADDRESSES {
            errors.push(too_many(&addresses_path, addresses.len(), MAX_ADDRESSES));
        }
        for (address_position, address) in addresses.iter().enumerate() {
            let address = address.as_str().unwrap_or_default();
            let address_path = index(&addresses_path, address_position);
            match address_type {
                "IP" if ip_address::parse_ip_sloppy(address).is_none() => {
                    errors.push(field::invalid(
                        &address_path,
                        address,
                        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                    ));
                }
                "IPv4" => errors.extend(ip_address::ipv4_address(&address_path, address)),
                "IPv6" => errors.extend(ip_address::ipv6_address(&address_path, address)),
                "FQDN" => errors.extend(fully_qualified_domain_name(&address_path, address)),
                _ => {}
            }
        }
        if let Some(hostname) = endpoint.get("hostname").and_then(Value::as_str) {
            field::dns1123_label(&child(&path, "hostname"), hostname, errors);
        }
        if let Some(node_name) = endpoint.get("nodeName").and_then(Value::as_str) {
            field::dns1123_subdomain(&child(&path, "nodeName"), node_name, errors);
        }
    }
}

fn ports(list: &[Value], errors: &mut Vec<FieldError>) {
    if list.len() > MAX_PORTS {
        errors.push(too_many("ports", list.len(), MAX_PORTS));
        return;
    }
    let mut names = BTreeSet::new();
    for (position, port) in list.iter().enumerate() {
        let path = index("ports", position);
        let name = field::str_at(port, "name");
        if !name.is_empty() {
            field::dns1123_label(&child(&path, "name"), name, errors);
        }
        if !names.insert(name) {
            errors.push(field::duplicate(&child(&path, "name"), name));
        }
        match port.get("protocol").and_then(Value::as_str) {
            None => errors.push(field::required(&child(&path, "protocol"), "")),
            Some("TCP" | "UDP" | "SCTP") => {}
            Some(other) => errors.push(field::not_supported(
                &child(&path, "protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
        if let Some(protocol) = port.get("appProtocol").and_then(Value::as_str) {
            for message in crate::selector::is_qualified_name(protocol) {
                errors.push(field::invalid(
                    &child(&path, "appProtocol"),
                    protocol,
                    message,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestValidateEndpointSlice`, `TestValidateEndpointSliceCreate`,
    /// `TestValidateEndpointSliceUpdate` (ports as the v1 defaults leave them).
    #[test]
    fn endpoint_slices() {
        let slice = |address_type: &str, addresses: serde_json::Value, ports: serde_json::Value| {
            json!({"metadata": {"name": "s"}, "addressType": address_type,
                   "endpoints": [{"addresses": addresses, "hostname": "valid-123"}], "ports": ports})
        };
        let http = json!([{"name": "http", "protocol": "TCP", "port": 80}]);
        assert!(endpoint_slice(&slice("IPv4", json!(["10.1.2.3"]), http.clone())).is_empty());
        assert!(endpoint_slice(&slice("IPv6", json!(["fd00::1"]), http.clone())).is_empty());
        assert!(endpoint_slice(&slice(
            "FQDN",
            json!(["foo.example.com"]),
            json!([{"name": "", "protocol": "UDP"}])
        ))
        .is_empty());
        let cases = [
            (slice("", json!(["10.1.2.3"]), http.clone()), vec!["addressType: Required value".to_string()]),
            (
                slice("IP", json!(["10.1.2.3"]), http.clone()),
                vec!["addressType: Unsupported value: \"IP\": supported values: \"FQDN\", \"IPv4\", \"IPv6\"".to_string()],
            ),
            (
                slice("IPv4", json!(["fd00::1"]), http.clone()),
                vec!["endpoints[0].addresses[0]: Invalid value: \"fd00::1\": must be a valid IPv4 address".to_string()],
            ),
            (
                slice("IPv6", json!(["10.1.2.3"]), http.clone()),
                vec!["endpoints[0].addresses[0]: Invalid value: \"10.1.2.3\": must be a valid IPv6 address".to_string()],
            ),
            (
                slice("FQDN", json!(["foo"]), http.clone()),
                vec!["endpoints[0].addresses[0]: Invalid value: \"foo\": should be a domain with at least two segments separated by dots".to_string()],
            ),
            (
                slice("IPv4", json!([]), http.clone()),
                vec!["endpoints[0].addresses: Required value: must contain at least 1 address".to_string()],
            ),
            (
                slice("IPv4", json!(["10.1.2.3"]), json!([{"name": "a", "protocol": "TCP"}, {"name": "a", "protocol": "TCP"}])),
                vec!["ports[1].name: Duplicate value: \"a\"".to_string()],
            ),
            (
                slice("IPv4", json!(["10.1.2.3"]), json!([{"name": "a", "protocol": "HTTP"}])),
                vec!["ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"".to_string()],
            ),
            (
                slice("IPv4", json!(["10.1.2.3"]), json!([{"name": "a", "protocol": "TCP", "appProtocol": "a/b/c"}])),
                vec!["ports[0].appProtocol: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".to_string()],
            ),
        ];
        for (object, expected) in cases {
            assert_eq!(texts(&endpoint_slice(&object)), expected, "{object}");
        }
        let old = slice("IPv4", json!(["10.1.2.3"]), http.clone());
        assert_eq!(
            texts(&endpoint_slice_update(
                &slice("IPv6", json!(["fd00::1"]), http.clone()),
                &old
            )),
            vec!["addressType: Invalid value: \"IPv6\": field is immutable"]
        );
        let legacy = slice("IP", json!(["10.1.2.3"]), http);
        assert!(endpoint_slice_update(&legacy, &legacy).is_empty());
    }
}
