//! Endpoints validation (`pkg/apis/core/validation/validation.go`
//! `ValidateEndpoints`, `validateEndpointSubsets`, `validateEndpointAddress`,
//! `validateEndpointPort`); an update runs the same rules on the new object.
//!
//! One deliberate difference: an address may be a loopback one. ferrokube
//! runs without nodes, so its Endpoints name local processes: its own
//! `default/kubernetes` names the address it is bound to (kube-apiserver
//! advertises a host interface there, `ResolveBindAddress`), and webhook and
//! conversion Services are routed to local servers. kube refuses loopback
//! addresses (`ValidateNonSpecialIP`); the other special ranges are refused here too.

use serde_json::Value;

use super::field::{self, child, index};
use super::ip_field;
use crate::status::FieldError;

/// `validateEndpointSubsets`.
pub fn endpoints(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (position, subset) in field::items_at(object, "subsets").iter().enumerate() {
        let subset_path = index("subsets", position);
        let addresses = field::items_at(subset, "addresses");
        let not_ready = field::items_at(subset, "notReadyAddresses");
        if addresses.is_empty() && not_ready.is_empty() {
            errors.push(field::required(
                &subset_path,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (list, items) in [("addresses", addresses), ("notReadyAddresses", not_ready)] {
            for (address_position, address) in items.iter().enumerate() {
                let path = index(&child(&subset_path, list), address_position);
                endpoint_address(address, &path, &mut errors);
            }
        }
        let ports = field::items_at(subset, "ports");
        for (port_position, port) in ports.iter().enumerate() {
            let path = index(&child(&subset_path, "ports"), port_position);
            endpoint_port(port, ports.len() > 1, &path, &mut errors);
        }
    }
    errors
}

/// `validateEndpointAddress`.
fn endpoint_address(address: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let ip = field::str_at(address, "ip");
    let ip_path = child(path, "ip");
    ip_field::valid_ip(&ip_path, ip, errors);
    let hostname = field::str_at(address, "hostname");
    if !hostname.is_empty() {
        field::dns1123_label(&child(path, "hostname"), hostname, errors);
    }
    if let Some(node_name) = address.get("nodeName").and_then(Value::as_str) {
        field::dns1123_subdomain(&child(path, "nodeName"), node_name, errors);
    }
    let loopback = ip_field::parse_ip_sloppy(ip).is_some_and(|parsed| parsed.is_loopback());
    if !loopback {
        ip_field::non_special_ip(&ip_path, ip, errors);
    }
}

/// `validateEndpointPort`: a name is required once there are several ports.
fn endpoint_port(port: &Value, require_name: bool, path: &str, errors: &mut Vec<FieldError>) {
    let name = field::str_at(port, "name");
    if require_name && name.is_empty() {
        errors.push(field::required(&child(path, "name"), ""));
    } else if !name.is_empty() {
        field::dns1123_label(&child(path, "name"), name, errors);
    }
    let number = field::int_at(port, "port").unwrap_or(0);
    for message in field::port_number_errors(number) {
        errors.push(field::invalid_number(&child(path, "port"), number, message));
    }
    match field::str_at(port, "protocol") {
        "" => errors.push(field::required(&child(path, "protocol"), "")),
        "TCP" | "UDP" | "SCTP" => {}
        other => errors.push(field::not_supported(
            &child(path, "protocol"),
            other,
            &["SCTP", "TCP", "UDP"],
        )),
    }
    if let Some(app_protocol) = port.get("appProtocol").and_then(Value::as_str) {
        field::label_name(&child(path, "appProtocol"), app_protocol, errors);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(object: Value) -> Vec<String> {
        endpoints(&object).iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestValidateEndpointsCreate`.
    #[test]
    fn endpoints_as_kube_validates_them() {
        assert!(texts(json!({})).is_empty());
        assert!(texts(json!({"subsets": [{
            "addresses": [{"ip": "10.10.1.1", "hostname": "web-0", "nodeName": "node-1"}],
            "notReadyAddresses": [{"ip": "2001:db8::1"}],
            "ports": [{"name": "a", "port": 8675, "protocol": "TCP"}, {"name": "b", "port": 309, "protocol": "UDP", "appProtocol": "example.com/http"}]
        }]})).is_empty());
        // A headless service's endpoints may have no ports; one port needs no name.
        assert!(texts(json!({"subsets": [{"addresses": [{"ip": "10.10.1.1"}], "ports": [{"port": 80, "protocol": "TCP"}]}]})).is_empty());
        // Loopback addresses name local processes here (a deliberate difference).
        assert!(texts(json!({"metadata": {"name": "kubernetes", "namespace": "default"}, "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]})).is_empty());
        assert!(texts(json!({"subsets": [{"addresses": [{"ip": "::1"}]}]})).is_empty());

        let cases: Vec<(Value, Vec<&str>)> = vec![
            (
                json!({"subsets": [{"ports": [{"port": 80, "protocol": "TCP"}]}]}),
                vec!["subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"],
            ),
            (
                json!({"subsets": [{"addresses": [{"ip": "[2001:0db8:85a3:0042:1000:8a2e:0370:7334]"}]}]}),
                vec![
                    "subsets[0].addresses[0].ip: Invalid value: \"[2001:0db8:85a3:0042:1000:8a2e:0370:7334]\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                    "subsets[0].addresses[0].ip: Invalid value: \"[2001:0db8:85a3:0042:1000:8a2e:0370:7334]\": must be a valid IP address",
                ],
            ),
            (
                json!({"subsets": [{"addresses": [{"ip": "169.254.169.254"}, {"ip": "0.0.0.0"}]}]}),
                vec![
                    "subsets[0].addresses[0].ip: Invalid value: \"169.254.169.254\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                    "subsets[0].addresses[1].ip: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)",
                ],
            ),
            (
                json!({"subsets": [{"notReadyAddresses": [{"ip": "10.0.0.1", "hostname": "Web_0"}]}]}),
                vec!["subsets[0].notReadyAddresses[0].hostname: Invalid value: \"Web_0\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"],
            ),
            (
                json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80, "protocol": "TCP"}, {"name": "b", "port": 0, "protocol": "Tcp"}]}]}),
                vec![
                    "subsets[0].ports[0].name: Required value",
                    "subsets[0].ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                    "subsets[0].ports[1].protocol: Unsupported value: \"Tcp\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                ],
            ),
            (
                json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}),
                vec!["subsets[0].ports[0].protocol: Required value"],
            ),
        ];
        for (object, expected) in cases {
            assert_eq!(texts(object.clone()), expected, "{object}");
        }
    }
}
