//! apiextensions-apiserver's CRD finalizer
//! (`pkg/controller/finalizer/crd_finalizer.go`): a CRD marked for deletion
//! (`api/deletion/crd.rs`) loses every custom resource (through the API, so
//! their own finalizers are honoured), then its cleanup finalizer, and goes.
//! kube polls for the instances to be gone every 5 s; this one checks again
//! as soon as anything changes.

use std::sync::Arc;

use serde_json::{json, Value};

use super::client::{resource_path, Client, ClientError};
use super::queue::WorkQueue;
use crate::api::Api;
use crate::crd::{condition_true, CRD_PREFIX};
use crate::object::feed::{Feed, ObjectSnapshot, Update};
use crate::registry::ResourceDef;

/// `apiextensions.CustomResourceCleanupFinalizer`.
const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";
/// How long a CRD waits between checks for its instances to be gone.
const RECHECK: std::time::Duration = std::time::Duration::from_millis(100);

pub(super) async fn run(api: Arc<Api>) {
    let client = Client::apiserver(api.clone());
    let queue: Arc<WorkQueue<String>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    enqueue_all(&snapshot, &queue);
    let mut workers = tokio::task::JoinSet::new();
    {
        let queue = queue.clone();
        workers.spawn(async move {
            loop {
                let name = queue.get().await;
                match sync(&client, &name).await {
                    Ok(Progress::Done) => {}
                    Ok(Progress::Waiting) => queue.add_after(name.clone(), RECHECK),
                    Err(error) => {
                        tracing::debug!(%name, %error, "finalizing a CRD failed");
                        queue.add_after(name.clone(), super::RETRY_DELAY);
                    }
                }
                queue.done(&name);
            }
        });
    }
    loop {
        match feed.next().await {
            Update::Resync(snapshot) => enqueue_all(&snapshot, &queue),
            Update::Changes(changes) => {
                for change in changes {
                    if let Some(name) = change.key.strip_prefix(CRD_PREFIX) {
                        if !change.deleted {
                            queue.add(name.to_string());
                        }
                    }
                }
            }
        }
    }
}

fn enqueue_all(snapshot: &ObjectSnapshot, queue: &WorkQueue<String>) {
    for (key, _) in snapshot.range(CRD_PREFIX, None) {
        if let Some(name) = key.strip_prefix(CRD_PREFIX) {
            queue.add(name.to_string());
        }
    }
}

enum Progress {
    Done,
    /// Instances are still being deleted.
    Waiting,
}

fn has_cleanup_finalizer(crd: &Value) -> bool {
    crate::object::metadata(crd)
        .and_then(|metadata| metadata.get("finalizers"))
        .and_then(Value::as_array)
        .is_some_and(|finalizers| finalizers.iter().any(|f| f == CLEANUP_FINALIZER))
}

async fn sync(client: &Client, name: &str) -> Result<Progress, ClientError> {
    let api = client.api();
    let snapshot = api.store.snapshot();
    let Some(mut crd) = snapshot
        .get(&format!("{CRD_PREFIX}{name}"))
        .and_then(|entry| entry.object.value())
    else {
        return Ok(Progress::Done);
    };
    if crd.pointer("/metadata/deletionTimestamp").is_none() || !has_cleanup_finalizer(&crd) {
        return Ok(Progress::Done);
    }
    let Some(definitions) =
        api.registry
            .lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    else {
        return Ok(Progress::Done);
    };
    let crd_path = resource_path(definitions, None, Some(name));
    let status_path = format!("{crd_path}/status");
    let condition = if condition_true(&crd, "Established") {
        let remaining = instances(client, &crd, &snapshot);
        if !remaining.is_empty() {
            if set_terminating(
                &mut crd,
                "True",
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
            ) {
                crd = match client.update(&status_path, &crd).await {
                    Ok(updated) => updated,
                    Err(error) if error.is_not_found() || error.is_conflict() => {
                        return Ok(Progress::Done)
                    }
                    Err(error) => return Err(error),
                };
            }
            for (path, deleting) in remaining {
                if deleting {
                    continue;
                }
                match client.delete(&path, &json!({})).await {
                    Ok(_) => {}
                    Err(error) if error.is_not_found() || error.is_conflict() => {}
                    Err(error) => {
                        set_terminating(
                            &mut crd,
                            "True",
                            "InstanceDeletionFailed",
                            &format!("could not issue all deletes: {}", error.message),
                        );
                        let _ = client.update(&status_path, &crd).await;
                        return Err(error);
                    }
                }
            }
            return Ok(Progress::Waiting);
        }
        (
            "False",
            "InstanceDeletionCompleted",
            "removed all instances",
        )
    } else {
        (
            "False",
            "NeverEstablished",
            "resource was never established",
        )
    };
    let (status, reason, message) = condition;
    if set_terminating(&mut crd, status, reason, message) {
        crd = match client.update(&status_path, &crd).await {
            Ok(updated) => updated,
            Err(error) if error.is_not_found() || error.is_conflict() => return Ok(Progress::Done),
            Err(error) => return Err(error),
        };
    }
    // The status path keeps metadata; the finalizer goes through the CRD itself.
    if let Some(finalizers) = crd
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        finalizers.retain(|finalizer| finalizer != CLEANUP_FINALIZER);
    }
    match client.update(&crd_path, &crd).await {
        Ok(_) => Ok(Progress::Done),
        Err(error) if error.is_not_found() || error.is_conflict() => Ok(Progress::Done),
        Err(error) => Err(error),
    }
}

/// Sets the Terminating condition; whether it changed.
fn set_terminating(crd: &mut Value, status: &str, reason: &str, message: &str) -> bool {
    let before = crd.pointer("/status/conditions").cloned();
    let now = crate::go::time::now_rfc3339();
    crate::crd::set_condition(crd, "Terminating", status, reason, message, &now);
    crd.pointer("/status/conditions").cloned() != before
}

/// The API path of every stored instance of `crd`, and whether it is
/// already being deleted.
fn instances(client: &Client, crd: &Value, snapshot: &ObjectSnapshot) -> Vec<(String, bool)> {
    let text = |pointer: &str| crd.pointer(pointer).and_then(Value::as_str).unwrap_or("");
    let (group, plural) = (text("/spec/group"), text("/spec/names/plural"));
    let registry = client.api().registry.load();
    let Some(resource): Option<&'static ResourceDef> =
        registry.resources().iter().copied().find(|resource| {
            resource.custom && resource.group == group && resource.plural == plural
        })
    else {
        return Vec::new();
    };
    let prefix = format!("/registry/{}/", resource.storage);
    snapshot
        .range(&prefix, None)
        .filter_map(|(key, entry)| {
            let rest = key.strip_prefix(&prefix)?;
            let (namespace, name) = match rest.split_once('/') {
                Some((namespace, name)) if resource.namespaced => (Some(namespace), name),
                None if !resource.namespaced => (None, rest),
                _ => return None,
            };
            let deleting = entry
                .object
                .value()
                .is_some_and(|object| object.pointer("/metadata/deletionTimestamp").is_some());
            Some((resource_path(resource, namespace, Some(name)), deleting))
        })
        .collect()
}
