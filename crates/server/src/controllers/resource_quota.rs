//! The resourcequota controller (`pkg/controller/resourcequota/
//! resource_quota_controller.go` `syncResourceQuota`, `replenishQuota`,
//! `pkg/quota/v1/install/update_filter.go`): keeps every ResourceQuota's
//! `status.hard` equal to its `spec.hard` and recalculates `status.used`
//! from the store (`admission/resource_quota/usage.rs`) when a quota is
//! created or its `spec.hard` changes, when a counted object is deleted or
//! stops counting (a pod ending, a service changing type, a claim's storage
//! changing: kube's replenishment), and every [`RESYNC_PERIOD`] for all
//! quotas (`--resource-quota-sync-period`). Writes are `PUT
//! …/resourcequotas/{name}/status` as
//! `system:serviceaccount:kube-system:resourcequota-controller`.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use super::client::{resource_path, Client, ClientError};
use super::queue::WorkQueue;
use super::resources::{key_of, Resources};
use crate::admission::resource_quota::evaluator::Evaluator;
use crate::admission::resource_quota::resource_list::{self, ResourceList};
use crate::admission::resource_quota::{pods, quotas_prefix, usage};
use crate::api::Api;
use crate::object::feed::{Feed, ObjectChange, ObjectSnapshot, Update};

const WORKERS: usize = 2;

/// kube-controller-manager's `--resource-quota-sync-period` default.
pub const RESYNC_PERIOD: Duration = Duration::from_secs(5 * 60);

pub(super) async fn run(api: Arc<Api>) {
    let client = Client::controller(api.clone(), "resourcequota-controller");
    let resources = Resources::new(&api.registry.load());
    let queue: Arc<WorkQueue<String>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    enqueue_all(&snapshot, &queue);
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let (client, queue) = (client.clone(), queue.clone());
        workers.spawn(async move {
            loop {
                let key = queue.get().await;
                if let Err(error) = sync(&client, &key).await {
                    tracing::debug!(quota = %key, %error, "syncing a ResourceQuota failed");
                    queue.add_after(key.clone(), super::RETRY_DELAY);
                }
                queue.done(&key);
            }
        });
    }
    let mut resync = tokio::time::interval(RESYNC_PERIOD);
    resync.tick().await;
    loop {
        tokio::select! {
            update = feed.next() => match update {
                Update::Resync(snapshot) => enqueue_all(&snapshot, &queue),
                Update::Changes(changes) => {
                    let snapshot = api.store.snapshot();
                    for change in changes {
                        on_change(&resources, &snapshot, &queue, &change);
                    }
                }
            },
            _ = resync.tick() => enqueue_all(&api.store.snapshot(), &queue),
        }
    }
}

fn enqueue_all(snapshot: &ObjectSnapshot, queue: &WorkQueue<String>) {
    for (_, entry) in snapshot.range("/registry/resourcequotas/", None) {
        if let Some(index) = entry.object.index() {
            queue.add(format!("{}/{}", index.namespace(), index.name()));
        }
    }
}

fn hard_of(object: &Value, pointer: &str) -> ResourceList {
    resource_list::from_value(object.pointer(pointer))
}

/// What one change means for the quotas.
fn on_change(
    resources: &Resources,
    snapshot: &ObjectSnapshot,
    queue: &WorkQueue<String>,
    change: &ObjectChange,
) {
    let Some(info) = resources.parse_key(&change.key) else {
        return;
    };
    if info.namespace.is_empty() {
        return;
    }
    let (group, plural) = (info.resource.group, info.resource.plural);
    if group.is_empty() && plural == "resourcequotas" {
        if change.deleted {
            return;
        }
        let Some(quota) = change.object.value() else {
            return;
        };
        // Only a new quota or a change of spec.hard (status updates are this
        // controller's and admission's own).
        let spec_changed = change.previous.as_ref().is_none_or(|previous| {
            previous.value().is_none_or(|previous| {
                !resource_list::equals(
                    &hard_of(&previous, "/spec/hard"),
                    &hard_of(&quota, "/spec/hard"),
                )
            })
        });
        let uncalculated = quota.pointer("/status/hard").is_none();
        if spec_changed || uncalculated {
            queue.add(format!("{}/{}", info.namespace, info.name));
        }
        return;
    }
    let Some(evaluator) = Evaluator::for_resource(group, plural) else {
        return;
    };
    if !change.deleted && !stopped_counting(&evaluator, change) {
        return;
    }
    // replenishQuota: the namespace's quotas that track this resource.
    for (_, entry) in snapshot.range(&quotas_prefix(&info.namespace), None) {
        let Some(quota) = entry.object.value() else {
            continue;
        };
        let hard: Vec<String> = hard_of(&quota, "/status/hard").into_keys().collect();
        if !evaluator.matching_resources(&hard).is_empty() {
            queue.add(format!(
                "{}/{}",
                info.namespace,
                crate::object::name(&quota)
            ));
        }
    }
}

/// `install.DefaultUpdateFilter`: an update that lowers usage.
fn stopped_counting(evaluator: &Evaluator, change: &ObjectChange) -> bool {
    let (Some(previous), Some(current)) = (
        change
            .previous
            .as_ref()
            .and_then(|previous| previous.value()),
        change.object.value(),
    ) else {
        return false;
    };
    match evaluator {
        Evaluator::Pods => {
            let now = SystemTime::now();
            allocated_resources_changed(&previous, &current)
                || (pods::counts_for_compute(&previous, now)
                    && !pods::counts_for_compute(&current, now))
        }
        Evaluator::Services => previous.pointer("/spec/type") != current.pointer("/spec/type"),
        Evaluator::PersistentVolumeClaims => {
            let now = SystemTime::now();
            !resource_list::equals(
                &evaluator.usage(&previous, now),
                &evaluator.usage(&current, now),
            )
        }
        Evaluator::ObjectCount { .. } => false,
    }
}

/// `hasAllocatedResourcesChanged` (in-place resize is on in 1.34): with as
/// many container statuses as before, one whose `allocatedResources` differ.
fn allocated_resources_changed(previous: &Value, current: &Value) -> bool {
    let statuses = |pod: &Value| {
        pod.pointer("/status/containerStatuses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (previous, current) = (statuses(previous), statuses(current));
    previous.len() == current.len()
        && previous.iter().zip(&current).any(|(previous, current)| {
            !resource_list::equals(
                &resource_list::from_value(previous.get("allocatedResources")),
                &resource_list::from_value(current.get("allocatedResources")),
            )
        })
}

/// `syncResourceQuota`.
async fn sync(client: &Client, key: &str) -> Result<(), ClientError> {
    let api = client.api();
    let Some((namespace, name)) = key.split_once('/') else {
        return Ok(());
    };
    let registry = api.registry.load();
    let Some(quotas) = registry.lookup("", "v1", "resourcequotas") else {
        return Ok(());
    };
    let snapshot = api.store.snapshot();
    let Some(mut quota) = snapshot
        .get(&key_of(quotas, namespace, name))
        .and_then(|entry| entry.object.value())
    else {
        return Ok(());
    };
    let hard = hard_of(&quota, "/spec/hard");
    let previous_used = hard_of(&quota, "/status/used");
    let measured = usage::calculate(&registry, &snapshot, &quota, SystemTime::now());
    let mut used = previous_used.clone();
    used.extend(measured);
    let used = resource_list::mask(&used, hard.keys());
    let calculated =
        quota.pointer("/status/hard").is_some() && quota.pointer("/status/used").is_some();
    let dirty = !calculated
        || !resource_list::equals(&hard, &hard_of(&quota, "/status/hard"))
        || !resource_list::equals(&used, &previous_used);
    if !dirty {
        return Ok(());
    }
    let spec_hard = quota
        .pointer("/spec/hard")
        .cloned()
        .unwrap_or_else(|| json!({}));
    quota["status"] = json!({"hard": spec_hard, "used": resource_list::to_value(&used)});
    let path = format!(
        "{}/status",
        resource_path(quotas, Some(namespace), Some(name))
    );
    match client.update(&path, &quota).await {
        Ok(_) => Ok(()),
        Err(error) if error.is_not_found() => Ok(()),
        Err(error) => Err(error),
    }
}
