//! The storage-object-in-use protection controllers, the other half of the
//! StorageObjectInUseProtection admission plugin
//! (`admission/storage_object_in_use_protection.rs`), which gives every new
//! claim and volume a finalizer:
//! - pvc-protection (`pkg/controller/volume/pvcprotection`): a claim being
//!   deleted loses `kubernetes.io/pvc-protection` once no scheduled pod of
//!   its namespace uses it (`podUsesPVC`: a `persistentVolumeClaim` volume
//!   naming it, or the generic ephemeral volume `<pod>-<volume>` of a pod
//!   not shut down);
//! - pv-protection (`pkg/controller/volume/pvprotection`): a volume being
//!   deleted loses `kubernetes.io/pv-protection` once it is not `Bound`
//!   (`isVolumeInUse`).
//!
//! Each removes its finalizer with an update of the object as its own
//! service account (`pvc-protection-controller`, `pv-protection-controller`);
//! the update that removes the last finalizer deletes the object.

use std::sync::Arc;

use serde_json::Value;

use super::client::{resource_path, Client, ClientError};
use super::queue::WorkQueue;
use crate::admission::storage_object_in_use_protection::{
    PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER,
};
use crate::api::Api;
use crate::object::feed::{Feed, ObjectSnapshot, Update};

const CLAIMS: &str = "/registry/persistentvolumeclaims/";
const VOLUMES: &str = "/registry/persistentvolumes/";
const PODS: &str = "/registry/pods/";

/// Which of the two controllers runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Protected {
    Claims,
    Volumes,
}

impl Protected {
    fn prefix(self) -> &'static str {
        match self {
            Protected::Claims => CLAIMS,
            Protected::Volumes => VOLUMES,
        }
    }

    fn finalizer(self) -> &'static str {
        match self {
            Protected::Claims => PVC_PROTECTION_FINALIZER,
            Protected::Volumes => PV_PROTECTION_FINALIZER,
        }
    }
}

pub(super) async fn run(api: Arc<Api>, protected: Protected) {
    let service_account = match protected {
        Protected::Claims => "pvc-protection-controller",
        Protected::Volumes => "pv-protection-controller",
    };
    let client = Client::controller(api.clone(), service_account);
    let queue: Arc<WorkQueue<String>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    enqueue_under(&snapshot, &queue, protected.prefix());
    let mut workers = tokio::task::JoinSet::new();
    {
        let queue = queue.clone();
        workers.spawn(async move {
            loop {
                let key = queue.get().await;
                if let Err(error) = sync(&client, protected, &key).await {
                    tracing::debug!(%key, %error, "removing a protection finalizer failed");
                    queue.add_after(key.clone(), super::RETRY_DELAY);
                }
                queue.done(&key);
            }
        });
    }
    loop {
        match feed.next().await {
            Update::Resync(snapshot) => enqueue_under(&snapshot, &queue, protected.prefix()),
            Update::Changes(changes) => {
                let mut snapshot = None;
                for change in changes {
                    if change.deleted {
                        continue;
                    }
                    if change.key.starts_with(protected.prefix()) {
                        queue.add(change.key.clone());
                    } else if protected == Protected::Claims {
                        // A pod changed: the claims of its namespace may be free.
                        if let Some((namespace, _)) = change
                            .key
                            .strip_prefix(PODS)
                            .and_then(|rest| rest.split_once('/'))
                        {
                            let snapshot = snapshot.get_or_insert_with(|| api.store.snapshot());
                            enqueue_under(snapshot, &queue, &format!("{CLAIMS}{namespace}/"));
                        }
                    }
                }
            }
        }
    }
}

/// Queues the objects under `prefix` being deleted.
fn enqueue_under(snapshot: &ObjectSnapshot, queue: &WorkQueue<String>, prefix: &str) {
    for (key, entry) in snapshot.range(prefix, None) {
        let deleting = entry
            .object
            .value()
            .is_some_and(|object| object.pointer("/metadata/deletionTimestamp").is_some());
        if deleting {
            queue.add(key.clone());
        }
    }
}

fn has_finalizer(object: &Value, finalizer: &str) -> bool {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|finalizers| finalizers.iter().any(|present| present == finalizer))
}

async fn sync(client: &Client, protected: Protected, key: &str) -> Result<(), ClientError> {
    let api = client.api();
    let snapshot = api.store.snapshot();
    let Some(mut object) = snapshot.get(key).and_then(|entry| entry.object.value()) else {
        return Ok(());
    };
    let finalizer = protected.finalizer();
    if object.pointer("/metadata/deletionTimestamp").is_none() || !has_finalizer(&object, finalizer)
    {
        return Ok(());
    }
    let in_use = match protected {
        Protected::Claims => claim_in_use(&snapshot, &object),
        Protected::Volumes => {
            object.pointer("/status/phase").and_then(Value::as_str) == Some("Bound")
        }
    };
    if in_use {
        return Ok(());
    }
    let plural = match protected {
        Protected::Claims => "persistentvolumeclaims",
        Protected::Volumes => "persistentvolumes",
    };
    let Some(resource) = api.registry.load().lookup("", "v1", plural) else {
        return Ok(());
    };
    let namespace = crate::object::namespace(&object).to_string();
    let name = crate::object::name(&object).to_string();
    if let Some(finalizers) = object
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        finalizers.retain(|present| present != finalizer);
    }
    let path = resource_path(resource, Some(&namespace), Some(&name));
    match client.update(&path, &object).await {
        Ok(_) => Ok(()),
        // Gone, or changed meanwhile (the change is queued again).
        Err(error) if error.is_not_found() || error.is_conflict() => Ok(()),
        Err(error) => Err(error),
    }
}

/// `podUsesPVC` over the claim's namespace: a scheduled pod with a volume
/// naming the claim, or whose generic ephemeral volume is the claim while
/// the pod is not shut down.
fn claim_in_use(snapshot: &ObjectSnapshot, claim: &Value) -> bool {
    let namespace = crate::object::namespace(claim);
    let name = crate::object::name(claim);
    snapshot
        .range(&format!("{PODS}{namespace}/"), None)
        .filter_map(|(_, entry)| entry.object.value())
        .any(|pod| pod_uses_claim(&pod, name))
}

fn pod_uses_claim(pod: &Value, claim: &str) -> bool {
    let scheduled = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_some_and(|node| !node.is_empty());
    if !scheduled {
        return false;
    }
    let phase = pod.pointer("/status/phase").and_then(Value::as_str);
    let shut_down = matches!(phase, Some("Succeeded" | "Failed"))
        || pod.pointer("/metadata/deletionTimestamp").is_some();
    let pod_name = crate::object::name(pod);
    pod.pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|volume| {
            let named = volume
                .pointer("/persistentVolumeClaim/claimName")
                .and_then(Value::as_str)
                == Some(claim);
            let ephemeral = volume.get("ephemeral").is_some()
                && !shut_down
                && format!(
                    "{pod_name}-{}",
                    volume
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                ) == claim;
            named || ephemeral
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn scheduled_pods_hold_their_claims() {
        let pod = |node: &str, phase: &str, volume: Value| {
            json!({"metadata": {"name": "web"}, "spec": {"nodeName": node, "volumes": [volume]},
                   "status": {"phase": phase}})
        };
        let claim_volume = json!({"name": "data", "persistentVolumeClaim": {"claimName": "c"}});
        let ephemeral = json!({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}});
        assert!(pod_uses_claim(
            &pod("n1", "Running", claim_volume.clone()),
            "c"
        ));
        assert!(!pod_uses_claim(
            &pod("", "Pending", claim_volume.clone()),
            "c"
        ));
        assert!(!pod_uses_claim(
            &pod("n1", "Running", claim_volume),
            "other"
        ));
        assert!(pod_uses_claim(
            &pod("n1", "Running", ephemeral.clone()),
            "web-scratch"
        ));
        assert!(!pod_uses_claim(
            &pod("n1", "Succeeded", ephemeral),
            "web-scratch"
        ));
    }
}
