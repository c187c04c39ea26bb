//! One module per scenario, and what they share: where the server is, the
//! test object, the namespace.

pub mod abuse;
pub mod abuse_connections;
pub mod apf_get;
pub mod audit_create;
pub mod ceiling;
pub mod crd;
pub mod crd_cel_create;
pub mod crd_create;
pub mod create;
pub mod etcd;
pub mod fault_check;
pub mod fault_cluster;
pub mod fault_history;
pub mod fault_watch;
pub mod faults;
pub mod formats;
pub mod get;
pub mod in_process;
pub mod lifecycle;
pub mod list;
pub mod memory;
pub mod mix;
pub mod paired;
pub mod policy_create;
pub mod rbac;
pub mod ready;
pub mod secret_create;
pub mod watch;
pub mod webhook_create;
pub mod write;

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use hyper::{Method, StatusCode};

use crate::cli::{Cli, Variant};
use crate::client::{Client, Reply};
use crate::kubeconfig::{self, Kubeconfig};
use crate::launch::{Memory, Started};
use crate::report::Target;
use crate::runner::{self, snippet, Workload};
use crate::BenchError;

/// How long a started server may take to become ready.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The server a load scenario runs against.
pub struct Endpoint {
    pub kubeconfig: Kubeconfig,
    pub target: Target,
    /// Set when this tool started the server.
    pub started: Option<Started>,
}

impl Endpoint {
    /// Starts a ferrokube for `variant`, or reads the kubeconfig.
    pub async fn open(cli: &Cli, variant: &Variant) -> Result<Endpoint, BenchError> {
        if let Some(bin) = &cli.start_ferrokube {
            runner::note(
                cli.quiet,
                format!(
                    "starting {} {}",
                    bin.display(),
                    variant.server_args.join(" ")
                )
                .trim_end(),
            );
            let mut started = Started::spawn(bin, &variant.server_args, START_TIMEOUT).await?;
            let ready = started.wait_ready(START_TIMEOUT).await?;
            runner::note(
                cli.quiet,
                &format!(
                    "  ready on {} after {:.1} ms",
                    started.url,
                    ready.as_secs_f64() * 1e3
                ),
            );
            let kc = kubeconfig::load(&started.kubeconfig_path, None)?;
            Ok(Endpoint {
                target: Target {
                    source: "started".into(),
                    server: kc.server.clone(),
                    kubeconfig: None,
                    binary: Some(bin.display().to_string()),
                    server_args: variant.server_args.clone(),
                },
                kubeconfig: kc,
                started: Some(started),
            })
        } else {
            let path = kubeconfig_path(cli)?;
            let kc = kubeconfig::load(&path, cli.context.as_deref())?;
            Ok(Endpoint {
                target: Target {
                    source: "kubeconfig".into(),
                    server: kc.server.clone(),
                    kubeconfig: Some(path.display().to_string()),
                    binary: None,
                    server_args: Vec::new(),
                },
                kubeconfig: kc,
                started: None,
            })
        }
    }

    /// The started server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.started.as_ref().map(|s| s.pid)
    }

    pub fn memory(&self) -> Option<Memory> {
        self.started.as_ref().and_then(Started::memory)
    }
}

/// `--kubeconfig`, else the first file in `$KUBECONFIG`, else
/// `~/.kube/config`, as kubectl picks it.
pub fn kubeconfig_path(cli: &Cli) -> Result<PathBuf, BenchError> {
    if let Some(path) = &cli.kubeconfig {
        return Ok(path.clone());
    }
    if let Some(list) = std::env::var_os("KUBECONFIG") {
        if let Some(first) = std::env::split_paths(&list).find(|p| !p.as_os_str().is_empty()) {
            return Ok(first);
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        let path = PathBuf::from(home).join(".kube").join("config");
        if path.is_file() {
            return Ok(path);
        }
    }
    Err(BenchError::Usage(
        "no server: pass --kubeconfig PATH or --start-ferrokube BIN (or set KUBECONFIG)".into(),
    ))
}

/// A short identifier for this run's object names and labels.
pub fn run_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut n = (nanos ^ (u128::from(std::process::id()) << 64)) as u64;
    let mut out = String::new();
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    for _ in 0..8 {
        out.push(DIGITS[(n % 36) as usize] as char);
        n /= 36;
    }
    out
}

/// A ConfigMap whose JSON is exactly `size` bytes (or its minimum, when
/// `size` is smaller), padded through `data.payload`. `name`,
/// `namespace` and `run` must need no JSON escaping (DNS names do not).
pub fn configmap_body(name: &str, namespace: &str, run: &str, size: usize) -> Vec<u8> {
    let head = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"{namespace}","labels":{{"app.kubernetes.io/managed-by":"ferrokube-bench","ferrokube-bench/run":"{run}"}}}},"data":{{"payload":""#
    );
    let tail = r#""}}"#;
    let pad = size.saturating_sub(head.len() + tail.len());
    let mut body = Vec::with_capacity(head.len() + pad + tail.len());
    body.extend_from_slice(head.as_bytes());
    body.resize(head.len() + pad, b'x');
    body.extend_from_slice(tail.as_bytes());
    body
}

/// Whether `s` is a DNS-1123 label (what namespaces must be).
pub fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn unexpected(what: &str, reply: &Reply) -> BenchError {
    BenchError::Setup(format!(
        "{what}: HTTP {}: {}",
        reply.status.as_u16(),
        snippet(&reply.body, 400)
    ))
}

/// Creates namespace `ns` unless it exists.
pub async fn ensure_namespace(client: &Client, ns: &str) -> Result<(), BenchError> {
    let reply = client
        .request(Method::GET, &format!("/api/v1/namespaces/{ns}"), None)
        .await?;
    match reply.status {
        StatusCode::OK => return Ok(()),
        StatusCode::NOT_FOUND => {}
        _ => return Err(unexpected(&format!("reading namespace {ns}"), &reply)),
    }
    let body = format!(r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{ns}"}}}}"#);
    let reply = client
        .request(Method::POST, "/api/v1/namespaces", Some(Bytes::from(body)))
        .await?;
    match reply.status {
        StatusCode::CREATED | StatusCode::OK | StatusCode::CONFLICT => Ok(()),
        _ => Err(unexpected(&format!("creating namespace {ns}"), &reply)),
    }
}

impl Endpoint {
    /// One load run's result against this endpoint: `sent` and `received`
    /// are the request and response body sizes reported beside it.
    pub fn load_result(
        &self,
        cli: &Cli,
        client: &Client,
        scenario: &str,
        label: String,
        outcome: &runner::LoadOutcome,
        (sent, received): (usize, usize),
    ) -> crate::report::ScenarioResult {
        crate::report::ScenarioResult {
            scenario: scenario.into(),
            label,
            target: self.target.clone(),
            load: Some(crate::report::LoadResult::from_outcome(
                outcome,
                cli.concurrency,
                client.protocol(),
                client.pooled_connections(),
                sent,
                received,
                cli.warmup_s(),
            )),
            server_memory: self.memory(),
            ..Default::default()
        }
    }
}

/// GETs of one fixed path.
pub struct FixedGet {
    pub path: String,
}

impl Workload for FixedGet {
    fn request(&self, _worker: usize, _seq: u64) -> (Method, String, Option<Bytes>) {
        (Method::GET, self.path.clone(), None)
    }
}

/// A setup request that failed: what it was, the HTTP status and the body's start.
pub fn setup_failure(what: &str, status: &StatusCode, body: &Bytes) -> BenchError {
    BenchError::Setup(format!(
        "{what}: HTTP {}: {}",
        status.as_u16(),
        snippet(body, 400)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configmap_bodies_are_exactly_the_size_asked() {
        for size in [300, 1024, 4096] {
            let body = configmap_body("bench-abc-1-2", "ns", "abc", size);
            assert_eq!(body.len(), size);
            let v: serde_json::Value = serde_json::from_slice(&body).expect("valid json");
            assert_eq!(v["kind"], "ConfigMap");
            assert_eq!(v["metadata"]["name"], "bench-abc-1-2");
            assert_eq!(v["metadata"]["labels"]["ferrokube-bench/run"], "abc");
        }
        // Too small: the minimal object.
        let tiny = configmap_body("n", "ns", "r", 10);
        let v: serde_json::Value = serde_json::from_slice(&tiny).expect("valid json");
        assert_eq!(v["data"]["payload"], "");
    }

    #[test]
    fn run_ids_are_dns_safe() {
        let id = run_id();
        assert_eq!(id.len(), 8);
        assert!(is_dns_label(&id));
        assert!(is_dns_label("ferrokube-bench"));
        assert!(!is_dns_label("Bad"));
        assert!(!is_dns_label("-x"));
        assert!(!is_dns_label(""));
    }
}
