//! The webhook backend (`plugin/pkg/audit/webhook/webhook.go`) and its
//! modes (`server/options/audit.go` `wrapBackend`): events are POSTed as an
//! `audit.k8s.io/v1` `EventList` to the server of
//! `--audit-webhook-config-file` (over connections of its own, with the
//! kubeconfig's client certificate); a failed POST (an error or a non-2xx
//! answer) is retried with `DefaultRetryBackoffWithInitialDelay`
//! (`--audit-webhook-initial-backoff`, ×1.5 per try, 20% jitter, 5 tries).
//! - `batch` (`plugin/pkg/audit/buffered`, the default): events wait in a
//!   queue of `--audit-webhook-batch-buffer-size` (a full one drops the
//!   event: "audit buffer queue blocked"); a batch is sent when it holds
//!   `-batch-max-size` events or when the `-batch-max-wait` ticker ticks,
//!   after the token bucket of `-batch-throttle-qps`/`-burst` gives a
//!   token, each batch in its own task (`AsyncDelegate`), so no request
//!   waits for the webhook.
//! - `blocking` and `blocking-strict`: one event per POST, in order, by one
//!   worker; a request waits for room in its queue (kube's waits for the
//!   POST itself), and blocking-strict's
//!   `RequestReceived` waits for the POST's outcome (`Auditor::process`).
//!
//! The worker is a thread with its own small tokio runtime, so events
//! queued from synchronous code (a response body's end) need no runtime.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::event::Event;
use super::webhook_config::{WebhookTarget, REQUEST_TIMEOUT};
use super::writer::{Acknowledgement, Mode};
use super::AuditError;
use crate::crd::webhook_client::ClientPool;

/// `--audit-webhook-batch-*` (`pluginbuffered.BatchConfig`).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchConfig {
    pub buffer_size: usize,
    pub max_batch_size: usize,
    pub max_batch_wait: Duration,
    /// `None`: no throttling; else (QPS, burst).
    pub throttle: Option<(f32, usize)>,
}

/// `DefaultRetryBackoffWithInitialDelay`: tries and growth.
const RETRY_STEPS: u32 = 5;
const RETRY_FACTOR: f64 = 1.5;
const RETRY_JITTER: f64 = 0.2;

enum Message {
    Event(Box<Event>, Option<Acknowledgement>),
    /// Answered once every event queued before it was sent (or given up).
    Flush(SyncSender<()>),
}

/// The queue to the webhook worker.
pub struct WebhookSink {
    sender: Mutex<Option<SyncSender<Message>>>,
    mode: Mode,
    dropped: AtomicU64,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl WebhookSink {
    pub fn start(
        target: WebhookTarget,
        mode: Mode,
        batch: BatchConfig,
        initial_backoff: Duration,
    ) -> Result<WebhookSink, AuditError> {
        let (sender, receiver) = mpsc::sync_channel(batch.buffer_size.max(1));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("audit-webhook-send")
            .enable_all()
            .build()
            .map_err(|error| AuditError::Webhook(format!("starting the audit webhook: {error}")))?;
        // Its own connections, with the kubeconfig's client certificate.
        let pool = match &target.client_identity {
            Some((chain, key)) => ClientPool::with_client_identity(chain.clone(), key.clone()),
            None => ClientPool::default(),
        };
        let sender_side = Sender {
            target: Arc::new(target),
            pool: Arc::new(pool),
            initial_backoff,
        };
        let thread = std::thread::Builder::new()
            .name("audit-webhook".into())
            .spawn(move || match mode {
                Mode::Batch => send_batches(&runtime, receiver, &sender_side, &batch),
                Mode::Blocking | Mode::BlockingStrict => {
                    send_one_by_one(&runtime, receiver, &sender_side)
                }
            })
            .map_err(|error| AuditError::Webhook(format!("starting the audit webhook: {error}")))?;
        Ok(WebhookSink {
            sender: Mutex::new(Some(sender)),
            mode,
            dropped: AtomicU64::new(0),
            thread: Mutex::new(Some(thread)),
        })
    }

    fn sender(&self) -> Option<SyncSender<Message>> {
        self.sender.lock().ok().and_then(|sender| sender.clone())
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// `ProcessEvents` for one event, not waiting for the webhook.
    pub fn process(&self, event: Event) {
        let Some(sender) = self.sender() else {
            return;
        };
        let message = Message::Event(Box::new(event), None);
        let queued = match self.mode {
            Mode::Batch => match sender.try_send(message) {
                Ok(()) => true,
                Err(TrySendError::Full(_)) => {
                    let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                    tracing::error!(
                        dropped,
                        "audit buffer queue blocked: an audit event was dropped"
                    );
                    return;
                }
                Err(TrySendError::Disconnected(_)) => false,
            },
            Mode::Blocking | Mode::BlockingStrict => sender.send(message).is_ok(),
        };
        if !queued {
            tracing::error!("audit webhook backend shut down: an audit event was dropped");
        }
    }

    /// `ProcessEvents` whose outcome the caller waits for (blocking-strict's
    /// `RequestReceived`): whether the webhook took the event.
    pub fn process_acknowledged(&self, event: Event) -> tokio::sync::oneshot::Receiver<bool> {
        let (acknowledgement, outcome) = tokio::sync::oneshot::channel();
        if let Some(sender) = self.sender() {
            let _ = sender.send(Message::Event(Box::new(event), Some(acknowledgement)));
        }
        outcome
    }

    /// Events dropped because the queue was full (batch mode).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Waits until every event queued so far was sent or given up.
    pub fn flush(&self) {
        let Some(sender) = self.sender() else {
            return;
        };
        let (done, wait) = mpsc::sync_channel(1);
        if sender.send(Message::Flush(done)).is_ok() {
            let _ = wait.recv();
        }
    }

    /// Sends what is queued and stops the worker.
    pub fn shutdown(&self) {
        if let Ok(mut sender) = self.sender.lock() {
            sender.take();
        }
        let thread = self.thread.lock().ok().and_then(|mut thread| thread.take());
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Drop for WebhookSink {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// What a POST needs.
#[derive(Clone)]
struct Sender {
    target: Arc<WebhookTarget>,
    pool: Arc<ClientPool>,
    initial_backoff: Duration,
}

impl Sender {
    /// `processEvents`: one `EventList`, retried on every error
    /// (`retryOnError`) with kube's backoff; false once the tries are spent.
    async fn send(&self, events: Vec<Event>) -> bool {
        let body = event_list(&events);
        let mut delay = self.initial_backoff.as_secs_f64();
        for attempt in 1..=RETRY_STEPS {
            let outcome = self
                .pool
                .post_json(
                    &self.target.resolved,
                    &self.target.ca_bundle,
                    body.clone(),
                    REQUEST_TIMEOUT,
                )
                .await;
            let error = match outcome {
                Ok(status) if (200..300).contains(&status) => return true,
                Ok(status) => format!(
                    "the server responded with the status code {status} but did not return more information"
                ),
                Err(error) => error,
            };
            if attempt == RETRY_STEPS {
                // `audit.HandlePluginError`.
                tracing::error!(%error, events = events.len(), "Error in audit plugin 'webhook' affecting events");
                return false;
            }
            tracing::debug!(%error, attempt, "audit webhook failed, retrying");
            let jitter = f64::from(uuid::Uuid::new_v4().as_bytes()[0]) / 255.0 * RETRY_JITTER;
            tokio::time::sleep(Duration::from_secs_f64(delay * (1.0 + jitter))).await;
            delay *= RETRY_FACTOR;
        }
        false
    }
}

/// The `EventList` as the rest client's JSON serializer writes it: the
/// items without their own `kind`/`apiVersion`, HTML-safe escapes, a
/// trailing newline.
pub fn event_list(events: &[Event]) -> Bytes {
    let mut text = String::from(
        r#"{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":["#,
    );
    for (index, event) in events.iter().enumerate() {
        if index > 0 {
            text.push(',');
        }
        text.push_str(&event.item_json());
    }
    text.push_str("]}");
    let mut body = crate::versions::html_escape(&text).into_bytes();
    body.push(b'\n');
    Bytes::from(body)
}

/// blocking and blocking-strict: each event POSTed in order before the next.
fn send_one_by_one(
    runtime: &tokio::runtime::Runtime,
    receiver: Receiver<Message>,
    sender: &Sender,
) {
    while let Ok(message) = receiver.recv() {
        match message {
            Message::Event(event, acknowledgement) => {
                let sent = runtime.block_on(sender.send(vec![*event]));
                if let Some(acknowledgement) = acknowledgement {
                    let _ = acknowledgement.send(sent);
                }
            }
            Message::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// `bufferedBackend.processIncomingEvents`: batches of at most
/// `max_batch_size`, cut by a ticker of `max_batch_wait`, each sent in its
/// own task after the throttle's token.
fn send_batches(
    runtime: &tokio::runtime::Runtime,
    receiver: Receiver<Message>,
    sender: &Sender,
    config: &BatchConfig,
) {
    let mut throttle = config
        .throttle
        .map(|(qps, burst)| TokenBucket::new(qps, burst));
    let mut in_flight: Vec<tokio::task::JoinHandle<bool>> = Vec::new();
    let tick = config.max_batch_wait.max(Duration::from_millis(1));
    let mut next_tick = Instant::now() + tick;
    let mut batch: Vec<Event> = Vec::new();
    let mut open = true;
    while open {
        let mut flush = None;
        // `collectEvents`.
        while batch.len() < config.max_batch_size.max(1) {
            let now = Instant::now();
            if now >= next_tick {
                next_tick += tick * (((now - next_tick).as_nanos() / tick.as_nanos()) as u32 + 1);
                break;
            }
            match receiver.recv_timeout(next_tick - now) {
                Ok(Message::Event(event, acknowledgement)) => {
                    batch.push(*event);
                    // Batches never say how they went to a request.
                    if let Some(acknowledgement) = acknowledgement {
                        let _ = acknowledgement.send(true);
                    }
                }
                Ok(Message::Flush(done)) => {
                    flush = Some(done);
                    break;
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        in_flight.retain(|task| !task.is_finished());
        if !batch.is_empty() {
            if let Some(throttle) = throttle.as_mut() {
                throttle.accept();
            }
            let events = std::mem::take(&mut batch);
            let sender = sender.clone();
            in_flight.push(runtime.spawn(async move { sender.send(events).await }));
        }
        if flush.is_some() || !open {
            for task in in_flight.drain(..) {
                let _ = runtime.block_on(task);
            }
        }
        if let Some(done) = flush {
            let _ = done.send(());
        }
    }
}

/// client-go's token bucket rate limiter (`NewTokenBucketRateLimiter`):
/// `burst` tokens, refilled at `qps`; `accept` waits for one.
struct TokenBucket {
    qps: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl TokenBucket {
    fn new(qps: f32, burst: usize) -> TokenBucket {
        TokenBucket {
            qps: f64::from(qps).max(f64::MIN_POSITIVE),
            burst: burst.max(1) as f64,
            tokens: burst.max(1) as f64,
            at: Instant::now(),
        }
    }

    /// The wait before the next token, taking it.
    fn reserve(&mut self, now: Instant) -> Duration {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.at = now;
        self.tokens = (self.tokens + elapsed * self.qps).min(self.burst) - 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / self.qps)
        }
    }

    fn accept(&mut self) {
        let wait = self.reserve(Instant::now());
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_bucket_lets_a_burst_through_then_paces() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(10.0, 3);
        for _ in 0..3 {
            assert_eq!(bucket.reserve(start), Duration::ZERO);
        }
        assert_eq!(bucket.reserve(start), Duration::from_millis(100));
        // A second later the bucket is full again (never beyond its burst).
        let later = start + Duration::from_secs(1);
        for _ in 0..3 {
            assert_eq!(bucket.reserve(later), Duration::ZERO);
        }
        assert!(bucket.reserve(later) > Duration::ZERO);
    }

    #[test]
    fn an_event_list_is_kubes_json() {
        let mut first = super::super::event::tests::sample();
        first.audit_id = "a<b".into();
        let second = super::super::event::tests::sample();
        let body = event_list(&[first, second]);
        let text = std::str::from_utf8(&body).unwrap();
        assert!(text.starts_with(
            r#"{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[{"level":"Metadata","auditID":"a\u003cb","#
        ));
        assert!(text.ends_with("]}\n"));
        let list: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(list["items"].as_array().unwrap().len(), 2);
        assert!(list["items"][1].get("kind").is_none());
    }
}
