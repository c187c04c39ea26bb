//! `memory`: a ferrokube started here, filled with ConfigMaps of --size
//! bytes up to each count of --stored (10,000 then 100,000 by default, on
//! one server), and its resident memory at each count next to the raw
//! bytes of the objects sent.

use std::time::Duration;

use hyper::Method;
use serde::Serialize;

use super::write::{seed_configmaps, SeedPlan};
use super::{ensure_namespace, run_id, Endpoint};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::ScenarioResult;
use crate::runner;
use crate::stats::round3;
use crate::BenchError;

/// The server's memory with `objects` stored.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryPoint {
    pub objects: u64,
    /// Bytes of the create bodies sent: objects × --size.
    pub raw_bytes: u64,
    /// Bytes of one object as the server answers a GET for it (with the
    /// metadata it adds: uid, timestamps, managedFields).
    pub stored_json_bytes: usize,
    pub rss_kib: u64,
    /// The peak resident set so far.
    pub hwm_kib: u64,
    /// (RSS − RSS empty) per object, bytes.
    pub per_object_bytes: f64,
    /// RSS / raw bytes: the goal is ≤ 2.5 at 100,000 1 KiB ConfigMaps.
    pub rss_to_raw: f64,
    /// (RSS − RSS empty) / raw bytes: the store's own overhead.
    pub growth_to_raw: f64,
    /// Creates per second while filling up to this count.
    pub fill_per_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemoryResult {
    pub object_bytes: usize,
    /// RSS of the empty, ready server after --idle-ms.
    pub empty_rss_kib: u64,
    pub points: Vec<MemoryPoint>,
}

/// RSS / raw and growth / raw, rounded; 0 for no raw bytes.
pub fn ratios(rss_kib: u64, empty_kib: u64, raw_bytes: u64) -> (f64, f64) {
    if raw_bytes == 0 {
        return (0.0, 0.0);
    }
    let raw = raw_bytes as f64;
    (
        round3(rss_kib as f64 * 1024.0 / raw),
        round3(rss_kib.saturating_sub(empty_kib) as f64 * 1024.0 / raw),
    )
}

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<ScenarioResult, BenchError> {
    let Some(pid) = endpoint.pid() else {
        return Err(BenchError::Usage(
            "memory reads the server's RSS: pass --start-ferrokube BIN".into(),
        ));
    };
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let idle = Duration::from_millis(cli.idle_ms);
    tokio::time::sleep(idle).await;
    let empty = crate::launch::memory(pid)
        .ok_or_else(|| BenchError::Setup("cannot read the server's /proc status".into()))?;
    let mut counts = cli.stored_counts(&[10_000, 100_000]);
    counts.sort_unstable();
    counts.dedup();
    let run = run_id();
    let mut points = Vec::new();
    let mut have = 0u64;
    for &count in &counts {
        let count = count as u64;
        let mut fill_per_s = 0.0;
        if count > have {
            // Names continue where the previous count stopped.
            let run_part = format!("{run}-{have}");
            let outcome = seed_configmaps(
                &client,
                SeedPlan {
                    namespace: &cli.namespace,
                    run: &run_part,
                    count: count - have,
                    size: cli.size,
                    concurrency: cli.concurrency,
                    progress: (!cli.quiet).then(|| format!("{label}: filling to {count}")),
                    server_pid: Some(pid),
                },
            )
            .await?;
            let secs = outcome.elapsed.as_secs_f64();
            if secs > 0.0 {
                fill_per_s = ((count - have) as f64 / secs).round();
            }
            have = count;
        }
        tokio::time::sleep(idle).await;
        let memory = crate::launch::memory(pid)
            .ok_or_else(|| BenchError::Setup("cannot read the server's /proc status".into()))?;
        let probe = client
            .request(
                Method::GET,
                &format!(
                    "/api/v1/namespaces/{}/configmaps/bench-{run}-0-0",
                    cli.namespace
                ),
                None,
            )
            .await?;
        let raw_bytes = count * cli.size as u64;
        let (rss_to_raw, growth_to_raw) = ratios(memory.rss_kib, empty.rss_kib, raw_bytes);
        let point = MemoryPoint {
            objects: count,
            raw_bytes,
            stored_json_bytes: if probe.status.is_success() {
                probe.body.len()
            } else {
                0
            },
            rss_kib: memory.rss_kib,
            hwm_kib: memory.hwm_kib,
            per_object_bytes: if count > 0 {
                round3(memory.rss_kib.saturating_sub(empty.rss_kib) as f64 * 1024.0 / count as f64)
            } else {
                0.0
            },
            rss_to_raw,
            growth_to_raw,
            fill_per_s,
        };
        runner::note(
            cli.quiet,
            &format!(
                "{label}: {count} objects: RSS {:.1} MiB, {:.0} B per object, {:.2}× raw",
                point.rss_kib as f64 / 1024.0,
                point.per_object_bytes,
                point.rss_to_raw
            ),
        );
        points.push(point);
    }
    Ok(ScenarioResult {
        scenario: "memory".into(),
        label: label.to_string(),
        target: endpoint.target.clone(),
        memory: Some(MemoryResult {
            object_bytes: cli.size,
            empty_rss_kib: empty.rss_kib,
            points,
        }),
        server_memory: endpoint.memory(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_to_raw() {
        // 100,000 × 1 KiB raw; 250 MiB RSS of which 10 MiB empty.
        let raw = 100_000 * 1024;
        let (rss, growth) = ratios(250 * 1024, 10 * 1024, raw);
        assert_eq!(rss, round3(250.0 * 1024.0 * 1024.0 / raw as f64));
        assert!((rss - 2.56).abs() < 0.001, "{rss}");
        assert!((growth - 2.458).abs() < 0.001, "{growth}");
        assert_eq!(ratios(1, 2, 0), (0.0, 0.0));
        // RSS below the empty reading (pages returned): no negative growth.
        assert_eq!(ratios(5, 10, 1024).1, 0.0);
    }
}
