//! What kube 1.34 defaults in the non-core groups, read back by real
//! clients after a create: kube-rs writes an autoscaling/v2 HPA with only
//! `behavior: {scaleDown: {}}` and reads it as v2 (minReplicas, the CPU
//! metric, both generated scaling rules) and as v1 (the behavior annotation
//! with the generated ScaleUp); Jobs, CronJobs, StatefulSets and DaemonSets
//! (template generation annotation, bumped by a template change) as kube
//! returns them; kubectl 1.33 `create -f` then `get -o json` of the same
//! kinds. Needs `kubectl.1.33` (see `common::kubectl_dir`).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{api_status, TestEnv};
use k8s_openapi::api::apps::v1::{DaemonSet, StatefulSet};
use k8s_openapi::api::autoscaling::{v1 as autoscaling_v1, v2 as autoscaling_v2};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use serde_json::{json, Value};

const KUBECTL: &str = "1.33";

fn up_rules() -> Value {
    json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15}]})
}

fn down_rules() -> Value {
    json!({"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]})
}

#[tokio::test]
async fn kube_rs_reads_back_the_autoscaler_defaults_in_both_versions() {
    let env = TestEnv::new("defgr-hpa").await;
    let v2: Api<autoscaling_v2::HorizontalPodAutoscaler> = env.api();
    let v1: Api<autoscaling_v1::HorizontalPodAutoscaler> = env.api();
    let pp = PostParams::default();
    let sent: autoscaling_v2::HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5, "behavior": {"scaleDown": {}}},
    }))
    .unwrap();
    let created = v2.create(&pp, &sent).await.unwrap();
    let read = serde_json::to_value(v2.get("web").await.unwrap()).unwrap();
    assert_eq!(
        serde_json::to_value(&created).unwrap()["spec"],
        read["spec"],
        "the create answers what a read returns"
    );
    assert_eq!(
        read["spec"],
        json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}],
            "behavior": {"scaleUp": up_rules(), "scaleDown": down_rules()}})
    );

    let as_v1 = v1.get("web").await.unwrap();
    let spec = as_v1.spec.clone().unwrap();
    assert_eq!(
        (spec.min_replicas, spec.target_cpu_utilization_percentage),
        (Some(1), Some(80))
    );
    assert_eq!(
        as_v1.annotations()["autoscaling.alpha.kubernetes.io/behavior"],
        r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}"#
    );

    // An autoscaling/v1 write is stored as kube reads it from storage:
    // defaulted at v2, its behavior annotation's ScaleUp generated.
    let from_v1: autoscaling_v1::HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "old", "annotations": {
            "autoscaling.alpha.kubernetes.io/behavior": r#"{"ScaleDown":{"Policies":[{"Type":"Pods","Value":2,"PeriodSeconds":30}]}}"#}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    }))
    .unwrap();
    // Its annotation is validated undefaulted, as kube validates the
    // internal object converted from v1: rules without policies are refused.
    let mut no_policies = from_v1.clone();
    no_policies.metadata.name = Some("no-policies".into());
    no_policies.metadata.annotations = Some(
        [(
            "autoscaling.alpha.kubernetes.io/behavior".to_string(),
            r#"{"ScaleUp":{"SelectPolicy":"Min"}}"#.to_string(),
        )]
        .into(),
    );
    let status = api_status(v1.create(&pp, &no_policies).await.unwrap_err());
    assert_eq!(
        (status.code, status.message.as_str()),
        (422, "HorizontalPodAutoscaler.autoscaling \"no-policies\" is invalid: spec.behavior.scaleUp.policies: Required value: must specify at least one Policy")
    );
    let answered = v1.create(&pp, &from_v1).await.unwrap();
    assert_eq!(answered.spec.unwrap().min_replicas, Some(1));
    let behavior =
        serde_json::to_value(v2.get("old").await.unwrap()).unwrap()["spec"]["behavior"].clone();
    assert_eq!(
        behavior,
        json!({"scaleUp": up_rules(), "scaleDown": {"selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": 2, "periodSeconds": 30}]}})
    );
}

#[tokio::test]
async fn kube_rs_reads_back_workload_defaults() {
    let env = TestEnv::new("defgr-work").await;
    let pp = PostParams::default();
    let container = json!([{"name": "c", "image": "busybox:1"}]);

    let jobs: Api<Job> = env.api();
    let job: Job = serde_json::from_value(json!({"metadata": {"name": "once"},
        "spec": {"backoffLimitPerIndex": 1, "completions": 2, "completionMode": "Indexed",
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
            "template": {"metadata": {"labels": {"app": "once"}},
                "spec": {"restartPolicy": "Never", "containers": container}}}}))
    .unwrap();
    jobs.create(&pp, &job).await.unwrap();
    let job = serde_json::to_value(jobs.get("once").await.unwrap()).unwrap();
    let spec = &job["spec"];
    assert_eq!(
        json!([
            spec["parallelism"],
            spec["backoffLimit"],
            spec["suspend"],
            spec["manualSelector"],
            spec["podReplacementPolicy"],
            spec["podFailurePolicy"]["rules"][0]["onPodConditions"]
        ]),
        json!([1, 2147483647, false, false, "Failed", [{"type": "DisruptionTarget", "status": "True"}]])
    );
    assert_eq!(job["metadata"]["labels"], json!({"app": "once"}));

    let cron_jobs: Api<CronJob> = env.api();
    let cron_job: CronJob = serde_json::from_value(json!({"metadata": {"name": "tick"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {
            "spec": {"restartPolicy": "OnFailure", "containers": container}}}}}}))
    .unwrap();
    cron_jobs.create(&pp, &cron_job).await.unwrap();
    let cron_job = serde_json::to_value(cron_jobs.get("tick").await.unwrap()).unwrap();
    let job_spec = cron_job["spec"]["jobTemplate"]["spec"].as_object().unwrap();
    assert_eq!(job_spec.keys().collect::<Vec<_>>(), ["template"]);
    assert_eq!(cron_job["spec"]["successfulJobsHistoryLimit"], 3);

    let sets: Api<StatefulSet> = env.api();
    let set: StatefulSet = serde_json::from_value(json!({"metadata": {"name": "db"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}, "serviceName": "db",
            "updateStrategy": {"type": "RollingUpdate"},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}],
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": container}}}}))
    .unwrap();
    sets.create(&pp, &set).await.unwrap();
    let set = serde_json::to_value(sets.get("db").await.unwrap()).unwrap();
    assert_eq!(
        set["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate"})
    );
    assert_eq!(
        set["spec"]["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Delete", "whenScaled": "Retain"})
    );
    let claim = &set["spec"]["volumeClaimTemplates"][0];
    assert_eq!(
        (&claim["spec"]["volumeMode"], &claim["status"]),
        (&json!("Filesystem"), &json!({"phase": "Pending"}))
    );

    let daemon_sets: Api<DaemonSet> = env.api();
    let daemon_set: DaemonSet = serde_json::from_value(json!({"metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": container}}}}))
    .unwrap();
    let created = daemon_sets.create(&pp, &daemon_set).await.unwrap();
    let generation = |set: &DaemonSet| {
        (
            set.annotations()["deprecated.daemonset.template.generation"].clone(),
            set.metadata.generation,
        )
    };
    assert_eq!(generation(&created), ("1".to_string(), Some(1)));
    let patched = daemon_sets
        .patch(
            "agent",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"template": {"metadata": {"labels": {"app": "agent", "v": "2"}}}}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(generation(&patched), ("2".to_string(), Some(2)));
    let patched = daemon_sets
        .patch(
            "agent",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"minReadySeconds": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(generation(&patched), ("2".to_string(), Some(3)));

    // An annotation v1's conversion cannot parse is the body's decode error.
    let mut unparsable = daemon_set.clone();
    unparsable.metadata.name = Some("bad".into());
    unparsable.metadata.annotations = Some(
        [(
            "deprecated.daemonset.template.generation".to_string(),
            "one".to_string(),
        )]
        .into(),
    );
    let status = api_status(daemon_sets.create(&pp, &unparsable).await.unwrap_err());
    assert_eq!(
        (status.code, status.message.as_str()),
        (400, r#"strconv.ParseInt: parsing "one": invalid syntax"#)
    );
}

#[tokio::test]
async fn kubectl_creates_and_gets_kubes_defaulted_objects() {
    let env = TestEnv::new("defgr-kubectl").await;
    let ns = env.ns.as_str();
    let manifest = r#"apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 4
  behavior:
    scaleDown: {}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: "busybox:1"}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: c, image: "busybox:1"}]
"#;
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", ns], Some(manifest));
    assert!(status.success(), "{out}{err}");
    let get = |args: &[&str]| -> Value {
        let mut all = vec!["get", "-n", ns, "-o", "json"];
        all.extend_from_slice(args);
        serde_json::from_str(&env.kubectl_ok(KUBECTL, &all)).unwrap()
    };
    let hpa = get(&["horizontalpodautoscalers.v2.autoscaling", "web"]);
    assert_eq!(
        (&hpa["spec"]["minReplicas"], &hpa["spec"]["behavior"]),
        (
            &json!(1),
            &json!({"scaleUp": up_rules(), "scaleDown": down_rules()})
        )
    );
    let hpa_v1 = get(&["horizontalpodautoscalers.v1.autoscaling", "web"]);
    assert!(
        hpa_v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/behavior"]
            .as_str()
            .is_some_and(|text| text
                .starts_with(r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max""#)),
        "{hpa_v1}"
    );
    let job = get(&["job", "once"]);
    let uid = job["metadata"]["uid"].as_str().unwrap();
    assert_eq!(
        job["metadata"]["labels"],
        json!({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "once",
            "controller-uid": uid, "job-name": "once"})
    );
    assert_eq!(
        json!([
            job["spec"]["manualSelector"],
            job["spec"]["podReplacementPolicy"],
            job["spec"]["backoffLimit"]
        ]),
        json!([false, "TerminatingOrFailed", 6])
    );
    let daemon_set = get(&["daemonset", "agent"]);
    assert_eq!(
        daemon_set["metadata"]["annotations"],
        json!({"deprecated.daemonset.template.generation": "1"})
    );
}
