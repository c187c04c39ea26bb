//! Command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use crate::client::ClientOptions;
use crate::runner::{LoadOptions, Stop};
use crate::BenchError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scenario {
    /// Start ferrokube --runs times on an empty data dir: time to the first
    /// 200 from /readyz, and idle RSS.
    Ready,
    /// Concurrent clients creating ConfigMaps of --size bytes.
    Create,
    /// Concurrent clients GETting one ConfigMap of --size bytes.
    Get,
    /// The same GET load against a minimal in-process HTTPS server on the
    /// same TLS and HTTP stack: the ceiling for `get`.
    Ceiling,
    /// --watchers concurrent watches of one collection over HTTP/2 while a
    /// writer updates ConfigMaps at --writes-per-second for --duration:
    /// delivery latency, gaps, server RSS per idle watcher, CPU per event.
    Watch,
    /// --objects Pods (or ConfigMaps) listed --runs times in one piece and
    /// in pages of --page-size: time to the last byte, bytes, the ratio.
    List,
    /// Concurrent clients each PUTting its own ConfigMap with the
    /// resourceVersion of its last answer (read-modify-write).
    Update,
    /// Concurrent clients patching objects of their own: --type merge (a
    /// ConfigMap key) or apply (server-side apply of a ConfigMap, a
    /// 50-container Deployment, and a Deployment's status).
    Patch,
    /// --objects ConfigMaps created, then deleted by concurrent clients.
    Delete,
    /// --objects Pods (or ConfigMaps) listed --runs times as JSON,
    /// protobuf and CBOR: time to the full body and bytes of each.
    ListFormats,
    /// RSS of a started ferrokube holding each count of --stored
    /// ConfigMaps of --size bytes, next to their raw bytes.
    Memory,
    /// A controller-like mix: --informers list-watch informers while
    /// clients create ConfigMaps and update Pod status; per-op latency and
    /// watch delivery latency.
    Mix,
    /// Deleting a namespace holding --objects ConfigMaps (time to gone), and
    /// deleting one owner of --objects dependents (garbage collection: time
    /// until the last dependent is gone).
    Lifecycle,
    /// --runs CRDs (30-field schema) created one after another: time from
    /// each CRD's POST to its first custom resource created.
    Crd,
    /// Concurrent clients creating ConfigMaps, then custom resources of a
    /// --crd-fields schema (default 30), in one run: both rates and their ratio.
    CrdCreate,
    /// Creates of custom resources of the same --crd-fields schema with and
    /// without five x-kubernetes-validations CEL rules, alternated --runs
    /// rounds on one server: medians and ratio (issue #16: at least 80%).
    CrdCelCreate,
    /// Creates of ConfigMaps without and with a three-rule
    /// ValidatingAdmissionPolicy bound to the namespace, --runs rounds in
    /// ABBA order on one server: medians and ratio (issue #16: at least 80%).
    PolicyCreate,
    /// Creates of ConfigMaps without and with a no-op validating webhook
    /// served by this process on loopback, --runs rounds in ABBA order on
    /// one server: medians, ratio and the p50 the webhook adds (issue #16:
    /// at most 1 ms).
    WebhookCreate,
    /// GETs and creates by a user granted by a RoleBinding, among --roles
    /// other Roles and RoleBindings, on servers started --runs times with
    /// `--authorization-mode=AlwaysAllow` and `RBAC`: medians and ratio.
    Rbac,
    /// Creates of ConfigMaps on servers started --runs times without
    /// auditing and with every request audited at `Metadata` into a file:
    /// medians and ratio.
    AuditCreate,
    /// Creates of Secrets on servers started --runs times without an
    /// encryption configuration and with aesgcm for Secrets: medians and
    /// ratio.
    SecretCreate,
    /// GETs by a non-exempt user on servers started --runs times with
    /// `--enable-priority-and-fairness=false` and with APF (the default):
    /// medians and ratio.
    ApfGet,
    /// ferrokube-testing's TestServer in this process: start to a ready
    /// kube::Client and stop, --servers (default 100) times one after
    /// another, with this process's RSS and threads after the first and the
    /// last; snapshot and restore (--runs each) with --objects ConfigMaps.
    InProcess,
    /// Writers and resuming watchers on a durable started ferrokube (on
    /// etcd: a 3-member cluster started here) for --duration while the
    /// server (and an etcd member) is SIGKILLed and restarted at random
    /// moments; then proves no acknowledged write lost, no watch event
    /// missing, duplicated or out of order, RSS bounded. Exits 1 on failure.
    Faults,
    /// A normal client's GET p50/p99 alone, then while slow (slowloris)
    /// and half-open TCP and TLS connections, unauthenticated requests
    /// and oversized bodies flood the started server; rejections by
    /// status, RSS, and that it still answers. Exits 1 if it stops answering.
    Abuse,
}

impl Scenario {
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Ready => "ready",
            Scenario::Create => "create",
            Scenario::Get => "get",
            Scenario::Ceiling => "ceiling",
            Scenario::Watch => "watch",
            Scenario::List => "list",
            Scenario::Update => "update",
            Scenario::Patch => "patch",
            Scenario::Delete => "delete",
            Scenario::ListFormats => "list-formats",
            Scenario::Memory => "memory",
            Scenario::Mix => "mix",
            Scenario::Lifecycle => "lifecycle",
            Scenario::Crd => "crd",
            Scenario::CrdCreate => "crd-create",
            Scenario::CrdCelCreate => "crd-cel-create",
            Scenario::PolicyCreate => "policy-create",
            Scenario::WebhookCreate => "webhook-create",
            Scenario::Rbac => "rbac",
            Scenario::AuditCreate => "audit-create",
            Scenario::SecretCreate => "secret-create",
            Scenario::ApfGet => "apf-get",
            Scenario::InProcess => "in-process",
            Scenario::Faults => "faults",
            Scenario::Abuse => "abuse",
        }
    }

    /// Closed-loop request scenarios with throughput and latency, which
    /// `--with-ceiling` relates to the ceilings.
    pub fn is_load(self) -> bool {
        matches!(
            self,
            Scenario::Create
                | Scenario::Get
                | Scenario::Update
                | Scenario::Patch
                | Scenario::Delete
        )
    }

    /// Load scenarios that write: their ceiling is also etcd's raw put
    /// rate.
    pub fn writes(self) -> bool {
        self.is_load() && self != Scenario::Get
    }
}

/// What `patch` sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PatchType {
    /// application/merge-patch+json.
    Merge,
    /// application/apply-patch+yaml (server-side apply) with a fieldManager.
    Apply,
}

/// What `list` creates and lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ObjectKind {
    /// A Pod with two containers, labels, resources and probes (about
    /// 1.5 KiB sent; the server adds its defaults).
    Pod,
    /// A ConfigMap of exactly --size bytes.
    Configmap,
}

/// What `update` PUTs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UpdateObject {
    /// A ConfigMap of exactly --size bytes.
    Configmap,
    /// The apply scenario's 50-container Deployment, one image tag
    /// changed per PUT.
    Deployment50,
}

/// Where `faults` stores: ferrokube's embedded SQLite, or a 3-member etcd
/// cluster the scenario starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FaultBackend {
    Sqlite,
    Etcd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Fsync {
    On,
    Off,
    /// One server with fsync, then one without.
    Both,
}

#[derive(Debug, Clone, Parser)]
#[command(
    name = "ferrokube-bench",
    version,
    about = "Benchmarks a Kubernetes API server: ferrokube started here, or any server a kubeconfig names",
    after_help = "Examples:\n  \
        ferrokube-bench ready --start-ferrokube target/release/ferrokube\n  \
        ferrokube-bench create --start-ferrokube target/release/ferrokube --fsync both\n  \
        ferrokube-bench get --start-ferrokube target/release/ferrokube --with-ceiling\n  \
        ferrokube-bench watch --start-ferrokube target/release/ferrokube --server-arg=--fsync=false\n  \
        ferrokube-bench list --start-ferrokube target/release/ferrokube --server-arg=--fsync=false --objects 10000\n  \
        ferrokube-bench patch --type apply --start-ferrokube target/release/ferrokube\n  \
        ferrokube-bench memory --start-ferrokube target/release/ferrokube --stored 10000,100000\n  \
        ferrokube-bench ready --start-ferrokube target/release/ferrokube --stored 0,100000 --runs 3\n  \
        ferrokube-bench create --start-ferrokube target/release/ferrokube --with-ceiling --svg charts\n  \
        ferrokube-bench in-process --servers 100 --objects 10000 --runs 100\n  \
        ferrokube-bench faults --start-ferrokube target/release/ferrokube --duration 300 --storage-backend etcd\n  \
        ferrokube-bench abuse --start-ferrokube target/release/ferrokube --duration 60\n  \
        ferrokube-bench get --kubeconfig ~/.kube/config --namespace bench --json"
)]
pub struct Cli {
    #[arg(value_enum)]
    pub scenario: Scenario,

    /// The server to measure (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "PATH", conflicts_with = "start_ferrokube")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: current-context).
    #[arg(long, requires = "kubeconfig")]
    pub context: Option<String>,
    /// Start this ferrokube binary on a fresh temp data dir instead.
    #[arg(long, value_name = "BIN")]
    pub start_ferrokube: Option<PathBuf>,
    /// An extra argument for the started ferrokube's `serve` (repeatable),
    /// e.g. --server-arg=--storage-backend=memory.
    #[arg(
        long = "server-arg",
        value_name = "ARG",
        allow_hyphen_values = true,
        requires = "start_ferrokube"
    )]
    pub server_args: Vec<String>,
    /// Start the server with --fsync=true, false, or once with each.
    #[arg(long, value_enum, requires = "start_ferrokube")]
    pub fsync: Option<Fsync>,

    /// Concurrent clients (each waits for its answer before the next).
    #[arg(long, short = 'c', default_value_t = 32)]
    pub concurrency: usize,
    /// Measured seconds per load run (default 10; `watch`: seconds of
    /// writes, default 20).
    #[arg(long, short = 'd', conflicts_with = "requests")]
    pub duration: Option<f64>,
    /// Send exactly this many requests instead of running for a duration.
    #[arg(long, short = 'n')]
    pub requests: Option<u64>,
    /// Unmeasured seconds before the window (default 1; 0 with --requests).
    #[arg(long)]
    pub warmup: Option<f64>,
    /// ConfigMap size in bytes (the whole JSON object sent).
    #[arg(long, default_value_t = 1024)]
    pub size: usize,
    /// HTTP/2 connections the clients share.
    #[arg(long, default_value_t = 4)]
    pub connections: usize,
    /// Speak HTTP/1.1 (one connection per client) instead of HTTP/2.
    #[arg(long)]
    pub http1: bool,
    /// Namespace for the objects (created when missing).
    #[arg(long, default_value = "ferrokube-bench")]
    pub namespace: String,
    /// Per-request timeout, seconds.
    #[arg(long, default_value_t = 30.0)]
    pub timeout: f64,

    /// `ready`: how many starts; `list`: how many measured lists of each
    /// kind.
    #[arg(long, default_value_t = 10)]
    pub runs: usize,
    /// `ready`: idle milliseconds after ready before reading RSS; `watch`:
    /// after the watchers are open, before reading RSS.
    #[arg(long, default_value_t = 500)]
    pub idle_ms: u64,

    /// `get`: also run `ceiling` and report get as a fraction of it.
    #[arg(long)]
    pub with_ceiling: bool,
    /// `ceiling`: the fixed JSON answer's size in bytes.
    #[arg(long, default_value_t = 2048)]
    pub ceiling_size: usize,

    /// `watch`: concurrent watchers of the collection.
    #[arg(long, default_value_t = 1000)]
    pub watchers: usize,
    /// `watch`: ConfigMap updates per second (open loop).
    #[arg(long, default_value_t = 100.0)]
    pub writes_per_second: f64,
    /// `watch`: watch streams per HTTP/2 connection; the watchers get
    /// ceil(watchers / this) connections of their own. hyper's client
    /// opens at most 100 streams before it has the server's SETTINGS, and
    /// ferrokube, as kube-apiserver, allows 100.
    #[arg(long, default_value_t = 100)]
    pub streams_per_connection: usize,

    /// `list`: objects in the collection.
    #[arg(long, default_value_t = 10_000)]
    pub objects: usize,
    /// `list`: what to create and list.
    #[arg(long, value_enum, default_value_t = ObjectKind::Pod)]
    pub object_kind: ObjectKind,
    /// `list`: `limit` of the chunked list.
    #[arg(long, default_value_t = 500)]
    pub page_size: usize,
    /// `list`: the Accept header of the lists, e.g.
    /// application/vnd.kubernetes.protobuf.
    #[arg(long, default_value = "application/json")]
    pub accept: String,

    /// `patch`: merge or apply.
    #[arg(long = "type", value_enum, default_value_t = PatchType::Merge)]
    pub patch_type: PatchType,
    /// `update`: what each client PUTs.
    #[arg(long = "object", value_enum, default_value_t = UpdateObject::Configmap)]
    pub update_object: UpdateObject,
    /// `memory`: object counts to measure at, e.g. 10000,100000 (default);
    /// `ready`: counts to pre-load before the timed restarts (default 0:
    /// an empty store).
    #[arg(long, value_delimiter = ',', value_name = "N,N")]
    pub stored: Vec<usize>,
    /// `ready`: CRDs (each with a --crd-fields schema, default 200) installed
    /// before the timed restarts; after each start the last one's custom
    /// resources must be servable.
    #[arg(long, default_value_t = 0)]
    pub crds: usize,
    /// `in-process`: servers started and stopped one after another for the
    /// growth check.
    #[arg(long, default_value_t = 100)]
    pub servers: usize,
    /// Fields in the `spec` schema of each CRD (`ready --crds`: default 200;
    /// `crd-create`: default 30).
    #[arg(long, value_name = "N")]
    pub crd_fields: Option<usize>,
    /// `rbac`: Roles (and as many RoleBindings) of other users in the
    /// namespace the measured requests go to.
    #[arg(long, default_value_t = 1000)]
    pub roles: usize,
    /// `rbac`: also measure as a ServiceAccount of the namespace, with a
    /// TokenRequest token (a JWT the server verifies) and a RoleBinding of
    /// the same Role: `sa-get` and `sa-create`, their RBAC / AlwaysAllow
    /// ratios and, under RBAC, their ratio to the token-file user's rates.
    #[arg(long)]
    pub service_account: bool,
    /// `mix`: list-watch informers (each watches Pods and ConfigMaps).
    #[arg(long, default_value_t = 4)]
    pub informers: usize,
    /// `--with-ceiling` on write scenarios: the etcd binary whose raw put
    /// rate is measured (default: `etcd` on PATH; skipped when missing).
    #[arg(long, value_name = "BIN")]
    pub etcd: Option<PathBuf>,
    /// `faults`: the started server's storage (etcd: a 3-member cluster
    /// of /usr/bin/etcd, or $FERROKUBE_ETCD, started by the scenario).
    #[arg(long, value_enum, default_value_t = FaultBackend::Sqlite)]
    pub storage_backend: FaultBackend,
    /// `faults`: the seed of the random choices (default: from the clock;
    /// printed, so a run can be repeated).
    #[arg(long)]
    pub seed: Option<u64>,
    /// `faults`: concurrent writers, each owning 6 ConfigMaps.
    #[arg(long, default_value_t = 8)]
    pub writers: usize,
    /// `faults`: the server's RSS must stay at or below this (MiB).
    #[arg(long, default_value_t = 2048.0)]
    pub rss_limit_mib: f64,
    /// `abuse`: connections of each abusive kind (slow, half-open TCP,
    /// half-open TLS) held open at once.
    #[arg(long, default_value_t = 200)]
    pub abusers: usize,
    /// Requests a second from all clients together, each client sending on
    /// a fixed schedule (open loop: latency counted from the scheduled
    /// time when the client is late for it, so a server that holds a client
    /// up counts); 0 sends each request when the
    /// client's last is answered (closed loop, as fast as the server answers).
    #[arg(long, default_value_t = 0.0)]
    pub rate: f64,
    /// `abuse`: the normal client's requests a second, sent on a fixed
    /// schedule (open loop; latency counted from the scheduled time, so a
    /// late start counts); 0 sends each request when the last is answered
    /// (closed loop, as fast as the server answers).
    #[arg(long, default_value_t = 0.0)]
    pub normal_rate: f64,
    /// `abuse`: the nice value (0-19) of the threads that flood and hold
    /// connections, so they get only the CPU the server and the normal
    /// client leave: on one machine, the flood then stands for one sent
    /// from other machines to a server whose cores it does not take.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=19))]
    pub abusers_nice: u8,
    /// Also write SVG charts of the latency distributions into DIR.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,

    /// Print one JSON document of all results instead of tables.
    #[arg(long)]
    pub json: bool,
    /// No progress on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// One server configuration a scenario runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// Appended to the scenario name in labels, e.g. ` fsync=off`.
    pub suffix: String,
    pub server_args: Vec<String>,
}

impl Cli {
    pub fn validate(&self) -> Result<(), BenchError> {
        let usage = |m: &str| Err(BenchError::Usage(m.into()));
        if self.scenario == Scenario::Ready && self.start_ferrokube.is_none() {
            return usage("ready starts the server itself: pass --start-ferrokube BIN");
        }
        if self.with_ceiling && !self.scenario.is_load() {
            return usage("--with-ceiling goes with create, get, update, patch and delete");
        }
        if self.scenario == Scenario::Rbac && self.start_ferrokube.is_none() {
            return usage(
                "rbac starts the server in two authorization modes: pass --start-ferrokube BIN",
            );
        }
        if matches!(
            self.scenario,
            Scenario::AuditCreate | Scenario::SecretCreate | Scenario::ApfGet
        ) && self.start_ferrokube.is_none()
        {
            return usage(
                "audit-create, secret-create and apf-get start the server in two configurations: pass --start-ferrokube BIN",
            );
        }
        if self.scenario == Scenario::Memory && self.start_ferrokube.is_none() {
            return usage("memory reads the server's RSS: pass --start-ferrokube BIN");
        }
        if matches!(self.scenario, Scenario::Faults | Scenario::Abuse)
            && self.start_ferrokube.is_none()
        {
            return usage("faults and abuse kill or flood the server: pass --start-ferrokube BIN");
        }
        if self.scenario == Scenario::Faults && self.writers == 0 {
            return usage("--writers must be at least 1");
        }
        if !self.rss_limit_mib.is_finite() || self.rss_limit_mib <= 0.0 {
            return usage("--rss-limit-mib must be a positive number");
        }
        if !self.rate.is_finite() || self.rate < 0.0 {
            return usage("--rate must be 0 (closed loop) or a positive number");
        }
        if !self.normal_rate.is_finite() || self.normal_rate < 0.0 {
            return usage("--normal-rate must be 0 (closed loop) or a positive number");
        }
        if self.scenario == Scenario::Mix && self.informers == 0 {
            return usage("--informers must be at least 1");
        }
        if self.concurrency == 0 || self.runs == 0 || self.connections == 0 {
            return usage("--concurrency, --runs and --connections must be at least 1");
        }
        if self.watchers == 0
            || self.streams_per_connection == 0
            || self.objects == 0
            || self.page_size == 0
        {
            return usage(
                "--watchers, --streams-per-connection, --objects and --page-size must be at least 1",
            );
        }
        if !self.writes_per_second.is_finite() || self.writes_per_second <= 0.0 {
            return usage("--writes-per-second must be a positive number");
        }
        if matches!(
            self.scenario,
            Scenario::Watch
                | Scenario::List
                | Scenario::ListFormats
                | Scenario::Memory
                | Scenario::Delete
        ) && self.requests.is_some()
        {
            return usage(
                "--requests goes with create, get, update, patch, mix and ceiling (watch: --duration, list: --runs, delete and memory: --objects / --stored)",
            );
        }
        if self.accept.is_empty() || hyper::header::HeaderValue::from_str(&self.accept).is_err() {
            return usage("--accept must be a valid header value");
        }
        if self.requests == Some(0) {
            return usage("--requests must be at least 1");
        }
        for (name, v) in [
            ("--duration", self.duration),
            ("--warmup", self.warmup),
            ("--timeout", Some(self.timeout)),
        ] {
            if let Some(v) = v {
                if !v.is_finite() || v < 0.0 || (name != "--warmup" && v == 0.0) {
                    return Err(BenchError::Usage(format!(
                        "{name} must be a positive number of seconds"
                    )));
                }
            }
        }
        if !crate::scenarios::is_dns_label(&self.namespace) {
            return usage("--namespace must be a DNS label (lowercase letters, digits, '-')");
        }
        Ok(())
    }

    pub fn stop(&self) -> Stop {
        match self.requests {
            Some(n) => Stop::Requests(n),
            None => Stop::Duration {
                warmup: Duration::from_secs_f64(self.warmup.unwrap_or(1.0)),
                measure: Duration::from_secs_f64(self.duration.unwrap_or(10.0)),
            },
        }
    }

    /// `--stored`, or `default` when not given.
    pub fn stored_counts(&self, default: &[usize]) -> Vec<usize> {
        if self.stored.is_empty() {
            default.to_vec()
        } else {
            self.stored.clone()
        }
    }

    /// `watch`: how long the writer writes.
    pub fn watch_duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration.unwrap_or(20.0))
    }

    pub fn warmup_s(&self) -> f64 {
        match self.stop() {
            Stop::Duration { warmup, .. } => warmup.as_secs_f64(),
            Stop::Requests(_) => 0.0,
        }
    }

    pub fn load_options(&self, label: &str, server_pid: Option<u32>) -> LoadOptions {
        LoadOptions {
            server_pid,
            concurrency: self.concurrency,
            stop: self.stop(),
            timeout: Duration::from_secs_f64(self.timeout),
            progress: (!self.quiet).then(|| label.to_string()),
            rate: self.rate,
        }
    }

    pub fn client_options(&self) -> ClientOptions {
        ClientOptions {
            connections: self.connections,
            http1: self.http1,
        }
    }

    /// The server configurations to run on: one per --fsync setting when
    /// starting ferrokube, else the one server.
    pub fn variants(&self) -> Vec<Variant> {
        let with = |suffix: &str, extra: Option<&str>| Variant {
            suffix: suffix.to_string(),
            server_args: self
                .server_args
                .iter()
                .cloned()
                .chain(extra.map(str::to_string))
                .collect(),
        };
        if self.start_ferrokube.is_none() {
            return vec![with("", None)];
        }
        match self.fsync {
            None => vec![with("", None)],
            Some(Fsync::On) => vec![with(" fsync=on", Some("--fsync=true"))],
            Some(Fsync::Off) => vec![with(" fsync=off", Some("--fsync=false"))],
            Some(Fsync::Both) => vec![
                with(" fsync=on", Some("--fsync=true")),
                with(" fsync=off", Some("--fsync=false")),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("ferrokube-bench").chain(args.iter().copied()))
    }

    #[test]
    fn defaults() {
        let cli = parse(&["get", "--kubeconfig", "/k"]).expect("parse");
        assert_eq!(cli.scenario, Scenario::Get);
        assert_eq!(cli.concurrency, 32);
        assert_eq!(cli.size, 1024);
        assert_eq!(
            cli.stop(),
            Stop::Duration {
                warmup: Duration::from_secs(1),
                measure: Duration::from_secs(10)
            }
        );
        assert!(cli.validate().is_ok());
        assert_eq!(
            cli.variants(),
            vec![Variant {
                suffix: String::new(),
                server_args: vec![]
            }]
        );
    }

    #[test]
    fn server_args_and_fsync_both() {
        let cli = parse(&[
            "create",
            "--start-ferrokube",
            "/bin/fk",
            "--server-arg",
            "--storage-backend=memory",
            "--server-arg=--log-level=error",
            "--fsync",
            "both",
            "-n",
            "100",
        ])
        .expect("parse");
        assert_eq!(cli.stop(), Stop::Requests(100));
        assert_eq!(cli.warmup_s(), 0.0);
        let variants = cli.variants();
        assert_eq!(variants.len(), 2);
        assert_eq!(variants[0].suffix, " fsync=on");
        assert_eq!(
            variants[1].server_args,
            vec![
                "--storage-backend=memory",
                "--log-level=error",
                "--fsync=false"
            ]
        );
    }

    #[test]
    fn rejects_contradictions() {
        assert!(parse(&["get", "--kubeconfig", "k", "--start-ferrokube", "b"]).is_err());
        assert!(parse(&["get", "--duration", "1", "--requests", "5"]).is_err());
        assert!(parse(&["get", "--fsync", "off"]).is_err());
        assert!(parse(&["nope"]).is_err());
        let ready = parse(&["ready", "--kubeconfig", "k"]).expect("parse");
        assert!(ready.validate().is_err());
        // The ceilings relate to load scenarios only.
        let ceiling = parse(&["list", "--with-ceiling"]).expect("parse");
        assert!(ceiling.validate().is_err());
        let memory = parse(&["memory", "--kubeconfig", "k"]).expect("parse");
        assert!(memory.validate().is_err());
        let delete = parse(&["delete", "--requests", "3"]).expect("parse");
        assert!(delete.validate().is_err());
        let ns = parse(&["get", "--namespace", "Bad_NS"]).expect("parse");
        assert!(ns.validate().is_err());
        let zero = parse(&["get", "--duration", "0"]).expect("parse");
        assert!(zero.validate().is_err());
        let watch = parse(&["watch", "--requests", "5"]).expect("parse");
        assert!(watch.validate().is_err());
        let watch = parse(&["watch", "--watchers", "0"]).expect("parse");
        assert!(watch.validate().is_err());
        let watch = parse(&["watch", "--writes-per-second", "0"]).expect("parse");
        assert!(watch.validate().is_err());
        let list = parse(&["list", "--page-size", "0"]).expect("parse");
        assert!(list.validate().is_err());
        let list = parse(&["list", "--accept", "bad\nvalue"]).expect("parse");
        assert!(list.validate().is_err());
    }

    #[test]
    fn watch_and_list_defaults() {
        let watch = parse(&["watch", "--kubeconfig", "k"]).expect("parse");
        assert_eq!(watch.scenario, Scenario::Watch);
        assert_eq!(watch.watchers, 1000);
        assert_eq!(watch.writes_per_second, 100.0);
        assert_eq!(watch.streams_per_connection, 100);
        assert_eq!(watch.watch_duration(), Duration::from_secs(20));
        assert!(watch.validate().is_ok());
        let list = parse(&["list", "--kubeconfig", "k"]).expect("parse");
        assert_eq!(list.objects, 10_000);
        assert_eq!(list.object_kind, ObjectKind::Pod);
        assert_eq!(list.page_size, 500);
        assert_eq!(list.runs, 10);
        assert_eq!(list.accept, "application/json");
        assert!(list.validate().is_ok());
        let list = parse(&[
            "list",
            "--object-kind",
            "configmap",
            "--accept",
            "application/vnd.kubernetes.protobuf",
            "--duration",
            "3",
        ])
        .expect("parse");
        assert_eq!(list.object_kind, ObjectKind::Configmap);
        assert_eq!(list.watch_duration(), Duration::from_secs(3));
    }
}

#[cfg(test)]
mod new_scenario_tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("ferrokube-bench").chain(args.iter().copied()))
    }

    #[test]
    fn new_scenarios_parse() {
        let patch = parse(&["patch", "--type", "apply", "--kubeconfig", "k"]).expect("parse");
        assert_eq!(patch.scenario, Scenario::Patch);
        assert_eq!(patch.patch_type, PatchType::Apply);
        assert!(patch.validate().is_ok());
        assert_eq!(
            parse(&["patch"]).expect("parse").patch_type,
            PatchType::Merge
        );
        let memory =
            parse(&["memory", "--start-ferrokube", "b", "--stored", "10,20"]).expect("parse");
        assert_eq!(memory.stored_counts(&[1]), vec![10, 20]);
        assert!(memory.validate().is_ok());
        let ready = parse(&["ready", "--start-ferrokube", "b"]).expect("parse");
        assert_eq!(ready.stored_counts(&[0]), vec![0]);
        let formats = parse(&["list-formats", "--kubeconfig", "k"]).expect("parse");
        assert_eq!(formats.scenario.name(), "list-formats");
        let mix = parse(&["mix", "--informers", "0"]).expect("parse");
        assert!(mix.validate().is_err());
        let svg = parse(&["update", "--svg", "/tmp/x", "--with-ceiling"]).expect("parse");
        assert!(svg.validate().is_ok());
        assert!(Scenario::Update.writes() && !Scenario::Get.writes());
        assert!(Scenario::Get.is_load() && !Scenario::Mix.is_load());
    }
}
