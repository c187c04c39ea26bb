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
