//! The garbage collector (`pkg/controller/garbagecollector`): dependents
//! whose owners are gone (or were replaced: another uid) are deleted;
//! an owner deleted in the foreground (`foregroundDeletion` finalizer) waits
//! for its dependents — those with `blockOwnerDeletion` — before its
//! finalizer is removed; an owner deleted with `orphan` first has its
//! ownerReference removed from every dependent.
//!
//! An ownerReference names its owner by apiVersion, kind, name and uid; a
//! namespaced dependent's owner is looked up in the dependent's namespace,
//! a cluster-scoped owner anywhere. A cluster-scoped dependent naming a
//! namespaced owner, or an owner of a kind this server does not serve, is
//! never collected (kube cannot resolve those either).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::client::{resource_path, Client, ClientError};
use super::gc_graph::{owner_refs, Graph, OwnerRef};
use super::queue::WorkQueue;
use super::resources::{key_of, KeyInfo, LiveResources};
use crate::api::Api;
use crate::object;
use crate::object::feed::{Feed, ObjectChange, ObjectSnapshot, Update};

pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";
pub const ORPHAN_FINALIZER: &str = "orphan";
/// kube-controller-manager's `--concurrent-gc-syncs` default.
const WORKERS: usize = 20;
/// Conflicting patches are retried this often before the item is requeued.
const PATCH_ATTEMPTS: usize = 5;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Work {
    /// `attemptToDeleteItem`: is this dependent garbage?
    AttemptToDelete(String),
    /// `processDeletingDependentsItem`: an owner deleted in the foreground.
    DeletingDependents(String),
    /// `orphanDependents`: an owner deleted with the orphan finalizer.
    Orphan(String),
}

#[derive(Default)]
struct State {
    graph: Graph,
    /// uid → key of objects waiting for their dependents (foreground deletion).
    deleting_owners: HashMap<String, String>,
}

struct Collector {
    client: Client,
    resources: LiveResources,
    state: Mutex<State>,
    queue: Arc<WorkQueue<Work>>,
}

pub(super) async fn run(api: Arc<Api>) {
    let collector = Arc::new(Collector {
        client: Client::controller(api.clone(), "generic-garbage-collector"),
        resources: LiveResources::new(api.registry.clone()),
        state: Mutex::new(State::default()),
        queue: WorkQueue::new(),
    });
    let (mut feed, snapshot) = Feed::start(&api.store);
    collector.resync(&snapshot);
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let collector = collector.clone();
        workers.spawn(async move {
            loop {
                let work = collector.queue.get().await;
                if let Err(error) = collector.process(&work).await {
                    tracing::debug!(?work, %error, "garbage collection failed; retrying");
                    collector.queue.add_after(work.clone(), super::RETRY_DELAY);
                }
                collector.queue.done(&work);
            }
        });
    }
    loop {
        match feed.next().await {
            Update::Resync(snapshot) => collector.resync(&snapshot),
            Update::Changes(changes) => {
                for change in &changes {
                    collector.observe(change);
                }
            }
        }
    }
}

fn is_deleting(object: &Value) -> bool {
    object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|stamp| !stamp.is_null())
}

fn has_finalizer(object: &Value, finalizer: &str) -> bool {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().any(|f| f.as_str() == Some(finalizer)))
}

fn uid(object: &Value) -> &str {
    object::meta_str(object, "uid")
}

impl Collector {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Rebuild the index from a whole snapshot and look at everything once.
    fn resync(&self, snapshot: &ObjectSnapshot) {
        let mut state = self.lock();
        state.graph.clear();
        state.deleting_owners.clear();
        for (key, entry) in snapshot.objects.iter() {
            let Some(index) = entry.object.index() else {
                continue;
            };
            let owners: Vec<String> = index.owner_refs().iter().map(|r| r.uid.clone()).collect();
            if !owners.is_empty() {
                state.graph.set(key, owners);
                self.queue.add(Work::AttemptToDelete(key.clone()));
            }
            if index.is_deleting() {
                if index.has_finalizer(ORPHAN_FINALIZER) {
                    self.queue.add(Work::Orphan(key.clone()));
                }
                if index.has_finalizer(FOREGROUND_FINALIZER) {
                    state
                        .deleting_owners
                        .insert(index.uid().to_string(), key.clone());
                    self.queue.add(Work::DeletingDependents(key.clone()));
                }
            }
        }
    }

    /// `processGraphChanges`: keep the index current and queue what the change affects.
    fn observe(&self, change: &ObjectChange) {
        let key = &change.key;
        let mut state = self.lock();
        let Some(index) = change.object.index() else {
            return;
        };
        let object_uid = index.uid().to_string();
        if change.deleted {
            let previous_owners = state.graph.set(key, Vec::new());
            state.deleting_owners.remove(&object_uid);
            // Its dependents lost an owner.
            for dependent in state.graph.dependents(&object_uid) {
                self.queue.add(Work::AttemptToDelete(dependent));
            }
            // Owners waiting for it may be done.
            for owner in previous_owners {
                if let Some(owner_key) = state.deleting_owners.get(&owner) {
                    self.queue.add(Work::DeletingDependents(owner_key.clone()));
                }
            }
            return;
        }
        let refs = index.owner_refs();
        let owners: Vec<String> = refs.iter().map(|r| r.uid.clone()).collect();
        let previous_refs = change
            .previous
            .as_ref()
            .and_then(|previous| previous.index())
            .map(|previous| previous.owner_refs());
        let previous_owners = state.graph.set(key, owners.clone());
        if !refs.is_empty() && previous_refs != Some(refs) {
            self.queue.add(Work::AttemptToDelete(key.clone()));
        }
        for owner in previous_owners.iter().chain(owners.iter()) {
            if let Some(owner_key) = state.deleting_owners.get(owner) {
                self.queue.add(Work::DeletingDependents(owner_key.clone()));
            }
        }
        if index.is_deleting() {
            if index.has_finalizer(ORPHAN_FINALIZER) {
                self.queue.add(Work::Orphan(key.clone()));
            }
            if index.has_finalizer(FOREGROUND_FINALIZER) {
                let newly = state
                    .deleting_owners
                    .insert(object_uid.clone(), key.clone())
                    .is_none();
                if newly {
                    // Every dependent goes, not only the blocking ones.
                    for dependent in state.graph.dependents(&object_uid) {
                        self.queue.add(Work::AttemptToDelete(dependent));
                    }
                }
                self.queue.add(Work::DeletingDependents(key.clone()));
            } else {
                state.deleting_owners.remove(&object_uid);
            }
        } else {
            state.deleting_owners.remove(&object_uid);
        }
    }

    async fn process(&self, work: &Work) -> Result<(), ClientError> {
        match work {
            Work::AttemptToDelete(key) => self.attempt_to_delete(key).await,
            Work::DeletingDependents(key) => self.deleting_dependents(key).await,
            Work::Orphan(key) => self.orphan(key).await,
        }
    }

    fn read(&self, key: &str) -> Option<(KeyInfo, Value)> {
        let info = self.resources.current().parse_key(key)?;
        let snapshot = self.client.api().store.snapshot();
        let value = snapshot.get(key)?.object.value()?;
        Some((info, value))
    }

    fn path(info: &KeyInfo) -> String {
        resource_path(info.resource, Some(&info.namespace), Some(&info.name))
    }

    /// `attemptToDeleteItem`.
    async fn attempt_to_delete(&self, key: &str) -> Result<(), ClientError> {
        let Some((info, item)) = self.read(key) else {
            return Ok(());
        };
        if is_deleting(&item) {
            if has_finalizer(&item, FOREGROUND_FINALIZER) {
                return self.deleting_dependents(key).await;
            }
            return Ok(());
        }
        let refs = owner_refs(&item);
        if refs.is_empty() {
            return Ok(());
        }
        let snapshot = self.client.api().store.snapshot();
        let (mut solid, mut dangling, mut waiting) = (Vec::new(), Vec::new(), Vec::new());
        for owner in &refs {
            match self.classify(&snapshot, &info, owner) {
                OwnerState::Solid => solid.push(owner.uid.clone()),
                OwnerState::Dangling => dangling.push(owner.uid.clone()),
                OwnerState::Waiting => waiting.push(owner.uid.clone()),
            }
        }
        let item_uid = uid(&item).to_string();
        if !solid.is_empty() {
            if dangling.is_empty() && waiting.is_empty() {
                return Ok(());
            }
            // Some owners remain: only drop the references to the others.
            let drop: Vec<String> = dangling.into_iter().chain(waiting).collect();
            return self.remove_owner_refs(key, &drop).await;
        }
        let has_dependents = !self.lock().graph.dependents(&item_uid).is_empty();
        if !waiting.is_empty() && has_dependents {
            // A dependent that itself waits for this item would block both
            // forever: unblock the owners first (kube's cycle breaker).
            let cycle = self
                .lock()
                .graph
                .dependents(&item_uid)
                .iter()
                .any(|dependent| {
                    snapshot
                        .get(dependent)
                        .and_then(|entry| entry.object.index())
                        .is_some_and(|index| {
                            index.is_deleting() && index.has_finalizer(FOREGROUND_FINALIZER)
                        })
                });
            if cycle {
                self.unblock_owner_refs(key, &waiting).await?;
            }
            return self.delete(&info, &item_uid, "Foreground").await;
        }
        let policy = if has_finalizer(&item, ORPHAN_FINALIZER) {
            "Orphan"
        } else if has_finalizer(&item, FOREGROUND_FINALIZER) {
            "Foreground"
        } else {
            "Background"
        };
        self.delete(&info, &item_uid, policy).await
    }

    fn classify(&self, snapshot: &ObjectSnapshot, item: &KeyInfo, owner: &OwnerRef) -> OwnerState {
        let Some(resource) = self
            .resources
            .current()
            .by_api_version_kind(&owner.api_version, &owner.kind)
        else {
            // Unresolvable: never collect on its account.
            return OwnerState::Solid;
        };
        if resource.namespaced && item.namespace.is_empty() {
            // A cluster-scoped dependent cannot name a namespaced owner.
            return OwnerState::Solid;
        }
        let namespace = if resource.namespaced {
            item.namespace.as_str()
        } else {
            ""
        };
        let owner_key = key_of(resource, namespace, &owner.name);
        let Some(found) = snapshot
            .get(&owner_key)
            .and_then(|entry| entry.object.index())
        else {
            return OwnerState::Dangling;
        };
        if found.uid() != owner.uid {
            return OwnerState::Dangling;
        }
        if found.is_deleting() && found.has_finalizer(FOREGROUND_FINALIZER) {
            return OwnerState::Waiting;
        }
        OwnerState::Solid
    }

    async fn delete(&self, info: &KeyInfo, uid: &str, policy: &str) -> Result<(), ClientError> {
        let options = json!({
            "kind": "DeleteOptions",
            "apiVersion": "v1",
            "propagationPolicy": policy,
            "preconditions": {"uid": uid},
        });
        match self.client.delete(&Self::path(info), &options).await {
            Ok(_) => Ok(()),
            Err(error) if error.is_not_found() => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// A JSON merge patch of `metadata` computed from the current object,
    /// with its resourceVersion as the precondition; conflicts are retried.
    async fn patch_metadata(
        &self,
        key: &str,
        change: impl Fn(&Value) -> Option<serde_json::Map<String, Value>>,
    ) -> Result<(), ClientError> {
        let mut last = None;
        for _ in 0..PATCH_ATTEMPTS {
            let Some((info, current)) = self.read(key) else {
                return Ok(());
            };
            let Some(mut metadata) = change(&current) else {
                return Ok(());
            };
            metadata.insert(
                "resourceVersion".into(),
                json!(object::resource_version(&current)),
            );
            let patch = json!({"metadata": metadata});
            match self.client.merge_patch(&Self::path(&info), &patch).await {
                Ok(_) => return Ok(()),
                Err(error) if error.is_not_found() => return Ok(()),
                Err(error) if error.is_conflict() => last = Some(error),
                Err(error) => return Err(error),
            }
        }
        Err(last.unwrap_or_else(|| ClientError {
            code: 409,
            reason: "Conflict".into(),
            message: format!("{key} kept changing"),
            causes: Vec::new(),
        }))
    }

    /// `deleteOwnerRefJSONMergePatch`.
    async fn remove_owner_refs(&self, key: &str, uids: &[String]) -> Result<(), ClientError> {
        self.patch_metadata(key, |current| {
            let refs = current
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)?;
            let kept: Vec<Value> = refs
                .iter()
                .filter(|r| {
                    !uids
                        .iter()
                        .any(|uid| r.get("uid").and_then(Value::as_str) == Some(uid))
                })
                .cloned()
                .collect();
            if kept.len() == refs.len() {
                return None;
            }
            let mut metadata = serde_json::Map::new();
            metadata.insert(
                "ownerReferences".into(),
                if kept.is_empty() {
                    Value::Null
                } else {
                    Value::Array(kept)
                },
            );
            Some(metadata)
        })
        .await
    }

    /// `unblockOwnerReferencesStrategicMergePatch`: blockOwnerDeletion=false
    /// on the references to `uids`.
    async fn unblock_owner_refs(&self, key: &str, uids: &[String]) -> Result<(), ClientError> {
        self.patch_metadata(key, |current| {
            let refs = current
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)?;
            let mut changed = false;
            let updated: Vec<Value> = refs
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    let named = uids
                        .iter()
                        .any(|uid| r.get("uid").and_then(Value::as_str) == Some(uid));
                    if named && r.get("blockOwnerDeletion") == Some(&json!(true)) {
                        r["blockOwnerDeletion"] = json!(false);
                        changed = true;
                    }
                    r
                })
                .collect();
            if !changed {
                return None;
            }
            let mut metadata = serde_json::Map::new();
            metadata.insert("ownerReferences".into(), Value::Array(updated));
            Some(metadata)
        })
        .await
    }

    async fn remove_finalizer(&self, key: &str, finalizer: &str) -> Result<(), ClientError> {
        self.patch_metadata(key, |current| {
            if !has_finalizer(current, finalizer) {
                return None;
            }
            let kept: Vec<Value> = current
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|f| f.as_str() != Some(finalizer))
                .cloned()
                .collect();
            let mut metadata = serde_json::Map::new();
            metadata.insert(
                "finalizers".into(),
                if kept.is_empty() {
                    Value::Null
                } else {
                    Value::Array(kept)
                },
            );
            Some(metadata)
        })
        .await
    }

    /// `processDeletingDependentsItem`: remove `foregroundDeletion` once no
    /// dependent with blockOwnerDeletion is left; until then make sure the
    /// blocking ones are being deleted.
    async fn deleting_dependents(&self, key: &str) -> Result<(), ClientError> {
        let Some((_, owner)) = self.read(key) else {
            return Ok(());
        };
        if !is_deleting(&owner) || !has_finalizer(&owner, FOREGROUND_FINALIZER) {
            return Ok(());
        }
        let owner_uid = uid(&owner).to_string();
        let snapshot = self.client.api().store.snapshot();
        let dependents = self.lock().graph.dependents(&owner_uid);
        let mut blocking = Vec::new();
        for dependent in dependents {
            let Some(index) = snapshot.get(&dependent).and_then(|e| e.object.index()) else {
                continue;
            };
            let blocks = index
                .owner_refs()
                .iter()
                .any(|r| r.uid == owner_uid && r.block_owner_deletion);
            if blocks {
                let deleting_dependents =
                    index.is_deleting() && index.has_finalizer(FOREGROUND_FINALIZER);
                blocking.push((dependent, deleting_dependents));
            }
        }
        if blocking.is_empty() {
            return self.remove_finalizer(key, FOREGROUND_FINALIZER).await;
        }
        for (dependent, deleting_dependents) in blocking {
            if !deleting_dependents {
                self.queue.add(Work::AttemptToDelete(dependent));
            }
        }
        Ok(())
    }

    /// `orphanDependents`, then the `orphan` finalizer goes.
    async fn orphan(&self, key: &str) -> Result<(), ClientError> {
        let Some((_, owner)) = self.read(key) else {
            return Ok(());
        };
        if !is_deleting(&owner) || !has_finalizer(&owner, ORPHAN_FINALIZER) {
            return Ok(());
        }
        let owner_uid = uid(&owner).to_string();
        let dependents = self.lock().graph.dependents(&owner_uid);
        for dependent in dependents {
            self.remove_owner_refs(&dependent, std::slice::from_ref(&owner_uid))
                .await?;
        }
        self.remove_finalizer(key, ORPHAN_FINALIZER).await
    }
}

enum OwnerState {
    Solid,
    Dangling,
    /// Being deleted in the foreground: waits for its dependents.
    Waiting,
}
