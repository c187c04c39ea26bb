//! The clusterrole-aggregation controller
//! (`pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`):
//! a ClusterRole with an `aggregationRule` gets as its rules the union of the
//! rules of every other ClusterRole its selectors match — selector by
//! selector, the matching roles by name, each rule once (`ruleExists`) — written
//! by server-side apply as `clusterrole-aggregation-controller` with force.
//!
//! kube queues every aggregated role on any ClusterRole change. Here a change
//! queues only the aggregated roles whose selectors match the changed role's
//! labels before or after it (and the role itself when it aggregates), so one
//! event costs the few aggregated roles it concerns, not all of them; each
//! sync reads labels from the cached objects' index and parses only the roles
//! that match.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde_json::{json, Value};

use super::client::{resource_path, Client, ClientError};
use super::queue::WorkQueue;
use crate::api::Api;
use crate::object::feed::{Feed, ObjectSnapshot, Update};
use crate::object::StoredObject;
use crate::rbac_policy::PolicyRule;
use crate::registry::ResourceDef;

/// The field manager of its applies (`applyClusterRoles`).
pub const FIELD_MANAGER: &str = "clusterrole-aggregation-controller";
const WORKERS: usize = 2;

#[derive(Debug, Clone, thiserror::Error)]
pub enum AggregationError {
    #[error(transparent)]
    Selector(#[from] crate::label_selector::SelectorError),
    #[error(transparent)]
    Write(#[from] ClientError),
}

use crate::label_selector::Selector;

trait MatchesObject {
    fn matches_object(&self, object: &StoredObject) -> bool;
}

impl MatchesObject for Selector {
    fn matches_object(&self, object: &StoredObject) -> bool {
        match object.index() {
            Some(index) => self.matches(|key| index.label(key)),
            None => false,
        }
    }
}

/// The `clusterRoleSelectors` of a role; `None` without an `aggregationRule`.
fn aggregation_selectors(role: &Value) -> Option<Result<Vec<Selector>, AggregationError>> {
    let rule = role.get("aggregationRule").filter(|rule| !rule.is_null())?;
    Some(
        rule.get("clusterRoleSelectors")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|selector| Selector::parse(selector).map_err(AggregationError::from))
            .collect(),
    )
}

/// The aggregated roles (name → selectors), kept from the feed, so that a
/// change finds the roles it concerns without reading every role.
#[derive(Default)]
struct Aggregators {
    roles: BTreeMap<String, Vec<Selector>>,
}

impl Aggregators {
    fn observe(&mut self, name: &str, object: Option<&StoredObject>) {
        match object
            .and_then(StoredObject::value)
            .as_ref()
            .and_then(aggregation_selectors)
        {
            // An invalid selector still marks the role aggregated: its sync reports it.
            Some(selectors) => {
                self.roles
                    .insert(name.to_string(), selectors.unwrap_or_default());
            }
            None => {
                self.roles.remove(name);
            }
        }
    }

    /// The aggregated roles a change of `object` (its old and new labels) concerns.
    fn concerned(&self, objects: &[&StoredObject], into: &WorkQueue<String>) {
        for (name, selectors) in &self.roles {
            if selectors
                .iter()
                .any(|selector| objects.iter().any(|object| selector.matches_object(object)))
            {
                into.add(name.clone());
            }
        }
    }
}

fn resync(
    snapshot: &ObjectSnapshot,
    prefix: &str,
    aggregators: &mut Aggregators,
    queue: &WorkQueue<String>,
) {
    aggregators.roles.clear();
    for (key, entry) in snapshot.range(prefix, None) {
        let name = &key[prefix.len()..];
        aggregators.observe(name, Some(&entry.object));
    }
    for name in aggregators.roles.keys() {
        queue.add(name.clone());
    }
}

pub(super) async fn run(api: Arc<Api>) {
    let Some(resource) = api
        .registry
        .lookup("rbac.authorization.k8s.io", "v1", "clusterroles")
    else {
        return;
    };
    let client = Client::controller(api.clone(), "clusterrole-aggregation-controller");
    let prefix = format!("/registry/{}/", resource.storage);
    let queue: Arc<WorkQueue<String>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    let mut aggregators = Aggregators::default();
    resync(&snapshot, &prefix, &mut aggregators, &queue);
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let (client, queue, prefix) = (client.clone(), queue.clone(), prefix.clone());
        workers.spawn(async move {
            loop {
                let name = queue.get().await;
                if let Err(error) = sync(&client, resource, &prefix, &name).await {
                    tracing::warn!(clusterrole = %name, %error, "aggregating failed");
                    if matches!(error, AggregationError::Write(_)) {
                        queue.add_after(name.clone(), super::RETRY_DELAY);
                    }
                }
                queue.done(&name);
            }
        });
    }
    loop {
        match feed.next().await {
            Update::Resync(snapshot) => resync(&snapshot, &prefix, &mut aggregators, &queue),
            Update::Changes(changes) => {
                for change in changes {
                    let Some(name) = change.key.strip_prefix(prefix.as_str()) else {
                        continue;
                    };
                    let after = (!change.deleted).then_some(change.object.as_ref());
                    aggregators.observe(name, after);
                    if aggregators.roles.contains_key(name) {
                        queue.add(name.to_string());
                    }
                    let mut states = vec![change.object.as_ref()];
                    states.extend(change.previous.as_deref());
                    aggregators.concerned(&states, &queue);
                }
            }
        }
    }
}

/// `syncClusterRole`: computes the aggregated rules from the current
/// snapshot and applies them when they differ.
async fn sync(
    client: &Client,
    resource: &'static ResourceDef,
    prefix: &str,
    name: &str,
) -> Result<(), AggregationError> {
    let snapshot = client.api().store.snapshot();
    let Some(role) = snapshot
        .get(&format!("{prefix}{name}"))
        .and_then(|entry| entry.object.value())
    else {
        return Ok(());
    };
    let Some(selectors) = aggregation_selectors(&role) else {
        return Ok(());
    };
    let rules = aggregated_rules(&snapshot, prefix, name, &selectors?);
    if rules == PolicyRule::rules_of(&role) {
        return Ok(());
    }
    // `rbacv1ac.ClusterRole(name).WithRules(...)`: no rules, no `rules` field.
    let mut body = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
    });
    if !rules.is_empty() {
        body["rules"] = Value::Array(rules.iter().map(PolicyRule::to_json).collect());
    }
    let path = resource_path(resource, None, Some(name));
    match client.apply(&path, FIELD_MANAGER, true, &body).await {
        Ok(_) => Ok(()),
        // Deleted meanwhile: nothing to aggregate into.
        Err(error) if error.is_not_found() => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// The union, in kube's order: selector by selector, matching roles by name
/// (the snapshot's key order), each role's rules in order, each rule once.
fn aggregated_rules(
    snapshot: &ObjectSnapshot,
    prefix: &str,
    name: &str,
    selectors: &[Selector],
) -> Vec<PolicyRule> {
    let mut rules = Vec::new();
    let mut seen = HashSet::new();
    for selector in selectors {
        for (key, entry) in snapshot.range(prefix, None) {
            if &key[prefix.len()..] == name || !selector.matches_object(&entry.object) {
                continue;
            }
            let Some(other) = entry.object.value() else {
                continue;
            };
            for rule in PolicyRule::rules_of(&other) {
                if seen.insert(rule.clone()) {
                    rules.push(rule);
                }
            }
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(selector: &Selector, labels: Value) -> bool {
        selector.matches(|key| labels.get(key).and_then(Value::as_str))
    }

    #[test]
    fn selectors_follow_label_selector_as_selector() {
        let selector = Selector::parse(&json!({
            "matchLabels": {"a": "true"},
            "matchExpressions": [
                {"key": "b", "operator": "In", "values": ["1", "2"]},
                {"key": "c", "operator": "DoesNotExist"},
            ],
        }))
        .unwrap();
        assert!(matches(&selector, json!({"a": "true", "b": "2"})));
        assert!(!matches(&selector, json!({"a": "true", "b": "3"})));
        assert!(!matches(&selector, json!({"a": "true", "b": "1", "c": ""})));
        // An empty selector matches every role.
        assert!(matches(&Selector::parse(&json!({})).unwrap(), json!({})));
        assert_eq!(
            Selector::parse(&json!({"matchExpressions": [{"key": "k", "operator": "In"}]}))
                .unwrap_err()
                .to_string(),
            "invalid selector {\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"In\"}]}: for 'in', 'notin' operators, values set can't be empty (k)"
        );
        assert!(
            Selector::parse(&json!({"matchExpressions": [{"key": "k", "operator": "Gt"}]}))
                .is_err()
        );
    }
}
