//! The embedded default: a [`Disk`] in one SQLite file (WAL mode).
//!
//! One row per live key, plus the current revision in a meta table. The key
//! table is an ordinary rowid table with a unique index on the key: an
//! object (about 1.4 KiB for a 1 KiB ConfigMap) does not fit in a page of a
//! `WITHOUT ROWID` table (at most ~1 KiB of payload per cell with 4 KiB
//! pages), so each row spilled into an overflow page: 2.5x the CPU per
//! insert and twice the file (docs/performance.md, "store layout"). Data
//! dirs created before keep their `WITHOUT ROWID` table; the statements are
//! the same for both. Each
//! batch from the committer is one SQLite transaction, so with
//! `synchronous=FULL` every batch costs one fsync however many writers it
//! carries (group commit). Values are stored as kube-apiserver stores them in
//! etcd: the object without `metadata.resourceVersion`, which is the row's
//! mod revision.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use crate::backend::{BackendError, Event, EventKind, KeyValue, Loaded};
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
    connection: Connection,
    checkpointer: Option<Checkpointer>,
}

/// Checkpoints on a connection and thread of their own, so that copying WAL
/// frames into the database (and its fsync) no longer stalls the committer
/// every 1,000 pages; the committer's own automatic checkpoint stays as a
/// backstop at a larger WAL.
struct Checkpointer {
    stop: std::sync::mpsc::Sender<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How often the checkpointer copies the WAL into the database.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

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
        if let Some(mut checkpointer) = self.checkpointer.take() {
            checkpointer.finish();
        }
    }
}

fn io(error: rusqlite::Error) -> BackendError {
    BackendError::Io(error.to_string())
}

impl SqliteDisk {
    pub fn open(path: &Path, options: SqliteOptions) -> Result<Self, BackendError> {
        let connection = Connection::open(path).map_err(io)?;
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
        let checkpointer = Some(Checkpointer::start(path, synchronous)?);
        Ok(SqliteDisk {
            connection,
            checkpointer,
        })
    }
}

impl SqliteDisk {
    fn revision(&self) -> Result<Revision, BackendError> {
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
        let transaction = self.connection.transaction().map_err(io)?;
        {
            let mut put = transaction
                .prepare_cached(
                    "INSERT INTO kv (key, value, create_revision, mod_revision) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value,
                         create_revision = excluded.create_revision, mod_revision = excluded.mod_revision",
                )
                .map_err(io)?;
            let mut delete = transaction
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
            transaction
                .execute(
                    "INSERT INTO meta (name, value) VALUES ('revision', ?1)
                     ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                    params![revision],
                )
                .map_err(io)?;
        }
        transaction.commit().map_err(io)
    }

    fn close(&mut self) -> Result<(), BackendError> {
        if let Some(mut checkpointer) = self.checkpointer.take() {
            checkpointer.finish();
        }
        self.connection
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(key: &str, value: &str, revision: Revision) -> Event {
        Event {
            kind: EventKind::Put,
            kv: KeyValue {
                key: key.into(),
                value: bytes::Bytes::from(value.to_string()),
                create_revision: revision,
                mod_revision: revision,
            },
        }
    }

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
