//! ferrokube on a 3-member etcd cluster started by the test: under write
//! load, members are killed (SIGKILL) and restarted one after the other.
//! No acknowledged write is lost, the watcher sees every acknowledged write
//! exactly once and in order, failures during the outage are `Status`
//! errors (never a hang past a generous bound), and ferrokube serves again
//! without a restart. A second test kills a ferrokube replica under load: the
//! client carries on through another replica and resumes its watch there.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;
use ferrokube_testkit::etcd;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::TestServer;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube::ResourceExt;
use serde_json::json;

/// No request may take longer than this (the store's own bounds are far below).
const NO_HANG: Duration = Duration::from_secs(90);
const EVENTUALLY: Duration = Duration::from_secs(60);

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"v": "1"}})).unwrap()
}

#[derive(Default)]
struct Outcome {
    /// (name, resourceVersion) of every acknowledged create.
    acknowledged: Vec<(String, i64)>,
    /// Status code and message of the failed ones.
    failures: Vec<(u16, String)>,
}

/// Creates `load-<writer>-<n>` until `stop`, recording acknowledgements and failures.
fn spawn_writer(
    api: Api<ConfigMap>,
    writer: usize,
    stop: Arc<AtomicBool>,
    outcome: Arc<Mutex<Outcome>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) {
            let name = format!("load-{writer}-{n}");
            n += 1;
            let created = tokio::time::timeout(
                NO_HANG,
                api.create(&PostParams::default(), &config_map(&name)),
            )
            .await
            .unwrap_or_else(|_| panic!("create {name} hung for {NO_HANG:?}"));
            match created {
                Ok(cm) => {
                    let rv = cm.resource_version().unwrap().parse().unwrap();
                    outcome.lock().unwrap().acknowledged.push((name, rv));
                }
                Err(kube::Error::Api(status)) => {
                    outcome
                        .lock()
                        .unwrap()
                        .failures
                        .push((status.code, status.message));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(error) => panic!("create {name}: not a Status error: {error}"),
            }
        }
    })
}

/// Follows ADDED events of `load-*` from `from`, resuming from the last seen
/// resourceVersion whenever the stream ends, as a client would.
fn spawn_watcher(
    apis: Vec<Api<ConfigMap>>,
    from: String,
    seen: Arc<Mutex<Vec<i64>>>,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut last = from;
        let mut attempt = 0usize;
        while !stop.load(Ordering::Relaxed) {
            // Reconnect to the next replica each time the stream breaks.
            let api = &apis[attempt % apis.len()];
            attempt += 1;
            let Ok(stream) = api.watch(&WatchParams::default().timeout(290), &last).await else {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            };
            let mut stream = stream.boxed();
            loop {
                let next =
                    tokio::time::timeout(Duration::from_millis(500), stream.try_next()).await;
                let event = match next {
                    Err(_) if stop.load(Ordering::Relaxed) => return,
                    Err(_) => continue,
                    Ok(Ok(Some(event))) => event,
                    Ok(_) => break,
                };
                match event {
                    WatchEvent::Added(cm) | WatchEvent::Modified(cm) => {
                        last = cm.resource_version().unwrap();
                        if cm.name_any().starts_with("load-") {
                            seen.lock().unwrap().push(last.parse().unwrap());
                        }
                    }
                    WatchEvent::Deleted(cm) => last = cm.resource_version().unwrap(),
                    WatchEvent::Bookmark(bookmark) => {
                        last = bookmark.metadata.resource_version;
                    }
                    WatchEvent::Error(status) => {
                        panic!("the watch failed with {status:?}: events would be lost")
                    }
                }
            }
        }
    })
}

/// Every acknowledged write exists and was watched, each event once, in order.
async fn check(apis: &[Api<ConfigMap>], outcome: &Outcome, seen: &Arc<Mutex<Vec<i64>>>) {
    let acknowledged: BTreeSet<i64> = outcome.acknowledged.iter().map(|(_, rv)| *rv).collect();
    let deadline = Instant::now() + EVENTUALLY;
    loop {
        let watched: BTreeSet<i64> = seen.lock().unwrap().iter().copied().collect();
        if acknowledged.is_subset(&watched) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the watcher missed {:?}",
            acknowledged.difference(&watched).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let watched = seen.lock().unwrap().clone();
    assert!(
        watched.windows(2).all(|pair| pair[0] < pair[1]),
        "events in order, none twice"
    );
    for (index, api) in apis.iter().enumerate() {
        let listed: BTreeSet<String> = api
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .iter()
            .map(ResourceExt::name_any)
            .collect();
        for (name, _) in &outcome.acknowledged {
            assert!(
                listed.contains(name),
                "replica {index} lost acknowledged {name}"
            );
        }
    }
}

/// Two ferrokube replicas on one etcd, a ConfigMap client for each, and the
/// revision a watch of everything after setup starts from.
async fn two_replicas(servers_flag: &str) -> (Vec<TestServer>, Vec<Api<ConfigMap>>, String) {
    let servers: Vec<TestServer> = (0..2)
        .map(|_| TestServer::start_with(&["--storage-backend=etcd3", servers_flag]))
        .collect();
    let mut apis = Vec::new();
    for server in &servers {
        apis.push(Api::<ConfigMap>::namespaced(
            server.client().await,
            "default",
        ));
    }
    let from = apis[1]
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    (servers, apis, from)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killing_etcd_members_under_load_loses_nothing() {
    let mut etcd = etcd::Etcd::cluster(3);
    let servers_flag = etcd.servers_flag();
    let (_servers, apis, from) = two_replicas(&servers_flag).await;
    let stop = Arc::new(AtomicBool::new(false));
    let outcome = Arc::new(Mutex::new(Outcome::default()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let watcher = spawn_watcher(
        vec![apis[1].clone(), apis[0].clone()],
        from,
        seen.clone(),
        // Watches until aborted, after the check.
        Arc::new(AtomicBool::new(false)),
    );
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            spawn_writer(
                apis[writer % 2].clone(),
                writer,
                stop.clone(),
                outcome.clone(),
            )
        })
        .collect();

    for member in 0..3 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        etcd.kill(member);
        tokio::time::sleep(Duration::from_secs(2)).await;
        tokio::task::block_in_place(|| etcd.restart(member));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }
    let outcome = std::mem::take(&mut *outcome.lock().unwrap());
    eprintln!(
        "{} creates acknowledged, {} failed: {:?}",
        outcome.acknowledged.len(),
        outcome.failures.len(),
        outcome.failures.iter().collect::<BTreeSet<_>>()
    );
    assert!(!outcome.acknowledged.is_empty());
    check(&apis, &outcome, &seen).await;
    watcher.abort();

    // ferrokube recovered without a restart: both replicas write and read.
    for (index, api) in apis.iter().enumerate() {
        let name = format!("after-{index}");
        let created = api
            .create(&PostParams::default(), &config_map(&name))
            .await
            .unwrap();
        let other = &apis[(index + 1) % 2];
        assert_eq!(
            other.get(&name).await.unwrap().resource_version(),
            created.resource_version()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killing_a_replica_under_load_clients_carry_on_through_another() {
    let etcd = etcd::Etcd::start();
    let servers_flag = etcd.servers_flag();
    let (mut servers, apis, from) = two_replicas(&servers_flag).await;
    let stop = Arc::new(AtomicBool::new(false));
    let outcome = Arc::new(Mutex::new(Outcome::default()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    // The watcher starts on replica 0 (the one that dies) and moves on to 1.
    let watcher = spawn_watcher(
        vec![apis[0].clone(), apis[1].clone()],
        from,
        seen.clone(),
        // Watches until aborted, after the check.
        Arc::new(AtomicBool::new(false)),
    );
    // Writers on the surviving replica.
    let writers: Vec<_> = (0..2)
        .map(|writer| spawn_writer(apis[1].clone(), writer, stop.clone(), outcome.clone()))
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    servers[0].stop_with("KILL");
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }
    let outcome = std::mem::take(&mut *outcome.lock().unwrap());
    assert!(
        outcome.failures.is_empty(),
        "the surviving replica failed {:?}",
        outcome.failures
    );
    // Only the survivor is listed from now on.
    check(&apis[1..], &outcome, &seen).await;
    watcher.abort();
}
