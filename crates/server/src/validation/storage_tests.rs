//! Cases from kube's `TestValidateStorageClass`, `TestValidateStorageClassUpdate`,
//! `TestValidateAllowedTopologies`, `TestCSIDriverValidation`,
//! `TestCSIDriverValidationUpdate`, `TestValidateCSINode`,
//! `TestValidateVolumeAttachment` (`storage/validation/validation_test.go`).

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn class(extra: Value) -> Value {
    let mut object = json!({
        "metadata": {"name": "foo"},
        "provisioner": "kubernetes.io/foo-provisioner",
        "parameters": {"kubernetes.io/foo-parameter": "free/form/string", "foo-parameter": "free-form-string"},
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
    });
    if let (Some(object), Some(extra)) = (object.as_object_mut(), extra.as_object()) {
        for (name, value) in extra {
            object.insert(name.clone(), value.clone());
        }
    }
    object
}

#[test]
fn storage_classes() {
    for extra in [
        json!({}),
        json!({"provisioner": "kubernetes.io/FOO-provisioner", "reclaimPolicy": "Retain"}),
        json!({"parameters": null, "volumeBindingMode": "WaitForFirstConsumer"}),
        json!({"allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}]}),
    ] {
        assert_eq!(
            texts(&storage_class(&class(extra.clone()))),
            Vec::<String>::new(),
            "{extra}"
        );
    }
    let cases: Vec<(Value, Vec<String>)> = vec![
        (json!({"provisioner": ""}), vec!["provisioner: Required value".into()]),
        (
            json!({"provisioner": "kubernetes.io/foo/bar"}),
            vec!["provisioner: Invalid value: \"kubernetes.io/foo/bar\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into()],
        ),
        (
            json!({"parameters": {"": "value"}}),
            vec!["parameters: Invalid value: \"\": field can not be empty.".into()],
        ),
        (
            json!({"parameters": {"big": "x".repeat(256 * 1024)}}),
            vec!["parameters: Too long: may not be more than 262144 bytes".into()],
        ),
        (
            json!({"reclaimPolicy": "Recycle"}),
            vec!["reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"".into()],
        ),
        (json!({"volumeBindingMode": null}), vec!["volumeBindingMode: Required value".into()]),
        (
            json!({"volumeBindingMode": "Later"}),
            vec!["volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"".into()],
        ),
        (
            json!({"allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": []}]}]}),
            vec!["allowedTopologies[0].matchLabelExpressions[0].values: Required value".into()],
        ),
        (
            json!({"allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]}]}]}),
            vec!["allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: \"a\"".into()],
        ),
        (
            json!({"allowedTopologies": [
                {"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]},
                {"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]}),
            vec!["allowedTopologies[1].matchLabelExpressions: Duplicate value: \"\"".into()],
        ),
        (
            json!({"allowedTopologies": [{"matchLabelExpressions": []}]}),
            vec!["allowedTopologies[0].matchLabelExpressions: Duplicate value: \"\"".into()],
        ),
    ];
    for (extra, expected) in cases {
        assert_eq!(
            texts(&storage_class(&class(extra.clone()))),
            expected,
            "{extra}"
        );
    }
}

#[test]
fn storage_class_updates_keep_their_immutable_fields() {
    let old = class(json!({}));
    let relabelled = class(json!({"metadata": {"name": "foo", "labels": {"a": "b"}}}));
    assert!(storage_class_update(&relabelled, &old).is_empty());
    let changed = class(json!({
        "provisioner": "kubernetes.io/other",
        "parameters": {"a": "b"},
        "reclaimPolicy": "Retain",
        "volumeBindingMode": "WaitForFirstConsumer",
    }));
    assert_eq!(
        texts(&storage_class_update(&changed, &old)),
        vec![
            "parameters: Forbidden: updates to parameters are forbidden.",
            "provisioner: Forbidden: updates to provisioner are forbidden.",
            "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
            "volumeBindingMode: Invalid value: \"WaitForFirstConsumer\": field is immutable",
        ]
    );
}

fn driver(spec: Value) -> Value {
    let mut full = json!({
        "attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
        "requiresRepublish": false, "seLinuxMount": false,
        "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
    });
    if let (Some(full), Some(spec)) = (full.as_object_mut(), spec.as_object()) {
        for (name, value) in spec {
            full.insert(name.clone(), value.clone());
        }
    }
    json!({"metadata": {"name": "io.kubernetes.storage.csi.driver"}, "spec": full})
}

#[test]
fn csi_drivers() {
    assert!(csi_driver(&driver(json!({}))).is_empty());
    assert!(csi_driver(&driver(
        json!({"tokenRequests": [{"audience": "a"}, {"audience": "b", "expirationSeconds": 600}]})
    ))
    .is_empty());
    let cases: Vec<(Value, Vec<String>)> = vec![
        (json!({"attachRequired": null}), vec!["spec.attachedRequired: Required value".into()]),
        (json!({"podInfoOnMount": null}), vec!["spec.podInfoOnMount: Required value".into()]),
        (json!({"storageCapacity": null}), vec!["spec.storageCapacity: Required value".into()]),
        (json!({"seLinuxMount": null}), vec!["spec.seLinuxMount: Required value".into()]),
        (
            json!({"fsGroupPolicy": "Mine"}),
            vec!["spec.fsGroupPolicy: Unsupported value: \"Mine\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\"".into()],
        ),
        (
            json!({"volumeLifecycleModes": ["Other"]}),
            vec!["spec.volumeLifecycleModes: Unsupported value: \"Other\": supported values: \"Persistent\", \"Ephemeral\"".into()],
        ),
        (
            json!({"tokenRequests": [{"audience": "a"}, {"audience": "a"}]}),
            vec!["spec.tokenRequests[1].audience: Duplicate value: \"a\"".into()],
        ),
        (
            json!({"tokenRequests": [{"audience": "a", "expirationSeconds": 10}]}),
            vec!["spec.tokenRequests[0].expirationSeconds: Invalid value: 10: may not specify a duration less than 10 minutes".into()],
        ),
        (
            json!({"nodeAllocatableUpdatePeriodSeconds": 5}),
            vec!["spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater than or equal to 10 seconds".into()],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            texts(&csi_driver(&driver(spec.clone()))),
            expected,
            "{spec}"
        );
    }
    let old = driver(json!({}));
    assert!(csi_driver_update(&driver(json!({"podInfoOnMount": true})), &old).is_empty());
    assert_eq!(
        texts(&csi_driver_update(&driver(json!({"attachRequired": false, "volumeLifecycleModes": ["Persistent", "Ephemeral"]})), &old)),
        vec![
            "spec.attachedRequired: Invalid value: false: field is immutable",
            "spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{\"Persistent\", \"Ephemeral\"}: field is immutable",
        ]
    );
}

fn node(drivers: Value) -> Value {
    json!({"metadata": {"name": "foo"}, "spec": {"drivers": drivers}})
}

#[test]
fn csi_nodes() {
    let good = json!({"name": "io.kubernetes.storage.csi.driver", "nodeID": "node", "topologyKeys": ["company.com/zone1"]});
    assert!(csi_node(&node(json!([good]))).is_empty());
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!([{"name": "", "nodeID": "n"}]),
            vec![
                "spec.drivers[0].name: Required value".into(),
                "spec.drivers[0].name: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into(),
            ],
        ),
        (json!([{"name": "d.io", "nodeID": ""}]), vec!["spec.drivers[0].nodeID: Required value".into()]),
        (
            json!([{"name": "d.io", "nodeID": "x".repeat(257)}]),
            vec![format!("spec.drivers[0].nodeID: Invalid value: \"{}\": must be 256 characters or less", "x".repeat(257))],
        ),
        (
            json!([{"name": "d.io", "nodeID": "a"}, {"name": "d.io", "nodeID": "b"}]),
            vec!["spec.drivers[1].name: Duplicate value: \"d.io\"".into()],
        ),
        (
            json!([{"name": "d.io", "nodeID": "a", "topologyKeys": ["z", "z"]}]),
            vec!["spec.drivers[0]: Duplicate value: \"z\"".into()],
        ),
        (
            json!([{"name": "d.io", "nodeID": "a", "allocatable": {"count": -1}}]),
            vec!["spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0".into()],
        ),
    ];
    for (drivers, expected) in cases {
        assert_eq!(
            texts(&csi_node(&node(drivers.clone()))),
            expected,
            "{drivers}"
        );
    }
    let old = node(json!([{"name": "d.io", "nodeID": "a", "allocatable": {"count": 1}}]));
    assert!(csi_node_update(&node(json!([{"name": "d.io", "nodeID": "a", "allocatable": {"count": 2}}, {"name": "e.io", "nodeID": "b"}])), &old).is_empty());
    assert_eq!(
        texts(&csi_node_update(&node(json!([{"name": "d.io", "nodeID": "b"}])), &old)),
        vec!["spec.drivers: Invalid value: storage.CSINodeDriver{Name:\"d.io\", NodeID:\"b\", TopologyKeys:[]string(nil), Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable"]
    );
}

fn attachment(spec: Value) -> Value {
    json!({"metadata": {"name": "foo"}, "spec": spec})
}

#[test]
fn volume_attachments() {
    let good = json!({"attacher": "myattacher", "nodeName": "mynode", "source": {"persistentVolumeName": "myvolume"}});
    assert!(volume_attachment(&attachment(good.clone())).is_empty());
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"attacher": "", "nodeName": "mynode", "source": {"persistentVolumeName": "v"}}),
            vec![
                "spec.attacher: Required value".into(),
                "spec.attacher: Required value".into(),
                "spec.attacher: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into(),
            ],
        ),
        (
            json!({"attacher": "a", "nodeName": "n", "source": {}}),
            vec!["spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName".into()],
        ),
        (
            json!({"attacher": "a", "nodeName": "n", "source": {"persistentVolumeName": "v", "inlineVolumeSpec": {}}}),
            vec!["spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName".into()],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            texts(&volume_attachment(&attachment(spec.clone()))),
            expected,
            "{spec}"
        );
    }
    let moved = json!({"attacher": "myattacher", "nodeName": "other", "source": {"persistentVolumeName": "myvolume"}});
    assert_eq!(
        texts(&volume_attachment_update(&attachment(moved), &attachment(good.clone()))),
        vec!["spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:\"myattacher\", Source:storage.VolumeAttachmentSource{PersistentVolumeName:\"myvolume\"}, NodeName:\"other\"}: field is immutable"]
    );
    let mut with_status = attachment(good.clone());
    with_status["status"] = json!({"attached": true, "attachError": {"errorCode": -1}});
    assert_eq!(
        texts(&volume_attachment_update(&with_status, &attachment(good))),
        vec!["status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive"]
    );
}

/// kube's `TestValidateVolumeAttachment` inline cases: the inline spec is
/// `ValidatePersistentVolumeSpec` for inline volumes (a CSI source, no claim
/// reference, capacity, node affinity, class, non-Retain policy or block mode).
#[test]
fn volume_attachments_validate_an_inline_volume_spec() {
    let inline = |spec: Value| {
        attachment(
            json!({"attacher": "myattacher", "nodeName": "mynode", "source": {"inlineVolumeSpec": spec}}),
        )
    };
    let valid = [
        json!({"accessModes": ["ReadWriteOnce"], "csi": {"driver": "com.test.foo", "volumeHandle": "foobar"}}),
        json!({"accessModes": ["ReadOnlyMany"], "csi": {"driver": "com.test.foo", "volumeHandle": "foobar"},
               "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem",
               "volumeAttributesClassName": ""}),
    ];
    for spec in valid {
        assert!(
            volume_attachment(&inline(spec.clone())).is_empty(),
            "{spec}"
        );
    }
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({}),
            vec![
                "spec.source.inlineVolumeSpec.csi: Required value: has to be specified in the context of inline volumes",
                "spec.source.inlineVolumeSpec.accessModes: Required value",
                "spec.source.inlineVolumeSpec: Required value: must specify a volume type",
            ],
        ),
        (
            json!({"accessModes": ["ReadWriteOnce"], "claimRef": {"name": "c"}, "capacity": {"storage": "1Gi"},
                   "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "fast", "volumeMode": "Block",
                   "nodeAffinity": {"required": {"nodeSelectorTerms": []}},
                   "csi": {"driver": "com.test.foo", "volumeHandle": ""}}),
            vec![
                "spec.source.inlineVolumeSpec.claimRef: Forbidden: may not be specified in the context of inline volumes",
                "spec.source.inlineVolumeSpec.capacity: Forbidden: may not be specified in the context of inline volumes",
                "spec.source.inlineVolumeSpec.persistentVolumeReclaimPolicy: Forbidden: may only be Retain in the context of inline volumes",
                "spec.source.inlineVolumeSpec.nodeAffinity: Forbidden: may not be specified in the context of inline volumes",
                "spec.source.inlineVolumeSpec.csi.volumeHandle: Required value",
                "spec.source.inlineVolumeSpec.storageClassName: Forbidden: may not be specified in the context of inline volumes",
                "spec.source.inlineVolumeSpec.volumeMode: Forbidden: may not specify volumeMode other than Filesystem in the context of inline volumes",
            ],
        ),
        (
            json!({"accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"}}),
            vec!["spec.source.inlineVolumeSpec.csi: Required value: has to be specified in the context of inline volumes"],
        ),
        (
            json!({"accessModes": ["ReadWriteOnce"], "csi": {"driver": "com.test.foo", "volumeHandle": "h"},
                   "gcePersistentDisk": {"pdName": ""}}),
            vec![
                "spec.source.inlineVolumeSpec.persistentDisk.pdName: Required value",
                "spec.source.inlineVolumeSpec.csi: Forbidden: may not specify more than 1 volume type",
            ],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            texts(&volume_attachment(&inline(spec.clone()))),
            expected,
            "{spec}"
        );
    }
}
