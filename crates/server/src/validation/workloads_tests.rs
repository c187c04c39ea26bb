//! Cases from kube's `TestValidateDeployment`, `TestValidateReplicaSet`,
//! `TestValidateDaemonSet`, `TestValidateStatefulSet` (`apps/validation/validation_test.go`)
//! and `TestValidateReplicationController`, on defaulted objects.

use serde_json::{json, Value};

use super::*;
use crate::registry::Registry;

fn defaulted(group: &str, plural: &str, mut object: Value) -> Value {
    let registry = Registry::new(crate::registry::builtin_resources());
    let resource = registry.lookup(group, "v1", plural).expect("served");
    crate::defaults::apply(resource, &mut object);
    object
}

// The create-time options (the update ones are tested in `pod_options`' callers below).
fn deployment(object: &Value) -> Vec<FieldError> {
    super::deployment(object, PodValidationOptions::default())
}

fn replica_set(object: &Value) -> Vec<FieldError> {
    super::replica_set(object, PodValidationOptions::default())
}

fn daemon_set(object: &Value) -> Vec<FieldError> {
    super::daemon_set(object, PodValidationOptions::default())
}

fn replication_controller(object: &Value) -> Vec<FieldError> {
    super::replication_controller(object, PodValidationOptions::default())
}

fn texts(errors: Vec<FieldError>) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

fn deployment_with(spec: Value) -> Vec<String> {
    texts(deployment(&defaulted(
        "apps",
        "deployments",
        json!({"spec": spec}),
    )))
}

#[test]
fn deployments() {
    assert!(deployment_with(
        json!({"selector": {"matchLabels": {"app": "web"}}, "template": template()})
    )
    .is_empty());
    assert!(deployment_with(json!({"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]},
                                    "template": template(), "strategy": {"type": "Recreate"}})).is_empty());
    assert_eq!(
        deployment_with(json!({"template": template()})),
        vec![
            "spec.selector: Required value",
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
        ]
    );
    assert_eq!(
        deployment_with(json!({"selector": {"matchLabels": {"app": "api"}}, "template": template(), "replicas": -1})),
        vec![
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
        ]
    );
    assert_eq!(
        deployment_with(json!({"selector": {}, "template": template()})),
        vec!["spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"]
    );
    assert_eq!(
        deployment_with(json!({"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}, "template": template()})),
        vec![
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"app\", Operator:\"In\", Values:[]string(nil)}}}: invalid label selector",
        ]
    );
    let mut template = template();
    template["spec"]["restartPolicy"] = json!("Never");
    template["spec"]["activeDeadlineSeconds"] = json!(5);
    assert_eq!(
        deployment_with(json!({"selector": {"matchLabels": {"app": "web"}}, "template": template,
                               "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "110%"}},
                               "progressDeadlineSeconds": 5, "minReadySeconds": 10})),
        vec![
            "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
            "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"110%\"}: must not be greater than 100%",
            "spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds",
        ]
    );
    assert_eq!(
        deployment_with(
            json!({"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}}})
        ),
        vec!["spec.template.spec.containers: Required value"]
    );
}

#[test]
fn selectors_are_immutable() {
    let old = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}}});
    assert!(immutable_selector(&old, &old).is_none());
    let new = json!({"spec": {"selector": {"matchLabels": {"app": "api"}}}});
    assert_eq!(
        immutable_selector(&new, &old).map(|error| error.to_string()),
        Some("spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"api\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable".to_string())
    );
}

#[test]
fn replica_sets_daemon_sets_stateful_sets_and_controllers() {
    let replica_set_errors = texts(replica_set(&defaulted(
        "apps",
        "replicasets",
        json!({"spec": {"template": template()}}),
    )));
    assert_eq!(replica_set_errors[0], "spec.selector: Required value");
    let daemon = defaulted(
        "apps",
        "daemonsets",
        json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}}),
    );
    assert!(texts(daemon_set(&daemon)).is_empty());
    let daemon = defaulted(
        "apps",
        "daemonsets",
        json!({"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template(),
                                                                  "updateStrategy": {"type": "Sometimes"}}}),
    );
    assert_eq!(
        texts(daemon_set(&daemon)),
        vec![
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
            "spec.updateStrategy: Unsupported value: \"Sometimes\": supported values: \"RollingUpdate\", \"OnDelete\"",
        ]
    );
    let stateful = defaulted(
        "apps",
        "statefulsets",
        json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(), "serviceName": "s"}}),
    );
    assert!(texts(stateful_set(&stateful)).is_empty());
    let mut changed = stateful.clone();
    changed["spec"]["serviceName"] = json!("other");
    assert_eq!(
        texts(stateful_set_update(&changed, &stateful)),
        vec!["spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"]
    );
    changed["spec"]["serviceName"] = json!("s");
    changed["spec"]["replicas"] = json!(3);
    assert!(texts(stateful_set_update(&changed, &stateful)).is_empty());
    let controller = defaulted(
        "",
        "replicationcontrollers",
        json!({"spec": {"template": template()}}),
    );
    assert!(
        texts(replication_controller(&controller)).is_empty(),
        "the selector defaults to the template's labels"
    );
    let controller =
        json!({"spec": {"selector": {"app": "x"}, "replicas": 1, "template": template()}});
    assert_eq!(
        texts(replication_controller(&controller))[0],
        "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`"
    );
    assert_eq!(
        texts(replication_controller(&json!({"spec": {}}))),
        vec![
            "spec.selector: Required value",
            "spec.template: Required value"
        ]
    );
}

fn stateful_set_with(changes: Value) -> Vec<String> {
    let mut spec = json!({"selector": {"matchLabels": {"app": "web"}}, "template": template(), "serviceName": "s"});
    for (name, value) in changes.as_object().into_iter().flatten() {
        spec[name] = value.clone();
    }
    texts(stateful_set(&defaulted(
        "apps",
        "statefulsets",
        json!({"spec": spec}),
    )))
}

/// `TestValidateStatefulSet`'s ordinals, retention policy and maxUnavailable cases.
#[test]
fn stateful_set_ordinals_retention_and_max_unavailable() {
    for valid in [
        json!({"ordinals": {"start": 2}}),
        json!({"ordinals": {}}),
        json!({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"}}),
        json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}}}),
        json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}}}),
    ] {
        assert_eq!(
            stateful_set_with(valid.clone()),
            Vec::<String>::new(),
            "{valid}"
        );
    }
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"ordinals": {"start": -1}}),
            vec!["spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            json!({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep", "whenScaled": "Never"}}),
            vec![
                "spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\"",
                "spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: \"Never\": supported values: \"Retain\", \"Delete\"",
            ],
        ),
        (
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}}),
            vec!["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: cannot be 0"],
        ),
        (
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -1, "maxUnavailable": "101%"}}}),
            vec![
                "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0",
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"101%\"}: must not be greater than 100%",
            ],
        ),
        (
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": -1}}}),
            vec!["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"],
        ),
    ];
    for (changes, expected) in cases {
        assert_eq!(stateful_set_with(changes.clone()), expected, "{changes}");
    }
}

fn daemon_set_object(rolling: Value) -> Value {
    defaulted(
        "apps",
        "daemonsets",
        json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(),
                        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}}),
    )
}

/// `TestValidateDaemonSet`'s rolling-update cases (`ValidateRollingUpdateDaemonSet`).
#[test]
fn daemon_set_rolling_updates() {
    for valid in [
        json!({"maxUnavailable": 1, "maxSurge": 0}),
        json!({"maxUnavailable": 0, "maxSurge": "20%"}),
        json!({"maxUnavailable": "100%"}),
    ] {
        assert!(
            texts(daemon_set(&daemon_set_object(valid.clone()))).is_empty(),
            "{valid}"
        );
    }
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"maxUnavailable": 0, "maxSurge": 0}),
            vec!["spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"],
        ),
        (
            json!({"maxUnavailable": 1, "maxSurge": "10%"}),
            vec!["spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"10%\"}: may not be set when maxUnavailable is non-zero"],
        ),
        (
            json!({"maxUnavailable": "101%", "maxSurge": "200%"}),
            vec![
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"101%\"}: must not be greater than 100%",
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"200%\"}: must not be greater than 100%",
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"200%\"}: may not be set when maxUnavailable is non-zero",
            ],
        ),
    ];
    for (rolling, expected) in cases {
        assert_eq!(
            texts(daemon_set(&daemon_set_object(rolling.clone()))),
            expected,
            "{rolling}"
        );
    }
}

/// `TestValidateDaemonSetUpdate`'s template generation cases (apps/v1
/// carries it in the `deprecated.daemonset.template.generation` annotation).
#[test]
fn daemon_set_template_generation_on_update() {
    let set_generation = |object: &mut Value, generation: &str| {
        object["metadata"] =
            json!({"annotations": {"deprecated.daemonset.template.generation": generation}});
    };
    let mut old = daemon_set_object(json!({"maxUnavailable": 1}));
    set_generation(&mut old, "2");
    let mut same = old.clone();
    assert!(texts(daemon_set_update(&same, &old)).is_empty());
    set_generation(&mut same, "1");
    assert_eq!(
        texts(daemon_set_update(&same, &old)),
        ["spec.templateGeneration: Invalid value: 1: must not be decremented"]
    );
    set_generation(&mut same, "3");
    assert_eq!(
        texts(daemon_set_update(&same, &old)),
        ["spec.templateGeneration: Invalid value: 3: must not be incremented without template update"]
    );
    let mut changed = old.clone();
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    assert_eq!(
        texts(daemon_set_update(&changed, &old)),
        ["spec.templateGeneration: Invalid value: 2: must be incremented upon template update"]
    );
    set_generation(&mut changed, "3");
    assert!(texts(daemon_set_update(&changed, &old)).is_empty());
    // The strategy wraps the largest int64 to the smallest: kube refuses that,
    // once as decremented and once as negative (`ValidateDaemonSetSpec`).
    set_generation(&mut old, &i64::MAX.to_string());
    set_generation(&mut changed, &i64::MIN.to_string());
    assert_eq!(
        texts(daemon_set_update(&changed, &old)),
        [
            format!(
                "spec.templateGeneration: Invalid value: {}: must not be decremented",
                i64::MIN
            ),
            format!(
                "spec.templateGeneration: Invalid value: {}: must be greater than or equal to 0",
                i64::MIN
            ),
        ]
    );
}

/// `ValidatePodTemplateSpecForStatefulSet` and `ValidatePodTemplateSpec`:
/// a template's annotations (`ValidateAnnotations`,
/// `ValidatePodSpecificAnnotations`) at `template.annotations`.
#[test]
fn template_annotations_are_pod_specific_annotations() {
    let mut annotated = template();
    annotated["metadata"]["annotations"] = json!({
        "scheduler.alpha.kubernetes.io/tolerations": "[{\"key\": \"k\", \"operator\": \"Bogus\"}]",
        "kubernetes.io/config.mirror": "x",
        "bad key!": "v"});
    assert_eq!(
        stateful_set_with(json!({"template": annotated.clone()})),
        vec![
            "spec.template.annotations: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            "spec.template.annotations[kubernetes.io/config.mirror]: Invalid value: \"x\": must set spec.nodeName if mirror pod annotation is set",
            "spec.template.annotations.scheduler.alpha.kubernetes.io/tolerations[0].operator: Unsupported value: \"Bogus\": supported values: \"Equal\", \"Exists\"",
        ]
    );
    let errors = deployment_with(
        json!({"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": annotated}),
    );
    assert!(
        errors.contains(&"spec.template.annotations[kubernetes.io/config.mirror]: Invalid value: \"x\": must set spec.nodeName if mirror pod annotation is set".to_string()),
        "{errors:?}"
    );
    assert!(
        errors.contains(&"spec.template.annotations.scheduler.alpha.kubernetes.io/tolerations[0].operator: Unsupported value: \"Bogus\": supported values: \"Equal\", \"Exists\"".to_string()),
        "{errors:?}"
    );
}
