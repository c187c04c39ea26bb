//! etcd's raw write rate next to the etcd backend's, as the baseline for
//! ferrokube's durable creates on etcd (docs/performance.md).
//!
//! `cargo run --release -p ferrokube-store --example etcd_put_rate -- http://127.0.0.1:2379 [clients] [seconds]`
//!
//! Three runs of `clients` concurrent writers, each for `seconds`, with
//! 1 KiB values under a fresh prefix: plain etcd puts, etcd Txns creating
//! a new key (compare `mod_revision == 0`, as the backend commits a create),
//! and `EtcdBackend::commit` (the Txn, plus waiting until the backend's
//! watch delivered the revision, as every ferrokube write does). Then the
//! replica lag: two stores on one prefix, a write acknowledged through one,
//! the time until the other's cache has it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferrokube_store::etcd::{EtcdBackend, EtcdOptions};
use ferrokube_store::{
    Backend, Codec, Event, EventSink, Expect, KeyValue, Op, Revision, Store, Txn,
};

struct Discard;

impl EventSink for Discard {
    fn apply(&self, _revision: Revision, _events: &[Event]) {}
}

fn report(name: &str, mut latencies: Vec<Duration>, elapsed: Duration) {
    latencies.sort_unstable();
    let count = latencies.len();
    let at = |quantile: f64| {
        latencies
            .get(((count as f64 * quantile) as usize).min(count.saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    println!(
        "{name:<32} {count:>7} writes  {:>8.0}/s  p50 {:>6.2} ms  p99 {:>6.2} ms",
        count as f64 / elapsed.as_secs_f64(),
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let endpoint = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:2379".into());
    let clients: usize = args.next().map_or(Ok(32), |n| n.parse())?;
    let seconds: u64 = args.next().map_or(Ok(10), |n| n.parse())?;
    let run_for = Duration::from_secs(seconds);
    let value = Bytes::from(vec![b'x'; 1024]);
    let run = std::process::id();

    let client = etcd_client::Client::connect([endpoint.as_str()], None).await?;
    for mode in ["etcd put", "etcd txn create"] {
        let start = Instant::now();
        let mut tasks = Vec::new();
        for writer in 0..clients {
            let mut kv = client.kv_client();
            let value = value.clone();
            let mode = mode.to_string();
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut n = 0u64;
                while start.elapsed() < run_for {
                    let key = format!("/bench-{run}/{mode}/{writer}/{n}");
                    n += 1;
                    let began = Instant::now();
                    if mode == "etcd put" {
                        kv.put(key, value.to_vec(), None).await.expect("put");
                    } else {
                        let txn = etcd_client::Txn::new()
                            .when(vec![etcd_client::Compare::mod_revision(
                                key.clone(),
                                etcd_client::CompareOp::Equal,
                                0,
                            )])
                            .and_then(vec![etcd_client::TxnOp::put(key, value.to_vec(), None)]);
                        kv.txn(txn).await.expect("txn");
                    }
                    latencies.push(began.elapsed());
                }
                latencies
            }));
        }
        let mut latencies = Vec::new();
        for task in tasks {
            latencies.extend(task.await?);
        }
        report(mode, latencies, start.elapsed());
    }

    let endpoint_for_replicas = endpoint.clone();
    let mut options = EtcdOptions::new(vec![endpoint]);
    options.prefix = format!("/bench-{run}/backend");
    options.compaction_interval = Duration::ZERO;
    let backend = Arc::new(EtcdBackend::connect(options).await?);
    let from = backend.current_revision().await? + 1;
    backend.watch(from, Arc::new(Discard)).await?;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for writer in 0..clients {
        let backend = backend.clone();
        let value = value.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut n = 0u64;
            while start.elapsed() < run_for {
                let began = Instant::now();
                backend
                    .commit(Txn::single(Op::Put {
                        key: format!("/registry/bench/{writer}/{n}"),
                        value: value.clone(),
                        expect: Expect::Absent,
                    }))
                    .await
                    .expect("commit");
                n += 1;
                latencies.push(began.elapsed());
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await?);
    }
    report("EtcdBackend::commit (create)", latencies, start.elapsed());

    // Two replicas' stores on one prefix: from the write acknowledged through
    // one to the other's cache showing it (what a watcher on the other replica waits for).
    let replica = |name: &str| {
        let mut options = EtcdOptions::new(vec![endpoint_for_replicas.clone()]);
        options.prefix = format!("/bench-{run}/{name}");
        options.compaction_interval = Duration::ZERO;
        options
    };
    let one = Store::open(
        Arc::new(EtcdBackend::connect(replica("replicas")).await?),
        Text,
    )
    .await?;
    let two = Store::open(
        Arc::new(EtcdBackend::connect(replica("replicas")).await?),
        Text,
    )
    .await?;
    let mut latencies = Vec::new();
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < run_for {
        let committed = one
            .commit(Txn::single(Op::Put {
                key: format!("/registry/replicas/{n}"),
                value: value.clone(),
                expect: Expect::Absent,
            }))
            .await?;
        n += 1;
        let acknowledged = Instant::now();
        two.wait_for(committed.revision, Duration::from_secs(10))
            .await?;
        latencies.push(acknowledged.elapsed());
        // About 100 writes/s: a steady stream, not a flood.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    report(
        "ack on one -> other replica's cache",
        latencies,
        start.elapsed(),
    );
    Ok(())
}

struct Text;

impl Codec for Text {
    type Object = Bytes;
    fn decode(&self, kv: &KeyValue) -> Bytes {
        kv.value.clone()
    }
    fn deleted(&self, previous: &Bytes, _revision: Revision) -> Bytes {
        previous.clone()
    }
}
