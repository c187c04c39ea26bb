//! Cases in the manner of kube's `TestValidateNode` annotation entries
//! ("invalid-taints-annotation", "invalid-preferAvoidPods-annotation", ...).

use serde_json::{json, Value};

use super::*;

fn texts(annotation: &str, text: &str) -> Vec<String> {
    let object = json!({"metadata": {"name": "n", "annotations": {annotation: text}}});
    let mut errors = Vec::new();
    node_specific_annotations(&object, &mut errors);
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn the_taints_annotation_is_decoded_and_validated() {
    assert_eq!(
        texts(
            TAINTS,
            r#"[{"key":"dedicated","value":"special-user","effect":"NoSchedule","timeAdded":null}]"#
        ),
        Vec::<String>::new()
    );
    assert_eq!(texts(TAINTS, "null"), Vec::<String>::new());
    let invalid = |message: &str| {
        vec![format!(
            "metadata.annotations: Invalid value: \"scheduler.alpha.kubernetes.io/taints\": {message}"
        )]
    };
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("[{", invalid("unexpected end of JSON input")),
        ("{}", invalid("json: cannot unmarshal object into Go value of type []core.Taint")),
        (r#"["a"]"#, invalid("json: cannot unmarshal string into Go value of type core.Taint")),
        (
            r#"[{"key": 5, "Effect": true}]"#,
            invalid("json: cannot unmarshal number into Go struct field Taint.key of type string"),
        ),
        (
            r#"[{"value": "v", "Effect": true, "key": 5}]"#,
            invalid("json: cannot unmarshal bool into Go struct field Taint.effect of type core.TaintEffect"),
        ),
        (
            r#"[{"key":"a","effect":"NoSchedule","timeAdded":"yesterday"}]"#,
            invalid("parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"yesterday\" as \"2006\""),
        ),
        (
            r#"[{"key":"a","effect":"NoSchedule","timeAdded":5}]"#,
            invalid("json: cannot unmarshal number into Go struct field Taint.timeAdded of type string"),
        ),
        (
            r#"[{"key":"bad key","effect":"Sometimes"},{"key":"a","effect":"NoSchedule"},{"key":"a","effect":"NoSchedule"}]"#,
            vec![
                "metadata.annotations.scheduler.alpha.kubernetes.io/taints[0].key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".to_string(),
                "metadata.annotations.scheduler.alpha.kubernetes.io/taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"".to_string(),
                "metadata.annotations.scheduler.alpha.kubernetes.io/taints[2]: Duplicate value: core.Taint{Key:\"a\", Value:\"\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair".to_string(),
            ],
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(texts(TAINTS, text), expected, "{text}");
    }
}

#[test]
fn the_prefer_avoid_pods_annotation_is_decoded_and_validated() {
    let valid: Value = json!({"preferAvoidPods": [{
        "podSignature": {"podController": {"apiVersion": "v1", "kind": "ReplicationController", "name": "foo", "uid": "abcdef123456", "controller": true}},
        "reason": "some reason", "message": "some message",
    }]});
    assert_eq!(
        texts(PREFER_AVOID_PODS, &valid.to_string()),
        Vec::<String>::new()
    );
    assert_eq!(
        texts(
            PREFER_AVOID_PODS,
            r#"{"preferAvoidPods":[{"podSignature":{"podController":{"kind":"ReplicationController","apiVersion":"v1","controller":false}}},{"reason":"r"}]}"#
        ),
        [
            "metadata.annotations.scheduler.alpha.kubernetes.io/preferAvoidPods[0].PodSignature.PodController.Controller: Invalid value: false: must point to a controller",
            "metadata.annotations.scheduler.alpha.kubernetes.io/preferAvoidPods[1].PodSignature: Required value",
        ]
    );
    assert_eq!(
        texts(
            PREFER_AVOID_PODS,
            r#"{"preferAvoidPods":[{"podSignature":{"podController":{"kind":1}}}]}"#
        ),
        ["metadata.annotations.AvoidPods: Invalid value: \"scheduler.alpha.kubernetes.io/preferAvoidPods\": json: cannot unmarshal number into Go struct field OwnerReference.preferAvoidPods.podSignature.podController.kind of type string"]
    );
    assert_eq!(
        texts(PREFER_AVOID_PODS, "[]"),
        ["metadata.annotations.AvoidPods: Invalid value: \"scheduler.alpha.kubernetes.io/preferAvoidPods\": json: cannot unmarshal array into Go value of type v1.AvoidPods"]
    );
}
