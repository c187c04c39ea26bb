//! `ready`: start ferrokube --runs times on an empty data dir; time from
//! spawn to the first 200 from `/readyz` (polled every millisecond), and
//! VmRSS after --idle-ms of idling.

use std::path::Path;
use std::time::Duration;

use super::START_TIMEOUT;
use crate::cli::{Cli, Variant};
use crate::launch::Started;
use crate::report::{ReadyResult, ReadySample, ScenarioResult, Target};
use crate::runner;
use crate::stats::{round3, MinMedMax};
use crate::BenchError;

pub async fn run(
    cli: &Cli,
    bin: &Path,
    variant: &Variant,
    label: &str,
) -> Result<ScenarioResult, BenchError> {
    let mut samples = Vec::with_capacity(cli.runs);
    let mut server = String::new();
    for run in 1..=cli.runs {
        let mut started = Started::spawn(bin, &variant.server_args, START_TIMEOUT).await?;
        let ready = started.wait_ready(START_TIMEOUT).await?;
        tokio::time::sleep(Duration::from_millis(cli.idle_ms)).await;
        let memory = started.memory();
        server.clone_from(&started.url);
        let sample = ReadySample {
            ready_ms: round3(ready.as_secs_f64() * 1e3),
            listening_ms: round3(started.listening_after.as_secs_f64() * 1e3),
            rss_kib: memory.map(|m| m.rss_kib),
        };
        drop(started);
        runner::note(
            cli.quiet,
            &format!(
                "{label} {run}/{}: ready after {:.1} ms (listening after {:.1} ms), RSS {}",
                cli.runs,
                sample.ready_ms,
                sample.listening_ms,
                sample
                    .rss_kib
                    .map(|k| format!("{:.1} MiB", k as f64 / 1024.0))
                    .unwrap_or_else(|| "unknown".into())
            ),
        );
        samples.push(sample);
    }
    let of = |f: &dyn Fn(&ReadySample) -> Option<f64>| {
        let values: Vec<f64> = samples.iter().filter_map(f).collect();
        MinMedMax::of(&values)
    };
    let missing = || BenchError::Launch("no ready samples".into());
    Ok(ScenarioResult {
        scenario: "ready".into(),
        label: label.to_string(),
        target: Target {
            source: "started".into(),
            server: server.clone(),
            kubeconfig: None,
            binary: Some(bin.display().to_string()),
            server_args: variant.server_args.clone(),
        },
        load: None,
        ready: Some(ReadyResult {
            runs: samples.len(),
            ready_ms: of(&|s| Some(s.ready_ms)).ok_or_else(missing)?,
            listening_ms: of(&|s| Some(s.listening_ms)).ok_or_else(missing)?,
            rss_mib: of(&|s| s.rss_kib.map(|k| round3(k as f64 / 1024.0))),
            idle_ms: cli.idle_ms,
            samples,
        }),
        watch: None,
        list: None,
        server_memory: None,
    })
}
