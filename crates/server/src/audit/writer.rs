//! The log backend (`plugin/pkg/audit/log/backend.go`) behind kube's
//! `--audit-log-mode` (what a full queue does: `queue.rs`): events go
//! through a bounded queue to one writer thread, which encodes them and
//! writes them to stdout (`-`) or the rotating file in batches, so no
//! request waits for a disk write (kube writes in the request itself in
//! `blocking` mode); `blocking-strict`'s `RequestReceived` is written
//! through before it is acknowledged.

use std::io::Write;
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::Duration;

use super::queue::{Message, Mode, Queue};
use super::rotation::RotatingFile;
use super::AuditError;

/// `--audit-log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Legacy,
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

/// Starts the writer thread behind its queue; `buffer` is
/// `--audit-log-batch-buffer-size`.
pub fn start(
    output: Output,
    format: Format,
    mode: Mode,
    buffer: usize,
) -> Result<Queue, AuditError> {
    Queue::start("log", "audit-log", mode, buffer, move |receiver| {
        write_events(receiver, output, format)
    })
    .map_err(|error| AuditError::Log(format!("starting the audit writer: {error}")))
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
        let sink = start(Output::File(file), Format::Json, Mode::Batch, 1000).unwrap();
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
        let sink = start(Output::File(file), Format::Json, Mode::BlockingStrict, 10).unwrap();
        let sample = super::super::event::tests::sample;
        assert_eq!(sink.process_acknowledged(sample()).await, Ok(true));
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
        sink.shutdown();
        assert!(!sink.process_acknowledged(sample()).await.unwrap_or(false));

        let full = RotatingFile::create(std::path::Path::new("/dev/full"), Rotation::default());
        if let Ok(full) = full {
            let sink = start(Output::File(full), Format::Json, Mode::BlockingStrict, 10).unwrap();
            assert_eq!(sink.process_acknowledged(sample()).await, Ok(false));
        }
    }
}
