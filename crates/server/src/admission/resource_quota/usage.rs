//! A quota's usage measured from the store (`pkg/quota/v1/resources.go`
//! `CalculateUsage`, `generic/evaluator.go` `CalculateUsageStats`), as the
//! resourcequota controller recalculates `status.used`: every evaluator
//! whose resources the quota names lists the namespace's objects, keeps
//! those in the quota's scopes and sums their usage.

use std::time::SystemTime;

use serde_json::Value;

use super::evaluator::Evaluator;
use super::resource_list::{self, ResourceList};
use super::scopes;
use crate::object::feed::ObjectSnapshot;
use crate::quantity::Quantity;
use crate::registry::{Registry, ResourceDef};

/// The served resource `group`/`plural` (any version: they share storage).
pub fn resource(registry: &Registry, group: &str, plural: &str) -> Option<&'static ResourceDef> {
    registry.resources().iter().copied().find(|resource| {
        resource.group == group
            && resource.plural == plural
            && resource.namespaced
            && !resource.storage.is_empty()
    })
}

/// The evaluators the quota registry holds for `hard`'s names: pods,
/// services and claims always, and an object-count evaluator per
/// `count/<resource>.<group>` or legacy alias (kube's quota monitor adds one
/// for every resource it can list).
fn evaluators(hard: &[String]) -> Vec<(String, String, Evaluator)> {
    let mut all = vec![
        ("".to_string(), "pods".to_string(), Evaluator::Pods),
        ("".to_string(), "services".to_string(), Evaluator::Services),
        (
            "".to_string(),
            "persistentvolumeclaims".to_string(),
            Evaluator::PersistentVolumeClaims,
        ),
    ];
    for name in hard {
        let (plural, group) = match name.strip_prefix("count/") {
            Some(rest) => match rest.split_once('.') {
                Some((plural, group)) => (plural.to_string(), group.to_string()),
                None => (rest.to_string(), String::new()),
            },
            None => (name.clone(), String::new()),
        };
        let Some(evaluator) = Evaluator::for_resource(&group, &plural) else {
            continue;
        };
        if !matches!(evaluator, Evaluator::ObjectCount { .. }) {
            continue;
        }
        if evaluator
            .matching_resources(std::slice::from_ref(name))
            .is_empty()
        {
            continue;
        }
        if !all.iter().any(|(_, _, known)| *known == evaluator) {
            all.push((group, plural, evaluator));
        }
    }
    all
}

/// `quota.CalculateUsage` for `quota` (its `spec.hard`, scopes and
/// namespace): the measured usage of each resource it names that some
/// evaluator measures.
pub fn calculate(
    registry: &Registry,
    snapshot: &ObjectSnapshot,
    quota: &Value,
    now: SystemTime,
) -> ResourceList {
    let namespace = crate::object::namespace(quota);
    let hard: Vec<String> = quota
        .pointer("/spec/hard")
        .and_then(Value::as_object)
        .map(|hard| hard.keys().cloned().collect())
        .unwrap_or_default();
    let requirements = scopes::requirements(quota);
    let mut used = ResourceList::new();
    for (group, plural, evaluator) in evaluators(&hard) {
        let measured = evaluator.matching_resources(&hard);
        if measured.is_empty() {
            continue;
        }
        let Some(resource) = resource(registry, &group, &plural) else {
            continue;
        };
        // Each tracked resource defaults to zero.
        let mut stats: ResourceList = measured
            .iter()
            .map(|name| (name.clone(), Quantity::from_count(0)))
            .collect();
        let prefix = format!("/registry/{}/{namespace}/", resource.storage);
        for (_, entry) in snapshot.range(&prefix, None) {
            let Some(object) = entry.object.value() else {
                continue;
            };
            let in_scope = scopes::matches_all(&requirements, |requirement| {
                evaluator.matches_scope(requirement, &object)
            });
            if in_scope {
                stats = resource_list::add(&stats, &evaluator.usage(&object, now));
            }
        }
        used = resource_list::add(&used, &resource_list::mask(&stats, &measured));
    }
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_count_evaluators_come_from_the_quotas_names() {
        let hard: Vec<String> = [
            "pods",
            "count/deployments.apps",
            "configmaps",
            "requests.cpu",
            "count/widgets.example.com",
            "count/events",
        ]
        .iter()
        .map(|name| name.to_string())
        .collect();
        let found: Vec<(String, String)> = evaluators(&hard)
            .into_iter()
            .map(|(group, plural, _)| (group, plural))
            .collect();
        let pair = |group: &str, plural: &str| (group.to_string(), plural.to_string());
        assert_eq!(
            found,
            [
                pair("", "pods"),
                pair("", "services"),
                pair("", "persistentvolumeclaims"),
                pair("apps", "deployments"),
                pair("", "configmaps"),
                pair("example.com", "widgets"),
            ]
        );
    }
}
