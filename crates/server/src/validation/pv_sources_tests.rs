//! Cases in the manner of kube's `TestValidatePersistentVolumeSpec`,
//! `TestValidateISCSIVolumeSource` (its `PersistentVolume` half),
//! `TestValidateAzureDisk`, `TestValidateGlusterfsPersistentVolumeSource`
//! and `TestValidateVolumeNodeAffinityUpdate` (`core/validation/validation_test.go`).

use serde_json::{json, Value};

use super::super::storage_core::{persistent_volume, persistent_volume_update};
use crate::status::FieldError;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn pv(name: &str, source: Value) -> Value {
    let mut spec = json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]});
    if let (Some(spec), Some(source)) = (spec.as_object_mut(), source.as_object()) {
        spec.extend(source.clone());
    }
    json!({"metadata": {"name": name}, "spec": spec})
}

const IQN: &str = "iqn.2015-02.example.com:test";

#[test]
fn valid_in_tree_sources_pass() {
    let valid = [
        json!({"glusterfs": {"endpoints": "ep", "path": "/vol", "endpointsNamespace": "default"}}),
        json!({"flocker": {"datasetName": "ds"}}),
        json!({"rbd": {"monitors": ["a:6789"], "image": "img"}}),
        json!({"quobyte": {"registry": "reg:7861,[::1]:7861", "volume": "v"}}),
        json!({"cephfs": {"monitors": ["a"]}}),
        json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": IQN, "lun": 1, "initiatorName": "eui.02004567A425678D"}}),
        json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "naa.50013e80000000000000000000000001", "lun": 0, "chapAuthSession": true, "secretRef": {"name": "s"}}}),
        json!({"cinder": {"volumeID": "v", "secretRef": {"name": "s", "namespace": "n"}}}),
        json!({"fc": {"targetWWNs": ["500a0982991b8dc5"], "lun": 2}}),
        json!({"fc": {"wwids": ["3600508b400105e210000900000490000"]}}),
        json!({"flexVolume": {"driver": "kubernetes.io/blue", "options": {"myns.io/x": "y"}}}),
        json!({"azureFile": {"secretName": "s", "shareName": "share", "secretNamespace": "n"}}),
        json!({"vsphereVolume": {"volumePath": "[ds] v.vmdk"}}),
        json!({"photonPersistentDisk": {"pdID": "p"}}),
        json!({"portworxVolume": {"volumeID": "v"}}),
        json!({"azureDisk": {"diskName": "d", "diskURI": "https://a.blob.core.windows.net/c/d.vhd", "cachingMode": "ReadOnly", "kind": "Shared"}}),
        json!({"azureDisk": {"diskName": "d", "diskURI": "/subscriptions/s/resourcegroups/g/providers/microsoft.compute/disks/d", "kind": "Managed"}}),
        json!({"scaleIO": {"gateway": "g", "system": "s", "volumeName": "v"}}),
        json!({"storageos": {"volumeName": "vol", "volumeNamespace": "ns", "secretRef": {"name": "s", "namespace": "n"}}}),
    ];
    for source in valid {
        assert_eq!(
            texts(&persistent_volume(&pv("pv", source.clone()))),
            Vec::<String>::new(),
            "{source}"
        );
    }
}

#[test]
fn in_tree_sources_are_validated_as_kube_does() {
    let dns_label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"glusterfs": {"endpointsNamespace": ""}}),
            vec![
                "spec.glusterfs.endpoints: Required value".into(),
                "spec.glusterfs.path: Required value".into(),
                "spec.glusterfs.endpointsNamespace: Invalid value: \"\": if the endpointnamespace is set, it must be a valid namespace name".into(),
            ],
        ),
        (
            json!({"glusterfs": {"endpoints": "e", "path": "p", "endpointsNamespace": "Bad_NS"}}),
            vec![format!("spec.glusterfs.endpointsNamespace: Invalid value: \"Bad_NS\": {dns_label}")],
        ),
        (
            json!({"flocker": {}}),
            vec!["spec.flocker: Required value: one of datasetName and datasetUUID is required".into()],
        ),
        (
            json!({"flocker": {"datasetName": "a/b", "datasetUUID": "u"}}),
            vec![
                "spec.flocker: Invalid value: \"resource\": datasetName and datasetUUID can not be specified simultaneously".into(),
                "spec.flocker.datasetName: Invalid value: \"a/b\": must not contain '/'".into(),
            ],
        ),
        (
            json!({"rbd": {}}),
            vec!["spec.rbd.monitors: Required value".into(), "spec.rbd.image: Required value".into()],
        ),
        (
            json!({"quobyte": {}}),
            vec![
                "spec.quobyte.registry: Required value: must be a host:port pair or multiple pairs separated by commas".into(),
                "spec.quobyte.volume: Required value".into(),
            ],
        ),
        (
            json!({"quobyte": {"registry": "reg,a:b:c:1", "volume": "v"}}),
            vec![
                "spec.quobyte.registry: Invalid value: \"reg,a:b:c:1\": must be a host:port pair or multiple pairs separated by commas".into(),
                "spec.quobyte.registry: Invalid value: \"reg,a:b:c:1\": must be a host:port pair or multiple pairs separated by commas".into(),
            ],
        ),
        (
            json!({"quobyte": {"registry": "reg:1", "tenant": "t".repeat(65), "volume": "v"}}),
            vec!["spec.quobyte.tenant: Required value: must be a UUID and may not exceed a length of 64 characters".into()],
        ),
        (json!({"cephfs": {}}), vec!["spec.cephfs.monitors: Required value".into()]),
        (
            json!({"iscsi": {"lun": 256, "chapAuthDiscovery": true}}),
            vec![
                "spec.iscsi.targetPortal: Required value".into(),
                "spec.iscsi.iqn: Required value".into(),
                "spec.iscsi.lun: Invalid value: 256: must be between 0 and 255, inclusive".into(),
                "spec.iscsi.secretRef: Required value".into(),
            ],
        ),
        (
            json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "iqn.2015-02.example.com", "lun": 1, "secretRef": {}, "initiatorName": "foo"}}),
            vec![
                "spec.iscsi.iqn: Invalid value: \"iqn.2015-02.example.com\": must be valid format".into(),
                "spec.iscsi.secretRef.name: Required value".into(),
                "spec.iscsi.initiatorname: Invalid value: \"foo\": must be valid format".into(),
            ],
        ),
        (
            json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "eui.0123", "lun": 1, "initiatorName": "naa.0123"}}),
            vec![
                "spec.iscsi.iqn: Invalid value: \"eui.0123\": must be valid format".into(),
                "spec.iscsi.initiatorname: Invalid value: \"naa.0123\": must be valid format".into(),
            ],
        ),
        (
            json!({"cinder": {"secretRef": {}}}),
            vec![
                "spec.cinder.volumeID: Required value".into(),
                "spec.cinder.secretRef.name: Required value".into(),
                "spec.cinder.secretRef.namespace: Required value".into(),
            ],
        ),
        (
            json!({"fc": {}}),
            vec!["spec.fc.targetWWNs: Required value: must specify either targetWWNs or wwids, but not both".into()],
        ),
        (
            json!({"fc": {"targetWWNs": ["a"], "wwids": ["b"]}}),
            vec![
                "spec.fc.targetWWNs: Invalid value: []string{\"a\"}: targetWWNs and wwids can not be specified simultaneously".into(),
                "spec.fc.lun: Required value: lun is required if targetWWNs is specified".into(),
            ],
        ),
        (
            json!({"fc": {"targetWWNs": ["a"], "lun": 300}}),
            vec!["spec.fc.lun: Invalid value: 300: must be between 0 and 255, inclusive".into()],
        ),
        (
            json!({"flexVolume": {"options": {"Kubernetes.IO/x": "a", "k8s.io": "b", "a.b/c": "d"}}}),
            vec![
                "spec.flexVolume.driver: Required value".into(),
                "spec.flexVolume.options[Kubernetes.IO/x]: Invalid value: \"Kubernetes.IO/x\": kubernetes.io and k8s.io namespaces are reserved".into(),
                "spec.flexVolume.options[k8s.io]: Invalid value: \"k8s.io\": kubernetes.io and k8s.io namespaces are reserved".into(),
            ],
        ),
        (
            json!({"azureFile": {"secretNamespace": ""}}),
            vec![
                "spec.azureFile.secretName: Required value".into(),
                "spec.azureFile.shareName: Required value".into(),
                "spec.azureFile.secretNamespace: Required value".into(),
            ],
        ),
        (json!({"vsphereVolume": {}}), vec!["spec.vsphereVolume.volumePath: Required value".into()]),
        (json!({"photonPersistentDisk": {}}), vec!["spec.photonPersistentDisk.pdID: Required value".into()]),
        (json!({"portworxVolume": {}}), vec!["spec.portworxVolume.volumeID: Required value".into()]),
        (
            json!({"azureDisk": {"cachingMode": "Sometimes", "kind": "Managed"}}),
            vec![
                "spec.azureDisk.diskName: Required value".into(),
                "spec.azureDisk.diskURI: Required value".into(),
                "spec.azureDisk.cachingMode: Unsupported value: \"Sometimes\": supported values: \"None\", \"ReadOnly\", \"ReadWrite\"".into(),
                "spec.azureDisk.diskURI: Unsupported value: \"\": supported values: \"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}\"".into(),
            ],
        ),
        (
            json!({"azureDisk": {"diskName": "d", "diskURI": "/subscriptions/x", "kind": "Blob"}}),
            vec![
                "spec.azureDisk.kind: Unsupported value: \"Blob\": supported values: \"Dedicated\", \"Managed\", \"Shared\"".into(),
                "spec.azureDisk.diskURI: Unsupported value: \"/subscriptions/x\": supported values: \"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd\"".into(),
            ],
        ),
        (
            json!({"scaleIO": {}}),
            vec![
                "spec.scaleIO.gateway: Required value".into(),
                "spec.scaleIO.system: Required value".into(),
                "spec.scaleIO.volumeName: Required value".into(),
            ],
        ),
        (
            json!({"storageos": {"volumeName": "Vol", "volumeNamespace": "NS", "secretRef": {"name": "s"}}}),
            vec![
                format!("spec.storageos.volumeName: Invalid value: \"Vol\": {dns_label}"),
                format!("spec.storageos.volumeNamespace: Invalid value: \"NS\": {dns_label}"),
                "spec.storageos.secretRef.namespace: Required value".into(),
            ],
        ),
        (
            json!({"rbd": {"monitors": ["m"], "image": "i"}, "cephfs": {"monitors": ["m"]}}),
            vec!["spec.cephFS: Forbidden: may not specify more than 1 volume type".into()],
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(
            texts(&persistent_volume(&pv("pv", source.clone()))),
            expected,
            "{source}"
        );
    }
}

#[test]
fn an_iscsi_initiator_limits_the_volume_name_and_portal() {
    let source = json!({"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": IQN, "lun": 1, "initiatorName": IQN}});
    let long_name = "a".repeat(50);
    assert_eq!(
        texts(&persistent_volume(&pv(&long_name, source.clone()))),
        ["spec.iscsi.targetportal: Invalid value: \"127.0.0.1:3260\": Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."]
    );
    assert_eq!(
        texts(&persistent_volume(&pv("a", source))),
        Vec::<String>::new()
    );
}

fn affinity(key: &str, values: &[&str]) -> Value {
    json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": values}]}]}})
}

fn local(node_affinity: Option<Value>) -> Value {
    let mut spec = json!({"local": {"path": "/mnt/a"}});
    if let Some(node_affinity) = node_affinity {
        spec["nodeAffinity"] = node_affinity;
    }
    pv("pv", spec)
}

#[test]
fn node_affinity_is_validated_as_kube_does() {
    assert_eq!(
        texts(&persistent_volume(&local(Some(affinity(
            "kubernetes.io/hostname",
            &["node-1"]
        ))))),
        Vec::<String>::new()
    );
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({}),
            vec!["spec.nodeAffinity.required: Required value: must specify required node constraints"],
        ),
        (
            json!({"required": {"nodeSelectorTerms": []}}),
            vec!["spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term"],
        ),
        (
            json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Nope"}]}]}}),
            vec!["spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Nope\": not a valid selector operator"],
        ),
        (
            json!({"required": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}}),
            vec!["spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"],
        ),
    ];
    for (node_affinity, expected) in cases {
        assert_eq!(
            texts(&persistent_volume(&local(Some(node_affinity.clone())))),
            expected,
            "{node_affinity}"
        );
    }
    // Any volume may carry node affinity; its rules come before the source's.
    assert_eq!(
        texts(&persistent_volume(&pv(
            "pv",
            json!({"nodeAffinity": {}, "rbd": {}})
        ))),
        [
            "spec.nodeAffinity.required: Required value: must specify required node constraints",
            "spec.rbd.monitors: Required value",
            "spec.rbd.image: Required value",
        ]
    );
}

#[test]
fn node_affinity_is_fixed_once_set_but_for_ga_labels() {
    let zone_beta = local(Some(affinity(
        "failure-domain.beta.kubernetes.io/zone",
        &["a"],
    )));
    let zone_ga = local(Some(affinity("topology.kubernetes.io/zone", &["a"])));
    let other_zone = local(Some(affinity("topology.kubernetes.io/zone", &["b"])));
    let unset = pv("pv", json!({"hostPath": {"path": "/a", "type": ""}}));
    let set_later = pv(
        "pv",
        json!({"hostPath": {"path": "/a", "type": ""}, "nodeAffinity": affinity("k", &["v"])}),
    );
    assert_eq!(
        texts(&persistent_volume_update(&zone_ga, &zone_beta)),
        Vec::<String>::new()
    );
    assert_eq!(
        texts(&persistent_volume_update(&set_later, &unset)),
        Vec::<String>::new()
    );
    assert_eq!(
        texts(&persistent_volume_update(&other_zone, &zone_beta)),
        ["nodeAffinity: Invalid value: core.VolumeNodeAffinity{Required:(*core.NodeSelector)(0xc000000000)}: field is immutable, except for updating from beta label to GA"]
    );
    assert_eq!(
        texts(&persistent_volume_update(&zone_beta, &zone_ga)),
        ["nodeAffinity: Invalid value: core.VolumeNodeAffinity{Required:(*core.NodeSelector)(0xc000000000)}: field is immutable, except for updating from beta label to GA"]
    );
    let removed = pv("pv", json!({"hostPath": {"path": "/a", "type": ""}}));
    assert_eq!(
        texts(&persistent_volume_update(&removed, &set_later)),
        ["nodeAffinity: Invalid value: null: field is immutable, except for updating from beta label to GA"]
    );
    // A stored selector with an invalid label value keeps being accepted.
    let invalid = pv(
        "pv",
        json!({"hostPath": {"path": "/a", "type": ""}, "nodeAffinity": affinity("k", &["-bad-"])}),
    );
    assert_eq!(
        texts(&persistent_volume_update(&invalid, &invalid)),
        Vec::<String>::new()
    );
    assert_eq!(texts(&persistent_volume(&invalid)).len(), 1);
}
