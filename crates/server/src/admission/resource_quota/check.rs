//! `quotaEvaluator.checkRequest` (`plugin/pkg/admission/resourcequota/
//! controller.go` `CheckRequest`, kube 1.34): which quotas of the namespace
//! a write falls under, the constraints they impose, whether their usage is
//! known, the resources and scopes the configuration limits by default
//! (which need a covering quota), and the usage each quota would have with
//! the write — or the reason it is refused.

use std::collections::BTreeSet;
use std::time::SystemTime;

use serde_json::Value;

use super::configuration::LimitedResource;
use super::evaluator::{hard_names, Evaluator};
use super::resource_list::{self, ResourceList};
use super::scopes::{self, ScopeRequirement};
use crate::admission::Operation;

/// One write as the check sees it.
pub struct Request<'a> {
    pub group: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub operation: Operation,
    pub object: &'a Value,
    pub old_object: Option<&'a Value>,
    pub now: SystemTime,
}

/// Why a write is refused: kube's `admission.NewForbidden` (a 403), or a
/// plain Go error (which the API server answers as a 500 without reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Forbidden(String),
    Error(String),
}

/// `prettyPrintResourceNames`.
fn pretty_names(names: &[String]) -> String {
    let mut names = names.to_vec();
    names.sort();
    names.join(",")
}

/// `hasUsageStats`: every constrained resource has a used value.
fn has_usage_stats(quota: &Value, restricted: &[String]) -> bool {
    let used = quota.pointer("/status/used").and_then(Value::as_object);
    hard_names(quota)
        .iter()
        .filter(|name| restricted.contains(name))
        .all(|name| used.is_some_and(|used| used.contains_key(name)))
}

/// `limitedByDefault`: the consumed resource names (positive usage) that
/// contain one of a limited resource's `matchContains`.
fn limited_by_default(usage: &ResourceList, limited: &[&LimitedResource]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for limited in limited {
        for (name, quantity) in usage {
            if quantity.sign() == 1
                && limited
                    .match_contains
                    .iter()
                    .any(|contained| name.contains(contained.as_str()))
            {
                names.insert(name.clone());
            }
        }
    }
    names
}

/// `quota.RemoveZeros`.
fn remove_zeros(list: ResourceList) -> ResourceList {
    list.into_iter()
        .filter(|(_, quantity)| !quantity.is_zero())
        .collect()
}

/// A `[]ScopedResourceSelectorRequirement` as Go's `%v` prints it:
/// `[{PriorityClass In [cluster-services]}]`.
fn print_scopes(requirements: &[ScopeRequirement]) -> String {
    let printed: Vec<String> = requirements
        .iter()
        .map(|requirement| {
            format!(
                "{{{} {} [{}]}}",
                requirement.scope_name,
                requirement.operator,
                requirement.values.join(" ")
            )
        })
        .collect();
    format!("[{}]", printed.join(" "))
}

/// The new `status.used` of each quota in `quotas` the write changes
/// (`None`: unchanged), or kube's reason for refusing it. `limited` is the
/// plugin configuration's `limitedResources`.
pub fn check_request(
    evaluator: &Evaluator,
    quotas: &[Value],
    limited: &[LimitedResource],
    request: &Request<'_>,
) -> Result<Vec<Option<ResourceList>>, Refusal> {
    let forbidden = |why: String| Refusal::Forbidden(why);
    let unchanged = || vec![None; quotas.len()];
    let object = request.object;
    // The scopes the configuration limits that the object is in.
    let limited_scopes: Vec<ScopeRequirement> = limited
        .iter()
        .flat_map(|limited| evaluator.matching_scopes(object, &limited.match_scopes))
        .collect();
    // The resource names that must be in a covering quota.
    let limited_here: Vec<&LimitedResource> = limited
        .iter()
        .filter(|limited| {
            limited.api_group == request.group && limited.resource == request.resource
        })
        .collect();
    let limited_names = if limited_here.is_empty() {
        BTreeSet::new()
    } else {
        limited_by_default(&evaluator.usage(object, request.now), &limited_here)
    };
    let mut interesting = Vec::new();
    let mut restricted_names: BTreeSet<String> = BTreeSet::new();
    let mut restricted_scopes: Vec<ScopeRequirement> = Vec::new();
    for (index, quota) in quotas.iter().enumerate() {
        restricted_scopes.extend(evaluator.matching_scopes(object, &scopes::requirements(quota)));
        if !evaluator.matches(quota, object) {
            continue;
        }
        let name = crate::object::name(quota);
        let restricted = evaluator.matching_resources(&hard_names(quota));
        if let Err(why) = evaluator.constraints(&restricted, object) {
            return Err(forbidden(format!("failed quota: {name}: {why}")));
        }
        if !has_usage_stats(quota, &restricted) {
            return Err(forbidden(format!(
                "status unknown for quota: {name}, resources: {}",
                pretty_names(&restricted)
            )));
        }
        interesting.push(index);
        restricted_names.extend(restricted);
    }
    let input_usage = evaluator.usage(object, request.now);
    let negative = resource_list::negative_names(&input_usage);
    if !negative.is_empty() {
        return Err(forbidden(format!(
            "quota usage is negative for resource(s): {}",
            pretty_names(&negative)
        )));
    }
    // The usage each interesting quota is charged, and what is charged when
    // none is (which decides whether the limits below are checked).
    let mut deltas: Vec<(usize, ResourceList)> = interesting
        .iter()
        .map(|index| (*index, input_usage.clone()))
        .collect();
    let mut delta_without_quota = ResourceList::new();
    if request.operation == Operation::Create && interesting.is_empty() {
        delta_without_quota = input_usage.clone();
    }
    if request.operation == Operation::Update {
        let Some(old) = request.old_object else {
            return Err(forbidden(
                "unable to get previous usage since prior version of object was not found".into(),
            ));
        };
        // Not a create on update: charge the difference, to the quotas
        // that held the old object too (one it moves into pays in full).
        if !crate::object::resource_version(old).is_empty() {
            let previous = evaluator.usage(old, request.now);
            let delta = resource_list::subtract_non_negative(&input_usage, &previous);
            if interesting.is_empty() {
                delta_without_quota = delta.clone();
            }
            for (index, charged) in &mut deltas {
                if evaluator.matches(&quotas[*index], old) {
                    *charged = delta.clone();
                }
            }
        } else if interesting.is_empty() {
            delta_without_quota = input_usage.clone();
        }
    }
    let deltas: Vec<(usize, ResourceList)> = deltas
        .into_iter()
        .map(|(index, delta)| (index, remove_zeros(delta)))
        .filter(|(_, delta)| !delta.is_empty())
        .collect();
    if interesting.is_empty() {
        if remove_zeros(delta_without_quota).is_empty() {
            return Ok(unchanged());
        }
    } else if deltas.is_empty() {
        return Ok(unchanged());
    }
    let uncovered_names: Vec<String> = limited_names
        .difference(&restricted_names)
        .cloned()
        .collect();
    if !uncovered_names.is_empty() {
        return Err(forbidden(format!(
            "insufficient quota to consume: {}",
            uncovered_names.join(",")
        )));
    }
    let uncovered_scopes = evaluator.uncovered_scopes(&limited_scopes, &restricted_scopes);
    if !uncovered_scopes.is_empty() {
        return Err(Refusal::Error(format!(
            "insufficient quota to match these scopes: {}",
            print_scopes(&uncovered_scopes)
        )));
    }
    let mut out = unchanged();
    for (index, delta) in deltas {
        let quota = &quotas[index];
        let hard = resource_list::from_value(quota.pointer("/status/hard"));
        let used = resource_list::from_value(quota.pointer("/status/used"));
        let requested = resource_list::mask(&delta, hard.keys());
        let new_used = resource_list::add(&used, &requested);
        if request.subresource != "status" {
            let masked_new_used = resource_list::mask(&new_used, requested.keys());
            let (allowed, exceeded) = resource_list::less_than_or_equal(&masked_new_used, &hard);
            if !allowed {
                return Err(forbidden(format!(
                    "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                    crate::object::name(quota),
                    resource_list::pretty_print(&resource_list::mask(&requested, &exceeded)),
                    resource_list::pretty_print(&resource_list::mask(&used, &exceeded)),
                    resource_list::pretty_print(&resource_list::mask(&hard, &exceeded)),
                )));
            }
        }
        if !resource_list::equals(&new_used, &used) {
            out[index] = Some(new_used);
        }
    }
    Ok(out)
}
