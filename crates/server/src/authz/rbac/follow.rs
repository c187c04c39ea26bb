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
//! sleep or retry in tests. The check is two atomic loads when no RBAC
//! object changed (whatever else was written: the store keeps the revision
//! of the last change under the RBAC prefixes, `ferrokube_store::PrefixMark`);
//! otherwise the changes are applied once, under a lock, by whichever
//! request or the task gets there first, and only RBAC keys are decoded.

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
        // Marked before the snapshot is read: every RBAC change after the
        // snapshot raises the mark past the snapshot's revision.
        let rbac_changes = store.prefix_mark(&PREFIXES);
        let snapshot = store.snapshot();
        let index = index_of_snapshot(&snapshot);
        Rbac {
            index: RwLock::new(index),
            applied: std::sync::atomic::AtomicI64::new(snapshot.revision),
            follow_lock: Mutex::new(()),
            store: Some(FollowedStore {
                store: store.clone(),
                revision,
                rbac_changes,
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
        // Under writes the revision moves with every write of any kind. The
        // mark is the revision of the last RBAC change the store applied,
        // raised before the store published `target`: when it is not past
        // `applied`, no RBAC object changed up to `target` and the index
        // stands for `target` as it is (one atomic load, no lock, no scan).
        if followed.rbac_changes.last_change() <= applied {
            self.applied.fetch_max(target, Ordering::AcqRel);
            return;
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

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::sync::atomic::Ordering;

    use ferrokube_store::{Backend, Expect, LocalBackend, MemoryDisk, Op, Store, Txn};
    use serde_json::{json, Value};

    use super::Rbac;
    use crate::authn::UserInfo;
    use crate::authz::Attributes;
    use crate::object::{ObjectCodec, ObjectStore};

    async fn store() -> ObjectStore {
        let backend: std::sync::Arc<dyn Backend> =
            std::sync::Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
        Store::open(backend, ObjectCodec).await.expect("store")
    }

    async fn put(store: &ObjectStore, key: &str, value: Value) {
        store
            .commit(Txn::single(Op::Put {
                key: key.into(),
                value: serde_json::to_vec(&value).expect("json").into(),
                expect: Expect::Any,
            }))
            .await
            .expect("commit");
    }

    async fn delete(store: &ObjectStore, key: &str) {
        store
            .commit(Txn::single(Op::Delete {
                key: key.into(),
                expect: Expect::Any,
            }))
            .await
            .expect("commit");
    }

    async fn write_configmaps(store: &ObjectStore, count: usize) {
        for n in 0..count {
            let name = format!("cm-{n}");
            put(
                store,
                &format!("/registry/configmaps/dev/{name}"),
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "namespace": "dev"}}),
            )
            .await;
        }
    }

    fn may_get_configmaps(rbac: &Rbac, user: &UserInfo) -> bool {
        let attributes = Attributes {
            verb: "get",
            resource_request: true,
            resource: "configmaps",
            namespace: "dev",
            name: Cow::Borrowed("cm-0"),
            ..Attributes::non_resource(user, "get", "/api/v1/namespaces/dev/configmaps/cm-0")
        };
        rbac.authorize(&attributes).allowed()
    }

    /// Writes of other kinds move the index's revision on without an RBAC
    /// change (the prefix mark), and an RBAC write is in effect for the very
    /// next request, without the follow task: read-your-writes either way.
    #[tokio::test]
    async fn the_index_follows_rbac_changes_and_skips_the_others() {
        let store = store().await;
        let rbac = Rbac::following(&store);
        let jane = UserInfo {
            name: "jane".into(),
            groups: vec!["system:authenticated".into()],
            ..UserInfo::default()
        };
        write_configmaps(&store, 20).await;
        assert!(!may_get_configmaps(&rbac, &jane));
        let revision = store.snapshot().revision;
        assert_eq!(rbac.applied.load(Ordering::Acquire), revision);
        assert_eq!(rbac.read_index().binding_count(), 0);

        put(
            &store,
            "/registry/roles/dev/reader",
            json!({"metadata": {"name": "reader", "namespace": "dev"},
                   "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}]}),
        )
        .await;
        write_configmaps(&store, 5).await;
        put(
            &store,
            "/registry/rolebindings/dev/jane-reads",
            json!({"metadata": {"name": "jane-reads", "namespace": "dev"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
                   "subjects": [{"kind": "User", "name": "jane"}]}),
        )
        .await;
        assert!(may_get_configmaps(&rbac, &jane));
        assert_eq!(rbac.read_index().binding_count(), 1);

        write_configmaps(&store, 5).await;
        assert!(may_get_configmaps(&rbac, &jane));
        delete(&store, "/registry/rolebindings/dev/jane-reads").await;
        assert!(!may_get_configmaps(&rbac, &jane));
        assert_eq!(
            rbac.applied.load(Ordering::Acquire),
            store.snapshot().revision
        );
    }
}
