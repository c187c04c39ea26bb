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
const MAX_TOPOLOGY_LABELS: usize = 16;
const MAX_ZONE_HINTS: usize = 8;
const MAX_NODE_HINTS: usize = 8;
/// `corev1.LabelTopologyZone`.
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
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
        if let Some(node_name) = endpoint.get("nodeName").and_then(Value::as_str) {
            field::dns1123_subdomain(&child(&path, "nodeName"), node_name, errors);
        }
        let topology_path = child(&path, "deprecatedTopology");
        let topology = field::map_at(endpoint, "deprecatedTopology");
        let topology_labels = topology.map_or(0, serde_json::Map::len);
        if topology_labels > MAX_TOPOLOGY_LABELS {
            errors.push(too_many(
                &topology_path,
                topology_labels,
                MAX_TOPOLOGY_LABELS,
            ));
        }
        field::labels(&topology_path, topology, errors);
        // The zone lives in `zone` since v1; v1beta1's conversion moved this
        // key there, v1's does not, so kube reports it as an internal error.
        if topology.is_some_and(|topology| topology.contains_key(ZONE_LABEL)) {
            errors.push(FieldError {
                kind: FieldErrorKind::Internal,
                field: field::key(&topology_path, ZONE_LABEL),
                detail: "reserved key was not removed in conversion".into(),
            });
        }
        if let Some(hostname) = endpoint.get("hostname").and_then(Value::as_str) {
            field::dns1123_label(&child(&path, "hostname"), hostname, errors);
        }
        if let Some(hints) = endpoint.get("hints").filter(|hints| !hints.is_null()) {
            self::hints(hints, &child(&path, "hints"), errors);
        }
    }
}

/// `validateHints`: at most 8 zones, each name unique and a label value;
/// then (1.34's `forNodes`, documented with the same limit of 8) at most 8
/// nodes, each name unique and a node name. An over-long list stops the
/// checks, as kube's early return does.
fn hints(hints: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let zones_path = child(path, "forZones");
    let zones = field::items_at(hints, "forZones");
    if zones.len() > MAX_ZONE_HINTS {
        errors.push(too_many(&zones_path, zones.len(), MAX_ZONE_HINTS));
        return;
    }
    let mut names = BTreeSet::new();
    for (position, zone) in zones.iter().enumerate() {
        let name_path = child(&index(&zones_path, position), "name");
        let name = field::str_at(zone, "name");
        if !names.insert(name) {
            errors.push(field::duplicate(&name_path, name));
        }
        for message in crate::selector::is_valid_label_value(name) {
            errors.push(field::invalid(&name_path, name, message));
        }
    }
    let nodes_path = child(path, "forNodes");
    let nodes = field::items_at(hints, "forNodes");
    if nodes.len() > MAX_NODE_HINTS {
        errors.push(too_many(&nodes_path, nodes.len(), MAX_NODE_HINTS));
        return;
    }
    let mut names = BTreeSet::new();
    for (position, node) in nodes.iter().enumerate() {
        let name_path = child(&index(&nodes_path, position), "name");
        let name = field::str_at(node, "name");
        if !names.insert(name) {
            errors.push(field::duplicate(&name_path, name));
        }
        field::dns1123_subdomain(&name_path, name, errors);
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

    /// Cases in the manner of kube's `TestValidateEndpointSlice` "hints" and
    /// "deprecatedTopology" entries.
    #[test]
    fn endpoint_hints_and_topology() {
        let slice = |endpoint: serde_json::Value| {
            let mut endpoint = endpoint;
            endpoint["addresses"] = json!(["10.1.2.3"]);
            json!({"metadata": {"name": "s"}, "addressType": "IPv4", "endpoints": [endpoint]})
        };
        let zones = |count: usize| -> serde_json::Value {
            (0..count)
                .map(|n| json!({"name": format!("zone-{n}")}))
                .collect()
        };
        for endpoint in [
            json!({"hints": {"forZones": zones(8)}}),
            json!({"hints": {"forZones": [], "forNodes": [{"name": "node-1"}, {"name": "node-2"}]}}),
            json!({"deprecatedTopology": {"kubernetes.io/hostname": "node-1", "example.com/rack": "r1"}}),
        ] {
            assert_eq!(
                texts(&endpoint_slice(&slice(endpoint.clone()))),
                Vec::<String>::new(),
                "{endpoint}"
            );
        }
        let label_value = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        let subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
        let cases = [
            (
                json!({"hints": {"forZones": zones(9), "forNodes": [{"name": "Bad"}]}}),
                vec!["endpoints[0].hints.forZones: Too many: 9: must have at most 8 items".to_string()],
            ),
            (
                json!({"hints": {"forZones": [{"name": "a"}, {"name": "a"}, {"name": "-b"}]}}),
                vec![
                    "endpoints[0].hints.forZones[1].name: Duplicate value: \"a\"".to_string(),
                    format!("endpoints[0].hints.forZones[2].name: Invalid value: \"-b\": {label_value}"),
                ],
            ),
            (
                json!({"hints": {"forNodes": [{"name": "n"}, {"name": "n"}, {"name": "Bad_Node"}]}}),
                vec![
                    "endpoints[0].hints.forNodes[1].name: Duplicate value: \"n\"".to_string(),
                    format!("endpoints[0].hints.forNodes[2].name: Invalid value: \"Bad_Node\": {subdomain}"),
                ],
            ),
            (
                json!({"hints": {"forNodes": (0..9).map(|n| json!({"name": format!("n{n}")})).collect::<Vec<_>>()}}),
                vec!["endpoints[0].hints.forNodes: Too many: 9: must have at most 8 items".to_string()],
            ),
            (
                json!({"hostname": "Host", "nodeName": "Node", "deprecatedTopology": {"bad key": "-v-"}}),
                vec![
                    format!("endpoints[0].nodeName: Invalid value: \"Node\": {subdomain}"),
                    "endpoints[0].deprecatedTopology: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".to_string(),
                    format!("endpoints[0].deprecatedTopology: Invalid value: \"-v-\": {label_value}"),
                    "endpoints[0].hostname: Invalid value: \"Host\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".to_string(),
                ],
            ),
            (
                json!({"deprecatedTopology": {"topology.kubernetes.io/zone": "a"}}),
                vec!["endpoints[0].deprecatedTopology[topology.kubernetes.io/zone]: Internal error: reserved key was not removed in conversion".to_string()],
            ),
            (
                json!({"deprecatedTopology": (0..17).map(|n| (format!("k{n}"), json!("v"))).collect::<serde_json::Map<_, _>>()}),
                vec!["endpoints[0].deprecatedTopology: Too many: 17: must have at most 16 items".to_string()],
            ),
        ];
        for (endpoint, expected) in cases {
            assert_eq!(
                texts(&endpoint_slice(&slice(endpoint.clone()))),
                expected,
                "{endpoint}"
            );
        }
    }
}
