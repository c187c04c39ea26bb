//! Cases of kube's `TestApplyAppArmorVersionSkew`
//! (`pkg/registry/core/pod/strategy_test.go`) with 1.34's expectations:
//! annotations become fields, fields no longer become annotations.

use serde_json::{json, Value};

use super::{apply_version_skew, deprecation_warning};

const KEY: &str = "container.apparmor.security.beta.kubernetes.io/";

fn warning(container: &str) -> String {
    deprecation_warning("", &format!("{KEY}{container}"))
}

fn pod(annotations: Value, spec: Value) -> Value {
    json!({"metadata": {"name": "p", "annotations": annotations}, "spec": spec})
}

#[test]
fn annotations_sync_into_fields_as_kube_1_34() {
    struct Case {
        description: &'static str,
        pod: Value,
        /// The spec after the sync (annotations are never changed).
        spec: Value,
        warnings: Vec<String>,
    }
    let unconfined = json!({"type": "Unconfined"});
    let runtime_default = json!({"type": "RuntimeDefault"});
    let localhost = json!({"type": "Localhost", "localhostProfile": "test"});
    let cases = [
        Case {
            description: "Security context nil",
            pod: pod(
                json!({}),
                json!({"initContainers": [{"name": "init"}], "containers": [{"name": "ctr"}]}),
            ),
            spec: json!({"initContainers": [{"name": "init"}], "containers": [{"name": "ctr"}]}),
            warnings: vec![],
        },
        Case {
            description:
                "Pod field unconfined and no annotation present: no annotation is added (1.34)",
            pod: pod(
                json!({}),
                json!({"securityContext": {"appArmorProfile": unconfined},
                                       "containers": [{"name": "ctr"}]}),
            ),
            spec: json!({"securityContext": {"appArmorProfile": unconfined},
                         "containers": [{"name": "ctr"}]}),
            warnings: vec![],
        },
        Case {
            description: "Container field localhost and no annotation present",
            pod: pod(
                json!({}),
                json!({"containers": [{"name": "ctr",
                "securityContext": {"appArmorProfile": localhost}}]}),
            ),
            spec: json!({"containers": [{"name": "ctr",
                "securityContext": {"appArmorProfile": localhost}}]}),
            warnings: vec![],
        },
        Case {
            description: "Annotation 'unconfined' and no fields present",
            pod: pod(
                json!({format!("{KEY}ctr"): "unconfined"}),
                json!({"containers": [{"name": "ctr"}]}),
            ),
            spec: json!({"containers": [{"name": "ctr",
                "securityContext": {"appArmorProfile": unconfined}}]}),
            warnings: vec![warning("ctr")],
        },
        Case {
            description: "Annotation for non-existent container",
            pod: pod(
                json!({format!("{KEY}foo-bar"): "unconfined"}),
                json!({"containers": [{"name": "ctr"}]}),
            ),
            spec: json!({"containers": [{"name": "ctr"}]}),
            warnings: vec![],
        },
        Case {
            description: "Annotation 'runtime/default' and no fields present",
            pod: pod(
                json!({format!("{KEY}ctr"): "runtime/default"}),
                json!({"securityContext": {"appArmorProfile": unconfined},
                       "containers": [{"name": "ctr", "securityContext": {}}]}),
            ),
            spec: json!({"securityContext": {"appArmorProfile": unconfined},
                         "containers": [{"name": "ctr",
                             "securityContext": {"appArmorProfile": runtime_default}}]}),
            warnings: vec![warning("ctr")],
        },
        Case {
            description: "Multiple containers by annotations",
            pod: pod(
                json!({format!("{KEY}init"): "unconfined", format!("{KEY}a"): "localhost/test",
                       format!("{KEY}c"): "runtime/default"}),
                json!({"securityContext": {"appArmorProfile": runtime_default},
                       "initContainers": [{"name": "init"}],
                       "containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}),
            ),
            spec: json!({"securityContext": {"appArmorProfile": runtime_default},
                         "initContainers": [{"name": "init",
                             "securityContext": {"appArmorProfile": unconfined}}],
                         "containers": [
                             {"name": "a", "securityContext": {"appArmorProfile": localhost}},
                             {"name": "b"},
                             {"name": "c"}]}),
            // `c` equals the pod's profile: not copied, not warned.
            warnings: vec![warning("init"), warning("a")],
        },
        Case {
            description: "Conflicting field and annotations: the field wins, no warning",
            pod: pod(
                json!({format!("{KEY}ctr"): "localhost/test"}),
                json!({"containers": [{"name": "ctr",
                    "securityContext": {"appArmorProfile": runtime_default}}]}),
            ),
            spec: json!({"containers": [{"name": "ctr",
                "securityContext": {"appArmorProfile": runtime_default}}]}),
            warnings: vec![],
        },
        Case {
            description: "Pod field and matching annotations",
            pod: pod(
                json!({format!("{KEY}ctr"): "runtime/default"}),
                json!({"securityContext": {"appArmorProfile": runtime_default},
                       "containers": [{"name": "ctr"}]}),
            ),
            spec: json!({"securityContext": {"appArmorProfile": runtime_default},
                         "containers": [{"name": "ctr"}]}),
            warnings: vec![],
        },
        Case {
            description: "Annotation overrides pod field",
            pod: pod(
                json!({format!("{KEY}ctr"): "unconfined"}),
                json!({"securityContext": {"appArmorProfile": runtime_default},
                       "containers": [{"name": "ctr"}]}),
            ),
            spec: json!({"securityContext": {"appArmorProfile": runtime_default},
                         "containers": [{"name": "ctr",
                             "securityContext": {"appArmorProfile": unconfined}}]}),
            warnings: vec![warning("ctr")],
        },
        Case {
            description: "Invalid annotation value: no field, a warning",
            pod: pod(
                json!({format!("{KEY}ctr"): "bogus"}),
                json!({"containers": [{"name": "ctr"}]}),
            ),
            spec: json!({"containers": [{"name": "ctr"}]}),
            warnings: vec![warning("ctr")],
        },
        Case {
            description: "Empty localhost profile name: no field, a warning",
            pod: pod(
                json!({format!("{KEY}ctr"): "localhost/"}),
                json!({"containers": [{"name": "ctr"}]}),
            ),
            spec: json!({"containers": [{"name": "ctr"}]}),
            warnings: vec![warning("ctr")],
        },
        Case {
            description: "A localhost profile padded with whitespace is not a valid field",
            pod: pod(
                json!({format!("{KEY}ctr"): "localhost/ test"}),
                json!({"containers": [{"name": "ctr"}]}),
            ),
            spec: json!({"containers": [{"name": "ctr"}]}),
            warnings: vec![warning("ctr")],
        },
        Case {
            description: "Ephemeral containers are visited after the others",
            pod: pod(
                json!({format!("{KEY}debug"): "unconfined", format!("{KEY}ctr"): "unconfined"}),
                json!({"containers": [{"name": "ctr"}], "ephemeralContainers": [{"name": "debug"}]}),
            ),
            spec: json!({
                "containers": [{"name": "ctr", "securityContext": {"appArmorProfile": unconfined}}],
                "ephemeralContainers": [{"name": "debug",
                    "securityContext": {"appArmorProfile": unconfined}}]}),
            warnings: vec![warning("ctr"), warning("debug")],
        },
        Case {
            description: "Windows pods are left alone",
            pod: pod(
                json!({format!("{KEY}ctr"): "unconfined"}),
                json!({"os": {"name": "windows"}, "containers": [{"name": "ctr"}]}),
            ),
            spec: json!({"os": {"name": "windows"}, "containers": [{"name": "ctr"}]}),
            warnings: vec![],
        },
    ];
    for case in cases {
        let annotations = case.pod["metadata"]["annotations"].clone();
        let mut pod = case.pod;
        let warnings = apply_version_skew(&mut pod);
        assert_eq!(pod["spec"], case.spec, "{}", case.description);
        assert_eq!(
            pod["metadata"]["annotations"], annotations,
            "{}",
            case.description
        );
        assert_eq!(warnings, case.warnings, "{}", case.description);
    }
}

#[test]
fn the_warning_names_the_annotation_as_kube_does() {
    assert_eq!(
        warning("ctr"),
        "metadata.annotations[container.apparmor.security.beta.kubernetes.io/ctr]: \
         deprecated since v1.30; use the \"appArmorProfile\" field instead"
    );
}

#[test]
fn a_pod_without_a_spec_or_annotations_is_left_alone() {
    for mut pod in [
        json!({}),
        json!({"metadata": {}}),
        json!({"spec": {"containers": "x"}}),
    ] {
        let before = pod.clone();
        assert!(apply_version_skew(&mut pod).is_empty());
        assert_eq!(pod, before);
    }
}
