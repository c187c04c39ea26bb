//! `quotaEvaluator.checkRequest` (`plugin/pkg/admission/resourcequota/
//! controller.go`): which quotas of the namespace a write falls under, the
//! constraints they impose, whether their usage is known, and the usage
//! each would have with the write — or the reason it is refused.

use std::time::SystemTime;

use serde_json::Value;

use super::evaluator::{hard_names, Evaluator};
use super::resource_list::{self, ResourceList};
use crate::admission::Operation;

/// One write as the check sees it.
pub struct Request<'a> {
    pub operation: Operation,
    pub object: &'a Value,
    pub old_object: Option<&'a Value>,
    pub now: SystemTime,
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

/// The new `status.used` of each quota in `quotas` the write changes
/// (`None`: unchanged), or kube's reason for refusing it (the caller makes
/// it a 403 with `admission.NewForbidden`).
pub fn check_request(
    evaluator: &Evaluator,
    quotas: &[Value],
    request: &Request<'_>,
) -> Result<Vec<Option<ResourceList>>, String> {
    let unchanged = || vec![None; quotas.len()];
    let mut interesting = Vec::new();
    for (index, quota) in quotas.iter().enumerate() {
        if !evaluator.matches(quota, request.object) {
            continue;
        }
        let name = crate::object::name(quota);
        let restricted = evaluator.matching_resources(&hard_names(quota));
        if let Err(why) = evaluator.constraints(&restricted, request.object) {
            return Err(format!("failed quota: {name}: {why}"));
        }
        if !has_usage_stats(quota, &restricted) {
            return Err(format!(
                "status unknown for quota: {name}, resources: {}",
                pretty_names(&restricted)
            ));
        }
        interesting.push(index);
    }
    if interesting.is_empty() {
        return Ok(unchanged());
    }
    let mut delta = evaluator.usage(request.object, request.now);
    let negative = resource_list::negative_names(&delta);
    if !negative.is_empty() {
        return Err(format!(
            "quota usage is negative for resource(s): {}",
            pretty_names(&negative)
        ));
    }
    if request.operation == Operation::Update {
        let Some(old) = request.old_object else {
            return Err(
                "unable to get previous usage since prior version of object was not found".into(),
            );
        };
        if !crate::object::resource_version(old).is_empty() {
            let previous = evaluator.usage(old, request.now);
            delta = resource_list::subtract_non_negative(&delta, &previous);
        }
    }
    if resource_list::is_zero(&delta) {
        return Ok(unchanged());
    }
    let mut out = unchanged();
    for index in interesting {
        let quota = &quotas[index];
        let hard = resource_list::from_value(quota.pointer("/status/hard"));
        let used = resource_list::from_value(quota.pointer("/status/used"));
        let requested = resource_list::mask(&delta, hard.keys());
        let new_used = resource_list::add(&used, &requested);
        let masked_new_used = resource_list::mask(&new_used, requested.keys());
        let (allowed, exceeded) = resource_list::less_than_or_equal(&masked_new_used, &hard);
        if !allowed {
            return Err(format!(
                "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                crate::object::name(quota),
                resource_list::pretty_print(&resource_list::mask(&requested, &exceeded)),
                resource_list::pretty_print(&resource_list::mask(&used, &exceeded)),
                resource_list::pretty_print(&resource_list::mask(&hard, &exceeded)),
            ));
        }
        if !resource_list::equals(&new_used, &used) {
            out[index] = Some(new_used);
        }
    }
    Ok(out)
}
