//! The feeder: one etcd watch over the prefix that hands every event to a
//! sink (the cache), in revision order, reconnecting where it left off.
//!
//! kube's `storage/etcd3/watcher.go` and the cacher's reflector, reduced to
//! what the cache needs: the watch starts at the revision the cache loaded
//! plus one and resumes after a broken stream (a member killed, a leader
//! change) from the revision after the last one delivered, so nothing is
//! missed or repeated.
//!
//! Reaching a revision that carries no event under the prefix (a write
//! elsewhere in etcd, the compactor's key) — what a consistent read waits
//! for — is done with a sync write: a put of one key inside the watched
//! range (`<prefix>/~ferrokube-sync`, a name no resource can have) whose
//! event arrives in order behind every earlier one, and is applied as an
//! empty batch. kube asks for a progress notification instead
//! (`RequestProgress`), but only on etcd 3.4.31+/3.5.13+: before that (Debian
//! ships 3.4.23) such a notification can overtake events still in flight
//! (etcd-io/etcd#15220), and a cache moved past them would skip them. The
//! periodic notifications (`WithProgressNotify`) travel with the events and
//! are used.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use etcd_client::{Client, EventType, WatchOptions, WatchResponse, WatchStream};
use tokio::sync::watch;

use super::keys::KeyMapper;
use crate::backend::{BackendError, Event, EventKind, EventSink, KeyValue};
use crate::Revision;

/// The keys the sink holds and their mod revisions, to relist against.
pub(super) type KeyIndex = HashMap<String, Revision>;

/// How long the feed may take to reach a wanted revision by itself before a
/// sync write is made (under write load the events get there first).
const SYNC_GRACE: Duration = Duration::from_millis(25);

/// The backend's hold on one running feeder.
pub(super) struct FeederHandle {
    delivered: watch::Receiver<Revision>,
    sync: Arc<Sync>,
    task: tokio::task::JoinHandle<()>,
}

/// Sync writes, one at a time, for the highest revision wanted.
struct Sync {
    client: Client,
    key: Vec<u8>,
    request_timeout: Duration,
    wanted: AtomicI64,
    running: AtomicBool,
}

impl FeederHandle {
    /// The highest revision handed to the sink.
    pub(super) fn delivered(&self) -> watch::Receiver<Revision> {
        self.delivered.clone()
    }

    /// Make the feed reach `wanted` even when no event under the prefix would
    /// get it there: after a short grace, a sync write (see the module doc).
    pub(super) fn request_sync(&self, wanted: Revision) {
        self.sync.wanted.fetch_max(wanted, Ordering::AcqRel);
        if self.sync.running.swap(true, Ordering::AcqRel) {
            return;
        }
        let sync = self.sync.clone();
        let mut delivered = self.delivered.clone();
        tokio::spawn(async move {
            loop {
                let wanted = sync.wanted.load(Ordering::Acquire);
                let reached = matches!(
                    tokio::time::timeout(
                        SYNC_GRACE,
                        delivered.wait_for(|revision| *revision >= wanted),
                    )
                    .await,
                    Ok(Ok(_))
                );
                if !reached {
                    let mut kv = sync.client.kv_client();
                    let put = kv.put(sync.key.clone(), Vec::new(), None);
                    match super::timed(sync.request_timeout, "sync", put).await {
                        Ok(response) => {
                            let written = response.header().map_or(0, |header| header.revision());
                            let _ = tokio::time::timeout(
                                sync.request_timeout,
                                delivered.wait_for(|revision| *revision >= written),
                            )
                            .await;
                        }
                        Err(error) => {
                            // The waiting reads time out with an error; the next one tries again.
                            tracing::debug!(%error, "etcd sync write failed");
                            sync.running.store(false, Ordering::Release);
                            return;
                        }
                    }
                }
                sync.running.store(false, Ordering::Release);
                // A request that came while this one ran, for more than it reached.
                let delivered_now = *delivered.borrow();
                if sync.wanted.load(Ordering::Acquire) <= delivered_now
                    || sync.running.swap(true, Ordering::AcqRel)
                {
                    return;
                }
            }
        });
    }

    pub(super) fn stop(self) {
        self.task.abort();
    }
}

struct Feeder {
    client: Client,
    keys: KeyMapper,
    sink: Arc<dyn EventSink>,
    delivered: watch::Sender<Revision>,
    request_timeout: Duration,
    /// The revision of the last event delivered (progress notifications aside).
    last_event: Revision,
    /// What the sink holds, when known (the feeder continues a `load`).
    index: Option<KeyIndex>,
}

/// Open the watch from `from` and start feeding `sink`. Fails when `from` is
/// already compacted or etcd does not answer.
pub(super) async fn start(
    client: Client,
    keys: KeyMapper,
    from: Revision,
    sink: Arc<dyn EventSink>,
    index: Option<KeyIndex>,
    request_timeout: Duration,
) -> Result<FeederHandle, BackendError> {
    let (delivered, delivered_receiver) = watch::channel(from - 1);
    let sync = Arc::new(Sync {
        client: client.clone(),
        key: keys.sync_key(),
        request_timeout,
        wanted: AtomicI64::new(0),
        running: AtomicBool::new(false),
    });
    let mut feeder = Feeder {
        client,
        keys,
        sink,
        delivered,
        request_timeout,
        last_event: from - 1,
        index,
    };
    feeder.check_not_compacted(from).await?;
    let stream = feeder.open(from).await?;
    let task = tokio::spawn(async move { feeder.run(stream).await });
    Ok(FeederHandle {
        delivered: delivered_receiver,
        sync,
        task,
    })
}

impl Feeder {
    /// etcd creates a watch on a compacted revision and cancels it only
    /// later; a read at the revision before `from` tells at once.
    async fn check_not_compacted(&self, from: Revision) -> Result<(), BackendError> {
        if from <= 1 {
            return Ok(());
        }
        let mut kv = self.client.kv_client();
        let options = etcd_client::GetOptions::new()
            .with_revision(from - 1)
            .with_keys_only()
            .with_limit(1);
        let read = super::timed(
            self.request_timeout,
            "watch",
            kv.get(self.keys.prefix().as_bytes().to_vec(), Some(options)),
        )
        .await;
        match read {
            Err(super::EtcdError::Compacted { .. }) => Err(BackendError::Compacted {
                requested: from,
                oldest: from,
            }),
            // Other failures show again when the watch is opened.
            _ => Ok(()),
        }
    }

    /// A watch stream from `from`, once etcd confirmed it was created.
    async fn open(&mut self, from: Revision) -> Result<WatchStream, BackendError> {
        let (start, end) = self.keys.watched_range();
        let options = WatchOptions::new()
            .with_range(end)
            .with_start_revision(from)
            .with_progress_notify();
        let mut client = self.client.watch_client();
        let mut stream = super::timed(
            self.request_timeout,
            "watch",
            client.watch(start, Some(options)),
        )
        .await
        .map_err(|error| error.into_backend(from))?;
        let first = super::timed(self.request_timeout, "watch", stream.message())
            .await
            .map_err(|error| error.into_backend(from))?;
        match first {
            Some(response) if response.canceled() => Err(cancelled(&response, from)),
            Some(response) if response.created() => Ok(stream),
            Some(_) => Err(BackendError::Io("etcd watch began without created".into())),
            None => Err(BackendError::Io("etcd closed the watch stream".into())),
        }
    }

    async fn run(mut self, mut stream: WatchStream) {
        let mut backoff = Duration::from_millis(50);
        loop {
            let outcome = self.follow(&mut stream).await;
            let next = *self.delivered.borrow() + 1;
            match outcome {
                Err(BackendError::Compacted { oldest, .. }) => {
                    if !self.relist_or_give_up(next, oldest).await {
                        return;
                    }
                }
                Err(error) => tracing::warn!(%error, next, "etcd watch broke; resuming"),
                Ok(()) => tracing::debug!(next, "etcd watch ended; resuming"),
            }
            loop {
                tokio::time::sleep(backoff).await;
                let next = *self.delivered.borrow() + 1;
                match self.open(next).await {
                    Ok(reopened) => {
                        stream = reopened;
                        backoff = Duration::from_millis(50);
                        break;
                    }
                    Err(BackendError::Compacted { requested, oldest }) => {
                        if !self.relist_or_give_up(requested, oldest).await {
                            return;
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, next, "etcd watch cannot resume yet");
                        backoff = (backoff * 2).min(Duration::from_secs(2));
                    }
                }
            }
        }
    }

    /// After etcd compacted past `next`: relist, or say why the feed ends.
    async fn relist_or_give_up(&mut self, next: Revision, oldest: Revision) -> bool {
        match self.relist().await {
            Ok(revision) => {
                tracing::warn!(
                    next,
                    oldest,
                    revision,
                    "etcd compacted past this replica's watch; relisted"
                );
                true
            }
            Err(error) => {
                // Without the index the cache cannot be brought up to date in
                // place: only a restart reloads it.
                tracing::error!(
                    %error,
                    next,
                    oldest,
                    "etcd compacted past this replica's watch; restart it to reload"
                );
                false
            }
        }
    }

    /// kube's reflector relists when its watch is too old; here the cache is
    /// brought to the current state by the difference between what it holds
    /// (the index) and a fresh load: a put for every key that changed (at
    /// its own mod revision, in order) and a delete, at the load's
    /// revision, for every key that is gone. Watchers of the cache see the
    /// history compressed to the latest versions, as after any relist.
    async fn relist(&mut self) -> Result<Revision, BackendError> {
        if self.index.is_none() {
            return Err(BackendError::Io("no index of the cached keys".into()));
        }
        let loaded = super::load_range(&self.client, &self.keys, self.request_timeout).await?;
        let Some(index) = self.index.take() else {
            return Err(BackendError::Io("no index of the cached keys".into()));
        };
        let mut fresh = KeyIndex::with_capacity(loaded.kvs.len());
        let mut puts = Vec::new();
        for kv in loaded.kvs {
            fresh.insert(kv.key.clone(), kv.mod_revision);
            if index.get(&kv.key) != Some(&kv.mod_revision) {
                puts.push(Event {
                    kind: EventKind::Put,
                    kv,
                });
            }
        }
        puts.sort_by_key(|event| event.kv.mod_revision);
        let deletes: Vec<Event> = index
            .keys()
            .filter(|key| !fresh.contains_key(*key))
            .map(|key| Event {
                kind: EventKind::Delete,
                kv: KeyValue {
                    key: key.clone(),
                    value: bytes::Bytes::new(),
                    create_revision: 0,
                    mod_revision: loaded.revision,
                },
            })
            .collect();
        let mut high = *self.delivered.borrow();
        for group in puts.chunk_by(|a, b| a.kv.mod_revision == b.kv.mod_revision) {
            high = self.apply(group[0].kv.mod_revision, high, group);
        }
        if !deletes.is_empty() || high < loaded.revision {
            self.apply(loaded.revision, high, &deletes);
        }
        self.index = Some(fresh);
        self.last_event = loaded.revision;
        Ok(loaded.revision)
    }

    /// Deliver until the stream ends or fails.
    async fn follow(&mut self, stream: &mut WatchStream) -> Result<(), BackendError> {
        loop {
            let message = stream.message().await;
            let next = *self.delivered.borrow() + 1;
            let Some(response) =
                message.map_err(|error| super::EtcdError::from(error).into_backend(next))?
            else {
                return Ok(());
            };
            if response.canceled() {
                return Err(cancelled(&response, next));
            }
            self.deliver(&response)?;
        }
    }

    fn deliver(&mut self, response: &WatchResponse) -> Result<(), BackendError> {
        if response.events().is_empty() {
            // A periodic progress notification: sent through the same channel
            // as the events, after every event up to its revision.
            let revision = response.header().map_or(0, |header| header.revision());
            if revision > *self.delivered.borrow() {
                self.sink.apply(revision, &[]);
                self.delivered.send_replace(revision);
            }
            return Ok(());
        }
        let sync_key = self.keys.sync_key();
        let mut batch: Vec<Event> = Vec::new();
        let mut batch_revision = 0;
        for event in response.events() {
            let Some(kv) = event.kv() else { continue };
            let revision = kv.mod_revision();
            if revision <= self.last_event {
                // Already delivered (a resumed stream never repeats, but be safe).
                continue;
            }
            if batch_revision != 0 && revision != batch_revision {
                self.flush(batch_revision, &mut batch);
            }
            batch_revision = revision;
            if kv.key() == sync_key.as_slice() {
                // Only moves the revision.
                continue;
            }
            batch.push(match event.event_type() {
                EventType::Put => Event {
                    kind: EventKind::Put,
                    kv: self.keys.from_etcd_kv(kv)?,
                },
                EventType::Delete => Event {
                    kind: EventKind::Delete,
                    kv: KeyValue {
                        key: self.keys.from_etcd(kv.key())?,
                        value: bytes::Bytes::new(),
                        create_revision: 0,
                        mod_revision: revision,
                    },
                },
            });
        }
        if batch_revision != 0 {
            self.flush(batch_revision, &mut batch);
        }
        Ok(())
    }

    /// Hand one revision's events (possibly none: a sync write) to the sink.
    fn flush(&mut self, revision: Revision, batch: &mut Vec<Event>) {
        let high = *self.delivered.borrow();
        self.apply(revision, high, batch);
        batch.clear();
        self.last_event = self.last_event.max(revision);
    }

    fn remember(&mut self, events: &[Event]) {
        let Some(index) = self.index.as_mut() else {
            return;
        };
        for event in events {
            match event.kind {
                EventKind::Put => {
                    index.insert(event.kv.key.clone(), event.kv.mod_revision);
                }
                EventKind::Delete => {
                    index.remove(&event.kv.key);
                }
            }
        }
    }

    /// One revision's events, at that revision; never below what the sink
    /// already has (a relist may have moved it ahead), so the cache's
    /// revision never goes back.
    fn apply(&mut self, revision: Revision, high: Revision, events: &[Event]) -> Revision {
        let at = revision.max(high);
        self.remember(events);
        self.sink.apply(at, events);
        self.delivered.send_replace(at);
        at
    }
}

fn cancelled(response: &WatchResponse, requested: Revision) -> BackendError {
    if response.compact_revision() > 0 {
        return BackendError::Compacted {
            requested,
            oldest: response.compact_revision(),
        };
    }
    BackendError::Io(format!(
        "etcd cancelled the watch: {}",
        response.cancel_reason()
    ))
}
