//! The in-memory cache above a [`Backend`]: kube-apiserver's watch cache, but
//! also the only read path.
//!
//! The current state is a persistent ordered map keyed like etcd keys
//! (`/registry/<resource>/<namespace>/<name>`), so a [`Snapshot`] is an O(1)
//! clone and every read answers from exactly one revision. The cache is fed
//! only by the backend's ordered event stream.

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use imbl::OrdMap;
use tokio::sync::watch;

use crate::backend::{
    Backend, BackendError, Committed, Event, EventKind, EventSink, KeyValue, Txn,
};
use crate::history::{Change, History, HistoryError};
use crate::prefix_mark::PrefixMark;
use crate::Revision;

/// How long changes stay readable for watches and exact-revision reads (kube: etcd's 5 minutes).
pub const DEFAULT_HISTORY_WINDOW: Duration = Duration::from_secs(300);

/// Turns stored bytes into the cached object type.
pub trait Codec: Send + Sync + 'static {
    type Object: Send + Sync + 'static;
    /// Decode one stored value. Must not fail: an undecodable value becomes an
    /// object that says so (kube can still delete such objects).
    fn decode(&self, kv: &KeyValue) -> Self::Object;
    /// The last state of a deleted object as DELETED watch events carry it:
    /// `previous` with its resourceVersion moved to the deleting `revision`.
    fn deleted(&self, previous: &Self::Object, revision: Revision) -> Self::Object;
}

/// One cached key.
pub struct Entry<O> {
    pub create_revision: Revision,
    pub mod_revision: Revision,
    pub object: Arc<O>,
}

impl<O> Clone for Entry<O> {
    fn clone(&self) -> Self {
        Entry {
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
            object: self.object.clone(),
        }
    }
}

/// The whole state at one revision.
pub struct Snapshot<O> {
    pub revision: Revision,
    pub objects: OrdMap<String, Entry<O>>,
}

impl<O> Clone for Snapshot<O> {
    fn clone(&self) -> Self {
        Snapshot {
            revision: self.revision,
            objects: self.objects.clone(),
        }
    }
}

impl<O> Snapshot<O> {
    pub fn get(&self, key: &str) -> Option<&Entry<O>> {
        self.objects.get(key)
    }

    /// Every entry whose key starts with `prefix`, in key order, starting
    /// strictly after `after` when given (continue tokens).
    pub fn range<'a>(
        &'a self,
        prefix: &'a str,
        after: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a String, &'a Entry<O>)> + 'a {
        let start = match after {
            Some(after) if after >= prefix => std::ops::Bound::Excluded(after.to_string()),
            _ => std::ops::Bound::Included(prefix.to_string()),
        };
        self.objects
            .range((start, std::ops::Bound::Unbounded))
            .take_while(move |(key, _)| key.starts_with(prefix))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("timed out waiting for revision {wanted} (cache at {current})")]
    RevisionTimeout { wanted: Revision, current: Revision },
    #[error("the checkpoint was taken from another store")]
    ForeignCheckpoint,
}

pub(crate) struct Cache<C: Codec> {
    /// Tells this store's checkpoints from other stores' (`checkpoint.rs`).
    pub(crate) id: u64,
    codec: C,
    pub(crate) current: RwLock<Arc<Snapshot<C::Object>>>,
    history: RwLock<History<C::Object>>,
    /// Serialises appliers; readers never take it.
    apply_lock: Mutex<()>,
    revision: watch::Sender<Revision>,
    /// Raised by every applied change under their prefixes (`prefix_mark.rs`).
    marks: RwLock<Vec<Arc<PrefixMark>>>,
}

/// Distinct ids for the stores of one process.
static NEXT_STORE_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl<C: Codec> Cache<C> {
    /// The current snapshot.
    pub(crate) fn current(&self) -> Arc<Snapshot<C::Object>> {
        match self.current.read() {
            Ok(current) => current.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Hold `objects` at `revision` from now on, with an empty change log
    /// that starts there: every watcher and reader positioned before
    /// `revision` is told its revision is gone (410), as after a compaction.
    pub(crate) fn reset(&self, objects: OrdMap<String, Entry<C::Object>>, revision: Revision) {
        let _guard = lock(&self.apply_lock);
        self.history
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .reset(revision);
        for mark in self.marks().iter() {
            mark.raise(revision);
        }
        let snapshot = Arc::new(Snapshot { revision, objects });
        match self.current.write() {
            Ok(mut current) => *current = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
        self.revision.send_replace(revision);
    }

    fn marks(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<PrefixMark>>> {
        self.marks
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<C: Codec> EventSink for Cache<C> {
    fn apply(&self, revision: Revision, events: &[Event]) {
        let _guard = self
            .apply_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut objects = match self.current.read() {
            Ok(current) => current.objects.clone(),
            Err(poisoned) => poisoned.into_inner().objects.clone(),
        };
        let mut changes = Vec::with_capacity(events.len());
        let marks = self.marks();
        for event in events {
            for mark in marks.iter().filter(|mark| mark.covers(&event.kv.key)) {
                mark.raise(event.kv.mod_revision);
            }
            let key = &event.kv.key;
            match event.kind {
                EventKind::Put => {
                    let object = Arc::new(self.codec.decode(&event.kv));
                    let previous = objects.insert(
                        key.clone(),
                        Entry {
                            create_revision: event.kv.create_revision,
                            mod_revision: event.kv.mod_revision,
                            object: object.clone(),
                        },
                    );
                    changes.push(Change {
                        revision: event.kv.mod_revision,
                        key: key.clone(),
                        object,
                        previous_create_revision: previous
                            .as_ref()
                            .map_or(0, |entry| entry.create_revision),
                        previous_revision: previous.as_ref().map_or(0, |entry| entry.mod_revision),
                        previous: previous.map(|entry| entry.object),
                        deleted: false,
                    });
                }
                EventKind::Delete => {
                    if let Some(previous) = objects.remove(key) {
                        let object =
                            Arc::new(self.codec.deleted(&previous.object, event.kv.mod_revision));
                        changes.push(Change {
                            revision: event.kv.mod_revision,
                            key: key.clone(),
                            object,
                            previous_create_revision: previous.create_revision,
                            previous_revision: previous.mod_revision,
                            previous: Some(previous.object),
                            deleted: true,
                        });
                    }
                }
            }
        }
        drop(marks);
        {
            let now = Instant::now();
            let mut history = self
                .history
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            for change in changes {
                history.push(change, now);
            }
        }
        let snapshot = Arc::new(Snapshot { revision, objects });
        match self.current.write() {
            Ok(mut current) => *current = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
        self.revision.send_replace(revision);
    }
}

/// The store the API layer talks to.
pub struct Store<C: Codec> {
    pub(crate) backend: Arc<dyn Backend>,
    pub(crate) cache: Arc<Cache<C>>,
}

impl<C: Codec> Clone for Store<C> {
    fn clone(&self) -> Self {
        Store {
            backend: self.backend.clone(),
            cache: self.cache.clone(),
        }
    }
}

impl<C: Codec> Store<C> {
    /// Load everything from `backend` and follow its event stream from there.
    pub async fn open(backend: Arc<dyn Backend>, codec: C) -> Result<Self, StoreError> {
        Self::open_with_history(backend, codec, DEFAULT_HISTORY_WINDOW).await
    }

    /// As [`Store::open`], keeping changes for watchers for `window`.
    pub async fn open_with_history(
        backend: Arc<dyn Backend>,
        codec: C,
        window: Duration,
    ) -> Result<Self, StoreError> {
        let cache = Self::new_cache(codec, window);
        // Each stored value is decoded as the backend reads it, on the
        // backend's thread: the raw bytes are freed at once, where they were
        // allocated, so the next object reuses their memory and the restart
        // never holds every raw value next to every decoded one.
        let loading = Arc::new(Mutex::new(OrdMap::new()));
        let each = {
            let cache = cache.clone();
            let loading = loading.clone();
            Box::new(move |kv: KeyValue| {
                let object = Arc::new(cache.codec.decode(&kv));
                let entry = Entry {
                    create_revision: kv.create_revision,
                    mod_revision: kv.mod_revision,
                    object,
                };
                lock(&loading).insert(kv.key, entry);
            })
        };
        let loaded_revision = backend.load_each(each).await?;
        let objects = std::mem::take(&mut *lock(&loading));
        Self::follow(backend, cache, objects, loaded_revision).await
    }

    /// A store whose backend holds exactly `state` (a checkpoint's), without
    /// loading and decoding it again.
    pub(crate) async fn open_with_state(
        backend: Arc<dyn Backend>,
        codec: C,
        window: Duration,
        state: Arc<Snapshot<C::Object>>,
    ) -> Result<Self, StoreError> {
        let cache = Self::new_cache(codec, window);
        Self::follow(backend, cache, state.objects.clone(), state.revision).await
    }

    fn new_cache(codec: C, window: Duration) -> Arc<Cache<C>> {
        let (revision, _) = watch::channel(0);
        Arc::new(Cache {
            id: NEXT_STORE_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            codec,
            current: RwLock::new(Arc::new(Snapshot {
                revision: 0,
                objects: OrdMap::new(),
            })),
            history: RwLock::new(History::new(0, window)),
            apply_lock: Mutex::new(()),
            revision,
            marks: RwLock::new(Vec::new()),
        })
    }

    /// Start from `objects` at `revision` and follow the backend's events after it.
    async fn follow(
        backend: Arc<dyn Backend>,
        cache: Arc<Cache<C>>,
        objects: OrdMap<String, Entry<C::Object>>,
        revision: Revision,
    ) -> Result<Self, StoreError> {
        cache.reset(objects, revision);
        backend.watch(revision + 1, cache.clone()).await?;
        Ok(Store { backend, cache })
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    pub fn codec(&self) -> &C {
        &self.cache.codec
    }

    /// The latest state the cache holds (kube's resourceVersion "0": any).
    pub fn snapshot(&self) -> Arc<Snapshot<C::Object>> {
        match self.cache.current.read() {
            Ok(current) => current.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// A snapshot at least as new as the backend's current revision (a consistent read).
    pub async fn consistent_snapshot(
        &self,
        timeout: Duration,
    ) -> Result<Arc<Snapshot<C::Object>>, StoreError> {
        let revision = self.backend.current_revision().await?;
        self.wait_for(revision, timeout).await?;
        Ok(self.snapshot())
    }

    /// Wait until the cache has applied `revision`.
    pub async fn wait_for(&self, revision: Revision, timeout: Duration) -> Result<(), StoreError> {
        let mut receiver = self.cache.revision.subscribe();
        let reached =
            tokio::time::timeout(timeout, receiver.wait_for(|current| *current >= revision)).await;
        match reached {
            Ok(Ok(_)) => Ok(()),
            _ => Err(StoreError::RevisionTimeout {
                wanted: revision,
                current: *self.cache.revision.borrow(),
            }),
        }
    }

    /// Commit and wait until the cache shows the result, so the writer reads its own write.
    pub async fn commit(&self, txn: Txn) -> Result<Committed, StoreError> {
        let committed = self.backend.commit(txn).await?;
        self.wait_for(committed.revision, Duration::from_secs(60))
            .await?;
        Ok(committed)
    }

    /// The state at exactly `revision` (an `Exact` list, or the snapshot a
    /// continue token names): the current snapshot with every later change
    /// undone from the change log. `Expired` when `revision` is older than the
    /// history window; a revision newer than the cache is the current state's
    /// caller's concern (wait first).
    pub fn snapshot_at(
        &self,
        revision: Revision,
    ) -> Result<Arc<Snapshot<C::Object>>, HistoryError> {
        // Read the snapshot before the log: every change up to its revision is in the log then.
        let current = self.snapshot();
        if revision >= current.revision {
            return Ok(current);
        }
        let changes = self.changes_since(revision, usize::MAX)?;
        let mut objects = current.objects.clone();
        for change in changes
            .iter()
            .rev()
            .filter(|change| change.revision <= current.revision)
        {
            match &change.previous {
                Some(previous) => {
                    let entry = Entry {
                        create_revision: change.previous_create_revision,
                        mod_revision: change.previous_revision,
                        object: previous.clone(),
                    };
                    objects.insert(change.key.clone(), entry);
                }
                None => {
                    objects.remove(&change.key);
                }
            }
        }
        Ok(Arc::new(Snapshot { revision, objects }))
    }

    /// Up to `max` changes after `revision`, in revision order; `Expired` when
    /// `revision` is older than the history window keeps.
    pub fn changes_since(
        &self,
        revision: Revision,
        max: usize,
    ) -> Result<Vec<Arc<Change<C::Object>>>, HistoryError> {
        let history = self
            .cache
            .history
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        history.since(revision, max)
    }

    /// The oldest revision a watch can start after.
    pub fn oldest_watchable(&self) -> Revision {
        self.cache
            .history
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .oldest()
    }

    /// A mark of the last change under `prefixes`, raised by the cache from
    /// now on before it publishes each revision; it starts at the current
    /// revision (take the state to follow after this call).
    pub fn prefix_mark(&self, prefixes: &[&str]) -> Arc<PrefixMark> {
        let _guard = lock(&self.cache.apply_lock);
        let start = *self.cache.revision.borrow();
        let mark = Arc::new(PrefixMark::new(
            prefixes.iter().map(|prefix| prefix.to_string()).collect(),
            start,
        ));
        self.cache
            .marks
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(mark.clone());
        mark
    }

    /// Subscribe to the cache's revision: wakes whenever new changes were applied.
    pub fn subscribe(&self) -> watch::Receiver<Revision> {
        self.cache.revision.subscribe()
    }

    pub async fn close(&self) -> Result<(), StoreError> {
        Ok(self.backend.close().await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Expect, LocalBackend, MemoryDisk, Op};

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

    fn put(key: &str, value: &str) -> Txn {
        Txn::single(Op::Put {
            key: key.into(),
            value: bytes::Bytes::from(value.to_string()),
            expect: Expect::Any,
        })
    }

    fn state(snapshot: &Snapshot<String>) -> Vec<(String, String, Revision)> {
        snapshot
            .objects
            .iter()
            .map(|(key, entry)| {
                (
                    key.clone(),
                    entry.object.as_ref().clone(),
                    entry.mod_revision,
                )
            })
            .collect()
    }

    fn row(key: &str, value: &str, revision: Revision) -> (String, String, Revision) {
        (key.to_string(), value.to_string(), revision)
    }

    #[tokio::test]
    async fn snapshots_at_past_revisions_undo_later_changes() {
        let backend: Arc<dyn Backend> =
            Arc::new(LocalBackend::open(MemoryDisk::new()).expect("backend"));
        let store = Store::open(backend, Text).await.expect("store");
        store.commit(put("/a", "a1")).await.expect("r1");
        store.commit(put("/b", "b1")).await.expect("r2");
        store.commit(put("/a", "a2")).await.expect("r3");
        store
            .commit(Txn::single(Op::Delete {
                key: "/b".into(),
                expect: Expect::Any,
            }))
            .await
            .expect("r4");
        let at = |revision| {
            store
                .snapshot_at(revision)
                .map(|snapshot| (snapshot.revision, state(&snapshot)))
        };
        assert_eq!(at(4), Ok((4, vec![row("/a", "a2", 3)])));
        assert_eq!(at(3), Ok((3, vec![row("/a", "a2", 3), row("/b", "b1", 2)])));
        assert_eq!(at(2), Ok((2, vec![row("/a", "a1", 1), row("/b", "b1", 2)])));
        assert_eq!(at(1), Ok((1, vec![row("/a", "a1", 1)])));
        assert_eq!(at(0), Ok((0, vec![])));
        assert_eq!(
            store.snapshot().revision,
            4,
            "the current state is untouched"
        );
    }

    #[tokio::test]
    async fn revisions_older_than_the_window_are_expired() {
        let backend: Arc<dyn Backend> =
            Arc::new(LocalBackend::open(MemoryDisk::new()).expect("backend"));
        let store = Store::open_with_history(backend, Text, Duration::from_millis(1))
            .await
            .expect("store");
        store.commit(put("/a", "1")).await.expect("r1");
        tokio::time::sleep(Duration::from_millis(5)).await;
        store.commit(put("/a", "2")).await.expect("r2");
        tokio::time::sleep(Duration::from_millis(5)).await;
        store.commit(put("/a", "3")).await.expect("r3");
        assert!(matches!(
            store.snapshot_at(0),
            Err(HistoryError::Expired { .. })
        ));
        assert!(store.snapshot_at(2).is_ok());
    }
}
