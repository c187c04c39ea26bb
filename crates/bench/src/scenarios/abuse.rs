//! `abuse`: a normal client (the admin, 4 workers GETting one ConfigMap
//! over HTTP/2, as fast as answered or `--normal-rate` a second on a fixed
//! schedule) measured alone for a third of `--duration`, then again for
//! the other two thirds (longer than the server's 32 s header-read timeout
//! at `--duration 60`) while the started server is abused at once by
//! `--abusers` connections of each kind, each replaced as soon as the
//! server closes it:
//! - slow (slowloris): TLS done, then request headers one byte a second;
//! - half-open TCP: connected, nothing sent (not even a ClientHello);
//! - half-open TLS: the first half of a ClientHello, then nothing
//!
//! ([`super::abuse_connections`]), and by floods: requests without
//! credentials to random paths, and bodies above the 3 MiB limit (`MAX_REQUEST_BODY_BYTES`, kube's
//! `maxRequestBodyBytes`) sent with and without credentials. The abusers
//! run on two threads of their own, at `--abusers-nice`. Reported:
//! both p50/p99s, every rejection by status code, connections the server
//! closed, the server's RSS, and whether it still answers afterwards (the
//! verdict: alive and answering, and no failed request of the normal
//! client).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde::Serialize;
use tokio::task::JoinSet;

use super::abuse_connections::{abusers, HeldConnections, Kind, RawTarget};
use super::fault_history::Rng;
use crate::cli::Cli;
use crate::client::{Client, ClientOptions};
use crate::cpu::{self, CpuUsage};
use crate::kubeconfig::{self, Credentials};
use crate::launch::Started;
use crate::report::{ScenarioResult, Target};
use crate::runner::note;
use crate::stats::{Histogram, LatencySummary};
use crate::BenchError;

const NORMAL_WORKERS: usize = 4;
const FLOODERS: usize = 8;
/// Above the server's 3 MiB limit.
const OVERSIZED_BYTES: usize = 4 << 20;

#[derive(Debug, Clone, Serialize)]
pub struct AbuseResult {
    pub alone_s: f64,
    pub abused_s: f64,
    pub abusers: usize,
    /// The normal client's schedule (requests a second; 0: closed loop).
    pub normal_rate: f64,
    /// The abusers' threads' nice value.
    pub abusers_nice: u8,
    /// The normal client alone.
    pub alone: LatencySummary,
    /// The normal client under abuse.
    pub abused: LatencySummary,
    /// Cores used by this tool (the normal client and, in the second
    /// phase, the abusers), the server and everything else, per phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_alone: Option<CpuUsage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_abused: Option<CpuUsage>,
    /// Failed requests of the normal client, alone and under abuse.
    pub normal_errors: BTreeMap<String, u64>,
    pub slow: HeldConnections,
    pub half_open_tcp: HeldConnections,
    pub half_open_tls: HeldConnections,
    /// Requests without credentials to random paths, by answer.
    pub unauthenticated: BTreeMap<String, u64>,
    /// Bodies of 4 MiB, by answer.
    pub oversized_authenticated: BTreeMap<String, u64>,
    pub oversized_unauthenticated: BTreeMap<String, u64>,
    /// Server RSS, MiB: before the abuse, max during it, after it.
    pub rss_before_mib: f64,
    pub rss_max_mib: f64,
    pub rss_after_mib: f64,
    pub alive_after: bool,
    pub passed: bool,
}

type Tally = Arc<Mutex<BTreeMap<String, u64>>>;

fn count(tally: &Tally, key: String) {
    let mut map = tally
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *map.entry(key).or_default() += 1;
}

fn taken(tally: &Tally) -> BTreeMap<String, u64> {
    tally
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// The normal client: GETs until `stop`, each worker sending when the
/// last answer came (`rate` 0) or on a fixed schedule of `rate` requests a
/// second in all (latency counted from the scheduled time).
async fn normal_load(
    client: &Client,
    path: &str,
    rate: f64,
    stop: Arc<AtomicBool>,
    errors: Tally,
) -> Histogram {
    let interval = (rate > 0.0).then(|| Duration::from_secs_f64(NORMAL_WORKERS as f64 / rate));
    let mut workers = JoinSet::new();
    for index in 0..NORMAL_WORKERS {
        let mut session = client.session(index);
        let (path, stop, errors) = (path.to_string(), stop.clone(), errors.clone());
        workers.spawn(async move {
            let mut latency = Histogram::new();
            // The workers' schedules interleave.
            let mut due = interval.map(|every| {
                tokio::time::Instant::now() + every.mul_f64(index as f64 / NORMAL_WORKERS as f64)
            });
            while !stop.load(Ordering::Relaxed) {
                let began = match (due, interval) {
                    (Some(at), Some(every)) => {
                        tokio::time::sleep_until(at).await;
                        due = Some(at + every);
                        at.into_std()
                    }
                    _ => Instant::now(),
                };
                let answer = tokio::time::timeout(
                    Duration::from_secs(30),
                    session.send(Method::GET, &path, None),
                )
                .await;
                match answer {
                    Ok(Ok(reply)) if reply.status == StatusCode::OK => {
                        latency.record(began.elapsed())
                    }
                    Ok(Ok(reply)) => count(&errors, format!("HTTP {}", reply.status.as_u16())),
                    Ok(Err(e)) => count(&errors, e.kind().to_string()),
                    Err(_) => count(&errors, "timeout".into()),
                }
            }
            latency
        });
    }
    let mut all = Histogram::new();
    while let Some(Ok(h)) = workers.join_next().await {
        all.merge(&h);
    }
    all
}

/// Lowers the calling thread's priority to `nice` (Linux keeps a nice
/// value per thread; `renice` of the thread's id sets it, as this crate
/// has no `unsafe` for `setpriority`). Best effort: a failure leaves the
/// thread as it was, which the report's CPU shares then show.
fn lower_this_thread(nice: u8) {
    let Ok(link) = std::fs::read_link("/proc/thread-self") else {
        return;
    };
    let Some(tid) = link
        .file_name()
        .and_then(|t| t.to_str())
        .map(str::to_string)
    else {
        return;
    };
    let _ = std::process::Command::new("renice")
        .args(["-n", &nice.to_string(), "-p", &tid])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// Requests until `stop`: random paths without credentials, or 4 MiB
/// bodies; answers tallied.
async fn flood(client: Client, oversized: bool, seed: u64, stop: Arc<AtomicBool>, tally: Tally) {
    let mut rng = Rng::new(seed);
    let mut session = client.session(seed as usize);
    let body = Bytes::from(vec![b' '; OVERSIZED_BYTES]);
    while !stop.load(Ordering::Relaxed) {
        let (method, path, body) = if oversized {
            (
                Method::POST,
                "/api/v1/namespaces/default/configmaps".to_string(),
                Some(body.clone()),
            )
        } else {
            let n = rng.next_u64();
            let path = match n % 4 {
                0 => format!("/apis/group{}.example.com/v1/things{n}", n % 1000),
                1 => format!("/api/v1/namespaces/ns{n}/pods"),
                2 => format!("/random/{n}"),
                _ => "/api/v1/secrets".to_string(),
            };
            (Method::GET, path, None)
        };
        let answer =
            tokio::time::timeout(Duration::from_secs(30), session.send(method, &path, body)).await;
        let key = match answer {
            Ok(Ok(reply)) => format!("HTTP {}", reply.status.as_u16()),
            Ok(Err(e)) => e.kind().to_string(),
            Err(_) => "timeout".into(),
        };
        if !key.starts_with("HTTP") {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        count(&tally, key);
    }
}

/// A runtime for the abusers whose threads run at `nice`.
fn abusers_runtime(nice: u8) -> Result<tokio::runtime::Runtime, BenchError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("abusers")
        .enable_all()
        .on_thread_start(move || {
            if nice > 0 {
                lower_this_thread(nice)
            }
        })
        .build()
        .map_err(|e| BenchError::Setup(format!("the abusers' runtime: {e}")))
}

/// Holds `n` connections of each abusive kind and floods until `stop`:
/// requests without credentials to random paths, 4 MiB bodies with and
/// without them, tallied into `tallies` in that order.
async fn abuse_until(
    kc: kubeconfig::Kubeconfig,
    n: usize,
    stop: Arc<AtomicBool>,
    tallies: [Tally; 3],
) -> Result<(HeldConnections, HeldConnections, HeldConnections), BenchError> {
    let [unauth, over_auth, over_unauth] = tallies;
    let target = RawTarget::new(&kc)?;
    let mut anonymous_kc = kc.clone();
    anonymous_kc.credentials = Credentials::None;
    let one_http1 = || ClientOptions {
        connections: 1,
        http1: true,
    };
    let anonymous = Client::connect(&anonymous_kc, one_http1()).await?;
    let authenticated = Client::connect(&kc, one_http1()).await?;
    let mut floods = JoinSet::new();
    for i in 0..FLOODERS {
        floods.spawn(flood(
            anonymous.clone(),
            false,
            i as u64 + 1,
            stop.clone(),
            unauth.clone(),
        ));
    }
    floods.spawn(flood(authenticated, true, 100, stop.clone(), over_auth));
    floods.spawn(flood(anonymous, true, 101, stop.clone(), over_unauth));
    let held = tokio::join!(
        abusers(target.clone(), Kind::Slow, n, stop.clone()),
        abusers(target.clone(), Kind::HalfOpenTcp, n, stop.clone()),
        abusers(target, Kind::HalfOpenTls, n, stop),
    );
    while floods.join_next().await.is_some() {}
    Ok(held)
}

fn mib(kib: Option<u64>) -> f64 {
    kib.map_or(0.0, |k| (k as f64 / 1024.0 * 10.0).round() / 10.0)
}

pub async fn run(cli: &Cli, label: &str) -> Result<ScenarioResult, BenchError> {
    let Some(bin) = &cli.start_ferrokube else {
        return Err(BenchError::Usage(
            "abuse starts the server itself: pass --start-ferrokube BIN".into(),
        ));
    };
    let total = cli.duration.unwrap_or(60.0);
    let (alone_for, abused_for) = (
        Duration::from_secs_f64(total / 3.0),
        Duration::from_secs_f64(total * 2.0 / 3.0),
    );
    let mut server = Started::spawn(bin, &cli.server_args, super::START_TIMEOUT).await?;
    server.wait_ready(super::START_TIMEOUT).await?;
    let kc = kubeconfig::load(&server.kubeconfig_path, None)?;
    let client = Client::connect(
        &kc,
        ClientOptions {
            connections: 1,
            http1: false,
        },
    )
    .await?;
    super::ensure_namespace(&client, &cli.namespace).await?;
    let name = format!("abuse-{}", super::run_id());
    let body = super::configmap_body(&name, &cli.namespace, "abuse", 1024);
    let path = format!("/api/v1/namespaces/{}/configmaps", cli.namespace);
    let created = client
        .request(Method::POST, &path, Some(Bytes::from(body)))
        .await?;
    if created.status != StatusCode::CREATED {
        return Err(super::setup_failure(
            "creating the ConfigMap",
            &created.status,
            &created.body,
        ));
    }
    let get = format!("{path}/{name}");
    let normal_errors: Tally = Arc::default();

    note(
        cli.quiet,
        &format!("abuse: the normal client alone for {alone_for:?}"),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let cpu_before = cpu::sample(Some(server.pid));
    let alone = {
        let load = normal_load(
            &client,
            &get,
            cli.normal_rate,
            stop.clone(),
            normal_errors.clone(),
        );
        let timer = async {
            tokio::time::sleep(alone_for).await;
            stop.store(true, Ordering::Relaxed);
        };
        tokio::join!(load, timer).0
    };
    let rss_before = server.memory().map(|m| m.rss_kib);
    let cpu_between = cpu::sample(Some(server.pid));

    note(
        cli.quiet,
        &format!(
            "abuse: again for {abused_for:?} under {} connections of each kind and floods",
            cli.abusers
        ),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let (unauth, over_auth, over_unauth): (Tally, Tally, Tally) = Default::default();
    // The abusers run on threads of their own (niced with --abusers-nice),
    // so the normal client never waits behind them in this process.
    let abusers_rt = abusers_runtime(cli.abusers_nice)?;
    let abuse = abusers_rt.spawn(abuse_until(
        kc.clone(),
        cli.abusers,
        stop.clone(),
        [unauth.clone(), over_auth.clone(), over_unauth.clone()],
    ));
    let rss_max = Arc::new(AtomicU64::new(0));
    let sampler = tokio::spawn({
        let (pid, stop, rss_max) = (server.pid, stop.clone(), rss_max.clone());
        async move {
            while !stop.load(Ordering::Relaxed) {
                if let Some(m) = crate::launch::memory(pid) {
                    rss_max.fetch_max(m.rss_kib, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    });
    let normal_stop = Arc::new(AtomicBool::new(false));
    let abused = {
        let load = normal_load(
            &client,
            &get,
            cli.normal_rate,
            normal_stop.clone(),
            normal_errors.clone(),
        );
        let timer = async {
            tokio::time::sleep(abused_for).await;
            normal_stop.store(true, Ordering::Relaxed);
        };
        tokio::join!(load, timer).0
    };
    let cpu_after = cpu::sample(Some(server.pid));
    stop.store(true, Ordering::Relaxed);
    let abused_by = abuse
        .await
        .map_err(|e| BenchError::Setup(format!("the abusers failed: {e}")));
    abusers_rt.shutdown_background();
    let (slow, half_open_tcp, half_open_tls) = abused_by??;
    let _ = sampler.await;

    // Still there, and answering a fresh client?
    let alive = server.alive();
    let fresh = Client::connect(&kc, ClientOptions::default()).await;
    let answering = match fresh {
        Ok(c) => {
            let ready = c.request(Method::GET, "/readyz", None).await;
            let read = c.request(Method::GET, &get, None).await;
            matches!((ready, read), (Ok(a), Ok(b)) if a.status == StatusCode::OK && b.status == StatusCode::OK)
        }
        Err(_) => false,
    };
    let alive_after = alive && answering;
    let normal_errors = taken(&normal_errors);
    let result = AbuseResult {
        alone_s: alone_for.as_secs_f64(),
        abused_s: abused_for.as_secs_f64(),
        abusers: cli.abusers,
        normal_rate: cli.normal_rate,
        abusers_nice: cli.abusers_nice,
        alone: alone.summary(),
        abused: abused.summary(),
        passed: alive_after && normal_errors.is_empty(),
        cpu_alone: cpu_before
            .zip(cpu_between)
            .and_then(|(a, b)| cpu::usage(&a, &b)),
        cpu_abused: cpu_between
            .zip(cpu_after)
            .and_then(|(a, b)| cpu::usage(&a, &b)),
        normal_errors,
        slow,
        half_open_tcp,
        half_open_tls,
        unauthenticated: taken(&unauth),
        oversized_authenticated: taken(&over_auth),
        oversized_unauthenticated: taken(&over_unauth),
        rss_before_mib: mib(rss_before),
        rss_max_mib: mib(Some(rss_max.load(Ordering::Relaxed))),
        rss_after_mib: mib(server.memory().map(|m| m.rss_kib)),
        alive_after,
    };
    Ok(ScenarioResult {
        scenario: "abuse".into(),
        label: label.to_string(),
        target: Target {
            source: "started".into(),
            server: server.url.clone(),
            binary: Some(bin.display().to_string()),
            server_args: cli.server_args.clone(),
            ..Default::default()
        },
        server_memory: server.memory(),
        abuse: Some(result),
        ..Default::default()
    })
}

fn cpu_text(cpu: Option<CpuUsage>) -> String {
    cpu.map_or("-".into(), |c| {
        format!(
            "CPU cores: bench {:.2}, server {}, other {:.2}",
            c.client_cores,
            c.server_cores.map_or("-".into(), |s| format!("{s:.2}")),
            c.other_cores
        )
    })
}

fn tally_text(tally: &BTreeMap<String, u64>) -> String {
    if tally.is_empty() {
        return "none".into();
    }
    tally
        .iter()
        .map(|(k, n)| format!("{k} × {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn held_text(h: &HeldConnections) -> String {
    format!(
        "{} opened, {} closed by the server (longest held {} s), {} failed to open",
        h.opened, h.closed_by_server, h.longest_held_s, h.failed_to_open
    )
}

/// The human report of an `abuse` run.
pub fn human(out: &mut String, r: &ScenarioResult, a: &AbuseResult) {
    let _ = writeln!(
        out,
        "\n{}: {} ({} s alone, {} s abused, {} connections of each kind; normal client {}; abusers at nice {})",
        r.label,
        if a.passed { "PASS" } else { "FAIL" },
        a.alone_s,
        a.abused_s,
        a.abusers,
        if a.normal_rate > 0.0 {
            format!("{} GETs/s on a schedule", a.normal_rate)
        } else {
            "closed loop".into()
        },
        a.abusers_nice
    );
    let _ = writeln!(
        out,
        "  normal GET alone:   {} requests, p50 {} ms, p99 {} ms, max {} ms; {}",
        a.alone.count,
        a.alone.p50_ms,
        a.alone.p99_ms,
        a.alone.max_ms,
        cpu_text(a.cpu_alone)
    );
    let _ = writeln!(
        out,
        "  normal GET abused:  {} requests, p50 {} ms, p99 {} ms, max {} ms; {}",
        a.abused.count,
        a.abused.p50_ms,
        a.abused.p99_ms,
        a.abused.max_ms,
        cpu_text(a.cpu_abused)
    );
    let _ = writeln!(
        out,
        "  normal client failures: {}",
        tally_text(&a.normal_errors)
    );
    let _ = writeln!(out, "  slow (slowloris): {}", held_text(&a.slow));
    let _ = writeln!(out, "  half-open TCP:    {}", held_text(&a.half_open_tcp));
    let _ = writeln!(out, "  half-open TLS:    {}", held_text(&a.half_open_tls));
    let _ = writeln!(
        out,
        "  unauthenticated, random paths: {}",
        tally_text(&a.unauthenticated)
    );
    let _ = writeln!(
        out,
        "  4 MiB bodies, authenticated: {}",
        tally_text(&a.oversized_authenticated)
    );
    let _ = writeln!(
        out,
        "  4 MiB bodies, no credentials: {}",
        tally_text(&a.oversized_unauthenticated)
    );
    let _ = writeln!(out, "  server RSS: {} MiB before, max {} MiB during, {} MiB after; alive and answering after: {}", a.rss_before_mib, a.rss_max_mib, a.rss_after_mib, a.alive_after);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_read_as_text() {
        let tally: Tally = Arc::default();
        count(&tally, "HTTP 403".into());
        count(&tally, "HTTP 403".into());
        count(&tally, "HTTP 413".into());
        assert_eq!(tally_text(&taken(&tally)), "HTTP 403 × 2, HTTP 413 × 1");
        assert_eq!(tally_text(&BTreeMap::new()), "none");
        let h = HeldConnections {
            opened: 3,
            closed_by_server: 2,
            longest_held_s: 32.1,
            failed_to_open: 0,
        };
        assert_eq!(
            held_text(&h),
            "3 opened, 2 closed by the server (longest held 32.1 s), 0 failed to open"
        );
    }
}
