//! The storage conformance suite, run against every local backend.

use std::sync::Arc;

use ferrokube_store::{conformance, Backend, LocalBackend, MemoryDisk, SqliteDisk, SqliteOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_backend_conforms() {
    conformance::run(
        &|_dir: &std::path::Path, fresh: bool| -> Option<Arc<dyn Backend>> {
            fresh.then(|| {
                Arc::new(LocalBackend::open(MemoryDisk::new()).expect("open")) as Arc<dyn Backend>
            })
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_backend_conforms() {
    for fsync in [true, false] {
        conformance::run(
            &move |dir: &std::path::Path, _fresh: bool| -> Option<Arc<dyn Backend>> {
                let disk = SqliteDisk::open(&dir.join("store.db"), SqliteOptions { fsync })
                    .expect("open sqlite");
                Some(Arc::new(LocalBackend::open(disk).expect("open")) as Arc<dyn Backend>)
            },
        )
        .await;
    }
}
