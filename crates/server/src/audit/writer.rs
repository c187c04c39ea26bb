//! The log backend (`plugin/pkg/audit/log/backend.go`) behind kube's
//! `--audit-log-mode`: events go through a bounded queue to one writer
//! thread, which encodes them and writes them to stdout (`-`) or the
//! rotating file, so no request waits for a disk write.
//! - `batch` (`plugin/pkg/audit/buffered`): a full queue drops the event
//!   and says so in the log ("audit buffer queue blocked").
//! - `blocking` and `blocking-strict`: a full queue makes the request wait
//!   for room instead (kube writes in the request itself there); nothing
//!   is dropped.
//! - `blocking-strict`: a `RequestReceived` event is also waited for until
//!   it is written, and a failed write fails the request
//!   ([`Sink::process_acknowledged`], kube's `ProcessEvents` returning false).

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

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Stdout => std::io::stdout().flush(),
            Output::File(file) => file.flush(),
        }
    }

    /// [`Output::flush`] at the end of a batch: a failure is logged.
    fn flush_batch(&mut self) {
        if let Err(error) = self.flush() {
            tracing::error!(%error, "writing audit events");
        }
    }
}

/// Answered with whether an event was written.
pub type Acknowledgement = tokio::sync::oneshot::Sender<bool>;

enum Message {
    Event(Box<Event>, Option<Acknowledgement>),
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
        let message = Message::Event(Box::new(event), None);
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

    /// `ProcessEvents` whose outcome the caller waits for (blocking-strict's
    /// `RequestReceived`): the event is queued (waiting for room) and the
    /// answer says whether it was written; a stopped writer answers false.
    pub fn process_acknowledged(&self, event: Event) -> tokio::sync::oneshot::Receiver<bool> {
        let (acknowledgement, outcome) = tokio::sync::oneshot::channel();
        if let Some(sender) = self.sender() {
            let _ = sender.send(Message::Event(Box::new(event), Some(acknowledgement)));
        }
        outcome
    }

    pub fn mode(&self) -> Mode {
        self.mode
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
        let linger = matches!(first, Message::Event(_, None));
        write_message(first, &mut output, format, &mut answers);
        if linger {
            std::thread::sleep(LINGER);
        }
        while let Ok(message) = receiver.try_recv() {
            write_message(message, &mut output, format, &mut answers);
        }
        output.flush_batch();
        for done in answers {
            let _ = done.send(());
        }
    }
    output.flush_batch();
}

/// Writes an event (into the output's buffer; through to the file when
/// its request waits for the answer), or keeps a `Flush` to be answered
/// once the batch is flushed.
fn write_message(
    message: Message,
    output: &mut Output,
    format: Format,
    answers: &mut Vec<SyncSender<()>>,
) {
    match message {
        Message::Event(event, acknowledgement) => {
            let line = match format {
                Format::Json => event.json_line(),
                Format::Legacy => event.legacy_line(),
            };
            let mut written = output.write(&line);
            if acknowledgement.is_some() && written.is_ok() {
                written = output.flush();
            }
            if let Err(error) = &written {
                tracing::error!(%error, "writing an audit event");
            }
            if let Some(acknowledgement) = acknowledgement {
                let _ = acknowledgement.send(written.is_ok());
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

    /// `blocking-strict`: the writer says whether a waited-for event was
    /// written; `/dev/full` refuses every write (ENOSPC).
    #[tokio::test]
    async fn an_acknowledged_event_reports_whether_it_was_written() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("audit.log");
        let file = RotatingFile::create(&path, Rotation::default()).unwrap();
        let sink = Sink::start(Output::File(file), Format::Json, Mode::BlockingStrict, 10).unwrap();
        let sample = super::super::event::tests::sample;
        assert_eq!(sink.process_acknowledged(sample()).await, Ok(true));
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
        sink.shutdown();
        assert!(!sink.process_acknowledged(sample()).await.unwrap_or(false));

        let full = RotatingFile::create(std::path::Path::new("/dev/full"), Rotation::default());
        if let Ok(full) = full {
            let sink =
                Sink::start(Output::File(full), Format::Json, Mode::BlockingStrict, 10).unwrap();
            assert_eq!(sink.process_acknowledged(sample()).await, Ok(false));
        }
    }
}
