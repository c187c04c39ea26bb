//! The shared closed-loop load runner: C workers, each sending its next
//! request as soon as the previous one answered, for a measured window
//! after a warm-up (or for a fixed number of requests), with per-worker
//! histograms merged at the end and a progress line on stderr.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde::Serialize;

use crate::client::{Client, Reply, Session};
use crate::cpu::{self, CpuUsage};
use crate::stats::Histogram;

/// What the workers send.
pub trait Workload: Send + Sync + 'static {
    /// Request `seq` of worker `worker`: method, path, body.
    fn request(&self, worker: usize, seq: u64) -> (Method, String, Option<Bytes>);

    /// Whether a status counts as success.
    fn accepts(&self, status: StatusCode) -> bool {
        status.is_success()
    }

    /// The media type request bodies are sent as.
    fn content_type(&self) -> &str {
        crate::client::JSON
    }

    /// Sees every answer of worker `worker` (read-modify-write loops keep
    /// the resourceVersion they got).
    fn observe(&self, _worker: usize, _reply: &Reply) {}
}

/// When a run ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// Run for `warmup` unmeasured, then measure for `measure`.
    Duration { warmup: Duration, measure: Duration },
    /// Send exactly this many requests, all measured.
    Requests(u64),
}

#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub concurrency: usize,
    pub stop: Stop,
    pub timeout: Duration,
    /// Progress line prefix; `None` for no progress line.
    pub progress: Option<String>,
    /// The server's process, for its share of the CPU.
    pub server_pid: Option<u32>,
    /// Requests a second from all workers together on a fixed schedule
    /// (open loop: each worker sends every `concurrency / rate` seconds,
    /// latency counted from the scheduled time when the worker is late for
    /// it, so a server that holds a worker up counts);
    /// 0 sends each request when the worker's last is answered.
    pub rate: f64,
}

/// Failures of one kind, with the first message seen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorTally {
    pub count: u64,
    pub sample: String,
}

/// The merged outcome of a run.
#[derive(Debug, Clone)]
pub struct LoadOutcome {
    /// Successful requests inside the measured window.
    pub latency: Histogram,
    /// Failed requests over the whole run (warm-up included).
    pub errors: u64,
    pub error_kinds: BTreeMap<String, ErrorTally>,
    /// Every completed request, warm-up included.
    pub completed: u64,
    /// The measured window.
    pub elapsed: Duration,
    /// CPU use over the measured window.
    pub cpu: Option<CpuUsage>,
}

impl LoadOutcome {
    /// Successful requests per second over the measured window.
    pub fn throughput(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.latency.count() as f64 / secs
        } else {
            0.0
        }
    }
}

struct Shared {
    stop: AtomicBool,
    recording: AtomicBool,
    issued: AtomicU64,
    completed: AtomicU64,
    failed: AtomicU64,
}

struct WorkerResult {
    latency: Histogram,
    errors: BTreeMap<String, ErrorTally>,
}

fn tally(errors: &mut BTreeMap<String, ErrorTally>, kind: String, sample: impl FnOnce() -> String) {
    errors
        .entry(kind)
        .and_modify(|t| t.count += 1)
        .or_insert_with(|| ErrorTally {
            count: 1,
            sample: sample(),
        });
}

/// At most `max` characters of `body` as text, for error samples.
pub fn snippet(body: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(body);
    let mut out: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// A worker's send times under `LoadOptions::rate`: every `interval` from
/// `first`.
#[derive(Clone, Copy)]
struct Pace {
    first: Instant,
    interval: Duration,
}

impl Pace {
    /// Worker `index` of `concurrency` sharing `rate` requests a second,
    /// the workers' schedules spread evenly over one interval.
    fn of(rate: f64, index: usize, concurrency: usize, start: Instant) -> Option<Pace> {
        if rate <= 0.0 || !rate.is_finite() {
            return None;
        }
        let interval = Duration::from_secs_f64(concurrency.max(1) as f64 / rate);
        let offset = interval.mul_f64(index as f64 / concurrency.max(1) as f64);
        Some(Pace {
            first: start + offset,
            interval,
        })
    }

    fn at(&self, sent: u64) -> Instant {
        self.first + self.interval.mul_f64(sent as f64)
    }
}

async fn worker(
    index: usize,
    mut session: Session,
    workload: Arc<dyn Workload>,
    shared: Arc<Shared>,
    stop: Stop,
    timeout: Duration,
    pace: Option<Pace>,
) -> WorkerResult {
    let mut latency = Histogram::new();
    let mut errors = BTreeMap::new();
    let mut local_seq = 0u64;
    let mut sent = 0u64;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        // Latency is counted from the scheduled time when the worker is
        // late for it (the server held its last request), else from the
        // send: waiting for a time still ahead ends at the timer's next
        // millisecond, a delay of the client's own.
        let mut scheduled = pace.map(|pace| pace.at(sent));
        sent += 1;
        if let Some(at) = scheduled.filter(|at| *at > Instant::now()) {
            tokio::time::sleep_until(at.into()).await;
            if shared.stop.load(Ordering::Relaxed) {
                break;
            }
            scheduled = None;
        }
        let seq = match stop {
            Stop::Requests(limit) => {
                let n = shared.issued.fetch_add(1, Ordering::Relaxed);
                if n >= limit {
                    break;
                }
                n
            }
            Stop::Duration { .. } => {
                local_seq += 1;
                local_seq - 1
            }
        };
        let (method, path, body) = workload.request(index, seq);
        let started = scheduled.unwrap_or_else(Instant::now);
        let result = tokio::time::timeout(
            timeout,
            session.send_as(method, &path, body, workload.content_type()),
        )
        .await;
        let took = started.elapsed();
        shared.completed.fetch_add(1, Ordering::Relaxed);
        if let Ok(Ok(reply)) = &result {
            workload.observe(index, reply);
        }
        match result {
            Ok(Ok(reply)) if workload.accepts(reply.status) => {
                if shared.recording.load(Ordering::Relaxed) && !shared.stop.load(Ordering::Relaxed)
                {
                    latency.record(took);
                }
            }
            Ok(Ok(reply)) => {
                shared.failed.fetch_add(1, Ordering::Relaxed);
                tally(
                    &mut errors,
                    format!("HTTP {}", reply.status.as_u16()),
                    || snippet(&reply.body, 300),
                );
            }
            Ok(Err(error)) => {
                shared.failed.fetch_add(1, Ordering::Relaxed);
                tally(&mut errors, error.kind().to_string(), || error.to_string());
                // Do not spin on a dead server.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(_) => {
                shared.failed.fetch_add(1, Ordering::Relaxed);
                tally(&mut errors, "timeout".to_string(), || {
                    format!("no answer within {timeout:?}")
                });
            }
        }
    }
    WorkerResult { latency, errors }
}

/// Runs `workload` on `client` with `options`.
pub async fn run(
    client: &Client,
    workload: Arc<dyn Workload>,
    options: &LoadOptions,
) -> LoadOutcome {
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        recording: AtomicBool::new(matches!(options.stop, Stop::Requests(_))),
        issued: AtomicU64::new(0),
        completed: AtomicU64::new(0),
        failed: AtomicU64::new(0),
    });
    let began = Instant::now();
    let mut cpu_before = cpu::sample(options.server_pid);
    let mut workers = tokio::task::JoinSet::new();
    for index in 0..options.concurrency.max(1) {
        workers.spawn(worker(
            index,
            client.session(index),
            workload.clone(),
            shared.clone(),
            options.stop,
            options.timeout,
            Pace::of(options.rate, index, options.concurrency, began),
        ));
    }
    let progress = options
        .progress
        .clone()
        .map(|label| tokio::spawn(progress_line(label, shared.clone(), began, options.stop)));

    let elapsed = match options.stop {
        Stop::Duration { warmup, measure } => {
            tokio::time::sleep(warmup).await;
            shared.recording.store(true, Ordering::Relaxed);
            cpu_before = cpu::sample(options.server_pid);
            let window = Instant::now();
            tokio::time::sleep(measure).await;
            shared.stop.store(true, Ordering::Relaxed);
            window.elapsed()
        }
        Stop::Requests(_) => Duration::ZERO,
    };
    let mut cpu_after = cpu::sample(options.server_pid);
    let mut latency = Histogram::new();
    let mut error_kinds: BTreeMap<String, ErrorTally> = BTreeMap::new();
    while let Some(joined) = workers.join_next().await {
        let Ok(result) = joined else {
            tally(&mut error_kinds, "panic".into(), || {
                "a worker panicked".into()
            });
            continue;
        };
        latency.merge(&result.latency);
        for (kind, t) in result.errors {
            error_kinds
                .entry(kind)
                .and_modify(|have| have.count += t.count)
                .or_insert(t);
        }
    }
    let elapsed = match options.stop {
        Stop::Requests(_) => {
            cpu_after = cpu::sample(options.server_pid);
            began.elapsed()
        }
        Stop::Duration { .. } => elapsed,
    };
    let cpu = match (&cpu_before, &cpu_after) {
        (Some(before), Some(after)) => cpu::usage(before, after),
        _ => None,
    };
    if let Some(progress) = progress {
        progress.abort();
        let _ = progress.await;
        end_progress();
    }
    LoadOutcome {
        latency,
        errors: error_kinds.values().map(|t| t.count).sum(),
        error_kinds,
        completed: shared.completed.load(Ordering::Relaxed),
        elapsed,
        cpu,
    }
}

/// How far a run is, 0..=1: by time for a timed run, by requests for a
/// counted one.
pub fn progress_fraction(stop: Stop, elapsed: Duration, completed: u64) -> f64 {
    let fraction = match stop {
        Stop::Duration { warmup, measure } => {
            let total = (warmup + measure).as_secs_f64();
            if total > 0.0 {
                elapsed.as_secs_f64() / total
            } else {
                1.0
            }
        }
        Stop::Requests(n) if n > 0 => completed as f64 / n as f64,
        Stop::Requests(_) => 1.0,
    };
    fraction.clamp(0.0, 1.0)
}

/// `[#########-----------]  45%`: a bar `width` cells wide.
pub fn progress_bar(fraction: f64, width: usize) -> String {
    let fraction = if fraction.is_finite() {
        fraction.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let filled = ((fraction * width as f64).round() as usize).min(width);
    format!(
        "[{}{}] {:>3.0}%",
        "#".repeat(filled),
        "-".repeat(width - filled),
        fraction * 100.0
    )
}

/// Once a second: a redrawn bar on a terminal, a plain line otherwise (logs
/// and CI keep every line).
async fn progress_line(label: String, shared: Arc<Shared>, began: Instant, stop: Stop) {
    let tty = std::io::stderr().is_terminal();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    let mut last = 0u64;
    loop {
        tick.tick().await;
        let done = shared.completed.load(Ordering::Relaxed);
        let failed = shared.failed.load(Ordering::Relaxed);
        let phase = if shared.recording.load(Ordering::Relaxed) {
            ""
        } else {
            " (warm-up)"
        };
        let fraction = progress_fraction(stop, began.elapsed(), done);
        let line = format!(
            "{label}: {} {:>4.0}s {:>10} requests {:>9}/s {} errors{phase}",
            progress_bar(fraction, 24),
            began.elapsed().as_secs_f64(),
            crate::report::thousands(done),
            crate::report::thousands(done - last),
            failed
        );
        last = done;
        let mut err = std::io::stderr().lock();
        if tty {
            let _ = write!(err, "\r\x1b[K{line}");
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }
}

fn end_progress() {
    if std::io::stderr().is_terminal() {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}

/// A progress note on stderr (a whole line), unless `quiet`.
pub fn note(quiet: bool, message: &str) {
    if !quiet {
        eprintln!("{message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paced_workers_share_the_rate_on_spread_schedules() {
        let start = Instant::now();
        assert!(Pace::of(0.0, 0, 32, start).is_none());
        let pace = Pace::of(1000.0, 3, 32, start).expect("paced");
        assert_eq!(pace.interval, Duration::from_millis(32));
        assert_eq!(pace.at(0), start + Duration::from_millis(3));
        assert_eq!(pace.at(2), start + Duration::from_millis(67));
    }

    #[test]
    fn progress_by_time_and_by_count() {
        let timed = Stop::Duration {
            warmup: Duration::from_secs(1),
            measure: Duration::from_secs(3),
        };
        assert_eq!(progress_fraction(timed, Duration::from_secs(2), 0), 0.5);
        assert_eq!(progress_fraction(timed, Duration::from_secs(9), 0), 1.0);
        let counted = Stop::Requests(200);
        assert_eq!(progress_fraction(counted, Duration::ZERO, 50), 0.25);
        assert_eq!(progress_fraction(counted, Duration::ZERO, 500), 1.0);
        assert_eq!(progress_fraction(Stop::Requests(0), Duration::ZERO, 0), 1.0);
    }

    #[test]
    fn progress_bars() {
        assert_eq!(progress_bar(0.0, 4), "[----]   0%");
        assert_eq!(progress_bar(0.5, 4), "[##--]  50%");
        assert_eq!(progress_bar(1.0, 4), "[####] 100%");
        assert_eq!(progress_bar(7.0, 4), "[####] 100%");
        assert_eq!(progress_bar(f64::NAN, 2), "[--]   0%");
    }
}
