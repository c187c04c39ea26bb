//! The log backend (`plugin/pkg/audit/log/backend.go`) behind kube's
//! `--audit-log-mode`: events go through a bounded queue to one writer
//! thread, which encodes them and writes them to stdout (`-`) or the
//! rotating file, so no request waits for a disk write.
//! - `batch` (`plugin/pkg/audit/buffered`): a full queue drops the event
//!   and says so in the log ("audit buffer queue blocked").
//! - `blocking` and `blocking-strict`: a full queue makes the request wait
//!   for room instead (kube writes in the request itself there); nothing
//!   is dropped.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Mutex;
use std::time::Duration;

use super::event::Event;
use super::rotation::RotatingFile;
use super::AuditError;

/// `--audit-log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Legacy,
}

/// `--audit-log-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Batch,
    Blocking,
    BlockingStrict,
}

/// Where the lines go.
pub enum Output {
    Stdout,
    File(RotatingFile),
}

impl Output {
    fn write(&mut self, line: &[u8]) -> std::io::Result<()> {
        match self {
            Output::Stdout => std::io::stdout().lock().write_all(line),
            Output::File(file) => file.write(line),
        }
    }

    fn flush(&mut self) {
        let flushed = match self {
            Output::Stdout => std::io::stdout().flush(),
            Output::File(file) => file.flush(),
        };
        if let Err(error) = flushed {
            tracing::error!(%error, "writing audit events");
        }
    }
}

enum Message {
    Event(Box<Event>),
    /// Answered once every event queued before it is written.
    Flush(SyncSender<()>),
}

/// The queue to the writer thread.
pub struct Sink {
    sender: Mutex<Option<SyncSender<Message>>>,
    mode: Mode,
    dropped: AtomicU64,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Sink {
    /// Starts the writer thread; `buffer` is `--audit-log-batch-buffer-size`.
    pub fn start(
        output: Output,
        format: Format,
        mode: Mode,
        buffer: usize,
    ) -> Result<Sink, AuditError> {
        let (sender, receiver) = mpsc::sync_channel(buffer.max(1));
        let thread = std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || write_events(receiver, output, format))
            .map_err(|error| AuditError::Log(format!("starting the audit writer: {error}")))?;
        Ok(Sink {
            sender: Mutex::new(Some(sender)),
            mode,
            dropped: AtomicU64::new(0),
            thread: Mutex::new(Some(thread)),
        })
    }

    fn sender(&self) -> Option<SyncSender<Message>> {
        self.sender.lock().ok().and_then(|sender| sender.clone())
    }

    /// `ProcessEvents` for one event.
    pub fn process(&self, event: Event) {
        let Some(sender) = self.sender() else {
            return;
        };
        let message = Message::Event(Box::new(event));
        match self.mode {
            Mode::Batch => match sender.try_send(message) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                    tracing::error!(
                        dropped,
                        "audit buffer queue blocked: an audit event was dropped"
                    );
                }
                Err(TrySendError::Disconnected(_)) => {
                    tracing::error!("audit backend shut down: an audit event was dropped");
                }
            },
            Mode::Blocking | Mode::BlockingStrict => {
                if sender.send(message).is_err() {
                    tracing::error!("audit backend shut down: an audit event was dropped");
                }
            }
        }
    }

    /// Events dropped because the queue was full (batch mode).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Waits until every event queued so far is written.
    pub fn flush(&self) {
        let Some(sender) = self.sender() else {
            return;
        };
        let (done, wait) = mpsc::sync_channel(1);
        if sender.send(Message::Flush(done)).is_ok() {
            let _ = wait.recv();
        }
    }

    /// Writes what is queued and stops the writer thread.
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

impl Drop for Sink {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// How long the writer lets events gather after the first one wakes it.
/// Waking this thread per event cost a context switch on both sides of the
/// queue, which `perf` showed costing a create more than encoding its two
/// events; gathered, a busy server wakes it about once per `LINGER` and
/// writes each batch with one system call.
const LINGER: Duration = Duration::from_millis(1);

/// The writer thread: events are written in batches, each flushed to the
/// file or stdout before the next wait, and before a `Flush` is answered.
fn write_events(receiver: Receiver<Message>, mut output: Output, format: Format) {
    while let Ok(first) = receiver.recv() {
        let mut answers = Vec::new();
        let linger = matches!(first, Message::Event(_));
        write_message(first, &mut output, format, &mut answers);
        if linger {
            std::thread::sleep(LINGER);
        }
        while let Ok(message) = receiver.try_recv() {
            write_message(message, &mut output, format, &mut answers);
        }
        output.flush();
        for done in answers {
            let _ = done.send(());
        }
    }
    output.flush();
}

/// Writes an event (into the output's buffer), or keeps a `Flush` to be
/// answered once the batch is flushed.
fn write_message(
    message: Message,
    output: &mut Output,
    format: Format,
    answers: &mut Vec<SyncSender<()>>,
) {
    match message {
        Message::Event(event) => {
            let line = match format {
                Format::Json => event.json_line(),
                Format::Legacy => event.legacy_line(),
            };
            if let Err(error) = output.write(&line) {
                tracing::error!(%error, "writing an audit event");
            }
        }
        Message::Flush(done) => answers.push(done),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::rotation::Rotation;

    #[test]
    fn queued_events_are_written_in_order_before_a_flush_returns() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("audit.log");
        let file = RotatingFile::create(&path, Rotation::default()).unwrap();
        let sink = Sink::start(Output::File(file), Format::Json, Mode::Batch, 1000).unwrap();
        for index in 0..50 {
            let mut event = super::super::event::tests::sample();
            event.audit_id = format!("id-{index}");
            sink.process(event);
        }
        sink.flush();
        let text = std::fs::read_to_string(&path).unwrap();
        let ids: Vec<String> = text
            .lines()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                value["auditID"].as_str().unwrap().to_string()
            })
            .collect();
        let expected: Vec<String> = (0..50).map(|index| format!("id-{index}")).collect();
        assert_eq!(ids, expected);
        assert_eq!(sink.dropped(), 0);
        sink.shutdown();
        // After shutdown nothing more is queued (and nothing panics).
        sink.process(super::super::event::tests::sample());
    }
}
