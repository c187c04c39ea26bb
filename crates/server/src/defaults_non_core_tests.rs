//! Defaulting of the non-core groups, case by case against kube 1.34's
//! `pkg/apis/<group>/<version>/defaults_test.go` (autoscaling/v2
//! `TestGenerateScaleUpRules`/`TestGenerateScaleDownRules`, batch/v1
//! `TestSetDefaultJob`/`TestSetDefaultCronJob`, apps/v1
//! `TestSetDefaultStatefulSet`, apiregistration/v1) and the registry
//! strategies' `PrepareForCreate`/`PrepareForUpdate` that set fields
//! (`daemonset/strategy.go`, `job/strategy.go`).

use serde_json::{json, Value};

use crate::registry::ResourceDef;

fn resource(group: &str, version: &str, kind: &str) -> &'static ResourceDef {
    crate::registry::builtin_resources()
        .iter()
        .find(|resource| {
            resource.group == group && resource.version == version && resource.kind == kind
        })
        .unwrap_or_else(|| panic!("no resource {group}/{version} {kind}"))
}

/// `object` defaulted as a write of `resource` defaults it, checked idempotent.
fn defaulted(resource: &ResourceDef, mut object: Value) -> Value {
    crate::defaults::apply(resource, &mut object);
    let mut again = object.clone();
    crate::defaults::apply(resource, &mut again);
    assert_eq!(again, object, "defaulting is idempotent");
    object
}

fn up_rules() -> Value {
    json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15}]})
}

fn down_rules() -> Value {
    json!({"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]})
}

fn autoscaler_v2(behavior: Value) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h", "namespace": "default"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3,
            "metrics": [{"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "Utilization", "averageUtilization": 50}}}],
            "behavior": behavior}})
}

#[test]
fn scale_rules_are_generated_as_kube_generates_them() {
    let hpa = resource("autoscaling", "v2", "HorizontalPodAutoscaler");
    // (behavior sent, behavior stored): kube's cases, on both rules.
    let cases = [
        (
            "default values",
            json!({"scaleUp": null, "scaleDown": null}),
            json!({"scaleUp": up_rules(), "scaleDown": down_rules()}),
        ),
        (
            "an empty behavior",
            json!({}),
            json!({"scaleUp": up_rules(), "scaleDown": down_rules()}),
        ),
        (
            "scale down set, scale up generated",
            json!({"scaleDown": {}}),
            json!({"scaleUp": up_rules(), "scaleDown": down_rules()}),
        ),
        (
            "all parameters are specified",
            json!({"scaleDown": {"stabilizationWindowSeconds": 25, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 2}, {"type": "Percent", "value": 3, "periodSeconds": 4}]}}),
            json!({"scaleUp": up_rules(), "scaleDown": {"stabilizationWindowSeconds": 25, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 2}, {"type": "Percent", "value": 3, "periodSeconds": 4}]}}),
        ),
        (
            "percent policy is specified",
            json!({"scaleDown": {"selectPolicy": "Min", "policies": [{"type": "Percent", "value": 1, "periodSeconds": 2}]}}),
            json!({"scaleUp": up_rules(), "scaleDown": {"selectPolicy": "Min",
                "policies": [{"type": "Percent", "value": 1, "periodSeconds": 2}]}}),
        ),
        (
            "pod policy is specified",
            json!({"scaleUp": {"selectPolicy": "Min", "policies": [{"type": "Pods", "value": 1, "periodSeconds": 2}]}}),
            json!({"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Min",
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 2}]}, "scaleDown": down_rules()}),
        ),
        (
            "percent policy and stabilization window are specified",
            json!({"scaleUp": {"stabilizationWindowSeconds": 25, "policies": [{"type": "Percent", "value": 7, "periodSeconds": 60}]}}),
            json!({"scaleUp": {"stabilizationWindowSeconds": 25, "selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 7, "periodSeconds": 60}]}, "scaleDown": down_rules()}),
        ),
        (
            "an empty policy list is kept (not nil)",
            json!({"scaleUp": {"policies": []}}),
            json!({"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": []},
                "scaleDown": down_rules()}),
        ),
    ];
    for (name, sent, stored) in cases {
        let object = defaulted(hpa, autoscaler_v2(sent));
        assert_eq!(object["spec"]["behavior"], stored, "{name}");
    }
}

#[test]
fn autoscalers_get_min_replicas_metrics_and_no_behavior_unless_set() {
    let v2 = resource("autoscaling", "v2", "HorizontalPodAutoscaler");
    let object = defaulted(
        v2,
        json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3}}),
    );
    assert_eq!(
        object["spec"],
        json!({"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3, "minReplicas": 1,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]})
    );
    let kept = defaulted(v2, autoscaler_v2(Value::Null));
    assert_eq!(kept["spec"]["minReplicas"], 1);
    assert_eq!(kept["spec"]["metrics"][0]["resource"]["name"], "memory");
    assert_eq!(
        kept["spec"]["behavior"],
        Value::Null,
        "a null behavior stays nil"
    );
    // autoscaling/v1's own defaulter sets only minReplicas (the CPU target
    // is the conversion's).
    let v1 = resource("autoscaling", "v1", "HorizontalPodAutoscaler");
    let object = defaulted(
        v1,
        json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3, "minReplicas": 2}}),
    );
    assert_eq!(
        object["spec"],
        json!({"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3, "minReplicas": 2})
    );
    assert_eq!(defaulted(v1, json!({"spec": {}}))["spec"]["minReplicas"], 1);
}

#[test]
fn a_v1_autoscaler_is_stored_and_read_back_defaulted_at_v2() {
    let v1 = resource("autoscaling", "v1", "HorizontalPodAutoscaler");
    let sent = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h", "namespace": "default", "annotations": {
            "autoscaling.alpha.kubernetes.io/behavior": r#"{"ScaleDown":{"Policies":[{"Type":"Pods","Value":2,"PeriodSeconds":30}]}}"#}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3}});
    let object = defaulted(v1, sent);
    let stored = crate::versions::storage_form(&object, v1).expect("converts");
    assert_eq!(
        stored["spec"]["behavior"],
        json!({"scaleUp": up_rules(), "scaleDown": {"selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": 2, "periodSeconds": 30}]}})
    );
    assert_eq!(stored["spec"]["minReplicas"], 1);
    let mut answered = object.clone();
    crate::versions::as_read_back(&mut answered, v1).expect("converts");
    assert_eq!(answered["spec"]["targetCPUUtilizationPercentage"], 80);
    assert_eq!(
        answered["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/behavior"],
        r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":2,"PeriodSeconds":30}],"Tolerance":null}}"#
    );
}

fn job_with(spec: Value) -> Value {
    let mut object = json!({"metadata": {"name": "j"},
        "spec": {"template": {"metadata": {"labels": {"t": "1"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i:1"}]}}}});
    if let (Some(target), Some(extra)) = (object["spec"].as_object_mut(), spec.as_object()) {
        for (field, value) in extra {
            target.insert(field.clone(), value.clone());
        }
    }
    object
}

#[test]
fn jobs_default_as_set_defaults_job() {
    let jobs = resource("batch", "v1", "Job");
    let settled = |object: &Value| {
        let spec = &object["spec"];
        json!({"completions": spec["completions"], "parallelism": spec["parallelism"],
            "backoffLimit": spec["backoffLimit"], "completionMode": spec["completionMode"],
            "suspend": spec["suspend"], "podReplacementPolicy": spec["podReplacementPolicy"],
            "manualSelector": spec["manualSelector"]})
    };
    // (case, spec sent, the defaulted fields).
    let cases = [
        (
            "nothing set",
            json!({}),
            json!({"completions": 1, "parallelism": 1, "backoffLimit": 6,
            "completionMode": "NonIndexed", "suspend": false,
            "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": false}),
        ),
        (
            "parallelism only",
            json!({"parallelism": 3}),
            json!({"completions": null, "parallelism": 3,
            "backoffLimit": 6, "completionMode": "NonIndexed", "suspend": false,
            "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": false}),
        ),
        (
            "completions only",
            json!({"completions": 5}),
            json!({"completions": 5, "parallelism": 1,
            "backoffLimit": 6, "completionMode": "NonIndexed", "suspend": false,
            "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": false}),
        ),
        (
            "backoffLimitPerIndex",
            json!({"completions": 2, "completionMode": "Indexed", "backoffLimitPerIndex": 1}),
            json!({"completions": 2, "parallelism": 1, "backoffLimit": 2147483647,
            "completionMode": "Indexed", "suspend": false,
            "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": false}),
        ),
        (
            "pod failure policy",
            json!({"podFailurePolicy": {"rules": []}}),
            json!({"completions": 1, "parallelism": 1, "backoffLimit": 6,
            "completionMode": "NonIndexed", "suspend": false,
            "podReplacementPolicy": "Failed", "manualSelector": false}),
        ),
        (
            "all set",
            json!({"completions": 2, "parallelism": 2, "backoffLimit": 0, "completionMode": "Indexed",
            "suspend": true, "podReplacementPolicy": "Failed", "manualSelector": true}),
            json!({"completions": 2, "parallelism": 2, "backoffLimit": 0, "completionMode": "Indexed",
            "suspend": true, "podReplacementPolicy": "Failed", "manualSelector": true}),
        ),
    ];
    for (name, spec, expected) in cases {
        assert_eq!(
            settled(&defaulted(jobs, job_with(spec))),
            expected,
            "{name}"
        );
    }

    let object = defaulted(
        jobs,
        job_with(json!({"podFailurePolicy": {"rules": [{"action": "Ignore",
            "onPodConditions": [{"type": "DisruptionTarget"}, {"type": "X", "status": "False"}]}]}})),
    );
    assert_eq!(
        object["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"],
        json!([{"type": "DisruptionTarget", "status": "True"}, {"type": "X", "status": "False"}])
    );
    // The job takes its template's labels when it has none.
    assert_eq!(object["metadata"]["labels"], json!({"t": "1"}));
    let mut labelled = job_with(json!({}));
    labelled["metadata"]["labels"] = json!({"mine": "x"});
    assert_eq!(
        defaulted(jobs, labelled)["metadata"]["labels"],
        json!({"mine": "x"})
    );
}

#[test]
fn cron_job_templates_get_no_job_defaults() {
    let cron_jobs = resource("batch", "v1", "CronJob");
    let object = defaulted(
        cron_jobs,
        json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i:1"}]}}}}}}),
    );
    let spec = &object["spec"];
    assert_eq!(
        (
            &spec["concurrencyPolicy"],
            &spec["suspend"],
            &spec["successfulJobsHistoryLimit"],
            &spec["failedJobsHistoryLimit"]
        ),
        (&json!("Allow"), &json!(false), &json!(3), &json!(1))
    );
    let job_spec = spec["jobTemplate"]["spec"].as_object().expect("job spec");
    let mut fields: Vec<&str> = job_spec.keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(fields, ["podFailurePolicy", "template"]);
    assert_eq!(
        job_spec["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
        "True"
    );
    assert_eq!(job_spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
}

#[test]
fn stateful_sets_default_as_set_defaults_stateful_set() {
    let sets = resource("apps", "v1", "StatefulSet");
    let with = |spec: Value| {
        let mut object = json!({"spec": {"template": {"spec": {"containers": []}}}});
        if let (Some(target), Some(extra)) = (object["spec"].as_object_mut(), spec.as_object()) {
            for (field, value) in extra {
                target.insert(field.clone(), value.clone());
            }
        }
        defaulted(sets, object)["spec"].clone()
    };
    let spec = with(json!({}));
    assert_eq!(
        (
            &spec["replicas"],
            &spec["podManagementPolicy"],
            &spec["revisionHistoryLimit"],
            &spec["updateStrategy"],
            &spec["persistentVolumeClaimRetentionPolicy"]
        ),
        (
            &json!(1),
            &json!("OrderedReady"),
            &json!(10),
            &json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
            &json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        )
    );
    // A type sent without rollingUpdate gets none; one sent with it gets its partition.
    assert_eq!(
        with(json!({"updateStrategy": {"type": "RollingUpdate"}}))["updateStrategy"],
        json!({"type": "RollingUpdate"})
    );
    assert_eq!(
        with(json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {}}}))
            ["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(
        with(json!({"updateStrategy": {"type": "OnDelete"}}))["updateStrategy"],
        json!({"type": "OnDelete"})
    );
    assert_eq!(
        with(json!({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}))
            ["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Delete", "whenScaled": "Retain"})
    );
    assert_eq!(
        with(
            json!({"volumeClaimTemplates": [{"metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]})
        )["volumeClaimTemplates"],
        json!([{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"}}])
    );
}

#[test]
fn empty_strategy_types_are_defaulted_as_go_reads_them() {
    let deployments = resource("apps", "v1", "Deployment");
    let object = defaulted(
        deployments,
        json!({"spec": {"strategy": {"type": ""}, "template": {"spec": {"containers": []}}}}),
    );
    assert_eq!(
        object["spec"]["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    let daemon_sets = resource("apps", "v1", "DaemonSet");
    let object = defaulted(
        daemon_sets,
        json!({"spec": {"updateStrategy": {"type": "OnDelete"}, "template": {"spec": {"containers": []}}}}),
    );
    assert_eq!(
        object["spec"]["updateStrategy"],
        json!({"type": "OnDelete"})
    );
}

#[test]
fn api_service_references_default_their_port() {
    let services = resource("apiregistration.k8s.io", "v1", "APIService");
    let object = defaulted(
        services,
        json!({"spec": {"group": "g", "version": "v1", "service": {"namespace": "n", "name": "s"}}}),
    );
    assert_eq!(object["spec"]["service"]["port"], 443);
    let local = defaulted(services, json!({"spec": {"group": "g", "version": "v1"}}));
    assert_eq!(local["spec"].get("service"), None);
}

#[test]
fn volume_attachments_default_their_inline_volume_sources() {
    let attachments = resource("storage.k8s.io", "v1", "VolumeAttachment");
    let object = defaulted(
        attachments,
        json!({"spec": {"attacher": "a", "nodeName": "n", "source": {"inlineVolumeSpec": {
            "hostPath": {"path": "/data"},
            "rbd": {"monitors": ["m"], "image": "i", "pool": ""},
            "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0},
            "azureDisk": {"diskName": "d", "diskURI": "u", "fsType": "xfs"},
            "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}}}}}}),
    );
    assert_eq!(
        object["spec"]["source"]["inlineVolumeSpec"],
        json!({"hostPath": {"path": "/data", "type": ""},
            "rbd": {"monitors": ["m"], "image": "i", "pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"},
            "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0, "iscsiInterface": "default"},
            "azureDisk": {"diskName": "d", "diskURI": "u", "fsType": "xfs", "cachingMode": "ReadWrite",
                "kind": "Shared", "readOnly": false},
            "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"},
                "storageMode": "ThinProvisioned", "fsType": "xfs"}})
    );
    let named = defaulted(
        attachments,
        json!({"spec": {"attacher": "a", "nodeName": "n", "source": {"persistentVolumeName": "pv"}}}),
    );
    assert_eq!(
        named["spec"]["source"],
        json!({"persistentVolumeName": "pv"})
    );
}
