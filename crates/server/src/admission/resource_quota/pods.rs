//! The pod evaluator (`pkg/quota/v1/evaluator/core/pods.go`): what a pod
//! uses (`PodUsageFunc` with `resourcehelper.PodRequests`/`PodLimits`:
//! containers summed, init containers' maximum, restartable init
//! containers counted with both, pod-level resources and overhead), the
//! containers that must name a quota-constrained resource (`Constraints`),
//! and the pod scopes (`podMatchesScopeFunc`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::resource_list::{self, ResourceList};
use super::scopes::ScopeRequirement;
use crate::quantity::Quantity;

/// `podObjectCountName`.
pub const POD_COUNT: &str = "count/pods";

/// `podResources`.
const POD_RESOURCES: &[&str] = &[
    POD_COUNT,
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
];

/// `podResourcePrefixes`.
const POD_RESOURCE_PREFIXES: &[&str] = &["hugepages-", "requests.hugepages-"];

/// `validationSet`: what every container must request or limit when a
/// quota constrains it.
const VALIDATION_SET: &[&str] = &[
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// `helper.IsNativeResource`: no domain, or a `kubernetes.io` one.
fn is_native_resource(name: &str) -> bool {
    match name.split_once('/') {
        None => true,
        Some((domain, _)) => domain.contains("kubernetes.io"),
    }
}

/// `helper.IsExtendedResourceName`: outside the native namespace and not
/// quota-prefixed.
fn is_extended_resource_name(name: &str) -> bool {
    !is_native_resource(name) && !name.starts_with("requests.")
}

/// `podEvaluator.MatchingResources`.
pub fn matching_resources(input: &[String]) -> Vec<String> {
    let mut result: Vec<String> = input
        .iter()
        .filter(|name| POD_RESOURCES.contains(&name.as_str()))
        .cloned()
        .collect();
    for name in input {
        if POD_RESOURCE_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            result.push(name.clone());
        }
        // isExtendedResourceNameForQuota
        if !is_native_resource(name) && name.starts_with("requests.") {
            result.push(name.clone());
        }
    }
    result
}

fn containers<'a>(pod: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    pod.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn resources_of(container: &Value, which: &str) -> ResourceList {
    resource_list::from_value(container.pointer(&format!("/resources/{which}")))
}

/// `podComputeUsageHelper`.
fn compute_usage(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut result = ResourceList::new();
    result.insert("pods".into(), Quantity::from_count(1));
    for resource in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(request) = requests.get(resource) {
            result.insert(resource.into(), request.clone());
            result.insert(format!("requests.{resource}"), request.clone());
        }
        if let Some(limit) = limits.get(resource) {
            result.insert(format!("limits.{resource}"), limit.clone());
        }
    }
    for (name, request) in requests {
        if name.starts_with("hugepages-") {
            result.insert(name.clone(), request.clone());
            result.insert(format!("requests.{name}"), request.clone());
        }
        if is_extended_resource_name(name) {
            result.insert(format!("requests.{name}"), request.clone());
        }
    }
    result
}

/// `maxResourceList`.
fn max_into(list: &mut ResourceList, other: &ResourceList) {
    for (name, quantity) in other {
        let larger = list
            .get(name)
            .is_none_or(|current| quantity.cmp_value(current).is_gt());
        if larger {
            list.insert(name.clone(), quantity.clone());
        }
    }
}

/// `IsPodResizeInfeasible`: the `PodResizePending` condition says `Infeasible`.
fn resize_infeasible(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|condition| condition.get("type").and_then(Value::as_str) == Some("PodResizePending"))
        .is_some_and(|condition| {
            condition.get("reason").and_then(Value::as_str) == Some("Infeasible")
        })
}

/// The status of the container named `name` (containers' statuses, then
/// init containers', as kube's map is filled).
fn container_status<'a>(pod: &'a Value, name: &str) -> Option<&'a Value> {
    let mut found = None;
    for field in ["containerStatuses", "initContainerStatuses"] {
        for status in pod
            .pointer(&format!("/status/{field}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if status.get("name").and_then(Value::as_str) == Some(name) {
                found = Some(status);
            }
        }
    }
    found
}

/// A container's requests or limits as the quota counts them with in-place
/// resize on (`UseStatusResources`): when its status reports resources,
/// `determineContainerReqs` (the largest of the spec, the status'
/// `resources` and `allocatedResources`; without the spec when the resize is
/// infeasible) or `determineContainerLimits` (the spec's and status' limits;
/// the status' alone when infeasible).
fn effective_resources(pod: &Value, container: &Value, which: &str) -> ResourceList {
    let own = resources_of(container, which);
    let name = container.get("name").and_then(Value::as_str).unwrap_or("");
    let Some(status) = container_status(pod, name) else {
        return own;
    };
    let Some(reported) = status.get("resources").filter(|value| !value.is_null()) else {
        return own;
    };
    let reported = resource_list::from_value(reported.get(which));
    let mut result = if resize_infeasible(pod) {
        reported
    } else {
        let mut result = own;
        max_into(&mut result, &reported);
        result
    };
    if which == "requests" {
        max_into(
            &mut result,
            &resource_list::from_value(status.get("allocatedResources")),
        );
    }
    result
}

/// `AggregateContainerRequests` / `AggregateContainerLimits` with
/// `UseStatusResources` (in-place resize is on in 1.34): restartable init
/// containers and regular containers read their reported resources too.
fn aggregate(pod: &Value, which: &str) -> ResourceList {
    let mut total = ResourceList::new();
    for container in containers(pod, "containers") {
        total = resource_list::add(&total, &effective_resources(pod, container, which));
    }
    let mut restartable = ResourceList::new();
    let mut init_max = ResourceList::new();
    for container in containers(pod, "initContainers") {
        let effective = if container.get("restartPolicy").and_then(Value::as_str) == Some("Always")
        {
            let own = effective_resources(pod, container, which);
            total = resource_list::add(&total, &own);
            restartable = resource_list::add(&restartable, &own);
            restartable.clone()
        } else {
            resource_list::add(&resources_of(container, which), &restartable)
        };
        max_into(&mut init_max, &effective);
    }
    max_into(&mut total, &init_max);
    total
}

/// Pod-level `spec.resources` override what containers add up to for the
/// resources kube supports there (`IsSupportedPodLevelResource`).
fn with_pod_level(mut list: ResourceList, pod: &Value, which: &str) -> ResourceList {
    let pod_level = resource_list::from_value(pod.pointer(&format!("/spec/resources/{which}")));
    for (name, quantity) in pod_level {
        if name == "cpu" || name == "memory" || name.starts_with("hugepages-") {
            list.insert(name, quantity);
        }
    }
    list
}

/// `resourcehelper.PodRequests`.
fn pod_requests(pod: &Value) -> ResourceList {
    let requests = with_pod_level(aggregate(pod, "requests"), pod, "requests");
    let overhead = resource_list::from_value(pod.pointer("/spec/overhead"));
    resource_list::add(&requests, &overhead)
}

/// `resourcehelper.PodLimits`: overhead is added only to limits that are set.
fn pod_limits(pod: &Value) -> ResourceList {
    let mut limits = with_pod_level(aggregate(pod, "limits"), pod, "limits");
    let overhead = resource_list::from_value(pod.pointer("/spec/overhead"));
    for (name, quantity) in overhead {
        if let Some(limit) = limits.get_mut(&name) {
            *limit = limit.add(&quantity);
        }
    }
    limits
}

/// `QuotaV1Pod`: a pod still counts for compute resources unless it ended
/// or its graceful deletion is past its deadline.
pub fn counts_for_compute(pod: &Value, now: SystemTime) -> bool {
    let phase = pod.pointer("/status/phase").and_then(Value::as_str);
    if matches!(phase, Some("Failed" | "Succeeded")) {
        return false;
    }
    let deletion = pod
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(crate::go::time::parse_system_time);
    let grace = pod
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64);
    if let (Some(deletion), Some(grace)) = (deletion, grace) {
        let deadline = if grace >= 0 {
            deletion + Duration::from_secs(grace.unsigned_abs())
        } else {
            deletion - Duration::from_secs(grace.unsigned_abs())
        };
        if now > deadline {
            return false;
        }
    }
    true
}

/// `PodUsageFunc`.
pub fn usage(pod: &Value, now: SystemTime) -> ResourceList {
    let mut result = ResourceList::new();
    result.insert(POD_COUNT.into(), Quantity::from_count(1));
    if !counts_for_compute(pod, now) {
        return result;
    }
    let compute = compute_usage(&pod_requests(pod), &pod_limits(pod));
    resource_list::add(&result, &compute)
}

/// `podEvaluator.Constraints`: with cpu or memory constrained, every
/// container must request or limit it (`must specify limits.cpu for: c;
/// requests.cpu for: c`).
pub fn constraints(required: &[String], pod: &Value) -> Result<(), String> {
    let required: BTreeSet<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|name| VALIDATION_SET.contains(name))
        .collect();
    let mut missing: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for container in containers(pod, "containers").chain(containers(pod, "initContainers")) {
        let usage = compute_usage(
            &resources_of(container, "requests"),
            &resources_of(container, "limits"),
        );
        let name = container
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        for resource in &required {
            if !usage.contains_key(*resource) {
                missing.entry(resource).or_default().insert(name);
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let messages: Vec<String> = missing
        .iter()
        .map(|(resource, names)| {
            format!(
                "{resource} for: {}",
                names.iter().copied().collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    Err(format!("must specify {}", messages.join("; ")))
}

/// `qos.GetPodQOS(pod) == BestEffort`: no positive cpu or memory request or
/// limit anywhere.
fn is_best_effort(pod: &Value) -> bool {
    let positive = |list: ResourceList| {
        list.iter()
            .any(|(name, quantity)| (name == "cpu" || name == "memory") && quantity.sign() > 0)
    };
    let pod_level = ["requests", "limits"].iter().any(|which| {
        positive(resource_list::from_value(
            pod.pointer(&format!("/spec/resources/{which}")),
        ))
    });
    if pod_level {
        return false;
    }
    !containers(pod, "containers")
        .chain(containers(pod, "initContainers"))
        .any(|container| {
            positive(resources_of(container, "requests"))
                || positive(resources_of(container, "limits"))
        })
}

/// `isTerminating`.
fn is_terminating(pod: &Value) -> bool {
    pod.pointer("/spec/activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|seconds| seconds >= 0)
}

/// `usesCrossNamespacePodAffinity`.
fn uses_cross_namespace_pod_affinity(pod: &Value) -> bool {
    let cross = |term: &Value| {
        term.get("namespaces")
            .and_then(Value::as_array)
            .is_some_and(|namespaces| !namespaces.is_empty())
            || term.get("namespaceSelector").is_some_and(|s| !s.is_null())
    };
    ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
        let Some(affinity) = pod.pointer(&format!("/spec/affinity/{kind}")) else {
            return false;
        };
        let required = affinity
            .get("requiredDuringSchedulingIgnoredDuringExecution")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(cross);
        let preferred = affinity
            .get("preferredDuringSchedulingIgnoredDuringExecution")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|weighted| weighted.get("podAffinityTerm"))
            .any(cross);
        required || preferred
    })
}

/// `podMatchesScopeFunc`.
pub fn matches_scope(requirement: &ScopeRequirement, pod: &Value) -> bool {
    match requirement.scope_name.as_str() {
        "Terminating" => is_terminating(pod),
        "NotTerminating" => !is_terminating(pod),
        "BestEffort" => is_best_effort(pod),
        "NotBestEffort" => !is_best_effort(pod),
        "PriorityClass" => {
            let class = pod
                .pointer("/spec/priorityClassName")
                .and_then(Value::as_str)
                .filter(|class| !class.is_empty());
            requirement.matches_value(class)
        }
        "CrossNamespacePodAffinity" => uses_cross_namespace_pod_affinity(pod),
        _ => false,
    }
}
