//! Resource requirements as kube 1.34 validates them
//! (`pkg/apis/core/validation/validation.go`): a container's
//! (`ValidateContainerResourceRequirements`, also a pod's and a
//! RuntimeClass's overhead) and the pod-level `spec.resources`
//! (`validatePodResources`: `validatePodResourceRequirements` and
//! `validatePodResourceConsistency`), both through
//! `validateResourceRequirements`: resource names, non-negative quantities,
//! whole numbers for countable ones, hugepage values a multiple of their page
//! size, requests within limits, hugepages only with cpu or memory, and the
//! `claims` naming the pod's `resourceClaims` (`validateResourceClaimNames`).
//!
//! Go walks the resource lists as maps (random order); they are walked in
//! name order here.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use serde_json::Value;

use super::field::{self, child, index, key};
use super::quota;
use crate::quantity::Quantity;
use crate::status::FieldError;

const HUGE_PAGES_PREFIX: &str = "hugepages-";

/// What a pod's resource requirements are checked against: the names of its
/// `resourceClaims` and whether indivisible hugepage values are tolerated
/// (`PodValidationOptions.AllowIndivisibleHugePagesValues`, true on an update
/// whose old spec already had one).
#[derive(Clone, Copy)]
pub struct RequirementsContext<'a> {
    pub claim_names: &'a BTreeSet<String>,
    pub allow_indivisible_huge_pages: bool,
}

/// `gatherPodResourceClaimNames`: the non-empty names of `spec.resourceClaims`.
pub fn pod_claim_names(spec: &Value) -> BTreeSet<String> {
    field::items_at(spec, "resourceClaims")
        .iter()
        .map(|claim| field::str_at(claim, "name"))
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect()
}

/// `validateContainerResourceName`: `validateResourceName`, then a name
/// without a domain must be a container resource and one with a foreign
/// domain an extended resource. A `core.ResourceName` is a `fmt.Stringer`,
/// so kube prints it unquoted.
pub fn container_resource_name(name: &str, path: &str, errors: &mut Vec<FieldError>) {
    quota::resource_name(name, path, errors);
    if !name.contains('/') {
        let standard = matches!(name, "cpu" | "memory" | "ephemeral-storage")
            || name.starts_with(HUGE_PAGES_PREFIX);
        if !standard {
            errors.push(field::invalid_rendered(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !quota::is_native(name) && !quota::is_extended(name) {
        errors.push(field::invalid_rendered(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
}

/// `resourcehelper.IsSupportedPodLevelResource` (1.34): cpu, memory and hugepages.
fn is_supported_pod_level_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory") || name.starts_with(HUGE_PAGES_PREFIX)
}

/// `validatePodResourceName`: `validateResourceName`, then one of the
/// resources pod-level resources support.
fn pod_resource_name(name: &str, path: &str, errors: &mut Vec<FieldError>) {
    let before = errors.len();
    quota::resource_name(name, path, errors);
    if errors.len() == before && !is_supported_pod_level_resource(name) {
        errors.push(field::not_supported(
            path,
            name,
            &["cpu", HUGE_PAGES_PREFIX, "memory"],
        ));
    }
}

/// `helper.IsOvercommitAllowed`.
fn overcommit_allowed(name: &str) -> bool {
    quota::is_native(name) && !name.starts_with(HUGE_PAGES_PREFIX)
}

fn parse(quantity: &Value) -> Option<Quantity> {
    Quantity::parse(quantity.as_str()?).ok()
}

/// `helper.IsHugePageResourceValueDivisible`: the page size (the name after
/// `hugepages-`) parses, is positive and whole, and divides the value.
pub fn is_huge_page_value_divisible(name: &str, quantity: &Quantity) -> bool {
    let Some(size) = name.strip_prefix(HUGE_PAGES_PREFIX) else {
        return false;
    };
    let Ok(page) = Quantity::parse(size) else {
        return false;
    };
    if page.sign() <= 0 || page.scaled_value(3) % 1000 != 0 {
        return false;
    }
    quantity.scaled_value(0) % page.scaled_value(0) == 0
}

/// `validateResourceQuantityHugePageValue`.
fn huge_page_value(
    name: &str,
    quantity: &Value,
    context: RequirementsContext<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let Some(parsed) = parse(quantity) else {
        return;
    };
    if !context.allow_indivisible_huge_pages && !is_huge_page_value_divisible(name, &parsed) {
        let text = quantity.as_str().unwrap_or_default();
        errors.push(field::invalid(
            path,
            text,
            format!("{text} is not positive integer multiple of {name}"),
        ));
    }
}

/// Which names a requirements list may hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Container,
    Pod,
}

/// `ValidateContainerResourceRequirements`.
pub fn container_requirements(
    requirements: &Value,
    context: RequirementsContext<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    requirements_at(requirements, Level::Container, context, path, errors);
}

/// `validateResourceRequirements`.
fn requirements_at(
    requirements: &Value,
    level: Level,
    context: RequirementsContext<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let name_check = match level {
        Level::Container => container_resource_name,
        Level::Pod => pod_resource_name,
    };
    let limits_path = child(path, "limits");
    let requests_path = child(path, "requests");
    let limits = field::map_at(requirements, "limits");
    let mut cpu_or_memory = false;
    let mut huge_pages = false;
    for (name, quantity) in limits.into_iter().flatten() {
        let item_path = key(&limits_path, name);
        name_check(name, &item_path, errors);
        quota::resource_quantity_value(name, quantity, &item_path, errors);
        if name.starts_with(HUGE_PAGES_PREFIX) {
            huge_pages = true;
            huge_page_value(name, quantity, context, &item_path, errors);
        }
        cpu_or_memory |= matches!(name.as_str(), "cpu" | "memory");
    }
    for (name, quantity) in field::map_at(requirements, "requests")
        .into_iter()
        .flatten()
    {
        let item_path = key(&requests_path, name);
        name_check(name, &item_path, errors);
        quota::resource_quantity_value(name, quantity, &item_path, errors);
        let text = quantity.as_str().unwrap_or_default();
        match limits.and_then(|limits| limits.get(name)) {
            Some(limit) => {
                let limit_text = limit.as_str().unwrap_or_default();
                let order = match (parse(quantity), parse(limit)) {
                    (Some(request), Some(limit)) => request.cmp_value(&limit),
                    _ => Ordering::Equal,
                };
                if order != Ordering::Equal && !overcommit_allowed(name) {
                    errors.push(field::invalid(
                        &requests_path,
                        text,
                        format!("must be equal to {name} limit of {limit_text}"),
                    ));
                } else if order == Ordering::Greater {
                    errors.push(field::invalid(
                        &requests_path,
                        text,
                        format!("must be less than or equal to {name} limit of {limit_text}"),
                    ));
                }
            }
            None if !overcommit_allowed(name) => errors.push(field::required(
                &limits_path,
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
        if name.starts_with(HUGE_PAGES_PREFIX) {
            huge_pages = true;
            huge_page_value(name, quantity, context, &item_path, errors);
        }
        cpu_or_memory |= matches!(name.as_str(), "cpu" | "memory");
    }
    if huge_pages && !cpu_or_memory {
        errors.push(field::forbidden(path, "HugePages require cpu or memory"));
    }
    resource_claim_names(
        field::items_at(requirements, "claims"),
        context.claim_names,
        &child(path, "claims"),
        errors,
    );
}

/// `validateResourceClaimNames`: each entry names a claim of the pod, at
/// most once, either whole or one `request` of it (a DNS-1123 label).
fn resource_claim_names(
    claims: &[Value],
    pod_claim_names: &BTreeSet<String>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let mut names: BTreeSet<String> = BTreeSet::new();
    for (position, claim) in claims.iter().enumerate() {
        let claim_path = index(path, position);
        let name = field::str_at(claim, "name");
        if name.is_empty() {
            errors.push(field::required(&claim_path, ""));
            continue;
        }
        if names.contains(name) {
            // Every request of that claim is referenced already.
            errors.push(field::duplicate(&claim_path, name));
        } else {
            let request = field::str_at(claim, "request");
            let mut entry = name.to_string();
            if !request.is_empty() {
                field::dns1123_label(&child(&claim_path, "request"), request, errors);
                entry = format!("{name}/{request}");
            }
            if names.contains(&entry) {
                errors.push(field::duplicate(&claim_path, &entry));
            } else if request.is_empty() {
                // The whole claim, after some request of it was named.
                for named in &names {
                    if named
                        .split_once('/')
                        .is_some_and(|(claim, _)| claim == name)
                    {
                        errors.push(field::duplicate(&claim_path, name));
                    }
                }
            }
            names.insert(entry);
        }
        if !pod_claim_names.contains(name) {
            let mut error = field::not_found(&claim_path, name);
            error.detail = if pod_claim_names.is_empty() {
                "must be one of the names in pod.spec.resourceClaims which is empty".to_string()
            } else {
                let listed: Vec<&str> = pod_claim_names.iter().map(String::as_str).collect();
                format!(
                    "must be one of the names in pod.spec.resourceClaims: {}",
                    listed.join(", ")
                )
            };
            errors.push(error);
        }
    }
}

/// `validatePodResources` (PodLevelResources is beta and on in 1.34): not
/// for a Windows pod, no `claims`, the requirement rules with the pod-level
/// names, then `validatePodResourceConsistency`.
pub fn pod_resources(
    spec: &Value,
    context: RequirementsContext<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let Some(resources) = spec.get("resources").filter(|value| !value.is_null()) else {
        return;
    };
    let resources_path = child(path, "resources");
    let os = spec.pointer("/os/name").and_then(Value::as_str);
    if os == Some("windows") {
        errors.push(field::forbidden(
            &resources_path,
            "may not be set for a windows pod",
        ));
        return;
    }
    if resources
        .get("claims")
        .is_some_and(|claims| !claims.is_null())
    {
        errors.push(field::forbidden(
            &child(&resources_path, "claims"),
            "claims cannot be set for Resources at pod-level",
        ));
    }
    requirements_at(resources, Level::Pod, context, &resources_path, errors);
    pod_resource_consistency(spec, resources, &resources_path, errors);
}

/// `validatePodResourceConsistency`: a pod-level request covers the
/// containers' aggregated request (`AggregateContainerRequests`) of each
/// resource pod-level resources support (an unset one counts as 0), and no
/// container's limit exceeds a pod-level limit.
fn pod_resource_consistency(
    spec: &Value,
    resources: &Value,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let Some(spec_map) = spec.as_object() else {
        return;
    };
    let requests = field::map_at(resources, "requests");
    let requests_path = child(path, "requests");
    let aggregated =
        crate::defaults::pod_level_resources::aggregate_containers(spec_map, "requests");
    for (name, containers) in &aggregated {
        if !is_supported_pod_level_resource(name) {
            continue;
        }
        let pod_text = requests
            .and_then(|requests| requests.get(name))
            .and_then(Value::as_str)
            .unwrap_or("0");
        let Ok(pod) = Quantity::parse(pod_text) else {
            continue;
        };
        if containers.cmp_value(&pod) == Ordering::Greater {
            errors.push(field::invalid(
                &key(&requests_path, name),
                pod_text,
                format!(
                    "must be greater than or equal to aggregate container requests of {containers}"
                ),
            ));
        }
    }
    let Some(pod_limits) = field::map_at(resources, "limits") else {
        return;
    };
    for (position, container) in field::items_at(spec, "containers").iter().enumerate() {
        let limits = field::map_at(container.get("resources").unwrap_or(&Value::Null), "limits");
        for (name, limit) in limits.into_iter().flatten() {
            let Some(pod_limit) = pod_limits.get(name) else {
                continue;
            };
            let (Some(container_limit), Some(pod_limit_quantity)) =
                (parse(limit), parse(pod_limit))
            else {
                continue;
            };
            if container_limit.cmp_value(&pod_limit_quantity) == Ordering::Greater {
                let limit_path = child(
                    &key(&index(&child(path, "containers"), position), name),
                    "limits",
                );
                errors.push(field::invalid(
                    &limit_path,
                    limit.as_str().unwrap_or_default(),
                    format!(
                        "must be less than or equal to pod limits of {}",
                        pod_limit.as_str().unwrap_or_default()
                    ),
                ));
            }
        }
    }
}

/// `usesIndivisibleHugePagesValues`: a container's (any kind) hugepage limit
/// or request, or the overhead's, is not a multiple of its page size.
pub fn uses_indivisible_huge_pages(spec: &Value) -> bool {
    let indivisible = |list: Option<&serde_json::Map<String, Value>>| {
        list.into_iter().flatten().any(|(name, quantity)| {
            name.starts_with(HUGE_PAGES_PREFIX)
                && parse(quantity)
                    .is_some_and(|parsed| !is_huge_page_value_divisible(name, &parsed))
        })
    };
    let containers = ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .flat_map(|list| field::items_at(spec, list));
    for container in containers {
        let resources = container.get("resources").unwrap_or(&Value::Null);
        if indivisible(field::map_at(resources, "limits"))
            || indivisible(field::map_at(resources, "requests"))
        {
            return true;
        }
    }
    indivisible(spec.get("overhead").and_then(Value::as_object))
}

#[cfg(test)]
#[path = "resource_requirements_tests.rs"]
mod tests;
