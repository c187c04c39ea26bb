//! Workload printers (apps, batch, autoscaling, policy) of
//! `pkg/printers/internalversion/printers.go`.

use serde_json::{json, Value};

use super::duration::{human_duration, parse_nanos, since};
use super::format::*;

fn template_containers(obj: &Value) -> (String, String) {
    container_cells(arr_at(obj, &["spec", "template", "spec", "containers"]))
}

/// `spec.replicas`, which apps/v1 defaulting sets to 1.
fn desired_replicas(obj: &Value) -> i64 {
    opt_int(obj, &["spec", "replicas"]).unwrap_or(1)
}

/// `printDeployment`: Name, Ready, Up-to-date, Available, Age, Containers, Images, Selector.
pub fn deployment(obj: &Value, now: i64) -> Vec<Value> {
    let (names, images) = template_containers(obj);
    let selector = match label_selector_string(at(obj, &["spec", "selector"])) {
        Ok(text) => text,
        Err(()) => "<invalid>".into(),
    };
    vec![
        json!(name(obj)),
        json!(format!(
            "{}/{}",
            int_at(obj, &["status", "readyReplicas"]),
            desired_replicas(obj)
        )),
        json!(int_at(obj, &["status", "updatedReplicas"])),
        json!(int_at(obj, &["status", "availableReplicas"])),
        json!(since(creation_timestamp(obj), now)),
        json!(names),
        json!(images),
        json!(selector),
    ]
}

/// `printReplicaSet`.
pub fn replica_set(obj: &Value, now: i64) -> Vec<Value> {
    let (names, images) = template_containers(obj);
    vec![
        json!(name(obj)),
        json!(desired_replicas(obj)),
        json!(int_at(obj, &["status", "replicas"])),
        json!(int_at(obj, &["status", "readyReplicas"])),
        json!(since(creation_timestamp(obj), now)),
        json!(names),
        json!(images),
        json!(format_label_selector(at(obj, &["spec", "selector"]))),
    ]
}

/// `printStatefulSet`: Name, Ready, Age, Containers, Images.
pub fn stateful_set(obj: &Value, now: i64) -> Vec<Value> {
    let (names, images) = template_containers(obj);
    vec![
        json!(name(obj)),
        json!(format!(
            "{}/{}",
            int_at(obj, &["status", "readyReplicas"]),
            desired_replicas(obj)
        )),
        json!(since(creation_timestamp(obj), now)),
        json!(names),
        json!(images),
    ]
}

/// `printDaemonSet`.
pub fn daemon_set(obj: &Value, now: i64) -> Vec<Value> {
    let (names, images) = template_containers(obj);
    let status = |field: &str| json!(int_at(obj, &["status", field]));
    vec![
        json!(name(obj)),
        status("desiredNumberScheduled"),
        status("currentNumberScheduled"),
        status("numberReady"),
        status("updatedNumberScheduled"),
        status("numberAvailable"),
        json!(format_labels(obj_at(
            obj,
            &["spec", "template", "spec", "nodeSelector"]
        ))),
        json!(since(creation_timestamp(obj), now)),
        json!(names),
        json!(images),
        json!(format_label_selector(at(obj, &["spec", "selector"]))),
    ]
}

/// `printControllerRevision`: the controller as `kind.group/name`.
pub fn controller_revision(obj: &Value, now: i64) -> Vec<Value> {
    let owner = arr_at(obj, &["metadata", "ownerReferences"])
        .iter()
        .find(|o| opt_bool(o, &["controller"]) == Some(true));
    let controller = match owner {
        None => "<none>".to_string(),
        Some(owner) => {
            let api_version = str_at(owner, &["apiVersion"]);
            let group = api_version
                .rsplit_once('/')
                .map(|(group, _)| group)
                .unwrap_or("");
            let kind = str_at(owner, &["kind"]);
            let owner_name = str_at(owner, &["name"]);
            match (group, kind) {
                ("", "") => owner_name.to_string(),
                ("", kind) => format!("{}/{owner_name}", kind.to_lowercase()),
                (group, kind) => {
                    format!("{}/{owner_name}", format!("{kind}.{group}").to_lowercase())
                }
            }
        }
    };
    vec![
        json!(name(obj)),
        json!(controller),
        json!(int_at(obj, &["revision"])),
        json!(since(creation_timestamp(obj), now)),
    ]
}

/// `hasJobCondition`: the first condition of the type decides.
fn job_condition(obj: &Value, kind: &str) -> bool {
    arr_at(obj, &["status", "conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == kind)
        .is_some_and(|c| str_at(c, &["status"]) == "True")
}

/// `printJob`: Name, Status, Completions, Duration, Age, Containers, Images, Selector.
pub fn job(obj: &Value, now: i64) -> Vec<Value> {
    let succeeded = int_at(obj, &["status", "succeeded"]);
    let completions = match opt_int(obj, &["spec", "completions"]) {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match opt_int(obj, &["spec", "parallelism"]).unwrap_or(0) {
            parallelism if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let start = opt_str(obj, &["status", "startTime"]).and_then(parse_nanos);
    let completion = opt_str(obj, &["status", "completionTime"]).and_then(parse_nanos);
    let duration = match (start, completion) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now.saturating_sub(start)),
        (Some(start), Some(end)) => human_duration(end.saturating_sub(start)),
    };
    let status = if job_condition(obj, "Complete") {
        "Complete"
    } else if job_condition(obj, "Failed") {
        "Failed"
    } else if deletion_timestamp(obj).is_some() {
        "Terminating"
    } else if job_condition(obj, "Suspended") {
        "Suspended"
    } else if job_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let (names, images) = template_containers(obj);
    vec![
        json!(name(obj)),
        json!(status),
        json!(completions),
        json!(duration),
        json!(since(creation_timestamp(obj), now)),
        json!(names),
        json!(images),
        json!(format_label_selector(at(obj, &["spec", "selector"]))),
    ]
}

/// `printCronJob`: Name, Schedule, Timezone, Suspend, Active, Last Schedule, Age, Containers, Images, Selector.
pub fn cron_job(obj: &Value, now: i64) -> Vec<Value> {
    let last_schedule = match opt_str(obj, &["status", "lastScheduleTime"]) {
        Some(time) => since(Some(time), now),
        None => "<none>".into(),
    };
    let template = at(obj, &["spec", "jobTemplate", "spec"])
        .cloned()
        .unwrap_or(Value::Null);
    let (names, images) = container_cells(arr_at(&template, &["template", "spec", "containers"]));
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["spec", "schedule"])),
        json!(opt_str(obj, &["spec", "timeZone"]).unwrap_or("<none>")),
        json!(bool_ptr(Some(
            opt_bool(obj, &["spec", "suspend"]).unwrap_or(false)
        ))),
        json!(len_at(obj, &["status", "active"])),
        json!(last_schedule),
        json!(since(creation_timestamp(obj), now)),
        json!(names),
        json!(images),
        json!(format_label_selector(at(&template, &["selector"]))),
    ]
}

/// HPA metrics as the internal type holds them: autoscaling/v2 `metrics`
/// verbatim; autoscaling/v1 converted as kube converts it (`versions`: the
/// CPU target and the metrics of the round-trip annotations); none at all
/// means the 80% CPU utilization kube's storage defaulting puts there.
fn hpa_metrics(obj: &Value) -> (Vec<Value>, Vec<Value>) {
    if obj.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1") {
        let mut internal = obj.clone();
        if crate::versions::convert(&mut internal, "autoscaling/v2").is_ok() {
            return hpa_metrics(&internal);
        }
    }
    let specs = arr_at(obj, &["spec", "metrics"]);
    let statuses = arr_at(obj, &["status", "currentMetrics"]).to_vec();
    if !specs.is_empty() {
        return (specs.to_vec(), statuses);
    }
    let target = opt_int(obj, &["spec", "targetCPUUtilizationPercentage"]).unwrap_or(80);
    let spec = json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}});
    let statuses = match opt_int(obj, &["status", "currentCPUUtilizationPercentage"]) {
        Some(current) => vec![
            json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": current}}}),
        ],
        None => statuses,
    };
    (vec![spec], statuses)
}

/// `formatHPAMetrics`: at most two targets, then "+ N more...".
fn format_hpa_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".into();
    }
    let mut list = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        let status_of = |source: &str| {
            statuses
                .get(index)
                .and_then(|s| s.get(source))
                .filter(|s| !s.is_null())
        };
        let unknown = || "<unknown>".to_string();
        let text = match str_at(spec, &["type"]) {
            source_type @ ("External" | "Object") => {
                let source = if source_type == "External" {
                    "external"
                } else {
                    "object"
                };
                let target = at(spec, &[source, "target"])
                    .cloned()
                    .unwrap_or(Value::Null);
                let status = status_of(source);
                if let Some(average) = at(&target, &["averageValue"]).filter(|v| !v.is_null()) {
                    let current = status
                        .and_then(|s| at(s, &["current", "averageValue"]))
                        .filter(|v| !v.is_null())
                        .map_or_else(unknown, |v| quantity_string(Some(v)));
                    format!("{current}/{} (avg)", quantity_string(Some(average)))
                } else {
                    let current = status.map_or_else(unknown, |s| {
                        opt_quantity_string(at(s, &["current", "value"]))
                    });
                    format!("{current}/{}", opt_quantity_string(at(&target, &["value"])))
                }
            }
            "Pods" => {
                let current = status_of("pods").map_or_else(unknown, |s| {
                    opt_quantity_string(at(s, &["current", "averageValue"]))
                });
                format!(
                    "{current}/{}",
                    opt_quantity_string(at(spec, &["pods", "target", "averageValue"]))
                )
            }
            source_type @ ("Resource" | "ContainerResource") => {
                let source = if source_type == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let resource = str_at(spec, &[source, "name"]);
                let status = status_of(source);
                if let Some(average) =
                    at(spec, &[source, "target", "averageValue"]).filter(|v| !v.is_null())
                {
                    let current = status.map_or_else(unknown, |s| {
                        opt_quantity_string(at(s, &["current", "averageValue"]))
                    });
                    format!("{resource}: {current}/{}", quantity_string(Some(average)))
                } else {
                    let current = status
                        .and_then(|s| opt_int(s, &["current", "averageUtilization"]))
                        .map_or_else(unknown, |u| format!("{u}%"));
                    let target = opt_int(spec, &[source, "target", "averageUtilization"])
                        .map_or_else(|| "<auto>".to_string(), |u| format!("{u}%"));
                    format!("{resource}: {current}/{target}")
                }
            }
            _ => "<unknown type>".to_string(),
        };
        list.push(text);
    }
    const MAX: usize = 2;
    let count = list.len();
    if count > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(", "), count - MAX);
    }
    list.join(", ")
}

/// `printHorizontalPodAutoscaler`: Name, Reference, Targets, MinPods, MaxPods, Replicas, Age.
pub fn horizontal_pod_autoscaler(obj: &Value, now: i64) -> Vec<Value> {
    let reference = format!(
        "{}/{}",
        str_at(obj, &["spec", "scaleTargetRef", "kind"]),
        str_at(obj, &["spec", "scaleTargetRef", "name"])
    );
    let (specs, statuses) = hpa_metrics(obj);
    let min_pods = opt_int(obj, &["spec", "minReplicas"])
        .unwrap_or(1)
        .to_string();
    vec![
        json!(name(obj)),
        json!(reference),
        json!(format_hpa_metrics(&specs, &statuses)),
        json!(min_pods),
        json!(int_at(obj, &["spec", "maxReplicas"])),
        json!(int_at(obj, &["status", "currentReplicas"])),
        json!(since(creation_timestamp(obj), now)),
    ]
}

/// `printPodDisruptionBudget`: Name, Min Available, Max Unavailable, Allowed Disruptions, Age.
pub fn pod_disruption_budget(obj: &Value, now: i64) -> Vec<Value> {
    let int_or_na = |field: &str| {
        at(obj, &["spec", field])
            .filter(|v| !v.is_null())
            .map_or_else(|| "N/A".to_string(), int_or_string)
    };
    vec![
        json!(name(obj)),
        json!(int_or_na("minAvailable")),
        json!(int_or_na("maxUnavailable")),
        json!(int_at(obj, &["status", "disruptionsAllowed"])),
        json!(since(creation_timestamp(obj), now)),
    ]
}
