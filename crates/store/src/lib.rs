//! ferrokube's object store.
//!
//! Two layers, mirroring kube-apiserver's split between etcd and its watch cache:
//!
//! - a durable [`Backend`] with etcd semantics: one global revision counter,
//!   transactions with preconditions on mod revisions, a full load at start,
//!   and an ordered stream of committed events (the "watch from revision");
//! - the [`Store`], an in-memory cache fed only by that stream, holding the
//!   current state as a persistent ordered map so that a snapshot is O(1)
//!   and every read answers from exactly one revision.
//!
//! Backends: [`LocalBackend`] over an in-memory map or SQLite (a journal of
//! batches in front; group commit: concurrent writers share one
//! `fdatasync`), and [`etcd::EtcdBackend`] on an etcd v3 cluster (several
//! ferrokube replicas on one etcd).

mod applier;
mod backend;
mod cache;
mod checkpoint;
pub mod conformance;
pub mod encryption;
pub mod etcd;
mod history;
mod journal;
mod local;
mod memory;
mod prefix_mark;
mod sqlite;
mod thread_panic;

pub use backend::{
    Backend, BackendError, BoxFuture, Committed, Event, EventKind, EventSink, Expect, Image,
    ImageHook, KeyValue, Loaded, Op, RestoreHook, Txn,
};
pub use cache::{Codec, Entry, Snapshot, Store, StoreError, DEFAULT_HISTORY_WINDOW};
pub use checkpoint::Checkpoint;
pub use history::{Change, HistoryError};
pub use local::{Disk, LocalBackend};
pub use memory::MemoryDisk;
pub use prefix_mark::PrefixMark;
pub use sqlite::{SqliteDisk, SqliteOptions};

/// An etcd-style revision: every committed transaction moves it by one.
pub type Revision = i64;
