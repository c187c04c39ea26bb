//! The workload strategies' `WarningsOnCreate`/`WarningsOnUpdate` (kube
//! 1.34 `pkg/registry/{apps,batch,core}/*/strategy.go`, `pkg/api/job`):
//! a name that is no DNS label (it becomes pod names and hostnames), the
//! pod template's warnings, and each kind's own.

use serde_json::Value;

use super::{app_armor, pod_warnings};
use crate::validation::field;

/// `job.WarningsForJobSpec`'s soft limits for Indexed jobs.
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
const PARALLELISM_SOFT_LIMIT: i64 = 10_000;

fn name_warning(group: &str, kind: &str, object: &Value) -> Option<String> {
    let named = matches!(
        (group, kind),
        ("apps", "Deployment" | "ReplicaSet")
            | ("", "ReplicationController")
            | ("batch", "Job" | "CronJob")
    );
    let messages = crate::names::dns1123_label(crate::object::name(object));
    (named && !messages.is_empty()).then(|| {
        format!(
            "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [{}]",
            messages.join(" ")
        )
    })
}

/// `job.WarningsForJobSpec` of the job spec at `pointer` (field path `path`).
fn job_spec(object: &Value, pointer: &str, path: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    let spec = object.pointer(pointer).unwrap_or(&Value::Null);
    if field::str_at(spec, "completionMode") == "Indexed" {
        let completions = field::int_at(spec, "completions").unwrap_or(0);
        let parallelism = field::int_at(spec, "parallelism").unwrap_or(0);
        if completions > COMPLETIONS_SOFT_LIMIT && parallelism > PARALLELISM_SOFT_LIMIT {
            warnings.push(format!("{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"));
        }
    }
    warnings.extend(pod_warnings::template_warnings(
        object,
        &format!("{pointer}/template"),
        &format!("{path}.template"),
    ));
    warnings
}

/// The template part: `WarningsForJobSpec` for jobs and cron jobs,
/// `GetWarningsForPodTemplate` for the others.
fn template(group: &str, kind: &str, object: &Value) -> Vec<String> {
    match (group, kind) {
        ("batch", "Job") => job_spec(object, "/spec", "spec"),
        ("batch", "CronJob") => job_spec(object, "/spec/jobTemplate/spec", "spec.jobTemplate.spec"),
        _ => match app_armor::pod_template_location(group, kind) {
            Some((pointer, path)) => pod_warnings::template_warnings(object, pointer, path),
            None => Vec::new(),
        },
    }
}

/// `WarningsOnCreate` of the workload kinds (empty for other kinds).
pub(super) fn on_create(group: &str, kind: &str, object: &Value) -> Vec<String> {
    let mut warnings: Vec<String> = name_warning(group, kind, object).into_iter().collect();
    warnings.extend(template(group, kind, object));
    if (group, kind) == ("apps", "StatefulSet") {
        warnings.extend(pod_warnings::stateful_set_warnings(object, ""));
    }
    warnings
}

/// `WarningsOnUpdate` of the workload kinds: the template only when the
/// generation moved, then each kind's own.
pub(super) fn on_update(group: &str, kind: &str, old: &Value, new: &Value) -> Vec<String> {
    let generation = |object: &Value| object.pointer("/metadata/generation").cloned();
    let mut warnings = Vec::new();
    if generation(old) != generation(new) {
        warnings = template(group, kind, new);
    }
    match (group, kind) {
        // kube's update path names the claim spec `.Spec`.
        ("apps", "StatefulSet") => {
            warnings.extend(pod_warnings::stateful_set_warnings(new, ".Spec"))
        }
        ("batch", "CronJob") => {
            let schedule = new
                .pointer("/spec/schedule")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if schedule.contains("TZ") {
                // kube names the field `spec.spec.schedule`.
                warnings.push("cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details".into());
            }
        }
        _ => {}
    }
    warnings
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{on_create, on_update};

    #[test]
    fn workloads_warn_on_names_jobs_and_schedules() {
        let job = json!({"metadata": {"name": "a.b"}, "spec": {"completionMode": "Indexed", "completions": 100_001, "parallelism": 10_001,
            "template": {"spec": {"terminationGracePeriodSeconds": -1}}}});
        assert_eq!(
            on_create("batch", "Job", &job),
            [
                "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
                "spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail",
                "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
            ]
        );
        let cron_job = |generation: i64| {
            json!({"metadata": {"name": "c", "generation": generation}, "spec": {"schedule": "TZ=UTC 0 * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {"terminationGracePeriodSeconds": -1}}}}}})
        };
        assert_eq!(
            on_create("batch", "CronJob", &cron_job(1)),
            ["spec.jobTemplate.spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"]
        );
        assert_eq!(
            on_update("batch", "CronJob", &cron_job(1), &cron_job(1)),
            ["cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"]
        );
        assert_eq!(
            on_update("batch", "CronJob", &cron_job(1), &cron_job(2)).len(),
            2
        );
        // StatefulSets and DaemonSets get no name warning.
        let stateful_set = json!({"metadata": {"name": "a.b"}, "spec": {"template": {"spec": {}}}});
        assert!(on_create("apps", "StatefulSet", &stateful_set).is_empty());
        assert!(on_create("apps", "DaemonSet", &stateful_set).is_empty());
        assert_eq!(on_create("apps", "Deployment", &stateful_set).len(), 1);
    }
}
