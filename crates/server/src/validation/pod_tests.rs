//! Cases from kube's `TestValidatePodSpec`, `TestValidateContainers`,
//! `TestValidateVolumes`, `TestValidateEnv`, `TestValidatePodUpdate`
//! (`core/validation/validation_test.go`), on defaulted objects.

use serde_json::{json, Value};

use super::*;
use crate::registry::Registry;

/// A pod as the write path hands it over: defaulted.
fn defaulted_pod(spec: Value) -> Value {
    let registry = Registry::new(crate::registry::builtin_resources());
    let resource = registry.lookup("", "v1", "pods").expect("served");
    let mut object =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec});
    crate::defaults::apply(resource, &mut object);
    object
}

fn errors_of(spec: Value) -> Vec<String> {
    pod(&defaulted_pod(spec))
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn container(extra: Value) -> Value {
    let mut base = json!({"name": "c", "image": "nginx"});
    if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
        base.extend(extra.clone());
    }
    base
}

#[test]
fn valid_pods_pass() {
    let valid = [
        json!({"containers": [container(json!({}))]}),
        json!({
            "containers": [container(json!({
                "ports": [{"name": "http", "containerPort": 80}, {"containerPort": 53, "protocol": "UDP", "hostPort": 53}],
                "env": [{"name": "A", "value": "b"}, {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        {"name": "my.env-name", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}},
                        {"name": "LABEL", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}}],
                "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "P_"}],
                "volumeMounts": [{"name": "data", "mountPath": "/data"}, {"name": "cfg", "mountPath": "/cfg", "subPath": "x"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "64Mi", "example.com/gpu": "1"}},
                "livenessProbe": {"httpGet": {"port": 8080}},
                "readinessProbe": {"tcpSocket": {"port": "http"}},
                "securityContext": {"runAsUser": 1000}
            }))],
            "initContainers": [{"name": "init", "image": "busybox"}, {"name": "sidecar", "image": "envoy", "restartPolicy": "Always", "startupProbe": {"exec": {"command": ["true"]}}}],
            "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cm", "items": [{"key": "k", "path": "k.txt"}]}}],
            "restartPolicy": "OnFailure",
            "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, {"operator": "Exists"}],
            "hostname": "web", "subdomain": "svc",
            "dnsPolicy": "None", "dnsConfig": {"nameservers": ["1.1.1.1"]},
            "activeDeadlineSeconds": 10
        }),
    ];
    for spec in valid {
        assert_eq!(errors_of(spec.clone()), Vec::<String>::new(), "{spec}");
    }
}

#[test]
fn invalid_pods_fail_as_kube() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({}), vec!["spec.containers: Required value"]),
        (json!({"containers": []}), vec!["spec.containers: Required value"]),
        (
            json!({"containers": [{"name": "c"}]}),
            vec!["spec.containers[0].image: Required value"],
        ),
        (
            json!({"containers": [{"image": "nginx"}]}),
            vec!["spec.containers[0].name: Required value"],
        ),
        (
            json!({"containers": [container(json!({"name": "Bad_Name"}))]}),
            vec!["spec.containers[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"],
        ),
        (
            json!({"containers": [container(json!({})), container(json!({}))]}),
            vec!["spec.containers[1].name: Duplicate value: \"c\""],
        ),
        (
            json!({"containers": [container(json!({}))], "initContainers": [container(json!({}))]}),
            vec!["spec.initContainers[0].name: Duplicate value: \"c\""],
        ),
        (
            json!({"containers": [container(json!({"ports": [
                {"containerPort": 0}, {"containerPort": 70000, "protocol": "XTP"},
                {"name": "a--b", "containerPort": 1}, {"name": "p", "containerPort": 2}, {"name": "p", "containerPort": 3}]}))]}),
            vec![
                "spec.containers[0].ports[0].containerPort: Required value",
                "spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.containers[0].ports[1].protocol: Unsupported value: \"XTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "spec.containers[0].ports[2].name: Invalid value: \"a--b\": must not contain consecutive hyphens",
                "spec.containers[0].ports[4].name: Duplicate value: \"p\"",
            ],
        ),
        (
            json!({"containers": [container(json!({"env": [
                {"name": "A=B"}, {"name": "X", "valueFrom": {}},
                {"name": "Y", "value": "v", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                {"name": "Z", "valueFrom": {"fieldRef": {"fieldPath": "spec.bogus"}}},
                {"name": "W", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": ""}}}]}))]}),
            vec![
                "spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='",
                "spec.containers[0].env[1].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
                "spec.containers[0].env[2].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty",
                "spec.containers[0].env[3].valueFrom.fieldRef.fieldPath: Invalid value: \"spec.bogus\": error converting fieldPath: field label not supported: spec.bogus",
                "spec.containers[0].env[4].valueFrom.configMapKeyRef.key: Required value",
            ],
        ),
        (
            json!({"containers": [container(json!({"env": [{"name": "P", "valueFrom": {"fieldRef": {"fieldPath": "status.phase"}}}]}))]}),
            vec!["spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: \"status.phase\": supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", \"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", \"status.podIPs\""],
        ),
        (
            json!({"containers": [container(json!({"volumeMounts": [{"name": "missing", "mountPath": "/a"}, {"name": "v", "mountPath": "/a"}]}))],
                   "volumes": [{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}, {"name": "none"},
                               {"name": "two", "emptyDir": {}, "hostPath": {"path": "/x"}}, {"name": "s", "secret": {}}]}),
            vec![
                "spec.volumes[1].name: Duplicate value: \"v\"",
                // volumes[2] names no source: `SetDefaults_Volume` makes it an
                // emptyDir before validation, so kube-apiserver accepts it.
                "spec.volumes[3].hostPath: Forbidden: may not specify more than 1 volume type",
                "spec.volumes[4].secret.secretName: Required value",
                "spec.containers[0].volumeMounts[0].name: Not found: \"missing\"",
                "spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/a\": must be unique",
            ],
        ),
        (
            json!({"containers": [container(json!({"resources": {
                "requests": {"cpu": "2", "memory": "-1", "example.com/gpu": "1"},
                "limits": {"cpu": "1", "bogus": "1"}}}))]}),
            vec![
                // `validateResourceName`'s error, then the container one;
                // a `core.ResourceName` prints unquoted (a `fmt.Stringer`).
                "spec.containers[0].resources.limits[bogus]: Invalid value: bogus: must be a standard resource type or fully qualified",
                "spec.containers[0].resources.limits[bogus]: Invalid value: bogus: must be a standard resource for containers",
                // SetDefaults_Pod copied the limit into the requests.
                "spec.containers[0].resources.requests[bogus]: Invalid value: bogus: must be a standard resource type or fully qualified",
                "spec.containers[0].resources.requests[bogus]: Invalid value: bogus: must be a standard resource for containers",
                "spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1",
                "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
                "spec.containers[0].resources.requests[memory]: Invalid value: \"-1\": must be greater than or equal to 0",
            ],
        ),
        (
            json!({"containers": [container(json!({"restartPolicy": "Always", "livenessProbe": {"exec": {"command": ["x"]}, "httpGet": {"port": 1}, "successThreshold": 2}}))]}),
            vec![
                "spec.containers[0].livenessProbe.httpGet: Forbidden: may not specify more than 1 handler type",
                "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
                "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers",
            ],
        ),
        (
            // validateHTTPGetAction: header names as IsHTTPHeaderName, at the list's path.
            json!({"containers": [container(json!({"readinessProbe": {"httpGet": {"port": 1, "httpHeaders": [{"name": "X-Good-1", "value": "v"}, {"name": "bad name", "value": "v"}]}}}))]}),
            vec![
                "spec.containers[0].readinessProbe.httpGet.httpHeaders: Invalid value: \"bad name\": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
            ],
        ),
        (
            json!({"containers": [container(json!({}))], "initContainers": [{"name": "i", "image": "x", "readinessProbe": {"tcpSocket": {"port": 1}}, "restartPolicy": "Never"}]}),
            vec![
                "spec.initContainers[0].restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
                "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
            ],
        ),
        (
            json!({"containers": [container(json!({}))], "restartPolicy": "Sometimes", "dnsPolicy": "Cloud"}),
            vec![
                "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
                "spec.dnsPolicy: Unsupported value: \"Cloud\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"",
            ],
        ),
        (
            json!({"containers": [container(json!({}))], "dnsPolicy": "None"}),
            vec!["spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"],
        ),
        (
            json!({"containers": [container(json!({}))], "nodeSelector": {"bad key": "v"},
                   "tolerations": [{"operator": "Equal", "value": "v"}, {"key": "k", "operator": "Less"}, {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5}]}),
            vec![
                "spec.nodeSelector: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
                "spec.tolerations[1].operator: Unsupported value: \"Less\": supported values: \"Equal\", \"Exists\"",
                "spec.tolerations[2].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
            ],
        ),
        (
            json!({"containers": [container(json!({}))], "activeDeadlineSeconds": 0, "hostname": "Bad.Host",
                   "securityContext": {"runAsUser": -1}}),
            vec![
                "spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive",
                "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive",
                "spec.hostname: Invalid value: \"Bad.Host\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ],
        ),
        (
            json!({"containers": [container(json!({}))], "ephemeralContainers": [{"name": "e", "image": "x"}]}),
            vec!["spec.ephemeralContainers: Forbidden: cannot be set on create"],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(errors_of(spec.clone()), expected, "{spec}");
    }
}

/// The rule a sourceless volume would break, reached only without
/// defaulting (through the API every such volume is an emptyDir).
#[test]
fn an_undefaulted_volume_without_source_needs_a_type() {
    let object = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [container(json!({}))], "volumes": [{"name": "none"}]}});
    let errors: Vec<String> = pod(&object).iter().map(ToString::to_string).collect();
    assert!(
        errors.contains(&"spec.volumes[0]: Required value: must specify a volume type".to_string()),
        "{errors:?}"
    );
}

#[test]
fn pod_templates_validate_their_template() {
    let template = json!({"template": {"metadata": {"labels": {"a": "b"}}, "spec": {}}});
    let errors: Vec<String> = pod_template(&template, None)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        errors.contains(&"template.spec.containers: Required value".to_string()),
        "{errors:?}"
    );
}

#[test]
fn pod_updates_change_only_what_kube_allows() {
    let old = defaulted_pod(
        json!({"containers": [container(json!({}))], "activeDeadlineSeconds": 30,
                                  "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}]}),
    );
    let update = |change: &dyn Fn(&mut Value)| {
        let mut new = old.clone();
        change(&mut new);
        super::super::pod_update::pod_update(&new, &old)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    assert!(update(&|_| {}).is_empty());
    assert!(update(&|new| new["spec"]["containers"][0]["image"] = json!("nginx:2")).is_empty());
    assert!(update(&|new| new["spec"]["activeDeadlineSeconds"] = json!(20)).is_empty());
    assert!(
        update(&|new| new["spec"]["tolerations"][0]["tolerationSeconds"] = json!(5)).is_empty()
    );
    assert!(update(&|new| {
        new["spec"]["tolerations"]
            .as_array_mut()
            .expect("list")
            .push(json!({"key": "x", "operator": "Exists"}))
    })
    .is_empty());
    assert_eq!(
        update(&|new| new["spec"]["activeDeadlineSeconds"] = json!(40)),
        vec!["spec.activeDeadlineSeconds: Invalid value: 40: must be less than or equal to previous value"]
    );
    assert_eq!(
        update(&|new| new["spec"]["tolerations"] = json!([])),
        vec!["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"]
    );
    assert_eq!(
        update(&|new| new["spec"]["containers"][0]["image"] = json!("")),
        vec![
            "spec.containers[0].image: Required value",
            "spec.containers[0].image: Required value",
        ]
    );
    let added = update(&|new| {
        new["spec"]["containers"]
            .as_array_mut()
            .expect("list")
            .push(container(json!({"name": "d"})))
    });
    assert_eq!(
        added.last().map(String::as_str),
        Some("spec.containers: Forbidden: pod updates may not add or remove containers")
    );
    let changed =
        update(&|new| new["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "b"}]));
    assert_eq!(changed.len(), 1);
    assert!(
        changed[0].starts_with(&format!(
            "spec: Forbidden: {}\n  core.PodSpec{{\n",
            super::super::pod_update::IMMUTABLE_SPEC
        )),
        "{changed:?}"
    );
}

/// `validateContainerResourceDivisor` (cases of kube's `TestValidateEnv`
/// and `TestValidateDownwardAPI`): cpu divisors `1m` and `1`, memory and
/// ephemeral-storage divisors a power of 1000 or 1024 of a byte, in the
/// quantity's canonical form; a zero divisor is unset; other resources
/// (hugepages) are not checked.
#[test]
fn resource_field_divisors_are_kubes() {
    let env = |resource: &str, divisor: &str| json!({"name": "E", "valueFrom": {"resourceFieldRef": {"resource": resource, "divisor": divisor}}});
    let valid = json!({"containers": [container(json!({"env": [
        env("limits.cpu", "1m"), env("requests.cpu", "1"), env("limits.cpu", "1000m"),
        env("limits.memory", "1Mi"), env("requests.memory", "1024Ki"), env("limits.ephemeral-storage", "1G"),
        env("limits.cpu", "0"), env("requests.hugepages-2Mi", "3"),
    ]}))]});
    assert!(
        errors_of(valid.clone()).is_empty(),
        "{:?}",
        errors_of(valid)
    );
    let invalid = json!({
        "containers": [container(json!({"env": [
            env("limits.cpu", "2m"), env("requests.memory", "1m"), env("requests.ephemeral-storage", "10"),
        ]}))],
        "volumes": [{"name": "info", "downwardAPI": {"items": [
            {"path": "cpu", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu", "divisor": "0.5"}}]}}],
    });
    assert_eq!(
        errors_of(invalid),
        vec![
            r#"spec.volumes[0].downwardAPI.resourceFieldRef.divisor: Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource"#,
            r#"spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource"#,
            r#"spec.containers[0].env[1].valueFrom.resourceFieldRef.divisor: Invalid value: "requests.memory": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource"#,
            r#"spec.containers[0].env[2].valueFrom.resourceFieldRef.divisor: Invalid value: "requests.ephemeral-storage": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource"#,
        ]
    );
}

/// `validateMountPropagation` and `validateMountRecursiveReadOnly` (cases of
/// kube's `TestValidateMountPropagation` and the recursive read-only cases
/// of `TestValidateVolumeMounts`); both report at the list's path, as kube.
#[test]
fn mount_propagation_and_recursive_read_only_are_kubes() {
    // As under `--allow-privileged=true`, on this test's thread only.
    super::super::capabilities::set_thread_allow_privileged(true);
    let pod = |mounts: Value, privileged: bool| {
        json!({
            "containers": [container(json!({"volumeMounts": mounts, "securityContext": {"privileged": privileged}}))],
            "volumes": [{"name": "v", "emptyDir": {}}],
        })
    };
    for (mount, privileged) in [
        (
            json!({"name": "v", "mountPath": "/a", "mountPropagation": "Bidirectional"}),
            true,
        ),
        (
            json!({"name": "v", "mountPath": "/a", "mountPropagation": "HostToContainer"}),
            false,
        ),
        (
            json!({"name": "v", "mountPath": "/a", "mountPropagation": "None"}),
            false,
        ),
        (
            json!({"name": "v", "mountPath": "/a", "readOnly": true, "recursiveReadOnly": "Enabled"}),
            false,
        ),
        (
            json!({"name": "v", "mountPath": "/a", "readOnly": true, "recursiveReadOnly": "IfPossible", "mountPropagation": "None"}),
            false,
        ),
        (
            json!({"name": "v", "mountPath": "/a", "recursiveReadOnly": "Disabled", "mountPropagation": "HostToContainer"}),
            false,
        ),
    ] {
        let spec = pod(json!([mount]), privileged);
        assert!(
            errors_of(spec.clone()).is_empty(),
            "{spec}: {:?}",
            errors_of(spec.clone())
        );
    }
    assert_eq!(
        errors_of(pod(
            json!([
                {"name": "v", "mountPath": "/a", "mountPropagation": "Bidirectional"},
                {"name": "v", "mountPath": "/b", "mountPropagation": "Sideways"},
                {"name": "v", "mountPath": "/c", "recursiveReadOnly": "Enabled"},
                {"name": "v", "mountPath": "/d", "readOnly": true, "recursiveReadOnly": "IfPossible", "mountPropagation": "HostToContainer"},
                {"name": "v", "mountPath": "/e", "readOnly": true, "recursiveReadOnly": "Always"},
            ]),
            false,
        )),
        vec![
            "spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers",
            r#"spec.containers[0].volumeMounts.mountPropagation: Unsupported value: "Sideways": supported values: "Bidirectional", "HostToContainer", "None""#,
            "spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden: may only be specified when readOnly is true",
            "spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden: may only be specified when mountPropagation is None or not specified",
            r#"spec.containers[0].volumeMounts.recursiveReadOnly: Unsupported value: "Always": supported values: "Disabled", "Enabled", "IfPossible""#,
        ]
    );
    super::super::capabilities::set_thread_allow_privileged(false);
}

/// `ValidateVolumeDevices` and the device half of `ValidateVolumeMounts`
/// (cases of kube's `TestValidateVolumeDevices`): a device names a claim or
/// ephemeral volume, unique names and paths, no backsteps, no name or path
/// shared with the mounts; `\` is no separator (Linux `filepath.ToSlash`).
#[test]
fn volume_devices_are_kubes() {
    let claim = json!({"name": "claim", "persistentVolumeClaim": {"claimName": "c"}});
    let scratch = json!({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}});
    let empty = json!({"name": "empty", "emptyDir": {}});
    let spec = |devices: Value, mounts: Value| {
        json!({
            "containers": [container(json!({"volumeDevices": devices, "volumeMounts": mounts}))],
            "volumes": [claim.clone(), scratch.clone(), empty.clone()],
        })
    };
    let valid = spec(
        json!([{"name": "claim", "devicePath": "/dev/a"}, {"name": "scratch", "devicePath": "/dev/b\\..\\c"}]),
        json!([{"name": "empty", "mountPath": "/data"}]),
    );
    assert!(
        errors_of(valid.clone()).is_empty(),
        "{:?}",
        errors_of(valid)
    );
    assert_eq!(
        errors_of(spec(
            json!([
                {"name": "claim", "devicePath": "/dev/a"},
                {"name": "claim", "devicePath": "/dev/a"},
                {"name": "empty", "devicePath": "/dev/../x"},
                {"name": "missing", "devicePath": ""},
                {"name": "scratch", "devicePath": "/data"},
            ]),
            json!([{"name": "scratch", "mountPath": "/data"}, {"name": "empty", "mountPath": "/dev/a"}]),
        )),
        vec![
            r#"spec.containers[0].volumeMounts[0].name: Invalid value: "scratch": must not already exist in volumeDevices"#,
            r#"spec.containers[0].volumeMounts[0].mountPath: Invalid value: "/data": must not already exist as a path in volumeDevices"#,
            r#"spec.containers[0].volumeMounts[1].name: Invalid value: "empty": must not already exist in volumeDevices"#,
            r#"spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/dev/a": must not already exist as a path in volumeDevices"#,
            r#"spec.containers[0].volumeDevices[0].devicePath: Invalid value: "/dev/a": must not already exist as a path in volumeMounts"#,
            r#"spec.containers[0].volumeDevices[1].name: Invalid value: "claim": must be unique"#,
            r#"spec.containers[0].volumeDevices[1].devicePath: Invalid value: "/dev/a": must be unique"#,
            r#"spec.containers[0].volumeDevices[1].devicePath: Invalid value: "/dev/a": must not already exist as a path in volumeMounts"#,
            r#"spec.containers[0].volumeDevices[2].name: Invalid value: "empty": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"#,
            r#"spec.containers[0].volumeDevices[2].devicePath: Invalid value: "/dev/../x": can not contain backsteps ('..')"#,
            r#"spec.containers[0].volumeDevices[2].name: Invalid value: "empty": must not already exist in volumeMounts"#,
            r#"spec.containers[0].volumeDevices[3].name: Not found: "missing""#,
            "spec.containers[0].volumeDevices[3].devicePath: Required value",
            r#"spec.containers[0].volumeDevices[4].name: Invalid value: "scratch": must not already exist in volumeMounts"#,
            r#"spec.containers[0].volumeDevices[4].devicePath: Invalid value: "/data": must not already exist as a path in volumeMounts"#,
        ]
    );
}
