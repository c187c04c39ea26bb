//! Starting a ferrokube of our own: a fresh data directory under the
//! system temp dir, `serve --secure-port 0`, the URL and kubeconfig taken
//! from the line it prints, `/readyz` polled every millisecond, and
//! `/proc/PID/status` for its memory. The process is killed and the
//! directory removed on drop.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hyper::{Method, StatusCode};
use serde::Serialize;

use crate::client::{Client, ClientOptions};
use crate::kubeconfig;
use crate::BenchError;

/// A running ferrokube started by this tool.
pub struct Started {
    child: Child,
    dir: PathBuf,
    /// Leave `dir` on drop (a data dir that outlives this process).
    keep_dir: bool,
    pub pid: u32,
    pub url: String,
    pub kubeconfig_path: PathBuf,
    /// When `spawn` was called.
    pub spawned: Instant,
    /// From spawn to the "serving on" line.
    pub listening_after: Duration,
}

/// Resident memory of a process, from `/proc/PID/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Memory {
    /// `VmRSS`.
    pub rss_kib: u64,
    /// `VmHWM`: the peak resident set.
    pub hwm_kib: u64,
}

/// `VmRSS` and `VmHWM` out of `/proc/PID/status` text.
pub fn parse_status(text: &str) -> Option<Memory> {
    let field = |name: &str| {
        text.lines().find_map(|line| {
            let rest = line.strip_prefix(name)?.strip_prefix(':')?;
            rest.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()
        })
    };
    Some(Memory {
        rss_kib: field("VmRSS")?,
        hwm_kib: field("VmHWM")?,
    })
}

/// Memory of process `pid`, where /proc exists.
pub fn memory(pid: u32) -> Option<Memory> {
    parse_status(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// `syscw` (write-family system calls: write, writev, sendmsg…) out of
/// `/proc/PID/io` text.
pub fn parse_io_syscw(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix("syscw:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Write system calls process `pid` has made, where /proc exists and lets
/// us read its `io` (our own child: yes).
pub fn write_syscalls(pid: u32) -> Option<u64> {
    parse_io_syscw(&std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?)
}

/// URL and kubeconfig path out of ferrokube's
/// `ferrokube serving on https://HOST:PORT — export KUBECONFIG=PATH` line.
pub fn parse_serving_line(line: &str) -> Option<(String, PathBuf)> {
    let rest = line.split("serving on ").nth(1)?;
    let url = rest.split_whitespace().next()?.to_string();
    let path = rest.split("KUBECONFIG=").nth(1)?.trim();
    if !url.starts_with("https://") || path.is_empty() {
        return None;
    }
    Some((url, PathBuf::from(path)))
}

/// A fresh directory name under the system temp dir.
pub fn unique_dir() -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!(
        "ferrokube-bench-{}-{}-{nanos:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

impl Started {
    /// Spawns `bin serve --data-dir <fresh dir> --secure-port 0 <args>` and
    /// waits (up to `timeout`) for the line naming its URL.
    pub async fn spawn(
        bin: &Path,
        args: &[String],
        timeout: Duration,
    ) -> Result<Started, BenchError> {
        Started::spawn_in(bin, args, unique_dir(), false, timeout).await
    }

    /// [`Started::spawn`] with `dir` as the working directory (data in
    /// `dir/data`); `keep_dir` leaves it on drop, for a restart on the
    /// same data.
    pub async fn spawn_in(
        bin: &Path,
        args: &[String],
        dir: PathBuf,
        keep_dir: bool,
        timeout: Duration,
    ) -> Result<Started, BenchError> {
        Started::spawn_on(bin, args, dir, keep_dir, 0, timeout).await
    }

    /// [`Started::spawn_in`] on `port` (0: a free one), so that a restart
    /// on the same data keeps the address clients know. The stderr log
    /// is appended to, keeping what earlier runs on `dir` wrote.
    pub async fn spawn_on(
        bin: &Path,
        args: &[String],
        dir: PathBuf,
        keep_dir: bool,
        port: u16,
        timeout: Duration,
    ) -> Result<Started, BenchError> {
        std::fs::create_dir_all(&dir)
            .map_err(|e| BenchError::Launch(format!("creating {}: {e}", dir.display())))?;
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("stderr.log"))
            .map_err(|e| BenchError::Launch(format!("creating the stderr log: {e}")))?;
        let mut command = Command::new(bin);
        command
            .arg("serve")
            .arg("--data-dir")
            .arg(dir.join("data"))
            .args(["--secure-port", &port.to_string()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let spawned = Instant::now();
        let mut child = command.spawn().map_err(|e| {
            if !keep_dir {
                let _ = std::fs::remove_dir_all(&dir);
            }
            BenchError::Launch(format!("starting {}: {e}", bin.display()))
        })?;
        let pid = child.id();
        let stdout = child.stdout.take();
        let (tx, rx) = tokio::sync::oneshot::channel::<Option<String>>();
        std::thread::spawn(move || {
            let Some(stdout) = stdout else {
                let _ = tx.send(None);
                return;
            };
            let mut reader = BufReader::new(stdout);
            let mut tx = Some(tx);
            let mut line = String::new();
            loop {
                line.clear();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if line.contains("serving on ") => {
                        if let Some(tx) = tx.take() {
                            let _ = tx.send(Some(line.clone()));
                        }
                    }
                    Ok(_) => {}
                }
            }
            // Reached only at EOF: the loop keeps draining stdout so the
            // server never blocks on a full pipe.
            if let Some(tx) = tx.take() {
                let _ = tx.send(None);
            }
        });
        let mut started = Started {
            child,
            dir,
            keep_dir,
            pid,
            url: String::new(),
            kubeconfig_path: PathBuf::new(),
            spawned,
            listening_after: Duration::ZERO,
        };
        let line = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Some(line))) => line,
            Ok(_) => {
                return Err(BenchError::Launch(format!(
                    "{} exited before serving: {}",
                    bin.display(),
                    started.stderr_tail()
                )))
            }
            Err(_) => {
                return Err(BenchError::Launch(format!(
                    "{} printed no serving line within {timeout:?}: {}",
                    bin.display(),
                    started.stderr_tail()
                )))
            }
        };
        started.listening_after = spawned.elapsed();
        let (url, kubeconfig_path) = parse_serving_line(&line)
            .ok_or_else(|| BenchError::Launch(format!("unexpected serving line {line:?}")))?;
        started.url = url;
        started.kubeconfig_path = kubeconfig_path;
        Ok(started)
    }

    /// Polls `/readyz` every millisecond until it answers 200; returns the
    /// time from spawn to that answer.
    pub async fn wait_ready(&mut self, timeout: Duration) -> Result<Duration, BenchError> {
        let deadline = self.spawned + timeout;
        let kc = kubeconfig::load(&self.kubeconfig_path, None)?;
        let mut client: Option<Client> = None;
        let mut last_error = String::from("no answer");
        loop {
            if Instant::now() >= deadline {
                return Err(BenchError::Launch(format!(
                    "not ready within {timeout:?} ({last_error}): {}",
                    self.stderr_tail()
                )));
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(BenchError::Launch(format!(
                    "exited with {status} before ready: {}",
                    self.stderr_tail()
                )));
            }
            if client.is_none() {
                match Client::connect(&kc, ClientOptions::default()).await {
                    Ok(c) => client = Some(c),
                    Err(e) => last_error = e.to_string(),
                }
            }
            if let Some(c) = &client {
                match c.request(Method::GET, "/readyz", None).await {
                    Ok(reply) if reply.status == StatusCode::OK => {
                        return Ok(self.spawned.elapsed())
                    }
                    Ok(reply) => last_error = format!("/readyz: {}", reply.status),
                    Err(e) => {
                        last_error = e.to_string();
                        client = None;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    pub fn memory(&self) -> Option<Memory> {
        memory(self.pid)
    }

    /// SIGTERM (through `kill`, no libc here) and up to `grace` for the
    /// process to exit, then SIGKILL.
    pub fn stop(&mut self, grace: Duration) {
        let signalled = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !signalled {
            let _ = self.child.kill();
            let _ = self.child.wait();
            return;
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGKILL, and wait for the process to be gone (its data stays).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The last lines the server wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(10)..].join("\n");
        if tail.is_empty() {
            "(nothing on stderr)".into()
        } else {
            tail
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.keep_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_memory_from_proc_status() {
        let text =
            "Name:\tferrokube\nVmPeak:\t  100 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   12345 kB\n";
        assert_eq!(
            parse_status(text),
            Some(Memory {
                rss_kib: 12345,
                hwm_kib: 20480
            })
        );
        assert_eq!(parse_status("Name: x\n"), None);
        // Our own process has both fields on Linux.
        if cfg!(target_os = "linux") {
            let mine = memory(std::process::id()).expect("own status");
            assert!(mine.rss_kib > 0 && mine.hwm_kib >= mine.rss_kib);
        }
    }

    #[test]
    fn reads_write_syscalls() {
        let text = "rchar: 10\nwchar: 20\nsyscr: 3\nsyscw: 42\nread_bytes: 0\n";
        assert_eq!(parse_io_syscw(text), Some(42));
        assert_eq!(parse_io_syscw("rchar: 1\n"), None);
        if cfg!(target_os = "linux") {
            assert!(write_syscalls(std::process::id()).is_some());
        }
    }

    #[test]
    fn reads_the_serving_line() {
        let line = "ferrokube serving on https://127.0.0.1:40123 — export KUBECONFIG=/tmp/x y/admin.kubeconfig\n";
        assert_eq!(
            parse_serving_line(line),
            Some((
                "https://127.0.0.1:40123".to_string(),
                PathBuf::from("/tmp/x y/admin.kubeconfig")
            ))
        );
        assert_eq!(parse_serving_line("listening"), None);
    }
}
