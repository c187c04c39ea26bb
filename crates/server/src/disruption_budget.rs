//! PodDisruptionBudget status as kube computes it, shared by the eviction
//! subresource (`api/eviction.rs`) and the `disruption` controller
//! (`controllers/disruption.rs`): `pkg/apis/policy/helper`
//! (`UpdateDisruptionAllowedCondition`, `ConditionsAreUpToDate`),
//! apimachinery's `meta.SetStatusCondition`, and the pure parts of
//! `pkg/controller/disruption/disruption.go` (`getExpectedPodCount`,
//! `buildDisruptedPodMap`, `countHealthyPods`, `updatePdbStatus`).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use serde_json::{json, Map, Value};

use crate::label_selector::{LabelSelectorError, Selector};

/// `policy.DisruptionAllowedCondition` and its reasons.
pub const DISRUPTION_ALLOWED: &str = "DisruptionAllowed";
pub const SUFFICIENT_PODS: &str = "SufficientPods";
pub const INSUFFICIENT_PODS: &str = "InsufficientPods";
pub const SYNC_FAILED: &str = "SyncFailed";
/// `DeletionTimeout`: how long an evicted pod counts as disrupted.
pub const DELETION_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a budget's status cannot be computed (the controller's `failSafe`
/// records the text as the condition's message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    #[error(transparent)]
    Selector(#[from] LabelSelectorError),
    #[error("invalid value for IntOrString: {0}")]
    IntOrPercent(String),
    #[error("found no controllers for pod {0:?}")]
    NoController(String),
}

fn int(value: Option<&Value>) -> i64 {
    value.and_then(Value::as_i64).unwrap_or(0)
}

/// `meta.SetStatusCondition` on `object.status.conditions` (metav1.Condition).
pub fn set_status_condition(
    object: &mut Value,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    observed_generation: i64,
    now: &str,
) {
    if !object.get("status").is_some_and(Value::is_object) {
        object["status"] = json!({});
    }
    let conditions = &mut object["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(conditions) = conditions.as_array_mut() else {
        return;
    };
    let existing = conditions
        .iter_mut()
        .find(|condition| condition.get("type").and_then(Value::as_str) == Some(kind));
    let Some(existing) = existing else {
        let mut condition = json!({
            "type": kind,
            "status": status,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        });
        if observed_generation != 0 {
            condition["observedGeneration"] = json!(observed_generation);
        }
        conditions.push(condition);
        return;
    };
    if existing.get("status").and_then(Value::as_str) != Some(status) {
        existing["status"] = json!(status);
        existing["lastTransitionTime"] = json!(now);
    }
    existing["reason"] = json!(reason);
    existing["message"] = json!(message);
    match existing.as_object_mut() {
        Some(map) if observed_generation == 0 => {
            map.remove("observedGeneration");
        }
        _ => existing["observedGeneration"] = json!(observed_generation),
    }
}

/// `UpdateDisruptionAllowedCondition`.
pub fn update_disruption_allowed_condition(budget: &mut Value, now: &str) {
    let status = budget.get("status");
    let observed = int(status.and_then(|status| status.get("observedGeneration")));
    let allowed = int(status.and_then(|status| status.get("disruptionsAllowed")));
    let (condition, reason) = if allowed > 0 {
        ("True", SUFFICIENT_PODS)
    } else {
        ("False", INSUFFICIENT_PODS)
    };
    set_status_condition(
        budget,
        DISRUPTION_ALLOWED,
        condition,
        reason,
        "",
        observed,
        now,
    );
}

/// `ConditionsAreUpToDate`.
fn conditions_are_up_to_date(budget: &Value, generation: i64) -> bool {
    let status = budget.get("status");
    let Some(condition) = status
        .and_then(|status| status.get("conditions"))
        .and_then(Value::as_array)
        .and_then(|conditions| {
            conditions.iter().find(|condition| {
                condition.get("type").and_then(Value::as_str) == Some(DISRUPTION_ALLOWED)
            })
        })
    else {
        return false;
    };
    if int(status.and_then(|status| status.get("observedGeneration"))) != generation {
        return false;
    }
    let field = |name: &str| condition.get(name).and_then(Value::as_str);
    if int(status.and_then(|status| status.get("disruptionsAllowed"))) > 0 {
        field("status") == Some("True") && field("reason") == Some(SUFFICIENT_PODS)
    } else {
        field("status") == Some("False") && field("reason") == Some(INSUFFICIENT_PODS)
    }
}

/// A budget's `spec.selector` (a missing one selects nothing).
pub fn budget_selector(budget: &Value) -> Result<Option<Selector>, LabelSelectorError> {
    match budget.pointer("/spec/selector").filter(|s| !s.is_null()) {
        None => Ok(None),
        Some(selector) => Selector::parse(selector).map(Some),
    }
}

/// `intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)`.
fn scaled_value(value: &Value, total: i64) -> Result<i64, BudgetError> {
    if let Some(number) = value.as_i64() {
        return Ok(number);
    }
    let Some(text) = value.as_str() else {
        return Err(BudgetError::IntOrPercent(
            "invalid type: neither int nor percentage".into(),
        ));
    };
    let Some(percent) = text.strip_suffix('%') else {
        return Err(BudgetError::IntOrPercent(
            "invalid type: string is not a percentage".into(),
        ));
    };
    let percent: i64 = percent.parse().map_err(|_| {
        BudgetError::IntOrPercent(format!(
            "invalid value {}: strconv.Atoi: parsing {}: invalid syntax",
            crate::go::strconv::quote(text),
            crate::go::strconv::quote(percent)
        ))
    })?;
    Ok((percent as f64 * total as f64 / 100.0).ceil() as i64)
}

/// kube's finders: a pod controller's (uid, scale), `None` when no finder
/// knows it; the second argument is the pod's namespace.
pub type ScaleFinder<'a> = dyn Fn(&ControllerRef<'_>, &str) -> Option<(String, i64)> + 'a;

/// The controller of a pod, as its `ownerReferences` name it.
pub struct ControllerRef<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    pub uid: &'a str,
}

/// `metav1.GetControllerOf`.
pub fn controller_of(object: &Value) -> Option<ControllerRef<'_>> {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|reference| reference.get("controller").and_then(Value::as_bool) == Some(true))
        .map(|reference| {
            let field = |name: &str| reference.get(name).and_then(Value::as_str).unwrap_or("");
            ControllerRef {
                api_version: field("apiVersion"),
                kind: field("kind"),
                name: field("name"),
                uid: field("uid"),
            }
        })
}

/// `getExpectedScale`: the sum of the scales of the pods' controllers;
/// `scale_of` is the finders' answer for one controller (its uid and
/// scale), `None` when no finder knows it. Pods without a controller are
/// skipped (kube reports them as unmanaged).
fn expected_scale(pods: &[Value], scale_of: &ScaleFinder) -> Result<i64, BudgetError> {
    let mut scales: BTreeMap<String, i64> = BTreeMap::new();
    for pod in pods {
        let Some(controller) = controller_of(pod) else {
            continue;
        };
        if scales.contains_key(controller.uid) {
            continue;
        }
        let namespace = crate::object::namespace(pod);
        match scale_of(&controller, namespace) {
            Some((uid, scale)) => {
                scales.insert(uid, scale);
            }
            None => {
                return Err(BudgetError::NoController(
                    crate::object::name(pod).to_string(),
                ))
            }
        }
    }
    Ok(scales.values().sum())
}

/// `getExpectedPodCount`: (expectedCount, desiredHealthy).
fn expected_pod_count(
    budget: &Value,
    pods: &[Value],
    scale_of: &ScaleFinder,
) -> Result<(i64, i64), BudgetError> {
    let spec = budget.get("spec");
    let field = |name: &str| {
        spec.and_then(|spec| spec.get(name))
            .filter(|v| !v.is_null())
    };
    if let Some(max_unavailable) = field("maxUnavailable") {
        let expected = expected_scale(pods, scale_of)?;
        let max_unavailable = scaled_value(max_unavailable, expected)?;
        return Ok((expected, (expected - max_unavailable).max(0)));
    }
    if let Some(min_available) = field("minAvailable") {
        if let Some(number) = min_available.as_i64() {
            return Ok((pods.len() as i64, number));
        }
        let expected = expected_scale(pods, scale_of)?;
        return Ok((expected, scaled_value(min_available, expected)?));
    }
    Ok((0, 0))
}

fn parse_time(text: &str) -> Option<SystemTime> {
    crate::go::time::parse_system_time(text)
}

/// The pods the budget's status counts on, and what it becomes.
#[derive(Debug)]
pub struct Computed {
    /// The new `status` (kube's `PodDisruptionBudgetStatus`), conditions kept.
    pub status: Value,
    /// When the next disrupted pod's grace ends (a recheck is due then).
    pub recheck_after: Option<Duration>,
}

/// `trySync` without its writes: the budget's status from the pods its
/// selector matches (`pods`), `None` when the stored status is up to date.
pub fn compute_status(
    budget: &Value,
    pods: &[Value],
    scale_of: &ScaleFinder,
    now: SystemTime,
    now_text: &str,
) -> Result<Option<Computed>, BudgetError> {
    let (expected, desired) = expected_pod_count(budget, pods, scale_of)?;
    let stored = budget.get("status");
    let stored_disrupted = stored
        .and_then(|status| status.get("disruptedPods"))
        .and_then(Value::as_object);
    // buildDisruptedPodMap
    let mut disrupted = Map::new();
    let mut recheck_after: Option<Duration> = None;
    let deleting = |pod: &Value| !crate::object::meta_str(pod, "deletionTimestamp").is_empty();
    for pod in pods {
        if deleting(pod) {
            continue;
        }
        let name = crate::object::name(pod);
        let Some(at) = stored_disrupted.and_then(|pods| pods.get(name)) else {
            continue;
        };
        let Some(expected_deletion) = at
            .as_str()
            .and_then(parse_time)
            .map(|at| at + DELETION_TIMEOUT)
        else {
            continue;
        };
        if let Ok(left) = expected_deletion.duration_since(now) {
            recheck_after = Some(recheck_after.map_or(left, |other| other.min(left)));
            disrupted.insert(name.to_string(), at.clone());
        }
    }
    // countHealthyPods
    let healthy = pods
        .iter()
        .filter(|pod| !deleting(pod))
        .filter(|pod| !disrupted.contains_key(crate::object::name(pod)))
        .filter(|pod| crate::pod_condition::is_pod_ready(pod))
        .count() as i64;
    // updatePdbStatus
    let mut allowed = healthy - desired;
    if expected <= 0 || allowed <= 0 {
        allowed = 0;
    }
    let generation = int(budget.pointer("/metadata/generation"));
    let field = |name: &str| int(stored.and_then(|status| status.get(name)));
    let stored_disrupted_pods = stored_disrupted.cloned().unwrap_or_default();
    if field("currentHealthy") == healthy
        && field("desiredHealthy") == desired
        && field("expectedPods") == expected
        && field("disruptionsAllowed") == allowed
        && stored_disrupted_pods == disrupted
        && field("observedGeneration") == generation
        && conditions_are_up_to_date(budget, generation)
    {
        return Ok(None);
    }
    let mut status = json!({
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "disruptionsAllowed": allowed,
    });
    if !disrupted.is_empty() {
        status["disruptedPods"] = Value::Object(disrupted);
    }
    if generation != 0 {
        status["observedGeneration"] = json!(generation);
    }
    if let Some(conditions) = stored.and_then(|status| status.get("conditions")) {
        status["conditions"] = conditions.clone();
    }
    let mut updated = json!({ "status": status });
    update_disruption_allowed_condition(&mut updated, now_text);
    Ok(Some(Computed {
        status: updated["status"].take(),
        recheck_after,
    }))
}

/// `failSafe`: no disruption allowed, and why.
pub fn fail_safe_status(budget: &Value, error: &BudgetError, now: &str) -> Value {
    let mut updated = json!({ "status": budget.get("status").cloned().unwrap_or(json!({})) });
    if !updated["status"].is_object() {
        updated["status"] = json!({});
    }
    updated["status"]["disruptionsAllowed"] = json!(0);
    let observed = int(updated["status"].get("observedGeneration"));
    set_status_condition(
        &mut updated,
        DISRUPTION_ALLOWED,
        "False",
        SYNC_FAILED,
        &error.to_string(),
        observed,
        now,
    );
    updated["status"].take()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready_pod(name: &str, ready: bool) -> Value {
        json!({
            "metadata": {"name": name, "namespace": "ns", "labels": {"app": "web"}},
            "status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": if ready { "True" } else { "False" }},
            ]},
        })
    }

    fn no_scale(_: &ControllerRef<'_>, _: &str) -> Option<(String, i64)> {
        None
    }

    const NOW: &str = "2026-01-01T00:00:00Z";

    fn now() -> SystemTime {
        parse_time(NOW).unwrap()
    }

    #[test]
    fn min_available_counts_ready_pods() {
        let budget = json!({
            "metadata": {"name": "b", "generation": 1},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
        });
        let pods = [
            ready_pod("a", true),
            ready_pod("b", true),
            ready_pod("c", false),
        ];
        let computed = compute_status(&budget, &pods, &no_scale, now(), NOW)
            .unwrap()
            .unwrap();
        let status = computed.status;
        assert_eq!(status["currentHealthy"], 2);
        assert_eq!(status["desiredHealthy"], 2);
        assert_eq!(status["expectedPods"], 3);
        assert_eq!(status["disruptionsAllowed"], 0);
        assert_eq!(status["observedGeneration"], 1);
        assert_eq!(
            status["conditions"][0],
            json!({"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods",
                   "message": "", "observedGeneration": 1, "lastTransitionTime": NOW})
        );
        // Written back, the same pods change nothing.
        let mut stored = budget.clone();
        stored["status"] = status;
        assert!(compute_status(&stored, &pods, &no_scale, now(), NOW)
            .unwrap()
            .is_none());
        // A third ready pod allows one disruption.
        let pods = [
            ready_pod("a", true),
            ready_pod("b", true),
            ready_pod("c", true),
        ];
        let status = compute_status(&stored, &pods, &no_scale, now(), NOW)
            .unwrap()
            .unwrap()
            .status;
        assert_eq!(status["disruptionsAllowed"], 1);
        assert_eq!(status["conditions"][0]["reason"], "SufficientPods");
    }

    #[test]
    fn percentages_and_max_unavailable_use_the_controllers_scale() {
        let mut pod = ready_pod("a", true);
        pod["metadata"]["ownerReferences"] = json!([
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1", "controller": true}
        ]);
        let scale = |controller: &ControllerRef<'_>, _: &str| {
            (controller.name == "rs").then(|| ("u1".to_string(), 4))
        };
        let budget = json!({"metadata": {"generation": 1}, "spec": {"maxUnavailable": "50%", "selector": {}}});
        let status = compute_status(&budget, &[pod.clone()], &scale, now(), NOW)
            .unwrap()
            .unwrap()
            .status;
        assert_eq!(
            (
                status["expectedPods"].as_i64(),
                status["desiredHealthy"].as_i64()
            ),
            (Some(4), Some(2))
        );
        let budget =
            json!({"metadata": {"generation": 1}, "spec": {"minAvailable": "30%", "selector": {}}});
        let status = compute_status(&budget, &[pod.clone()], &scale, now(), NOW)
            .unwrap()
            .unwrap()
            .status;
        assert_eq!(status["desiredHealthy"], 2, "ceil(30% of 4)");
        let error = compute_status(&budget, &[pod], &no_scale, now(), NOW).unwrap_err();
        assert_eq!(error.to_string(), "found no controllers for pod \"a\"");
        let failed = fail_safe_status(&budget, &error, NOW);
        assert_eq!(failed["disruptionsAllowed"], 0);
        assert_eq!(failed["conditions"][0]["reason"], "SyncFailed");
    }

    #[test]
    fn disrupted_pods_are_not_healthy_until_their_timeout() {
        let budget = json!({
            "metadata": {"generation": 1},
            "spec": {"minAvailable": 1, "selector": {}},
            "status": {"disruptedPods": {"a": "2025-12-31T23:59:30Z", "old": "2025-01-01T00:00:00Z"}},
        });
        let pods = [
            ready_pod("a", true),
            ready_pod("b", true),
            ready_pod("old", true),
        ];
        let computed = compute_status(&budget, &pods, &no_scale, now(), NOW)
            .unwrap()
            .unwrap();
        assert_eq!(computed.status["currentHealthy"], 2);
        assert_eq!(
            computed.status["disruptedPods"],
            json!({"a": "2025-12-31T23:59:30Z"})
        );
        assert_eq!(computed.recheck_after, Some(Duration::from_secs(90)));
    }
}
