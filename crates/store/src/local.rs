//! A backend that lives in this process: one committer thread owns the key
//! index and the disk, assigns revisions and does group commit.
//!
//! Writers send transactions over a channel; the committer drains everything
//! queued, checks each transaction's preconditions against the index (and the
//! effects of earlier transactions in the same batch), writes the whole batch
//! to the [`Disk`] in one durable step (one fsync for SQLite), then hands the
//! events to the sinks and only then acknowledges the writers.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use crate::backend::{
    Backend, BackendError, BoxFuture, Committed, EachKeyValue, Event, EventKind, EventSink, Expect,
    Image, ImageHook, KeyValue, Loaded, Op, RestoreHook, Txn,
};
use crate::Revision;

/// Largest number of transactions folded into one durable write.
const MAX_BATCH: usize = 4096;

/// A stored key and its create and mod revisions.
pub type KeyRevisions = (String, Revision, Revision);

/// Durable state below the committer. Called only from the committer thread.
pub trait Disk: Send + 'static {
    /// Everything stored and the revision it is current at.
    fn load(&mut self) -> Result<Loaded, BackendError>;
    /// The stored keys with their revisions, without the values (what the
    /// committer indexes), and the current revision.
    /// [`Disk::load`], one key-value at a time; returns the revision.
    fn load_each(&mut self, each: &mut dyn FnMut(KeyValue)) -> Result<Revision, BackendError> {
        let loaded = self.load()?;
        for kv in loaded.kvs {
            each(kv);
        }
        Ok(loaded.revision)
    }
    fn load_keys(&mut self) -> Result<(Revision, Vec<KeyRevisions>), BackendError> {
        let loaded = self.load()?;
        let keys = loaded
            .kvs
            .into_iter()
            .map(|kv| (kv.key, kv.create_revision, kv.mod_revision))
            .collect();
        Ok((loaded.revision, keys))
    }
    /// Make `events` durable as one atomic step; `revision` is the revision after them.
    fn write(&mut self, revision: Revision, events: &[Event]) -> Result<(), BackendError>;
    /// Flush anything buffered.
    fn close(&mut self) -> Result<(), BackendError>;
    /// Everything stored, as an O(1) copy (only disks that keep a persistent map can).
    fn image(&self) -> Result<Image, BackendError> {
        Err(BackendError::Unsupported("take a checkpoint"))
    }
    /// Hold exactly the keys of `image` from now on, current at `revision`.
    fn restore(&mut self, image: &Image, revision: Revision) -> Result<(), BackendError> {
        let _ = (image, revision);
        Err(BackendError::Unsupported("restore a checkpoint"))
    }
}

enum Request {
    Commit(Txn, oneshot::Sender<Result<Committed, BackendError>>),
    Load(oneshot::Sender<Result<Loaded, BackendError>>),
    LoadEach(
        EachKeyValue,
        oneshot::Sender<Result<Revision, BackendError>>,
    ),
    Watch(
        Revision,
        Arc<dyn EventSink>,
        oneshot::Sender<Result<(), BackendError>>,
    ),
    Close(oneshot::Sender<Result<(), BackendError>>),
    Image(ImageHook, oneshot::Sender<Result<Image, BackendError>>),
    Restore(
        Image,
        RestoreHook,
        oneshot::Sender<Result<Revision, BackendError>>,
    ),
}

pub struct LocalBackend {
    requests: Mutex<Option<mpsc::Sender<Request>>>,
    revision: Arc<AtomicI64>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// The committer's key index: a persistent map, so that a checkpoint keeps
/// it in O(1) and a restore swaps it back without rebuilding it.
pub(crate) type KeyIndex = imbl::HashMap<String, IndexEntry>;

/// What the committer knows about one key without its value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexEntry {
    create_revision: Revision,
    mod_revision: Revision,
}

struct Committer<D: Disk> {
    disk: D,
    index: KeyIndex,
    revision: Revision,
    shared_revision: Arc<AtomicI64>,
    sinks: Vec<Arc<dyn EventSink>>,
}

impl LocalBackend {
    /// Load `disk` and start the committer thread.
    pub fn open<D: Disk>(mut disk: D) -> Result<Self, BackendError> {
        // Only keys and revisions: the values are loaded once, by the cache.
        let (revision, keys) = disk.load_keys()?;
        let mut index = KeyIndex::new();
        for (key, create_revision, mod_revision) in keys {
            index.insert(
                key,
                IndexEntry {
                    create_revision,
                    mod_revision,
                },
            );
        }
        let shared_revision = Arc::new(AtomicI64::new(revision));
        let committer = Committer {
            disk,
            index,
            revision,
            shared_revision: shared_revision.clone(),
            sinks: Vec::new(),
        };
        let (sender, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("store-committer".into())
            .spawn(move || {
                crate::thread_panic::logged(
                    "store-committer",
                    "the store's committer panicked: every write fails from now on, until the server restarts",
                    || committer.run(receiver),
                )
            })
            .map_err(|error| BackendError::Io(error.to_string()))?;
        Ok(LocalBackend {
            requests: Mutex::new(Some(sender)),
            revision: shared_revision,
            thread: Mutex::new(Some(thread)),
        })
    }

    fn send(&self, request: Request) -> Result<(), BackendError> {
        let guard = self.requests.lock().map_err(|_| BackendError::Closed)?;
        let sender = guard.as_ref().ok_or(BackendError::Closed)?;
        sender.send(request).map_err(|_| BackendError::Closed)
    }
}

async fn reply<T>(receiver: oneshot::Receiver<Result<T, BackendError>>) -> Result<T, BackendError> {
    receiver.await.map_err(|_| BackendError::Closed)?
}

impl Backend for LocalBackend {
    fn commit(&self, txn: Txn) -> BoxFuture<'_, Result<Committed, BackendError>> {
        let (sender, receiver) = oneshot::channel();
        let sent = self.send(Request::Commit(txn, sender));
        Box::pin(async move {
            sent?;
            reply(receiver).await
        })
    }

    fn load(&self) -> BoxFuture<'_, Result<Loaded, BackendError>> {
        let (sender, receiver) = oneshot::channel();
        let sent = self.send(Request::Load(sender));
        Box::pin(async move {
            sent?;
            reply(receiver).await
        })
    }

    fn load_each(&self, each: EachKeyValue) -> BoxFuture<'_, Result<Revision, BackendError>> {
        let (sender, receiver) = oneshot::channel();
        let sent = self.send(Request::LoadEach(each, sender));
        Box::pin(async move {
            sent?;
            reply(receiver).await
        })
    }

    fn watch(
        &self,
        from: Revision,
        sink: Arc<dyn EventSink>,
    ) -> BoxFuture<'_, Result<(), BackendError>> {
        let (sender, receiver) = oneshot::channel();
        let sent = self.send(Request::Watch(from, sink, sender));
        Box::pin(async move {
            sent?;
            reply(receiver).await
        })
    }

    fn current_revision(&self) -> BoxFuture<'_, Result<Revision, BackendError>> {
        let revision = self.revision.load(Ordering::Acquire);
        Box::pin(async move { Ok(revision) })
    }

    fn compact(&self, _revision: Revision) -> BoxFuture<'_, Result<(), BackendError>> {
        // The local backend keeps no history below the cache: nothing to forget.
        Box::pin(async { Ok(()) })
    }

    fn image(&self, at: ImageHook) -> BoxFuture<'_, Result<Image, BackendError>> {
        let (sender, receiver) = oneshot::channel();
        let sent = self.send(Request::Image(at, sender));
        Box::pin(async move {
            sent?;
            reply(receiver).await
        })
    }

    fn restore(
        &self,
        image: Image,
        at: RestoreHook,
    ) -> BoxFuture<'_, Result<Revision, BackendError>> {
        let (sender, receiver) = oneshot::channel();
        let sent = self.send(Request::Restore(image, at, sender));
        Box::pin(async move {
            sent?;
            reply(receiver).await
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), BackendError>> {
        let (sender, receiver) = oneshot::channel();
        let sent = self.send(Request::Close(sender));
        let taken = self.requests.lock().ok().and_then(|mut guard| guard.take());
        drop(taken);
        let thread = self.thread.lock().ok().and_then(|mut guard| guard.take());
        Box::pin(async move {
            sent?;
            let result = reply(receiver).await;
            if let Some(thread) = thread {
                let _ = tokio::task::spawn_blocking(move || thread.join()).await;
            }
            result
        })
    }
}

impl Drop for LocalBackend {
    fn drop(&mut self) {
        if let Ok(mut guard) = self.requests.lock() {
            guard.take();
        }
    }
}

/// A transaction checked and turned into events, waiting for the batch's durable write.
struct Pending {
    reply: oneshot::Sender<Result<Committed, BackendError>>,
    result: Result<Committed, BackendError>,
}

impl<D: Disk> Committer<D> {
    fn run(mut self, receiver: mpsc::Receiver<Request>) {
        while let Ok(first) = receiver.recv() {
            let mut commits = Vec::new();
            let mut next = Some(first);
            while let Some(request) = next.take() {
                match request {
                    Request::Commit(txn, reply) => commits.push((txn, reply)),
                    other => {
                        // Non-commit requests act on a fully applied state: flush the batch first.
                        self.commit_batch(std::mem::take(&mut commits));
                        if self.handle_control(other) {
                            return;
                        }
                    }
                }
                if commits.len() < MAX_BATCH {
                    next = receiver.try_recv().ok();
                }
            }
            self.commit_batch(commits);
        }
        let _ = self.disk.close();
    }

    /// Returns true when the committer must stop.
    fn handle_control(&mut self, request: Request) -> bool {
        match request {
            Request::Commit(..) => false,
            Request::Load(reply) => {
                let _ = reply.send(self.disk.load());
                false
            }
            Request::LoadEach(mut each, reply) => {
                let _ = reply.send(self.disk.load_each(&mut *each));
                false
            }
            Request::Watch(from, sink, reply) => {
                // No history is kept below the cache: a watcher can only start at the head.
                let result = if from == self.revision + 1 {
                    self.sinks.push(sink);
                    Ok(())
                } else {
                    Err(BackendError::Compacted {
                        requested: from,
                        oldest: self.revision + 1,
                    })
                };
                let _ = reply.send(result);
                false
            }
            Request::Close(reply) => {
                let _ = reply.send(self.disk.close());
                true
            }
            Request::Image(at, reply) => {
                let image = self.disk.image().map(|mut image| {
                    image.index = Some(self.index.clone());
                    image.index_revision = self.revision;
                    image
                });
                if image.is_ok() {
                    at();
                }
                let _ = reply.send(image);
                false
            }
            Request::Restore(image, at, reply) => {
                let _ = reply.send(self.restore(&image, at));
                false
            }
        }
    }

    /// Swap in `image` at a revision above every one handed out so far: a
    /// resourceVersion a client holds never names other data afterwards
    /// (see `checkpoint.rs`).
    fn restore(&mut self, image: &Image, at: RestoreHook) -> Result<Revision, BackendError> {
        let revision = self.revision.max(image.revision) + 1;
        self.disk.restore(image, revision)?;
        let index = match &image.index {
            // Taken with the image: the very index of that state.
            Some(index) if image.index_revision == image.revision => index.clone(),
            _ => {
                let mut index = KeyIndex::new();
                for (key, kv) in &image.kvs {
                    index.insert(
                        key.clone(),
                        IndexEntry {
                            create_revision: kv.create_revision,
                            mod_revision: kv.mod_revision,
                        },
                    );
                }
                index
            }
        };
        self.index = index;
        self.revision = revision;
        at(revision);
        // Published after the hook, as after the sinks of a commit.
        self.shared_revision.store(revision, Ordering::Release);
        Ok(revision)
    }

    fn commit_batch(
        &mut self,
        commits: Vec<(Txn, oneshot::Sender<Result<Committed, BackendError>>)>,
    ) {
        if commits.is_empty() {
            return;
        }
        let start_revision = self.revision;
        let mut undo: Vec<(String, Option<IndexEntry>)> = Vec::new();
        let mut pending = Vec::with_capacity(commits.len());
        let mut all_events = Vec::new();
        for (txn, reply) in commits {
            let result = self.apply_txn(txn, &mut undo);
            if let Ok(committed) = &result {
                all_events.extend(committed.events.iter().cloned());
            }
            pending.push(Pending { reply, result });
        }
        if self.revision != start_revision {
            if let Err(error) = self.disk.write(self.revision, &all_events) {
                tracing::error!(%error, "durable write failed; rejecting the batch");
                self.rollback(start_revision, undo);
                for entry in pending {
                    let outcome = match entry.result {
                        Ok(_) => Err(BackendError::Io(error.to_string())),
                        failed => failed,
                    };
                    let _ = entry.reply.send(outcome);
                }
                return;
            }
            for sink in &self.sinks {
                sink.apply(self.revision, &all_events);
            }
            // Published after the sinks: the cache never lags what current_revision reports.
            self.shared_revision.store(self.revision, Ordering::Release);
        }
        for entry in pending {
            let _ = entry.reply.send(entry.result);
        }
    }

    fn rollback(&mut self, start_revision: Revision, undo: Vec<(String, Option<IndexEntry>)>) {
        for (key, previous) in undo.into_iter().rev() {
            match previous {
                Some(entry) => {
                    self.index.insert(key, entry);
                }
                None => {
                    self.index.remove(&key);
                }
            }
        }
        self.revision = start_revision;
    }

    fn check(&self, op: &Op) -> Result<(), BackendError> {
        let actual = self.index.get(op.key()).map(|entry| entry.mod_revision);
        let holds = match op.expect() {
            Expect::Any => true,
            Expect::Absent => actual.is_none(),
            Expect::ModRevision(expected) => actual == Some(expected),
        };
        if holds {
            Ok(())
        } else {
            Err(BackendError::PreconditionFailed {
                key: op.key().to_string(),
                expected: op.expect(),
                actual,
            })
        }
    }

    fn apply_txn(
        &mut self,
        txn: Txn,
        undo: &mut Vec<(String, Option<IndexEntry>)>,
    ) -> Result<Committed, BackendError> {
        if txn.ops.is_empty() {
            return Err(BackendError::EmptyTxn);
        }
        for (position, op) in txn.ops.iter().enumerate() {
            if txn.ops[..position]
                .iter()
                .any(|earlier| earlier.key() == op.key())
            {
                return Err(BackendError::DuplicateKey(op.key().to_string()));
            }
            self.check(op)?;
        }
        let revision = self.revision + 1;
        let mut events = Vec::with_capacity(txn.ops.len());
        for op in txn.ops {
            match op {
                Op::Put { key, value, .. } => {
                    let prev = self.index.get(&key).copied();
                    let create_revision = prev.map_or(revision, |entry| entry.create_revision);
                    self.index.insert(
                        key.clone(),
                        IndexEntry {
                            create_revision,
                            mod_revision: revision,
                        },
                    );
                    let kv = KeyValue {
                        key: key.clone(),
                        value,
                        create_revision,
                        mod_revision: revision,
                    };
                    undo.push((key, prev));
                    events.push(Event {
                        kind: EventKind::Put,
                        kv,
                    });
                }
                Op::Delete { key, .. } => {
                    let Some(prev) = self.index.remove(&key) else {
                        // Deleting a missing key with no precondition is a no-op, as in etcd.
                        continue;
                    };
                    let kv = KeyValue {
                        key: key.clone(),
                        value: bytes::Bytes::new(),
                        create_revision: prev.create_revision,
                        mod_revision: revision,
                    };
                    undo.push((key, Some(prev)));
                    events.push(Event {
                        kind: EventKind::Delete,
                        kv,
                    });
                }
            }
        }
        if events.is_empty() {
            // Nothing changed: etcd does not move the revision for a no-op delete either.
            return Ok(Committed {
                revision: self.revision,
                events,
            });
        }
        self.revision = revision;
        Ok(Committed { revision, events })
    }
}
