//! Core (`""` group) printers of `pkg/printers/internalversion/printers.go`
//! other than pods: nodes, services, endpoints, events, volumes, ... Each
//! returns the row's cells as the server prints them (always wide).

use serde_json::{json, Value};

use super::duration::since;
use super::format::*;

/// `printPodTemplate`: Name, Containers, Images, Pod Labels (no age).
pub fn pod_template(obj: &Value, _now: i64) -> Vec<Value> {
    let (names, images) = container_cells(arr_at(obj, &["template", "spec", "containers"]));
    vec![
        json!(name(obj)),
        json!(names),
        json!(images),
        json!(format_labels(obj_at(
            obj,
            &["template", "metadata", "labels"]
        ))),
    ]
}

/// `printReplicationController`.
pub fn replication_controller(obj: &Value, now: i64) -> Vec<Value> {
    let (names, images) = container_cells(arr_at(obj, &["spec", "template", "spec", "containers"]));
    vec![
        json!(name(obj)),
        json!(opt_int(obj, &["spec", "replicas"]).unwrap_or(1)),
        json!(int_at(obj, &["status", "replicas"])),
        json!(int_at(obj, &["status", "readyReplicas"])),
        json!(since(creation_timestamp(obj), now)),
        json!(names),
        json!(images),
        json!(format_labels(obj_at(obj, &["spec", "selector"]))),
    ]
}

/// `getServiceExternalIP` (wide: load-balancer addresses are not clipped).
fn service_external_ip(svc: &Value) -> String {
    let external: Vec<&str> = arr_at(svc, &["spec", "externalIPs"])
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match or(str_at(svc, &["spec", "type"]), "ClusterIP") {
        "ClusterIP" | "NodePort" if !external.is_empty() => external.join(","),
        "ClusterIP" | "NodePort" => "<none>".into(),
        "LoadBalancer" => {
            let lb = load_balancer_ingress(arr_at(svc, &["status", "loadBalancer", "ingress"]));
            if !external.is_empty() {
                let mut all: Vec<&str> = if lb.is_empty() {
                    Vec::new()
                } else {
                    lb.split(',').collect()
                };
                all.extend(external);
                all.join(",")
            } else if !lb.is_empty() {
                lb
            } else {
                "<pending>".into()
            }
        }
        "ExternalName" => str_at(svc, &["spec", "externalName"]).into(),
        _ => "<unknown>".into(),
    }
}

/// `printService`: Name, Type, Cluster-IP, External-IP, Port(s), Age, Selector.
pub fn service(svc: &Value, now: i64) -> Vec<Value> {
    // v1 defaulting fills `clusterIPs` from a lone `clusterIP`.
    let cluster_ip = arr_at(svc, &["spec", "clusterIPs"])
        .first()
        .and_then(Value::as_str)
        .or_else(|| opt_str(svc, &["spec", "clusterIP"]).filter(|ip| !ip.is_empty()))
        .unwrap_or("<none>");
    let ports: Vec<String> = arr_at(svc, &["spec", "ports"])
        .iter()
        .map(|port| {
            let protocol = opt_str(port, &["protocol"]).unwrap_or("TCP");
            let node_port = int_at(port, &["nodePort"]);
            if node_port > 0 {
                format!("{}:{node_port}/{protocol}", int_at(port, &["port"]))
            } else {
                format!("{}/{protocol}", int_at(port, &["port"]))
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    };
    vec![
        json!(name(svc)),
        json!(or(str_at(svc, &["spec", "type"]), "ClusterIP")),
        json!(cluster_ip),
        json!(service_external_ip(svc)),
        json!(ports),
        json!(since(creation_timestamp(svc), now)),
        json!(format_labels(obj_at(svc, &["spec", "selector"]))),
    ]
}

/// `net.JoinHostPort`.
fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// `formatEndpoints(endpoints, nil)`: up to three addresses, then "+ N more...".
fn format_endpoints(obj: &Value) -> String {
    let subsets = arr_at(obj, &["subsets"]);
    if subsets.is_empty() {
        return "<none>".into();
    }
    const MAX: usize = 3;
    let (mut list, mut more, mut count) = (Vec::<String>::new(), false, 0usize);
    for subset in subsets {
        let addresses = arr_at(subset, &["addresses"]);
        let ports = arr_at(subset, &["ports"]);
        if ports.is_empty() {
            count += addresses.len();
            for address in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(str_at(address, &["ip"]).to_string());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for address in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(join_host_port(
                    str_at(address, &["ip"]),
                    int_at(port, &["port"]),
                ));
            }
        }
    }
    let ret = list.join(",");
    if more {
        format!("{ret} + {} more...", count - MAX)
    } else {
        ret
    }
}

/// `printEndpoints`.
pub fn endpoints(obj: &Value, now: i64) -> Vec<Value> {
    vec![
        json!(name(obj)),
        json!(format_endpoints(obj)),
        json!(since(creation_timestamp(obj), now)),
    ]
}

/// `findNodeRoles`: `node-role.kubernetes.io/<role>` keys and `kubernetes.io/role` values.
fn node_roles(node: &Value) -> String {
    let mut roles = std::collections::BTreeSet::new();
    for (key, value) in obj_at(node, &["metadata", "labels"]).into_iter().flatten() {
        if let Some(role) = key
            .strip_prefix("node-role.kubernetes.io/")
            .filter(|r| !r.is_empty())
        {
            roles.insert(role.to_string());
        } else if key == "kubernetes.io/role" {
            if let Some(role) = value.as_str().filter(|r| !r.is_empty()) {
                roles.insert(role.to_string());
            }
        }
    }
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    }
}

/// `printNode`: Name, Status, Roles, Age, Version, Internal-IP, External-IP, OS-Image, Kernel-Version, Container-Runtime.
pub fn node(node: &Value, now: i64) -> Vec<Value> {
    // The conditions map keeps the last condition of each type.
    let ready = arr_at(node, &["status", "conditions"])
        .iter()
        .rev()
        .find(|c| str_at(c, &["type"]) == "Ready");
    let mut status = vec![match ready {
        Some(c) if str_at(c, &["status"]) == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if opt_bool(node, &["spec", "unschedulable"]) == Some(true) {
        status.push("SchedulingDisabled");
    }
    let address = |kind: &str| {
        arr_at(node, &["status", "addresses"])
            .iter()
            .find(|a| str_at(a, &["type"]) == kind)
            .map(|a| str_at(a, &["address"]).to_string())
            .unwrap_or_else(|| "<none>".into())
    };
    let info = |field: &str| {
        let value = str_at(node, &["status", "nodeInfo", field]);
        if value.is_empty() {
            "<unknown>".to_string()
        } else {
            value.to_string()
        }
    };
    vec![
        json!(name(node)),
        json!(status.join(",")),
        json!(node_roles(node)),
        json!(since(creation_timestamp(node), now)),
        json!(str_at(node, &["status", "nodeInfo", "kubeletVersion"])),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ]
}

/// `printNamespace`.
pub fn namespace(obj: &Value, now: i64) -> Vec<Value> {
    vec![
        json!(name(obj)),
        json!(or(str_at(obj, &["status", "phase"]), "Active")),
        json!(since(creation_timestamp(obj), now)),
    ]
}

/// `printConfigMap`: DATA counts `data` and `binaryData` keys.
pub fn config_map(obj: &Value, now: i64) -> Vec<Value> {
    let count = len_at(obj, &["data"]) + len_at(obj, &["binaryData"]);
    vec![
        json!(name(obj)),
        json!(count),
        json!(since(creation_timestamp(obj), now)),
    ]
}

/// `printSecret`: `stringData` keys are part of `data` once converted.
pub fn secret(obj: &Value, now: i64) -> Vec<Value> {
    let mut keys: std::collections::BTreeSet<&str> = obj_at(obj, &["data"])
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    keys.extend(
        obj_at(obj, &["stringData"])
            .into_iter()
            .flatten()
            .map(|(k, _)| k.as_str()),
    );
    vec![
        json!(name(obj)),
        json!(or(str_at(obj, &["type"]), "Opaque")),
        json!(keys.len()),
        json!(since(creation_timestamp(obj), now)),
    ]
}

/// `printServiceAccount`.
pub fn service_account(obj: &Value, now: i64) -> Vec<Value> {
    vec![
        json!(name(obj)),
        json!(len_at(obj, &["secrets"])),
        json!(since(creation_timestamp(obj), now)),
    ]
}

/// The core/v1 Event fields an events.k8s.io/v1 Event carries under other names.
fn event_field<'a>(event: &'a Value, core: &[&str], events_v1: &[&str]) -> Option<&'a Value> {
    at(event, core)
        .or_else(|| at(event, events_v1))
        .filter(|v| !v.is_null())
}

/// `printEvent`: Last Seen, Type, Reason, Object, Subobject, Source, Message, First Seen, Count, Name.
pub fn event(event: &Value, now: i64) -> Vec<Value> {
    let text = |core: &[&str], v1: &[&str]| {
        event_field(event, core, v1)
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let first_ts = text(&["firstTimestamp"], &["deprecatedFirstTimestamp"]);
    let event_time = text(&["eventTime"], &["eventTime"]);
    let first = if first_ts.is_empty() {
        since(Some(event_time), now)
    } else {
        since(Some(first_ts), now)
    };
    let last_ts = text(&["lastTimestamp"], &["deprecatedLastTimestamp"]);
    let mut last = if last_ts.is_empty() {
        first.clone()
    } else {
        since(Some(last_ts), now)
    };
    let mut count = event_field(event, &["count"], &["deprecatedCount"])
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if let Some(series) = event_field(event, &["series"], &["series"]) {
        last = since(opt_str(series, &["lastObservedTime"]), now);
        count = int_at(series, &["count"]);
    } else if count == 0 {
        count = 1;
    }
    let involved = event_field(event, &["involvedObject"], &["regarding"])
        .cloned()
        .unwrap_or(Value::Null);
    let kind = str_at(&involved, &["kind"]).to_lowercase();
    let target = match str_at(&involved, &["name"]) {
        "" => kind,
        object => format!("{kind}/{object}"),
    };
    let first_non_empty = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            a.to_string()
        }
    };
    let component = first_non_empty(
        text(&["source", "component"], &["deprecatedSource", "component"]),
        text(&["reportingComponent"], &["reportingController"]),
    );
    let instance = first_non_empty(
        text(&["source", "host"], &["deprecatedSource", "host"]),
        text(&["reportingInstance"], &["reportingInstance"]),
    );
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        json!(str_at(event, &["type"])),
        json!(str_at(event, &["reason"])),
        json!(target),
        json!(str_at(&involved, &["fieldPath"])),
        json!(source),
        json!(text(&["message"], &["note"]).trim()),
        json!(first),
        json!(count),
        json!(name(event)),
    ]
}

/// `helper.GetPersistentVolumeClass` / `GetPersistentVolumeClaimClass`.
fn storage_class(obj: &Value) -> String {
    annotation(obj, "volume.beta.kubernetes.io/storage-class")
        .or_else(|| opt_str(obj, &["spec", "storageClassName"]))
        .unwrap_or("")
        .to_string()
}

/// `printPersistentVolume`.
pub fn persistent_volume(pv: &Value, now: i64) -> Vec<Value> {
    let claim = match at(pv, &["spec", "claimRef"]).filter(|c| !c.is_null()) {
        Some(claim) => format!(
            "{}/{}",
            str_at(claim, &["namespace"]),
            str_at(claim, &["name"])
        ),
        None => String::new(),
    };
    let phase = if deletion_timestamp(pv).is_some() {
        "Terminating"
    } else {
        or(str_at(pv, &["status", "phase"]), "Pending")
    };
    vec![
        json!(name(pv)),
        json!(quantity_string(at(pv, &["spec", "capacity", "storage"]))),
        json!(access_modes(arr_at(pv, &["spec", "accessModes"]))),
        json!(or(
            str_at(pv, &["spec", "persistentVolumeReclaimPolicy"]),
            "Retain"
        )),
        json!(phase),
        json!(claim),
        json!(storage_class(pv)),
        json!(opt_str(pv, &["spec", "volumeAttributesClassName"]).unwrap_or("<unset>")),
        json!(str_at(pv, &["status", "reason"])),
        json!(since(creation_timestamp(pv), now)),
        json!(opt_str(pv, &["spec", "volumeMode"]).unwrap_or("Filesystem")),
    ]
}

/// `printPersistentVolumeClaim`: capacity and modes only once bound to a volume.
pub fn persistent_volume_claim(pvc: &Value, now: i64) -> Vec<Value> {
    let phase = if deletion_timestamp(pvc).is_some() {
        "Terminating"
    } else {
        or(str_at(pvc, &["status", "phase"]), "Pending")
    };
    let volume = str_at(pvc, &["spec", "volumeName"]);
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            quantity_string(at(pvc, &["status", "capacity", "storage"])),
            access_modes(arr_at(pvc, &["status", "accessModes"])),
        )
    };
    vec![
        json!(name(pvc)),
        json!(phase),
        json!(volume),
        json!(capacity),
        json!(modes),
        json!(storage_class(pvc)),
        json!(opt_str(pvc, &["spec", "volumeAttributesClassName"]).unwrap_or("<unset>")),
        json!(since(creation_timestamp(pvc), now)),
        json!(opt_str(pvc, &["spec", "volumeMode"]).unwrap_or("Filesystem")),
    ]
}

/// `printResourceQuota`: `name: used/hard` pairs, `limits.*` in the Limit column.
pub fn resource_quota(obj: &Value, now: i64) -> Vec<Value> {
    let mut resources: Vec<&String> = obj_at(obj, &["status", "hard"])
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .collect();
    resources.sort();
    let (mut requests, mut limits) = (Vec::new(), Vec::new());
    for resource in resources {
        let used = quantity_string(at(obj, &["status", "used", resource]));
        let hard = quantity_string(at(obj, &["status", "hard", resource]));
        let pieces: Vec<&str> = resource.split('.').collect();
        let column = if pieces.len() > 1 && pieces[0] == "limits" {
            &mut limits
        } else {
            &mut requests
        };
        column.push(format!("{resource}: {used}/{hard}"));
    }
    vec![
        json!(name(obj)),
        json!(requests.join(", ")),
        json!(limits.join(", ")),
        json!(since(creation_timestamp(obj), now)),
    ]
}

/// `printComponentStatus`: the first Healthy condition decides.
pub fn component_status(obj: &Value, _now: i64) -> Vec<Value> {
    let (mut status, mut message, mut error) = ("Unknown", "", "");
    if let Some(condition) = arr_at(obj, &["conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == "Healthy")
    {
        status = if str_at(condition, &["status"]) == "True" {
            "Healthy"
        } else {
            "Unhealthy"
        };
        message = str_at(condition, &["message"]);
        error = str_at(condition, &["error"]);
    }
    vec![
        json!(name(obj)),
        json!(status),
        json!(message),
        json!(error),
    ]
}
