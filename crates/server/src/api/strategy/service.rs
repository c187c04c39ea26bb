//! `svcStrategy.PrepareForUpdate`'s `dropTypeDependentFields`
//! (`pkg/registry/core/service/strategy.go`): a Service is a union keyed by
//! `type`; a field the new type does not use is cleared when the client did
//! not change it (so it was carried over or allocated), and left for
//! validation to refuse when the client did.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

fn text<'a>(spec: &'a Map<String, Value>, name: &str) -> &'a str {
    spec.get(name).and_then(Value::as_str).unwrap_or_default()
}

/// A list field as Go compares it: absent, null and empty are alike.
fn list<'a>(spec: &'a Map<String, Value>, name: &str) -> &'a [Value] {
    spec.get(name)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn is_type(spec: &Map<String, Value>, kinds: &[&str]) -> bool {
    kinds.contains(&text(spec, "type"))
}

fn needs_cluster_ip(spec: &Map<String, Value>) -> bool {
    !is_type(spec, &["ExternalName"])
}

fn needs_node_port(spec: &Map<String, Value>) -> bool {
    is_type(spec, &["NodePort", "LoadBalancer"])
}

fn needs_health_check_node_port(spec: &Map<String, Value>) -> bool {
    is_type(spec, &["LoadBalancer"]) && text(spec, "externalTrafficPolicy") == "Local"
}

/// `serviceapi.ExternallyAccessible`.
fn externally_accessible(spec: &Map<String, Value>) -> bool {
    needs_node_port(spec)
        || (is_type(spec, &["ClusterIP"]) && !list(spec, "externalIPs").is_empty())
}

fn node_ports(spec: &Map<String, Value>) -> BTreeSet<i64> {
    list(spec, "ports")
        .iter()
        .filter_map(|port| port.get("nodePort").and_then(Value::as_i64))
        .filter(|port| *port != 0)
        .collect()
}

/// A pointer field: absent and null are nil.
fn pointer<'a>(spec: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    spec.get(name).filter(|value| !value.is_null())
}

/// `dropTypeDependentFields` of an update of a Service.
pub(super) fn drop_type_dependent_fields(old: &Value, new: &mut Value) {
    let Some(old) = old.get("spec").and_then(Value::as_object) else {
        return;
    };
    let Some(new) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if needs_cluster_ip(old) && !needs_cluster_ip(new) {
        let same_cluster_ips = text(old, "clusterIP") == text(new, "clusterIP")
            && list(old, "clusterIPs") == list(new, "clusterIPs");
        if same_cluster_ips {
            new.remove("clusterIP");
            new.remove("clusterIPs");
        }
        if list(old, "ipFamilies") == list(new, "ipFamilies") {
            new.remove("ipFamilies");
        }
        if text(old, "ipFamilyPolicy") == text(new, "ipFamilyPolicy") {
            new.remove("ipFamilyPolicy");
        }
    }
    // Users may add, remove or change ports as long as no node port is new.
    if needs_node_port(old)
        && !needs_node_port(new)
        && node_ports(old).is_superset(&node_ports(new))
    {
        if let Some(ports) = new.get_mut("ports").and_then(Value::as_array_mut) {
            for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                port.remove("nodePort");
            }
        }
    }
    let health_check_port = |spec: &Map<String, Value>| {
        spec.get("healthCheckNodePort")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };
    if needs_health_check_node_port(old)
        && !needs_health_check_node_port(new)
        && health_check_port(old) == health_check_port(new)
    {
        new.remove("healthCheckNodePort");
    }
    if is_type(old, &["LoadBalancer"]) && !is_type(new, &["LoadBalancer"]) {
        let (before, after) = (
            pointer(old, "allocateLoadBalancerNodePorts"),
            pointer(new, "allocateLoadBalancerNodePorts"),
        );
        if before.is_some() && before == after {
            new.remove("allocateLoadBalancerNodePorts");
        }
        if pointer(old, "loadBalancerClass") == pointer(new, "loadBalancerClass") {
            new.remove("loadBalancerClass");
        }
    }
    if externally_accessible(old)
        && !externally_accessible(new)
        && text(old, "externalTrafficPolicy") == text(new, "externalTrafficPolicy")
    {
        new.remove("externalTrafficPolicy");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_the_new_type_does_not_use_are_dropped_when_unchanged() {
        let old = json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"],
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "externalTrafficPolicy": "Local",
            "healthCheckNodePort": 30100, "allocateLoadBalancerNodePorts": true, "loadBalancerClass": "a/b",
            "ports": [{"port": 80, "nodePort": 30080}]}});
        let mut to_cluster_ip = old.clone();
        to_cluster_ip["spec"]["type"] = json!("ClusterIP");
        drop_type_dependent_fields(&old, &mut to_cluster_ip);
        assert_eq!(
            to_cluster_ip["spec"],
            json!({"type": "ClusterIP", "clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"],
                "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "ports": [{"port": 80}]})
        );
        let mut to_external_name = old.clone();
        to_external_name["spec"]["type"] = json!("ExternalName");
        to_external_name["spec"]["ports"][0]["nodePort"] = json!(30999);
        drop_type_dependent_fields(&old, &mut to_external_name);
        let spec = &to_external_name["spec"];
        assert!(spec.get("clusterIPs").is_none() && spec.get("ipFamilyPolicy").is_none());
        assert_eq!(
            spec["ports"][0]["nodePort"], 30999,
            "a new node port is the client's"
        );
    }
}
