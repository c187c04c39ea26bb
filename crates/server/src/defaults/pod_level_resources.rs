//! The pod-level `spec.resources` defaults of the PodLevelResources feature
//! (beta and on by default in kube 1.34): `SetDefaults_Pod`'s
//! `defaultHugePagePodLimits` and `defaultPodRequests`
//! (`pkg/apis/core/v1/defaults.go`), with the container aggregation of
//! `AggregateContainerRequests`/`AggregateContainerLimits`
//! (`staging/src/k8s.io/component-helpers/resource/helpers.go`, spec values
//! only: `PodResourcesOptions{}`). Pods only: `SetDefaults_PodSpec` (pod
//! templates) has no such defaults.
//!
//! Quantities that do not parse are skipped: kube would have refused the
//! body at decoding, and ferrokube's quantity decoding reports them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::quantity::Quantity;

/// A `v1.ResourceList` by resource name.
type ResourceList = BTreeMap<String, Quantity>;

const HUGE_PAGES_PREFIX: &str = "hugepages-";

/// `resourcehelper.IsSupportedPodLevelResource`: cpu, memory and hugepages.
fn is_supported_pod_level_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory") || name.starts_with(HUGE_PAGES_PREFIX)
}

/// `corev1helper.IsHugePageResourceName`.
fn is_huge_page(name: &str) -> bool {
    name.starts_with(HUGE_PAGES_PREFIX)
}

/// `corev1helper.IsOvercommitAllowed`: a native resource (no domain, or a
/// `kubernetes.io/` one) that is not a hugepage size.
fn is_overcommit_allowed(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    native && !is_huge_page(name)
}

/// The parsed entries of the resource list at `field` of `requirements`
/// (`None` when the list is absent or not an object, as a nil Go map).
fn resource_list(requirements: Option<&Map<String, Value>>, field: &str) -> Option<ResourceList> {
    let list = requirements?.get(field)?.as_object()?;
    Some(
        list.iter()
            .filter_map(|(name, quantity)| {
                let parsed = Quantity::parse(quantity.as_str()?.trim()).ok()?;
                Some((name.clone(), parsed))
            })
            .collect(),
    )
}

/// `addResourceList`: a missing entry is a copy (its text kept), a present
/// one the sum (printed canonically, as Go's `Add` clears the cached text).
fn add_resource_list(list: &mut ResourceList, other: &ResourceList) {
    for (name, quantity) in other {
        match list.get_mut(name) {
            Some(present) => *present = present.add(quantity),
            None => {
                list.insert(name.clone(), quantity.clone());
            }
        }
    }
}

/// `maxResourceList`: each entry of `other` replaces a missing or smaller one.
fn max_resource_list(list: &mut ResourceList, other: &ResourceList) {
    for (name, quantity) in other {
        let greater = list
            .get(name)
            .is_none_or(|present| quantity.cmp_value(present).is_gt());
        if greater {
            list.insert(name.clone(), quantity.clone());
        }
    }
}

/// `isRestartableInitContainer`: an init container with `restartPolicy: Always` (a sidecar).
fn is_restartable_init_container(container: &Map<String, Value>) -> bool {
    container.get("restartPolicy").and_then(Value::as_str) == Some("Always")
}

fn containers<'a>(spec: &'a Map<String, Value>, field: &str) -> Vec<&'a Map<String, Value>> {
    spec.get(field)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

/// `aggregateContainerResourcesByFn` on the spec's `requests` or `limits`:
/// the containers' sum, then the maximum of that and each init container's
/// use while it runs (its own resources plus the sidecars started before it;
/// a sidecar counts into the sum too, KEP-753's formula).
pub(crate) fn aggregate_containers(spec: &Map<String, Value>, field: &str) -> ResourceList {
    let resources_of = |container: &Map<String, Value>| {
        let requirements = container.get("resources").and_then(Value::as_object);
        resource_list(requirements, field).unwrap_or_default()
    };
    let mut result = ResourceList::new();
    for container in containers(spec, "containers") {
        add_resource_list(&mut result, &resources_of(container));
    }
    let mut restartable = ResourceList::new();
    let mut init = ResourceList::new();
    for container in containers(spec, "initContainers") {
        let own = resources_of(container);
        let in_use = if is_restartable_init_container(container) {
            add_resource_list(&mut result, &own);
            add_resource_list(&mut restartable, &own);
            restartable.clone()
        } else {
            let mut combined = ResourceList::new();
            add_resource_list(&mut combined, &own);
            add_resource_list(&mut combined, &restartable);
            combined
        };
        max_resource_list(&mut init, &in_use);
    }
    max_resource_list(&mut result, &init);
    result
}

fn write_list(requirements: &mut Map<String, Value>, field: &str, list: &ResourceList) {
    let written: Map<String, Value> = list
        .iter()
        .map(|(name, quantity)| (name.clone(), Value::String(quantity.to_string())))
        .collect();
    requirements.insert(field.to_string(), Value::Object(written));
}

/// Overwrites the parsed entries of `field` with `list`, keeping entries
/// that did not parse (left for decoding to report) as they were.
fn merge_list(requirements: &mut Map<String, Value>, field: &str, list: &ResourceList) {
    match requirements.get_mut(field).and_then(Value::as_object_mut) {
        Some(present) => {
            for (name, quantity) in list {
                present.insert(name.clone(), Value::String(quantity.to_string()));
            }
        }
        None => write_list(requirements, field, list),
    }
}

/// `SetDefaults_Pod`'s PodLevelResources block, run after the containers'
/// requests were defaulted from their limits (also by the pod strategy's
/// QoS class, computed on the defaulted pod as kube's is).
pub(crate) fn apply(spec: &mut Map<String, Value>) {
    huge_page_pod_limits(spec);
    pod_requests(spec);
}

/// `defaultHugePagePodLimits`: with pod-level resources partly set, a
/// hugepage size the containers limit (aggregated) and the pod neither
/// requests nor limits becomes a pod-level limit.
fn huge_page_pod_limits(spec: &mut Map<String, Value>) {
    let aggregated = aggregate_containers(spec, "limits");
    let Some(requirements) = spec.get_mut("resources").and_then(Value::as_object_mut) else {
        return;
    };
    let limits = resource_list(Some(requirements), "limits");
    let requests = resource_list(Some(requirements), "requests");
    let length = |list: &Option<ResourceList>| list.as_ref().map_or(0, BTreeMap::len);
    if length(&limits) == 0 && length(&requests) == 0 {
        return;
    }
    let mut pod_limits = limits.unwrap_or_default();
    let requests = requests.unwrap_or_default();
    let mut added = false;
    for (name, quantity) in &aggregated {
        if !is_supported_pod_level_resource(name) || !is_huge_page(name) {
            continue;
        }
        if requests.contains_key(name) || pod_limits.contains_key(name) {
            continue;
        }
        pod_limits.insert(name.clone(), quantity.clone());
        added = true;
    }
    if added {
        merge_list(requirements, "limits", &pod_limits);
    }
}

/// `defaultPodRequests`: with pod-level limits set, a missing pod-level
/// request is the containers' aggregated request for cpu and memory, else
/// (no container requests it, or a hugepage size) the pod-level limit.
fn pod_requests(spec: &mut Map<String, Value>) {
    let aggregated = aggregate_containers(spec, "requests");
    let Some(requirements) = spec.get_mut("resources").and_then(Value::as_object_mut) else {
        return;
    };
    let limits = resource_list(Some(requirements), "limits").unwrap_or_default();
    if limits.is_empty() {
        return;
    }
    let mut pod_requests = resource_list(Some(requirements), "requests").unwrap_or_default();
    let mut added = false;
    for (name, quantity) in &aggregated {
        let eligible = is_supported_pod_level_resource(name) && is_overcommit_allowed(name);
        if eligible && !pod_requests.contains_key(name) {
            pod_requests.insert(name.clone(), quantity.clone());
            added = true;
        }
    }
    for (name, quantity) in &limits {
        if is_supported_pod_level_resource(name) && !pod_requests.contains_key(name) {
            pod_requests.insert(name.clone(), quantity.clone());
            added = true;
        }
    }
    if added {
        merge_list(requirements, "requests", &pod_requests);
    }
}

#[cfg(test)]
#[path = "pod_level_resources_tests.rs"]
mod tests;
