//! The storage conformance suite: every [`Backend`] must pass it.
//!
//! Backends call [`run`] from their own tests with a factory; the suite
//! checks etcd's semantics (revisions, preconditions, atomic transactions,
//! ordered gap-free events, durability across reopen).

use std::future::Future;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::backend::{Backend, BackendError, Event, EventKind, EventSink, Expect, Op, Txn};
use crate::Revision;

/// Opens backends for the suite. `open(dir, fresh)` opens the backend that
/// lives in `dir`; `fresh` is false when the suite reopens what an earlier
/// call created (backends without durability return `None` then).
pub trait Factory: Send + Sync {
    fn open(&self, dir: &std::path::Path, fresh: bool) -> Option<Arc<dyn Backend>>;
}

impl<F> Factory for F
where
    F: Fn(&std::path::Path, bool) -> Option<Arc<dyn Backend>> + Send + Sync,
{
    fn open(&self, dir: &std::path::Path, fresh: bool) -> Option<Arc<dyn Backend>> {
        self(dir, fresh)
    }
}

fn put(key: &str, value: &str, expect: Expect) -> Op {
    Op::Put {
        key: key.to_string(),
        value: Bytes::from(value.to_string()),
        expect,
    }
}

fn delete(key: &str, expect: Expect) -> Op {
    Op::Delete {
        key: key.to_string(),
        expect,
    }
}

#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<(Revision, Event)>>,
}

impl EventSink for Recorder {
    fn apply(&self, revision: Revision, events: &[Event]) {
        let mut recorded = self
            .events
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for event in events {
            assert!(
                event.kv.mod_revision <= revision,
                "event newer than its batch revision"
            );
            recorded.push((revision, event.clone()));
        }
    }
}

async fn check<F: Future<Output = ()>>(name: &str, test: F) {
    eprintln!("conformance: {name}");
    test.await;
}

/// Runs every conformance case. Panics (test failure) on the first violation.
pub async fn run(factory: &dyn Factory) {
    let scratch = |name: &str| {
        let dir = tempdir_path(name);
        let backend = factory
            .open(&dir, true)
            .expect("a fresh backend always opens");
        (dir, backend)
    };

    check("create, conflict on existing key, revisions move by one", async {
        let (_dir, backend) = scratch("create");
        let start = backend.current_revision().await.expect("revision");
        let first = backend.commit(Txn::single(put("/a", "1", Expect::Absent))).await.expect("create");
        assert_eq!(first.revision, start + 1);
        assert_eq!(first.events.len(), 1);
        assert_eq!(first.events[0].kv.create_revision, first.revision);
        let again = backend.commit(Txn::single(put("/a", "2", Expect::Absent))).await;
        assert!(matches!(again, Err(BackendError::PreconditionFailed { actual: Some(r), .. }) if r == first.revision));
        assert_eq!(backend.current_revision().await.expect("revision"), first.revision);
    })
    .await;

    check("optimistic concurrency on mod revision", async {
        let (_dir, backend) = scratch("update");
        let created = backend
            .commit(Txn::single(put("/k", "1", Expect::Absent)))
            .await
            .expect("create");
        let updated = backend
            .commit(Txn::single(put(
                "/k",
                "2",
                Expect::ModRevision(created.revision),
            )))
            .await
            .expect("update");
        assert_eq!(updated.revision, created.revision + 1);
        assert_eq!(
            updated.events[0].kv.create_revision, created.revision,
            "create revision is kept"
        );
        let stale = backend
            .commit(Txn::single(put(
                "/k",
                "3",
                Expect::ModRevision(created.revision),
            )))
            .await;
        assert!(matches!(
            stale,
            Err(BackendError::PreconditionFailed { .. })
        ));
        let missing = backend
            .commit(Txn::single(put("/nope", "3", Expect::ModRevision(1))))
            .await;
        assert!(matches!(
            missing,
            Err(BackendError::PreconditionFailed { actual: None, .. })
        ));
    })
    .await;

    check("delete with and without preconditions", async {
        let (_dir, backend) = scratch("delete");
        let created = backend
            .commit(Txn::single(put("/d", "1", Expect::Absent)))
            .await
            .expect("create");
        let stale = backend
            .commit(Txn::single(delete(
                "/d",
                Expect::ModRevision(created.revision - 1),
            )))
            .await;
        assert!(matches!(
            stale,
            Err(BackendError::PreconditionFailed { .. })
        ));
        let deleted = backend
            .commit(Txn::single(delete(
                "/d",
                Expect::ModRevision(created.revision),
            )))
            .await
            .expect("delete");
        assert_eq!(deleted.revision, created.revision + 1);
        assert_eq!(deleted.events[0].kind, EventKind::Delete);
        assert_eq!(deleted.events[0].kv.mod_revision, deleted.revision);
        let noop = backend
            .commit(Txn::single(delete("/d", Expect::Any)))
            .await
            .expect("no-op delete");
        assert!(noop.events.is_empty());
        assert_eq!(
            noop.revision, deleted.revision,
            "a no-op delete does not move the revision"
        );
    })
    .await;

    check("transactions are atomic and share one revision", async {
        let (_dir, backend) = scratch("txn");
        let both = backend
            .commit(Txn {
                ops: vec![
                    put("/t1", "1", Expect::Absent),
                    put("/t2", "2", Expect::Absent),
                ],
            })
            .await
            .expect("txn");
        assert!(both
            .events
            .iter()
            .all(|event| event.kv.mod_revision == both.revision));
        let half = backend
            .commit(Txn {
                ops: vec![
                    put("/t3", "3", Expect::Absent),
                    put("/t1", "x", Expect::Absent),
                ],
            })
            .await;
        assert!(half.is_err());
        let loaded = backend.load().await.expect("load");
        assert!(
            loaded.kvs.iter().all(|kv| kv.key != "/t3"),
            "a failed transaction applies nothing"
        );
        assert_eq!(loaded.revision, both.revision);
        let duplicate = backend
            .commit(Txn {
                ops: vec![put("/t4", "1", Expect::Any), put("/t4", "2", Expect::Any)],
            })
            .await;
        assert!(matches!(duplicate, Err(BackendError::DuplicateKey(_))));
        assert!(matches!(
            backend.commit(Txn::default()).await,
            Err(BackendError::EmptyTxn)
        ));
    })
    .await;

    check(
        "load returns every key in key order with its revisions",
        async {
            let (_dir, backend) = scratch("load");
            for key in ["/b", "/a", "/c"] {
                backend
                    .commit(Txn::single(put(key, key, Expect::Absent)))
                    .await
                    .expect("create");
            }
            let loaded = backend.load().await.expect("load");
            let keys: Vec<&str> = loaded.kvs.iter().map(|kv| kv.key.as_str()).collect();
            assert_eq!(keys, ["/a", "/b", "/c"]);
            assert!(loaded.kvs.iter().all(|kv| kv.value == kv.key.clone()));
        },
    )
    .await;

    check(
        "concurrent writers: every event once, in revision order, no gaps",
        async {
            let (_dir, backend) = scratch("concurrent");
            let start = backend.current_revision().await.expect("revision");
            let recorder = Arc::new(Recorder::default());
            backend
                .watch(start + 1, recorder.clone())
                .await
                .expect("watch from head");
            let writers = 16;
            let writes = 50;
            let mut tasks = Vec::new();
            for writer in 0..writers {
                let backend = backend.clone();
                tasks.push(tokio::spawn(async move {
                    let mut revisions = Vec::new();
                    for write in 0..writes {
                        let key = format!("/c/{writer}/{write}");
                        let committed = backend
                            .commit(Txn::single(put(&key, "v", Expect::Absent)))
                            .await
                            .expect("commit");
                        revisions.push(committed.revision);
                    }
                    revisions
                }));
            }
            let mut acknowledged = Vec::new();
            for task in tasks {
                acknowledged.extend(task.await.expect("writer task"));
            }
            acknowledged.sort_unstable();
            let expected: Vec<Revision> = (start + 1..=start + writers * writes).collect();
            assert_eq!(
                acknowledged, expected,
                "revisions are unique and contiguous"
            );
            let seen: Vec<Revision> = recorder
                .events
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .iter()
                .map(|(_, event)| event.kv.mod_revision)
                .collect();
            assert_eq!(
                seen, expected,
                "the sink saw every acknowledged write in order before its ack"
            );
        },
    )
    .await;

    check("durable across reopen", async {
        let dir = tempdir_path("reopen");
        let backend = factory.open(&dir, true).expect("fresh");
        backend
            .commit(Txn::single(put("/keep", "1", Expect::Absent)))
            .await
            .expect("create");
        let gone = backend
            .commit(Txn::single(put("/gone", "1", Expect::Absent)))
            .await
            .expect("create");
        let last = backend
            .commit(Txn::single(delete(
                "/gone",
                Expect::ModRevision(gone.revision),
            )))
            .await
            .expect("delete");
        backend.close().await.expect("close");
        drop(backend);
        let Some(reopened) = factory.open(&dir, false) else {
            eprintln!("conformance: backend is not durable; reopen skipped");
            return;
        };
        let loaded = reopened.load().await.expect("load");
        assert_eq!(
            loaded.revision, last.revision,
            "the revision counter continues"
        );
        assert_eq!(loaded.kvs.len(), 1);
        assert_eq!(loaded.kvs[0].key, "/keep");
        let next = reopened
            .commit(Txn::single(put("/next", "1", Expect::Absent)))
            .await
            .expect("create");
        assert_eq!(next.revision, last.revision + 1);
        reopened.close().await.expect("close");
    })
    .await;
}

/// A scratch directory removed when dropped.
struct Scratch(std::path::PathBuf);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempdir_path(name: &str) -> Scratch {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unique = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "ferrokube-conformance-{}-{name}-{unique}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    Scratch(dir)
}
