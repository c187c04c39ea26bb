//! The embedded default: a [`Disk`] in one SQLite file (WAL mode).
//!
//! One row per live key, plus the current revision in a meta table. The key
//! table is an ordinary rowid table with a unique index on the key: an
//! object (about 1.4 KiB for a 1 KiB ConfigMap) does not fit in a page of a
//! `WITHOUT ROWID` table (at most ~1 KiB of payload per cell with 4 KiB
//! pages), so each row spilled into an overflow page: 2.5x the CPU per
//! insert and twice the file (docs/performance-history.md, "store
//! layout"). Data dirs created before keep their `WITHOUT ROWID` table; the
//! statements are the same for both. Values are stored as kube-apiserver
//! stores them in etcd: the object without `metadata.resourceVersion`,
//! which is the row's mod revision.
//!
//! With fsync on, each batch from the committer is one record in the
//! [`Journal`] and one `fdatasync` (group commit: one per batch however many
//! writers it carries); the [`Applier`] writes the batches to SQLite
//! afterwards, and opening replays what it had not. With fsync off, the
//! committer writes each batch as one SQLite transaction itself.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use crate::applier::{Applier, CHECKPOINT_EVERY};
use crate::backend::{BackendError, Event, EventKind, KeyValue, Loaded};
use crate::journal::{self, Journal, Record};
use crate::local::{Disk, KeyRevisions};
use crate::Revision;

#[derive(Debug, Clone, Copy)]
pub struct SqliteOptions {
    /// fsync every batch (`synchronous=FULL`); off for throwaway test servers.
    pub fsync: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions { fsync: true }
    }
}

pub struct SqliteDisk {
    /// The committer's connection: every read, and the writes of direct mode.
    connection: Connection,
    durability: Durability,
}

/// How a batch becomes durable.
enum Durability {
    /// fsync off: the committer writes SQLite itself (`synchronous=OFF`);
    /// the checkpointer copies the WAL in the background.
    Direct(Option<Checkpointer>),
    /// fsync on: one journal record and `fdatasync` per batch; the applier
    /// writes SQLite afterwards (`journal.rs`, `applier.rs`).
    Journaled { journal: Journal, applier: Applier },
}

/// Checkpoints on a connection and thread of their own, so that copying WAL
/// frames into the database (and its fsync) no longer stalls the committer
/// every 1,000 pages; the committer's own automatic checkpoint stays as a
/// backstop at a larger WAL.
struct Checkpointer {
    stop: std::sync::mpsc::Sender<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    fn start(path: &Path, synchronous: &str) -> Result<Self, BackendError> {
        let connection = Connection::open(path).map_err(io)?;
        connection
            .execute_batch(&format!("PRAGMA synchronous={synchronous};"))
            .map_err(io)?;
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("store-checkpoint".into())
            .spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(CHECKPOINT_EVERY)
                {
                    // PASSIVE never waits for the writer; a busy moment is
                    // simply retried on the next tick.
                    let _ = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            })
            .map_err(|error| BackendError::Io(error.to_string()))?;
        Ok(Checkpointer {
            stop,
            thread: Some(thread),
        })
    }

    fn finish(&mut self) {
        let _ = self.stop.send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for SqliteDisk {
    fn drop(&mut self) {
        match &mut self.durability {
            Durability::Direct(checkpointer) => {
                if let Some(mut checkpointer) = checkpointer.take() {
                    checkpointer.finish();
                }
            }
            Durability::Journaled { applier, .. } => {
                let _ = applier.finish();
            }
        }
    }
}

pub(crate) fn io(error: rusqlite::Error) -> BackendError {
    BackendError::Io(error.to_string())
}

/// The journal's directory beside the database file `path`.
fn journal_dir(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".journal");
    path.with_file_name(name)
}

impl SqliteDisk {
    pub fn open(path: &Path, options: SqliteOptions) -> Result<Self, BackendError> {
        Self::open_with_segments(path, options, journal::SEGMENT_BYTES)
    }

    fn open_with_segments(
        path: &Path,
        options: SqliteOptions,
        segment_bytes: u64,
    ) -> Result<Self, BackendError> {
        let connection = Connection::open(path).map_err(io)?;
        // FULL while replaying the journal even when fsync is off: the
        // replayed rows must be on disk before the journal goes.
        let synchronous = if options.fsync { "FULL" } else { "OFF" };
        connection
            .execute_batch(&format!(
                "PRAGMA journal_mode=WAL;
                 PRAGMA synchronous={synchronous};
                 PRAGMA foreign_keys=OFF;
                 PRAGMA wal_autocheckpoint=16384;
                 CREATE TABLE IF NOT EXISTS kv (
                     key TEXT PRIMARY KEY NOT NULL,
                     value BLOB NOT NULL,
                     create_revision INTEGER NOT NULL,
                     mod_revision INTEGER NOT NULL
                 );
                 CREATE TABLE IF NOT EXISTS meta (
                     name TEXT PRIMARY KEY NOT NULL,
                     value INTEGER NOT NULL
                 ) WITHOUT ROWID;"
            ))
            .map_err(io)?;
        let dir = journal_dir(path);
        let (mut journal, records) = Journal::open(&dir, segment_bytes)?;
        let mut disk = SqliteDisk {
            connection,
            durability: Durability::Direct(None),
        };
        // The journal goes only once SQLite holds its records durably; an
        // incomplete checkpoint keeps it for the next start.
        if disk.replay(&records, synchronous)? {
            journal.clear()?;
        }
        disk.durability = if options.fsync {
            let applier = Applier::start(
                path,
                disk.revision()?,
                journal.segments(),
                &dir,
                segment_bytes,
            )?;
            Durability::Journaled { journal, applier }
        } else {
            Durability::Direct(Some(Checkpointer::start(path, synchronous)?))
        };
        Ok(disk)
    }

    /// Write the journal's records SQLite does not hold yet (a previous
    /// run stopped before its applier caught up), then make everything the
    /// journal holds durable in SQLite: true when the journal may go.
    ///
    /// Records SQLite already has may still be only in its WAL as the
    /// applier left it (`synchronous=NORMAL`: written, not fsynced), so a
    /// non-empty journal is always followed by a FULL `TRUNCATE` checkpoint,
    /// even when nothing is missing: dropping the journal on the word of an
    /// unsynced WAL could lose acknowledged writes to a power loss.
    fn replay(&mut self, records: &[Record], synchronous: &str) -> Result<bool, BackendError> {
        if records.is_empty() {
            return Ok(true);
        }
        let revision = self.revision()?;
        let missing: Vec<&Record> = records.iter().filter(|r| r.revision > revision).collect();
        self.connection
            .execute_batch("PRAGMA synchronous=FULL;")
            .map_err(io)?;
        if !missing.is_empty() {
            tracing::info!(
                records = missing.len(),
                from = revision,
                "replaying the store's journal into SQLite"
            );
            let transaction = self.connection.transaction().map_err(io)?;
            for record in missing {
                write_batch(&transaction, record.revision, &record.events)?;
            }
            transaction.commit().map_err(io)?;
        }
        let complete = checkpoint(&self.connection, "TRUNCATE")?;
        self.connection
            .execute_batch(&format!("PRAGMA synchronous={synchronous};"))
            .map_err(io)?;
        if !complete {
            tracing::warn!("the store's checkpoint at start did not complete; the journal stays for the next start");
        }
        Ok(complete)
    }

    /// Reads must see every batch: wait for the applier.
    fn settle(&self) -> Result<(), BackendError> {
        match &self.durability {
            Durability::Direct(_) => Ok(()),
            Durability::Journaled { applier, .. } => applier.flush(),
        }
    }
}

impl SqliteDisk {
    fn revision(&self) -> Result<Revision, BackendError> {
        self.settle()?;
        Ok(self
            .connection
            .query_row(
                "SELECT value FROM meta WHERE name = 'revision'",
                [],
                |row| row.get(0),
            )
            .optional()
            .map_err(io)?
            .unwrap_or(0))
    }
}

impl Disk for SqliteDisk {
    fn load_keys(&mut self) -> Result<(Revision, Vec<KeyRevisions>), BackendError> {
        let revision = self.revision()?;
        let mut statement = self
            .connection
            .prepare("SELECT key, create_revision, mod_revision FROM kv")
            .map_err(io)?;
        let rows = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .map_err(io)?;
        let keys = rows.collect::<Result<Vec<_>, _>>().map_err(io)?;
        Ok((revision, keys))
    }

    fn load_each(&mut self, each: &mut dyn FnMut(KeyValue)) -> Result<Revision, BackendError> {
        let revision = self.revision()?;
        let mut statement = self
            .connection
            // In table order (the caller does not need key order; see `load`).
            .prepare("SELECT key, value, create_revision, mod_revision FROM kv")
            .map_err(io)?;
        let mut rows = statement.query([]).map_err(io)?;
        while let Some(row) = rows.next().map_err(io)? {
            each(KeyValue {
                key: row.get(0).map_err(io)?,
                value: bytes::Bytes::from(row.get::<_, Vec<u8>>(1).map_err(io)?),
                create_revision: row.get(2).map_err(io)?,
                mod_revision: row.get(3).map_err(io)?,
            });
        }
        Ok(revision)
    }

    fn load(&mut self) -> Result<Loaded, BackendError> {
        let revision = self.revision()?;
        let mut statement = self
            .connection
            // In table order, sorted below: walking the key index instead reads
            // the rows in random order (measured 17x slower for 100,000 rows).
            .prepare("SELECT key, value, create_revision, mod_revision FROM kv")
            .map_err(io)?;
        let rows = statement
            .query_map([], |row| {
                Ok(KeyValue {
                    key: row.get(0)?,
                    value: bytes::Bytes::from(row.get::<_, Vec<u8>>(1)?),
                    create_revision: row.get(2)?,
                    mod_revision: row.get(3)?,
                })
            })
            .map_err(io)?;
        let mut kvs = rows.collect::<Result<Vec<_>, _>>().map_err(io)?;
        kvs.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        Ok(Loaded { revision, kvs })
    }

    fn write(&mut self, revision: Revision, events: &[Event]) -> Result<(), BackendError> {
        match &mut self.durability {
            Durability::Direct(_) => {
                let transaction = self.connection.transaction().map_err(io)?;
                write_batch(&transaction, revision, events)?;
                transaction.commit().map_err(io)
            }
            Durability::Journaled { journal, applier } => {
                journal.append(revision, events)?;
                // Durable from here: an applier that is gone must not turn
                // the batch into a failure (the next start replays it).
                if let Err(error) = applier.send(revision, events.to_vec()) {
                    tracing::error!(%error, "the store's applier has stopped; the journal keeps the writes for the next start");
                }
                Ok(())
            }
        }
    }

    fn close(&mut self) -> Result<(), BackendError> {
        match &mut self.durability {
            Durability::Direct(checkpointer) => {
                if let Some(mut checkpointer) = checkpointer.take() {
                    checkpointer.finish();
                }
                self.connection
                    .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
                    .map_err(io)
            }
            Durability::Journaled { journal, applier } => {
                applier.finish()?;
                // A complete checkpoint syncs the database (FULL on this
                // connection): every journaled record is then on disk. An
                // incomplete one keeps the journal for the next start.
                if checkpoint(&self.connection, "TRUNCATE")? {
                    journal.clear()
                } else {
                    tracing::info!(
                        "the database is busy at close; the journal stays for the next start"
                    );
                    Ok(())
                }
            }
        }
    }
}

/// Run `PRAGMA wal_checkpoint(mode)`; true when it copied the whole WAL
/// into the database (nothing busy, every frame copied).
pub(crate) fn checkpoint(connection: &Connection, mode: &str) -> Result<bool, BackendError> {
    let (busy, log, copied) = connection
        .query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, i64>(2)?,
            ))
        })
        .map_err(io)?;
    Ok(busy == 0 && log == copied)
}

/// One batch's rows and the revision after it, inside the caller's transaction.
pub(crate) fn write_batch(
    connection: &Connection,
    revision: Revision,
    events: &[Event],
) -> Result<(), BackendError> {
    let mut put = connection
        .prepare_cached(
            "INSERT INTO kv (key, value, create_revision, mod_revision) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value,
                 create_revision = excluded.create_revision, mod_revision = excluded.mod_revision",
        )
        .map_err(io)?;
    let mut delete = connection
        .prepare_cached("DELETE FROM kv WHERE key = ?1")
        .map_err(io)?;
    for event in events {
        let kv = &event.kv;
        match event.kind {
            EventKind::Put => {
                put.execute(params![
                    kv.key,
                    &kv.value[..],
                    kv.create_revision,
                    kv.mod_revision
                ])
                .map_err(io)?;
            }
            EventKind::Delete => {
                delete.execute(params![kv.key]).map_err(io)?;
            }
        }
    }
    connection
        .prepare_cached(
            "INSERT INTO meta (name, value) VALUES ('revision', ?1)
             ON CONFLICT(name) DO UPDATE SET value = excluded.value",
        )
        .map_err(io)?
        .execute(params![revision])
        .map_err(io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::backend::put_at as put;

    fn keys(disk: &mut SqliteDisk) -> Vec<(String, String)> {
        let loaded = disk.load().expect("load");
        loaded
            .kvs
            .into_iter()
            .map(|kv| (kv.key, String::from_utf8_lossy(&kv.value).into_owned()))
            .collect()
    }

    /// The checkpointer thread copies committed WAL frames into the
    /// database while the committer's connection stays open and idle.
    #[test]
    fn checkpoints_run_in_the_background() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.db");
        let mut disk = SqliteDisk::open(&path, SqliteOptions { fsync: false }).expect("open");
        let empty = std::fs::metadata(&path).expect("db").len();
        let big = "x".repeat(2000);
        for batch in 0..20 {
            let events: Vec<Event> = (0..10)
                .map(|i| put(&format!("/k{batch}-{i}"), &big, batch * 10 + i + 1))
                .collect();
            disk.write(batch * 10 + 10, &events).expect("write");
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::fs::metadata(&path).expect("db").len() <= empty + 200 * 2000 {
            assert!(
                std::time::Instant::now() < deadline,
                "the WAL was never copied into the database"
            );
            std::thread::sleep(CHECKPOINT_EVERY);
        }
        assert_eq!(keys(&mut disk).len(), 200);
        disk.close().expect("close");
    }

    fn journal_segments(path: &Path) -> usize {
        std::fs::read_dir(journal_dir(path))
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|name| name.ends_with(".seg") && name != "spare.seg")
                    .count()
            })
            .unwrap_or(0)
    }

    /// A crash after a batch is journaled and before the applier wrote it
    /// to SQLite: the next open replays it, durably, and drops the journal.
    #[test]
    fn journaled_batches_sqlite_missed_are_replayed_at_open() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.db");
        let mut disk = SqliteDisk::open(&path, SqliteOptions { fsync: true }).expect("open");
        disk.write(1, &[put("/a", "a1", 1)]).expect("write");
        disk.close().expect("close");
        drop(disk);
        // What the committer journaled and acknowledged, as a crash leaves it.
        let (mut journal, _) = Journal::open(&journal_dir(&path), 4096).expect("journal");
        journal.append(2, &[put("/b", "b2", 2)]).expect("append");
        journal
            .append(3, &[put("/a", "a3", 3), put("/c", "c3", 3)])
            .expect("append");
        drop(journal);
        for fsync in [false, true] {
            let mut disk = SqliteDisk::open(&path, SqliteOptions { fsync }).expect("reopen");
            assert_eq!(
                keys(&mut disk),
                vec![
                    ("/a".to_string(), "a3".to_string()),
                    ("/b".into(), "b2".into()),
                    ("/c".into(), "c3".into())
                ],
                "fsync {fsync}"
            );
            assert_eq!(disk.revision().expect("revision"), 3);
            assert_eq!(journal_segments(&path), 0, "replayed segments are dropped");
            disk.close().expect("close");
        }
    }

    /// A crash after the applier wrote the journal's batches into SQLite's
    /// WAL without syncing it: nothing is missing, but the journal is the
    /// only durable copy, so opening checkpoints (FULL, TRUNCATE) before it
    /// drops the journal.
    #[test]
    fn a_journal_sqlite_already_holds_is_dropped_only_after_a_checkpoint() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.db");
        SqliteDisk::open(&path, SqliteOptions { fsync: false })
            .expect("open")
            .close()
            .expect("close");
        // The applier's connection: WAL, no fsync per commit, never closed.
        let mut applier = Connection::open(&path).expect("connection");
        applier
            .execute_batch(
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0;",
            )
            .expect("pragmas");
        let transaction = applier.transaction().expect("transaction");
        write_batch(&transaction, 1, &[put("/a", "a1", 1)]).expect("batch");
        write_batch(&transaction, 2, &[put("/b", "b2", 2)]).expect("batch");
        transaction.commit().expect("commit");
        std::mem::forget(applier);
        let wal = dir.path().join("store.db-wal");
        assert!(std::fs::metadata(&wal).expect("wal").len() > 0);
        let (mut journal, _) = Journal::open(&journal_dir(&path), 4096).expect("journal");
        journal.append(1, &[put("/a", "a1", 1)]).expect("append");
        journal.append(2, &[put("/b", "b2", 2)]).expect("append");
        drop(journal);
        let mut disk = SqliteDisk::open(&path, SqliteOptions { fsync: true }).expect("reopen");
        assert_eq!(
            std::fs::metadata(&wal).expect("wal").len(),
            0,
            "the WAL was checkpointed into the database before the journal went"
        );
        assert_eq!(journal_segments(&path), 0);
        assert_eq!(keys(&mut disk).len(), 2);
        disk.close().expect("close");
    }

    /// A batch in the journal is durable even when the applier has
    /// stopped: the write succeeds and the next open replays it.
    #[test]
    fn a_journaled_write_succeeds_without_the_applier() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.db");
        let mut disk = SqliteDisk::open(&path, SqliteOptions { fsync: true }).expect("open");
        disk.write(1, &[put("/a", "a1", 1)]).expect("write");
        if let Durability::Journaled { applier, .. } = &mut disk.durability {
            applier.finish().expect("finish");
        }
        disk.write(2, &[put("/b", "b2", 2)])
            .expect("durable in the journal");
        drop(disk);
        let mut disk = SqliteDisk::open(&path, SqliteOptions { fsync: true }).expect("reopen");
        assert_eq!(
            keys(&mut disk),
            vec![
                ("/a".to_string(), "a1".to_string()),
                ("/b".into(), "b2".into())
            ]
        );
        disk.close().expect("close");
    }

    /// While writes go on, segments SQLite holds on disk are removed: the
    /// journal does not grow with the data.
    #[test]
    fn applied_journal_segments_are_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.db");
        let mut disk = SqliteDisk::open_with_segments(&path, SqliteOptions { fsync: true }, 8192)
            .expect("open");
        let value = "v".repeat(1000);
        for revision in 1..=200 {
            disk.write(revision, &[put(&format!("/k{revision}"), &value, revision)])
                .expect("write");
        }
        // How many segments are on disk right now depends on how far the
        // applier got (on a loaded machine it keeps up with the writes); the
        // segment left at the end shows they were many and were removed.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while journal_segments(&path) > 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "applied segments were never removed: {}",
                journal_segments(&path)
            );
            std::thread::sleep(CHECKPOINT_EVERY);
        }
        // 200 records of ~1 KiB in 8 KiB segments: the open segment starts
        // far past revision 1, so the ones before it were written and removed.
        let first = std::fs::read_dir(journal_dir(&path))
            .expect("journal dir")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|name| name.strip_suffix(".seg")?.parse::<u64>().ok())
            .min();
        assert!(first.is_some_and(|revision| revision > 150), "{first:?}");
        assert_eq!(keys(&mut disk).len(), 200);
        disk.close().expect("close");
        assert_eq!(journal_segments(&path), 0);
    }

    /// Data dirs made before the rowid table keep their `WITHOUT ROWID`
    /// table and work unchanged; new ones get the rowid table. Both load in
    /// key order whatever order the rows were written in.
    #[test]
    fn old_and_new_tables_read_and_write_alike() {
        let dir = tempfile::tempdir().expect("tempdir");
        let old = dir.path().join("old.db");
        Connection::open(&old)
            .and_then(|c| {
                c.execute_batch(
                    "CREATE TABLE kv (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL,
                         create_revision INTEGER NOT NULL, mod_revision INTEGER NOT NULL) WITHOUT ROWID;
                     INSERT INTO kv VALUES ('/b', 'old-b', 1, 1);",
                )
            })
            .expect("old schema");
        for (path, rowid) in [(old, false), (dir.path().join("new.db"), true)] {
            let mut disk = SqliteDisk::open(&path, SqliteOptions { fsync: false }).expect("open");
            let schema: String = disk
                .connection
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE name = 'kv'",
                    [],
                    |row| row.get(0),
                )
                .expect("schema");
            assert_eq!(!schema.contains("WITHOUT ROWID"), rowid, "{schema}");
            disk.write(3, &[put("/c", "c", 2), put("/a", "a", 3)])
                .expect("write");
            disk.write(4, &[put("/b", "b4", 4)]).expect("overwrite");
            let expected: Vec<(String, String)> = [("/a", "a"), ("/b", "b4"), ("/c", "c")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert_eq!(keys(&mut disk), expected);
            let mut each = Vec::new();
            let revision = disk
                .load_each(&mut |kv| each.push(kv.key))
                .expect("load_each");
            each.sort();
            assert_eq!(
                (revision, each),
                (4, vec!["/a".to_string(), "/b".into(), "/c".into()])
            );
        }
    }
}
