//! LimitRanger (`plugin/pkg/admission/limitranger` `LimitRanger.Admit` /
//! `Validate`): the namespace's LimitRanges default the requests and limits
//! of a new pod's containers and init containers (type `Container`:
//! `defaultRequest`, `default`; recorded in the `kubernetes.io/limit-ranger`
//! annotation), then pods are checked against the `Container` and `Pod`
//! items' `min`, `max` and `maxLimitRequestRatio`, and claims against the
//! `PersistentVolumeClaim` items' `min` and `max` of their requests, with
//! kube's messages. Pod updates are not checked (their containers'
//! resources cannot change), except through `resize`.

use std::cmp::Ordering;

use serde_json::{json, Map, Value};

use super::attributes::{Attributes, Operation};
use super::namespace_lifecycle::forbidden;
use crate::object::ObjectStore;
use crate::quantity::{Format, Quantity};
use crate::status::Result;

/// `limitRangerAnnotation`.
pub const ANNOTATION: &str = "kubernetes.io/limit-ranger";
/// `resource.MaxMilliValue`.
const MAX_MILLI_VALUE: i64 = i64::MAX / 1000;

/// `SupportsAttributes`.
fn applies(attributes: &Attributes<'_>) -> Option<&'static str> {
    if !matches!(attributes.operation, Operation::Create | Operation::Update)
        || !attributes.kind.group.is_empty()
    {
        return None;
    }
    let kind = attributes.kind.name.as_str();
    if attributes.subresource == "resize"
        && kind == "Pod"
        && attributes.operation == Operation::Update
    {
        return Some("Pod");
    }
    if !attributes.subresource.is_empty() {
        return None;
    }
    match kind {
        "Pod" if attributes.operation == Operation::Update => None,
        "Pod" => Some("Pod"),
        "PersistentVolumeClaim" => Some("PersistentVolumeClaim"),
        _ => None,
    }
}

/// The namespace's LimitRanges' `spec.limits` items, when the write is one
/// LimitRanger looks at (`runLimitFunc`: never an object being deleted).
fn limit_items(store: &ObjectStore, attributes: &Attributes<'_>) -> Vec<Vec<Value>> {
    let deleting = attributes
        .old_object
        .and_then(|old| old.pointer("/metadata/deletionTimestamp"))
        .is_some_and(|stamp| !stamp.is_null());
    if deleting {
        return Vec::new();
    }
    let snapshot = store.snapshot();
    let prefix = format!("/registry/limitranges/{}/", attributes.namespace);
    snapshot
        .range(&prefix, None)
        .filter_map(|(_, entry)| entry.object.value())
        .map(|range| {
            range
                .pointer("/spec/limits")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

fn quantity(value: &Value) -> Option<Quantity> {
    value.as_str().and_then(|text| Quantity::parse(text).ok())
}

/// A resource list (`requests`, `limits`, `min` …) read as quantities.
fn resource_list(value: Option<&Value>) -> Vec<(String, Quantity)> {
    value
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| quantity(value).map(|q| (name.clone(), q)))
        .collect()
}

fn find<'a>(list: &'a [(String, Quantity)], name: &str) -> Option<&'a Quantity> {
    list.iter().find(|(n, _)| n == name).map(|(_, q)| q)
}

/// `LimitRanger.Admit` (`PodMutateLimitFunc` per LimitRange).
pub fn admit(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&mut Value>,
) -> Result<()> {
    let Some(pod) = object else {
        return Ok(());
    };
    if applies(attributes) != Some("Pod") || attributes.resource.name != "pods" {
        return Ok(());
    }
    let ranges = limit_items(store, attributes);
    if ranges.is_empty() {
        return Ok(());
    }
    // kube decodes (and so defaults) before admission: a limit without its
    // request already requests the limit (`SetDefaults_Pod`).
    requests_from_limits(pod);
    for items in &ranges {
        let mut default_requests = Map::new();
        let mut default_limits = Map::new();
        for item in items
            .iter()
            .filter(|item| item.get("type").and_then(Value::as_str) == Some("Container"))
        {
            if let Some(requests) = item.get("defaultRequest").and_then(Value::as_object) {
                default_requests.extend(requests.clone());
            }
            if let Some(limits) = item.get("default").and_then(Value::as_object) {
                default_limits.extend(limits.clone());
            }
        }
        let mut annotations = Vec::new();
        for (field, label) in [
            ("containers", "container"),
            ("initContainers", "init container"),
        ] {
            let Some(containers) = pod
                .pointer_mut(&format!("/spec/{field}"))
                .and_then(Value::as_array_mut)
            else {
                continue;
            };
            for container in containers.iter_mut().filter_map(Value::as_object_mut) {
                merge_container(
                    container,
                    &default_requests,
                    &default_limits,
                    label,
                    &mut annotations,
                );
            }
        }
        if annotations.is_empty() {
            continue;
        }
        let Some(pod_map) = pod.as_object_mut() else {
            continue;
        };
        let metadata = pod_map.entry("metadata").or_insert_with(|| json!({}));
        if !metadata.is_object() {
            continue;
        }
        if !metadata.get("annotations").is_some_and(Value::is_object) {
            metadata["annotations"] = json!({});
        }
        metadata["annotations"][ANNOTATION] = json!(format!(
            "LimitRanger plugin set: {}",
            annotations.join("; ")
        ));
    }
    Ok(())
}

/// `SetDefaults_Pod`'s request-from-limit rule, for the containers and init
/// containers.
fn requests_from_limits(pod: &mut Value) {
    for field in ["containers", "initContainers"] {
        let Some(containers) = pod
            .pointer_mut(&format!("/spec/{field}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for resources in containers
            .iter_mut()
            .filter_map(|container| container.get_mut("resources"))
            .filter_map(Value::as_object_mut)
        {
            let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
                continue;
            };
            if !resources.get("requests").is_some_and(Value::is_object) {
                resources.insert("requests".into(), json!({}));
            }
            if let Some(requests) = resources.get_mut("requests").and_then(Value::as_object_mut) {
                for (name, value) in limits {
                    requests.entry(name).or_insert(value);
                }
            }
        }
    }
}

/// `mergeContainerResources`.
fn merge_container(
    container: &mut Map<String, Value>,
    default_requests: &Map<String, Value>,
    default_limits: &Map<String, Value>,
    label: &str,
    annotations: &mut Vec<String>,
) {
    let name = container
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut merge = |field: &str, defaults: &Map<String, Value>| -> Vec<String> {
        let mut set = Vec::new();
        if defaults.is_empty() {
            return set;
        }
        let resources = container.entry("resources").or_insert_with(|| json!({}));
        if !resources.is_object() {
            *resources = json!({});
        }
        let list = resources
            .as_object_mut()
            .map(|resources| resources.entry(field).or_insert_with(|| json!({})));
        let Some(list) = list.and_then(Value::as_object_mut) else {
            return set;
        };
        for (resource, value) in defaults {
            if !list.contains_key(resource) {
                list.insert(resource.clone(), value.clone());
                set.push(resource.clone());
            }
        }
        set.sort();
        set
    };
    let set_limits = merge("limits", default_limits);
    let set_requests = merge("requests", default_requests);
    if !set_requests.is_empty() {
        annotations.push(format!(
            "{} request for {label} {name}",
            set_requests.join(", ")
        ));
    }
    if !set_limits.is_empty() {
        annotations.push(format!(
            "{} limit for {label} {name}",
            set_limits.join(", ")
        ));
    }
}

/// `LimitRanger.Validate`: the first LimitRange a pod or claim breaks
/// refuses it with all of that LimitRange's complaints.
pub fn validate(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<()> {
    let Some(object) = object else {
        return Ok(());
    };
    let Some(kind) = applies(attributes) else {
        return Ok(());
    };
    for items in limit_items(store, attributes) {
        let errors = match kind {
            "Pod" => pod_errors(&items, object),
            _ => claim_errors(&items, object),
        };
        if !errors.is_empty() {
            return Err(forbidden(attributes, Some(object), &aggregate(&errors)));
        }
    }
    Ok(())
}

use crate::go::errors::aggregate;

/// `PersistentVolumeClaimValidateLimitFunc`.
fn claim_errors(items: &[Value], claim: &Value) -> Vec<String> {
    let requests = resource_list(claim.pointer("/spec/resources/requests"));
    let mut errors = Vec::new();
    for item in items
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("PersistentVolumeClaim"))
    {
        let kind = "PersistentVolumeClaim";
        for (name, enforced) in resource_list(item.get("min")) {
            errors.extend(min_constraint(kind, &name, &enforced, &requests, &[]));
        }
        for (name, enforced) in resource_list(item.get("max")) {
            let request = find(&requests, &name);
            match request {
                None => errors.push(format!(
                    "maximum {name} usage per {kind} is {enforced}.  No request is specified"
                )),
                Some(request) => {
                    let (request_value, _, enforced_value) =
                        common_scale(Some(request), None, &enforced);
                    if request_value > enforced_value {
                        errors.push(format!(
                            "maximum {name} usage per {kind} is {enforced}, but request is {request}"
                        ));
                    }
                }
            }
        }
    }
    errors
}

/// `PodValidateLimitFunc`.
fn pod_errors(items: &[Value], pod: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    for item in items {
        match item.get("type").and_then(Value::as_str) {
            Some("Container") => {
                for field in ["containers", "initContainers"] {
                    for container in pod
                        .pointer(&format!("/spec/{field}"))
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let requests = resource_list(container.pointer("/resources/requests"));
                        let limits = resource_list(container.pointer("/resources/limits"));
                        errors.extend(item_errors(item, "Container", &requests, &limits));
                    }
                }
            }
            Some("Pod") => {
                let requests = pod_total(pod, "requests");
                let limits = pod_total(pod, "limits");
                errors.extend(item_errors(item, "Pod", &requests, &limits));
            }
            _ => {}
        }
    }
    errors
}

fn item_errors(
    item: &Value,
    kind: &str,
    requests: &[(String, Quantity)],
    limits: &[(String, Quantity)],
) -> Vec<String> {
    let mut errors = Vec::new();
    for (name, enforced) in resource_list(item.get("min")) {
        errors.extend(min_constraint(kind, &name, &enforced, requests, limits));
    }
    for (name, enforced) in resource_list(item.get("max")) {
        errors.extend(max_constraint(kind, &name, &enforced, requests, limits));
    }
    for (name, enforced) in resource_list(item.get("maxLimitRequestRatio")) {
        errors.extend(ratio_constraint(kind, &name, &enforced, requests, limits));
    }
    errors
}

/// `requestLimitEnforcedValues`: milli-units when none overflows them.
fn common_scale(
    request: Option<&Quantity>,
    limit: Option<&Quantity>,
    enforced: &Quantity,
) -> (i64, i64, i64) {
    let value = |q: Option<&Quantity>, scale| q.map_or(0, |q| q.scaled_value(scale));
    let (request_value, limit_value, enforced_value) =
        (value(request, 0), value(limit, 0), enforced.scaled_value(0));
    if request_value <= MAX_MILLI_VALUE
        && limit_value <= MAX_MILLI_VALUE
        && enforced_value <= MAX_MILLI_VALUE
    {
        return (value(request, 3), value(limit, 3), enforced.scaled_value(3));
    }
    (request_value, limit_value, enforced_value)
}

/// `minConstraint`.
fn min_constraint(
    kind: &str,
    name: &str,
    enforced: &Quantity,
    requests: &[(String, Quantity)],
    limits: &[(String, Quantity)],
) -> Option<String> {
    let (request, limit) = (find(requests, name), find(limits, name));
    let (request_value, limit_value, enforced_value) = common_scale(request, limit, enforced);
    let Some(request) = request else {
        return Some(format!(
            "minimum {name} usage per {kind} is {enforced}.  No request is specified"
        ));
    };
    if request_value < enforced_value {
        return Some(format!(
            "minimum {name} usage per {kind} is {enforced}, but request is {request}"
        ));
    }
    match limit {
        Some(limit) if limit_value < enforced_value => Some(format!(
            "minimum {name} usage per {kind} is {enforced}, but limit is {limit}"
        )),
        _ => None,
    }
}

/// `maxConstraint`.
fn max_constraint(
    kind: &str,
    name: &str,
    enforced: &Quantity,
    requests: &[(String, Quantity)],
    limits: &[(String, Quantity)],
) -> Option<String> {
    let (request, limit) = (find(requests, name), find(limits, name));
    let (request_value, limit_value, enforced_value) = common_scale(request, limit, enforced);
    let Some(limit) = limit else {
        return Some(format!(
            "maximum {name} usage per {kind} is {enforced}.  No limit is specified"
        ));
    };
    if limit_value > enforced_value {
        return Some(format!(
            "maximum {name} usage per {kind} is {enforced}, but limit is {limit}"
        ));
    }
    match request {
        Some(request) if request_value > enforced_value => Some(format!(
            "maximum {name} usage per {kind} is {enforced}, but request is {request}"
        )),
        _ => None,
    }
}

/// `limitRequestRatioConstraint`.
fn ratio_constraint(
    kind: &str,
    name: &str,
    enforced: &Quantity,
    requests: &[(String, Quantity)],
    limits: &[(String, Quantity)],
) -> Option<String> {
    let (request, limit) = (find(requests, name), find(limits, name));
    let (request_value, limit_value, _) = common_scale(request, limit, enforced);
    if request.is_none() || request_value == 0 {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {enforced}, but no request is specified or request is 0"
        ));
    }
    if limit.is_none() || limit_value == 0 {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0"
        ));
    }
    let displayed = limit_value as f64 / request_value as f64;
    let (mut observed, mut allowed) = (displayed, enforced.scaled_value(0) as f64);
    if enforced.scaled_value(0) <= MAX_MILLI_VALUE {
        observed *= 1000.0;
        allowed = enforced.scaled_value(3) as f64;
    }
    (observed > allowed).then(|| {
        format!("{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is {displayed:.6}")
    })
}

/// `podRequests` / `podLimits` (`field` is `requests` or `limits`): the
/// containers' sum, restartable init containers (sidecars) added, then the
/// largest of that and each init container's (with the sidecars before it);
/// pod-level cpu and memory replace the sums (PodLevelResources, on in
/// 1.34).
fn pod_total(pod: &Value, field: &str) -> Vec<(String, Quantity)> {
    let list = |container: &Value| resource_list(container.pointer(&format!("/resources/{field}")));
    let containers = |name: &str| -> Vec<Value> {
        pod.pointer(&format!("/spec/{name}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut total: Vec<(String, Quantity)> = Vec::new();
    for container in containers("containers") {
        add(&mut total, &list(&container));
    }
    let mut sidecars: Vec<(String, Quantity)> = Vec::new();
    let mut init_max: Vec<(String, Quantity)> = Vec::new();
    for container in containers("initContainers") {
        let own = list(&container);
        let effective = if container.get("restartPolicy").and_then(Value::as_str) == Some("Always")
        {
            add(&mut total, &own);
            add(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut with_sidecars = Vec::new();
            add(&mut with_sidecars, &own);
            add(&mut with_sidecars, &sidecars);
            with_sidecars
        };
        keep_max(&mut init_max, &effective);
    }
    keep_max(&mut total, &init_max);
    for (name, pod_level) in resource_list(pod.pointer(&format!("/spec/resources/{field}"))) {
        if matches!(name.as_str(), "cpu" | "memory") {
            total.retain(|(n, _)| n != &name);
            total.push((name, pod_level));
        }
    }
    total
}

/// `addResourceList`: sums in milli-units, in the first addend's format.
fn add(list: &mut Vec<(String, Quantity)>, more: &[(String, Quantity)]) {
    for (name, quantity) in more {
        match list.iter_mut().find(|(n, _)| n == name) {
            None => list.push((name.clone(), quantity.clone())),
            Some((_, existing)) => {
                let milli = existing
                    .scaled_value(3)
                    .saturating_add(quantity.scaled_value(3));
                let format: Format = existing.format();
                *existing = Quantity::from_scaled(milli, -3, format);
            }
        }
    }
}

/// `maxResourceList`.
fn keep_max(list: &mut Vec<(String, Quantity)>, other: &[(String, Quantity)]) {
    for (name, quantity) in other {
        match list.iter_mut().find(|(n, _)| n == name) {
            None => list.push((name.clone(), quantity.clone())),
            Some((_, existing)) => {
                if quantity.cmp_value(existing) == Ordering::Greater {
                    *existing = quantity.clone();
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "limit_ranger_tests.rs"]
mod tests;
