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

use ferrokube_testkit::etcd as etcd_process;

/// The suite on a real etcd (Debian's etcd-server, started here on loopback):
/// every scratch directory gets its own key prefix, so cases do not see each
/// other's keys; reopening a directory reconnects to the same prefix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_backend_conforms() {
    use ferrokube_store::etcd::{EtcdBackend, EtcdOptions};
    let etcd = etcd_process::Etcd::start();
    let endpoints = etcd.endpoints();
    conformance::run(
        &move |dir: &std::path::Path, _fresh: bool| -> Option<Arc<dyn Backend>> {
            let mut options = EtcdOptions::new(endpoints.clone());
            options.prefix = format!("/conformance{}", dir.display());
            options.store_root = String::new();
            options.compaction_interval = std::time::Duration::ZERO;
            let backend = tokio::task::block_in_place(|| {
                tokio::runtime::Handle::current().block_on(EtcdBackend::connect(options))
            })
            .expect("connect to etcd");
            Some(Arc::new(backend) as Arc<dyn Backend>)
        },
    )
    .await;
}
