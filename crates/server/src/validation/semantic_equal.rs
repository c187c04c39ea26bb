//! `apiequality.Semantic.DeepEqual` of two pod templates as JSON trees.
//!
//! kube compares decoded Go structs, where absent, `null`, `[]` and `{}` of
//! a slice, a map or a struct held by value all decode to the same zero
//! value; only a struct held through a pointer tells `{}` (`&T{}`) from
//! absent (`nil`). The JSON trees keep what each client sent (client-go
//! writes `resources: {}` and `creationTimestamp: null`, kube-rs leaves them
//! out), so the comparison needs to know which fields are pointers.
//! Scalars compare exactly: a pointer to `""`, `0` or `false` differs from
//! nil in Go, and the pod template's scalar pointers (`*int64`, `*bool`,
//! `*string`) cannot be told from its plain scalars by name alone.

use serde_json::{Map, Value};

/// Fields of the `PodTemplateSpec` tree whose Go type is a pointer to a
/// struct, so that `{}` is not the same as absent. `resources` is a pointer
/// only directly in a PodSpec (pod-level resources); a container's is a value.
const POINTER_STRUCTS: &[&str] = &[
    // PodSpec
    "securityContext",
    "affinity",
    "dnsConfig",
    "os",
    // Affinity and its terms
    "nodeAffinity",
    "podAffinity",
    "podAntiAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
    "labelSelector",
    "namespaceSelector",
    // Container
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "postStart",
    "preStop",
    "exec",
    "httpGet",
    "tcpSocket",
    "grpc",
    "sleep",
    // SecurityContext
    "capabilities",
    "seLinuxOptions",
    "windowsOptions",
    "seccompProfile",
    "appArmorProfile",
    // EnvVar, EnvFromSource, DownwardAPI files
    "valueFrom",
    "fieldRef",
    "resourceFieldRef",
    "configMapKeyRef",
    "secretKeyRef",
    "fileKeyRef",
    "configMapRef",
    "secretRef",
    // VolumeSource and projections
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
    "serviceAccountToken",
    "clusterTrustBundle",
    "podCertificate",
    "volumeClaimTemplate",
    "nodePublishSecretRef",
    "dataSource",
    "dataSourceRef",
    "selector",
    // JobSpec
    "podFailurePolicy",
    "successPolicy",
    // JobStatus
    "uncountedTerminatedPods",
];

/// Whether the field `name` (inside an object that is a PodSpec when
/// `in_pod_spec`) holds a pointer to a struct.
fn is_pointer_struct(name: &str, in_pod_spec: bool) -> bool {
    POINTER_STRUCTS.contains(&name) || (in_pod_spec && name == "resources")
}

fn is_zero_collection(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// `Semantic.DeepEqual` of two pod templates (`PodTemplateSpec`).
pub fn pod_templates_equal(left: &Value, right: &Value) -> bool {
    let empty = Map::new();
    let left_fields = if left.is_null() {
        Some(&empty)
    } else {
        left.as_object()
    };
    let right_fields = if right.is_null() {
        Some(&empty)
    } else {
        right.as_object()
    };
    match (left_fields, right_fields) {
        (Some(left), Some(right)) => objects_equal(left, right, Context::Template),
        _ => left == right,
    }
}

/// `Semantic.DeepEqual` of a field `name` of two objects outside a pod
/// template (a Job's `selector`, `podFailurePolicy`, `successPolicy`, ...).
pub fn fields_equal(left: Option<&Value>, right: Option<&Value>, name: &str) -> bool {
    equal(left, right, name, Context::Other)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Template,
    PodSpec,
    Other,
}

fn child_context(context: Context, name: &str) -> Context {
    match (context, name) {
        (Context::Template, "spec") => Context::PodSpec,
        _ => Context::Other,
    }
}

fn equal(left: Option<&Value>, right: Option<&Value>, name: &str, parent: Context) -> bool {
    let left = left.filter(|value| !value.is_null());
    let right = right.filter(|value| !value.is_null());
    let pointer = is_pointer_struct(name, parent == Context::PodSpec);
    match (left, right) {
        (None, None) => true,
        (Some(value), None) | (None, Some(value)) => match value {
            // A struct held by value and a map: absent is their zero value.
            Value::Object(fields) if !pointer => {
                let context = child_context(parent, name);
                let empty = Map::new();
                objects_equal(fields, &empty, context)
            }
            other => is_zero_collection(other),
        },
        (Some(Value::Object(left)), Some(Value::Object(right))) => {
            objects_equal(left, right, child_context(parent, name))
        }
        (Some(Value::Array(left)), Some(Value::Array(right))) => {
            left.len() == right.len()
                && left
                    .iter()
                    .zip(right)
                    .all(|(left, right)| equal(Some(left), Some(right), name, Context::Other))
        }
        (Some(left), Some(right)) => left == right,
    }
}

fn objects_equal(left: &Map<String, Value>, right: &Map<String, Value>, context: Context) -> bool {
    left.keys()
        .chain(right.keys())
        .all(|name| equal(left.get(name), right.get(name), name, context))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn absent_and_empty_values_compare_as_go_structs_do() {
        let base = json!({
            "metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}
        });
        let same = [
            json!({
                "metadata": {"labels": {"a": "b"}, "creationTimestamp": null, "annotations": {}},
                "spec": {"containers": [{"name": "c", "image": "i", "resources": {}, "env": []}],
                         "restartPolicy": "Never", "nodeSelector": {}, "volumes": []}
            }),
            json!({
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {}}}],
                         "restartPolicy": "Never", "tolerations": null}
            }),
        ];
        for other in &same {
            assert!(pod_templates_equal(&base, other), "{other}");
            assert!(pod_templates_equal(other, &base), "{other}");
        }
        let different = [
            // Pointers to empty structs are not nil.
            json!({"metadata": {"labels": {"a": "b"}},
                   "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never", "affinity": {}}}),
            json!({"metadata": {"labels": {"a": "b"}},
                   "spec": {"containers": [{"name": "c", "image": "i", "securityContext": {}}], "restartPolicy": "Never"}}),
            // Pod-level resources are a pointer.
            json!({"metadata": {"labels": {"a": "b"}},
                   "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never", "resources": {}}}),
            // Scalars compare exactly.
            json!({"metadata": {"labels": {"a": "b"}},
                   "spec": {"containers": [{"name": "c", "image": "j"}], "restartPolicy": "Never"}}),
            json!({"metadata": {"labels": {"a": "c"}},
                   "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}}),
        ];
        for other in &different {
            assert!(!pod_templates_equal(&base, other), "{other}");
            assert!(!pod_templates_equal(other, &base), "{other}");
        }
        let volume =
            |source: Value| json!({"spec": {"volumes": [{"name": "v", "emptyDir": source}]}});
        assert!(!pod_templates_equal(
            &volume(json!({})),
            &json!({"spec": {"volumes": [{"name": "v"}]}})
        ));
        assert!(pod_templates_equal(&volume(json!({})), &volume(json!({}))));
    }
}
