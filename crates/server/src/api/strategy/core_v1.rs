//! What the core/v1 strategies set on create and status update beyond the
//! status reset: a pod's QoS class and scheduling-gated condition
//! (`pkg/registry/core/pod/strategy.go`, `PrepareForCreate`,
//! `applySchedulingGatedCondition`), a PersistentVolume's phase
//! transition time (`pkg/registry/core/persistentvolume/strategy.go`) and
//! the Node's dropped dynamic kubelet config (`pkg/registry/core/node/strategy.go`).

use serde_json::{json, Map, Value};

/// `podStrategy.PrepareForCreate`'s status: Pending, `qos.GetPodQOS` of the
/// pod as decoded (so defaulted: a container's missing requests are its
/// limits, `SetDefaults_Pod`), and the PodScheduled condition of a pod with
/// scheduling gates.
pub(super) fn pod_create_status(spec: Option<&Value>) -> Value {
    let mut status = json!({"phase": "Pending", "qosClass": qos_class(spec)});
    let gated = spec
        .and_then(|spec| spec.get("schedulingGates"))
        .and_then(Value::as_array)
        .is_some_and(|gates| !gates.is_empty());
    if gated {
        // `podutil.UpdatePodCondition` stamps the transition time; the probe
        // time is a zero metav1.Time, written as null.
        status["conditions"] = json!([{
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": null,
            "lastTransitionTime": crate::go::time::now_rfc3339(),
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
        }]);
    }
    status
}

/// `mutatePodAffinity` and `mutateTopologySpreadConstraints` (gates
/// MatchLabelKeysInPodAffinity and MatchLabelKeysInPodTopologySpread{,SelectorMerge},
/// on in 1.34): the pod's values of a term's `matchLabelKeys` (`In`) and
/// `mismatchLabelKeys` (`NotIn`) join its label selector's expressions.
pub(super) fn merge_label_keys(pod: &mut Value) {
    let labels = pod
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(affinity) = spec.get_mut("affinity").and_then(Value::as_object_mut) {
        for kind in ["podAffinity", "podAntiAffinity"] {
            let Some(kind) = affinity.get_mut(kind).and_then(Value::as_object_mut) else {
                continue;
            };
            let preferred = kind
                .get_mut("preferredDuringSchedulingIgnoredDuringExecution")
                .and_then(Value::as_array_mut);
            for weighted in preferred.into_iter().flatten() {
                if let Some(term) = weighted.get_mut("podAffinityTerm") {
                    merge_term(term, &labels, true);
                }
            }
            let required = kind
                .get_mut("requiredDuringSchedulingIgnoredDuringExecution")
                .and_then(Value::as_array_mut);
            for term in required.into_iter().flatten() {
                merge_term(term, &labels, true);
            }
        }
    }
    let constraints = spec
        .get_mut("topologySpreadConstraints")
        .and_then(Value::as_array_mut);
    for constraint in constraints.into_iter().flatten() {
        merge_term(constraint, &labels, false);
    }
}

/// `applyMatchLabelKeysAndMismatchLabelKeys` / `applyMatchLabelKeys`: nothing
/// for a term without keys or without a selector (a nil selector matches none).
fn merge_term(term: &mut Value, labels: &Map<String, Value>, mismatch_too: bool) {
    let keys = |name: &str| -> Vec<String> {
        term.get(name)
            .and_then(Value::as_array)
            .map(|keys| {
                keys.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let matching = keys("matchLabelKeys");
    let mismatching = if mismatch_too {
        keys("mismatchLabelKeys")
    } else {
        Vec::new()
    };
    if matching.is_empty() && mismatching.is_empty() {
        return;
    }
    let Some(selector) = term.get_mut("labelSelector").and_then(Value::as_object_mut) else {
        return;
    };
    let mut added = Vec::new();
    for (keys, operator) in [(matching, "In"), (mismatching, "NotIn")] {
        for key in keys {
            if let Some(value) = labels.get(&key) {
                added.push(json!({"key": key, "operator": operator, "values": [value]}));
            }
        }
    }
    if added.is_empty() {
        return;
    }
    let expressions = selector
        .entry("matchExpressions")
        .or_insert_with(|| json!([]));
    if !expressions.is_array() {
        *expressions = json!([]);
    }
    if let Some(expressions) = expressions.as_array_mut() {
        expressions.extend(added);
    }
}

/// The QoS class of the pod whose spec is `spec`, its containers' requests
/// defaulted from their limits and its pod-level requests defaulted first
/// (only the resources and init containers' restart policies are copied).
fn qos_class(spec: Option<&Value>) -> &'static str {
    let resources_of = |field: &str| -> Vec<Value> {
        let containers = spec
            .and_then(|spec| spec.get(field))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        containers
            .iter()
            .map(|container| {
                let resources = container.get("resources");
                let list = |name: &str| -> Map<String, Value> {
                    resources
                        .and_then(|resources| resources.get(name))
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default()
                };
                let limits = list("limits");
                let mut requests = list("requests");
                for (name, quantity) in &limits {
                    requests
                        .entry(name.clone())
                        .or_insert_with(|| quantity.clone());
                }
                let mut view = json!({"resources": {"requests": requests, "limits": limits}});
                if let Some(policy) = container.get("restartPolicy") {
                    view["restartPolicy"] = policy.clone();
                }
                view
            })
            .collect()
    };
    let mut view = json!({"spec": {
        "containers": resources_of("containers"),
        "initContainers": resources_of("initContainers"),
    }});
    if let Some(pod_level) = spec.and_then(|spec| spec.get("resources")) {
        view["spec"]["resources"] = pod_level.clone();
    }
    // The pod-level requests default from the pod-level limits and the
    // containers (`SetDefaults_Pod`, PodLevelResources) before QoS is read.
    if let Some(view_spec) = view.get_mut("spec").and_then(Value::as_object_mut) {
        crate::defaults::pod_level_resources::apply(view_spec);
    }
    crate::validation::pod_qos::compute_pod_qos(&view)
}

/// `persistentvolumeStrategy.PrepareForCreate`: a fresh status, Pending
/// since now.
pub(super) fn persistent_volume_create_status() -> Value {
    json!({"phase": "Pending", "lastPhaseTransitionTime": crate::go::time::now_rfc3339()})
}

/// `persistentvolumeStatusStrategy.PrepareForUpdate`: the transition time
/// is kept while the phase stays, and is now when the phase changes and the
/// client did not set a new one.
pub(super) fn persistent_volume_phase_transition(old: &Value, new: &mut Value) {
    let old_status = old.get("status");
    let old_phase = old_status.and_then(|status| status.get("phase")).cloned();
    let old_time = old_status
        .and_then(|status| status.get("lastPhaseTransitionTime"))
        .filter(|time| !time.is_null())
        .cloned();
    let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    let new_time = status
        .get("lastPhaseTransitionTime")
        .filter(|time| !time.is_null())
        .cloned();
    if status.get("phase").cloned() == old_phase {
        if new_time.is_none() {
            if let Some(time) = old_time {
                status.insert("lastPhaseTransitionTime".into(), time);
            }
        }
    } else if new_time.is_none() || new_time == old_time {
        status.insert(
            "lastPhaseTransitionTime".into(),
            json!(crate::go::time::now_rfc3339()),
        );
    }
}

/// `dropDisabledFields` / `nodeStatusStrategy.PrepareForUpdate`: the removed
/// dynamic kubelet config, `spec.configSource` and `status.config`, is
/// dropped (the callers keep it only while the stored node has it, so
/// `validateNodeConfigSourceSpec`/`validateNodeConfigStatus` never see a new one).
pub(super) fn drop_node_config(node: &mut Map<String, Value>, spec: bool, status: bool) {
    for (wanted, part, field) in [(spec, "spec", "configSource"), (status, "status", "config")] {
        if let Some(part) = node.get_mut(part).and_then(Value::as_object_mut) {
            if wanted {
                part.remove(field);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_is_computed_on_the_defaulted_pod() {
        assert_eq!(
            qos_class(Some(&json!({"containers": [{"name": "a"}]}))),
            "BestEffort"
        );
        // Requests default to the limits; 1000m equals 1.
        let spec = json!({"containers": [{"resources": {
            "limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m"}}}]});
        assert_eq!(qos_class(Some(&spec)), "Guaranteed");
        let spec = json!({"containers": [{"resources": {"limits": {"cpu": "1"}}}]});
        assert_eq!(qos_class(Some(&spec)), "Burstable");
        let spec = json!({"containers": [{"resources": {"requests": {"cpu": "1"}}}]});
        assert_eq!(qos_class(Some(&spec)), "Burstable");
    }

    #[test]
    fn qos_reads_the_defaulted_pod_level_resources() {
        // Pod-level limits only: the requests default to them, Guaranteed.
        let spec = json!({"resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
                          "containers": [{"name": "a"}]});
        assert_eq!(qos_class(Some(&spec)), "Guaranteed");
        // The requests aggregated from a container are below the limits.
        let spec = json!({"resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
                          "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]});
        assert_eq!(qos_class(Some(&spec)), "Burstable");
        // A sidecar's request counts into the aggregate: 1 + 1 = the limit.
        let spec = json!({"resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
                          "initContainers": [{"name": "s", "restartPolicy": "Always",
                              "resources": {"requests": {"cpu": "1"}}}],
                          "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]});
        assert_eq!(qos_class(Some(&spec)), "Guaranteed");
    }

    #[test]
    fn gated_pods_start_unscheduled() {
        let status = pod_create_status(Some(&json!({"schedulingGates": [{"name": "g"}]})));
        let condition = &status["conditions"][0];
        assert_eq!(condition["type"], "PodScheduled");
        assert_eq!(condition["reason"], "SchedulingGated");
        assert_eq!(condition["status"], "False");
        assert!(condition["lastTransitionTime"].is_string());
        let ungated = pod_create_status(Some(&json!({"schedulingGates": []})));
        assert_eq!(
            ungated,
            json!({"phase": "Pending", "qosClass": "BestEffort"})
        );
    }

    #[test]
    fn label_keys_join_the_selectors_on_create() {
        let mut pod = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}, "spec": {
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "zone", "labelSelector": {"matchLabels": {"x": "y"}},
                 "matchLabelKeys": ["app", "absent"], "mismatchLabelKeys": ["tier"]},
                {"topologyKey": "zone", "matchLabelKeys": ["app"]}]}},
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}, "matchLabelKeys": ["app"]}]}});
        merge_label_keys(&mut pod);
        let terms = &pod["spec"]["affinity"]["podAntiAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"];
        assert_eq!(
            terms[0]["labelSelector"],
            json!({"matchLabels": {"x": "y"}, "matchExpressions": [
                {"key": "app", "operator": "In", "values": ["web"]},
                {"key": "tier", "operator": "NotIn", "values": ["front"]}]})
        );
        assert!(
            terms[1].get("labelSelector").is_none(),
            "a nil selector stays nil"
        );
        assert_eq!(
            pod["spec"]["topologySpreadConstraints"][0]["labelSelector"],
            json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]})
        );
    }

    #[test]
    fn volume_phase_transitions_are_stamped() {
        let old = json!({"status": {"phase": "Pending", "lastPhaseTransitionTime": "2020-01-01T00:00:00Z"}});
        let mut same = json!({"status": {"phase": "Pending"}});
        persistent_volume_phase_transition(&old, &mut same);
        assert_eq!(
            same["status"]["lastPhaseTransitionTime"],
            "2020-01-01T00:00:00Z"
        );
        let mut bound = json!({"status": {"phase": "Bound", "lastPhaseTransitionTime": "2020-01-01T00:00:00Z"}});
        persistent_volume_phase_transition(&old, &mut bound);
        assert_ne!(
            bound["status"]["lastPhaseTransitionTime"],
            "2020-01-01T00:00:00Z"
        );
        let mut chosen = json!({"status": {"phase": "Bound", "lastPhaseTransitionTime": "2021-01-01T00:00:00Z"}});
        persistent_volume_phase_transition(&old, &mut chosen);
        assert_eq!(
            chosen["status"]["lastPhaseTransitionTime"],
            "2021-01-01T00:00:00Z"
        );
    }
    #[test]
    fn the_dynamic_kubelet_config_is_dropped() {
        let node = json!({"spec": {"configSource": {"configMap": {}}, "unschedulable": true}, "status": {"config": {}, "phase": "Running"}});
        let mut map = node.as_object().cloned().unwrap_or_default();
        drop_node_config(&mut map, true, false);
        assert_eq!(
            Value::Object(map.clone()),
            json!({"spec": {"unschedulable": true}, "status": {"config": {}, "phase": "Running"}})
        );
        drop_node_config(&mut map, true, true);
        assert_eq!(
            Value::Object(map),
            json!({"spec": {"unschedulable": true}, "status": {"phase": "Running"}})
        );
    }
}
