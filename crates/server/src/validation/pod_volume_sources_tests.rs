//! Cases from kube's `TestValidateVolumes` and
//! `TestValidateProjectedVolumeSource`-style tables
//! (`core/validation/validation_test.go`) for the sources' own fields.

use serde_json::{json, Value};

fn errors_of(volume: Value) -> Vec<String> {
    let mut errors = Vec::new();
    let mut volume = volume;
    if let Some(object) = volume.as_object_mut() {
        object.insert("name".into(), json!("v"));
    }
    super::super::pod_volumes::volumes(&[volume], "spec.volumes", &mut errors);
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn valid_sources_pass() {
    let valid = [
        json!({"downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}},
            {"path": "anno", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations['a']"}},
            {"path": "cpu", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu"}},
            {"path": "hp", "resourceFieldRef": {"containerName": "c", "resource": "requests.hugepages-2Mi"}}
        ]}}),
        json!({"projected": {"defaultMode": 420, "sources": [
            {"secret": {"name": "s", "items": [{"key": "k", "path": "a"}]}},
            {"configMap": {"name": "c", "items": [{"key": "k", "path": "b"}]}},
            {"downwardAPI": {"items": [{"path": "c", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}]}},
            {"serviceAccountToken": {"audience": "x", "expirationSeconds": 3600, "path": "token"}},
            {"clusterTrustBundle": {"signerName": "example.com/s", "path": "bundle.pem"}}
        ]}}),
        json!({"gcePersistentDisk": {"pdName": "d", "partition": 1}}),
        json!({"fc": {"targetWWNs": ["500a0982991b8dc5"], "lun": 2}}),
        json!({"flexVolume": {"driver": "k/d", "options": {"myoption": "x"}}}),
        json!({"azureDisk": {"diskName": "d", "diskURI": "https://a.blob.core.windows.net/c/d.vhd", "kind": "Shared", "cachingMode": "ReadOnly"}}),
        json!({"rbd": {"monitors": ["m"], "image": "i"}}),
    ];
    for volume in valid {
        assert_eq!(errors_of(volume.clone()), Vec::<String>::new(), "{volume}");
    }
}

#[test]
fn invalid_sources_fail_as_kube() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"downwardAPI": {"items": [
                {"path": "", "fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
                {"path": "..x", "resourceFieldRef": {"resource": "limits.cpu"}},
                {"path": "a", "mode": 1000}
            ]}}),
            vec![
                "spec.volumes[0].downwardAPI.path: Required value",
                r#"spec.volumes[0].downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid""#,
                r#"spec.volumes[0].downwardAPI.path: Invalid value: "..x": must not start with '..'"#,
                "spec.volumes[0].downwardAPI.resourceFieldRef.containerName: Required value",
                "spec.volumes[0].downwardAPI: Required value: one of fieldRef and resourceFieldRef is required",
                "spec.volumes[0].downwardAPI.mode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive",
            ],
        ),
        (
            json!({"projected": {"sources": [
                {"secret": {"items": [{"key": "k", "path": "a"}]}, "configMap": {"name": "c", "items": [{"key": "k", "path": "a"}]}},
                {"serviceAccountToken": {"expirationSeconds": 60, "path": "/abs"}},
                {"clusterTrustBundle": {"path": ""}}
            ]}}),
            vec![
                "spec.volumes[0].projected.sources[0].secret.name: Required value",
                r#"spec.volumes[0].projected: Invalid value: "c": conflicting duplicate paths"#,
                "spec.volumes[0].projected.sources[0]: Forbidden: may not specify more than 1 volume type per source",
                "spec.volumes[0].projected.sources[1].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
                r#"spec.volumes[0].projected.path: Invalid value: "/abs": must be a relative path"#,
                "spec.volumes[0].projected.sources[2].clusterTrustBundle: Required value: either name or signerName must be specified",
                "spec.volumes[0].projected.sources[2].clusterTrustBundle.path: Required value",
            ],
        ),
        (
            json!({"awsElasticBlockStore": {"partition": 300}}),
            vec![
                "spec.volumes[0].awsElasticBlockStore.volumeID: Required value",
                "spec.volumes[0].awsElasticBlockStore.partition: Invalid value: 300: must be between 1 and 255, inclusive",
            ],
        ),
        (
            json!({"fc": {"targetWWNs": ["a"], "wwids": ["b"]}}),
            vec![
                r#"spec.volumes[0].fc.targetWWNs: Invalid value: []string{"a"}: targetWWNs and wwids can not be specified simultaneously"#,
                "spec.volumes[0].fc.lun: Required value: lun is required if targetWWNs is specified",
            ],
        ),
        (
            json!({"flexVolume": {"driver": "d", "options": {"foo.kubernetes.io/bar": "x"}}}),
            vec![r#"spec.volumes[0].flexVolume.options[foo.kubernetes.io/bar]: Invalid value: "foo.kubernetes.io/bar": kubernetes.io and k8s.io namespaces are reserved"#],
        ),
        (
            json!({"azureDisk": {"diskName": "d", "diskURI": "https://x", "kind": "Managed"}}),
            vec![r#"spec.volumes[0].azureDisk.diskURI: Unsupported value: "https://x": supported values: "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}""#],
        ),
        (
            json!({"flocker": {"datasetName": "a/b", "datasetUUID": "u"}}),
            vec![
                r#"spec.volumes[0].flocker: Invalid value: "resource": datasetName and datasetUUID can not be specified simultaneously"#,
                r#"spec.volumes[0].flocker.datasetName: Invalid value: "a/b": must not contain '/'"#,
            ],
        ),
        (
            json!({"secret": {"secretName": "s", "items": [{"key": "k", "path": "../x"}]}}),
            vec![r#"spec.volumes[0].secret.items[0].path: Invalid value: "../x": must not contain '..'"#],
        ),
    ];
    for (volume, expected) in cases {
        assert_eq!(errors_of(volume.clone()), expected, "{volume}");
    }
}
