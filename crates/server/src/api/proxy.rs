//! The `proxy` subresources of pods, nodes and services, for every method
//! and with or without a trailing path (`pkg/registry/core/pod/strategy.go`
//! `ResourceLocation`, `pkg/registry/core/node/strategy.go`
//! `ResourceLocation` and `pkg/kubelet/client` `GetConnectionInfo`,
//! `pkg/registry/core/service/storage/storage.go` `ResourceLocation`,
//! `k8s.io/apimachinery/pkg/util/net` `SplitSchemeNamePort`).
//!
//! ferrokube reaches no cluster network, so it answers what kube answers
//! before it would dial: the malformed `scheme:name:port`, the missing
//! object, a pod without a proxyable IP, a node without addresses, a service
//! without endpoints or without the requested port. A location that kube
//! would dial is a 503, as kube's proxy answers an unreachable backend.

use serde_json::Value;

use super::context::Api;
use super::exchange::ApiResponse;
use super::target::Target;
use crate::status::{GroupResource, Result, Status};

/// `utilnet.SplitSchemeNamePort`: `name`, `name:port` or
/// `scheme:name:port`, the scheme `http`, `https` or empty, the name not.
pub(crate) fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => return None,
    };
    (!name.is_empty() && matches!(scheme, "" | "http" | "https")).then_some((scheme, name, port))
}

/// What kube's upgrade-aware proxy answers when it cannot dial `host`.
fn unreachable(host: &str) -> Status {
    Status {
        code: 503,
        reason: "ServiceUnavailable",
        message: format!(
            "error trying to reach service: dial tcp {host}: this server reaches no cluster network"
        ),
        details: None,
    }
}

/// The object `name` of `resource` (core v1) in `namespace`, or kube's 404.
fn read(api: &Api, plural: &str, namespace: Option<&str>, name: &str) -> Result<Value> {
    let registry = api.registry.load();
    let resource = registry
        .lookup("", "v1", plural)
        .ok_or_else(|| Status::internal(format!("{plural} are not served")))?;
    let target = Target {
        resource,
        namespace,
        name: Some(name),
        subresource: None,
        verb: crate::route::Verb::Get,
        custom: None,
    };
    let snapshot = api.store.snapshot();
    target
        .read_current(&snapshot, &target.key(name))?
        .map(|(_, object)| object)
        .ok_or_else(|| Status::not_found(&GroupResource::new("", plural), name))
}

pub(super) fn connect(api: &Api, target: &Target<'_>) -> Result<ApiResponse> {
    let id = target.name.unwrap_or_default();
    match target.resource.plural {
        "pods" => pod_location(api, target.namespace, id),
        "nodes" => node_location(api, id),
        "services" => service_location(api, target.namespace, id),
        _ => Err(Status::no_such_resource()),
    }
}

fn pod_location(api: &Api, namespace: Option<&str>, id: &str) -> Result<ApiResponse> {
    let (_, name, port) = split_scheme_name_port(id)
        .ok_or_else(|| Status::bad_request(format!("invalid pod request {id:?}")))?;
    let pod = read(api, "pods", namespace, name)?;
    let port = if port.is_empty() {
        first_container_port(&pod).unwrap_or_default()
    } else {
        port.to_string()
    };
    let ip = pod
        .pointer("/status/podIPs/0/ip")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !is_global_unicast(ip) {
        return Err(Status::bad_request("address not allowed"));
    }
    Err(unreachable(&join_host_port(ip, &port)))
}

/// The first port any regular container declares.
fn first_container_port(pod: &Value) -> Option<String> {
    pod.pointer("/spec/containers")?
        .as_array()?
        .iter()
        .filter_map(|container| container.pointer("/ports/0/containerPort"))
        .find_map(Value::as_i64)
        .map(|port| port.to_string())
}

/// Go's `net.IP.IsGlobalUnicast` of `netutils.ParseIPSloppy`: not
/// unspecified, loopback, multicast, link-local or broadcast.
fn is_global_unicast(ip: &str) -> bool {
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || v4.is_broadcast())
        }
        Ok(std::net::IpAddr::V6(v6)) => {
            let link_local = (v6.segments()[0] & 0xffc0) == 0xfe80;
            !(v6.is_unspecified() || v6.is_loopback() || v6.is_multicast() || link_local)
        }
        Err(_) => false,
    }
}

/// `net.JoinHostPort`, or the bare (bracketed IPv6) host without a port.
fn join_host_port(host: &str, port: &str) -> String {
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    if port.is_empty() {
        host
    } else {
        format!("{host}:{port}")
    }
}

/// The kubelet's default `--preferred-address-types` order.
const PREFERRED_ADDRESS_TYPES: &[&str] = &[
    "Hostname",
    "InternalDNS",
    "InternalIP",
    "ExternalDNS",
    "ExternalIP",
];

fn node_location(api: &Api, id: &str) -> Result<ApiResponse> {
    let (_, name, port) = split_scheme_name_port(id)
        .ok_or_else(|| Status::bad_request(format!("invalid node request {id:?}")))?;
    let node = read(api, "nodes", None, name)?;
    let addresses: Vec<(&str, &str)> = node
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|address| {
            let field = |key: &str| address.get(key).and_then(Value::as_str).unwrap_or_default();
            (field("type"), field("address"))
        })
        .collect();
    let preferred = PREFERRED_ADDRESS_TYPES.iter().find_map(|wanted| {
        addresses
            .iter()
            .find(|(kind, address)| kind == wanted && !address.is_empty())
            .map(|(_, address)| *address)
    });
    let Some(host) = preferred else {
        // A plain Go error: `ErrorToAPIStatus` makes it a 500 without a reason.
        let known: Vec<String> = addresses
            .iter()
            .map(|(kind, address)| format!("{{{kind} {address}}}"))
            .collect();
        return Err(Status::unknown(format!(
            "no preferred addresses found; known addresses: [{}]",
            known.join(" ")
        )));
    };
    let port = if port.is_empty() {
        node.pointer("/status/daemonEndpoints/kubeletEndpoint/Port")
            .and_then(Value::as_i64)
            .filter(|port| *port > 0)
            .unwrap_or(10250)
            .to_string()
    } else {
        port.to_string()
    };
    Err(unreachable(&join_host_port(host, &port)))
}

fn service_location(api: &Api, namespace: Option<&str>, id: &str) -> Result<ApiResponse> {
    let (_, name, port) = split_scheme_name_port(id)
        .ok_or_else(|| Status::bad_request(format!("invalid service request {id:?}")))?;
    let mut port_name = port.to_string();
    if let Ok(number) = port.parse::<i64>() {
        // A port number names the service port declaring it.
        let service = read(api, "services", namespace, name)?;
        let declared = service
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|declared| declared.get("port").and_then(Value::as_i64) == Some(number));
        let Some(declared) = declared else {
            return Err(service_unavailable(format!(
                "no service port {number} found for service {name:?}"
            )));
        };
        port_name = declared
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
    }
    let endpoints = read(api, "endpoints", namespace, name)?;
    let subsets = endpoints
        .get("subsets")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if subsets.is_empty() {
        return Err(service_unavailable(format!(
            "no endpoints available for service {name:?}"
        )));
    }
    for subset in &subsets {
        let Some(ip) = subset.pointer("/addresses/0/ip").and_then(Value::as_str) else {
            continue;
        };
        let ports = subset.get("ports").and_then(Value::as_array);
        let matching = ports.into_iter().flatten().find(|candidate| {
            candidate
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                == port_name
        });
        if let Some(matching) = matching {
            let number = matching.get("port").and_then(Value::as_i64).unwrap_or(0);
            return Err(unreachable(&join_host_port(ip, &number.to_string())));
        }
    }
    Err(service_unavailable(format!(
        "no endpoints available for service {id:?}"
    )))
}

/// `errors.NewServiceUnavailable`.
fn service_unavailable(message: String) -> Status {
    Status {
        code: 503,
        reason: "ServiceUnavailable",
        message,
        details: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_split_as_kube_splits_them() {
        assert_eq!(split_scheme_name_port("p"), Some(("", "p", "")));
        assert_eq!(split_scheme_name_port("p:80"), Some(("", "p", "80")));
        assert_eq!(
            split_scheme_name_port("https:p:443"),
            Some(("https", "p", "443"))
        );
        assert_eq!(split_scheme_name_port("ftp:p:21"), None);
        assert_eq!(split_scheme_name_port(":80"), None);
        assert_eq!(split_scheme_name_port("a:b:c:d"), None);
    }

    #[test]
    fn only_global_unicast_pod_ips_are_proxied() {
        assert!(is_global_unicast("10.1.2.3"));
        assert!(is_global_unicast("2001:db8::1"));
        for refused in [
            "",
            "x",
            "127.0.0.1",
            "0.0.0.0",
            "169.254.1.1",
            "224.0.0.1",
            "::1",
            "fe80::1",
        ] {
            assert!(!is_global_unicast(refused), "{refused}");
        }
    }

    #[test]
    fn the_first_declared_container_port_is_the_default() {
        let pod = json!({"spec": {"containers": [
            {"name": "a"},
            {"name": "b", "ports": [{"containerPort": 8080}, {"containerPort": 9090}]},
        ]}});
        assert_eq!(first_container_port(&pod).as_deref(), Some("8080"));
        assert_eq!(first_container_port(&json!({"spec": {}})), None);
        assert_eq!(join_host_port("10.0.0.1", "80"), "10.0.0.1:80");
        assert_eq!(join_host_port("2001:db8::1", ""), "[2001:db8::1]");
    }
}
