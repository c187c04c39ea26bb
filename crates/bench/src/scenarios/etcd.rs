//! The write ceiling: etcd's own raw put rate at the same concurrency, on
//! an etcd this tool starts in a temp dir (the `etcd` on PATH, or
//! `--etcd BIN`), driven through the same `etcd-client` crate the store's
//! etcd backend uses. Keys are distinct per put, values --size bytes, each
//! put durable (etcd fsyncs its WAL per batch) — the same promise a
//! ferrokube create with fsync on makes. No etcd: the ceiling is skipped
//! with a note.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli::Cli;
use crate::report::{LoadResult, ScenarioResult, Target};
use crate::runner::{ErrorTally, LoadOutcome, Stop};
use crate::stats::Histogram;
use crate::BenchError;

/// A running etcd of our own; killed and its directory removed on drop.
pub struct StartedEtcd {
    child: Child,
    dir: PathBuf,
    pub endpoint: String,
}

impl Drop for StartedEtcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> Result<u16, BenchError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| BenchError::Setup(format!("finding a free port: {e}")))
}

/// `--etcd`, else `etcd` on PATH.
pub fn find_etcd(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return path.is_file().then(|| path.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("etcd"))
        .find(|candidate| candidate.is_file())
}

/// The arguments of a single-member etcd on loopback ports.
pub fn etcd_args(data_dir: &Path, client_port: u16, peer_port: u16) -> Vec<String> {
    let client = format!("http://127.0.0.1:{client_port}");
    let peer = format!("http://127.0.0.1:{peer_port}");
    vec![
        "--name=bench".into(),
        format!("--data-dir={}", data_dir.display()),
        format!("--listen-client-urls={client}"),
        format!("--advertise-client-urls={client}"),
        format!("--listen-peer-urls={peer}"),
        format!("--initial-advertise-peer-urls={peer}"),
        format!("--initial-cluster=bench={peer}"),
        "--log-level=error".into(),
        "--logger=zap".into(),
    ]
}

impl StartedEtcd {
    pub async fn start(bin: &Path) -> Result<StartedEtcd, BenchError> {
        let dir = std::env::temp_dir().join(format!(
            "ferrokube-bench-etcd-{}-{}",
            std::process::id(),
            super::run_id()
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| BenchError::Setup(format!("creating {}: {e}", dir.display())))?;
        let (client_port, peer_port) = (free_port()?, free_port()?);
        let log = std::fs::File::create(dir.join("etcd.log"))
            .map_err(|e| BenchError::Setup(format!("creating the etcd log: {e}")))?;
        let child = Command::new(bin)
            .args(etcd_args(&dir.join("data"), client_port, peer_port))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| BenchError::Setup(format!("starting {}: {e}", bin.display())))?;
        let started = StartedEtcd {
            child,
            dir,
            endpoint: format!("http://127.0.0.1:{client_port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(mut client) = etcd_client::Client::connect([&started.endpoint], None).await {
                if client.status().await.is_ok() {
                    return Ok(started);
                }
            }
            if Instant::now() >= deadline {
                let log = std::fs::read_to_string(started.dir.join("etcd.log")).unwrap_or_default();
                return Err(BenchError::Setup(format!(
                    "etcd not ready within 30 s: {}",
                    log.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// C workers putting distinct keys of `size` bytes for the run's stop.
pub async fn put_load(
    endpoint: &str,
    concurrency: usize,
    connections: usize,
    size: usize,
    stop: Stop,
    timeout: Duration,
) -> Result<LoadOutcome, BenchError> {
    let mut clients = Vec::new();
    for _ in 0..connections.max(1) {
        let client = etcd_client::Client::connect([endpoint], None)
            .await
            .map_err(|e| BenchError::Setup(format!("connecting to etcd: {e}")))?;
        clients.push(client.kv_client());
    }
    let value = vec![b'x'; size];
    let halt = Arc::new(AtomicBool::new(false));
    let recording = Arc::new(AtomicBool::new(matches!(stop, Stop::Requests(_))));
    let issued = Arc::new(AtomicU64::new(0));
    let completed = Arc::new(AtomicU64::new(0));
    let began = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..concurrency.max(1) {
        let mut kv = clients[worker % clients.len()].clone();
        let value = value.clone();
        let (halt, recording, issued, completed) = (
            halt.clone(),
            recording.clone(),
            issued.clone(),
            completed.clone(),
        );
        workers.spawn(async move {
            let mut latency = Histogram::new();
            let mut errors: Vec<String> = Vec::new();
            let mut seq = 0u64;
            while !halt.load(Ordering::Relaxed) {
                if let Stop::Requests(limit) = stop {
                    if issued.fetch_add(1, Ordering::Relaxed) >= limit {
                        break;
                    }
                }
                let key = format!("/bench/{worker}/{seq}");
                seq += 1;
                let started = Instant::now();
                let result = tokio::time::timeout(timeout, kv.put(key, value.clone(), None)).await;
                let took = started.elapsed();
                completed.fetch_add(1, Ordering::Relaxed);
                match result {
                    Ok(Ok(_)) => {
                        if recording.load(Ordering::Relaxed) && !halt.load(Ordering::Relaxed) {
                            latency.record(took);
                        }
                    }
                    Ok(Err(e)) => errors.push(e.to_string()),
                    Err(_) => errors.push(format!("no answer within {timeout:?}")),
                }
            }
            (latency, errors)
        });
    }
    let elapsed = match stop {
        Stop::Duration { warmup, measure } => {
            tokio::time::sleep(warmup).await;
            recording.store(true, Ordering::Relaxed);
            let window = Instant::now();
            tokio::time::sleep(measure).await;
            halt.store(true, Ordering::Relaxed);
            Some(window.elapsed())
        }
        Stop::Requests(_) => None,
    };
    let mut latency = Histogram::new();
    let mut errors = 0u64;
    let mut error_kinds = std::collections::BTreeMap::new();
    while let Some(joined) = workers.join_next().await {
        let Ok((h, errs)) = joined else { continue };
        latency.merge(&h);
        errors += errs.len() as u64;
        if let Some(first) = errs.into_iter().next() {
            error_kinds
                .entry("etcd put".to_string())
                .or_insert(ErrorTally {
                    count: 0,
                    sample: first,
                })
                .count += 1;
        }
    }
    Ok(LoadOutcome {
        latency,
        errors,
        error_kinds,
        completed: completed.load(Ordering::Relaxed),
        elapsed: elapsed.unwrap_or_else(|| began.elapsed()),
        cpu: None,
    })
}

/// The `etcd put` ceiling result, or a result that says why there is none.
pub async fn run(cli: &Cli) -> Result<ScenarioResult, BenchError> {
    let label = "etcd put ceiling".to_string();
    let Some(bin) = find_etcd(cli.etcd.as_deref()) else {
        let why = "no etcd binary (install etcd, e.g. Debian's etcd-server, or pass --etcd BIN)";
        crate::runner::note(cli.quiet, &format!("{label}: skipped: {why}"));
        return Ok(ScenarioResult {
            scenario: "etcd-put".into(),
            label,
            unsupported: Some(why.into()),
            ..Default::default()
        });
    };
    crate::runner::note(cli.quiet, &format!("starting {}", bin.display()));
    let etcd = StartedEtcd::start(&bin).await?;
    let outcome = put_load(
        &etcd.endpoint,
        cli.concurrency,
        cli.connections,
        cli.size,
        cli.stop(),
        Duration::from_secs_f64(cli.timeout),
    )
    .await?;
    let memory = crate::launch::memory(etcd.child.id());
    Ok(ScenarioResult {
        scenario: "etcd-put".into(),
        label,
        target: Target {
            source: "started".into(),
            server: etcd.endpoint.clone(),
            binary: Some(bin.display().to_string()),
            ..Default::default()
        },
        load: Some(LoadResult::from_outcome(
            &outcome,
            cli.concurrency,
            "grpc",
            cli.connections,
            cli.size,
            0,
            cli.warmup_s(),
        )),
        server_memory: memory,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_member_arguments() {
        let args = etcd_args(Path::new("/tmp/d"), 2379, 2380);
        assert!(args.contains(&"--data-dir=/tmp/d".to_string()));
        assert!(args.contains(&"--listen-client-urls=http://127.0.0.1:2379".to_string()));
        assert!(args.contains(&"--initial-cluster=bench=http://127.0.0.1:2380".to_string()));
    }

    #[test]
    fn finds_an_explicit_binary_only_when_it_exists() {
        assert_eq!(find_etcd(Some(Path::new("/nonexistent/etcd"))), None);
        let me = std::env::current_exe().expect("exe");
        assert_eq!(find_etcd(Some(&me)), Some(me.clone()));
    }
}
