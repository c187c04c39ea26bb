//! The `faults` scenario's watchers: list, then watch from the list's
//! resourceVersion with `allowWatchBookmarks`, and after every end of the
//! stream (timeoutSeconds, a killed server, a reset) resume from the last
//! resourceVersion seen, as client-go's reflector does
//! (`tools/cache/reflector.go`, `watchHandler` / `ListAndWatch`). A 410
//! Gone (as the HTTP answer or as an ERROR event) ends the covered
//! segment: the watcher relists and starts a new one, and the 410 is
//! counted. Every event is kept for the check; a resourceVersion not above
//! the last one seen is recorded as an order violation on the spot.

use std::time::{Duration, Instant};

use bytes::BytesMut;
use http_body_util::BodyExt;
use hyper::{Method, StatusCode};
use serde_json::Value;

use super::fault_history::{rv_and_content, ObjectKey, Observed, Rng, RUN_LABEL};
use crate::client::{Client, Session};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

/// One ADDED / MODIFIED / DELETED event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub rv: u64,
    pub key: ObjectKey,
    pub kind: EventType,
    pub content: String,
}

/// A stretch of revisions the watcher covered without a break in the
/// chain of resumes: it must have seen every change in `(from, to]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub from: u64,
    pub to: u64,
}

/// What one watcher saw.
#[derive(Debug, Default)]
pub struct WatcherLog {
    pub name: String,
    /// Only this namespace (none: every namespace).
    pub namespace: Option<String>,
    pub events: Vec<Seen>,
    pub segments: Vec<Segment>,
    /// Objects the lists showed.
    pub listed: Vec<Observed>,
    /// Watch requests after the first one.
    pub resumes: u64,
    /// 410 Gone answers (each followed by a relist).
    pub gone: u64,
    pub bookmarks: u64,
    /// Events whose resourceVersion was not above the last one seen.
    pub order_violations: Vec<String>,
    /// Whether it reached the final revision before its deadline.
    pub reached_end: bool,
}

/// One watcher's settings.
pub struct WatcherConfig {
    pub client: Client,
    pub index: usize,
    pub name: String,
    pub namespace: Option<String>,
    pub run: String,
    pub seed: u64,
    /// The revision to reach before returning (set once writes are over).
    pub end: tokio::sync::watch::Receiver<Option<u64>>,
    /// Give up waiting for `end` this long after it was set.
    pub catch_up: Duration,
    pub timeout: Duration,
}

impl WatcherConfig {
    fn collection(&self) -> String {
        collection(self.namespace.as_deref(), &self.run)
    }
}

/// The ConfigMaps of run `run`, in `namespace` or everywhere.
pub fn collection(namespace: Option<&str>, run: &str) -> String {
    let selector = format!("labelSelector={}%3D{run}", RUN_LABEL.replace('/', "%2F"));
    match namespace {
        Some(ns) => format!("/api/v1/namespaces/{ns}/configmaps?{selector}"),
        None => format!("/api/v1/configmaps?{selector}"),
    }
}

/// How one watch request ended.
enum Ended {
    /// The stream ended or broke: resume from the last resourceVersion.
    Resume,
    /// 410 Gone: relist.
    Gone,
    /// The final revision was reached.
    Done,
}

/// Lists, then watches and resumes until the final revision is seen.
pub async fn watcher(mut config: WatcherConfig) -> WatcherLog {
    let mut log = WatcherLog {
        name: config.name.clone(),
        namespace: config.namespace.clone(),
        ..WatcherLog::default()
    };
    let mut rng = Rng::new(config.seed);
    let mut session = config.client.session(config.index);
    let mut deadline: Option<Instant> = None;
    let mut first_watch = true;
    'list: loop {
        let Some(start) = list(&mut config, &mut session, &mut log, deadline).await else {
            return log;
        };
        let mut segment = Segment {
            from: start,
            to: start,
        };
        loop {
            if deadline.is_none() && config.end.borrow().is_some() {
                deadline = Some(Instant::now() + config.catch_up);
            }
            if let Some(end) = *config.end.borrow() {
                if segment.to >= end {
                    log.reached_end = true;
                    log.segments.push(segment);
                    return log;
                }
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                log.segments.push(segment);
                return log;
            }
            if !first_watch {
                log.resumes += 1;
            }
            first_watch = false;
            // Streams end by themselves too, as client-go's random
            // timeouts make them.
            let timeout_seconds = 2 + rng.below(8);
            let path = format!(
                "{}&watch=1&allowWatchBookmarks=true&resourceVersion={}&timeoutSeconds={timeout_seconds}",
                config.collection(),
                segment.to
            );
            match watch_once(&mut config, &mut session, &path, &mut segment, &mut log).await {
                Ended::Resume => {}
                Ended::Done => {
                    log.reached_end = true;
                    log.segments.push(segment);
                    return log;
                }
                Ended::Gone => {
                    log.gone += 1;
                    log.segments.push(segment);
                    continue 'list;
                }
            }
        }
    }
}

/// The list's resourceVersion (its items recorded), retried until the
/// server answers; none past the deadline.
async fn list(
    config: &mut WatcherConfig,
    session: &mut Session,
    log: &mut WatcherLog,
    deadline: Option<Instant>,
) -> Option<u64> {
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return None;
        }
        let path = config.collection();
        let answer =
            tokio::time::timeout(config.timeout, session.send(Method::GET, &path, None)).await;
        if let Ok(Ok(reply)) = answer {
            if reply.status == StatusCode::OK {
                if let Ok(list) = serde_json::from_slice::<Value>(&reply.body) {
                    let rv = list["metadata"]["resourceVersion"]
                        .as_str()
                        .and_then(|s| s.parse::<u64>().ok());
                    if let Some(rv) = rv {
                        for item in list["items"].as_array().into_iter().flatten() {
                            if let (Some(key), Some((item_rv, content))) =
                                (key_of(item), rv_and_content(item))
                            {
                                log.listed.push((key, item_rv, content));
                            }
                        }
                        return Some(rv);
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn key_of(object: &Value) -> Option<ObjectKey> {
    Some(ObjectKey {
        namespace: object["metadata"]["namespace"].as_str()?.to_string(),
        name: object["metadata"]["name"].as_str()?.to_string(),
    })
}

/// One watch request, its events appended to `log`.
async fn watch_once(
    config: &mut WatcherConfig,
    session: &mut Session,
    path: &str,
    segment: &mut Segment,
    log: &mut WatcherLog,
) -> Ended {
    let opened = tokio::time::timeout(
        config.timeout,
        session.open(Method::GET, path, None, crate::client::JSON),
    )
    .await;
    let response = match opened {
        Ok(Ok(response)) => response,
        _ => {
            tokio::time::sleep(Duration::from_millis(100)).await;
            return Ended::Resume;
        }
    };
    match response.status() {
        StatusCode::OK => {}
        StatusCode::GONE => return Ended::Gone,
        _ => {
            tokio::time::sleep(Duration::from_millis(100)).await;
            return Ended::Resume;
        }
    }
    let mut body = response.into_body();
    let mut pending = BytesMut::new();
    let mut end = config.end.clone();
    loop {
        let frame = tokio::select! {
            frame = body.frame() => frame,
            changed = end.changed() => {
                if changed.is_err() {
                    return Ended::Resume;
                }
                if end.borrow().is_some_and(|e| segment.to >= e) {
                    return Ended::Done;
                }
                // Keep reading until the deadline; the caller checks it.
                tokio::time::sleep(Duration::ZERO).await;
                continue;
            }
            () = tokio::time::sleep(Duration::from_millis(500)) => {
                if end.borrow().is_some() {
                    // Let the caller check the deadline now and then.
                    return Ended::Resume;
                }
                continue;
            }
        };
        let data = match frame {
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
            _ => return Ended::Resume,
        };
        pending.extend_from_slice(&data);
        while let Some(newline) = pending.iter().position(|&b| b == b'\n') {
            let line = pending.split_to(newline + 1);
            match event_line(&line, segment, log) {
                Some(ended) => return ended,
                None => {
                    if end.borrow().is_some_and(|e| segment.to >= e) {
                        return Ended::Done;
                    }
                }
            }
        }
    }
}

/// Takes one line of the stream; `Some` when the stream must end.
fn event_line(line: &[u8], segment: &mut Segment, log: &mut WatcherLog) -> Option<Ended> {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return None;
    }
    let Ok(event) = serde_json::from_slice::<Value>(trimmed) else {
        log.order_violations.push(format!(
            "{}: not a JSON watch event: {}",
            log.name,
            String::from_utf8_lossy(trimmed)
        ));
        return Some(Ended::Resume);
    };
    let object = &event["object"];
    let kind = match event["type"].as_str() {
        Some("ADDED") => EventType::Added,
        Some("MODIFIED") => EventType::Modified,
        Some("DELETED") => EventType::Deleted,
        Some("BOOKMARK") => {
            log.bookmarks += 1;
            if let Some(rv) = object["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
            {
                if rv < segment.to {
                    log.order_violations.push(format!(
                        "{}: BOOKMARK at {rv} after {}",
                        log.name, segment.to
                    ));
                }
                segment.to = segment.to.max(rv);
            }
            return None;
        }
        Some("ERROR") if object["code"].as_u64() == Some(410) => return Some(Ended::Gone),
        _ => return Some(Ended::Resume),
    };
    let (Some(key), Some((rv, content))) = (key_of(object), rv_and_content(object)) else {
        log.order_violations.push(format!(
            "{}: an event without namespace, name or resourceVersion: {}",
            log.name,
            String::from_utf8_lossy(trimmed)
        ));
        return None;
    };
    if rv <= segment.to {
        log.order_violations.push(format!(
            "{}: {kind:?} {key} at {rv} after {} (duplicate or out of order)",
            log.name, segment.to
        ));
    }
    segment.to = segment.to.max(rv);
    log.events.push(Seen {
        rv,
        key,
        kind,
        content,
    });
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log() -> WatcherLog {
        WatcherLog {
            name: "w".into(),
            ..WatcherLog::default()
        }
    }

    #[test]
    fn events_advance_the_segment_and_out_of_order_ones_are_recorded() {
        let mut log = log();
        let mut segment = Segment { from: 10, to: 10 };
        let added = br#"{"type":"ADDED","object":{"metadata":{"namespace":"a","name":"x","resourceVersion":"12"},"data":{"v":"w0-1"}}}"#;
        assert!(event_line(added, &mut segment, &mut log).is_none());
        assert_eq!(segment.to, 12);
        assert_eq!(log.events[0].kind, EventType::Added);
        assert_eq!(log.events[0].content, "w0-1");
        // The same event again: a duplicate.
        assert!(event_line(added, &mut segment, &mut log).is_none());
        assert_eq!(log.order_violations.len(), 1);
        let bookmark = br#"{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"20"}}}"#;
        assert!(event_line(bookmark, &mut segment, &mut log).is_none());
        assert_eq!((segment.to, log.bookmarks), (20, 1));
        let gone = br#"{"type":"ERROR","object":{"kind":"Status","code":410}}"#;
        assert!(matches!(
            event_line(gone, &mut segment, &mut log),
            Some(Ended::Gone)
        ));
        let other = br#"{"type":"ERROR","object":{"kind":"Status","code":500}}"#;
        assert!(matches!(
            event_line(other, &mut segment, &mut log),
            Some(Ended::Resume)
        ));
        assert!(event_line(b"\n", &mut segment, &mut log).is_none());
    }

    #[test]
    fn collections_select_the_run() {
        assert_eq!(
            collection(Some("ns"), "abc"),
            "/api/v1/namespaces/ns/configmaps?labelSelector=ferrokube-bench%2Ffaults-run%3Dabc"
        );
        assert_eq!(
            collection(None, "abc"),
            "/api/v1/configmaps?labelSelector=ferrokube-bench%2Ffaults-run%3Dabc"
        );
    }
}
