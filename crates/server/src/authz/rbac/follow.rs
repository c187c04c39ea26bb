//! Keeping the RBAC index equal to the store, as kube's RBAC authorizer
//! reads informers fed by watches: a task applies every RBAC change the
//! store's change log shows (no polling), and a request that finds the index
//! behind the store catches it up itself before deciding.
//!
//! Read-your-writes: the store acknowledges a write only once its cache and
//! change log show it (`crates/store/src/cache.rs`), so a request that starts
//! after a RoleBinding's create returned sees a store revision at least that
//! of the binding; `catch_up` applies the log up to that revision before the
//! request is authorized. kube has the race (its informer may lag); here a
//! binding that returned is always in effect for the next request, with no
//! sleep or retry in tests. The check is one atomic load when nothing
//! changed, and a lock-free scan of the keys changed since when none of them
//! is an RBAC object (writes of other kinds); otherwise the changes are
//! applied once, under a lock, by whichever request or the task gets there
//! first, and only RBAC keys are decoded.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};

use ferrokube_store::HistoryError;

use super::index::{RbacIndex, PREFIXES};
use super::{FollowedStore, Rbac};
use crate::authz::rbac::index::is_rbac_key;
use crate::object::ObjectStore;

impl Rbac {
    /// An authorizer over what `store` holds now, kept current by
    /// [`Rbac::follow`] and by each request.
    pub fn following(store: &ObjectStore) -> Rbac {
        let revision = store.subscribe();
        let snapshot = store.snapshot();
        let index = index_of_snapshot(&snapshot);
        Rbac {
            index: RwLock::new(index),
            applied: std::sync::atomic::AtomicI64::new(snapshot.revision),
            follow_lock: Mutex::new(()),
            store: Some(FollowedStore {
                store: store.clone(),
                revision,
            }),
        }
    }

    /// Applies every change the store shows, as it shows them, until
    /// `shutdown` says true.
    pub async fn follow(self: Arc<Self>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
        let Some(followed) = &self.store else {
            return;
        };
        let mut wake = followed.store.subscribe();
        loop {
            self.catch_up();
            tokio::select! {
                changed = wake.changed() => if changed.is_err() { return },
                _ = shutdown.wait_for(|stopping| *stopping) => return,
            }
        }
    }

    /// Brings the index up to the store's current revision.
    pub(super) fn catch_up(&self) {
        let Some(followed) = &self.store else {
            return;
        };
        let target = *followed.revision.borrow();
        let applied = self.applied.load(Ordering::Acquire);
        if applied >= target {
            return;
        }
        // Under writes the revision moves with every write of any kind; when
        // none of the changes since the index's revision is an RBAC object
        // (the common case), the mark moves on without the lock. Every RBAC
        // change up to `applied` is in the index, and none lies after it up
        // to `reached`, so the index stands for `reached`.
        if let Ok(changes) = followed.store.changes_since(applied, usize::MAX) {
            if !changes.iter().any(|change| is_rbac_key(&change.key)) {
                let reached = changes.last().map_or(target, |change| change.revision);
                self.applied
                    .fetch_max(reached.max(target), Ordering::AcqRel);
                return;
            }
        }
        let _guard = self
            .follow_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let applied = self.applied.load(Ordering::Acquire);
        if applied >= target {
            return;
        }
        // Every change up to `target` is in the log: the store publishes a
        // revision only after logging its changes.
        match followed.store.changes_since(applied, usize::MAX) {
            Ok(changes) => {
                let mut relevant = changes.iter().filter(|change| is_rbac_key(&change.key));
                if let Some(first) = relevant.next() {
                    let mut index = self
                        .index
                        .write()
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    for change in std::iter::once(first).chain(relevant) {
                        let object = if change.deleted {
                            None
                        } else {
                            change.object.value()
                        };
                        index.apply(&change.key, object.as_ref());
                    }
                }
                let reached = changes.last().map_or(target, |change| change.revision);
                self.applied
                    .fetch_max(reached.max(target), Ordering::AcqRel);
            }
            Err(HistoryError::Expired { .. }) => {
                // Out of the history window: start over from the current state.
                let snapshot = followed.store.snapshot();
                let rebuilt = index_of_snapshot(&snapshot);
                *self
                    .index
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = rebuilt;
                self.applied.store(snapshot.revision, Ordering::Release);
            }
        }
    }
}

fn index_of_snapshot(snapshot: &crate::object::feed::ObjectSnapshot) -> RbacIndex {
    let mut index = RbacIndex::default();
    for prefix in PREFIXES {
        for (key, entry) in snapshot.range(prefix, None) {
            index.apply(key, entry.object.value().as_ref());
        }
    }
    index
}
