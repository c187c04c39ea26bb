//! kube-rs `kube_runtime::watcher` and `reflector` converge on the server's
//! state through creates, updates and deletes, in both initial modes
//! (list-then-watch, and streaming lists with `sendInitialEvents`).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::TestEnv;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PartialObjectMeta, PostParams};
use kube::runtime::{reflector, watcher, WatchStreamExt};
use kube::ResourceExt;
use serde_json::json;

fn cm(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"v": value}})).unwrap()
}

/// The reflector's view: name → data value.
fn view(store: &reflector::Store<ConfigMap>) -> BTreeMap<String, String> {
    store
        .state()
        .iter()
        .map(|cm| {
            (
                cm.name_any(),
                cm.data
                    .as_ref()
                    .and_then(|d| d.get("v"))
                    .cloned()
                    .unwrap_or_default(),
            )
        })
        .collect()
}

async fn server_view(api: &Api<ConfigMap>) -> BTreeMap<String, String> {
    api.list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|cm| {
            (
                cm.name_any(),
                cm.data
                    .as_ref()
                    .and_then(|d| d.get("v"))
                    .cloned()
                    .unwrap_or_default(),
            )
        })
        .collect()
}

async fn converges(config: watcher::Config, prefix: &str) {
    let env = TestEnv::new(prefix).await;
    let api: Api<ConfigMap> = env.api();
    for name in ["a", "b", "c"] {
        api.create(&PostParams::default(), &cm(name, "0"))
            .await
            .unwrap();
    }
    let (store, writer) = reflector::store();
    let stream = reflector(writer, watcher(api.clone(), config)).applied_objects();
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(item) = stream.next().await {
            item.unwrap();
        }
    });
    store.wait_until_ready().await.unwrap();
    for round in 1..=5 {
        let mut b = api.get("b").await.unwrap();
        b.data = Some(BTreeMap::from([("v".to_string(), round.to_string())]));
        api.replace("b", &PostParams::default(), &b).await.unwrap();
        api.create(&PostParams::default(), &cm(&format!("n{round}"), "x"))
            .await
            .unwrap();
    }
    api.delete("a", &DeleteParams::default()).await.unwrap();
    api.delete("n2", &DeleteParams::default()).await.unwrap();
    let wanted = server_view(&api).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if view(&store) == wanted {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "reflector {:?} never reached {:?}",
            view(&store),
            wanted
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(wanted.get("b").map(String::as_str), Some("5"));
    assert!(!wanted.contains_key("a") && !wanted.contains_key("n2"));
    task.abort();
}

#[tokio::test]
async fn reflector_converges_with_list_then_watch() {
    converges(watcher::Config::default(), "wl").await;
}

#[tokio::test]
async fn reflector_converges_with_streaming_lists() {
    converges(watcher::Config::default().streaming_lists(), "ws").await;
}

#[tokio::test]
async fn watcher_survives_server_side_timeouts() {
    // A 1-second server-side timeout ends each watch; the watcher resumes
    // from its last resourceVersion and misses nothing.
    converges(watcher::Config::default().timeout(1), "wt").await;
}

/// A watcher whose resourceVersion falls out of the server's history window
/// gets 410 Expired when it resumes; kube-rs re-lists and still converges.
#[tokio::test]
async fn watcher_relists_after_410_and_converges() {
    if common::skip_if_external("watcher_relists_after_410_and_converges") {
        return;
    }
    let server = common::TestServer::start_with(&["--history-window=1s"]);
    let client = server.client().await;
    let watched = format!("w410-{}", common::suffix());
    let busy = format!("busy-{}", common::suffix());
    common::create_namespace(&client, &watched).await;
    common::create_namespace(&client, &busy).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &watched);
    let noise: Api<ConfigMap> = Api::namespaced(client.clone(), &busy);
    api.create(&PostParams::default(), &cm("a", "0"))
        .await
        .unwrap();

    let (store, writer) = reflector::store();
    let inits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = inits.clone();
    // A 1-second watch timeout: each resume uses the last resourceVersion the
    // watcher saw in its namespace, which the busy namespace pushes out of the window.
    let stream = reflector(
        writer,
        watcher(api.clone(), watcher::Config::default().timeout(1)),
    );
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            if let Ok(watcher::Event::Init) = event {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
    });
    store.wait_until_ready().await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut round = 0;
    while inits.load(std::sync::atomic::Ordering::SeqCst) < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the watcher never re-listed after a 410"
        );
        round += 1;
        noise
            .create(&PostParams::default(), &cm(&format!("n{round}"), "x"))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    api.create(&PostParams::default(), &cm("b", "1"))
        .await
        .unwrap();
    api.delete("a", &DeleteParams::default()).await.unwrap();
    let wanted = server_view(&api).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while view(&store) != wanted {
        assert!(
            tokio::time::Instant::now() < deadline,
            "reflector {:?} never reached {:?}",
            view(&store),
            wanted
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task.abort();
}

/// A watch's events with `Accept: accept`, read until the server ends it
/// (`timeoutSeconds` in `query`).
async fn raw_watch_events(env: &TestEnv, query: &str, accept: &str) -> Vec<serde_json::Value> {
    use http_body_util::BodyExt;
    let path = format!("/api/v1/namespaces/{}/configmaps?{query}", env.ns);
    let request = http::Request::builder()
        .uri(&path)
        .header("Accept", accept)
        .body(kube::client::Body::empty())
        .unwrap();
    let response = env.client.send(request).await.unwrap();
    assert_eq!(response.status().as_u16(), 200, "GET {path}");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8_lossy(&body)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// kube-rs' metadata watcher with streaming lists ends its initial list at
/// the initial-events-end BOOKMARK; that bookmark, like every event of a
/// PartialObjectMetadata (or Table) watch, carries the transformed kind, as
/// kube's watch server transforms every event (`handlers/response.go`).
#[tokio::test]
async fn metadata_watcher_bookmarks_carry_the_transformed_kind() {
    let env = TestEnv::new("wmb").await;
    let api: Api<ConfigMap> = env.api();
    for name in ["a", "b"] {
        let mut labelled = cm(name, "0");
        labelled.metadata.labels = Some(BTreeMap::from([("t".into(), "b".into())]));
        api.create(&PostParams::default(), &labelled).await.unwrap();
    }
    // The label leaves out the namespace's kube-root-ca.crt.
    let config = watcher::Config::default()
        .labels("t=b")
        .streaming_lists()
        .timeout(5);
    // kube-rs' metadata watcher (`metadata_watcher` is this, deprecated for it).
    let metadata: Api<PartialObjectMeta<ConfigMap>> = Api::namespaced(env.client.clone(), &env.ns);
    let mut stream = std::pin::pin!(watcher(metadata, config));
    let mut listed = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("metadata_watcher never finished its initial list")
            .unwrap()
            .unwrap();
        match event {
            watcher::Event::InitApply(meta) => listed.push(meta.name_any()),
            watcher::Event::InitDone => break,
            _ => {}
        }
    }
    listed.sort();
    assert_eq!(listed, ["a", "b"]);

    let query =
        "labelSelector=t%3Db&watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan\
                 &allowWatchBookmarks=true&timeoutSeconds=1";
    let partial = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    let events = raw_watch_events(&env, query, partial).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["ADDED", "ADDED", "BOOKMARK"]);
    for event in &events {
        assert_eq!(event["object"]["kind"], "PartialObjectMetadata", "{event}");
        assert_eq!(event["object"]["apiVersion"], "meta.k8s.io/v1", "{event}");
    }
    let bookmark = &events[2]["object"]["metadata"];
    assert_eq!(bookmark["annotations"]["k8s.io/initial-events-end"], "true");
    assert!(bookmark["resourceVersion"]
        .as_str()
        .is_some_and(|rv| !rv.is_empty()));

    let table = "application/json;as=Table;g=meta.k8s.io;v=v1";
    let events = raw_watch_events(&env, query, table).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["ADDED", "ADDED", "BOOKMARK"]);
    for event in &events {
        assert_eq!(event["object"]["kind"], "Table", "{event}");
        assert_eq!(event["object"]["apiVersion"], "meta.k8s.io/v1", "{event}");
    }
    let bookmark = &events[2]["object"];
    assert!(bookmark["metadata"]["resourceVersion"]
        .as_str()
        .is_some_and(|rv| !rv.is_empty()));
    // kube's table convertor prints the bookmark object as one row, whose
    // object is its PartialObjectMetadata (`includeObject=Metadata`).
    let row_object = &bookmark["rows"][0]["object"];
    assert_eq!(row_object["kind"], "PartialObjectMetadata");
    assert_eq!(
        row_object["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert_eq!(
        row_object["metadata"]["resourceVersion"],
        bookmark["metadata"]["resourceVersion"]
    );
}

/// kube-rs's streaming list (`WatchParams::streaming_lists`) from a
/// resourceVersion 1000 revisions ahead: the server waits for it (3 s, as
/// kube's watch cache), then the watch's only event is the ERROR 504
/// `Too large resource version` and the stream ends.
#[tokio::test]
async fn a_streaming_list_from_a_future_revision_gets_the_too_large_error() {
    let env = TestEnv::new("wtl").await;
    let api: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.ns);
    let created = api
        .create(&PostParams::default(), &cm("a", "1"))
        .await
        .unwrap();
    let current: u64 = created.resource_version().unwrap().parse().unwrap();
    let wanted = current + 1000;
    let params = kube::api::WatchParams::streaming_lists();
    let stream = api.watch(&params, &wanted.to_string()).await.unwrap();
    let events: Vec<_> = stream.collect().await;
    assert_eq!(events.len(), 1, "{events:?}");
    let Ok(kube::api::WatchEvent::Error(status)) = &events[0] else {
        panic!("not an ERROR event: {events:?}");
    };
    assert_eq!(status.code, 504);
    assert_eq!(status.reason, "Timeout");
    assert!(
        status.message.starts_with(&format!(
            "Timeout: Too large resource version: {wanted}, current: "
        )),
        "{status:?}"
    );
    let details = status.details.as_ref().unwrap();
    assert_eq!(details.retry_after_seconds, 1);
    assert_eq!(details.causes[0].reason, "ResourceVersionTooLarge");
    assert_eq!(details.causes[0].message, "Too large resource version");
}
