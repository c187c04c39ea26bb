//! The `faults` scenario's cluster: a durable ferrokube on its own data
//! directory and a fixed port (so a restart keeps the address clients
//! know), and with `--storage-backend etcd` the 3 etcd members it uses —
//! ferrokube-testkit's (`etcd.rs`), the members the server's fault and
//! replica tests start. SIGKILL and restart of either.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cli::{Cli, FaultBackend};
use crate::launch::{unique_dir, Started};
use crate::runner::note;
use crate::BenchError;

pub const ETCD_MEMBERS: usize = 3;

/// The cluster under test: the server and, on etcd, its members.
pub struct Cluster {
    bin: PathBuf,
    pub args: Vec<String>,
    dir: PathBuf,
    pub port: u16,
    pub server: Started,
    pub etcd: Option<Arc<Mutex<ferrokube_testkit::etcd::Etcd>>>,
    /// The current server's process id, for the RSS sampler.
    pub pid: Arc<AtomicU32>,
}

impl Cluster {
    pub async fn start(cli: &Cli, bin: &Path) -> Result<Cluster, BenchError> {
        let mut args = vec!["--fsync=true".to_string()];
        let etcd = match cli.storage_backend {
            FaultBackend::Sqlite => {
                args.push("--storage-backend=sqlite".into());
                None
            }
            FaultBackend::Etcd => {
                note(cli.quiet, &format!("starting {ETCD_MEMBERS} etcd members"));
                let etcd =
                    blocking(|| ferrokube_testkit::etcd::Etcd::cluster(ETCD_MEMBERS)).await?;
                args.push("--storage-backend=etcd3".into());
                args.push(etcd.servers_flag());
                Some(Arc::new(Mutex::new(etcd)))
            }
        };
        args.extend(cli.server_args.iter().cloned());
        let dir = unique_dir();
        let port = ferrokube_testkit::etcd::free_port();
        let server = spawn(bin, &args, &dir, port).await?;
        let pid = Arc::new(AtomicU32::new(server.pid));
        Ok(Cluster {
            bin: bin.to_path_buf(),
            args,
            dir,
            port,
            server,
            etcd,
            pid,
        })
    }

    /// SIGKILL the server, wait `down`, start it again on the same data.
    pub async fn restart_server(&mut self, down: Duration) -> Result<Duration, BenchError> {
        let killed = Instant::now();
        self.server.kill();
        tokio::time::sleep(down).await;
        self.server = spawn(&self.bin, &self.args, &self.dir, self.port).await?;
        self.pid.store(self.server.pid, Ordering::Relaxed);
        Ok(killed.elapsed())
    }

    /// SIGKILL etcd member `index`, wait `down`, restart it on its data.
    pub async fn restart_member(&mut self, index: usize, down: Duration) -> Result<(), BenchError> {
        let Some(etcd) = self.etcd.clone() else {
            return Ok(());
        };
        let killing = etcd.clone();
        blocking(move || lock(&killing).kill(index)).await?;
        tokio::time::sleep(down).await;
        blocking(move || lock(&etcd).restart(index)).await
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.server.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs blocking (testkit's etcd waits by sleeping) off the runtime; its
/// panics (an etcd that never became healthy) become errors.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, BenchError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| BenchError::Setup(format!("etcd: {e}")))
}

async fn spawn(bin: &Path, args: &[String], dir: &Path, port: u16) -> Result<Started, BenchError> {
    // The port may still be held for a moment after a SIGKILL.
    let mut attempt = 0;
    loop {
        attempt += 1;
        let started = Started::spawn_on(
            bin,
            args,
            dir.to_path_buf(),
            true,
            port,
            super::START_TIMEOUT,
        )
        .await;
        match started {
            Ok(mut server) => {
                server.wait_ready(super::START_TIMEOUT).await?;
                return Ok(server);
            }
            Err(e) if attempt >= 20 => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}
