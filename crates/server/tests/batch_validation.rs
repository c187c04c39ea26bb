//! Job and CronJob rules kubectl users meet: a CronJob schedule parsed as
//! robfig/cron parses it, a time zone that does not exist, and a Job's pod
//! failure policy.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{api_status, TestEnv};
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, PostParams};
use serde_json::json;

#[tokio::test]
async fn kubectl_create_cronjob_checks_the_schedule() {
    let env = TestEnv::new("cronsched").await;
    let create = |name: &str, schedule: &str| {
        env.kubectl(
            "1.33",
            &[
                "create",
                "cronjob",
                name,
                "-n",
                &env.ns,
                "--image=busybox",
                "--schedule",
                schedule,
            ],
        )
    };
    let (status, _, err) = create("bad", "61 * * * *");
    assert!(!status.success());
    assert!(
        err.contains(r#"spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61"#),
        "{err}"
    );
    let (status, _, err) = create("short", "* * * *");
    assert!(!status.success());
    assert!(
        err.contains("expected exactly 5 fields, found 4: [* * * *]"),
        "{err}"
    );
    let (status, out, err) = create("good", "*/5 * * * MON-FRI");
    assert!(status.success(), "{out}{err}");
    let (status, out, err) = create("hourly", "@hourly");
    assert!(status.success(), "{out}{err}");
}

#[tokio::test]
async fn kube_rs_job_with_a_bad_pod_failure_policy_is_refused() {
    let env = TestEnv::new("jobpolicy").await;
    let jobs: Api<Job> = env.api();
    let job: Job = serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {
            "podFailurePolicy": {"rules": [
                {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0]}},
            ]},
            "template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox"}]}}},
    }))
    .unwrap();
    let status = api_status(jobs.create(&PostParams::default(), &job).await.unwrap_err());
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "Job.batch \"j\" is invalid: spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator"
    );
    let mut fixed = job.clone();
    fixed.spec.as_mut().unwrap().pod_failure_policy = serde_json::from_value(json!({"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1, 42]}},
    ]}))
    .unwrap();
    jobs.create(&PostParams::default(), &fixed).await.unwrap();
}

#[tokio::test]
async fn kube_rs_job_managed_by_is_a_domain_prefixed_path_and_immutable() {
    let env = TestEnv::new("jobmanagedby").await;
    let jobs: Api<Job> = env.api();
    let job_managed_by = |manager: &str| -> Job {
        serde_json::from_value(json!({
            "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"managedBy": manager, "suspend": true,
                "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}]}}},
        }))
        .unwrap()
    };
    let refused = jobs
        .create(&PostParams::default(), &job_managed_by("my controller"))
        .await
        .unwrap_err();
    let status = api_status(refused);
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "Job.batch \"j\" is invalid: spec.managedBy: Invalid value: \"my controller\": must be a domain-prefixed path (such as \"acme.io/foo\")"
    );
    let created = jobs
        .create(&PostParams::default(), &job_managed_by("example.com/foo"))
        .await
        .unwrap();
    let mut changed = created.clone();
    changed.spec.as_mut().unwrap().managed_by = Some("example.com/bar".to_string());
    let status = api_status(
        jobs.replace("j", &PostParams::default(), &changed)
            .await
            .unwrap_err(),
    );
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "Job.batch \"j\" is invalid: spec.managedBy: Invalid value: \"example.com/bar\": field is immutable"
    );
}

#[tokio::test]
async fn kube_rs_suspended_job_that_never_started_may_change_its_node_selector() {
    let env = TestEnv::new("jobsched").await;
    let jobs: Api<Job> = env.api();
    let job = |name: &str, suspend: bool| -> Job {
        serde_json::from_value(json!({
            "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"suspend": suspend,
                "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}]}}},
        }))
        .unwrap()
    };
    for (name, suspend) in [("suspended", true), ("running", false)] {
        let mut created = jobs
            .create(&PostParams::default(), &job(name, suspend))
            .await
            .unwrap();
        let template = created
            .spec
            .as_mut()
            .unwrap()
            .template
            .spec
            .as_mut()
            .unwrap();
        template.node_selector = Some([("disk".to_string(), "ssd".to_string())].into());
        let replaced = jobs.replace(name, &PostParams::default(), &created).await;
        if suspend {
            replaced.unwrap();
        } else {
            let status = api_status(replaced.unwrap_err());
            assert_eq!(status.code, 422);
            assert_eq!(
                status.message,
                "Job.batch \"running\" is invalid: spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"
            );
        }
    }
}
