//! Cases of kube's `TestValidateVolumes` (the `ephemeral` ones) and
//! `TestEphemeralVolumes...`-style checks of `validateVolumeSource`
//! (`core/validation/validation_test.go`).

use serde_json::{json, Value};

use super::super::pod_volumes::{volumes, PodContext};

fn errors_of(pod_name: &str, list: Value) -> Vec<String> {
    let mut errors = Vec::new();
    let list = list.as_array().cloned().unwrap_or_default();
    let pod = PodContext {
        pod_name,
        resource_is_pod: true,
    };
    volumes(&list, pod, "spec.volumes", &mut errors);
    errors.iter().map(ToString::to_string).collect()
}

fn claim_spec() -> Value {
    json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10G"}}, "volumeMode": "Filesystem"})
}

#[test]
fn valid_ephemeral_volumes_pass() {
    let valid = [
        json!([{"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": claim_spec()}}}]),
        json!([{"name": "v", "ephemeral": {"volumeClaimTemplate": {
            "metadata": {"labels": {"app": "x"}, "annotations": {"a.example.com/b": "c"}},
            "spec": claim_spec()}}}]),
        // A claim named like another pod's claim is fine.
        json!([
            {"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": claim_spec()}}},
            {"name": "w", "persistentVolumeClaim": {"claimName": "other-v"}}
        ]),
    ];
    for list in valid {
        assert_eq!(
            errors_of("pod", list.clone()),
            Vec::<String>::new(),
            "{list}"
        );
    }
}

#[test]
fn invalid_ephemeral_volumes_fail_as_kube() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "pod",
            json!([{"name": "v", "ephemeral": {}}]),
            vec!["spec.volumes[0].ephemeral.volumeClaimTemplate: Required value"],
        ),
        (
            "pod",
            json!([{"name": "v", "ephemeral": {"volumeClaimTemplate": {
                "metadata": {"name": "n", "namespace": "ns", "uid": "u", "labels": {"-x": "y"}, "finalizers": ["f"]},
                "spec": {"resources": {"requests": {}}}}}}]),
            vec![
                r#"spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.labels: Invalid value: "-x": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#,
                "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set",
                "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.namespace: Forbidden: cannot be set",
                "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.uID: Forbidden: cannot be set",
                "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.finalizers: Forbidden: cannot be set",
                "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Required value: at least 1 access mode is required",
                "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required value",
            ],
        ),
        (
            // kube's "ephemeral volume + PVC, conflicting between them".
            "pod",
            json!([
                {"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": claim_spec()}}},
                {"name": "w", "persistentVolumeClaim": {"claimName": "pod-v"}}
            ]),
            vec![r#"spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: "pod-v": must not reference a PVC that gets created for an ephemeral volume"#],
        ),
    ];
    for (pod, list, expected) in cases {
        assert_eq!(errors_of(pod, list.clone()), expected, "{list}");
    }
}

#[test]
fn the_claim_name_must_be_a_valid_name() {
    let pod = "p".repeat(250);
    let errors = errors_of(
        &pod,
        json!([{"name": "volume", "ephemeral": {"volumeClaimTemplate": {"spec": claim_spec()}}}]),
    );
    assert_eq!(
        errors,
        vec![format!(
            r#"spec.volumes[0].name: Invalid value: "volume": PVC name "{pod}-volume": must be no more than 253 characters"#
        )]
    );
    // Without a pod name (a template), the claim name is not checked.
    assert!(errors_of(
        "",
        json!([{"name": "volume", "ephemeral": {"volumeClaimTemplate": {"spec": claim_spec()}}}])
    )
    .is_empty());
}
