//! `watch`: --watchers concurrent watches of the ConfigMaps of one
//! namespace (`?watch=1&resourceVersion=<a list's>&allowWatchBookmarks=true`,
//! JSON, one event a line), multiplexed over HTTP/2 connections of their own
//! (ceil(watchers / --streams-per-connection)), then a writer updating
//! ConfigMaps at --writes-per-second for --duration, open loop.
//!
//! Every update carries its sequence number and its send time (nanoseconds
//! on this process's monotonic clock) in its data; the tool also notes when
//! its response came back. Each watcher notes when each event arrived, so
//! delivery latency is measured both from the send and from the response,
//! and a missing, duplicate or unexpected event is counted per watcher.
//! With a started server it also reads the server's RSS before the
//! watchers, with them idle, and during the run, and its CPU time.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::{Method, StatusCode};
use tokio::sync::watch as signal;

use super::{ensure_namespace, run_id, Endpoint};
use crate::cli::Cli;
use crate::client::{Client, ClientOptions, Session, JSON};
use crate::cpu;
use crate::report::{EventStats, ScenarioResult, ServerCpu, WatchMemory, WatchResult, WriteStats};
use crate::runner::{self, snippet, ErrorTally};
use crate::stats::{round3, Histogram};
use crate::BenchError;

/// ConfigMaps the writer cycles through (update `i` goes to `i % this`).
const WRITE_TARGETS: usize = 10;
/// How long to wait for the last events after the last update answered.
const DRAIN: Duration = Duration::from_secs(10);
/// How often the server's RSS is read during the run.
const RSS_EVERY: Duration = Duration::from_millis(250);

/// The data key carrying an update's sequence number, `<run>-<seq>`. Keys
/// sort before `payload` so the marker comes early in the event.
const SEQ_KEY: &str = "bench-seq";
const SENT_KEY: &str = "bench-sent-ns";

/// An update body of exactly `size` bytes (or its minimum): a ConfigMap
/// whose data carries `seq` and `sent_ns`, padded through `data.payload`.
pub fn update_body(
    name: &str,
    namespace: &str,
    run: &str,
    seq: usize,
    sent_ns: u64,
    size: usize,
) -> Vec<u8> {
    let head = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"{namespace}","labels":{{"app.kubernetes.io/managed-by":"ferrokube-bench","ferrokube-bench/run":"{run}"}}}},"data":{{"{SENT_KEY}":"{sent_ns}","{SEQ_KEY}":"{run}-{seq}","payload":""#
    );
    let tail = r#""}}"#;
    let pad = size.saturating_sub(head.len() + tail.len());
    let mut body = Vec::with_capacity(head.len() + pad + tail.len());
    body.extend_from_slice(head.as_bytes());
    body.resize(head.len() + pad, b'x');
    body.extend_from_slice(tail.as_bytes());
    body
}

/// The first `needle` in `hay`.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(at) = find_byte(&hay[from..], first) {
        let at = from + at;
        if hay[at + 1..].starts_with(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The first `byte` in `hay`, eight bytes at a time.
pub fn find_byte(hay: &[u8], byte: u8) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let pattern = LO * u64::from(byte);
    let mut chunks = hay.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ pattern;
        if (x.wrapping_sub(LO) & !x & HI) != 0 {
            return chunk.iter().position(|&b| b == byte).map(|i| offset + i);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == byte)
        .map(|i| offset + i)
}

/// One line of a watch stream, as far as this scenario cares.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// An event of this run's update number `seq`.
    Ours(usize),
    Bookmark,
    /// An ERROR event: its object, for the error sample.
    Error(&'a [u8]),
    /// Any other object.
    Other,
}

/// What precedes an update's sequence number in its events:
/// `"bench-seq":"<run>-`.
pub fn seq_marker(run: &str) -> Vec<u8> {
    format!("\"{SEQ_KEY}\":\"{run}-").into_bytes()
}

/// Reads the type and, for object events, this run's sequence number out
/// of one event line without parsing the JSON. `marker` is
/// [`seq_marker`] of the run.
pub fn classify<'a>(line: &'a [u8], marker: &[u8]) -> Event<'a> {
    const TYPE: &[u8] = b"{\"type\":\"";
    let Some(rest) = line.strip_prefix(TYPE) else {
        return Event::Other;
    };
    let kind = &rest[..find_byte(rest, b'"').unwrap_or(rest.len())];
    match kind {
        b"BOOKMARK" => return Event::Bookmark,
        b"ERROR" => return Event::Error(line),
        _ => {}
    }
    let Some(at) = find(line, marker) else {
        return Event::Other;
    };
    let digits = &line[at + marker.len()..];
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    match std::str::from_utf8(&digits[..end])
        .ok()
        .and_then(|d| d.parse().ok())
    {
        Some(seq) if digits.get(end) == Some(&b'"') => Event::Ours(seq),
        _ => Event::Other,
    }
}

/// What one watcher saw.
#[derive(Default)]
struct WatcherOutcome {
    opened: bool,
    /// Per update: when its event arrived (ns on the run clock), 0 = never.
    arrived: Vec<u64>,
    duplicates: u64,
    bookmarks: u64,
    error_events: u64,
    other: u64,
    ended_early: bool,
    bytes: u64,
    errors: BTreeMap<String, ErrorTally>,
}

impl WatcherOutcome {
    fn tally(&mut self, kind: &str, sample: impl FnOnce() -> String) {
        self.errors
            .entry(kind.to_string())
            .and_modify(|t| t.count += 1)
            .or_insert_with(|| ErrorTally {
                count: 1,
                sample: sample(),
            });
    }
}

struct Shared {
    clock: Instant,
    run: String,
    /// [`seq_marker`] of `run`.
    marker: Vec<u8>,
    /// Watchers whose open finished, either way.
    settled: AtomicUsize,
    /// Watchers whose stream is open.
    opened: AtomicUsize,
    /// First copies of this run's events, all watchers.
    received: AtomicU64,
}

impl Shared {
    fn now_ns(&self) -> u64 {
        u64::try_from(self.clock.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

struct Watcher {
    shared: Arc<Shared>,
    outcome: WatcherOutcome,
}

impl Watcher {
    fn line(&mut self, line: &[u8], now: u64) {
        match classify(line, &self.shared.marker) {
            Event::Ours(seq) => match self.outcome.arrived.get_mut(seq) {
                Some(slot) if *slot == 0 => {
                    *slot = now;
                    self.shared.received.fetch_add(1, Ordering::Relaxed);
                }
                Some(_) => self.outcome.duplicates += 1,
                None => self.outcome.other += 1,
            },
            Event::Bookmark => self.outcome.bookmarks += 1,
            Event::Error(object) => {
                self.outcome.error_events += 1;
                self.outcome.tally("ERROR event", || snippet(object, 300));
            }
            Event::Other => self.outcome.other += 1,
        }
    }

    /// Feeds one DATA frame: complete lines now, the rest into `pending`.
    fn data(&mut self, pending: &mut BytesMut, data: &[u8], now: u64) {
        self.outcome.bytes += data.len() as u64;
        if pending.is_empty() {
            let mut rest = data;
            while let Some(at) = find_byte(rest, b'\n') {
                self.line(&rest[..at], now);
                rest = &rest[at + 1..];
            }
            pending.extend_from_slice(rest);
        } else {
            let searched = pending.len();
            pending.extend_from_slice(data);
            let mut from = searched;
            while let Some(at) = find_byte(&pending[from..], b'\n') {
                let line = pending.split_to(from + at + 1);
                self.line(&line[..line.len() - 1], now);
                from = 0;
            }
        }
    }
}

async fn watch(
    mut session: Session,
    path: Arc<String>,
    shared: Arc<Shared>,
    updates: usize,
    timeout: Duration,
    mut stop: signal::Receiver<bool>,
) -> WatcherOutcome {
    let mut watcher = Watcher {
        shared: shared.clone(),
        outcome: WatcherOutcome {
            arrived: vec![0; updates],
            ..WatcherOutcome::default()
        },
    };
    let opened = tokio::time::timeout(timeout, session.open(Method::GET, &path, None, JSON)).await;
    let response = match opened {
        Ok(Ok(response)) if response.status() == StatusCode::OK => response,
        Ok(Ok(response)) => {
            let status = response.status();
            let body = tokio::time::timeout(timeout, response.into_body().collect())
                .await
                .ok()
                .and_then(Result::ok)
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            watcher
                .outcome
                .tally(&format!("watch HTTP {}", status.as_u16()), || {
                    snippet(&body, 300)
                });
            shared.settled.fetch_add(1, Ordering::Relaxed);
            return watcher.outcome;
        }
        Ok(Err(error)) => {
            watcher
                .outcome
                .tally(&format!("watch {}", error.kind()), || error.to_string());
            shared.settled.fetch_add(1, Ordering::Relaxed);
            return watcher.outcome;
        }
        Err(_) => {
            watcher.outcome.tally("watch timeout", || {
                format!("no response head within {timeout:?}")
            });
            shared.settled.fetch_add(1, Ordering::Relaxed);
            return watcher.outcome;
        }
    };
    watcher.outcome.opened = true;
    shared.opened.fetch_add(1, Ordering::Relaxed);
    shared.settled.fetch_add(1, Ordering::Relaxed);
    let mut body = response.into_body();
    let mut pending = BytesMut::new();
    // One wait for the stop, not a new one per frame.
    let mut stopped = std::pin::pin!(stop.changed());
    loop {
        let frame = tokio::select! {
            biased;
            frame = body.frame() => frame,
            _ = &mut stopped => break,
        };
        match frame {
            None => {
                watcher.outcome.ended_early = true;
                watcher
                    .outcome
                    .tally("watch ended", || "the server ended the stream".into());
                break;
            }
            Some(Err(error)) => {
                watcher.outcome.ended_early = true;
                watcher.outcome.tally("watch body", || error.to_string());
                break;
            }
            Some(Ok(frame)) => {
                let now = shared.now_ns();
                if let Ok(data) = frame.into_data() {
                    watcher.data(&mut pending, &data, now);
                }
            }
        }
    }
    watcher.outcome
}

/// The writer's record of each update.
struct Writes {
    /// Send time, ns on the run clock.
    sent: Vec<AtomicU64>,
    /// Response time, ns on the run clock.
    answered: Vec<AtomicU64>,
    /// 0 not done, 1 answered 200, 2 failed.
    state: Vec<AtomicU8>,
}

const OK: u8 = 1;
const FAILED: u8 = 2;

/// The writer's connection(s): idle sessions are reused, so over HTTP/1.1
/// concurrent updates get a few keep-alive connections, not one each.
struct WriterPool {
    client: Client,
    idle: std::sync::Mutex<Vec<Session>>,
    namespace: String,
    size: usize,
    timeout: Duration,
}

impl WriterPool {
    fn take(&self) -> Session {
        self.idle
            .lock()
            .ok()
            .and_then(|mut idle| idle.pop())
            .unwrap_or_else(|| self.client.session(0))
    }

    fn give_back(&self, session: Session) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(session);
        }
    }
}

async fn update(
    pool: Arc<WriterPool>,
    shared: Arc<Shared>,
    writes: Arc<Writes>,
    seq: usize,
) -> Option<(String, String)> {
    let (namespace, size, timeout) = (&pool.namespace, pool.size, pool.timeout);
    let mut session = pool.take();
    let name = format!("watch-{}-{}", shared.run, seq % WRITE_TARGETS);
    let path = format!("/api/v1/namespaces/{namespace}/configmaps/{name}");
    let sent = shared.now_ns();
    let body = Bytes::from(update_body(&name, namespace, &shared.run, seq, sent, size));
    writes.sent[seq].store(sent, Ordering::Release);
    let result = tokio::time::timeout(timeout, session.send(Method::PUT, &path, Some(body))).await;
    writes.answered[seq].store(shared.now_ns(), Ordering::Release);
    let failure = match result {
        Ok(Ok(reply)) if reply.status == StatusCode::OK => None,
        Ok(Ok(reply)) => Some((
            format!("update HTTP {}", reply.status.as_u16()),
            snippet(&reply.body, 300),
        )),
        Ok(Err(error)) => Some((format!("update {}", error.kind()), error.to_string())),
        Err(_) => Some((
            "update timeout".to_string(),
            format!("no answer within {timeout:?}"),
        )),
    };
    if !matches!(failure, Some((ref kind, _)) if kind == "update timeout") {
        pool.give_back(session);
    }
    writes.state[seq].store(
        if failure.is_none() { OK } else { FAILED },
        Ordering::Release,
    );
    failure
}

fn unexpected_reply(what: &str, status: StatusCode, body: &[u8]) -> BenchError {
    BenchError::Setup(format!(
        "{what}: HTTP {}: {}",
        status.as_u16(),
        snippet(body, 400)
    ))
}

/// RSS readings every [`RSS_EVERY`] until `stop`; the highest.
async fn watch_rss(pid: u32, mut stop: signal::Receiver<bool>) -> Option<u64> {
    let mut max: Option<u64> = None;
    loop {
        if let Some(memory) = crate::launch::memory(pid) {
            max = Some(max.map_or(memory.rss_kib, |m| m.max(memory.rss_kib)));
        }
        tokio::select! {
            () = tokio::time::sleep(RSS_EVERY) => {}
            _ = stop.changed() => break,
        }
    }
    if let Some(memory) = crate::launch::memory(pid) {
        max = Some(max.map_or(memory.rss_kib, |m| m.max(memory.rss_kib)));
    }
    max
}

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<ScenarioResult, BenchError> {
    let run = run_id();
    let shared = Arc::new(Shared {
        clock: Instant::now(),
        marker: seq_marker(&run),
        run,
        settled: AtomicUsize::new(0),
        opened: AtomicUsize::new(0),
        received: AtomicU64::new(0),
    });
    let timeout = Duration::from_secs_f64(cli.timeout);
    let namespace = cli.namespace.clone();
    let collection = format!("/api/v1/namespaces/{namespace}/configmaps");
    let writer = Client::connect(
        &endpoint.kubeconfig,
        ClientOptions {
            connections: 1,
            http1: cli.http1,
        },
    )
    .await?;
    ensure_namespace(&writer, &namespace).await?;
    for target in 0..WRITE_TARGETS {
        let name = format!("watch-{}-{target}", shared.run);
        let body = update_body(&name, &namespace, &shared.run, usize::MAX, 0, cli.size);
        let reply = writer
            .request(Method::POST, &collection, Some(Bytes::from(body)))
            .await?;
        if !reply.status.is_success() {
            return Err(unexpected_reply(
                "creating a ConfigMap to update",
                reply.status,
                &reply.body,
            ));
        }
    }
    let listed = writer
        .request(Method::GET, &format!("{collection}?limit=1"), None)
        .await?;
    if listed.status != StatusCode::OK {
        return Err(unexpected_reply(
            "listing the ConfigMaps",
            listed.status,
            &listed.body,
        ));
    }
    let list: serde_json::Value = serde_json::from_slice(&listed.body)
        .map_err(|e| BenchError::Setup(format!("the list is not JSON: {e}")))?;
    let resource_version = list["metadata"]["resourceVersion"]
        .as_str()
        .filter(|rv| !rv.is_empty())
        .ok_or_else(|| BenchError::Setup("the list has no metadata.resourceVersion".into()))?
        .to_string();

    let pid = endpoint.pid();
    let mut memory = WatchMemory {
        before_kib: endpoint.memory().map(|m| m.rss_kib),
        ..WatchMemory::default()
    };
    let watchers = cli.watchers;
    let duration = cli.watch_duration();
    let updates = ((cli.writes_per_second * duration.as_secs_f64()).round() as usize).max(1);
    let stream_timeout = (timeout + duration + DRAIN).as_secs() + cli.idle_ms / 1000 + 60;
    let path = Arc::new(format!(
        "{collection}?watch=1&resourceVersion={resource_version}&allowWatchBookmarks=true&timeoutSeconds={stream_timeout}"
    ));
    let watch_client = Client::connect(
        &endpoint.kubeconfig,
        ClientOptions {
            connections: watchers.div_ceil(cli.streams_per_connection),
            http1: cli.http1,
        },
    )
    .await?;
    runner::note(
        cli.quiet,
        &format!(
            "{label}: opening {watchers} watchers over {}",
            if watch_client.pooled_connections() > 0 {
                format!(
                    "{} {} connections",
                    watch_client.pooled_connections(),
                    watch_client.protocol()
                )
            } else {
                "one HTTP/1.1 connection each".into()
            }
        ),
    );
    let watch_protocol = watch_client.protocol();
    let watch_connections = watch_client.pooled_connections();
    let (stop_tx, stop_rx) = signal::channel(false);
    let opening = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..watchers {
        tasks.spawn(watch(
            watch_client.session(index),
            path.clone(),
            shared.clone(),
            updates,
            timeout,
            stop_rx.clone(),
        ));
    }
    while shared.settled.load(Ordering::Relaxed) < watchers && opening.elapsed() < timeout * 2 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let open_ms = round3(opening.elapsed().as_secs_f64() * 1e3);

    // Idle: the watchers are open and nothing is written.
    let idle_before = cpu::sample(pid);
    tokio::time::sleep(Duration::from_millis(cli.idle_ms)).await;
    memory.idle_kib = endpoint.memory().map(|m| m.rss_kib);
    let idle_after = cpu::sample(pid);
    let idle_cores = match (&idle_before, &idle_after) {
        (Some(a), Some(b)) => cpu::usage(a, b).and_then(|u| u.server_cores),
        _ => None,
    };
    if let (Some(before), Some(idle)) = (memory.before_kib, memory.idle_kib) {
        memory.per_idle_watcher_bytes = Some(round3(
            (idle as f64 - before as f64) * 1024.0 / watchers as f64,
        ));
    }

    // The writer, open loop.
    runner::note(
        cli.quiet,
        &format!(
            "{label}: {} watchers open after {open_ms:.0} ms; {updates} updates at {}/s",
            shared.settled.load(Ordering::Relaxed),
            cli.writes_per_second
        ),
    );
    let rss_task = pid.map(|pid| tokio::spawn(watch_rss(pid, stop_rx.clone())));
    let writes = Arc::new(Writes {
        sent: (0..updates).map(|_| AtomicU64::new(0)).collect(),
        answered: (0..updates).map(|_| AtomicU64::new(0)).collect(),
        state: (0..updates).map(|_| AtomicU8::new(0)).collect(),
    });
    let cpu_before = cpu::sample(pid);
    let syscalls_before = pid.and_then(crate::launch::write_syscalls);
    let began = Instant::now();
    let first_send = shared.now_ns();
    let period = Duration::from_secs_f64(1.0 / cli.writes_per_second);
    let pool = Arc::new(WriterPool {
        client: writer.clone(),
        idle: std::sync::Mutex::new(Vec::new()),
        namespace: namespace.to_string(),
        size: cli.size,
        timeout,
    });
    let mut writers = tokio::task::JoinSet::new();
    let mut last_note = began;
    for seq in 0..updates {
        let at = began + period.mul_f64(seq as f64);
        tokio::time::sleep_until(at.into()).await;
        writers.spawn(update(pool.clone(), shared.clone(), writes.clone(), seq));
        if !cli.quiet && last_note.elapsed() >= Duration::from_secs(5) {
            last_note = Instant::now();
            eprintln!(
                "{label}: {:>4.0}s {seq} updates sent, {} events received",
                began.elapsed().as_secs_f64(),
                crate::report::thousands(shared.received.load(Ordering::Relaxed))
            );
        }
    }
    let mut write_errors: BTreeMap<String, ErrorTally> = BTreeMap::new();
    while let Some(joined) = writers.join_next().await {
        let failure = match joined {
            Ok(failure) => failure,
            Err(_) => Some(("panic".to_string(), "an update task panicked".to_string())),
        };
        if let Some((kind, sample)) = failure {
            write_errors
                .entry(kind)
                .and_modify(|t| t.count += 1)
                .or_insert(ErrorTally { count: 1, sample });
        }
    }
    let ok = writes
        .state
        .iter()
        .filter(|s| s.load(Ordering::Acquire) == OK)
        .count() as u64;
    let expected = ok * shared.opened.load(Ordering::Relaxed) as u64;
    let drain_from = Instant::now();
    while shared.received.load(Ordering::Relaxed) < expected && drain_from.elapsed() < DRAIN {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    if ok < updates as u64 {
        // Updates that failed here may still have been applied: give their
        // events a moment so they count as unexpected, not as noise.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let cpu_after = cpu::sample(pid);
    let syscalls_after = pid.and_then(crate::launch::write_syscalls);
    let _ = stop_tx.send(true);
    let mut outcomes = Vec::with_capacity(watchers);
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(outcome) => outcomes.push(outcome),
            Err(_) => {
                let mut outcome = WatcherOutcome::default();
                outcome.tally("panic", || "a watcher panicked".into());
                outcomes.push(outcome);
            }
        }
    }
    if let Some(task) = rss_task {
        memory.run_max_kib = task.await.ok().flatten();
    }
    memory.after_kib = endpoint.memory().map(|m| m.rss_kib);
    drop(watch_client);

    // Per (watcher, update): delivery from send and from response.
    let state: Vec<u8> = writes
        .state
        .iter()
        .map(|s| s.load(Ordering::Acquire))
        .collect();
    let sent: Vec<u64> = writes
        .sent
        .iter()
        .map(|s| s.load(Ordering::Acquire))
        .collect();
    let answered: Vec<u64> = writes
        .answered
        .iter()
        .map(|s| s.load(Ordering::Acquire))
        .collect();
    let mut write_latency = Histogram::new();
    for seq in 0..updates {
        if state[seq] == OK {
            write_latency.record_nanos(answered[seq].saturating_sub(sent[seq]));
        }
    }
    let mut since_send = Histogram::new();
    let mut since_response = Histogram::new();
    let mut before_response = 0u64;
    let mut last_arrival = first_send;
    let opened = outcomes.iter().filter(|o| o.opened).count();
    let mut events = EventStats {
        expected: ok * opened as u64,
        received: 0,
        missing: 0,
        watchers_with_gaps: 0,
        duplicates: 0,
        unexpected: 0,
        bookmarks: 0,
        error_events: 0,
        other: 0,
        streams_ended_early: 0,
        stream_bytes: 0,
        errors_by_kind: BTreeMap::new(),
    };
    for outcome in &outcomes {
        for (kind, t) in &outcome.errors {
            events
                .errors_by_kind
                .entry(kind.clone())
                .and_modify(|have| have.count += t.count)
                .or_insert_with(|| t.clone());
        }
        if !outcome.opened {
            continue;
        }
        events.duplicates += outcome.duplicates;
        events.bookmarks += outcome.bookmarks;
        events.error_events += outcome.error_events;
        events.other += outcome.other;
        events.streams_ended_early += u64::from(outcome.ended_early);
        events.stream_bytes += outcome.bytes;
        let mut gaps = 0u64;
        for (seq, &arrived) in outcome.arrived.iter().enumerate() {
            match (state[seq] == OK, arrived > 0) {
                (true, true) => {
                    events.received += 1;
                    last_arrival = last_arrival.max(arrived);
                    since_send.record_nanos(arrived.saturating_sub(sent[seq]));
                    if arrived < answered[seq] {
                        before_response += 1;
                    }
                    since_response.record_nanos(arrived.saturating_sub(answered[seq]));
                }
                (true, false) => gaps += 1,
                (false, true) => events.unexpected += 1,
                (false, false) => {}
            }
        }
        events.missing += gaps;
        events.watchers_with_gaps += usize::from(gaps > 0);
    }
    if opened == 0 {
        let sample = events
            .errors_by_kind
            .iter()
            .next()
            .map(|(kind, t)| format!("{kind}: {}", t.sample))
            .unwrap_or_default();
        return Err(BenchError::Setup(format!(
            "no watch could be opened: {sample}"
        )));
    }
    let window_s = round3(last_arrival.saturating_sub(first_send) as f64 / 1e9);
    let write_syscalls = match (syscalls_before, syscalls_after) {
        (Some(before), Some(after)) => after.checked_sub(before),
        _ => None,
    };
    let server_cpu = match (&cpu_before, &cpu_after) {
        (Some(before), Some(after)) => cpu::server_seconds(before, after).map(|seconds| {
            let per = |n: u64| {
                if n > 0 {
                    round3(seconds * 1e6 / n as f64)
                } else {
                    0.0
                }
            };
            ServerCpu {
                seconds: round3(seconds),
                window_s: round3(cpu::seconds_between(before, after)),
                per_write_us: per(ok),
                per_event_us: per(events.received),
                idle_cores: idle_cores.unwrap_or(0.0),
                write_syscalls,
                write_syscalls_per_event: write_syscalls
                    .filter(|_| events.received > 0)
                    .map(|n| round3(n as f64 / events.received as f64)),
            }
        }),
        _ => None,
    };
    let cpu = match (&cpu_before, &cpu_after) {
        (Some(before), Some(after)) => cpu::usage(before, after),
        _ => None,
    };
    let failed = updates as u64 - ok;
    Ok(ScenarioResult {
        scenario: "watch".into(),
        label: label.to_string(),
        target: endpoint.target.clone(),
        load: None,
        ready: None,
        watch: Some(WatchResult {
            watchers,
            opened,
            protocol: watch_protocol.to_string(),
            watch_connections,
            open_ms,
            object_bytes: cli.size,
            writes_per_second: cli.writes_per_second,
            duration_s: round3(duration.as_secs_f64()),
            window_s,
            writes: WriteStats {
                sent: updates as u64,
                ok,
                failed,
                latency: write_latency.summary(),
                errors_by_kind: write_errors,
            },
            events,
            delivery_since_send: since_send.summary(),
            delivery_since_response: since_response.summary(),
            before_response,
            memory,
            server_cpu,
            cpu,
        }),
        list: None,
        server_memory: endpoint.memory(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_bodies_are_exactly_the_size_asked() {
        for size in [400, 1024] {
            let body = update_body("watch-r-1", "ns", "r", 17, 123_456_789, size);
            assert_eq!(body.len(), size);
            let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
            assert_eq!(v["data"][SEQ_KEY], "r-17");
            assert_eq!(v["data"][SENT_KEY], "123456789");
        }
    }

    #[test]
    fn finds_bytes_and_needles() {
        let hay = b"0123456789abcdef\nxyz";
        assert_eq!(find_byte(hay, b'\n'), Some(16));
        assert_eq!(find_byte(hay, b'z'), Some(19));
        assert_eq!(find_byte(hay, b'0'), Some(0));
        assert_eq!(find_byte(hay, b'Q'), None);
        assert_eq!(find_byte(b"", b'a'), None);
        for i in 0..40 {
            let mut v = vec![b'a'; 40];
            v[i] = 0x80 | b'\n';
            assert_eq!(find_byte(&v, b'\n'), None, "high bit at {i}");
            v[i] = b'\n';
            assert_eq!(find_byte(&v, b'\n'), Some(i));
        }
        assert_eq!(find(b"aab\"seq\":\"x", b"\"seq\":\""), Some(3));
        assert_eq!(find(b"\"se\"seq", b"\"seq"), Some(3));
        assert_eq!(find(b"abc", b"abcd"), None);
    }

    #[test]
    fn classifies_events() {
        let body = update_body("watch-r-1", "ns", "run1", 42, 7, 300);
        let mut line = b"{\"type\":\"MODIFIED\",\"object\":".to_vec();
        line.extend_from_slice(&body);
        line.push(b'}');
        let (run1, run2) = (seq_marker("run1"), seq_marker("run2"));
        assert_eq!(classify(&line, &run1), Event::Ours(42));
        assert_eq!(classify(&line, &run2), Event::Other);
        let bookmark = br#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"12"}}}"#;
        assert_eq!(classify(bookmark, &run1), Event::Bookmark);
        let error = br#"{"type":"ERROR","object":{"kind":"Status","code":410}}"#;
        assert!(matches!(classify(error, &run1), Event::Error(_)));
        assert_eq!(classify(b"garbage", &run1), Event::Other);
        // Managed fields name the key as f:bench-seq, which is not a match.
        let managed = br#"{"type":"ADDED","object":{"metadata":{"managedFields":[{"fieldsV1":{"f:data":{"f:bench-seq":{}}}}]}}}"#;
        assert_eq!(classify(managed, &run1), Event::Other);
    }

    #[test]
    fn splits_lines_across_frames() {
        let shared = Arc::new(Shared {
            clock: Instant::now(),
            run: "r".into(),
            marker: seq_marker("r"),
            settled: AtomicUsize::new(0),
            opened: AtomicUsize::new(0),
            received: AtomicU64::new(0),
        });
        let mut watcher = Watcher {
            shared: shared.clone(),
            outcome: WatcherOutcome {
                arrived: vec![0; 4],
                ..WatcherOutcome::default()
            },
        };
        let event = |seq: usize| {
            format!(
                "{{\"type\":\"MODIFIED\",\"object\":{{\"data\":{{\"{SEQ_KEY}\":\"r-{seq}\"}}}}}}\n"
            )
        };
        let stream = format!(
            "{}{}{}{}{}",
            event(0),
            event(1),
            event(1),
            "{\"type\":\"BOOKMARK\",\"object\":{}}\n",
            event(3)
        );
        let mut pending = BytesMut::new();
        // Frames cut at awkward places.
        let bytes = stream.as_bytes();
        for (i, chunk) in bytes.chunks(7).enumerate() {
            watcher.data(&mut pending, chunk, 100 + i as u64);
        }
        assert!(pending.is_empty());
        let o = &watcher.outcome;
        assert!(o.arrived[0] > 0 && o.arrived[1] > 0 && o.arrived[3] > 0);
        assert_eq!(o.arrived[2], 0);
        assert_eq!(o.duplicates, 1);
        assert_eq!(o.bookmarks, 1);
        assert_eq!(o.bytes, bytes.len() as u64);
        assert_eq!(shared.received.load(Ordering::Relaxed), 3);
    }
}
