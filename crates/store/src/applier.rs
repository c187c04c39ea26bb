//! The thread that hands journaled batches to SQLite.
//!
//! With the [`crate::journal`] in front, a batch is durable once its record
//! is; this thread then writes the batches to SQLite on a connection of its
//! own with `synchronous=NORMAL` (no fsync per commit; still safe from
//! corruption in WAL mode), folding whatever is queued into one transaction.
//! Every [`CHECKPOINT_EVERY`] it copies SQLite's WAL into the database
//! (which fsyncs both), and when that copied everything, the journal
//! segments whose records SQLite now holds on disk are removed. It also
//! prepares the journal's spare segment, so the committer never waits for
//! 16 MiB of zeros.
//!
//! If SQLite refuses a batch, nothing is lost: the journal keeps every
//! segment from then on (none is removed again) and the next start replays
//! them.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::backend::{BackendError, Event};
use crate::journal::{self, Segments};
use crate::sqlite::{checkpoint, io, write_batch};
use crate::Revision;

/// How often SQLite's WAL is copied into the database (and journal
/// segments it now holds are removed).
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// How long the applier lets batches gather between transactions.
const APPLY_EVERY: Duration = Duration::from_millis(20);

/// Batches waiting for SQLite before the committer waits too (memory bound).
const QUEUE: usize = 4096;

enum Message {
    Batch(Revision, Vec<Event>),
    /// Answered once every batch sent before it is in SQLite.
    Flush(mpsc::Sender<Result<(), BackendError>>),
}

pub struct Applier {
    sender: Option<SyncSender<Message>>,
    thread: Option<JoinHandle<()>>,
}

/// What the thread owns.
struct Worker {
    connection: Connection,
    segments: Segments,
    journal_dir: PathBuf,
    segment_bytes: u64,
    /// The revision of the last batch in SQLite (committed, maybe not yet on disk).
    applied: Revision,
    /// Set when SQLite refused a batch: from then on SQLite lags the
    /// journal, which is no longer trimmed.
    failed: Option<String>,
}

impl Applier {
    /// Start the thread on a new connection to the database at `path`,
    /// which holds everything up to `applied`.
    pub fn start(
        path: &Path,
        applied: Revision,
        segments: Segments,
        journal_dir: &Path,
        segment_bytes: u64,
    ) -> Result<Applier, BackendError> {
        let connection = Connection::open(path).map_err(io)?;
        connection
            .execute_batch("PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=16384;")
            .map_err(io)?;
        let mut worker = Worker {
            connection,
            segments,
            journal_dir: journal_dir.to_path_buf(),
            segment_bytes,
            applied,
            failed: None,
        };
        let (sender, receiver) = mpsc::sync_channel(QUEUE);
        let thread = std::thread::Builder::new()
            .name("store-applier".into())
            .spawn(move || {
                crate::thread_panic::logged(
                    "store-applier",
                    "the store's applier panicked: writes go on in the journal, which grows until the next start replays it",
                    || worker.run(receiver),
                )
            })
            .map_err(|error| BackendError::Io(error.to_string()))?;
        Ok(Applier {
            sender: Some(sender),
            thread: Some(thread),
        })
    }

    /// Queue a durable batch for SQLite.
    pub fn send(&self, revision: Revision, events: Vec<Event>) -> Result<(), BackendError> {
        self.sender
            .as_ref()
            .ok_or(BackendError::Closed)?
            .send(Message::Batch(revision, events))
            .map_err(|_| BackendError::Closed)
    }

    /// Wait until every batch sent so far is in SQLite.
    pub fn flush(&self) -> Result<(), BackendError> {
        let (reply, answer) = mpsc::channel();
        self.sender
            .as_ref()
            .ok_or(BackendError::Closed)?
            .send(Message::Flush(reply))
            .map_err(|_| BackendError::Closed)?;
        answer.recv().map_err(|_| BackendError::Closed)?
    }

    /// Apply what is queued and stop the thread.
    pub fn finish(&mut self) -> Result<(), BackendError> {
        let flushed = self.flush();
        self.sender.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        flushed
    }
}

impl Drop for Applier {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// The applier's work is never waited for (the batches are durable
/// already), but it comes in bursts of SQLite inserts that took a core from
/// the request path: with this thread at nice 10 the scheduler runs it in
/// the time the request path leaves. On Linux the nice value is per thread.
/// A process already at a higher nice value keeps it.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        let current = rustix::process::getpriority_process(None).unwrap_or(0);
        if current < APPLIER_NICE {
            if let Err(error) = rustix::process::setpriority_process(None, APPLIER_NICE) {
                tracing::debug!(%error, "lowering the applier's priority");
            }
        }
    }
}

/// The applier thread's nice value.
const APPLIER_NICE: i32 = 10;

impl Worker {
    fn run(&mut self, receiver: Receiver<Message>) {
        lower_priority();
        // The first spare is made at the first checkpoint, not now: 16 MiB
        // of zeros going to disk would slow the start's first writes.
        let mut last_checkpoint = Instant::now();
        loop {
            match receiver.recv_timeout(CHECKPOINT_EVERY) {
                Ok(first) => {
                    let mut batches = Vec::new();
                    let mut flushes = Vec::new();
                    let mut next = Some(first);
                    while let Some(message) = next.take() {
                        match message {
                            Message::Batch(revision, events) => batches.push((revision, events)),
                            Message::Flush(reply) => flushes.push(reply),
                        }
                        if batches.len() < QUEUE {
                            next = receiver.try_recv().ok();
                        }
                    }
                    self.apply(&batches);
                    let had_flush = !flushes.is_empty();
                    for reply in flushes {
                        let _ = reply.send(match &self.failed {
                            Some(error) => Err(BackendError::Io(error.clone())),
                            None => Ok(()),
                        });
                    }
                    if !had_flush {
                        // Let batches gather: one transaction for many
                        // writes each page it touches once.
                        std::thread::sleep(APPLY_EVERY);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            if last_checkpoint.elapsed() >= CHECKPOINT_EVERY {
                last_checkpoint = Instant::now();
                self.checkpoint();
            }
        }
    }

    /// One SQLite transaction for every queued batch.
    fn apply(&mut self, batches: &[(Revision, Vec<Event>)]) {
        if batches.is_empty() || self.failed.is_some() {
            return;
        }
        let result = (|| {
            let transaction = self.connection.transaction().map_err(io)?;
            for (revision, events) in batches {
                write_batch(&transaction, *revision, events)?;
            }
            transaction.commit().map_err(io)
        })();
        match result {
            Ok(()) => {
                if let Some((revision, _)) = batches.last() {
                    self.applied = *revision;
                }
            }
            Err(error) => {
                tracing::error!(%error, "SQLite refused journaled writes; the journal keeps them for the next start");
                self.failed = Some(error.to_string());
            }
        }
    }

    /// Copy the WAL into the database; when all of it went, everything
    /// applied is on disk and the journal's segments up to it can go.
    fn checkpoint(&mut self) {
        if self.failed.is_some() {
            return;
        }
        let applied = self.applied;
        // PASSIVE never waits for readers; a busy moment is retried next time.
        let complete = checkpoint(&self.connection, "PASSIVE").unwrap_or(false);
        if complete {
            if let Err(error) =
                self.segments
                    .recycle_through(applied, &self.journal_dir, self.segment_bytes)
            {
                tracing::warn!(%error, "removing applied journal segments");
            }
        }
        if let Err(error) = journal::prepare_spare(&self.journal_dir, self.segment_bytes) {
            tracing::warn!(%error, "preparing the next journal segment");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nice value of this process's thread named `name`, from /proc.
    #[cfg(target_os = "linux")]
    fn nice_of(name: &str) -> Option<i32> {
        std::fs::read_dir("/proc/self/task").ok()?.find_map(|task| {
            let task = task.ok()?.path();
            let comm = std::fs::read_to_string(task.join("comm")).ok()?;
            if comm.trim() != name {
                return None;
            }
            let stat = std::fs::read_to_string(task.join("stat")).ok()?;
            // Fields after the parenthesised name: state is field 3, nice 19.
            let after = stat.rsplit_once(')')?.1;
            after.split_whitespace().nth(16)?.parse().ok()
        })
    }

    /// The applier runs below the request path's priority (or at the
    /// process's own, when that is lower already); the thread that started
    /// it keeps its own.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_applier_thread_runs_at_a_lower_priority() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.db");
        Connection::open(&path)
            .and_then(|c| c.execute_batch("PRAGMA journal_mode=WAL;"))
            .expect("db");
        let own_before = rustix::process::getpriority_process(None).expect("nice");
        let mut applier =
            Applier::start(&path, 0, Segments::default(), dir.path(), 4096).expect("start");
        applier.flush().expect("flush");
        assert_eq!(nice_of("store-applier"), Some(own_before.max(APPLIER_NICE)));
        assert_eq!(
            rustix::process::getpriority_process(None).expect("nice"),
            own_before
        );
        applier.finish().expect("finish");
    }
}
