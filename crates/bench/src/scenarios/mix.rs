//! `mix`: what a few controllers do to a server. --informers list-watch
//! informers, each a LIST then a WATCH from its resourceVersion of Pods
//! and of ConfigMaps (as client-go's reflector), while half of
//! --concurrency clients create ConfigMaps and the other half update the
//! status of a Pod of their own (a merge patch of `/status`, as kube-rs
//! and many controllers write status). Per-op latency of each writer, and
//! watch delivery latency: receive time − the send time each write
//! carries (`bench-sent-ns`), over every informer stream.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::{Method, StatusCode};
use serde::Serialize;
use tokio::sync::watch as signal;

use super::list::pod_body;
use super::watch::{find, find_byte};
use super::write::{resource_version, MERGE_PATCH};
use super::{ensure_namespace, run_id, Endpoint};
use crate::cli::Cli;
use crate::client::{Client, Session, JSON};
use crate::report::LoadResult;
use crate::report::ScenarioResult;
use crate::runner::{self, snippet, ErrorTally, LoadOptions, Workload};
use crate::stats::{round3, Histogram, LatencySummary, MinMedMax, Quantile};
use crate::BenchError;

const SENT_MARKER: &[u8] = b"bench-sent-ns";

/// The send time a write carried, out of one watch event line: the digits
/// after `bench-sent-ns` (`":"` in a ConfigMap's data, `=` in a Pod's
/// status message).
pub fn sent_ns(line: &[u8]) -> Option<u64> {
    let at = find(line, SENT_MARKER)? + SENT_MARKER.len();
    let rest = &line[at..];
    let start = rest.iter().take(4).position(u8::is_ascii_digit)?;
    let digits = &rest[start..];
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

#[derive(Debug, Clone, Serialize)]
pub struct MixResult {
    pub informers: usize,
    /// Watch streams open at the end (informers × 2 when all held).
    pub streams: usize,
    pub pods: usize,
    /// Each informer's initial LIST, ms.
    pub initial_list_ms: MinMedMax,
    pub creates: LoadResult,
    pub status_updates: LoadResult,
    /// Receive time − send time, per (stream, event), for writes sent
    /// after the warm-up.
    pub delivery: LatencySummary,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub delivery_distribution: Vec<Quantile>,
    /// Events that carried a send time.
    pub events: u64,
    pub bookmarks: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub watch_errors: Vec<ErrorTally>,
}

struct Clock {
    base: Instant,
}

impl Clock {
    fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }
}

struct MixCreates {
    clock: Arc<Clock>,
    namespace: String,
    run: String,
}

impl Workload for MixCreates {
    fn request(&self, worker: usize, seq: u64) -> (Method, String, Option<Bytes>) {
        let ns = &self.namespace;
        let run = &self.run;
        let sent = self.clock.now_ns();
        let body = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"mix-{run}-{worker}-{seq}","namespace":"{ns}","labels":{{"app.kubernetes.io/managed-by":"ferrokube-bench","ferrokube-bench/run":"{run}"}}}},"data":{{"bench-sent-ns":"{sent}","owner":"controller-{worker}"}}}}"#
        );
        (
            Method::POST,
            format!("/api/v1/namespaces/{ns}/configmaps"),
            Some(Bytes::from(body)),
        )
    }
}

struct StatusUpdates {
    clock: Arc<Clock>,
    namespace: String,
    run: String,
}

impl Workload for StatusUpdates {
    fn request(&self, worker: usize, seq: u64) -> (Method, String, Option<Bytes>) {
        let sent = self.clock.now_ns();
        let body = format!(
            r#"{{"status":{{"phase":"Running","message":"bench-sent-ns={sent} reconcile {seq}"}}}}"#
        );
        (
            Method::PATCH,
            format!(
                "/api/v1/namespaces/{}/pods/mix-{}-{worker}/status",
                self.namespace, self.run
            ),
            Some(Bytes::from(body)),
        )
    }

    fn content_type(&self) -> &str {
        MERGE_PATCH
    }
}

#[derive(Default)]
struct StreamOutcome {
    delivery: Histogram,
    events: u64,
    bookmarks: u64,
    open_at_end: bool,
    error: Option<(String, String)>,
}

/// One informer stream: LIST, then WATCH from the list's revision until
/// `stop`.
async fn informer_stream(
    mut session: Session,
    path: String,
    clock: Arc<Clock>,
    record_from_ns: u64,
    timeout: Duration,
    mut stop: signal::Receiver<bool>,
) -> (Option<f64>, StreamOutcome) {
    let mut outcome = StreamOutcome::default();
    let started = Instant::now();
    let listed = tokio::time::timeout(timeout, session.send(Method::GET, &path, None)).await;
    let rv = match listed {
        Ok(Ok(reply)) if reply.status == StatusCode::OK => resource_version(&reply.body),
        Ok(Ok(reply)) => {
            outcome.error = Some((
                format!("list HTTP {}", reply.status.as_u16()),
                snippet(&reply.body, 200),
            ));
            return (None, outcome);
        }
        Ok(Err(e)) => {
            outcome.error = Some((format!("list {}", e.kind()), e.to_string()));
            return (None, outcome);
        }
        Err(_) => {
            outcome.error = Some(("list timeout".into(), format!("{timeout:?}")));
            return (None, outcome);
        }
    };
    let list_ms = round3(started.elapsed().as_secs_f64() * 1e3);
    let Some(rv) = rv else {
        outcome.error = Some(("list".into(), "no resourceVersion in the list".into()));
        return (Some(list_ms), outcome);
    };
    let url = format!("{path}?watch=1&allowWatchBookmarks=true&resourceVersion={rv}");
    let response =
        match tokio::time::timeout(timeout, session.open(Method::GET, &url, None, JSON)).await {
            Ok(Ok(r)) if r.status() == StatusCode::OK => r,
            Ok(Ok(r)) => {
                outcome.error = Some((format!("watch HTTP {}", r.status().as_u16()), url));
                return (Some(list_ms), outcome);
            }
            Ok(Err(e)) => {
                outcome.error = Some((format!("watch {}", e.kind()), e.to_string()));
                return (Some(list_ms), outcome);
            }
            Err(_) => {
                outcome.error = Some(("watch timeout".into(), format!("{timeout:?}")));
                return (Some(list_ms), outcome);
            }
        };
    let mut body = response.into_body();
    let mut pending = BytesMut::new();
    let mut stopped = std::pin::pin!(stop.changed());
    loop {
        let frame = tokio::select! {
            biased;
            frame = body.frame() => frame,
            _ = &mut stopped => {
                outcome.open_at_end = true;
                break;
            }
        };
        let data = match frame {
            None => {
                outcome.error = Some(("watch ended".into(), "the server ended the stream".into()));
                break;
            }
            Some(Err(e)) => {
                outcome.error = Some(("watch body".into(), e.to_string()));
                break;
            }
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
        };
        let now = clock.now_ns();
        pending.extend_from_slice(&data);
        while let Some(end) = find_byte(&pending, b'\n') {
            let line = pending.split_to(end + 1);
            if line.starts_with(b"{\"type\":\"BOOKMARK\"") {
                outcome.bookmarks += 1;
            } else if let Some(sent) = sent_ns(&line) {
                outcome.events += 1;
                if sent >= record_from_ns {
                    outcome.delivery.record_nanos(now.saturating_sub(sent));
                }
            }
        }
    }
    (Some(list_ms), outcome)
}

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<crate::report::ScenarioResult, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let run = run_id();
    let ns = cli.namespace.clone();
    let status_clients = (cli.concurrency / 2).max(1);
    let create_clients = cli.concurrency.saturating_sub(status_clients).max(1);
    // One Pod per status client.
    for worker in 0..status_clients {
        let name = format!("mix-{run}-{worker}");
        let reply = client
            .request(
                Method::POST,
                &format!("/api/v1/namespaces/{ns}/pods"),
                Some(Bytes::from(pod_body(&name, &ns, &run))),
            )
            .await?;
        if !reply.status.is_success() {
            return Err(BenchError::Setup(format!(
                "creating Pod {name}: HTTP {}: {}",
                reply.status.as_u16(),
                snippet(&reply.body, 300)
            )));
        }
    }
    let clock = Arc::new(Clock {
        base: Instant::now(),
    });
    let timeout = Duration::from_secs_f64(cli.timeout);
    // Writes sent during the warm-up are not counted, as the load runner
    // does not count their latency.
    let record_from_ns = Duration::from_secs_f64(cli.warmup_s()).as_nanos() as u64;
    let (stop_tx, stop_rx) = signal::channel(false);
    let mut streams = tokio::task::JoinSet::new();
    for informer in 0..cli.informers {
        for plural in ["pods", "configmaps"] {
            streams.spawn(informer_stream(
                client.session(informer),
                format!("/api/v1/namespaces/{ns}/{plural}"),
                clock.clone(),
                record_from_ns,
                timeout,
                stop_rx.clone(),
            ));
        }
    }
    // Informers start before the writers, as controllers sync first.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let creates = MixCreates {
        clock: clock.clone(),
        namespace: ns.clone(),
        run: run.clone(),
    };
    let statuses = StatusUpdates {
        clock,
        namespace: ns.clone(),
        run: run.clone(),
    };
    let mut create_options = cli.load_options(&format!("{label} (creates)"), endpoint.pid());
    create_options.concurrency = create_clients;
    let status_options = LoadOptions {
        concurrency: status_clients,
        progress: None,
        ..create_options.clone()
    };
    let (created, updated) = tokio::join!(
        runner::run(&client, Arc::new(creates), &create_options),
        runner::run(&client, Arc::new(statuses), &status_options),
    );
    // Stragglers still on their way to the informers.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = stop_tx.send(true);
    let mut delivery = Histogram::new();
    let mut events = 0;
    let mut bookmarks = 0;
    let mut open = 0;
    let mut list_ms = Vec::new();
    let mut errors: std::collections::BTreeMap<String, ErrorTally> = Default::default();
    while let Some(joined) = streams.join_next().await {
        let Ok((listed, outcome)) = joined else {
            continue;
        };
        list_ms.extend(listed);
        delivery.merge(&outcome.delivery);
        events += outcome.events;
        bookmarks += outcome.bookmarks;
        open += usize::from(outcome.open_at_end);
        if let Some((kind, sample)) = outcome.error {
            errors
                .entry(kind)
                .and_modify(|t| t.count += 1)
                .or_insert(ErrorTally { count: 1, sample });
        }
    }
    let load = |outcome: &runner::LoadOutcome, clients: usize| {
        LoadResult::from_outcome(
            outcome,
            clients,
            client.protocol(),
            client.pooled_connections(),
            0,
            0,
            cli.warmup_s(),
        )
    };
    Ok(ScenarioResult {
        scenario: "mix".into(),
        label: label.to_string(),
        target: endpoint.target.clone(),
        mix: Some(MixResult {
            informers: cli.informers,
            streams: open,
            pods: status_clients,
            initial_list_ms: MinMedMax::of(&list_ms).unwrap_or_default(),
            creates: load(&created, create_clients),
            status_updates: load(&updated, status_clients),
            delivery: delivery.summary(),
            delivery_distribution: delivery.distribution(),
            events,
            bookmarks,
            watch_errors: errors
                .into_iter()
                .map(|(kind, t)| ErrorTally {
                    count: t.count,
                    sample: format!("{kind}: {}", t.sample),
                })
                .collect(),
        }),
        server_memory: endpoint.memory(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_send_times_from_both_kinds() {
        let cm = br#"{"type":"ADDED","object":{"kind":"ConfigMap","data":{"bench-sent-ns":"123456","owner":"c"}}}"#;
        assert_eq!(sent_ns(cm), Some(123_456));
        let pod = br#"{"type":"MODIFIED","object":{"kind":"Pod","status":{"message":"bench-sent-ns=987 reconcile 3","phase":"Running"}}}"#;
        assert_eq!(sent_ns(pod), Some(987));
        assert_eq!(sent_ns(br#"{"type":"ADDED","object":{}}"#), None);
        assert_eq!(sent_ns(br#"{"bench-sent-ns":"x"}"#), None);
    }

    #[test]
    fn writers_carry_their_send_time() {
        let clock = Arc::new(Clock {
            base: Instant::now(),
        });
        let creates = MixCreates {
            clock: clock.clone(),
            namespace: "ns".into(),
            run: "r".into(),
        };
        let (method, path, body) = creates.request(1, 2);
        assert_eq!(method, Method::POST);
        assert_eq!(path, "/api/v1/namespaces/ns/configmaps");
        let body = body.expect("body");
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["metadata"]["name"], "mix-r-1-2");
        assert!(sent_ns(&body).is_some());
        let statuses = StatusUpdates {
            clock,
            namespace: "ns".into(),
            run: "r".into(),
        };
        let (method, path, body) = statuses.request(3, 4);
        assert_eq!(method, Method::PATCH);
        assert_eq!(path, "/api/v1/namespaces/ns/pods/mix-r-3/status");
        assert_eq!(statuses.content_type(), MERGE_PATCH);
        let body = body.expect("body");
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["status"]["phase"], "Running");
        assert!(sent_ns(&body).is_some());
    }
}
