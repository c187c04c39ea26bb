//! The disruption controller (`pkg/controller/disruption/disruption.go`):
//! keeps every PodDisruptionBudget's status (expectedPods, currentHealthy,
//! desiredHealthy, disruptionsAllowed, disruptedPods, observedGeneration,
//! the `DisruptionAllowed` condition) from the pods its selector matches,
//! so that the eviction subresource can judge evictions. The computation is
//! `disruption_budget.rs`'s; this file is the loop and the writes
//! (`PUT …/poddisruptionbudgets/{name}/status` as
//! `system:serviceaccount:kube-system:disruption-controller`).
//!
//! Expected counts come from the pods' controllers as kube's finders read
//! them: ReplicationControllers, ReplicaSets (a Deployment's through the
//! Deployment), StatefulSets; kube's generic `/scale` finder (custom
//! resources) is not built, so such pods make the budget fail safe
//! (`found no controllers for pod …`). Pods whose eviction was not
//! followed by a deletion keep their `DisruptionTarget` condition (kube's
//! stale-disruption loop is not built).

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

use super::client::{resource_path, Client, ClientError};
use super::queue::WorkQueue;
use super::resources::{key_of, Resources};
use crate::api::Api;
use crate::disruption_budget::{budget_selector, compute_status, fail_safe_status, ControllerRef};
use crate::object;
use crate::object::feed::{Feed, ObjectSnapshot, Update};
use crate::registry::Registry;

const WORKERS: usize = 2;

pub(super) async fn run(api: Arc<Api>) {
    let client = Client::controller(api.clone(), "disruption-controller");
    let resources = Resources::new(&api.registry.load());
    let queue: Arc<WorkQueue<String>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    enqueue_namespace(&snapshot, &queue, None);
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let (client, queue) = (client.clone(), queue.clone());
        workers.spawn(async move {
            loop {
                let key = queue.get().await;
                match sync(&client, &key).await {
                    Ok(Some(recheck)) => queue.add_after(key.clone(), recheck),
                    Ok(None) => {}
                    Err(error) => {
                        tracing::debug!(budget = %key, %error, "syncing a PodDisruptionBudget failed");
                        queue.add_after(key.clone(), super::RETRY_DELAY);
                    }
                }
                queue.done(&key);
            }
        });
    }
    loop {
        match feed.next().await {
            Update::Resync(snapshot) => enqueue_namespace(&snapshot, &queue, None),
            Update::Changes(changes) => {
                let snapshot = api.store.snapshot();
                for change in changes {
                    let Some(info) = resources.parse_key(&change.key) else {
                        continue;
                    };
                    match (info.resource.group, info.resource.plural) {
                        ("policy", "poddisruptionbudgets") if !change.deleted => {
                            queue.add(format!("{}/{}", info.namespace, info.name))
                        }
                        // A pod or a controller's scale changed: every budget
                        // of the namespace is judged again (kube maps pods
                        // to their budgets; a namespace holds few budgets).
                        ("", "pods" | "replicationcontrollers")
                        | ("apps", "replicasets" | "deployments" | "statefulsets") => {
                            enqueue_namespace(&snapshot, &queue, Some(&info.namespace))
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// Queues the budgets of one namespace, or of all.
fn enqueue_namespace(
    snapshot: &ObjectSnapshot,
    queue: &WorkQueue<String>,
    namespace: Option<&str>,
) {
    let prefix = match namespace {
        Some(namespace) => format!("/registry/poddisruptionbudgets/{namespace}/"),
        None => "/registry/poddisruptionbudgets/".to_string(),
    };
    for (_, entry) in snapshot.range(&prefix, None) {
        if let Some(index) = entry.object.index() {
            queue.add(format!("{}/{}", index.namespace(), index.name()));
        }
    }
}

/// The scale of a pod's controller as kube's finders read it (uid, scale).
fn scale_of(
    registry: &Registry,
    snapshot: &ObjectSnapshot,
    controller: &ControllerRef<'_>,
    namespace: &str,
) -> Option<(String, i64)> {
    let group = controller
        .api_version
        .split_once('/')
        .map_or("", |(group, _)| group);
    let read = |group: &str, version: &str, plural: &str, name: &str| {
        let resource = registry.lookup(group, version, plural)?;
        snapshot
            .get(&key_of(resource, namespace, name))
            .and_then(|entry| entry.object.value())
    };
    let replicas = |object: &Value| {
        object
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1)
    };
    let checked = |object: Value, uid: &str| {
        (object::meta_str(&object, "uid") == uid).then(|| (uid.to_string(), replicas(&object)))
    };
    match (group, controller.kind) {
        // getPodReplicationController
        ("", "ReplicationController") => checked(
            read("", "v1", "replicationcontrollers", controller.name)?,
            controller.uid,
        ),
        // getPodReplicaSet, or getPodDeployment through the ReplicaSet.
        ("apps" | "extensions", "ReplicaSet") => {
            let replica_set = read("apps", "v1", "replicasets", controller.name)?;
            if object::meta_str(&replica_set, "uid") != controller.uid {
                return None;
            }
            match crate::disruption_budget::controller_of(&replica_set) {
                Some(owner) if owner.kind == "Deployment" => {
                    let deployment = read("apps", "v1", "deployments", owner.name)?;
                    checked(deployment, owner.uid)
                }
                _ => Some((controller.uid.to_string(), replicas(&replica_set))),
            }
        }
        // getPodStatefulSet
        ("apps", "StatefulSet") => checked(
            read("apps", "v1", "statefulsets", controller.name)?,
            controller.uid,
        ),
        _ => None,
    }
}

/// One budget's `trySync` (and `failSafe`); returns when to look again.
async fn sync(client: &Client, key: &str) -> Result<Option<std::time::Duration>, ClientError> {
    let api = client.api();
    let Some((namespace, name)) = key.split_once('/') else {
        return Ok(None);
    };
    let registry = api.registry.load();
    let (Some(budgets), Some(pods)) = (
        registry.lookup("policy", "v1", "poddisruptionbudgets"),
        registry.lookup("", "v1", "pods"),
    ) else {
        return Ok(None);
    };
    let snapshot = api.store.snapshot();
    let Some(mut budget) = snapshot
        .get(&key_of(budgets, namespace, name))
        .and_then(|entry| entry.object.value())
    else {
        return Ok(None);
    };
    let now = SystemTime::now();
    let now_text = crate::go::time::rfc3339(now);
    let computed = budget_selector(&budget)
        .map_err(crate::disruption_budget::BudgetError::from)
        .and_then(|selector| {
            let prefix = format!("/registry/{}/{namespace}/", pods.storage);
            let matching: Vec<Value> = match &selector {
                None => Vec::new(),
                Some(selector) => snapshot
                    .range(&prefix, None)
                    .filter(|(_, entry)| {
                        entry
                            .object
                            .index()
                            .is_some_and(|index| selector.matches(|key| index.label(key)))
                    })
                    .filter_map(|(_, entry)| entry.object.value())
                    .collect(),
            };
            let finder = |controller: &ControllerRef<'_>, namespace: &str| {
                scale_of(&registry, &snapshot, controller, namespace)
            };
            compute_status(&budget, &matching, &finder, now, &now_text)
        });
    let (status, recheck) = match computed {
        Ok(None) => return Ok(None),
        Ok(Some(computed)) => (computed.status, computed.recheck_after),
        Err(error) => (fail_safe_status(&budget, &error, &now_text), None),
    };
    if budget.get("status") == Some(&status) {
        return Ok(recheck);
    }
    budget["status"] = status;
    let path = format!(
        "{}/status",
        resource_path(budgets, Some(namespace), Some(name))
    );
    match client.update(&path, &budget).await {
        Ok(_) => Ok(recheck),
        // Changed or gone meanwhile: its event brings it back.
        Err(error) if error.is_conflict() || error.is_not_found() => Ok(None),
        Err(error) => Err(error),
    }
}
