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
    let pod = super::super::pod_volumes::PodContext {
        pod_name: "",
        resource_is_pod: true,
    };
    super::super::pod_volumes::volumes(&[volume], pod, "spec.volumes", &mut errors);
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

/// `errors_of` for a volume of a given name in a template (`ResourceIsPod` false).
fn template_errors_of(volume: Value) -> Vec<String> {
    let mut errors = Vec::new();
    let pod = super::super::pod_volumes::PodContext {
        pod_name: "",
        resource_is_pod: false,
    };
    super::super::pod_volumes::volumes(&[volume], pod, "spec.volumes", &mut errors);
    errors.iter().map(ToString::to_string).collect()
}

fn subdomain_message(value: &str) -> String {
    crate::names::dns1123_subdomain(value)
        .into_iter()
        .next()
        .unwrap_or_default()
}

/// The valid cases of kube's `TestValidateVolumes` for the sources ported
/// last (gitRepo, iscsi, quobyte, vsphere, photon, portworx, scaleIO,
/// storageos, csi, image, clusterTrustBundle).
#[test]
fn valid_remaining_sources_pass() {
    let valid = [
        json!({"gitRepo": {"repository": "my-repo", "revision": "hashstring", "directory": "my-dir"}}),
        json!({"gitRepo": {"repository": "my-repo", "revision": "hashstring", "directory": "."}}),
        json!({"gitRepo": {"repository": "my-repo", "directory": "..foo"}}),
        json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "iqn.2015-02.example.com:test", "lun": 1, "fsType": "ext4"}}),
        json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "eui.0123456789ABCDEF", "lun": 1}}),
        json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "naa.62004567BA64678D0123456789ABCDEF", "lun": 1}}),
        json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "iqn.2015-02.example.com:test", "lun": 1,
                         "initiatorName": "iqn.2015-02.example.com:init"}}),
        json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "iqn.2015-02.example.com:test",
                         "chapAuthDiscovery": true, "secretRef": {"name": "chap-secret"}}}),
        json!({"quobyte": {"registry": "whatever:7861", "volume": "/test", "tenant": "ThisIsSomeTenantUUID"}}),
        json!({"quobyte": {"registry": "whatever:7861,whatever2:7861", "volume": "/test"}}),
        json!({"vsphereVolume": {"volumePath": "[datastore] path/to/disk.vmdk"}}),
        json!({"photonPersistentDisk": {"pdID": "photon-id"}}),
        json!({"portworxVolume": {"volumeID": "id"}}),
        json!({"scaleIO": {"gateway": "http://abcd/efg", "system": "test-system", "volumeName": "test-vol-1"}}),
        json!({"storageos": {"volumeName": "vol", "volumeNamespace": "default", "fsType": "ext4",
                             "readOnly": true, "secretRef": {"name": "secretName"}}}),
        json!({"storageos": {"volumeName": "vol"}}),
        json!({"csi": {"driver": "test-driver"}}),
        json!({"csi": {"driver": "com.google.gcepd", "nodePublishSecretRef": {"name": "secret"}}}),
        json!({"image": {"reference": "registry.k8s.io/conformance:v1.34.0", "pullPolicy": "IfNotPresent"}}),
        json!({"emptyDir": {"sizeLimit": "1Gi"}}),
        json!({"projected": {"sources": [
            {"clusterTrustBundle": {"name": "foo", "path": "a"}},
            {"clusterTrustBundle": {"name": "example.com:signer:bar", "path": "b"}},
            {"clusterTrustBundle": {"signerName": "example.com/signer", "path": "c",
                "labelSelector": {"matchLabels": {"version": "live"}}}}
        ]}}),
    ];
    for volume in valid {
        assert_eq!(errors_of(volume.clone()), Vec::<String>::new(), "{volume}");
    }
    // A template may leave the image reference to a controller.
    assert_eq!(
        template_errors_of(json!({"name": "v", "image": {"pullPolicy": "Always"}})),
        Vec::<String>::new()
    );
}

#[test]
fn invalid_remaining_sources_fail_as_kube() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"gitRepo": {"repository": "", "directory": "../dots/bar"}}),
            vec![
                "spec.volumes[0].gitRepo.repository: Required value".into(),
                r#"spec.volumes[0].gitRepo.directory: Invalid value: "../dots/bar": must not contain '..'"#.into(),
            ],
        ),
        (
            json!({"gitRepo": {"repository": "r", "directory": "/abc"}}),
            vec![r#"spec.volumes[0].gitRepo.directory: Invalid value: "/abc": must be a relative path"#.into()],
        ),
        (
            json!({"iscsi": {"targetPortal": "", "iqn": "", "lun": 256}}),
            vec![
                "spec.volumes[0].iscsi.targetPortal: Required value".into(),
                "spec.volumes[0].iscsi.iqn: Required value".into(),
                "spec.volumes[0].iscsi.lun: Invalid value: 256: must be between 0 and 255, inclusive".into(),
            ],
        ),
        (
            json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "iqn2015-02.example.com:test"}}),
            vec![r#"spec.volumes[0].iscsi.iqn: Invalid value: "iqn2015-02.example.com:test": must be valid format"#.into()],
        ),
        (
            json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "eui.0123456789ABCDEFGH"}}),
            vec![r#"spec.volumes[0].iscsi.iqn: Invalid value: "eui.0123456789ABCDEFGH": must be valid format"#.into()],
        ),
        (
            json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "naa.62004567BA_4-78D.123456789ABCDEF"}}),
            vec![r#"spec.volumes[0].iscsi.iqn: Invalid value: "naa.62004567BA_4-78D.123456789ABCDEF": must be valid format"#.into()],
        ),
        (
            json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "xyz.2015-02.example.com:test"}}),
            vec![r#"spec.volumes[0].iscsi.iqn: Invalid value: "xyz.2015-02.example.com:test": must be valid format starting with iqn, eui, or naa"#.into()],
        ),
        (
            json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "iqn.2015-02.example.com:test",
                             "initiatorName": "2015-02.example.com:init"}}),
            vec![r#"spec.volumes[0].iscsi.initiatorname: Invalid value: "2015-02.example.com:init": must be valid format starting with iqn, eui, or naa"#.into()],
        ),
        (
            json!({"iscsi": {"targetPortal": "127.0.0.1", "iqn": "iqn.2015-02.example.com:test", "chapAuthSession": true}}),
            vec!["spec.volumes[0].iscsi.secretRef: Required value".into()],
        ),
        (
            json!({"quobyte": {"registry": "", "volume": ""}}),
            vec![
                "spec.volumes[0].quobyte.registry: Required value: must be a host:port pair or multiple pairs separated by commas".into(),
                "spec.volumes[0].quobyte.volume: Required value".into(),
            ],
        ),
        (
            json!({"quobyte": {"registry": "whatever,whatever2:7861", "volume": "/test"}}),
            vec![r#"spec.volumes[0].quobyte.registry: Invalid value: "whatever,whatever2:7861": must be a host:port pair or multiple pairs separated by commas"#.into()],
        ),
        (
            json!({"quobyte": {"registry": "whatever:7861", "volume": "/test", "tenant": "x".repeat(65)}}),
            vec!["spec.volumes[0].quobyte.tenant: Required value: must be a UUID and may not exceed a length of 64 characters".into()],
        ),
        (
            json!({"vsphereVolume": {}}),
            vec!["spec.volumes[0].vsphereVolume.volumePath: Required value".into()],
        ),
        (
            json!({"photonPersistentDisk": {}}),
            vec!["spec.volumes[0].photonPersistentDisk.pdID: Required value".into()],
        ),
        (
            json!({"portworxVolume": {}}),
            vec!["spec.volumes[0].portworxVolume.volumeID: Required value".into()],
        ),
        (
            json!({"scaleIO": {}}),
            vec![
                "spec.volumes[0].scaleIO.gateway: Required value".into(),
                "spec.volumes[0].scaleIO.system: Required value".into(),
                "spec.volumes[0].scaleIO.volumeName: Required value".into(),
            ],
        ),
        (
            json!({"storageos": {"volumeName": "", "secretRef": {"name": ""}}}),
            vec![
                "spec.volumes[0].storageos.volumeName: Required value".into(),
                "spec.volumes[0].storageos.secretRef.name: Required value".into(),
            ],
        ),
        (
            json!({"storageos": {"volumeName": "Vol", "volumeNamespace": "Ns"}}),
            vec![
                format!(r#"spec.volumes[0].storageos.volumeName: Invalid value: "Vol": {}"#, crate::names::dns1123_label("Vol")[0]),
                format!(r#"spec.volumes[0].storageos.volumeNamespace: Invalid value: "Ns": {}"#, crate::names::dns1123_label("Ns")[0]),
            ],
        ),
        (
            json!({"csi": {"driver": ""}}),
            vec![
                "spec.volumes[0].csi.driver: Required value".into(),
                format!(r#"spec.volumes[0].csi.driver: Invalid value: "": {}"#, subdomain_message("")),
            ],
        ),
        (
            json!({"csi": {"driver": "a/b", "nodePublishSecretRef": {"name": ""}}}),
            vec![
                format!(r#"spec.volumes[0].csi.driver: Invalid value: "a/b": {}"#, subdomain_message("a/b")),
                "spec.volumes[0].csi.nodePublishSecretRef.name: Required value".into(),
            ],
        ),
        (
            // kube names the volume source, not the reference, here.
            json!({"csi": {"driver": "d", "nodePublishSecretRef": {"name": "Bad_Name"}}}),
            vec![format!(r#"spec.volumes[0].csi.name: Invalid value: "Bad_Name": {}"#, subdomain_message("Bad_Name"))],
        ),
        (
            json!({"csi": {"driver": "x".repeat(64)}}),
            vec!["spec.volumes[0].csi.driver: Too long: may not be more than 63 bytes".into()],
        ),
        (
            json!({"image": {"reference": ""}}),
            vec![
                "spec.volumes[0].image.reference: Required value".into(),
                "spec.volumes[0].image.pullPolicy: Required value".into(),
            ],
        ),
        (
            json!({"image": {"reference": "img", "pullPolicy": "Sometimes"}}),
            vec![r#"spec.volumes[0].image.pullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never""#.into()],
        ),
        (
            json!({"emptyDir": {"sizeLimit": "-1"}}),
            vec!["spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity".into()],
        ),
        (
            // kube's paths: `persistentDisk` for a GCE disk's rules, `cephFS`
            // and `downwarAPI` for a second source.
            json!({"gcePersistentDisk": {"pdName": ""}, "cephfs": {"monitors": ["m"]}, "downwardAPI": {}}),
            vec![
                "spec.volumes[0].persistentDisk.pdName: Required value".into(),
                "spec.volumes[0].cephFS: Forbidden: may not specify more than 1 volume type".into(),
                "spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type".into(),
            ],
        ),
        (
            json!({"nfs": {"server": "s", "path": ""}}),
            vec![
                "spec.volumes[0].nfs.path: Required value".into(),
                r#"spec.volumes[0].nfs.path: Invalid value: "": must be an absolute path"#.into(),
            ],
        ),
        (
            json!({"projected": {"sources": [
                {"clusterTrustBundle": {"name": "Foo", "path": "a"}},
                {"clusterTrustBundle": {"name": "a/b:c", "path": "b"}},
                {"clusterTrustBundle": {"signerName": "foo", "path": "c",
                    "labelSelector": {"matchLabels": {"-x": "y"}}}}
            ]}}),
            vec![
                format!(r#"spec.volumes[0].projected.sources[0].clusterTrustBundle.name: Invalid value: "Foo": not a valid clustertrustbundlename: {}"#, subdomain_message("Foo")),
                r#"spec.volumes[0].projected.sources[1].clusterTrustBundle.name: Invalid value: "a/b:c": not a valid clustertrustbundlename: ClusterTrustBundle for signerName a/b must be named with prefix a:b:"#.into(),
                r#"spec.volumes[0].projected.sources[2].clusterTrustBundle.signerName: Invalid value: "foo": must be a fully qualified domain and path of the form 'example.com/signer-name'"#.into(),
                r#"spec.volumes[0].projected.sources[2].clusterTrustBundle.labelSelector.matchLabels: Invalid value: "-x": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#.into(),
            ],
        ),
        (
            json!({"projected": {"sources": [{"clusterTrustBundle": {"signerName": "", "path": "c"}}]}}),
            vec![
                "spec.volumes[0].projected.sources[0].clusterTrustBundle.signerName: Required value: must be a valid signer name".into(),
                "spec.volumes[0].projected.sources[0].clusterTrustBundle.signerName: Required value".into(),
            ],
        ),
    ];
    for (volume, expected) in cases {
        assert_eq!(errors_of(volume.clone()), expected, "{volume}");
    }
}

#[test]
fn an_iscsi_initiator_limits_the_volume_name_and_portal() {
    let name = "a".repeat(60);
    let mut errors = Vec::new();
    let pod = super::super::pod_volumes::PodContext {
        pod_name: "",
        resource_is_pod: true,
    };
    let volume = json!({"name": name, "iscsi": {"targetPortal": "127.0.0.1", "iqn": "iqn.2015-02.example.com:test",
        "initiatorName": "iqn.2015-02.example.com:init"}});
    super::super::pod_volumes::volumes(&[volume], pod, "spec.volumes", &mut errors);
    let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        vec![format!(
            r#"spec.volumes[0].name: Invalid value: "{name}": Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."#
        )]
    );
}
