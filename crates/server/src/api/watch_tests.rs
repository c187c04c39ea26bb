//! Watch through `Api::handle`: the event stream a client reads.

use std::sync::Arc;
use std::time::Duration;

use ferrokube_store::{Backend, LocalBackend, MemoryDisk, Store};
use http_body_util::BodyExt;
use serde_json::{json, Value};

use super::{Api, ApiRequest, ApiResponse, ResponseBody};
use crate::authn::UserInfo;
use crate::object::ObjectCodec;
use crate::route::Method;

async fn api_with_window(window: Duration) -> Arc<Api> {
    let backend: Arc<dyn Backend> =
        Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    let store = Store::open_with_history(backend, ObjectCodec, window)
        .await
        .expect("store");
    let api = Api::new(
        store,
        "127.0.0.1:6443".into(),
        super::ContinueKey::random().expect("os random source"),
    );
    crate::bootstrap::ensure_system_namespaces(&api)
        .await
        .expect("namespaces");
    api
}

fn request(method: Method, path: &str, body: Option<Value>) -> ApiRequest {
    let mut request = ApiRequest::new(method, path);
    request.user = Some(UserInfo {
        name: "admin".into(),
        uid: String::new(),
        groups: vec!["system:masters".into()],
        extra: Default::default(),
    });
    if let Some(body) = body {
        request.body = bytes::Bytes::from(serde_json::to_vec(&body).expect("json"));
    }
    request
}

async fn write(api: &Arc<Api>, method: Method, path: &str, body: Option<Value>) -> Value {
    let response = api.handle(request(method, path, body)).await;
    assert!(
        response.status < 300,
        "{method:?} {path}: {}",
        response.body_json()
    );
    response.body_json()
}

/// Reads newline-delimited events from a watch response.
struct Events {
    body: super::StreamBody,
    buffer: Vec<u8>,
}

impl Events {
    fn new(response: ApiResponse) -> Self {
        assert_eq!(response.status, 200);
        match response.body {
            ResponseBody::Stream(body) => Events {
                body,
                buffer: Vec::new(),
            },
            ResponseBody::Full(bytes) => panic!("not a stream: {bytes:?}"),
            ResponseBody::Segments(segments) => panic!("not a stream: {:?}", segments.concat()),
        }
    }

    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.iter().position(|byte| *byte == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                return Some(serde_json::from_slice(&line).expect("event is JSON"));
            }
            let frame = tokio::time::timeout(Duration::from_secs(5), self.body.frame())
                .await
                .ok()??
                .ok()?;
            if let Ok(data) = frame.into_data() {
                self.buffer.extend_from_slice(&data);
            }
        }
    }

    async fn expect(&mut self, kind: &str, name: &str) -> Value {
        let event = self.next().await.expect("an event");
        assert_eq!(
            (
                event["type"].as_str(),
                event["object"]["metadata"]["name"].as_str()
            ),
            (Some(kind), Some(name)),
            "{event}"
        );
        event
    }
}

fn configmap(name: &str, tier: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"tier": tier}}, "data": {"k": "v"}})
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn watch_sees_every_change_in_order_with_selector_transitions() {
    let api = api_with_window(Duration::from_secs(300)).await;
    write(&api, Method::Post, CMS, Some(configmap("before", "a"))).await;
    let mut all = Events::new(
        api.handle(request(Method::Get, &format!("{CMS}?watch=1"), None))
            .await,
    );
    let mut tier_a = Events::new(
        api.handle(request(
            Method::Get,
            &format!("{CMS}?watch=true&labelSelector=tier%3Da"),
            None,
        ))
        .await,
    );
    all.expect("ADDED", "before").await;
    tier_a.expect("ADDED", "before").await;

    let created = write(&api, Method::Post, CMS, Some(configmap("x", "a"))).await;
    let mut moved = created.clone();
    moved["metadata"]["labels"]["tier"] = json!("b");
    let moved = write(&api, Method::Put, &format!("{CMS}/x"), Some(moved)).await;
    let mut back = moved.clone();
    back["metadata"]["labels"]["tier"] = json!("a");
    write(&api, Method::Put, &format!("{CMS}/x"), Some(back)).await;
    write(&api, Method::Delete, &format!("{CMS}/x"), None).await;

    let added = all.expect("ADDED", "x").await;
    assert_eq!(added["object"], created);
    all.expect("MODIFIED", "x").await;
    all.expect("MODIFIED", "x").await;
    let deleted = all.expect("DELETED", "x").await;
    let revisions: Vec<i64> = [&added, &deleted]
        .iter()
        .map(|event| {
            event["object"]["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|rv| rv.parse().ok())
                .unwrap_or(0)
        })
        .collect();
    assert!(
        revisions[0] < revisions[1],
        "DELETED carries the deleting revision"
    );

    tier_a.expect("ADDED", "x").await;
    let left = tier_a.expect("DELETED", "x").await;
    assert_eq!(
        left["object"]["metadata"]["labels"]["tier"], "a",
        "the last state that matched"
    );
    assert_eq!(
        left["object"]["metadata"]["resourceVersion"],
        moved["metadata"]["resourceVersion"]
    );
    tier_a.expect("ADDED", "x").await;
    tier_a.expect("DELETED", "x").await;
}

#[tokio::test]
async fn watch_from_a_revision_replays_only_later_changes() {
    let api = api_with_window(Duration::from_secs(300)).await;
    let first = write(&api, Method::Post, CMS, Some(configmap("one", "a"))).await;
    write(&api, Method::Post, CMS, Some(configmap("two", "a"))).await;
    let revision = first["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let mut events = Events::new(
        api.handle(request(
            Method::Get,
            &format!("/api/v1/watch/namespaces/default/configmaps?resourceVersion={revision}"),
            None,
        ))
        .await,
    );
    events.expect("ADDED", "two").await;
    // A single-object watch by name.
    let mut single = Events::new(
        api.handle(request(
            Method::Get,
            &format!("{CMS}?watch=1&fieldSelector=metadata.name%3Done&resourceVersion={revision}"),
            None,
        ))
        .await,
    );
    write(&api, Method::Delete, &format!("{CMS}/two"), None).await;
    write(&api, Method::Delete, &format!("{CMS}/one"), None).await;
    events.expect("DELETED", "two").await;
    events.expect("DELETED", "one").await;
    single.expect("DELETED", "one").await;
}

#[tokio::test]
async fn expired_revisions_get_a_410_error_event() {
    let api = api_with_window(Duration::from_millis(1)).await;
    write(&api, Method::Post, CMS, Some(configmap("a", "a"))).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    write(&api, Method::Post, CMS, Some(configmap("b", "a"))).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    write(&api, Method::Post, CMS, Some(configmap("c", "a"))).await;
    let mut events = Events::new(
        api.handle(request(
            Method::Get,
            &format!("{CMS}?watch=1&resourceVersion=1"),
            None,
        ))
        .await,
    );
    let error = events.next().await.expect("an ERROR event");
    assert_eq!(error["type"], "ERROR");
    assert_eq!(error["object"]["code"], 410);
    assert_eq!(error["object"]["reason"], "Expired");
    assert!(
        events.next().await.is_none(),
        "the watch ends after the error"
    );
}

#[tokio::test]
async fn streaming_lists_send_initial_state_then_a_bookmark() {
    let api = api_with_window(Duration::from_secs(300)).await;
    write(&api, Method::Post, CMS, Some(configmap("a", "a"))).await;
    let invalid = api
        .handle(request(
            Method::Get,
            &format!("{CMS}?watch=1&sendInitialEvents=true"),
            None,
        ))
        .await;
    assert_eq!(invalid.status, 422);
    assert_eq!(
        invalid.body_json()["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
    );
    let mut events = Events::new(
        api.handle(request(
            Method::Get,
            &format!("{CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"),
            None,
        ))
        .await,
    );
    events.expect("ADDED", "a").await;
    let bookmark = events.next().await.expect("bookmark");
    assert_eq!(bookmark["type"], "BOOKMARK");
    assert_eq!(
        bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert_eq!(bookmark["object"]["kind"], "ConfigMap");
    write(&api, Method::Post, CMS, Some(configmap("b", "a"))).await;
    events.expect("ADDED", "b").await;
}

fn revision_of(object: &Value) -> i64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .expect("a resourceVersion")
}

/// `cacher.go` `Watch`: a streaming list from a revision the store does not
/// reach within 3 s is a 200 whose only event is the ERROR 504 of
/// `storage.NewTooLargeResourceVersionError` (kube's
/// `TestWaitUntilWatchCacheFreshAndForceAllEvents`).
#[tokio::test]
async fn a_streaming_list_from_a_future_revision_ends_with_a_too_large_error_event() {
    let api = api_with_window(Duration::from_secs(300)).await;
    let created = write(&api, Method::Post, CMS, Some(configmap("a", "a"))).await;
    let current = revision_of(&created);
    let wanted = current + 1000;
    let mut events = Events::new(
        api.handle(request(
            Method::Get,
            &format!(
                "{CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan\
                 &allowWatchBookmarks=true&resourceVersion={wanted}"
            ),
            None,
        ))
        .await,
    );
    let error = events.next().await.expect("an ERROR event");
    assert_eq!(
        error,
        json!({"type": "ERROR", "object": {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("Timeout: Too large resource version: {wanted}, current: {current}"),
            "reason": "Timeout",
            "details": {"causes": [{"reason": "ResourceVersionTooLarge",
                "message": "Too large resource version"}], "retryAfterSeconds": 1},
            "code": 504}})
    );
    assert!(
        events.next().await.is_none(),
        "the watch ends after the error"
    );
}

/// A plain watch from a revision the store has not reached is started at
/// once and stays silent until the store passes it; then only the changes
/// after that revision come (`cache_watcher.go` `process` sends events newer
/// than the watch's resourceVersion; kube's `TestEmptyWatchEventCache` "RV+1").
#[tokio::test]
async fn a_plain_watch_from_a_future_revision_waits_for_it() {
    let api = api_with_window(Duration::from_secs(300)).await;
    let created = write(&api, Method::Post, CMS, Some(configmap("a", "a"))).await;
    let wanted = revision_of(&created) + 2;
    let mut events = Events::new(
        api.handle(request(
            Method::Get,
            &format!("{CMS}?watch=1&resourceVersion={wanted}"),
            None,
        ))
        .await,
    );
    let mut last = 0;
    for name in ["b", "c", "d"] {
        last = revision_of(&write(&api, Method::Post, CMS, Some(configmap(name, "a"))).await);
    }
    assert!(last > wanted);
    let event = events.expect("ADDED", "d").await;
    assert_eq!(revision_of(&event["object"]), last);
}
