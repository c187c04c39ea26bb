//! `resourceVersion`, `resourceVersionMatch`, `limit` and `continue` of LIST
//! and GET through `Api::handle`, cell by cell, with kube-apiserver 1.34's
//! codes and bodies (see `list_options.rs` for the sources).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use ferrokube_store::{Backend, LocalBackend, MemoryDisk, Store, DEFAULT_HISTORY_WINDOW};
use serde_json::{json, Value};

use super::list_options::{EXPIRED_LIST, INCONSISTENT_CONTINUE};
use super::{continue_token, Api, ApiRequest, ApiResponse, ContinueKey};
use crate::authn::UserInfo;
use crate::object::ObjectCodec;
use crate::route::Method;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

async fn api_with_window(window: Duration) -> Arc<Api> {
    let backend: Arc<dyn Backend> =
        Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    let store = Store::open_with_history(backend, ObjectCodec, window)
        .await
        .expect("store");
    let api = Api::new(
        store,
        "127.0.0.1:6443".into(),
        ContinueKey::random().expect("os random source"),
    );
    crate::bootstrap::ensure_system_namespaces(&api)
        .await
        .expect("namespaces");
    api
}

async fn api() -> Arc<Api> {
    api_with_window(DEFAULT_HISTORY_WINDOW).await
}

async fn call(api: &Arc<Api>, method: Method, path: &str, body: Option<Value>) -> ApiResponse {
    let mut request = ApiRequest::new(method, path);
    request.user = Some(UserInfo {
        name: "ferrokube-admin".into(),
        uid: String::new(),
        groups: vec!["system:masters".into()],
        extra: Default::default(),
    });
    if let Some(body) = body {
        request.body = bytes::Bytes::from(serde_json::to_vec(&body).expect("json"));
        let content_type = if method == Method::Patch {
            "application/merge-patch+json"
        } else {
            "application/json"
        };
        request.headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static(content_type),
        );
    }
    api.handle(request).await
}

async fn get(api: &Arc<Api>, path: &str) -> ApiResponse {
    call(api, Method::Get, path, None).await
}

fn revision(body: &Value) -> i64 {
    body["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {body}"))
}

/// Create `namespace/name` with `labels`; its resourceVersion.
async fn create_in(api: &Arc<Api>, namespace: &str, name: &str, labels: Value) -> i64 {
    let response = call(
        api,
        Method::Post,
        &format!("/api/v1/namespaces/{namespace}/configmaps"),
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})),
    )
    .await;
    assert_eq!(response.status, 201, "{}", response.body_json());
    revision(&response.body_json())
}

async fn create(api: &Arc<Api>, name: &str) -> i64 {
    create_in(api, "default", name, json!({})).await
}

async fn namespace(api: &Arc<Api>, name: &str) {
    let response = call(
        api,
        Method::Post,
        "/api/v1/namespaces",
        Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})),
    )
    .await;
    assert_eq!(response.status, 201);
}

/// Set `data.k` of `default/name`; the new resourceVersion.
async fn update(api: &Arc<Api>, name: &str, value: &str) -> i64 {
    let response = call(
        api,
        Method::Patch,
        &format!("{CMS}/{name}"),
        Some(json!({"data": {"k": value}})),
    )
    .await;
    assert_eq!(response.status, 200, "{}", response.body_json());
    revision(&response.body_json())
}

fn names(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items in {body}"))
        .iter()
        .map(|item| item["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect()
}

fn token(body: &Value) -> String {
    body["metadata"]["continue"]
        .as_str()
        .unwrap_or_else(|| panic!("no continue token in {body}"))
        .to_string()
}

fn status(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

/// The 422 of `ValidateListOptions` with one field error on `field`.
fn invalid(field: &str, kind: &str, body: &str) -> Value {
    let mut status = status(
        422,
        "Invalid",
        &format!("ListOptions.meta.k8s.io \"\" is invalid: {field}: {body}"),
    );
    status["details"] = json!({"group": "meta.k8s.io", "kind": "ListOptions",
        "causes": [{"reason": kind, "message": body, "field": field}]});
    status
}

fn too_large(wanted: i64, current: i64) -> Value {
    let mut status = status(
        504,
        "Timeout",
        &format!("Timeout: Too large resource version: {wanted}, current: {current}"),
    );
    status["details"] = json!({"causes": [{"reason": "ResourceVersionTooLarge",
        "message": "Too large resource version"}], "retryAfterSeconds": 1});
    status
}

/// What one cell must answer.
enum Want {
    /// 200 with this list resourceVersion and items; `more` when a continue
    /// token is expected, `remaining` the `remainingItemCount`.
    List {
        rv: i64,
        items: &'static [&'static str],
        more: bool,
        remaining: Option<u64>,
    },
    Status(Value),
}

fn check(query: &str, response: &ApiResponse, want: &Want) {
    let body = response.body_json();
    match want {
        Want::List {
            rv,
            items,
            more,
            remaining,
        } => {
            assert_eq!(response.status, 200, "?{query}: {body}");
            assert_eq!(revision(&body), *rv, "?{query}: resourceVersion");
            assert_eq!(names(&body), *items, "?{query}: items");
            assert_eq!(
                body["metadata"].get("continue").is_some(),
                *more,
                "?{query}: continue in {body}"
            );
            assert_eq!(
                body["metadata"]["remainingItemCount"].as_u64(),
                *remaining,
                "?{query}: remainingItemCount"
            );
        }
        Want::Status(expected) => {
            assert_eq!(
                (response.status, &body),
                (expected["code"].as_u64().unwrap_or(0) as u16, expected),
                "?{query}"
            );
        }
    }
}

/// Every cell of the API Concepts table (resourceVersion unset | "0" | N ×
/// resourceVersionMatch unset | NotOlderThan | Exact × limit / continue),
/// plus the invalid combinations, on a collection whose history is
/// a, b, c created (r1), d created (r2), a updated (r3 = current).
#[tokio::test]
async fn every_cell_of_the_list_table() {
    let api = api().await;
    create(&api, "a").await;
    create(&api, "b").await;
    let r1 = create(&api, "c").await;
    let r2 = create(&api, "d").await;
    let r3 = update(&api, "a", "changed").await;
    assert!(r1 < r2 && r2 < r3);

    // Tokens for the continue rows: page one of a current and of an exact list.
    let first = get(&api, &format!("{CMS}?limit=2")).await.body_json();
    let latest_token = token(&first);
    let first_at_r1 = get(&api, &format!("{CMS}?limit=2&resourceVersion={r1}"))
        .await
        .body_json();
    let r1_token = token(&first_at_r1);

    let all: &'static [&'static str] = &["a", "b", "c", "d"];
    fn list(rv: i64, items: &'static [&'static str], more: bool, remaining: Option<u64>) -> Want {
        Want::List {
            rv,
            items,
            more,
            remaining,
        }
    }
    let forbidden = |detail: &str| {
        invalid(
            "resourceVersionMatch",
            "FieldValueForbidden",
            &format!("Forbidden: {detail}"),
        )
    };
    let unsupported = invalid(
        "resourceVersionMatch",
        "FieldValueNotSupported",
        "Unsupported value: \"Foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
    );
    let cases: Vec<(String, Want)> = vec![
        // resourceVersionMatch unset.
        ("".into(), list(r3, all, false, None)),
        ("limit=2".into(), list(r3, &["a", "b"], true, Some(2))),
        (format!("continue={latest_token}"), list(r3, &["c", "d"], false, None)),
        (format!("limit=2&continue={latest_token}"), list(r3, &["c", "d"], false, None)),
        ("resourceVersion=0".into(), list(r3, all, false, None)),
        // The watch cache ignores limit for resourceVersion=0: everything, no token.
        ("resourceVersion=0&limit=2".into(), list(r3, all, false, None)),
        // "Invalid, treated as Continue Token".
        (format!("resourceVersion=0&continue={latest_token}"), list(r3, &["c", "d"], false, None)),
        // Not older than r1: the latest.
        (format!("resourceVersion={r1}"), list(r3, all, false, None)),
        // Legacy exact: the state at r1, paged.
        (format!("resourceVersion={r1}&limit=2"), list(r1, &["a", "b"], true, Some(1))),
        (format!("resourceVersion={r2}&limit=3"), list(r2, &["a", "b", "c"], true, Some(1))),
        (format!("continue={r1_token}"), list(r1, &["c"], false, None)),
        (
            format!("resourceVersion={r1}&continue={latest_token}"),
            Want::Status(status(400, "BadRequest", "specifying resource version is not allowed when using continue")),
        ),
        // resourceVersionMatch=NotOlderThan.
        ("resourceVersionMatch=NotOlderThan".into(), Want::Status(forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"))),
        ("resourceVersionMatch=NotOlderThan&limit=2".into(), Want::Status(forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"))),
        ("resourceVersion=0&resourceVersionMatch=NotOlderThan".into(), list(r3, all, false, None)),
        ("resourceVersion=0&resourceVersionMatch=NotOlderThan&limit=2".into(), list(r3, all, false, None)),
        (format!("resourceVersion={r1}&resourceVersionMatch=NotOlderThan"), list(r3, all, false, None)),
        (format!("resourceVersion={r1}&resourceVersionMatch=NotOlderThan&limit=2"), list(r3, &["a", "b"], true, Some(2))),
        (
            format!("resourceVersion={r1}&resourceVersionMatch=NotOlderThan&continue={latest_token}"),
            Want::Status(forbidden("resourceVersionMatch is forbidden when continue is provided")),
        ),
        // resourceVersionMatch=Exact.
        ("resourceVersionMatch=Exact".into(), Want::Status(forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"))),
        ("resourceVersion=0&resourceVersionMatch=Exact".into(), Want::Status(forbidden("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))),
        ("resourceVersion=0&resourceVersionMatch=Exact&limit=2".into(), Want::Status(forbidden("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))),
        (format!("resourceVersion={r1}&resourceVersionMatch=Exact"), list(r1, &["a", "b", "c"], false, None)),
        (format!("resourceVersion={r2}&resourceVersionMatch=Exact"), list(r2, all, false, None)),
        (format!("resourceVersion={r1}&resourceVersionMatch=Exact&limit=2"), list(r1, &["a", "b"], true, Some(1))),
        (
            format!("resourceVersion={r1}&resourceVersionMatch=Exact&continue={latest_token}"),
            Want::Status(forbidden("resourceVersionMatch is forbidden when continue is provided")),
        ),
        // An unknown match, alone and with other errors.
        (format!("resourceVersion={r1}&resourceVersionMatch=Foo"), Want::Status(unsupported)),
        ("resourceVersionMatch=Foo".into(), Want::Status({
            let mut status = status(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Unsupported value: \"Foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"]");
            status["details"] = json!({"group": "meta.k8s.io", "kind": "ListOptions", "causes": [
                {"reason": "FieldValueForbidden", "message": "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided", "field": "resourceVersionMatch"},
                {"reason": "FieldValueNotSupported", "message": "Unsupported value: \"Foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"", "field": "resourceVersionMatch"}]});
            status
        })),
        // sendInitialEvents is for watches only, whatever its value.
        ("sendInitialEvents=true".into(), Want::Status(invalid("sendInitialEvents", "FieldValueForbidden", "Forbidden: sendInitialEvents is forbidden for list"))),
        ("sendInitialEvents=false".into(), Want::Status(invalid("sendInitialEvents", "FieldValueForbidden", "Forbidden: sendInitialEvents is forbidden for list"))),
        // kube does not validate allowWatchBookmarks on a list: it is ignored.
        ("allowWatchBookmarks=true".into(), list(r3, all, false, None)),
        // resourceVersion must be a uint64 (storage.ValidateListOptions: 400).
        ("resourceVersion=abc".into(), Want::Status(status(400, "BadRequest", "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"))),
        ("resourceVersion=-1&limit=2".into(), Want::Status(status(400, "BadRequest", "invalid resource version: resourceVersion: Invalid value: \"-1\": strconv.ParseUint: parsing \"-1\": invalid syntax"))),
        // A bad token is reported before the resourceVersion next to it.
        ("continue=%21%21&resourceVersion=5".into(), Want::Status(status(400, "BadRequest", "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"))),
    ];
    for (query, want) in &cases {
        let response = get(&api, &format!("{CMS}?{query}")).await;
        check(query, &response, want);
    }

    // Exact reads show the objects as they were: `a` before its update.
    let at_r1 = get(
        &api,
        &format!("{CMS}?resourceVersion={r1}&resourceVersionMatch=Exact"),
    )
    .await
    .body_json();
    assert_eq!(at_r1["items"][0]["data"]["k"], "v");
    let latest = get(&api, CMS).await.body_json();
    assert_eq!(latest["items"][0]["data"]["k"], "changed");
    // Tables page the same way.
    let mut request = ApiRequest::new(Method::Get, &format!("{CMS}?limit=3"));
    request.user = Some(UserInfo {
        name: "admin".into(),
        uid: String::new(),
        groups: vec!["system:masters".into()],
        extra: Default::default(),
    });
    request.headers.insert(
        http::header::ACCEPT,
        http::HeaderValue::from_static("application/json;as=Table;v=v1;g=meta.k8s.io"),
    );
    let table = api.handle(request).await.body_json();
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["rows"].as_array().map(Vec::len), Some(3));
    assert_eq!(table["metadata"]["remainingItemCount"], 1);
    let rest = get(&api, &format!("{CMS}?limit=3&continue={}", token(&table)))
        .await
        .body_json();
    assert_eq!(names(&rest), ["d"]);
}

#[tokio::test]
async fn get_reads_most_recent_any_or_not_older_than() {
    let api = api().await;
    let r1 = create(&api, "a").await;
    let r2 = update(&api, "a", "changed").await;
    for query in [
        "",
        "?resourceVersion=0",
        &format!("?resourceVersion={r1}"),
        &format!("?resourceVersion={r2}"),
    ] {
        let response = get(&api, &format!("{CMS}/a{query}")).await;
        let body = response.body_json();
        assert_eq!((response.status, revision(&body)), (200, r2), "{query}");
        assert_eq!(body["data"]["k"], "changed");
    }
    let missing = get(&api, &format!("{CMS}/nope?resourceVersion={r1}")).await;
    assert_eq!(missing.status, 404);
    // kube's versioner error is no API status: a bare 500 without a reason.
    let response = get(&api, &format!("{CMS}/a?resourceVersion=abc")).await;
    assert_eq!(
        (response.status, response.body_json()),
        (
            500,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax",
                   "code": 500})
        )
    );
}

/// A revision the cache has not reached: wait 3 s, then 504 with
/// `Retry-After: 1`; one that arrives in time is served.
#[tokio::test]
async fn revisions_from_the_future_wait_then_time_out() {
    let api = api().await;
    let current = create(&api, "a").await;
    let future = current + 100;
    let paths = [
        format!("{CMS}?resourceVersion={future}"),
        format!("{CMS}?resourceVersion={future}&limit=2"),
        format!("{CMS}?resourceVersion={future}&resourceVersionMatch=NotOlderThan"),
        format!("{CMS}?resourceVersion={future}&resourceVersionMatch=Exact"),
        format!("{CMS}?resourceVersion={future}&resourceVersionMatch=Exact&limit=1"),
        format!("{CMS}/a?resourceVersion={future}"),
    ];
    let started = std::time::Instant::now();
    let responses = futures::future::join_all(paths.iter().map(|path| get(&api, path))).await;
    assert!(started.elapsed() >= Duration::from_secs(3));
    for (path, response) in paths.iter().zip(&responses) {
        assert_eq!(
            (response.status, response.body_json()),
            (504, too_large(future, current)),
            "{path}"
        );
        let retry_after = response
            .headers
            .iter()
            .find(|(name, _)| name == http::header::RETRY_AFTER)
            .map(|(_, value)| value.as_str());
        assert_eq!(retry_after, Some("1"), "{path}");
    }

    // Revisions that arrive while the request waits.
    let next = current + 1;
    let waiting = {
        let api = api.clone();
        tokio::spawn(async move {
            futures::future::join3(
                get(&api, &format!("{CMS}/a?resourceVersion={next}")),
                get(&api, &format!("{CMS}?resourceVersion={next}")),
                get(
                    &api,
                    &format!("{CMS}?resourceVersion={next}&resourceVersionMatch=Exact"),
                ),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(create(&api, "b").await, next);
    let (one, many, exact) = waiting.await.expect("join");
    assert_eq!((one.status, revision(&one.body_json())), (200, current));
    assert_eq!(many.status, 200);
    assert!(revision(&many.body_json()) >= next);
    assert_eq!(
        (
            exact.status,
            revision(&exact.body_json()),
            names(&exact.body_json())
        ),
        (200, next, vec!["a".to_string(), "b".to_string()])
    );
}

#[tokio::test]
async fn continue_tokens_are_signed() {
    let api = api().await;
    for name in ["a", "b", "c"] {
        create(&api, name).await;
    }
    let good = token(&get(&api, &format!("{CMS}?limit=1")).await.body_json());
    let (payload, mac) = good.split_once('.').expect("payload.mac");
    let flip = |text: &str, at: usize| {
        let mut bytes = text.as_bytes().to_vec();
        bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
        String::from_utf8(bytes).expect("ascii")
    };
    let other = api_with_window(DEFAULT_HISTORY_WINDOW).await;
    for name in ["a", "b", "c"] {
        create(&other, name).await;
    }
    let foreign = token(&get(&other, &format!("{CMS}?limit=1")).await.body_json());
    // A kube-style token (plain base64 JSON) is not ours either.
    let rv = revision(&get(&api, CMS).await.body_json());
    let unsigned = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!(
        r#"{{"v":"meta.k8s.io/v1","rv":{rv},"start":"a\u0000"}}"#
    ));
    let not_ours = status(
        400,
        "BadRequest",
        "invalid continue token: continue key is not valid: the token is not signed by this server",
    );
    let cases = [
        (format!("{}.{mac}", flip(payload, 5)), not_ours.clone()),
        (format!("{payload}.{}", flip(mac, 3)), not_ours.clone()),
        (payload.to_string(), not_ours.clone()),
        (foreign, not_ours.clone()),
        (unsigned, not_ours),
        (
            "%21%21%21".into(),
            status(400, "BadRequest", "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"),
        ),
    ];
    for (token, want) in cases {
        let response = get(&api, &format!("{CMS}?limit=1&continue={token}")).await;
        assert_eq!(
            (response.status, response.body_json()),
            (400, want),
            "{token}"
        );
    }
    let response = get(&api, &format!("{CMS}?limit=1&continue={good}")).await;
    assert_eq!(names(&response.body_json()), ["b"]);
}

/// `remainingItemCount` only without selectors and never on the last page;
/// with a selector a full page is followed by a token whenever any key is
/// left (the watch cache's rule), so the last page may be empty.
#[tokio::test]
async fn remaining_item_count_and_selectors() {
    let api = api().await;
    namespace(&api, "rem").await;
    for (name, tier) in [
        ("p1", "x"),
        ("p2", "x"),
        ("p3", "y"),
        ("p4", "x"),
        ("p5", "y"),
    ] {
        create_in(&api, "rem", name, json!({"tier": tier})).await;
    }
    let path = "/api/v1/namespaces/rem/configmaps";
    // Follow every page of `query`: (items, continue?, remainingItemCount) per page.
    let pages = |query: &'static str| {
        let api = api.clone();
        async move {
            let mut pages = Vec::new();
            let mut next = String::new();
            loop {
                let body = get(&api, &format!("{path}?{query}{next}"))
                    .await
                    .body_json();
                let token = body["metadata"]["continue"].as_str().map(str::to_string);
                pages.push((
                    names(&body),
                    token.is_some(),
                    body["metadata"]["remainingItemCount"].as_u64(),
                ));
                match token {
                    Some(token) => next = format!("&continue={token}"),
                    None => return pages,
                }
            }
        }
    };
    let strings = |items: &[&str]| {
        items
            .iter()
            .map(|item| item.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pages("limit=2").await,
        vec![
            (strings(&["p1", "p2"]), true, Some(3)),
            (strings(&["p3", "p4"]), true, Some(1)),
            (strings(&["p5"]), false, None),
        ]
    );
    assert_eq!(
        pages("limit=5").await,
        vec![(strings(&["p1", "p2", "p3", "p4", "p5"]), false, None)]
    );
    assert_eq!(
        pages("limit=2&labelSelector=tier%3Dx").await,
        vec![
            (strings(&["p1", "p2"]), true, None),
            (strings(&["p4"]), false, None)
        ]
    );
    assert_eq!(
        pages("limit=1&labelSelector=tier%3Dx").await,
        vec![
            (strings(&["p1"]), true, None),
            (strings(&["p2"]), true, None),
            (strings(&["p4"]), true, None),
            (strings(&[]), false, None),
        ]
    );
    assert_eq!(
        pages("limit=3&fieldSelector=metadata.name%21%3Dp2").await,
        vec![
            (strings(&["p1", "p3", "p4"]), true, None),
            (strings(&["p5"]), false, None)
        ]
    );
}

/// Outside the history window: an Exact list is 410 Expired; a continue token
/// is 410 with a fresh token that continues from the same key at the latest
/// revision (`etcd3` `handleCompactedErrorForPaging`).
#[tokio::test]
async fn expired_revisions_and_inconsistent_continue() {
    let api = api_with_window(Duration::from_millis(300)).await;
    for name in ["x1", "x2", "x3", "x4", "x5"] {
        create(&api, name).await;
    }
    let first = get(&api, &format!("{CMS}?limit=2")).await.body_json();
    let listed_at = revision(&first);
    assert_eq!(names(&first), ["x1", "x2"]);
    let stale = token(&first);
    create(&api, "y1").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    // The next change pushes y1 (the first change after `listed_at`) out of the window.
    let current = create(&api, "y2").await;

    for query in [
        format!("resourceVersion={listed_at}&resourceVersionMatch=Exact"),
        format!("resourceVersion={listed_at}&limit=2"),
    ] {
        let response = get(&api, &format!("{CMS}?{query}")).await;
        assert_eq!(
            (response.status, response.body_json()),
            (410, status(410, "Expired", EXPIRED_LIST)),
            "{query}"
        );
    }
    let response = get(&api, &format!("{CMS}?limit=2&continue={stale}")).await;
    let body = response.body_json();
    let fresh = token(&body);
    let mut expected = status(410, "Expired", INCONSISTENT_CONTINUE);
    expected["metadata"] = json!({"continue": fresh});
    assert_eq!((response.status, body), (410, expected));
    assert_eq!(
        continue_token::decode(&api.continue_key, &fresh, "/registry/configmaps/default/"),
        Ok(continue_token::Continuation {
            revision: -1,
            start: "/registry/configmaps/default/x2\u{0}".into()
        })
    );
    // Following it: the rest at the latest revision, which later pages keep.
    let mut seen = Vec::new();
    let mut next = fresh;
    loop {
        let body = get(&api, &format!("{CMS}?limit=2&continue={next}"))
            .await
            .body_json();
        assert_eq!(revision(&body), current);
        seen.extend(names(&body));
        match body["metadata"]["continue"].as_str() {
            Some(token) => next = token.to_string(),
            None => break,
        }
    }
    assert_eq!(seen, ["x3", "x4", "x5", "y1", "y2"]);
}

/// Every page of a chunked list has the first page's resourceVersion and
/// together they are exactly the collection at that revision, while writers
/// create, update and delete objects in between.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pages_keep_one_revision_under_concurrent_writes() {
    let api = api().await;
    namespace(&api, "busy").await;
    let path = "/api/v1/namespaces/busy/configmaps";
    for index in 0..30 {
        create_in(&api, "busy", &format!("cm-{index:02}"), json!({})).await;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicUsize::new(0));
    let mut writers = Vec::new();
    for writer in 0..3 {
        let (api, stop, writes) = (api.clone(), stop.clone(), writes.clone());
        writers.push(tokio::spawn(async move {
            let mut round = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let target = format!("{path}/cm-{:02}", (round * 7 + writer) % 30);
                let response = match round % 3 {
                    0 => {
                        call(
                            &api,
                            Method::Patch,
                            &target,
                            Some(json!({"data": {"k": format!("{round}")}})),
                        )
                        .await
                    }
                    1 => {
                        call(
                            &api,
                            Method::Post,
                            path,
                            Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": format!("new-{writer}-{round}")}})),
                        )
                        .await
                    }
                    _ => {
                        call(
                            &api,
                            Method::Delete,
                            &format!("{path}/new-{writer}-{}", round - 1),
                            None,
                        )
                        .await
                    }
                };
                if response.status < 300 {
                    writes.fetch_add(1, Ordering::Relaxed);
                }
                round += 1;
            }
        }));
    }
    while writes.load(Ordering::Relaxed) < 20 {
        tokio::task::yield_now().await;
    }
    let mut pages = Vec::new();
    let mut next = String::new();
    loop {
        let body = get(&api, &format!("{path}?limit=4{next}"))
            .await
            .body_json();
        pages.push(body.clone());
        let before = writes.load(Ordering::Relaxed);
        while writes.load(Ordering::Relaxed) < before + 3 {
            tokio::task::yield_now().await;
        }
        match body["metadata"]["continue"].as_str() {
            Some(token) => next = format!("&continue={token}"),
            None => break,
        }
    }
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.expect("writer");
    }
    let listed_at = revision(&pages[0]);
    assert!(pages.len() > 5, "{} pages", pages.len());
    let mut paged = Vec::new();
    for page in &pages {
        assert_eq!(
            revision(page),
            listed_at,
            "every page at the first page's revision"
        );
        for item in page["items"].as_array().expect("items") {
            paged.push(item.clone());
        }
    }
    let exact = get(
        &api,
        &format!("{path}?resourceVersion={listed_at}&resourceVersionMatch=Exact"),
    )
    .await
    .body_json();
    assert_eq!(paged, exact["items"].as_array().cloned().expect("items"));
    let latest = get(&api, path).await.body_json();
    assert!(revision(&latest) > listed_at + 10, "writers kept writing");
    assert_ne!(latest["items"], exact["items"]);
}
