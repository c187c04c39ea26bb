//! What the etcd backend adds beyond the conformance suite: two caches on one
//! etcd (replicas), consistent reads past revisions that carry no event for
//! the prefix (progress notifications), compaction mapped to `Compacted`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use ferrokube_store::etcd::{EtcdBackend, EtcdOptions};
use ferrokube_store::{
    Backend, BackendError, Codec, EventSink, Expect, KeyValue, Op, Revision, Store, Txn,
};

use ferrokube_testkit::etcd as etcd_process;

struct Text;

impl Codec for Text {
    type Object = String;
    fn decode(&self, kv: &KeyValue) -> String {
        String::from_utf8_lossy(&kv.value).into_owned()
    }
    fn deleted(&self, previous: &String, _revision: Revision) -> String {
        previous.clone()
    }
}

async fn backend(etcd: &etcd_process::Etcd, prefix: &str) -> Arc<EtcdBackend> {
    let mut options = EtcdOptions::new(etcd.endpoints());
    options.prefix = prefix.to_string();
    options.compaction_interval = Duration::ZERO;
    Arc::new(EtcdBackend::connect(options).await.expect("connect"))
}

fn put(key: &str, value: &str, expect: Expect) -> Txn {
    Txn::single(Op::Put {
        key: key.into(),
        value: Bytes::from(value.to_string()),
        expect,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_caches_on_one_etcd_see_each_others_writes() {
    let etcd = etcd_process::Etcd::start();
    let one = Store::open(backend(&etcd, "/registry").await, Text)
        .await
        .expect("store one");
    let two = Store::open(backend(&etcd, "/registry").await, Text)
        .await
        .expect("store two");
    let created = one
        .commit(put("/registry/configmaps/default/a", "1", Expect::Absent))
        .await
        .expect("create through one");
    two.wait_for(created.revision, Duration::from_secs(10))
        .await
        .expect("two follows");
    let entry = two
        .snapshot()
        .get("/registry/configmaps/default/a")
        .cloned();
    assert_eq!(
        entry.map(|entry| entry.object.to_string()),
        Some("1".into())
    );
    // Optimistic concurrency across the two: the stale writer loses.
    two.commit(put(
        "/registry/configmaps/default/a",
        "2",
        Expect::ModRevision(created.revision),
    ))
    .await
    .expect("update through two");
    let stale = one
        .commit(put(
            "/registry/configmaps/default/a",
            "3",
            Expect::ModRevision(created.revision),
        ))
        .await;
    assert!(
        stale.is_err(),
        "a stale mod revision conflicts across caches"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consistent_reads_reach_revisions_written_outside_the_prefix() {
    let etcd = etcd_process::Etcd::start();
    let store = Store::open(backend(&etcd, "/registry").await, Text)
        .await
        .expect("store");
    // A write under another prefix moves etcd's revision with no event for this cache.
    let other = backend(&etcd, "/elsewhere").await;
    let moved = other
        .commit(put("/registry/x", "1", Expect::Any))
        .await
        .expect("write elsewhere");
    let snapshot = store
        .consistent_snapshot(Duration::from_secs(10))
        .await
        .expect("a progress notification brings the cache to the quorum revision");
    assert!(snapshot.revision >= moved.revision);
    assert!(snapshot.objects.is_empty(), "nothing from the other prefix");
}

#[derive(Default)]
struct Nothing;

impl EventSink for Nothing {
    fn apply(&self, _revision: Revision, _events: &[ferrokube_store::Event]) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_from_a_compacted_revision_fails_with_compacted() {
    let etcd = etcd_process::Etcd::start();
    let backend = backend(&etcd, "/registry").await;
    let mut last = 0;
    for value in 0..3 {
        last = backend
            .commit(put("/registry/k", &value.to_string(), Expect::Any))
            .await
            .expect("write")
            .revision;
    }
    backend.compact(last).await.expect("compact");
    let watched = backend.watch(last - 1, Arc::new(Nothing)).await;
    assert!(
        matches!(watched, Err(BackendError::Compacted { .. })),
        "{watched:?}"
    );
    backend
        .watch(last + 1, Arc::new(Nothing))
        .await
        .expect("from the compacted revision on");
}

/// A cache cut off from etcd while etcd compacts past its last revision
/// catches up by relisting: puts for what changed, deletes for what is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_whose_watch_fell_behind_compaction_relists() {
    let mut etcd = etcd_process::Etcd::cluster(3);
    let endpoints = etcd.endpoints();
    let connect = |endpoints: Vec<String>| async move {
        let mut options = EtcdOptions::new(endpoints);
        options.compaction_interval = Duration::ZERO;
        options.request_timeout = Duration::from_secs(5);
        Arc::new(EtcdBackend::connect(options).await.expect("connect"))
    };
    // The cache talks to member 0 only, the writer to the two others.
    let store = Store::open(connect(vec![endpoints[0].clone()]).await, Text)
        .await
        .expect("store");
    let writer = connect(endpoints[1..].to_vec()).await;
    let key = |name: &str| format!("/registry/configmaps/default/{name}");
    let mut last = 0;
    for name in ["keep", "change", "gone"] {
        last = writer
            .commit(put(&key(name), "1", Expect::Absent))
            .await
            .expect("create")
            .revision;
    }
    store
        .wait_for(last, Duration::from_secs(10))
        .await
        .expect("the cache follows");

    etcd.kill(0);
    // Member 0 may have been the raft leader: writes fail until the others
    // elect a new one. These writes may be repeated safely.
    let until_ok = |txn: Txn| {
        let writer = writer.clone();
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            loop {
                match writer.commit(txn.clone()).await {
                    Ok(committed) => return committed.revision,
                    Err(error) => {
                        assert!(std::time::Instant::now() < deadline, "{error}");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
        }
    };
    until_ok(put(&key("change"), "2", Expect::Any)).await;
    until_ok(Txn::single(Op::Delete {
        key: key("gone"),
        expect: Expect::Any,
    }))
    .await;
    let last = until_ok(put(&key("new"), "1", Expect::Any)).await;
    writer.compact(last).await.expect("compact");
    tokio::task::block_in_place(|| etcd.restart(0));

    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let expected = vec![
        (key("change"), "2".to_string()),
        (key("keep"), "1".to_string()),
        (key("new"), "1".to_string()),
    ];
    loop {
        let snapshot = store.snapshot();
        let state: Vec<(String, String)> = snapshot
            .objects
            .iter()
            .map(|(key, entry)| (key.clone(), entry.object.to_string()))
            .collect();
        if state == expected && snapshot.revision >= last {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the cache did not catch up: {state:?} at {}",
            snapshot.revision
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // And it follows again afterwards.
    let after = writer
        .commit(put(&key("after"), "1", Expect::Absent))
        .await
        .expect("create")
        .revision;
    store
        .wait_for(after, Duration::from_secs(10))
        .await
        .expect("the cache follows after the relist");
}
