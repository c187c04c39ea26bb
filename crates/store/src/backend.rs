//! The etcd-shaped durable backend trait and the values that cross it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;

use crate::Revision;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Receives stored key-values one at a time ([`Backend::load_each`]).
pub type EachKeyValue = Box<dyn FnMut(KeyValue) + Send>;

/// One key as stored, with etcd's revision bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    pub key: String,
    pub value: Bytes,
    /// Revision of the transaction that created this key (etcd `create_revision`).
    pub create_revision: Revision,
    /// Revision of the last transaction that modified it (etcd `mod_revision`).
    pub mod_revision: Revision,
}

/// A precondition on one key's current state, checked atomically with the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// No precondition.
    Any,
    /// The key must not exist (create).
    Absent,
    /// The key must exist with exactly this mod revision (optimistic concurrency).
    ModRevision(Revision),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Put {
        key: String,
        value: Bytes,
        expect: Expect,
    },
    Delete {
        key: String,
        expect: Expect,
    },
}

impl Op {
    pub fn key(&self) -> &str {
        match self {
            Op::Put { key, .. } | Op::Delete { key, .. } => key,
        }
    }

    pub fn expect(&self) -> Expect {
        match self {
            Op::Put { expect, .. } | Op::Delete { expect, .. } => *expect,
        }
    }
}

/// All-or-nothing: every precondition holds and every op applies at one revision, or nothing does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Txn {
    pub ops: Vec<Op>,
}

impl Txn {
    pub fn single(op: Op) -> Self {
        Txn { ops: vec![op] }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Put,
    Delete,
}

/// One change as the event stream carries it (etcd's `mvccpb.Event`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    /// For a put, the new value; for a delete, the key with an empty value and
    /// `mod_revision` set to the deleting revision (etcd sends no previous value
    /// unless asked; the cache knows it).
    pub kv: KeyValue,
}

/// A put of `value` at `key`, created and modified at `revision` (tests).
#[cfg(test)]
pub(crate) fn put_at(key: &str, value: &str, revision: Revision) -> Event {
    Event {
        kind: EventKind::Put,
        kv: KeyValue {
            key: key.into(),
            value: bytes::Bytes::from(value.to_string()),
            create_revision: revision,
            mod_revision: revision,
        },
    }
}

/// The result of a committed transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    pub revision: Revision,
    pub events: Vec<Event>,
}

/// Everything stored, as of one revision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    pub revision: Revision,
    pub kvs: Vec<KeyValue>,
}

/// Receives committed events in revision order, with no gaps and no duplicates.
/// Called synchronously by the backend after the events are durable and
/// before the writers are acknowledged, so an acknowledged write is already
/// visible to readers of the cache.
pub trait EventSink: Send + Sync {
    /// `events` are ordered by revision; `revision` is the backend revision after them.
    fn apply(&self, revision: Revision, events: &[Event]);
}

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error(
        "precondition failed on key {key}: expected {expected:?}, found mod revision {actual:?}"
    )]
    PreconditionFailed {
        key: String,
        expected: Expect,
        actual: Option<Revision>,
    },
    #[error("empty transaction")]
    EmptyTxn,
    #[error("key {0} appears twice in one transaction")]
    DuplicateKey(String),
    #[error("revision {requested} is compacted (oldest available {oldest})")]
    Compacted {
        requested: Revision,
        oldest: Revision,
    },
    #[error("storage i/o failed: {0}")]
    Io(String),
    #[error("backend is closed")]
    Closed,
    #[error("this backend cannot {0}")]
    Unsupported(&'static str),
}

/// A durable store with etcd semantics. Implementations: [`crate::LocalBackend`]
/// (memory, SQLite); an etcd v3 backend fits the same shape.
pub trait Backend: Send + Sync + 'static {
    /// Commit a transaction; resolves once it is durable, with its revision.
    fn commit(&self, txn: Txn) -> BoxFuture<'_, Result<Committed, BackendError>>;

    /// Every key and the revision they are current at.
    fn load(&self) -> BoxFuture<'_, Result<Loaded, BackendError>>;

    /// [`Backend::load`], handing each key-value to `each` as it is read (on
    /// the backend's own thread where it has one) and returning the revision:
    /// a caller that decodes as it goes never holds every raw value at once,
    /// and frees each where it was allocated. Default: `load`, then each.
    fn load_each(&self, mut each: EachKeyValue) -> BoxFuture<'_, Result<Revision, BackendError>> {
        Box::pin(async move {
            let loaded = self.load().await?;
            for kv in loaded.kvs {
                each(kv);
            }
            Ok(loaded.revision)
        })
    }

    /// Deliver every event with revision >= `from` to `sink`, in order, from now on.
    fn watch(
        &self,
        from: Revision,
        sink: Arc<dyn EventSink>,
    ) -> BoxFuture<'_, Result<(), BackendError>>;

    /// The latest committed revision (a quorum read on etcd).
    fn current_revision(&self) -> BoxFuture<'_, Result<Revision, BackendError>>;

    /// Forget history older than `revision` (etcd compaction). Backends that
    /// keep no history treat this as a no-op.
    fn compact(&self, revision: Revision) -> BoxFuture<'_, Result<(), BackendError>>;

    /// Flush and stop accepting writes.
    fn close(&self) -> BoxFuture<'_, Result<(), BackendError>>;

    /// Whether `key`'s stored value is in a form this backend would no
    /// longer write (encrypted with a key that is not the first one): an
    /// update that changes nothing must still write it, as kube's
    /// `GuaranteedUpdate` does for `origState.stale`, so rewriting
    /// rotates keys. Default: never.
    fn is_stale(&self, _key: &str) -> bool {
        false
    }

    /// The whole stored state as an O(1) copy ([`crate::Checkpoint`]), taken
    /// between two commits; `at` runs at that point, on the backend's own
    /// thread, before the next commit (the cache reads its matching
    /// snapshot there). Only backends that keep everything in a persistent
    /// map can; the others answer [`BackendError::Unsupported`].
    fn image(&self, at: ImageHook) -> BoxFuture<'_, Result<Image, BackendError>> {
        drop(at);
        Box::pin(async { Err(BackendError::Unsupported("take a checkpoint")) })
    }

    /// Replace the whole stored state with `image` at a new revision above
    /// every revision handed out so far, and return it; `at` runs with that
    /// revision before any later commit (the cache swaps its state there).
    fn restore(
        &self,
        image: Image,
        at: RestoreHook,
    ) -> BoxFuture<'_, Result<Revision, BackendError>> {
        drop((image, at));
        Box::pin(async { Err(BackendError::Unsupported("restore a checkpoint")) })
    }
}

/// What [`Backend::image`] runs between two commits.
pub type ImageHook = Box<dyn FnOnce() + Send>;
/// What [`Backend::restore`] runs with the restore's revision.
pub type RestoreHook = Box<dyn FnOnce(Revision) + Send>;

/// Every stored key at one revision, in a persistent map: cloning it is O(1).
#[derive(Debug, Clone, Default)]
pub struct Image {
    pub revision: Revision,
    pub kvs: imbl::OrdMap<String, KeyValue>,
    /// The local committer's key index of the same state (O(1) too), so a
    /// restore need not rebuild it from `kvs`; valid when `index_revision`
    /// is `revision`.
    pub(crate) index: Option<crate::local::KeyIndex>,
    pub(crate) index_revision: Revision,
}
