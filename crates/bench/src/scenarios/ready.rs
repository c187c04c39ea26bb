//! `ready`: start ferrokube --runs times on an empty data dir; time from
//! spawn to the first 200 from `/readyz` (polled every millisecond), and
//! VmRSS after --idle-ms of idling. With `--stored N`: N ConfigMaps of
//! --size bytes are loaded first, the server stopped (SIGTERM), and every
//! timed start is a restart on that data (the last object checked after
//! each). With `--crds N`: N CRDs of a --crd-fields schema (default 200)
//! are installed first, and after each start the last one's custom
//! resources must be listable (servable as soon as the server is ready).

use std::path::Path;
use std::time::Duration;

use hyper::{Method, StatusCode};

use super::write::{seed_configmaps, SeedPlan};
use super::{ensure_namespace, run_id, START_TIMEOUT};
use crate::cli::{Cli, Variant};
use crate::client::{Client, ClientOptions};
use crate::launch::Started;
use crate::report::{ReadyResult, ReadySample, ScenarioResult, Target};
use crate::runner;
use crate::stats::{round3, MinMedMax};
use crate::BenchError;

/// Starts a server on `dir`, creates `stored` ConfigMaps of --size bytes
/// and --crds CRDs, stops it; returns the paths to check after restarts.
async fn preload(
    cli: &Cli,
    bin: &Path,
    variant: &Variant,
    dir: &Path,
    stored: usize,
    label: &str,
) -> Result<Vec<String>, BenchError> {
    let mut started = Started::spawn_in(
        bin,
        &variant.server_args,
        dir.to_path_buf(),
        true,
        START_TIMEOUT,
    )
    .await?;
    started.wait_ready(START_TIMEOUT).await?;
    let kc = crate::kubeconfig::load(&started.kubeconfig_path, None)?;
    let client = Client::connect(&kc, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let run = run_id();
    let mut checks = Vec::new();
    if stored > 0 {
        let outcome = seed_configmaps(
            &client,
            SeedPlan {
                namespace: &cli.namespace,
                run: &run,
                count: stored as u64,
                size: cli.size,
                concurrency: cli.concurrency,
                progress: (!cli.quiet).then(|| format!("{label}: pre-loading")),
                server_pid: Some(started.pid),
            },
        )
        .await?;
        runner::note(
            cli.quiet,
            &format!(
                "{label}: {stored} ConfigMaps stored in {:.1} s",
                outcome.elapsed.as_secs_f64()
            ),
        );
        checks.push(format!(
            "/api/v1/namespaces/{}/configmaps/bench-{run}-{}",
            cli.namespace,
            stored.saturating_sub(1)
        ));
    }
    if cli.crds > 0 {
        let fields = cli.crd_fields.unwrap_or(CRD_FIELDS);
        let began = std::time::Instant::now();
        let mut last = String::new();
        for index in 0..cli.crds {
            last = format!("r{index}-{run}.bench.ferrokube.dev");
            super::crd::install(&client, &last, fields, &cli.namespace).await?;
        }
        runner::note(
            cli.quiet,
            &format!(
                "{label}: {} CRDs of {fields} fields installed in {:.1} s",
                cli.crds,
                began.elapsed().as_secs_f64()
            ),
        );
        checks.push(format!(
            "/apis/{last}/v1/namespaces/{}/widgets",
            cli.namespace
        ));
    }
    runner::note(cli.quiet, &format!("{label}: restarting"));
    drop(client);
    started.stop(Duration::from_secs(60));
    Ok(checks)
}

/// Fields of each pre-installed CRD's schema unless --crd-fields says otherwise.
const CRD_FIELDS: usize = 200;

/// `stored` objects are pre-loaded into one data dir that every timed
/// start reuses (0: a fresh, empty dir per start).
pub async fn run(
    cli: &Cli,
    bin: &Path,
    variant: &Variant,
    label: &str,
    stored: usize,
) -> Result<ScenarioResult, BenchError> {
    let mut samples = Vec::with_capacity(cli.runs);
    let mut server = String::new();
    let data = if stored > 0 || cli.crds > 0 {
        let dir = crate::launch::unique_dir();
        match preload(cli, bin, variant, &dir, stored, label).await {
            Ok(check) => Some((dir, check)),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        }
    } else {
        None
    };
    let outcome = timed_starts(
        cli,
        bin,
        variant,
        label,
        data.as_ref(),
        &mut samples,
        &mut server,
    )
    .await;
    if let Some((dir, _)) = &data {
        let _ = std::fs::remove_dir_all(dir);
    }
    outcome?;
    finish(cli, bin, variant, label, stored, samples, server)
}

async fn timed_starts(
    cli: &Cli,
    bin: &Path,
    variant: &Variant,
    label: &str,
    data: Option<&(std::path::PathBuf, Vec<String>)>,
    samples: &mut Vec<ReadySample>,
    server: &mut String,
) -> Result<(), BenchError> {
    for run in 1..=cli.runs {
        let mut started = match data {
            Some((dir, _)) => {
                Started::spawn_in(bin, &variant.server_args, dir.clone(), true, START_TIMEOUT)
                    .await?
            }
            None => Started::spawn(bin, &variant.server_args, START_TIMEOUT).await?,
        };
        let ready = started.wait_ready(START_TIMEOUT).await?;
        if let Some((_, checks)) = data {
            let kc = crate::kubeconfig::load(&started.kubeconfig_path, None)?;
            let client = Client::connect(&kc, ClientOptions::default()).await?;
            for check in checks {
                let reply = client.request(Method::GET, check, None).await?;
                if reply.status != StatusCode::OK {
                    return Err(BenchError::Setup(format!(
                        "right after the restart GET {check}: HTTP {} (is the storage backend durable, are CRDs served at ready?)",
                        reply.status.as_u16()
                    )));
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(cli.idle_ms)).await;
        let memory = started.memory();
        server.clone_from(&started.url);
        let sample = ReadySample {
            ready_ms: round3(ready.as_secs_f64() * 1e3),
            listening_ms: round3(started.listening_after.as_secs_f64() * 1e3),
            rss_kib: memory.map(|m| m.rss_kib),
        };
        if data.is_some() {
            started.stop(Duration::from_secs(60));
        }
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
    Ok(())
}

fn finish(
    cli: &Cli,
    bin: &Path,
    variant: &Variant,
    label: &str,
    stored: usize,
    samples: Vec<ReadySample>,
    server: String,
) -> Result<ScenarioResult, BenchError> {
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
            stored,
            samples,
        }),
        watch: None,
        list: None,
        server_memory: None,
        ..Default::default()
    })
}
