//! The etcd v3 backend: the store's [`Backend`] on an etcd cluster, so that
//! several ferrokube replicas can serve one set of objects.
//!
//! It follows kube-apiserver's `storage/etcd3/store.go`:
//! - resourceVersion is the etcd revision; a commit is one etcd `Txn` whose
//!   `If` compares each key's `mod_revision` (a create compares it with 0,
//!   as `GuaranteedUpdate`/`Create` do) and whose `Else` reads the keys back so
//!   a conflict can say what it found;
//! - `load` is a paginated range over the prefix, every page at the first
//!   page's revision;
//! - the cache is fed by an etcd watch from the revision it loaded
//!   ([`watch`]); a sync write moves it to revisions that carry no event
//!   for it (writes outside the prefix), which is what consistent reads
//!   wait for;
//! - `current_revision` is a quorum (linearizable) range, as kube's
//!   `GetCurrentResourceVersionFromStorage`;
//! - history is compacted every `compaction_interval` by kube's
//!   `compact_rev_key` protocol ([`compactor`]), so several replicas compact
//!   once per interval between them.
//!
//! Keys: the store's keys start with `store_root` (`/registry`, the layout
//! kube-apiserver uses); in etcd that root is replaced by the configured
//! prefix (`--etcd-prefix`). Values are the bytes the store hands in (JSON).

mod compactor;
mod error;
mod keys;
mod watch;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use etcd_client::{
    Certificate, Client, Compare, CompareOp, ConnectOptions, DeleteOptions, GetOptions, Identity,
    PutOptions, TlsOptions, TxnOp, TxnOpResponse,
};

use crate::backend::{
    Backend, BackendError, BoxFuture, Committed, Event, EventKind, EventSink, Expect, KeyValue,
    Loaded, Op, Txn,
};
use crate::Revision;

pub use error::EtcdError;
pub use keys::KeyMapper;

/// kube-apiserver's `--etcd-compaction-interval` default.
pub const DEFAULT_COMPACTION_INTERVAL: Duration = Duration::from_secs(300);
/// kube-apiserver's `--etcd-prefix` default.
pub const DEFAULT_PREFIX: &str = "/registry";
/// Keys per page when loading (kube's watch cache lists in pages of 10000;
/// smaller pages keep each gRPC message well under etcd's 2 MiB request limit
/// for typical objects).
const LOAD_PAGE: i64 = 1000;

/// Client certificates and the CA for `https://` etcd endpoints
/// (`--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`).
#[derive(Debug, Clone, Default)]
pub struct EtcdTls {
    pub ca_file: Option<PathBuf>,
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct EtcdOptions {
    /// `--etcd-servers`: `http://host:port` or `https://host:port`.
    pub endpoints: Vec<String>,
    /// `--etcd-prefix`: where the objects live in etcd.
    pub prefix: String,
    /// The root every store key starts with; replaced by `prefix` in etcd.
    pub store_root: String,
    pub tls: EtcdTls,
    /// Upper bound on one etcd request, so an outage surfaces as an error, not a hang.
    pub request_timeout: Duration,
    /// `--etcd-compaction-interval`; zero disables compaction (as in kube).
    pub compaction_interval: Duration,
}

impl EtcdOptions {
    pub fn new(endpoints: Vec<String>) -> Self {
        EtcdOptions {
            endpoints,
            prefix: DEFAULT_PREFIX.to_string(),
            store_root: DEFAULT_PREFIX.to_string(),
            tls: EtcdTls::default(),
            request_timeout: Duration::from_secs(10),
            compaction_interval: DEFAULT_COMPACTION_INTERVAL,
        }
    }
}

/// The etcd v3 backend. Cheap to share behind an `Arc`.
pub struct EtcdBackend {
    client: Client,
    keys: KeyMapper,
    request_timeout: Duration,
    /// One feeder per `watch` call (one per cache).
    feeders: Mutex<Vec<watch::FeederHandle>>,
    /// The revision and keys of the last `load`, handed to the watch that
    /// continues it.
    last_load: Mutex<Option<(Revision, watch::KeyIndex)>>,
    compactor: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl EtcdBackend {
    /// Connect to the cluster (and check that it answers) and start the compactor.
    pub async fn connect(options: EtcdOptions) -> Result<Self, EtcdError> {
        if options.endpoints.is_empty() {
            return Err(EtcdError::Config("--etcd-servers is empty".into()));
        }
        let mut connect = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(5))
            // Pings find a member that vanished without closing its sockets,
            // so its watch streams fail over instead of hanging.
            .with_keep_alive(Duration::from_secs(5), Duration::from_secs(5))
            .with_keep_alive_while_idle(true)
            // As clientv3's WithRequireLeader, which kube uses for watches: a
            // member cut off from the quorum answers with an error instead of
            // silently serving a stalled watch.
            .with_require_leader(true);
        if let Some(tls) = tls_options(&options.tls)? {
            connect = connect.with_tls(tls);
        }
        let client = tokio::time::timeout(
            options.request_timeout,
            Client::connect(&options.endpoints, Some(connect)),
        )
        .await
        .map_err(|_| EtcdError::Timeout("connecting to etcd".into()))?
        .map_err(EtcdError::from)?;
        let backend = EtcdBackend {
            client,
            keys: KeyMapper::new(&options.prefix, &options.store_root),
            request_timeout: options.request_timeout,
            feeders: Mutex::new(Vec::new()),
            last_load: Mutex::new(None),
            compactor: Mutex::new(None),
        };
        // Fail at start, with the reason, when etcd does not answer.
        if let Err(error) = backend.quorum_revision().await {
            return Err(EtcdError::Client(format!(
                "{} does not answer: {error}",
                options.endpoints.join(",")
            )));
        }
        if !options.compaction_interval.is_zero() {
            let handle = compactor::spawn(
                backend.client.clone(),
                options.compaction_interval,
                options.request_timeout,
            );
            *backend.lock_compactor() = Some(handle);
        }
        Ok(backend)
    }

    /// The etcd key of a store key.
    pub fn keys(&self) -> &KeyMapper {
        &self.keys
    }

    /// The value under `name` beside the prefix (outside the watched range,
    /// so the cache never sees it), created with `candidate` when absent. The
    /// first replica to create it wins; every replica reads the same value.
    /// ferrokube keeps the continue-token signing key there.
    pub async fn shared_value(&self, name: &str, candidate: Bytes) -> Result<Bytes, EtcdError> {
        let key = self.keys.sibling(name);
        let txn = etcd_client::Txn::new()
            .when(vec![Compare::create_revision(
                key.clone(),
                CompareOp::Equal,
                0,
            )])
            .and_then(vec![TxnOp::put(key.clone(), candidate.to_vec(), None)])
            .or_else(vec![TxnOp::get(key.clone(), None)]);
        let client = &self.client;
        let response = retrying(self.request_timeout, "shared value", Retry::Always, || {
            let mut kv = client.kv_client();
            let txn = txn.clone();
            async move { kv.txn(txn).await }
        })
        .await?;
        if response.succeeded() {
            return Ok(candidate);
        }
        for op in response.op_responses() {
            if let TxnOpResponse::Get(get) = op {
                if let Some(found) = get.kvs().first() {
                    return Ok(Bytes::copy_from_slice(found.value()));
                }
            }
        }
        Err(EtcdError::Protocol(format!(
            "{} vanished while read",
            String::from_utf8_lossy(&key)
        )))
    }

    /// The cluster's current revision, read through the raft leader (not serializable).
    async fn quorum_revision(&self) -> Result<Revision, EtcdError> {
        let client = &self.client;
        let key = self.keys.prefix().as_bytes().to_vec();
        let response = retrying(self.request_timeout, "quorum read", Retry::Always, || {
            let mut kv = client.kv_client();
            let key = key.clone();
            async move { kv.get(key, Some(GetOptions::new().with_keys_only())).await }
        })
        .await?;
        response
            .header()
            .map(|header| header.revision())
            .ok_or_else(|| EtcdError::Protocol("response without header".into()))
    }

    async fn commit_txn(&self, txn: Txn) -> Result<Committed, BackendError> {
        if txn.ops.is_empty() {
            return Err(BackendError::EmptyTxn);
        }
        let mut seen = HashSet::new();
        for op in &txn.ops {
            if !seen.insert(op.key()) {
                return Err(BackendError::DuplicateKey(op.key().to_string()));
            }
        }
        let mut compares = Vec::new();
        let mut then = Vec::with_capacity(txn.ops.len());
        let mut otherwise = Vec::new();
        for op in &txn.ops {
            let key = self.keys.to_etcd(op.key());
            match op.expect() {
                Expect::Any => {}
                // kube's Create: `Compare(ModRevision(key), "=", 0)`.
                Expect::Absent => {
                    compares.push(Compare::mod_revision(key.clone(), CompareOp::Equal, 0));
                    otherwise.push(TxnOp::get(
                        key.clone(),
                        Some(GetOptions::new().with_keys_only()),
                    ));
                }
                Expect::ModRevision(revision) => {
                    compares.push(Compare::mod_revision(
                        key.clone(),
                        CompareOp::Equal,
                        revision,
                    ));
                    otherwise.push(TxnOp::get(
                        key.clone(),
                        Some(GetOptions::new().with_keys_only()),
                    ));
                }
            }
            then.push(match op {
                Op::Put { value, .. } => {
                    TxnOp::put(key, value.to_vec(), Some(PutOptions::new().with_prev_key()))
                }
                Op::Delete { .. } => TxnOp::delete(key, Some(DeleteOptions::new().with_prev_key())),
            });
        }
        let request = etcd_client::Txn::new()
            .when(compares)
            .and_then(then)
            .or_else(otherwise);
        let client = &self.client;
        let response = retrying(self.request_timeout, "commit", Retry::IfNotSent, || {
            let mut kv = client.kv_client();
            let request = request.clone();
            async move { kv.txn(request).await }
        })
        .await
        .map_err(BackendError::from)?;
        let revision = response
            .header()
            .map(|header| header.revision())
            .ok_or_else(|| BackendError::Io("etcd response without header".into()))?;
        let responses = response.op_responses();
        if !response.succeeded() {
            return Err(self.precondition_failure(&txn, &responses));
        }
        let mut events = Vec::with_capacity(txn.ops.len());
        for (op, result) in txn.ops.iter().zip(&responses) {
            match (op, result) {
                (Op::Put { key, value, .. }, TxnOpResponse::Put(put)) => {
                    let create_revision = put
                        .prev_key()
                        .map_or(revision, |previous| previous.create_revision());
                    events.push(Event {
                        kind: EventKind::Put,
                        kv: KeyValue {
                            key: key.clone(),
                            value: value.clone(),
                            create_revision,
                            mod_revision: revision,
                        },
                    });
                }
                (Op::Delete { key, .. }, TxnOpResponse::Delete(delete)) => {
                    if let Some(previous) = delete.prev_kvs().first() {
                        events.push(Event {
                            kind: EventKind::Delete,
                            kv: KeyValue {
                                key: key.clone(),
                                value: Bytes::new(),
                                create_revision: previous.create_revision(),
                                mod_revision: revision,
                            },
                        });
                    }
                }
                _ => {
                    return Err(BackendError::Io(
                        "etcd answered a transaction with mismatched responses".into(),
                    ))
                }
            }
        }
        if !events.is_empty() {
            // The contract of EventSink: the write is visible to the caches
            // fed by this backend before it is acknowledged.
            self.wait_delivered(revision).await;
        }
        Ok(Committed { revision, events })
    }

    /// Which precondition failed, from the `Else` reads.
    fn precondition_failure(&self, txn: &Txn, responses: &[TxnOpResponse]) -> BackendError {
        let checked = txn.ops.iter().filter(|op| op.expect() != Expect::Any);
        let mut first = None;
        for (op, result) in checked.zip(responses) {
            let actual = match result {
                TxnOpResponse::Get(get) => get.kvs().first().map(|kv| kv.mod_revision()),
                _ => None,
            };
            let holds = match op.expect() {
                Expect::Any => true,
                Expect::Absent => actual.is_none(),
                Expect::ModRevision(revision) => actual == Some(revision),
            };
            let failure = BackendError::PreconditionFailed {
                key: op.key().to_string(),
                expected: op.expect(),
                actual,
            };
            if !holds {
                return failure;
            }
            first.get_or_insert(failure);
        }
        // Every read holds now: the key changed back between the compare and the
        // read, which is still a conflict for the writer.
        first.unwrap_or_else(|| BackendError::Io("etcd transaction failed".into()))
    }

    /// Wait (bounded) until every feeder delivered `revision` to its sink.
    async fn wait_delivered(&self, revision: Revision) {
        let receivers: Vec<_> = self
            .lock_feeders()
            .iter()
            .map(watch::FeederHandle::delivered)
            .collect();
        for mut receiver in receivers {
            let reached = tokio::time::timeout(
                self.request_timeout,
                receiver.wait_for(|delivered| *delivered >= revision),
            )
            .await;
            if !matches!(reached, Ok(Ok(_))) {
                tracing::warn!(
                    revision,
                    "etcd watch did not deliver an acknowledged write in time"
                );
            }
        }
    }

    async fn load_all(&self) -> Result<Loaded, BackendError> {
        let loaded = load_range(&self.client, &self.keys, self.request_timeout).await?;
        // What the cache that loads this will hold: its feeder needs it to
        // relist should etcd compact past it (see `watch.rs`).
        let index = loaded
            .kvs
            .iter()
            .map(|kv| (kv.key.clone(), kv.mod_revision))
            .collect();
        *self.lock_last_load() = Some((loaded.revision, index));
        Ok(loaded)
    }
}

/// Every key under the prefix, paginated, every page at the first page's revision.
async fn load_range(
    client: &Client,
    keys: &KeyMapper,
    request_timeout: Duration,
) -> Result<Loaded, BackendError> {
    let (start, end) = keys.watched_range();
    let mut kvs = Vec::new();
    let mut from = start;
    let mut revision = 0;
    loop {
        let mut options = GetOptions::new()
            .with_range(end.clone())
            .with_limit(LOAD_PAGE);
        if revision > 0 {
            options = options.with_revision(revision);
        }
        let page = retrying(request_timeout, "load", Retry::Always, || {
            let mut kv = client.kv_client();
            let (from, options) = (from.clone(), options.clone());
            async move { kv.get(from, Some(options)).await }
        })
        .await
        .map_err(BackendError::from)?;
        if revision == 0 {
            revision = page
                .header()
                .map(|header| header.revision())
                .ok_or_else(|| BackendError::Io("etcd response without header".into()))?;
        }
        let sync_key = keys.sync_key();
        for found in page.kvs() {
            if found.key() != sync_key.as_slice() {
                kvs.push(keys.from_etcd_kv(found)?);
            }
        }
        match page.kvs().last() {
            Some(last) if page.more() => {
                let mut next = last.key().to_vec();
                next.push(0);
                from = next;
            }
            _ => break,
        }
    }
    Ok(Loaded { revision, kvs })
}

impl EtcdBackend {
    fn lock_last_load(&self) -> std::sync::MutexGuard<'_, Option<(Revision, watch::KeyIndex)>> {
        self.last_load
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lock_feeders(&self) -> std::sync::MutexGuard<'_, Vec<watch::FeederHandle>> {
        self.feeders
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lock_compactor(&self) -> std::sync::MutexGuard<'_, Option<tokio::task::JoinHandle<()>>> {
        self.compactor
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// When a failed etcd request may be sent again (within the request timeout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// Reads and compare-and-swaps: sending twice is harmless.
    Always,
    /// Writes: only when the request never left (no connection to that member;
    /// the balancer then picks another). As clientv3's retry interceptor.
    IfNotSent,
}

/// One etcd request, tried again on another member while `retry` allows and
/// time is left: a killed member costs the client nothing it can avoid.
async fn retrying<T, F, Fut>(
    limit: Duration,
    what: &str,
    retry: Retry,
    mut attempt: F,
) -> Result<T, EtcdError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, etcd_client::Error>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let error = match timed(left, what, attempt()).await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        let again = match (&error, retry) {
            (EtcdError::Client(_), Retry::Always) => true,
            (EtcdError::Client(message), Retry::IfNotSent) => error::never_sent(message),
            _ => false,
        };
        if !again || tokio::time::Instant::now() + RETRY_PAUSE >= deadline {
            return Err(error);
        }
        tracing::debug!(%error, what, "etcd request failed; trying again");
        tokio::time::sleep(RETRY_PAUSE).await;
    }
}

const RETRY_PAUSE: Duration = Duration::from_millis(50);

async fn timed<T>(
    limit: Duration,
    what: &str,
    call: impl std::future::Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, EtcdError> {
    match tokio::time::timeout(limit, call).await {
        Ok(result) => result.map_err(EtcdError::from),
        Err(_) => Err(EtcdError::Timeout(format!(
            "etcd {what} did not complete within {limit:?}"
        ))),
    }
}

fn tls_options(tls: &EtcdTls) -> Result<Option<TlsOptions>, EtcdError> {
    if tls.ca_file.is_none() && tls.cert_file.is_none() && tls.key_file.is_none() {
        return Ok(None);
    }
    let read = |path: &PathBuf| {
        std::fs::read(path)
            .map_err(|error| EtcdError::Config(format!("{}: {error}", path.display())))
    };
    let mut options = TlsOptions::new();
    if let Some(ca) = &tls.ca_file {
        options = options.ca_certificate(Certificate::from_pem(read(ca)?));
    }
    match (&tls.cert_file, &tls.key_file) {
        (Some(cert), Some(key)) => {
            options = options.identity(Identity::from_pem(read(cert)?, read(key)?));
        }
        (None, None) => {}
        _ => {
            return Err(EtcdError::Config(
                "--etcd-certfile and --etcd-keyfile go together".into(),
            ))
        }
    }
    Ok(Some(options))
}

impl Backend for EtcdBackend {
    fn commit(&self, txn: Txn) -> BoxFuture<'_, Result<Committed, BackendError>> {
        Box::pin(self.commit_txn(txn))
    }

    fn load(&self) -> BoxFuture<'_, Result<Loaded, BackendError>> {
        Box::pin(self.load_all())
    }

    fn watch(
        &self,
        from: Revision,
        sink: Arc<dyn EventSink>,
    ) -> BoxFuture<'_, Result<(), BackendError>> {
        Box::pin(async move {
            let index = match self.lock_last_load().take() {
                Some((loaded, index)) if loaded + 1 == from => Some(index),
                _ => None,
            };
            let handle = watch::start(
                self.client.clone(),
                self.keys.clone(),
                from,
                sink,
                index,
                self.request_timeout,
            )
            .await?;
            self.lock_feeders().push(handle);
            Ok(())
        })
    }

    fn current_revision(&self) -> BoxFuture<'_, Result<Revision, BackendError>> {
        Box::pin(async move {
            let revision = self.quorum_revision().await?;
            // A revision that no event under the prefix reaches (a write
            // elsewhere in etcd, the compactor's key) is reached by a sync
            // write, wherever the feed does not get there by itself.
            for feeder in self.lock_feeders().iter() {
                if *feeder.delivered().borrow() < revision {
                    feeder.request_sync(revision);
                }
            }
            Ok(revision)
        })
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, Result<(), BackendError>> {
        Box::pin(async move {
            let client = &self.client;
            let compacted = retrying(self.request_timeout, "compact", Retry::Always, || {
                let mut kv = client.kv_client();
                async move { kv.compact(revision, None).await }
            })
            .await;
            match compacted {
                Ok(_) => Ok(()),
                // Compacting what is already compacted is done.
                Err(EtcdError::Compacted { .. }) => Ok(()),
                Err(error) => Err(error.into()),
            }
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), BackendError>> {
        Box::pin(async move {
            for feeder in self.lock_feeders().drain(..) {
                feeder.stop();
            }
            if let Some(compactor) = self.lock_compactor().take() {
                compactor.abort();
            }
            Ok(())
        })
    }
}

impl Drop for EtcdBackend {
    fn drop(&mut self) {
        for feeder in self.lock_feeders().drain(..) {
            feeder.stop();
        }
        if let Some(compactor) = self.lock_compactor().take() {
            compactor.abort();
        }
    }
}
