//! The embedded default: a [`Disk`] in one SQLite file (WAL mode).
//!
//! One row per live key, plus the current revision in a meta table. Each
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
                 CREATE TABLE IF NOT EXISTS kv (
                     key TEXT PRIMARY KEY NOT NULL,
                     value BLOB NOT NULL,
                     create_revision INTEGER NOT NULL,
                     mod_revision INTEGER NOT NULL
                 ) WITHOUT ROWID;
                 CREATE TABLE IF NOT EXISTS meta (
                     name TEXT PRIMARY KEY NOT NULL,
                     value INTEGER NOT NULL
                 ) WITHOUT ROWID;"
            ))
            .map_err(io)?;
        Ok(SqliteDisk { connection })
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
            .prepare("SELECT key, create_revision, mod_revision FROM kv ORDER BY key")
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
            .prepare("SELECT key, value, create_revision, mod_revision FROM kv ORDER BY key")
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
            .prepare("SELECT key, value, create_revision, mod_revision FROM kv ORDER BY key")
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
        let kvs = rows.collect::<Result<Vec<_>, _>>().map_err(io)?;
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
        self.connection
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .map_err(io)
    }
}
