//! `faults`: a durable ferrokube (its own data directory; with
//! `--storage-backend etcd`, on a 3-member etcd cluster started here) under
//! concurrent writers ([`super::fault_history`]) and resuming watchers
//! ([`super::fault_watch`]) for `--duration`, SIGKILLed and restarted at
//! random moments (on etcd, a random member is SIGKILLed and restarted
//! too). Then a last write marks the end, every watcher catches up to it,
//! a final list is taken and [`super::fault_check`] gives the verdict: no
//! acknowledged write lost, no watch event missing, duplicated or out of
//! order, nothing unexplained; 410 Gone relists are counted. The server's
//! RSS is sampled throughout (max and growth, bounded by
//! `--rss-limit-mib`). `--seed` repeats a run's random choices.
//!
//! The server and etcd members are [`super::fault_cluster`]'s.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde::Serialize;
use serde_json::Value;

use super::fault_check::{check, Recorded, Verdict};
use super::fault_cluster::{Cluster, ETCD_MEMBERS};
use super::fault_history::{
    configmap, rv_and_content, writer, ObjectKey, Op, Outcome, Rng, Write, WriterConfig, WriterLog,
};
use super::fault_watch::{collection, watcher, WatcherConfig, WatcherLog};
use crate::cli::Cli;
use crate::client::{Client, ClientOptions};
use crate::kubeconfig;
use crate::report::{ScenarioResult, Target};
use crate::runner::note;
use crate::BenchError;

const NAMESPACES: usize = 4;
const KEYS_PER_WRITER: usize = 6;
/// Three watch every namespace, one watches the first namespace only.
const WATCHERS: usize = 4;
/// How long watchers may take to catch up with the final revision.
const CATCH_UP: Duration = Duration::from_secs(120);

/// One watcher's summary.
#[derive(Debug, Clone, Serialize)]
pub struct WatcherSummary {
    pub name: String,
    /// A namespace, or `*`.
    pub scope: String,
    pub events: u64,
    pub resumes: u64,
    /// 410 Gone answers, each followed by a relist.
    pub gone_relists: u64,
    pub bookmarks: u64,
    pub reached_end: bool,
}

/// Server RSS over the run, MiB.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RssSummary {
    pub samples: usize,
    pub max_mib: f64,
    /// The highest sample in the first and in the last quarter of the run.
    pub first_quarter_max_mib: f64,
    pub last_quarter_max_mib: f64,
    /// `last_quarter_max_mib - first_quarter_max_mib`.
    pub growth_mib: f64,
    pub limit_mib: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct FaultsResult {
    pub backend: String,
    pub seed: u64,
    pub duration_s: f64,
    pub writers: usize,
    pub server_kills: u64,
    pub etcd_member_kills: u64,
    /// Longest time from a SIGKILL to ready again, ms.
    pub max_restart_ms: f64,
    pub final_revision: u64,
    /// Write outcomes by `HTTP <code>` or client error kind.
    pub write_tallies: BTreeMap<String, u64>,
    /// The first answer of each failing kind.
    pub write_samples: BTreeMap<String, String>,
    /// Writes refused before they were sent (server down).
    pub not_sent: u64,
    pub watchers: Vec<WatcherSummary>,
    pub rss: RssSummary,
    pub verdict: Verdict,
    pub passed: bool,
}

/// Samples the current server's RSS until `stop`: (seconds, KiB).
async fn sample_rss(pid: Arc<AtomicU32>, stop: Arc<AtomicBool>) -> Vec<(f64, u64)> {
    let began = Instant::now();
    let mut samples = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        if let Some(m) = crate::launch::memory(pid.load(Ordering::Relaxed)) {
            samples.push((began.elapsed().as_secs_f64(), m.rss_kib));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    samples
}

/// Max and growth of RSS samples over a run of `duration_s`.
pub fn rss_summary(samples: &[(f64, u64)], duration_s: f64, limit_mib: f64) -> RssSummary {
    let mib = |kib: u64| (kib as f64 / 1024.0 * 10.0).round() / 10.0;
    let max_in = |from: f64, to: f64| {
        samples
            .iter()
            .filter(|(t, _)| *t >= from && *t <= to)
            .map(|(_, k)| *k)
            .max()
            .map_or(0.0, mib)
    };
    let first = max_in(0.0, duration_s / 4.0);
    let last = max_in(duration_s * 3.0 / 4.0, f64::MAX);
    RssSummary {
        samples: samples.len(),
        max_mib: samples.iter().map(|(_, k)| *k).max().map_or(0.0, mib),
        first_quarter_max_mib: first,
        last_quarter_max_mib: last,
        growth_mib: ((last - first) * 10.0).round() / 10.0,
        limit_mib,
    }
}

/// The moments of the faults: the first within the first half, then
/// gaps around a fifth of the run (1 s to 15 s).
pub fn fault_gaps(rng: &mut Rng, duration: Duration) -> Vec<Duration> {
    let mean = (duration / 5).clamp(Duration::from_secs(1), Duration::from_secs(15));
    let mut gaps = vec![rng.between(duration / 10, duration / 2)];
    let mut at = gaps[0];
    loop {
        let gap = rng.between(mean / 2, mean * 3 / 2);
        at += gap;
        if at >= duration {
            return gaps;
        }
        gaps.push(gap);
    }
}

/// Creates the final write every watcher must reach; its revision. Its
/// namespace is created again if a lost write took it (the objects' own
/// loss is then the verdict's to report).
async fn sentinel(
    client: &Client,
    key: &ObjectKey,
    run: &str,
    timeout: Duration,
) -> Result<u64, BenchError> {
    let deadline = Instant::now() + super::START_TIMEOUT;
    let body = Bytes::from(configmap(key, run, "end", None).to_string());
    let path = format!("/api/v1/namespaces/{}/configmaps", key.namespace);
    let mut last = String::from("no answer");
    while Instant::now() < deadline {
        let _ = super::ensure_namespace(client, &key.namespace).await;
        let answer = tokio::time::timeout(
            timeout,
            client.request(Method::POST, &path, Some(body.clone())),
        )
        .await;
        match answer {
            Ok(Ok(reply)) if reply.status == StatusCode::CREATED => {
                let object: Value = serde_json::from_slice(&reply.body)
                    .map_err(|e| BenchError::Setup(format!("the final write's answer: {e}")))?;
                return rv_and_content(&object).map(|(rv, _)| rv).ok_or_else(|| {
                    BenchError::Setup("the final write has no resourceVersion".into())
                });
            }
            Ok(Ok(reply)) => {
                last = format!(
                    "HTTP {}: {}",
                    reply.status.as_u16(),
                    crate::runner::snippet(&reply.body, 300)
                )
            }
            Ok(Err(e)) => last = e.to_string(),
            Err(_) => last = format!("no answer within {timeout:?}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(BenchError::Setup(format!(
        "the final write of {key} was never acknowledged (last: {last})"
    )))
}

/// The final list of the run's objects.
async fn final_list(
    client: &Client,
    run: &str,
    timeout: Duration,
) -> Result<(u64, BTreeMap<ObjectKey, (u64, String)>), BenchError> {
    let deadline = Instant::now() + super::START_TIMEOUT;
    while Instant::now() < deadline {
        let answer = tokio::time::timeout(
            timeout,
            client.request(Method::GET, &collection(None, run), None),
        )
        .await;
        if let Ok(Ok(reply)) = answer {
            if reply.status == StatusCode::OK {
                let list: Value = serde_json::from_slice(&reply.body)
                    .map_err(|e| BenchError::Setup(format!("the final list: {e}")))?;
                let rv = list["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let mut state = BTreeMap::new();
                for item in list["items"].as_array().into_iter().flatten() {
                    let (Some(ns), Some(name)) = (
                        item["metadata"]["namespace"].as_str(),
                        item["metadata"]["name"].as_str(),
                    ) else {
                        continue;
                    };
                    if let Some(found) = rv_and_content(item) {
                        state.insert(
                            ObjectKey {
                                namespace: ns.into(),
                                name: name.into(),
                            },
                            found,
                        );
                    }
                }
                return Ok((rv, state));
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(BenchError::Setup("the final list never answered".into()))
}

pub async fn run(cli: &Cli, label: &str) -> Result<ScenarioResult, BenchError> {
    let Some(bin) = &cli.start_ferrokube else {
        return Err(BenchError::Usage(
            "faults starts the server itself: pass --start-ferrokube BIN".into(),
        ));
    };
    let duration = Duration::from_secs_f64(cli.duration.unwrap_or(60.0));
    let seed = cli.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let timeout = Duration::from_secs_f64(cli.timeout);
    let mut rng = Rng::new(seed);
    note(
        cli.quiet,
        &format!(
            "faults: seed {seed}, {:?} backend, {duration:?}",
            cli.storage_backend
        )
        .to_lowercase(),
    );
    let mut cluster = Cluster::start(cli, bin).await?;
    let kc = kubeconfig::load(&cluster.server.kubeconfig_path, None)?;
    let client = Client::connect(
        &kc,
        ClientOptions {
            connections: 2,
            http1: false,
        },
    )
    .await?;
    let run_id = super::run_id();
    let namespaces: Vec<String> = (0..NAMESPACES)
        .map(|i| format!("faults-{run_id}-{i}"))
        .collect();
    for ns in &namespaces {
        super::ensure_namespace(&client, ns).await?;
    }
    let stop_rss = Arc::new(AtomicBool::new(false));
    let rss = tokio::spawn(sample_rss(cluster.pid.clone(), stop_rss.clone()));
    let (end_tx, end_rx) = tokio::sync::watch::channel(None);
    let mut watchers = tokio::task::JoinSet::new();
    for index in 0..WATCHERS {
        let namespace = (index == WATCHERS - 1).then(|| namespaces[0].clone());
        watchers.spawn(watcher(WatcherConfig {
            client: client.clone(),
            index,
            name: format!("watcher-{index}"),
            namespace,
            run: run_id.clone(),
            seed: rng.next_u64(),
            end: end_rx.clone(),
            catch_up: CATCH_UP,
            timeout,
        }));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = tokio::task::JoinSet::new();
    for index in 0..cli.writers {
        let keys = (0..KEYS_PER_WRITER)
            .map(|k| ObjectKey {
                namespace: namespaces[(index + k) % NAMESPACES].clone(),
                name: format!("w{index}-k{k}"),
            })
            .collect();
        writers.spawn(writer(WriterConfig {
            client: client.clone(),
            index: WATCHERS + index,
            run: run_id.clone(),
            keys,
            seed: rng.next_u64(),
            stop: stop.clone(),
            timeout,
        }));
    }
    // The faults.
    let began = Instant::now();
    let (mut server_kills, mut member_kills, mut max_restart) = (0u64, 0u64, Duration::ZERO);
    for gap in fault_gaps(&mut rng, duration) {
        // Restarts take time too: no fault starts after the end.
        if began.elapsed() + gap >= duration {
            break;
        }
        tokio::time::sleep(gap).await;
        if cluster.etcd.is_some() && rng.below(2) == 0 {
            let member = rng.below(ETCD_MEMBERS as u64) as usize;
            let down = rng.between(Duration::from_millis(200), Duration::from_secs(3));
            note(
                cli.quiet,
                &format!(
                    "  {:.1}s: SIGKILL etcd member {member}, down {down:?}",
                    began.elapsed().as_secs_f64()
                ),
            );
            cluster.restart_member(member, down).await?;
            member_kills += 1;
        } else {
            let down = rng.between(Duration::ZERO, Duration::from_millis(500));
            let took = cluster.restart_server(down).await?;
            note(
                cli.quiet,
                &format!(
                    "  {:.1}s: SIGKILL ferrokube, ready again after {took:?}",
                    began.elapsed().as_secs_f64()
                ),
            );
            server_kills += 1;
            max_restart = max_restart.max(took);
        }
    }
    if let Some(left) = duration.checked_sub(began.elapsed()) {
        tokio::time::sleep(left).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut logs: Vec<WriterLog> = Vec::new();
    while let Some(joined) = writers.join_next().await {
        logs.push(joined.map_err(|e| BenchError::Setup(format!("a writer failed: {e}")))?);
    }
    let mut histories: BTreeMap<ObjectKey, Vec<Write>> = BTreeMap::new();
    let mut write_samples = BTreeMap::new();
    let (mut observed, mut tallies, mut not_sent, mut writer_problems) =
        (Vec::new(), BTreeMap::new(), 0, Vec::new());
    for log in logs {
        histories.extend(log.histories);
        observed.extend(log.observed);
        for (k, v) in log.tallies {
            *tallies.entry(k).or_insert(0) += v;
        }
        for (k, v) in log.samples {
            write_samples.entry(k).or_insert(v);
        }
        not_sent += log.not_sent;
        writer_problems.extend(log.problems);
    }
    // The end: one more write every watcher sees.
    let end_key = ObjectKey {
        namespace: namespaces[0].clone(),
        name: "end".into(),
    };
    let end_rv = sentinel(&client, &end_key, &run_id, timeout).await?;
    histories.insert(
        end_key,
        vec![Write {
            op: Op::Create,
            content: Some("end".into()),
            outcome: Outcome::Acked(Some(end_rv)),
        }],
    );
    end_tx.send_replace(Some(end_rv));
    note(
        cli.quiet,
        &format!("  writes over; watchers catching up to revision {end_rv}"),
    );
    let mut watcher_logs: Vec<WatcherLog> = Vec::new();
    while let Some(joined) = watchers.join_next().await {
        watcher_logs.push(joined.map_err(|e| BenchError::Setup(format!("a watcher failed: {e}")))?);
    }
    watcher_logs.sort_by(|a, b| a.name.cmp(&b.name));
    let (final_rv, final_state) = final_list(&client, &run_id, timeout).await?;
    stop_rss.store(true, Ordering::Relaxed);
    let samples = rss.await.unwrap_or_default();
    let mut verdict = check(&Recorded {
        histories: &histories,
        observed: &observed,
        watchers: &watcher_logs,
        final_state: &final_state,
        final_rv,
    });
    for p in writer_problems {
        verdict.unexplained += 1;
        verdict.problems.push(p);
    }
    let rss = rss_summary(&samples, duration.as_secs_f64(), cli.rss_limit_mib);
    let passed = verdict.passed() && rss.max_mib <= rss.limit_mib;
    let result = FaultsResult {
        backend: format!("{:?}", cli.storage_backend).to_lowercase(),
        seed,
        duration_s: (duration.as_secs_f64() * 10.0).round() / 10.0,
        writers: cli.writers,
        server_kills,
        etcd_member_kills: member_kills,
        max_restart_ms: (max_restart.as_secs_f64() * 1e4).round() / 10.0,
        final_revision: final_rv,
        write_tallies: tallies,
        write_samples,
        not_sent,
        watchers: watcher_logs
            .iter()
            .map(|w| WatcherSummary {
                name: w.name.clone(),
                scope: w.namespace.clone().unwrap_or_else(|| "*".into()),
                events: w.events.len() as u64,
                resumes: w.resumes,
                gone_relists: w.gone,
                bookmarks: w.bookmarks,
                reached_end: w.reached_end,
            })
            .collect(),
        rss,
        verdict,
        passed,
    };
    let memory = cluster.server.memory();
    Ok(ScenarioResult {
        scenario: "faults".into(),
        label: label.to_string(),
        target: Target {
            source: "started".into(),
            server: format!("https://127.0.0.1:{}", cluster.port),
            binary: Some(bin.display().to_string()),
            server_args: cluster.args.clone(),
            ..Default::default()
        },
        server_memory: memory,
        faults: Some(result),
        ..Default::default()
    })
}

/// The human report of a `faults` run.
pub fn human(out: &mut String, r: &ScenarioResult, f: &FaultsResult) {
    let v = &f.verdict;
    let _ = writeln!(
        out,
        "\n{}: {} on {} for {} s, seed {}: {} SIGKILLs of ferrokube (slowest back in {} ms), {} of etcd members",
        r.label,
        if f.passed { "PASS" } else { "FAIL" },
        f.backend,
        f.duration_s,
        f.seed,
        f.server_kills,
        f.max_restart_ms,
        f.etcd_member_kills
    );
    let _ = writeln!(
        out,
        "  writes: {} acknowledged, {} uncertain ({} of them committed), {} failed, {} not sent while down",
        v.acked_writes, v.uncertain_writes, v.uncertain_landed, v.failed_writes, f.not_sent
    );
    let tallies: Vec<String> = f
        .write_tallies
        .iter()
        .map(|(k, n)| format!("{k} × {n}"))
        .collect();
    let _ = writeln!(out, "  answers: {}", tallies.join(", "));
    for (kind, sample) in &f.write_samples {
        let _ = writeln!(out, "    {kind}, e.g. {sample}");
    }
    let _ = writeln!(
        out,
        "  lost acknowledged writes: {}; watch events missing: {}; duplicated or out of order: {}; unexplained: {}; watchers not at the end: {}",
        v.lost_writes, v.missing_events, v.out_of_order, v.unexplained, v.watchers_incomplete
    );
    for w in &f.watchers {
        let _ = writeln!(
            out,
            "  {} ({}): {} events, {} resumes, {} × 410 Gone → relist, {} bookmarks{}",
            w.name,
            w.scope,
            w.events,
            w.resumes,
            w.gone_relists,
            w.bookmarks,
            if w.reached_end {
                ""
            } else {
                ", DID NOT REACH THE END"
            }
        );
    }
    let _ = writeln!(
        out,
        "  server RSS: max {} MiB (limit {}), first quarter max {} MiB, last quarter max {} MiB, growth {} MiB ({} samples)",
        f.rss.max_mib, f.rss.limit_mib, f.rss.first_quarter_max_mib, f.rss.last_quarter_max_mib, f.rss.growth_mib, f.rss.samples
    );
    for p in &v.problems {
        let _ = writeln!(out, "  problem: {p}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_fall_within_the_run() {
        for seed in 0..50 {
            let mut rng = Rng::new(seed);
            for secs in [3, 60, 300] {
                let duration = Duration::from_secs(secs);
                let gaps = fault_gaps(&mut rng, duration);
                assert!(!gaps.is_empty());
                assert!(gaps.iter().sum::<Duration>() < duration);
            }
        }
    }

    #[test]
    fn rss_growth_compares_the_first_and_last_quarters() {
        let samples = [
            (0.5, 10 * 1024),
            (2.0, 50 * 1024),
            (3.5, 30 * 1024),
            (3.9, 20 * 1024),
        ];
        let s = rss_summary(&samples, 4.0, 100.0);
        assert_eq!(
            (
                s.max_mib,
                s.first_quarter_max_mib,
                s.last_quarter_max_mib,
                s.growth_mib
            ),
            (50.0, 10.0, 30.0, 20.0)
        );
        assert_eq!(rss_summary(&[], 4.0, 1.0).max_mib, 0.0);
    }
}
