//! The bounded queue in front of an audit backend's worker thread, shared
//! by the log (`writer.rs`) and the webhook (`webhook.rs`): kube's
//! `--audit-*-mode` decides what a full queue does.
//! - `batch` (`plugin/pkg/audit/buffered`): the event is dropped and the
//!   log says so ("audit buffer queue blocked").
//! - `blocking` and `blocking-strict`: the request waits for room.
//! - `blocking-strict`'s `RequestReceived` is queued with an
//!   [`Acknowledgement`] the worker answers once the event is stored
//!   ([`Queue::process_acknowledged`], kube's `ProcessEvents` returning
//!   false when it was not).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Mutex;

use super::event::Event;

/// `--audit-log-mode` / `--audit-webhook-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Batch,
    Blocking,
    BlockingStrict,
}

/// Answered with whether an event was stored.
pub type Acknowledgement = tokio::sync::oneshot::Sender<bool>;

/// What a worker receives.
pub enum Message {
    Event(Box<Event>, Option<Acknowledgement>),
    /// Answered once every event queued before it is stored (or given up).
    Flush(SyncSender<()>),
}

/// The queue to one backend's worker thread.
pub struct Queue {
    /// The backend's name in log lines.
    backend: &'static str,
    sender: Mutex<Option<SyncSender<Message>>>,
    mode: Mode,
    dropped: AtomicU64,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Queue {
    /// Starts the worker on a thread named `thread` with a queue of
    /// `buffer` events.
    pub fn start(
        backend: &'static str,
        thread: &str,
        mode: Mode,
        buffer: usize,
        worker: impl FnOnce(Receiver<Message>) + Send + 'static,
    ) -> std::io::Result<Queue> {
        let (sender, receiver) = mpsc::sync_channel(buffer.max(1));
        let thread = std::thread::Builder::new()
            .name(thread.into())
            .spawn(move || worker(receiver))?;
        Ok(Queue {
            backend,
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

    /// `ProcessEvents` for one event, not waiting for it to be stored.
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
                        backend = self.backend,
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
            tracing::error!(
                backend = self.backend,
                "audit backend shut down: an audit event was dropped"
            );
        }
    }

    /// `ProcessEvents` whose outcome the caller waits for (blocking-strict's
    /// `RequestReceived`): the event is queued (waiting for room) and the
    /// answer says whether it was stored; a stopped worker answers false.
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

    /// Waits until every event queued so far is stored or given up.
    pub fn flush(&self) {
        let Some(sender) = self.sender() else {
            return;
        };
        let (done, wait) = mpsc::sync_channel(1);
        if sender.send(Message::Flush(done)).is_ok() {
            let _ = wait.recv();
        }
    }

    /// Stores what is queued and stops the worker.
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

impl Drop for Queue {
    fn drop(&mut self) {
        self.shutdown();
    }
}
