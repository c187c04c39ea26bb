//! `in-process`: ferrokube-testing's `TestServer` in this process (issue 20).
//!
//! - start to a ready `kube::Client` and stop, --servers times (default
//!   100) one after another (the first start, which makes the process's
//!   certificates and the template later servers start from, apart), with this process's RSS and thread count after
//!   the first cycle and after the last (no growth expected);
//! - `snapshot` and `restore` of a server holding --objects ConfigMaps
//!   (default 10,000), each timed --runs times (every restore undoes one
//!   write made after the snapshot).

use std::time::{Duration, Instant};

use ferrokube_testing::TestServer;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use serde::Serialize;

use crate::cli::Cli;
use crate::report::{ScenarioResult, Target};
use crate::runner;
use crate::stats::{round3, MinMedMax};
use crate::BenchError;

#[derive(Debug, Clone, Serialize, Default)]
pub struct InProcessResult {
    /// The first start of the process (certificates and template made), ms.
    pub first_start_ms: f64,
    /// Later starts to a ready client, ms.
    pub start_ms: Option<MinMedMax>,
    /// Dropping a server until its thread has ended, ms.
    pub stop_ms: Option<MinMedMax>,
    pub cycles: usize,
    /// This process after the first cycle and after the last.
    pub rss_kib_after_first: u64,
    pub rss_kib_after_last: u64,
    pub threads_after_first: usize,
    pub threads_after_last: usize,
    /// Objects in the server whose state is snapshotted (ConfigMaps added
    /// to the built-in objects).
    pub objects: usize,
    pub snapshot_us: Option<MinMedMax>,
    pub restore_us: Option<MinMedMax>,
}

fn own_rss_kib() -> u64 {
    crate::launch::memory(std::process::id()).map_or(0, |memory| memory.rss_kib)
}

fn own_threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |tasks| tasks.count())
}

fn setup(error: impl std::fmt::Display) -> BenchError {
    BenchError::Setup(error.to_string())
}

fn millis(elapsed: Duration) -> f64 {
    round3(elapsed.as_secs_f64() * 1e3)
}

fn micros(elapsed: Duration) -> f64 {
    round3(elapsed.as_secs_f64() * 1e6)
}

pub async fn run(cli: &Cli, label: &str) -> Result<ScenarioResult, BenchError> {
    let mut result = InProcessResult {
        objects: cli.objects,
        ..Default::default()
    };
    let began = Instant::now();
    let first = TestServer::start().await.map_err(setup)?;
    result.first_start_ms = millis(began.elapsed());
    drop(first);

    let cycles = cli.servers.max(1);
    result.cycles = cycles;
    let mut starts = Vec::with_capacity(cycles);
    let mut stops = Vec::with_capacity(cycles);
    for cycle in 0..cycles {
        let began = Instant::now();
        let server = TestServer::start().await.map_err(setup)?;
        starts.push(millis(began.elapsed()));
        let began = Instant::now();
        drop(server);
        stops.push(millis(began.elapsed()));
        if cycle == 0 {
            result.rss_kib_after_first = own_rss_kib();
            result.threads_after_first = own_threads();
        }
        if !cli.quiet && cycle % 10 == 9 {
            runner::note(
                cli.quiet,
                &format!("{label}: {} servers started and stopped", cycle + 1),
            );
        }
    }
    result.rss_kib_after_last = own_rss_kib();
    result.threads_after_last = own_threads();
    result.start_ms = MinMedMax::of(&starts);
    result.stop_ms = MinMedMax::of(&stops);

    let server = TestServer::start().await.map_err(setup)?;
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    runner::note(
        cli.quiet,
        &format!("{label}: creating {} ConfigMaps", cli.objects),
    );
    futures::stream::iter(0..cli.objects)
        .map(|index| {
            let api = api.clone();
            async move {
                let mut config_map = ConfigMap::default();
                config_map.metadata.name = Some(format!("fixture-{index}"));
                config_map.data = Some([("index".to_string(), index.to_string())].into());
                api.create(&PostParams::default(), &config_map).await
            }
        })
        .buffer_unordered(cli.concurrency)
        .try_for_each(|_| async { Ok(()) })
        .await
        .map_err(setup)?;
    let mut snapshots = Vec::with_capacity(cli.runs);
    let mut snapshot = None;
    for _ in 0..cli.runs {
        let began = Instant::now();
        let taken = server.snapshot().await.map_err(setup)?;
        snapshots.push(micros(began.elapsed()));
        snapshot = Some(taken);
    }
    let snapshot = snapshot.ok_or_else(|| setup("--runs is 0"))?;
    let mut restores = Vec::with_capacity(cli.runs);
    for round in 0..cli.runs {
        let mut config_map = ConfigMap::default();
        config_map.metadata.name = Some(format!("after-snapshot-{round}"));
        api.create(&PostParams::default(), &config_map)
            .await
            .map_err(setup)?;
        let began = Instant::now();
        server.restore(&snapshot).await.map_err(setup)?;
        restores.push(micros(began.elapsed()));
    }
    result.snapshot_us = MinMedMax::of(&snapshots);
    result.restore_us = MinMedMax::of(&restores);
    drop(server);

    Ok(ScenarioResult {
        scenario: "in-process".into(),
        label: label.to_string(),
        target: Target {
            source: "in-process".into(),
            server: "ferrokube-testing TestServer".into(),
            ..Default::default()
        },
        in_process: Some(result),
        ..Default::default()
    })
}

/// The human-readable report lines.
pub fn human(out: &mut String, r: &ScenarioResult, result: &InProcessResult) {
    use std::fmt::Write as _;
    let range = |value: &Option<MinMedMax>, unit: &str| match value {
        Some(value) => format!(
            "median {:.3} {unit} (min {:.3}, max {:.3})",
            value.median, value.min, value.max
        ),
        None => "-".into(),
    };
    let _ = writeln!(out, "\n{} ({})", r.label, r.target.server);
    let _ = writeln!(
        out,
        "  first start (certificates and template made): {:.3} ms",
        result.first_start_ms
    );
    let _ = writeln!(
        out,
        "  start to a ready client: {}",
        range(&result.start_ms, "ms")
    );
    let _ = writeln!(
        out,
        "  stop (drop until joined): {}",
        range(&result.stop_ms, "ms")
    );
    let _ = writeln!(
        out,
        "  {} servers started and stopped: RSS {} → {} KiB, threads {} → {}",
        result.cycles,
        result.rss_kib_after_first,
        result.rss_kib_after_last,
        result.threads_after_first,
        result.threads_after_last
    );
    let _ = writeln!(
        out,
        "  with {} ConfigMaps: snapshot {}; restore {}",
        result.objects,
        range(&result.snapshot_us, "µs"),
        range(&result.restore_us, "µs")
    );
}
