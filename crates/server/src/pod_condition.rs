//! Pod conditions as `pkg/api/pod/util.go` keeps them: `UpdatePodCondition`
//! and `IsPodReady`, shared by the binding and eviction subresources and
//! the disruption controller.

use serde_json::{json, Value};

/// `podutil.UpdatePodCondition` with a condition of `kind` and `status`
/// (and `reason`/`message` when not empty): appended when the pod has
/// none of that type, otherwise replaced, keeping its transition time when
/// the status did not change. Returns whether anything changed.
pub fn update_pod_condition(
    pod: &mut Value,
    kind: &str,
    status: &str,
    reason_and_message: Option<(&str, &str)>,
    now: &str,
) -> bool {
    if !pod.get("status").is_some_and(Value::is_object) {
        pod["status"] = json!({});
    }
    let conditions = &mut pod["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(conditions) = conditions.as_array_mut() else {
        return false;
    };
    let mut condition = json!({
        "type": kind,
        "status": status,
        "lastProbeTime": null,
        "lastTransitionTime": now,
    });
    if let Some((reason, message)) = reason_and_message {
        condition["reason"] = json!(reason);
        condition["message"] = json!(message);
    }
    let existing = conditions
        .iter()
        .position(|condition| condition.get("type").and_then(Value::as_str) == Some(kind));
    match existing {
        None => {
            conditions.push(condition);
            true
        }
        Some(index) => {
            let old = &conditions[index];
            if old.get("status").and_then(Value::as_str) == Some(status) {
                condition["lastTransitionTime"] = old
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or(Value::Null);
            }
            let changed = *old != condition;
            conditions[index] = condition;
            changed
        }
    }
}

/// `podutil.IsPodReady`: the `Ready` condition is `True`.
pub fn is_pod_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|condition| {
            condition.get("type").and_then(Value::as_str) == Some("Ready")
                && condition.get("status").and_then(Value::as_str) == Some("True")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transition_time(pod: &Value, index: usize) -> Value {
        pod["status"]["conditions"][index]["lastTransitionTime"].clone()
    }

    #[test]
    fn conditions_are_appended_or_replaced_as_update_pod_condition_does() {
        let mut pod = json!({"status": {"conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "lastProbeTime": null, "lastTransitionTime": "2020-01-01T00:00:00Z"},
        ]}});
        assert!(update_pod_condition(
            &mut pod,
            "PodScheduled",
            "True",
            None,
            "2021-01-01T00:00:00Z"
        ));
        assert_eq!(
            pod["status"]["conditions"][0],
            json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null,
                   "lastTransitionTime": "2021-01-01T00:00:00Z"})
        );
        // Same status: the transition time stays and nothing changed.
        assert!(!update_pod_condition(
            &mut pod,
            "PodScheduled",
            "True",
            None,
            "2030-01-01T00:00:00Z"
        ));
        assert_eq!(transition_time(&pod, 0), "2021-01-01T00:00:00Z");
        let reason = Some(("EvictionByEvictionAPI", "Eviction API: evicting"));
        assert!(update_pod_condition(
            &mut pod,
            "DisruptionTarget",
            "True",
            reason,
            "2022-01-01T00:00:00Z"
        ));
        assert_eq!(
            pod["status"]["conditions"][1]["reason"],
            "EvictionByEvictionAPI"
        );
        assert!(!is_pod_ready(&pod));
        update_pod_condition(&mut pod, "Ready", "True", None, "2022-01-01T00:00:00Z");
        assert!(is_pod_ready(&pod));
        let mut bare = json!({});
        update_pod_condition(&mut bare, "Ready", "False", None, "2022-01-01T00:00:00Z");
        assert_eq!(bare["status"]["conditions"][0]["type"], "Ready");
    }
}
