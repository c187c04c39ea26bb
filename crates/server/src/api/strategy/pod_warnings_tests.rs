//! Cases of kube's `TestPodTemplateWarnings`/`TestWarnings`
//! (`pkg/api/pod/warnings_test.go`) and the AppArmor template warnings.

use serde_json::{json, Value};

use super::super::app_armor::deprecation_warning;
use super::{claim_spec_warnings, pod_create_warnings, stateful_set_warnings};

const KEY: &str = "container.apparmor.security.beta.kubernetes.io/";

/// A workload's create warnings, named so that the name warns of nothing.
fn pod_template_warnings(group: &str, kind: &str, object: &Value) -> Vec<String> {
    let mut named = object.clone();
    if let Some(map) = named.as_object_mut() {
        map.insert("metadata".into(), json!({"name": "w"}));
    }
    super::super::workload_warnings::on_create(group, kind, &named)
}

#[test]
fn pod_templates_warn_for_annotations_without_fields() {
    let template = |annotations: Value, spec: Value| json!({"metadata": {"annotations": annotations}, "spec": spec});
    let annotations = json!({format!("{KEY}init"): "unconfined", format!("{KEY}a"): "runtime/default",
                             format!("{KEY}b"): "localhost/x", format!("{KEY}gone"): "unconfined"});
    let spec = json!({"initContainers": [{"name": "init"}],
                      "containers": [{"name": "a"},
                                     {"name": "b", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}]});
    let deployment = json!({"spec": {"template": template(annotations.clone(), spec.clone())}});
    let expected = |prefix: &str| {
        vec![
            deprecation_warning(&format!("{prefix}."), &format!("{KEY}init")),
            deprecation_warning(&format!("{prefix}."), &format!("{KEY}a")),
        ]
    };
    assert_eq!(
        pod_template_warnings("apps", "Deployment", &deployment),
        expected("spec.template")
    );
    assert_eq!(
        expected("spec.template")[0],
        "spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/init]: \
         deprecated since v1.30; use the \"appArmorProfile\" field instead"
    );
    let cron_job = json!({"spec": {"jobTemplate": {"spec": {"template": template(annotations.clone(), spec.clone())}}}});
    assert_eq!(
        pod_template_warnings("batch", "CronJob", &cron_job),
        expected("spec.jobTemplate.spec.template")
    );
    let pod_template = json!({"template": template(annotations.clone(), spec.clone())});
    assert_eq!(
        pod_template_warnings("", "PodTemplate", &pod_template),
        expected("template")
    );
    // A pod-level profile covers every container.
    let mut covered = spec.clone();
    covered["securityContext"] = json!({"appArmorProfile": {"type": "RuntimeDefault"}});
    let deployment = json!({"spec": {"template": template(annotations.clone(), covered)}});
    assert!(pod_template_warnings("apps", "Deployment", &deployment).is_empty());
    // Kinds without a template, and templates without annotations.
    assert!(pod_template_warnings("", "ConfigMap", &deployment).is_empty());
    let bare = json!({"spec": {"template": {"spec": spec}}});
    assert!(pod_template_warnings("apps", "ReplicaSet", &bare).is_empty());
    assert!(pod_template_warnings("", "ReplicationController", &json!({"spec": {}})).is_empty());
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "p"}, "spec": spec})
}

#[test]
fn a_pod_name_that_is_no_dns_label_warns_as_a_hostname() {
    assert_eq!(
        pod_create_warnings(&json!({"metadata": {"name": "a.b"}, "spec": {}})),
        ["metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"]
    );
    assert!(pod_create_warnings(&pod(json!({}))).is_empty());
}

#[test]
fn deprecated_node_labels_annotations_and_volumes() {
    let warnings = pod_create_warnings(&json!({
        "metadata": {"name": "p", "annotations": {
            "scheduler.alpha.kubernetes.io/critical-pod": "true",
            "seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}},
        "spec": {
            "nodeSelector": {"beta.kubernetes.io/arch": "amd64"},
            "affinity": {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "beta.kubernetes.io/os", "operator": "Exists"}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": {"matchExpressions": [{"key": "failure-domain.beta.kubernetes.io/zone", "operator": "Exists"}]}}]}},
            "topologySpreadConstraints": [{"topologyKey": "failure-domain.beta.kubernetes.io/region", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
            "volumes": [
                {"name": "a", "gitRepo": {"repository": "x"}},
                {"name": "b", "storageos": {"volumeName": "x"}},
                {"name": "c", "ephemeral": {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "200m"}}}}}},
                {"name": "d", "rbd": {"image": "x"}}
            ]
        }
    }));
    assert_eq!(
        warnings,
        [
            r#"spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead"#,
            r#"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" instead"#,
            r#"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#,
            r#"spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/region is deprecated since v1.17; use "topology.kubernetes.io/region" instead"#,
            "spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod",
            r#"metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead"#,
            "spec.volumes[0].gitRepo: deprecated in v1.11",
            "spec.volumes[1].storageOS: deprecated in v1.22, non-functional in v1.25+",
            r#"spec.volumes[2].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: fractional byte value "200m" is invalid, must be an integer"#,
            "spec.volumes[3].rbd: deprecated in v1.28, non-functional in v1.31+",
            r#"metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead"#,
        ]
    );
}

#[test]
fn duplicates_fractions_env_ports_and_grace_period() {
    let warnings = pod_create_warnings(&pod(json!({
        "hostAliases": [{"ip": "1.1.1.1"}, {"ip": "1.1.1.1"}],
        "imagePullSecrets": [{"name": "s"}, {"name": "s"}, {"name": ""}],
        "overhead": {"memory": "1m"},
        "terminationGracePeriodSeconds": -1,
        "initContainers": [{"name": "i", "ports": [{"containerPort": 80, "protocol": "TCP"}]}],
        "containers": [{
            "name": "c",
            "resources": {"limits": {"memory": "1.5"}, "requests": {"ephemeral-storage": "10m"}},
            "env": [{"name": "A", "value": "x"}, {"name": "A", "value": "$(A)y"}, {"name": "A", "value": "z"}],
            "ports": [
                {"containerPort": 80, "protocol": "TCP"},
                {"containerPort": 80, "protocol": "TCP", "hostPort": 8080},
                {"containerPort": 81, "protocol": "TCP", "hostPort": 81, "hostIP": "1.2.3.4"},
                {"containerPort": 81, "protocol": "TCP", "hostPort": 81},
                {"name": "h", "containerPort": 82, "protocol": "UDP", "hostIP": "1.2.3.4"}
            ]
        }],
        "affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone"}],
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": {"topologyKey": "zone"}}]}}
    })));
    assert_eq!(
        warnings,
        [
            r#"spec.hostAliases[1].ip: duplicate ip "1.1.1.1""#,
            r#"spec.imagePullSecrets[1].name: duplicate name "s""#,
            r#"spec.imagePullSecrets[2].name: invalid empty name """#,
            r#"spec.overhead[memory]: fractional byte value "1m" is invalid, must be an integer"#,
            r#"spec.containers[0].resources.limits[memory]: fractional byte value "1.5" is invalid, must be an integer"#,
            r#"spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value "10m" is invalid, must be an integer"#,
            r#"spec.containers[0].env[2]: hides previous definition of "A", which may be dropped when using apply"#,
            "spec.containers[0].ports[0]: duplicate port definition with spec.initContainers[0].ports[0]",
            "spec.containers[0].ports[1]: overlapping port definition with spec.initContainers[0].ports[0]",
            "spec.containers[0].ports[1]: overlapping port definition with spec.containers[0].ports[0]",
            "spec.containers[0].ports[3]: dangerously ambiguous port definition with spec.containers[0].ports[2]",
            "spec.containers[0].ports[4]: hostIP set without hostPort: {Name:h HostPort:0 ContainerPort:82 Protocol:UDP HostIP:1.2.3.4}",
            "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod",
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector: a null labelSelector results in matching no pod",
        ]
    );
}

/// Cases of `TestWarningsForOverlappingVirtualPaths`.
#[test]
fn overlapping_volume_paths() {
    let warnings = pod_create_warnings(&pod(json!({"volumes": [
        {"name": "cm", "configMap": {"name": "conf", "items": [
            {"key": "a", "path": "path"}, {"key": "b", "path": "path/path2"}, {"key": "c", "path": "other/"}, {"key": "d", "path": "other"}]}},
        {"name": "proj", "projected": {"sources": [
            {"secret": {"name": "s", "items": [{"key": "a", "path": "token"}]}},
            {"serviceAccountToken": {"path": "token"}},
            {}
        ]}}
    ]})));
    assert_eq!(
        warnings,
        [
            r#"volume "cm" (ConfigMap "conf"): overlapping paths: "path/path2" with "path""#,
            r#"volume "cm" (ConfigMap "conf"): overlapping paths: "other" with "other""#,
            r#"volume "proj" (Projected ServiceAccountToken): overlapping paths: "token" with "token""#,
            r#"volume "proj" (Projected) has no sources provided"#,
        ]
    );
}

#[test]
fn templates_warn_with_their_path_and_claims_on_storage() {
    let deployment = json!({"spec": {"template": {"metadata": {}, "spec": {
        "nodeSelector": {"beta.kubernetes.io/os": "linux"}, "containers": [{"name": "c"}]}}}});
    assert_eq!(
        pod_template_warnings("apps", "Deployment", &deployment),
        [
            r#"spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead"#
        ]
    );
    let mut warnings = Vec::new();
    claim_spec_warnings(
        &json!({"resources": {"requests": {"storage": "1Gi"}, "limits": {"storage": "1500m"}}}),
        "spec",
        &mut warnings,
    );
    assert_eq!(
        warnings,
        [
            r#"spec.resources.limits[storage]: fractional byte value "1500m" is invalid, must be an integer"#
        ]
    );
}

/// `TestStatefulSetStrategy`'s warnings: claim templates (kube's paths on
/// create and update differ) and a negative revision history limit.
#[test]
fn stateful_sets_warn_on_claims_and_history() {
    let stateful_set = json!({"spec": {"revisionHistoryLimit": -2, "volumeClaimTemplates": [
        {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "100m"}}}}]}});
    assert_eq!(
        stateful_set_warnings(&stateful_set, ""),
        [
            r#"spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "100m" is invalid, must be an integer"#,
            "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended",
        ]
    );
    assert_eq!(
        stateful_set_warnings(&stateful_set, ".Spec")[0],
        r#"spec.volumeClaimTemplates[0].Spec.resources.requests[storage]: fractional byte value "100m" is invalid, must be an integer"#
    );
    assert!(stateful_set_warnings(&json!({"spec": {"revisionHistoryLimit": 0}}), "").is_empty());
}
