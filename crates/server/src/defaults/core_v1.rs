//! core/v1 defaults beyond the pod and container basics of `defaults.rs`:
//! volume sources, probes' gRPC service, host-network ports, Services,
//! PersistentVolumes and their claims, Namespaces' and Nodes' status
//! (upstream `pkg/apis/core/v1/defaults.go` and the `+default=` markers of
//! `k8s.io/api/core/v1/types.go`, both applied by `zz_generated.defaults.go`).

use serde_json::{json, Map, Value};

use super::{each_object, object_at, set_default};

/// Sets `field` when it is missing, `null` or `""` (a Go string's zero value).
pub(super) fn set_if_empty(map: &mut Map<String, Value>, field: &str, value: &str) {
    let empty = map
        .get(field)
        .is_none_or(|current| current.is_null() || current == "");
    if empty {
        map.insert(field.to_string(), json!(value));
    }
}

/// Sets `field` when it is missing, `null` or `0` (a Go integer's zero value:
/// `SetDefaults_Probe`).
pub(super) fn set_if_zero(map: &mut Map<String, Value>, field: &str, value: i64) {
    let zero = map
        .get(field)
        .is_none_or(|current| current.is_null() || current.as_i64() == Some(0));
    if zero {
        map.insert(field.to_string(), json!(value));
    }
}

fn source<'a>(map: &'a mut Map<String, Value>, name: &str) -> Option<&'a mut Map<String, Value>> {
    map.get_mut(name).and_then(Value::as_object_mut)
}

/// Every member of `VolumeSource`: a volume naming none of them is an emptyDir.
const VOLUME_SOURCES: [&str; 30] = [
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

/// `SetObjectDefaults_Pod`'s loop over `spec.volumes`: `SetDefaults_Volume`
/// (no source is an emptyDir; the image source's pull policy only with the
/// ImageVolume gate, off in 1.34), then each source's defaults.
pub(super) fn volume(volume: &mut Map<String, Value>) {
    let no_source = VOLUME_SOURCES
        .iter()
        .all(|name| volume.get(*name).is_none_or(Value::is_null));
    if no_source {
        volume.insert("emptyDir".into(), json!({}));
    }
    if let Some(host_path) = source(volume, "hostPath") {
        host_path_source(host_path);
    }
    for name in ["secret", "configMap", "downwardAPI", "projected"] {
        // The four `SetDefaults_*VolumeSource`: mode 0644.
        if let Some(source) = source(volume, name) {
            set_default(source, "defaultMode", json!(420));
        }
    }
    if let Some(iscsi) = source(volume, "iscsi") {
        set_if_empty(iscsi, "iscsiInterface", "default");
    }
    if let Some(rbd) = source(volume, "rbd") {
        rbd_source(rbd);
    }
    if let Some(downward_api) = source(volume, "downwardAPI") {
        downward_api_items(downward_api);
    }
    if let Some(azure_disk) = source(volume, "azureDisk") {
        azure_disk_source(azure_disk);
    }
    if let Some(projected) = source(volume, "projected") {
        each_object(projected.get_mut("sources"), |projection| {
            if let Some(downward_api) = source(projection, "downwardAPI") {
                downward_api_items(downward_api);
            }
            // `SetDefaults_ServiceAccountTokenProjection`: an hour.
            if let Some(token) = source(projection, "serviceAccountToken") {
                set_default(token, "expirationSeconds", json!(3600));
            }
        });
    }
    if let Some(scale_io) = source(volume, "scaleIO") {
        scale_io_source(scale_io);
    }
    if let Some(template) = volume
        .get_mut("ephemeral")
        .and_then(|ephemeral| ephemeral.get_mut("volumeClaimTemplate"))
        .and_then(Value::as_object_mut)
    {
        // The template's spec is a struct: defaulted even when absent.
        set_default(template, "spec", json!({}));
        if let Some(spec) = source(template, "spec") {
            claim_spec(spec);
        }
    }
}

/// `SetDefaults_HostPathVolumeSource`: the type is `""` (HostPathUnset).
fn host_path_source(host_path: &mut Map<String, Value>) {
    set_default(host_path, "type", json!(""));
}

/// `+default=` of `RBDVolumeSource` and `RBDPersistentVolumeSource`.
fn rbd_source(rbd: &mut Map<String, Value>) {
    set_if_empty(rbd, "pool", "rbd");
    set_if_empty(rbd, "user", "admin");
    set_if_empty(rbd, "keyring", "/etc/ceph/keyring");
}

/// `+default=` of `AzureDiskVolumeSource` (pointers: only absent ones).
fn azure_disk_source(azure_disk: &mut Map<String, Value>) {
    set_default(azure_disk, "cachingMode", json!("ReadWrite"));
    set_default(azure_disk, "fsType", json!("ext4"));
    set_default(azure_disk, "readOnly", json!(false));
    set_default(azure_disk, "kind", json!("Shared"));
}

/// `+default=` of `ScaleIOVolumeSource` and `ScaleIOPersistentVolumeSource`.
fn scale_io_source(scale_io: &mut Map<String, Value>) {
    set_if_empty(scale_io, "storageMode", "ThinProvisioned");
    set_if_empty(scale_io, "fsType", "xfs");
}

/// `SetDefaults_ObjectFieldSelector` on each item's fieldRef.
fn downward_api_items(downward_api: &mut Map<String, Value>) {
    each_object(downward_api.get_mut("items"), |item| {
        if let Some(field_ref) = source(item, "fieldRef") {
            set_if_empty(field_ref, "apiVersion", "v1");
        }
    });
}

/// `SetDefaults_ResourceList`: each quantity rounded up to milli precision
/// (`0.0001` is `1m`). Strings that do not parse are left for the
/// quantity decoding to report.
pub(super) fn resource_list(list: Option<&mut Value>) {
    let Some(list) = list.and_then(Value::as_object_mut) else {
        return;
    };
    for quantity in list.values_mut() {
        let Some(text) = quantity.as_str() else {
            continue;
        };
        let Ok(parsed) = crate::quantity::Quantity::parse(text.trim()) else {
            continue;
        };
        if let Some(rounded) = parsed.round_up_milli().filter(|rounded| *rounded != parsed) {
            *quantity = Value::String(rounded.to_string());
        }
    }
}

/// A `ResourceRequirements`' limits and requests.
pub(super) fn resource_requirements(requirements: Option<&mut Value>) {
    if let Some(requirements) = requirements.and_then(Value::as_object_mut) {
        resource_list(requirements.get_mut("limits"));
        resource_list(requirements.get_mut("requests"));
    }
}

/// The resource lists of LimitRange items, ResourceQuotas and Nodes
/// (`SetObjectDefaults_LimitRange`, `_ResourceQuota`, `_Node`).
pub(super) fn resource_lists(object: &mut Value, paths: &[&[&str]]) {
    for path in paths {
        let Some((last, parent)) = path.split_last() else {
            continue;
        };
        if let Some(parent) = object_at(object, parent) {
            resource_list(parent.get_mut(*last));
        }
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`: the volume mode is Filesystem.
pub(super) fn claim_spec(spec: &mut Map<String, Value>) {
    set_default(spec, "volumeMode", json!("Filesystem"));
    resource_requirements(spec.get_mut("resources"));
}

/// The `+default=""` of `GRPCAction.service`.
pub(super) fn grpc_action(probe: &mut Map<String, Value>) {
    if let Some(grpc) = source(probe, "grpc") {
        set_default(grpc, "service", json!(""));
    }
}

/// `defaultHostNetworkPorts` (`SetDefaults_Pod`, not templates): with host
/// networking a container port's hostPort is its containerPort.
pub(super) fn host_network_ports(spec: &mut Map<String, Value>) {
    if spec.get("hostNetwork") != Some(&json!(true)) {
        return;
    }
    for field in ["containers", "initContainers"] {
        each_object(spec.get_mut(field), |container| {
            each_object(container.get_mut("ports"), |port| {
                let unset = port
                    .get("hostPort")
                    .is_none_or(|host_port| host_port.is_null() || host_port.as_i64() == Some(0));
                if unset {
                    if let Some(container_port) = port.get("containerPort").cloned() {
                        port.insert("hostPort".into(), container_port);
                    }
                }
            });
        });
    }
}

/// `SetDefaults_Service`, then the ports' protocol.
pub(super) fn service(object: &mut Value) {
    let Some(spec) = object_at(object, &["spec"]) else {
        return;
    };
    set_if_empty(spec, "sessionAffinity", "None");
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.remove("sessionAffinityConfig");
        }
        Some("ClientIP") => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|config| config.pointer("/clientIP/timeoutSeconds"))
                .is_some_and(|timeout| !timeout.is_null());
            if !has_timeout {
                // DefaultClientIPServiceAffinitySeconds: three hours.
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    set_if_empty(spec, "type", "ClusterIP");
    each_object(spec.get_mut("ports"), |port| {
        set_if_empty(port, "protocol", "TCP");
        let unset = port
            .get("targetPort")
            .is_none_or(|target| target.is_null() || target.as_i64() == Some(0) || target == "");
        if unset {
            if let Some(number) = port.get("port").cloned() {
                port.insert("targetPort".into(), number);
            }
        }
    });
    let service_type = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    // `service.ExternallyAccessible`.
    let has_external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|ips| !ips.is_empty());
    let externally_accessible = matches!(service_type.as_str(), "LoadBalancer" | "NodePort")
        || (service_type == "ClusterIP" && has_external_ips);
    if externally_accessible {
        set_if_empty(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(
        service_type.as_str(),
        "NodePort" | "LoadBalancer" | "ClusterIP"
    ) {
        set_default(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if service_type == "LoadBalancer" {
        set_default(spec, "allocateLoadBalancerNodePorts", json!(true));
        if let Some(status) = object_at(object, &["status", "loadBalancer"]) {
            each_object(status.get_mut("ingress"), |ingress| {
                let has_ip = ingress
                    .get("ip")
                    .and_then(Value::as_str)
                    .is_some_and(|ip| !ip.is_empty());
                if has_ip {
                    set_default(ingress, "ipMode", json!("VIP"));
                }
            });
        }
    }
}

/// `SetDefaults_PersistentVolume` and the sources of its spec.
pub(super) fn persistent_volume(object: &mut Value) {
    status_phase(object, "Pending");
    let Some(spec) = object_at(object, &["spec"]) else {
        return;
    };
    set_if_empty(spec, "persistentVolumeReclaimPolicy", "Retain");
    resource_list(spec.get_mut("capacity"));
    set_default(spec, "volumeMode", json!("Filesystem"));
    if let Some(host_path) = source(spec, "hostPath") {
        host_path_source(host_path);
    }
    if let Some(rbd) = source(spec, "rbd") {
        rbd_source(rbd);
    }
    if let Some(iscsi) = source(spec, "iscsi") {
        set_if_empty(iscsi, "iscsiInterface", "default");
    }
    if let Some(azure_disk) = source(spec, "azureDisk") {
        azure_disk_source(azure_disk);
    }
    if let Some(scale_io) = source(spec, "scaleIO") {
        scale_io_source(scale_io);
    }
}

/// `SetDefaults_PersistentVolumeClaim` and `SetDefaults_PersistentVolumeClaimSpec`.
pub(super) fn persistent_volume_claim(object: &mut Value) {
    status_phase(object, "Pending");
    if let Some(map) = object.as_object_mut() {
        set_default(map, "spec", json!({}));
    }
    if let Some(spec) = object_at(object, &["spec"]) {
        claim_spec(spec);
    }
    resource_lists(
        object,
        &[&["status", "capacity"], &["status", "allocatedResources"]],
    );
}

/// `SetDefaults_NamespaceStatus`: the phase is Active.
pub(super) fn namespace(object: &mut Value) {
    status_phase(object, "Active");
}

/// `SetDefaults_NodeStatus`: allocatable is the capacity when not given.
pub(super) fn node(object: &mut Value) {
    let Some(status) = object_at(object, &["status"]) else {
        return;
    };
    if status.get("allocatable").is_none_or(Value::is_null) {
        if let Some(capacity) = status.get("capacity").filter(|c| c.is_object()).cloned() {
            status.insert("allocatable".into(), capacity);
        }
    }
    resource_lists(
        object,
        &[&["status", "capacity"], &["status", "allocatable"]],
    );
}

/// A status struct's phase defaulted (the status is a struct: never nil).
fn status_phase(object: &mut Value, phase: &str) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    set_default(map, "status", json!({}));
    if let Some(status) = source(map, "status") {
        set_if_empty(status, "phase", phase);
    }
}

#[cfg(test)]
#[path = "core_v1_tests.rs"]
mod tests;
