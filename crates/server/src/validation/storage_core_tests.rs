//! Cases from kube's `TestValidatePersistentVolumes`,
//! `TestValidatePersistentVolumeClaim` and `TestValidatePersistentVolumeClaimUpdate`
//! (`core/validation/validation_test.go`).

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn pv(spec: Value) -> Value {
    json!({"metadata": {"name": "pv"}, "spec": spec})
}

#[test]
fn persistent_volumes_as_kube_validates_them() {
    let valid = [
        json!({"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/foo", "type": ""}, "persistentVolumeReclaimPolicy": "Retain"}),
        json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOncePod"], "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}, "volumeAttributesClassName": "gold"}),
        json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"], "nfs": {"server": "nfs.example.com", "path": "/exports"}, "storageClassName": "slow", "volumeMode": "Filesystem"}),
        json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt/disks/a"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]}}}),
    ];
    for spec in valid {
        assert_eq!(
            texts(&persistent_volume(&pv(spec.clone()))),
            Vec::<String>::new(),
            "{spec}"
        );
    }
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"capacity": {"storage": "10G"}, "hostPath": {"path": "/foo", "type": ""}}),
            vec!["spec.accessModes: Required value"],
        ),
        (
            json!({"accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/foo", "type": ""}}),
            vec![
                "spec.capacity: Required value",
                "spec.capacity: Unsupported value: core.ResourceList(nil): supported values: \"storage\"",
            ],
        ),
        (
            json!({"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"]}),
            vec!["spec: Required value: must specify a volume type"],
        ),
        (
            json!({"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/foo", "type": ""}, "nfs": {"server": "a", "path": "/b"}}),
            vec!["spec.nfs: Forbidden: may not specify more than 1 volume type"],
        ),
        (
            json!({"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce", "ReadWriteOncePod"], "hostPath": {"path": "/foo", "type": ""}}),
            vec!["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
        ),
        (
            json!({"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteSome"], "hostPath": {"path": "/foo", "type": ""}}),
            vec!["spec.accessModes: Unsupported value: \"ReadWriteSome\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\""],
        ),
        (
            json!({"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/foo", "type": ""}, "persistentVolumeReclaimPolicy": "Keep"}),
            vec!["spec.persistentVolumeReclaimPolicy: Unsupported value: \"Keep\": supported values: \"Delete\", \"Recycle\", \"Retain\""],
        ),
        (
            json!({"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/", "type": ""}, "persistentVolumeReclaimPolicy": "Recycle"}),
            vec!["spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'"],
        ),
        (
            json!({"capacity": {"storage": "0"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/foo/../bar", "type": ""}}),
            vec![
                "spec.capacity[storage]: Invalid value: \"0\": must be greater than zero",
                "spec.hostPath.path: Invalid value: \"/foo/../bar\": must not contain '..'",
            ],
        ),
        (
            json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt"}}),
            vec!["spec.nodeAffinity: Required value: Local volume requires node affinity"],
        ),
        (
            json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "nfs": {"server": "a", "path": "b"}, "volumeAttributesClassName": ""}),
            vec![
                "spec.nfs.path: Invalid value: \"b\": must be an absolute path",
                "spec.volumeAttributesClassName: Required value: an empty string is disallowed",
                "spec.csi: Required value: has to be specified when using volumeAttributesClassName",
            ],
        ),
        (
            json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "", "volumeHandle": ""}}),
            vec![
                "spec.csi.driver: Required value",
                "spec.csi.driver: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.csi.volumeHandle: Required value",
            ],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            texts(&persistent_volume(&pv(spec.clone()))),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn persistent_volume_sources_are_immutable() {
    let old = pv(
        json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "d", "volumeHandle": "a"}}),
    );
    let expand = pv(
        json!({"capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "d", "volumeHandle": "a", "controllerExpandSecretRef": {"name": "s", "namespace": "n"}}}),
    );
    assert_eq!(
        texts(&persistent_volume_update(&expand, &old)),
        Vec::<String>::new()
    );
    let moved = pv(
        json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "d", "volumeHandle": "b"}}),
    );
    let errors = texts(&persistent_volume_update(&moved, &old));
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n"),
        "{errors:?}"
    );
    let block = pv(
        json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "d", "volumeHandle": "a"}, "volumeMode": "Block"}),
    );
    assert_eq!(
        texts(&persistent_volume_update(&block, &old)),
        ["volumeMode: Invalid value: \"Block\": field is immutable"]
    );
}

fn pvc(spec: Value) -> Value {
    json!({"metadata": {"name": "claim", "namespace": "ns"}, "spec": spec})
}

#[test]
fn claims_as_kube_validates_them() {
    let valid = [
        json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10G"}}}),
        json!({"accessModes": ["ReadOnlyMany", "ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "fast", "volumeMode": "Block", "selector": {"matchLabels": {"a": "b"}}}),
        json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"}, "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "src"}}),
        json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "dataSourceRef": {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "s", "namespace": "other"}}),
    ];
    for spec in valid {
        assert_eq!(
            texts(&persistent_volume_claim(&pvc(spec.clone()))),
            Vec::<String>::new(),
            "{spec}"
        );
    }
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"resources": {"requests": {"storage": "10G"}}}),
            vec!["spec.accessModes: Required value: at least 1 access mode is required"],
        ),
        (
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"cpu": "1"}}}),
            vec!["spec.resources[storage]: Required value"],
        ),
        (
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}}),
            vec!["spec.resources[storage]: Invalid value: \"0\": must be greater than zero"],
        ),
        (
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "Fast_Disks", "volumeMode": "Raw"}),
            vec![
                "spec.storageClassName: Invalid value: \"Fast_Disks\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"",
            ],
        ),
        (
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "dataSource": {"kind": "Pod", "name": "p"}}),
            vec!["spec.dataSource: Invalid value: \"Pod\": must be 'PersistentVolumeClaim' when referencing the default apiGroup"],
        ),
        (
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "dataSource": {"kind": "PersistentVolumeClaim", "name": "a"}, "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "b"}}),
            vec!["spec: Invalid value: spec.dataSource: must match dataSourceRef"],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            texts(&persistent_volume_claim(&pvc(spec.clone()))),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn claim_updates_only_grow_storage() {
    let old = json!({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}});
    let grown = json!({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}, "volumeName": "pv-1"}, "status": {"phase": "Bound"}});
    assert_eq!(
        texts(&persistent_volume_claim_update(&grown, &old)),
        Vec::<String>::new()
    );
    let shrunk = json!({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "512Mi"}}}, "status": {"phase": "Bound"}});
    assert_eq!(
        texts(&persistent_volume_claim_update(&shrunk, &old)),
        ["spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"]
    );
    let remoded = json!({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Bound"}});
    let errors = texts(&persistent_volume_claim_update(&remoded, &old));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n  core.PersistentVolumeClaimSpec{\n"), "{errors:?}");
    // A storage class may be set on a claim that had none.
    let classed = json!({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "gold"}});
    assert_eq!(
        texts(&persistent_volume_claim_update(&classed, &old)),
        Vec::<String>::new()
    );
}
