//! Service validation (`pkg/apis/core/validation/validation.go`
//! `ValidateService`, `validateServicePort`): ports required except for
//! headless and ExternalName services, port names, numbers, protocols and
//! target ports, ExternalName rules, session affinity, the type, node ports
//! only outside ClusterIP, no duplicate (protocol, port) or node port.
//! The cluster IP fields (`ValidateServiceClusterIPsRelatedFields`) are the
//! allocator's (`crate::allocator`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::container::port_number_or_name;
use super::field::{self, child, index};
use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind};

const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
/// `ports.KubeletPort`.
const KUBELET_PORT: i64 = 10250;

fn is_headless(spec: &Value) -> bool {
    let first_ip = field::items_at(spec, "clusterIPs")
        .first()
        .and_then(Value::as_str)
        .unwrap_or_else(|| field::str_at(spec, "clusterIP"));
    first_ip == "None"
}

/// `ValidateService` (the ObjectMeta part is checked by the write path).
pub fn service(object: &Value) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
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
        let has_ips = !field::items_at(spec, "clusterIPs").is_empty()
            || !field::str_at(spec, "clusterIP").is_empty();
        if has_ips {
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
        "None" => {
            if field::is_set(spec, "sessionAffinityConfig") {
                errors.push(field::forbidden(
                    "spec.sessionAffinityConfig",
                    "must not be set when session affinity is None",
                ));
            }
        }
        "ClientIP" => {}
        other => errors.push(field::not_supported(
            "spec.sessionAffinity",
            other,
            &["ClientIP", "None"],
        )),
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
    errors
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
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(spec: Value) -> Vec<String> {
        let mut object = json!({"metadata": {"name": "s"}, "spec": spec});
        let registry = crate::registry::Registry::new(crate::registry::builtin_resources());
        let resource = registry.lookup("", "v1", "services").expect("served");
        crate::defaults::apply(resource, &mut object);
        service(&object).iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestValidateServiceCreate`.
    #[test]
    fn services_as_kube_validates_them() {
        assert!(texts(json!({"ports": [{"port": 80}], "selector": {"app": "web"}})).is_empty());
        assert!(
            texts(json!({"clusterIP": "None"})).is_empty(),
            "headless without ports"
        );
        assert!(texts(json!({"type": "ExternalName", "externalName": "example.com."})).is_empty());
        assert!(texts(json!({"type": "NodePort", "ports": [{"name": "a", "port": 80, "nodePort": 30080}, {"name": "b", "port": 81, "targetPort": "http"}]})).is_empty());
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (json!({}), vec!["spec.ports: Required value"]),
            (
                json!({"ports": [{"port": 80}, {"port": 0, "protocol": "HTTP", "targetPort": "Bad_Port"}]}),
                vec![
                    "spec.ports[0].name: Required value",
                    "spec.ports[1].name: Required value",
                    "spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                    "spec.ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                    "spec.ports[1].targetPort: Invalid value: \"Bad_Port\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                ],
            ),
            (
                json!({"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 80}]}),
                vec![
                    "spec.ports[1].name: Duplicate value: \"a\"",
                    "spec.ports[1]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}",
                ],
            ),
            (
                json!({"ports": [{"port": 80, "nodePort": 30001}]}),
                vec!["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
            ),
            (
                json!({"type": "ExternalName", "clusterIP": "10.0.0.1"}),
                vec![
                    "spec.clusterIPs: Forbidden: may not be set for ExternalName services",
                    "spec.externalName: Required value",
                ],
            ),
            (
                json!({"type": "Bogus", "ports": [{"port": 80}], "sessionAffinity": "Sticky"}),
                vec![
                    "spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\"",
                    "spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
                ],
            ),
            (
                json!({"type": "LoadBalancer", "ports": [{"port": 10250}]}),
                vec!["spec.ports[0]: Invalid value: 10250: may not expose port 10250 externally since it is used by kubelet"],
            ),
        ];
        for (spec, expected) in cases {
            assert_eq!(texts(spec.clone()), expected, "{spec}");
        }
    }
}
