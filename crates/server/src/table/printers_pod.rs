//! The pod printer (`printPod`): READY, STATUS (the phase/reason logic with
//! init containers and sidecars), RESTARTS with the last restart's age.

use serde_json::{json, Value};

use super::duration::{human_duration, parse_nanos, since};
use super::format::*;

/// `row.Conditions` of a pod row: Completed once the pod has finished.
pub fn pod_conditions(pod: &Value) -> Option<Value> {
    let (reason, message) = match str_at(pod, &["status", "phase"]) {
        "Succeeded" => ("Succeeded", "The pod has completed successfully."),
        "Failed" => ("Failed", "The pod failed."),
        _ => return None,
    };
    Some(json!([{"type": "Completed", "status": "True", "reason": reason, "message": message}]))
}

/// `podutil.IsRestartableInitContainer`: a sidecar (`restartPolicy: Always`).
fn is_restartable(init: Option<&Value>) -> bool {
    init.is_some_and(|c| str_at(c, &["restartPolicy"]) == "Always")
}

fn has_condition(pod: &Value, kind: &str) -> bool {
    arr_at(pod, &["status", "conditions"])
        .iter()
        .any(|c| str_at(c, &["type"]) == kind && str_at(c, &["status"]) == "True")
}

/// `isPodInitializedConditionTrue`: the first Initialized condition decides.
fn initialized(pod: &Value) -> bool {
    arr_at(pod, &["status", "conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == "Initialized")
        .is_some_and(|c| str_at(c, &["status"]) == "True")
}

/// `lastTerminationState.terminated.finishedAt`, if later than `last`.
fn later_restart(container: &Value, last: &mut Option<i64>) {
    if at(container, &["lastState", "terminated"]).is_some_and(|t| !t.is_null()) {
        if let Some(finished) =
            opt_str(container, &["lastState", "terminated", "finishedAt"]).and_then(parse_nanos)
        {
            if last.is_none_or(|l| l < finished) {
                *last = Some(finished);
            }
        }
    }
}

fn state<'a>(container: &'a Value, which: &str) -> Option<&'a Value> {
    at(container, &["state", which]).filter(|s| !s.is_null())
}

/// `printPod`: Name, Ready, Status, Restarts, Age, IP, Node, Nominated Node, Readiness Gates.
pub fn pod(pod: &Value, now: i64) -> Vec<Value> {
    let init_specs = arr_at(pod, &["spec", "initContainers"]);
    let init_spec = |name: &str| init_specs.iter().find(|c| str_at(c, &["name"]) == name);
    let mut total = arr_at(pod, &["spec", "containers"]).len();
    total += init_specs
        .iter()
        .filter(|c| is_restartable(Some(c)))
        .count();
    let (mut restarts, mut sidecar_restarts, mut ready) = (0i64, 0i64, 0usize);
    let (mut last_restart, mut last_sidecar_restart) = (None, None);

    let phase = str_at(pod, &["status", "phase"]);
    let mut reason = phase.to_string();
    let status_reason = str_at(pod, &["status", "reason"]);
    if !status_reason.is_empty() {
        reason = status_reason.to_string();
    }
    for condition in arr_at(pod, &["status", "conditions"]) {
        if str_at(condition, &["type"]) == "PodScheduled"
            && str_at(condition, &["reason"]) == "SchedulingGated"
        {
            reason = "SchedulingGated".into();
        }
    }

    let mut initializing = false;
    for (index, container) in arr_at(pod, &["status", "initContainerStatuses"])
        .iter()
        .enumerate()
    {
        restarts += int_at(container, &["restartCount"]);
        later_restart(container, &mut last_restart);
        let restartable = is_restartable(init_spec(str_at(container, &["name"])));
        if restartable {
            sidecar_restarts += int_at(container, &["restartCount"]);
            later_restart(container, &mut last_sidecar_restart);
        }
        let terminated = state(container, "terminated");
        let waiting = state(container, "waiting");
        if terminated.is_some_and(|t| int_at(t, &["exitCode"]) == 0) {
            continue;
        } else if restartable && opt_bool(container, &["started"]) == Some(true) {
            if opt_bool(container, &["ready"]) == Some(true) {
                ready += 1;
            }
            continue;
        } else if let Some(terminated) = terminated {
            let why = str_at(terminated, &["reason"]);
            reason = if !why.is_empty() {
                format!("Init:{why}")
            } else if int_at(terminated, &["signal"]) != 0 {
                format!("Init:Signal:{}", int_at(terminated, &["signal"]))
            } else {
                format!("Init:ExitCode:{}", int_at(terminated, &["exitCode"]))
            };
        } else if let Some(why) = waiting
            .map(|w| str_at(w, &["reason"]))
            .filter(|r| !r.is_empty() && *r != "PodInitializing")
        {
            reason = format!("Init:{why}");
        } else {
            reason = format!("Init:{index}/{}", init_specs.len());
        }
        initializing = true;
        break;
    }

    if !initializing || initialized(pod) {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        for container in arr_at(pod, &["status", "containerStatuses"]).iter().rev() {
            restarts += int_at(container, &["restartCount"]);
            later_restart(container, &mut last_restart);
            let waiting_reason = state(container, "waiting")
                .map(|w| str_at(w, &["reason"]))
                .unwrap_or("");
            let terminated = state(container, "terminated");
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_string();
            } else if let Some(terminated) = terminated {
                let why = str_at(terminated, &["reason"]);
                reason = if !why.is_empty() {
                    why.to_string()
                } else if int_at(terminated, &["signal"]) != 0 {
                    format!("Signal:{}", int_at(terminated, &["signal"]))
                } else {
                    format!("ExitCode:{}", int_at(terminated, &["exitCode"]))
                };
            } else if opt_bool(container, &["ready"]) == Some(true)
                && state(container, "running").is_some()
            {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if has_condition(pod, "Ready") {
                "Running"
            } else {
                "NotReady"
            }
            .into();
        }
    }

    if deletion_timestamp(pod).is_some() && status_reason == "NodeLost" {
        reason = "Unknown".into();
    } else if deletion_timestamp(pod).is_some() && phase != "Failed" && phase != "Succeeded" {
        reason = "Terminating".into();
    }

    let restarts_text = match last_restart {
        Some(at) if restarts != 0 => format!("{restarts} ({} ago)", since_nanos(at, now)),
        _ => restarts.to_string(),
    };

    let or_none = |text: &str| {
        if text.is_empty() {
            "<none>".to_string()
        } else {
            text.to_string()
        }
    };
    let pod_ip = arr_at(pod, &["status", "podIPs"])
        .first()
        .map(|ip| str_at(ip, &["ip"]))
        .unwrap_or("");
    let gates = arr_at(pod, &["spec", "readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let conditions = arr_at(pod, &["status", "conditions"]);
        let passing = gates
            .iter()
            .filter(|gate| {
                let kind = str_at(gate, &["conditionType"]);
                conditions
                    .iter()
                    .find(|c| str_at(c, &["type"]) == kind)
                    .is_some_and(|c| str_at(c, &["status"]) == "True")
            })
            .count();
        format!("{passing}/{}", gates.len())
    };
    vec![
        json!(name(pod)),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts_text),
        json!(since(creation_timestamp(pod), now)),
        json!(or_none(pod_ip)),
        json!(or_none(str_at(pod, &["spec", "nodeName"]))),
        json!(or_none(str_at(pod, &["status", "nominatedNodeName"]))),
        json!(readiness_gates),
    ]
}

fn since_nanos(at: i64, now: i64) -> String {
    human_duration(now.saturating_sub(at))
}
