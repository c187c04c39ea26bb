//! Checkpoints: the whole state of an in-memory store, taken and restored in
//! O(1) from its persistent maps (test fixtures built once, every test
//! started from them).
//!
//! kube's analogue is `etcdctl snapshot save` / `snapshot restore`. The rule
//! that keeps resourceVersions sound:
//!
//! - a restore is a new revision above every revision the store ever handed
//!   out (the counter never goes back), while the data, each object with its
//!   own resourceVersion, is the checkpoint's. Every revision still names
//!   exactly one write in the store's life, so a resourceVersion a client
//!   holds either names the very data it names after the restore, or fails
//!   its precondition (409) — it never silently matches other data;
//! - the change log restarts at the restore's revision: every watch opened
//!   before it ends with 410 Expired ("too old resource version"), as after
//!   an etcd compaction, as do exact-revision lists and continue tokens from
//!   before; clients relist and see the restored state;
//! - a checkpoint restores only into the store it was taken from
//!   ([`StoreError::ForeignCheckpoint`]): another store handed out the same
//!   revision numbers for other writes. [`Store::open_checkpoint`] starts a
//!   new store from any checkpoint instead (no client of it holds anything).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::backend::{Backend, Image};
use crate::cache::{Codec, Snapshot, Store, StoreError};
use crate::{LocalBackend, MemoryDisk, Revision};

/// The whole state of a store at one revision: the cache's snapshot (the
/// decoded objects) and the backend's image (the stored bytes), both
/// persistent maps (with the committer's key index), so taking, cloning
/// and restoring one is O(1) in the number of objects.
pub struct Checkpoint<O> {
    store: u64,
    snapshot: Arc<Snapshot<O>>,
    image: Image,
}

impl<O> Clone for Checkpoint<O> {
    fn clone(&self) -> Self {
        Checkpoint {
            store: self.store,
            snapshot: self.snapshot.clone(),
            image: self.image.clone(),
        }
    }
}

impl<O> std::fmt::Debug for Checkpoint<O> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Checkpoint")
            .field("revision", &self.snapshot.revision)
            .field("objects", &self.snapshot.objects.len())
            .finish()
    }
}

impl<O> Checkpoint<O> {
    /// The revision the checkpoint was taken at.
    pub fn revision(&self) -> Revision {
        self.snapshot.revision
    }

    /// The state it holds.
    pub fn snapshot(&self) -> &Arc<Snapshot<O>> {
        &self.snapshot
    }
}

impl<C: Codec> Store<C> {
    /// The whole current state (see [`Checkpoint`]). Only stores on an
    /// in-memory backend can; others answer `Unsupported`.
    pub async fn checkpoint(&self) -> Result<Checkpoint<C::Object>, StoreError> {
        let taken = Arc::new(Mutex::new(None));
        let at = {
            let cache = self.cache.clone();
            let taken = taken.clone();
            Box::new(move || {
                // On the committer, between commits: the cache has applied
                // exactly the revision of the image.
                *taken
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(cache.current());
            })
        };
        let image = self.backend.image(at).await?;
        let snapshot = taken
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
            .unwrap_or_else(|| self.cache.current());
        debug_assert_eq!(snapshot.revision, image.revision);
        Ok(Checkpoint {
            store: self.cache.id,
            snapshot,
            image,
        })
    }

    /// Make `checkpoint` the current state, at a new revision above every
    /// one this store handed out, which it returns; every watch opened
    /// before ends with 410 Expired (see the module docs).
    pub async fn restore(
        &self,
        checkpoint: &Checkpoint<C::Object>,
    ) -> Result<Revision, StoreError> {
        if checkpoint.store != self.cache.id {
            return Err(StoreError::ForeignCheckpoint);
        }
        let objects = checkpoint.snapshot.objects.clone();
        let cache = self.cache.clone();
        let at = Box::new(move |revision| cache.reset(objects, revision));
        Ok(self.backend.restore(checkpoint.image.clone(), at).await?)
    }

    /// A new store on an in-memory backend that starts from `checkpoint` (of
    /// any store), at its revision: etcd's restore into a new cluster. The
    /// objects are the checkpoint's, not decoded again.
    pub async fn open_checkpoint(
        checkpoint: &Checkpoint<C::Object>,
        codec: C,
        window: Duration,
    ) -> Result<Self, StoreError> {
        let backend: Arc<dyn Backend> = Arc::new(LocalBackend::open(MemoryDisk::from_image(
            checkpoint.image.clone(),
        ))?);
        Store::open_with_state(backend, codec, window, checkpoint.snapshot.clone()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendError, Expect, HistoryError, KeyValue, Op, Txn};

    struct Text;

    impl Codec for Text {
        type Object = String;
        fn decode(&self, kv: &KeyValue) -> String {
            String::from_utf8_lossy(&kv.value).into_owned()
        }
        fn deleted(&self, previous: &String, _revision: Revision) -> String {
            previous.clone()
        }
    }

    fn put(key: &str, value: &str, expect: Expect) -> Txn {
        Txn::single(Op::Put {
            key: key.into(),
            value: bytes::Bytes::from(value.to_string()),
            expect,
        })
    }

    async fn memory_store() -> Store<Text> {
        let backend: Arc<dyn Backend> =
            Arc::new(LocalBackend::open(MemoryDisk::new()).expect("backend"));
        Store::open(backend, Text).await.expect("store")
    }

    /// (key, value, create revision, mod revision) of every object.
    fn rows(snapshot: &Snapshot<String>) -> Vec<(String, String, Revision, Revision)> {
        snapshot
            .objects
            .iter()
            .map(|(key, entry)| {
                (
                    key.clone(),
                    entry.object.as_ref().clone(),
                    entry.create_revision,
                    entry.mod_revision,
                )
            })
            .collect()
    }

    fn row(
        key: &str,
        value: &str,
        created: Revision,
        modified: Revision,
    ) -> (String, String, Revision, Revision) {
        (key.into(), value.into(), created, modified)
    }

    #[tokio::test]
    async fn restore_brings_back_the_data_at_a_revision_above_everything_handed_out() {
        let store = memory_store().await;
        store
            .commit(put("/a", "a1", Expect::Absent))
            .await
            .expect("r1");
        store
            .commit(put("/b", "b1", Expect::Absent))
            .await
            .expect("r2");
        let checkpoint = store.checkpoint().await.expect("checkpoint");
        assert_eq!(checkpoint.revision(), 2);
        store
            .commit(put("/a", "a2", Expect::ModRevision(1)))
            .await
            .expect("r3");
        store
            .commit(Txn::single(Op::Delete {
                key: "/b".into(),
                expect: Expect::Any,
            }))
            .await
            .expect("r4");
        store
            .commit(put("/c", "c1", Expect::Absent))
            .await
            .expect("r5");

        let restored = store.restore(&checkpoint).await.expect("restore");
        assert_eq!(restored, 6, "a new revision, never an old one again");
        let current = store.snapshot();
        assert_eq!(current.revision, 6);
        assert_eq!(
            rows(&current),
            vec![row("/a", "a1", 1, 1), row("/b", "b1", 2, 2)]
        );
        assert_eq!(
            store.backend().current_revision().await.expect("revision"),
            6
        );
        let loaded = store.backend().load().await.expect("load");
        assert_eq!(loaded.revision, 6);
        assert_eq!(
            loaded.kvs.len(),
            2,
            "the backend holds the checkpoint's keys"
        );

        // The resourceVersion a client read after the checkpoint (3) names
        // data that is gone: its precondition fails instead of matching.
        let stale = store.commit(put("/a", "a3", Expect::ModRevision(3))).await;
        assert!(matches!(
            stale,
            Err(StoreError::Backend(BackendError::PreconditionFailed {
                actual: Some(1),
                ..
            }))
        ));
        let created = store
            .commit(put("/c", "c2", Expect::Absent))
            .await
            .expect("/c is gone");
        assert_eq!(created.revision, 7);
        let updated = store
            .commit(put("/a", "a3", Expect::ModRevision(1)))
            .await
            .expect("update");
        assert_eq!(updated.revision, 8);
        assert_eq!(
            rows(&store.snapshot()),
            vec![
                row("/a", "a3", 1, 8),
                row("/b", "b1", 2, 2),
                row("/c", "c2", 7, 7)
            ]
        );
    }

    #[tokio::test]
    async fn positions_from_before_a_restore_are_expired() {
        let store = memory_store().await;
        store
            .commit(put("/a", "a1", Expect::Absent))
            .await
            .expect("r1");
        let checkpoint = store.checkpoint().await.expect("checkpoint");
        store
            .commit(put("/a", "a2", Expect::Any))
            .await
            .expect("r2");
        let mut wake = store.subscribe();
        wake.borrow_and_update();

        store.restore(&checkpoint).await.expect("restore");
        assert!(wake.has_changed().expect("open"), "watchers are woken");
        assert_eq!(*wake.borrow_and_update(), 3);
        for position in [0, 1, 2] {
            assert_eq!(
                store
                    .changes_since(position, usize::MAX)
                    .map(|changes| changes.len()),
                Err(HistoryError::Expired {
                    requested: position,
                    oldest: 3
                }),
                "a watch at {position} ends with 410"
            );
            assert!(
                store.snapshot_at(position).is_err(),
                "no exact read at {position}"
            );
        }
        assert_eq!(store.oldest_watchable(), 3);
        store
            .commit(put("/b", "b1", Expect::Absent))
            .await
            .expect("r4");
        let revisions: Vec<_> = store
            .changes_since(3, usize::MAX)
            .expect("a watch from the restore")
            .iter()
            .map(|change| (change.key.clone(), change.revision))
            .collect();
        assert_eq!(revisions, vec![("/b".to_string(), 4)]);
    }

    #[tokio::test]
    async fn a_checkpoint_restores_many_times_and_is_not_changed_by_later_writes() {
        let store = memory_store().await;
        store
            .commit(put("/a", "a1", Expect::Absent))
            .await
            .expect("r1");
        let checkpoint = store.checkpoint().await.expect("checkpoint");
        for round in 0..3 {
            store
                .commit(put("/a", &format!("x{round}"), Expect::Any))
                .await
                .expect("write");
            store
                .commit(put("/z", "z", Expect::Any))
                .await
                .expect("write");
            store.restore(&checkpoint).await.expect("restore");
            assert_eq!(rows(&store.snapshot()), vec![row("/a", "a1", 1, 1)]);
        }
        assert_eq!(rows(checkpoint.snapshot()), vec![row("/a", "a1", 1, 1)]);
        assert_eq!(
            store.snapshot().revision,
            10,
            "three rounds of two writes and a restore"
        );
    }

    #[tokio::test]
    async fn checkpoints_restore_only_into_their_store_but_start_new_ones() {
        let first = memory_store().await;
        let second = memory_store().await;
        first
            .commit(put("/a", "a1", Expect::Absent))
            .await
            .expect("r1");
        let checkpoint = first.checkpoint().await.expect("checkpoint");
        assert!(matches!(
            second.restore(&checkpoint).await,
            Err(StoreError::ForeignCheckpoint)
        ));

        let started = Store::open_checkpoint(&checkpoint, Text, Duration::from_secs(60))
            .await
            .expect("a store from the checkpoint");
        assert_eq!(started.snapshot().revision, 1);
        assert_eq!(rows(&started.snapshot()), vec![row("/a", "a1", 1, 1)]);
        let updated = started
            .commit(put("/a", "a2", Expect::ModRevision(1)))
            .await
            .expect("the backend's index holds the checkpoint's revisions");
        assert_eq!(updated.revision, 2);
        assert_eq!(
            rows(&first.snapshot()),
            vec![row("/a", "a1", 1, 1)],
            "the source is untouched"
        );
        let own = started
            .checkpoint()
            .await
            .expect("checkpoint of the new store");
        started
            .restore(&own)
            .await
            .expect("its own checkpoints restore");
    }

    #[tokio::test]
    async fn durable_backends_refuse_checkpoints() {
        let directory = tempfile::tempdir().expect("tempdir");
        let disk = crate::SqliteDisk::open(
            &directory.path().join("store.db"),
            crate::SqliteOptions { fsync: false },
        )
        .expect("sqlite");
        let backend: Arc<dyn Backend> = Arc::new(LocalBackend::open(disk).expect("backend"));
        let store = Store::open(backend, Text).await.expect("store");
        assert!(matches!(
            store.checkpoint().await,
            Err(StoreError::Backend(BackendError::Unsupported(_)))
        ));
        store.close().await.expect("close");
    }
}
