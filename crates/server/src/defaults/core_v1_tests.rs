//! Cases of kube's `pkg/apis/core/v1/defaults_test.go`, as input and the
//! defaulted JSON kube-apiserver 1.34 returns for it.

use serde_json::{json, Value};

use crate::registry::Registry;

/// `object` defaulted as a v1 `plural`, checked to be idempotent.
fn defaulted(plural: &str, mut object: Value) -> Value {
    let registry = Registry::new(crate::registry::builtin_resources());
    let resource = registry.lookup("", "v1", plural).expect("served");
    crate::defaults::apply(resource, &mut object);
    let once = object.clone();
    crate::defaults::apply(resource, &mut object);
    assert_eq!(once, object, "defaulting is idempotent");
    object
}

fn pod_with_volumes(volumes: Value) -> Value {
    json!({"spec": {"volumes": volumes}})
}

#[test]
fn volume_sources_default_as_kube() {
    let cases = [
        // TestSetDefaultVolume: no source is an emptyDir.
        (json!({"name": "v"}), json!({"name": "v", "emptyDir": {}})),
        // TestSetDefaultHostPathVolumeSource.
        (
            json!({"name": "v", "hostPath": {"path": "/p"}}),
            json!({"name": "v", "hostPath": {"path": "/p", "type": ""}}),
        ),
        (
            json!({"name": "v", "hostPath": {"path": "/p", "type": "Directory"}}),
            json!({"name": "v", "hostPath": {"path": "/p", "type": "Directory"}}),
        ),
        // TestSetDefaultSecretVolumeSource / ConfigMap / DownwardAPI / Projected.
        (
            json!({"name": "v", "secret": {"secretName": "s"}}),
            json!({"name": "v", "secret": {"secretName": "s", "defaultMode": 420}}),
        ),
        (
            json!({"name": "v", "configMap": {"name": "c", "defaultMode": 256}}),
            json!({"name": "v", "configMap": {"name": "c", "defaultMode": 256}}),
        ),
        (
            json!({"name": "v", "downwardAPI": {"items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}}),
            json!({"name": "v", "downwardAPI": {"defaultMode": 420, "items": [
                {"path": "l", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}}]}}),
        ),
        (
            json!({"name": "v", "projected": {"sources": [
                {"serviceAccountToken": {"path": "t"}},
                {"downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
                {"configMap": {"name": "c"}}]}}),
            json!({"name": "v", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}},
                {"downwardAPI": {"items": [{"path": "n", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}]}},
                {"configMap": {"name": "c"}}]}}),
        ),
        // TestSetDefaultISCSIVolumeSource, RBD, AzureDisk, ScaleIO markers.
        (
            json!({"name": "v", "iscsi": {"targetPortal": "t:3260", "iqn": "iqn.x", "lun": 0, "iscsiInterface": ""}}),
            json!({"name": "v", "iscsi": {"targetPortal": "t:3260", "iqn": "iqn.x", "lun": 0, "iscsiInterface": "default"}}),
        ),
        (
            json!({"name": "v", "rbd": {"monitors": ["m"], "image": "i"}}),
            json!({"name": "v", "rbd": {"monitors": ["m"], "image": "i", "pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"}}),
        ),
        (
            json!({"name": "v", "azureDisk": {"diskName": "d", "diskURI": "u"}}),
            json!({"name": "v", "azureDisk": {"diskName": "d", "diskURI": "u", "cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": false, "kind": "Shared"}}),
        ),
        (
            json!({"name": "v", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}}}),
            json!({"name": "v", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}, "storageMode": "ThinProvisioned", "fsType": "xfs"}}),
        ),
        // The ephemeral volume's claim template: SetDefaults_PersistentVolumeClaimSpec.
        (
            json!({"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}}),
            json!({"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem"}}}}),
        ),
    ];
    for (input, expected) in cases {
        let pod = defaulted("pods", pod_with_volumes(json!([input.clone()])));
        assert_eq!(pod["spec"]["volumes"][0], expected, "{input}");
        // Templates share the pod spec's volume defaults.
        let template = defaulted(
            "podtemplates",
            json!({"template": {"spec": {"volumes": [input.clone()]}}}),
        );
        assert_eq!(
            template["template"]["spec"]["volumes"][0], expected,
            "{input}"
        );
    }
}

#[test]
fn probes_and_handlers_default_as_kube() {
    // TestSetDefaultProbe: zero counts are unset; TestSetDefaultGRPCAction.
    let pod = defaulted(
        "pods",
        json!({"spec": {"containers": [{"name": "c", "image": "i:1",
            "livenessProbe": {"grpc": {"port": 9000}, "timeoutSeconds": 0},
            "readinessProbe": {"httpGet": {"port": 80, "path": ""}, "periodSeconds": 5},
            "lifecycle": {"preStop": {"httpGet": {"port": 80}}}}]}}),
    );
    let container = &pod["spec"]["containers"][0];
    assert_eq!(
        container["livenessProbe"],
        json!({"grpc": {"port": 9000, "service": ""}, "timeoutSeconds": 1, "periodSeconds": 10,
               "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(
        container["readinessProbe"],
        json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
               "periodSeconds": 5, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(
        container["lifecycle"]["preStop"]["httpGet"],
        json!({"port": 80, "path": "/", "scheme": "HTTP"})
    );
}

#[test]
fn empty_strings_are_unset_as_in_go() {
    // SetDefaults_Container / SetDefaults_PodSpec compare with "".
    let pod = defaulted(
        "pods",
        json!({"spec": {"restartPolicy": "", "dnsPolicy": "", "schedulerName": "",
            "containers": [{"name": "c", "image": "i", "imagePullPolicy": "",
                "terminationMessagePath": "", "terminationMessagePolicy": "",
                "ports": [{"containerPort": 80, "protocol": ""}],
                "env": [{"name": "e", "valueFrom": {"fieldRef": {"apiVersion": "", "fieldPath": "metadata.name"}}}]}]}}),
    );
    let spec = &pod["spec"];
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["schedulerName"], "default-scheduler");
    let container = &spec["containers"][0];
    assert_eq!(container["imagePullPolicy"], "Always");
    assert_eq!(container["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(container["terminationMessagePolicy"], "File");
    assert_eq!(container["ports"][0]["protocol"], "TCP");
    assert_eq!(
        container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"],
        "v1"
    );
}

#[test]
fn host_network_ports_default_on_pods_only() {
    // TestSetDefaultHostNetwork...: hostPort is the containerPort, for
    // containers and init containers, on pods (not templates).
    let spec = json!({"hostNetwork": true,
        "containers": [{"name": "c", "image": "i:1", "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 81}]}],
        "initContainers": [{"name": "i", "image": "i:1", "ports": [{"containerPort": 90}]}]});
    let pod = defaulted("pods", json!({"spec": spec.clone()}));
    assert_eq!(pod["spec"]["containers"][0]["ports"][0]["hostPort"], 80);
    assert_eq!(pod["spec"]["containers"][0]["ports"][1]["hostPort"], 81);
    assert_eq!(pod["spec"]["initContainers"][0]["ports"][0]["hostPort"], 90);
    let template = defaulted("podtemplates", json!({"template": {"spec": spec}}));
    assert!(template["template"]["spec"]["containers"][0]["ports"][0]
        .get("hostPort")
        .is_none());
}

#[test]
fn services_default_as_kube() {
    let service = |spec: Value| defaulted("services", json!({"spec": spec}))["spec"].clone();
    // TestSetDefaultService.
    assert_eq!(
        service(
            json!({"ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "targetPort": 0}, {"port": 8080, "targetPort": ""}]})
        ),
        json!({"type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
               "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80},
                         {"port": 53, "protocol": "UDP", "targetPort": 53},
                         {"port": 8080, "protocol": "TCP", "targetPort": 8080}]})
    );
    // TestSetDefaultServiceSessionAffinityConfig.
    assert_eq!(
        service(json!({"sessionAffinity": "None", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}}}))
            .get("sessionAffinityConfig"),
        None
    );
    assert_eq!(
        service(json!({"sessionAffinity": "ClientIP"}))["sessionAffinityConfig"],
        json!({"clientIP": {"timeoutSeconds": 10800}})
    );
    assert_eq!(
        service(
            json!({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 7200}}})
        )["sessionAffinityConfig"],
        json!({"clientIP": {"timeoutSeconds": 7200}})
    );
    // TestSetDefaultServiceExternalTraffic.
    assert_eq!(
        service(json!({"type": "LoadBalancer"}))["externalTrafficPolicy"],
        "Cluster"
    );
    assert_eq!(
        service(json!({"type": "NodePort"}))["externalTrafficPolicy"],
        "Cluster"
    );
    assert_eq!(
        service(json!({"type": "ClusterIP", "externalIPs": ["1.2.3.4"]}))["externalTrafficPolicy"],
        "Cluster"
    );
    assert_eq!(
        service(json!({"type": "ClusterIP"})).get("externalTrafficPolicy"),
        None
    );
    assert_eq!(
        service(json!({"type": "NodePort", "externalTrafficPolicy": "Local"}))
            ["externalTrafficPolicy"],
        "Local"
    );
    // TestSetDefaultServiceInternalTrafficPolicy.
    assert_eq!(
        service(json!({"type": "ExternalName", "externalName": "x.example"}))
            .get("internalTrafficPolicy"),
        None
    );
    assert_eq!(
        service(json!({"type": "NodePort", "internalTrafficPolicy": "Local"}))
            ["internalTrafficPolicy"],
        "Local"
    );
    // allocateLoadBalancerNodePorts on load balancers only.
    assert_eq!(
        service(json!({"type": "LoadBalancer"}))["allocateLoadBalancerNodePorts"],
        true
    );
    assert_eq!(
        service(json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false}))
            ["allocateLoadBalancerNodePorts"],
        false
    );
    assert_eq!(
        service(json!({"type": "NodePort"})).get("allocateLoadBalancerNodePorts"),
        None
    );
    // TestSetDefaultServiceLoadbalancerIPMode.
    let balanced = defaulted(
        "services",
        json!({"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {"ingress": [
            {"ip": "1.2.3.4"}, {"ip": "1.2.3.5", "ipMode": "Proxy"}, {"hostname": "h"}]}}}),
    );
    assert_eq!(
        balanced["status"]["loadBalancer"]["ingress"],
        json!([{"ip": "1.2.3.4", "ipMode": "VIP"}, {"ip": "1.2.3.5", "ipMode": "Proxy"}, {"hostname": "h"}])
    );
}

#[test]
fn volumes_claims_namespaces_and_nodes_default_as_kube() {
    // TestSetDefaultPersistentVolume and the sources of its spec.
    let volume = defaulted(
        "persistentvolumes",
        json!({"spec": {"hostPath": {"path": "/data"}, "capacity": {"storage": "1Gi"}}}),
    );
    assert_eq!(
        volume,
        json!({"spec": {"hostPath": {"path": "/data", "type": ""}, "capacity": {"storage": "1Gi"},
               "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"},
               "status": {"phase": "Pending"}})
    );
    let rbd = defaulted(
        "persistentvolumes",
        json!({"spec": {"rbd": {"monitors": ["m"], "image": "i"}, "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 1}}}),
    );
    assert_eq!(rbd["spec"]["rbd"]["pool"], "rbd");
    assert_eq!(rbd["spec"]["iscsi"]["iscsiInterface"], "default");
    // TestSetDefaultPersistentVolumeClaim.
    assert_eq!(
        defaulted("persistentvolumeclaims", json!({})),
        json!({"spec": {"volumeMode": "Filesystem"}, "status": {"phase": "Pending"}})
    );
    // TestSetDefaultNamespace (the name label is the strategy's: `api/strategy.rs`).
    assert_eq!(
        defaulted("namespaces", json!({"metadata": {"name": "n"}}))["status"],
        json!({"phase": "Active"})
    );
    // TestSetDefaultNodeStatusAllocatable.
    let capacity = json!({"cpu": "4", "memory": "8Gi"});
    assert_eq!(
        defaulted("nodes", json!({"status": {"capacity": capacity}}))["status"]["allocatable"],
        capacity
    );
    let allocatable = json!({"cpu": "3"});
    assert_eq!(
        defaulted(
            "nodes",
            json!({"status": {"capacity": capacity, "allocatable": allocatable}})
        )["status"]["allocatable"],
        allocatable
    );
    // TestSetDefaultSecret.
    assert_eq!(defaulted("secrets", json!({"type": ""}))["type"], "Opaque");
}

#[test]
fn resource_lists_round_up_to_milli_precision() {
    // TestSetDefaultResourceList... : SetDefaults_ResourceList's RoundUp(-3).
    let pod = defaulted(
        "pods",
        json!({"spec": {"overhead": {"cpu": "0.0001"}, "containers": [{"name": "c", "image": "i:1",
            "resources": {"limits": {"cpu": "1500u", "memory": "1Gi"}, "requests": {"cpu": "100m"}}}]}}),
    );
    assert_eq!(pod["spec"]["overhead"], json!({"cpu": "1m"}));
    assert_eq!(
        pod["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "2m", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "1Gi"}})
    );
    let quota = defaulted(
        "resourcequotas",
        json!({"spec": {"hard": {"cpu": "0.5001", "pods": "10"}}}),
    );
    assert_eq!(quota["spec"]["hard"], json!({"cpu": "501m", "pods": "10"}));
    let limits = defaulted(
        "limitranges",
        json!({"spec": {"limits": [{"type": "Pod", "max": {"cpu": "1u"}}]}}),
    );
    assert_eq!(limits["spec"]["limits"][0]["max"], json!({"cpu": "1m"}));
    let claim = defaulted(
        "persistentvolumeclaims",
        json!({"spec": {"resources": {"requests": {"storage": "0.0000001"}}}}),
    );
    assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "1m");
    let node = defaulted("nodes", json!({"status": {"capacity": {"cpu": "1n"}}}));
    assert_eq!(node["status"]["capacity"], json!({"cpu": "1m"}));
    assert_eq!(node["status"]["allocatable"], json!({"cpu": "1m"}));
}
