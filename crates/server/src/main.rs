//! `ferrokube serve`: the Kubernetes API on an embedded store.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use ferrokube::server::{Server, ServerConfig, StorageBackend};

/// A request allocates and frees many small JSON values; mimalloc spends
/// markedly less CPU on that than glibc malloc (docs/performance-history.md,
/// "allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "ferrokube",
    version,
    about = "A Kubernetes API server in one binary"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendFlag {
    Sqlite,
    Memory,
    Etcd3,
}

// Parsed once per process: the size of `Serve` (every flag) costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Serve the Kubernetes API.
    Serve {
        /// Where the store, certificates and admin kubeconfig live (default:
        /// <cert-dir>/ferrokube-data with --cert-dir, else ./ferrokube-data).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// kube-apiserver's --cert-dir: <cert-dir>/apiserver.crt and
        /// apiserver.key, when both exist, are the serving certificate
        /// (unless --tls-cert-file is given).
        #[arg(long)]
        cert_dir: Option<PathBuf>,
        /// PEM serving certificate (chain) instead of the one ferrokube
        /// issues from its CA; needs --tls-private-key-file.
        #[arg(long, requires = "tls_private_key_file")]
        tls_cert_file: Option<PathBuf>,
        /// PEM private key of --tls-cert-file.
        #[arg(long, requires = "tls_cert_file")]
        tls_private_key_file: Option<PathBuf>,
        /// The address the `kubernetes` Service's endpoints name (default:
        /// --bind-address).
        #[arg(long)]
        advertise_address: Option<IpAddr>,
        /// If true, allow privileged containers (kube-apiserver's flag and
        /// default: false refuses `privileged: true` and Windows hostProcess
        /// containers in pods and pod templates). The last one given wins.
        #[arg(
            long,
            num_args = 0..=1,
            default_missing_value = "true",
            overrides_with = "allow_privileged"
        )]
        allow_privileged: Option<bool>,
        /// Accepted for kube-apiserver compatibility and ignored.
        #[arg(long)]
        feature_gates: Option<String>,
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        bind_address: IpAddr,
        /// The HTTPS port; 0 picks a free one.
        #[arg(long, default_value_t = 6443)]
        secure_port: u16,
        /// Extra subject alternative names for the serving certificate (repeatable).
        #[arg(long = "tls-san")]
        tls_san: Vec<String>,
        /// kube-apiserver's static token file: token,user,uid,"group1,group2".
        #[arg(long)]
        token_auth_file: Option<PathBuf>,
        /// Where objects are stored (default: etcd3 when --etcd-servers is
        /// given, as kube-apiserver, else sqlite).
        #[arg(long, value_enum)]
        storage_backend: Option<BackendFlag>,
        /// etcd members for --storage-backend=etcd3 (scheme://ip:port, comma separated).
        #[arg(long, value_delimiter = ',')]
        etcd_servers: Vec<String>,
        /// The prefix of every key in etcd.
        #[arg(long, default_value = ferrokube_store::etcd::DEFAULT_PREFIX)]
        etcd_prefix: String,
        /// SSL Certificate Authority file used to secure etcd communication.
        #[arg(long)]
        etcd_cafile: Option<PathBuf>,
        /// SSL certification file used to secure etcd communication.
        #[arg(long)]
        etcd_certfile: Option<PathBuf>,
        /// SSL key file used to secure etcd communication.
        #[arg(long)]
        etcd_keyfile: Option<PathBuf>,
        /// How often etcd's history is compacted (0 turns compaction off), e.g. 5m.
        #[arg(long, default_value = "5m", value_parser = parse_duration)]
        etcd_compaction_interval: Duration,
        /// fsync every write batch; false for throwaway test servers.
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        fsync: bool,
        /// How long changes stay readable for watches, Exact lists and continue
        /// tokens (the analogue of etcd's compaction window), e.g. 300s, 5m, 2s.
        #[arg(long, default_value = "5m", value_parser = parse_duration)]
        history_window: Duration,
        /// A watch without timeoutSeconds ends after a random time in [this, 2 × this) (seconds).
        #[arg(long, default_value_t = 1800)]
        min_request_timeout: u64,
        /// The longest a request that is not long-running (watch, exec, log,
        /// proxy …) may take before its 504, a Go duration; a request's
        /// `?timeout=` can only shorten it.
        #[arg(long, default_value = "1m0s", value_parser = parse_request_timeout)]
        request_timeout: Duration,
        /// kube's EncryptionConfiguration (apiserver.config.k8s.io/v1):
        /// which resources are stored encrypted, with identity, aescbc,
        /// aesgcm or secretbox providers.
        #[arg(long)]
        encryption_provider_config: Option<PathBuf>,
        /// kube's audit Policy (audit.k8s.io/v1): which requests are
        /// recorded, at which level; nothing is audited without it.
        #[arg(long)]
        audit_policy_file: Option<PathBuf>,
        /// Where audit events go, one per line; `-` is stdout.
        #[arg(long)]
        audit_log_path: Option<String>,
        /// Days an audit log backup is kept (0: no limit).
        #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
        audit_log_maxage: i64,
        /// Audit log backups kept (0: no limit).
        #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
        audit_log_maxbackup: i64,
        /// MiB the audit log grows to before it is rotated (0: 100).
        #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
        audit_log_maxsize: i64,
        /// `json` (one Event object per line) or `legacy` (kube's text line).
        #[arg(long, default_value = "json")]
        audit_log_format: String,
        /// `blocking` and `blocking-strict` wait for room in the queue to
        /// the audit writer; `batch` drops an event when it is full.
        #[arg(long, default_value = "blocking")]
        audit_log_mode: String,
        /// The size of the queue to the audit writer.
        #[arg(long, default_value_t = 10000, allow_hyphen_values = true)]
        audit_log_batch_buffer_size: i64,
        /// The API version of the events written.
        #[arg(long, default_value = "audit.k8s.io/v1")]
        audit_log_version: String,
        /// A kubeconfig naming the audit webhook (server URL and its CA):
        /// events are POSTed to it as `EventList`s.
        #[arg(long)]
        audit_webhook_config_file: Option<PathBuf>,
        /// How long the first retry of a failed audit webhook call waits.
        #[arg(long, default_value = "10s", value_parser = parse_go_duration)]
        audit_webhook_initial_backoff: Duration,
        /// `batch` (the default: queued and sent in batches), `blocking`
        /// or `blocking-strict` (a request fails when its RequestReceived
        /// event is not taken).
        #[arg(long, default_value = "batch")]
        audit_webhook_mode: String,
        /// The size of the queue to the audit webhook.
        #[arg(long, default_value_t = 10000, allow_hyphen_values = true)]
        audit_webhook_batch_buffer_size: i64,
        /// The most events one audit webhook call carries (batch mode).
        #[arg(long, default_value_t = 400, allow_hyphen_values = true)]
        audit_webhook_batch_max_size: i64,
        /// How long a batch smaller than the max size waits (batch mode).
        #[arg(long, default_value = "30s", value_parser = parse_go_duration)]
        audit_webhook_batch_max_wait: Duration,
        /// Whether audit webhook batches are throttled (batch mode).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        audit_webhook_batch_throttle_enable: bool,
        /// Batches per second on average (batch mode).
        #[arg(long, default_value_t = 10.0, allow_hyphen_values = true)]
        audit_webhook_batch_throttle_qps: f32,
        /// Batches sent at once when the QPS was not used (batch mode).
        #[arg(long, default_value_t = 15, allow_hyphen_values = true)]
        audit_webhook_batch_throttle_burst: i64,
        /// The API version of the events sent to the webhook.
        #[arg(long, default_value = "audit.k8s.io/v1")]
        audit_webhook_version: String,
        /// The most HTTP/2 streams a client may open at once on one
        /// connection; 0 uses kube-apiserver's 100.
        #[arg(long, default_value_t = 0)]
        http2_max_streams_per_connection: u32,
        /// The most requests other than mutating and long-running ones
        /// (watch, exec, log, proxy …) served at once; beyond it 429 with
        /// `Retry-After: 1` (system:masters excepted). 0: no limit. With
        /// API Priority and Fairness on, the two limits added are its seats.
        #[arg(long, default_value_t = ferrokube::api::max_in_flight::DEFAULT_MAX_REQUESTS_INFLIGHT)]
        max_requests_inflight: usize,
        /// The most mutating requests served at once; beyond it 429. 0: no limit.
        #[arg(long, default_value_t = ferrokube::api::max_in_flight::DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT)]
        max_mutating_requests_inflight: usize,
        /// API Priority and Fairness (kube's default): requests are
        /// classified by FlowSchemas and queued for the seats of their
        /// priority level, the two limits above added; false applies the
        /// max-inflight limits instead.
        #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value_t = true, action = clap::ArgAction::Set)]
        enable_priority_and_fairness: bool,
        /// How long a client has for the TLS handshake and for a request's
        /// headers once it began sending them (kube's 32s; no kube flag).
        #[arg(long, default_value = "32s", value_parser = parse_duration, hide = true)]
        header_read_timeout: Duration,
        /// How long a connection without requests stays open (kube's 90s; no
        /// kube flag).
        #[arg(long, default_value = "90s", value_parser = parse_duration, hide = true)]
        idle_connection_timeout: Duration,
        /// Built-in controllers to run, kube-controller-manager style: `*` every
        /// default-on one, `name` one more, `-name` one fewer (garbagecollector,
        /// namespace, serviceaccount, serviceaccount-token, root-ca-cert-publisher,
        /// validatingadmissionpolicy-status-controller).
        #[arg(long, value_delimiter = ',', default_value = "*")]
        controllers: Vec<String>,
        /// The CIDR Service ClusterIPs are allocated from.
        #[arg(long, default_value = ferrokube::allocator::DEFAULT_SERVICE_CLUSTER_IP_RANGE)]
        service_cluster_ip_range: String,
        /// The port range NodePort and LoadBalancer Services' node ports come from.
        #[arg(long, default_value = "30000-32767")]
        service_node_port_range: String,
        /// PEM private key (RSA or ECDSA) service-account tokens are signed
        /// with; without it a key is generated into the data directory (or
        /// shared through etcd) on the first start.
        #[arg(long)]
        service_account_signing_key_file: Option<PathBuf>,
        /// PEM public or private keys (or certificates) that verify
        /// service-account tokens, besides the signing key (repeatable).
        #[arg(long = "service-account-key-file")]
        service_account_key_file: Vec<PathBuf>,
        /// The issuer of service-account tokens (repeatable: the first one
        /// signs, all are accepted).
        #[arg(long = "service-account-issuer")]
        service_account_issuer: Vec<String>,
        /// Audiences of this API (comma separated); default: the issuers.
        #[arg(long, value_delimiter = ',')]
        api_audiences: Vec<String>,
        /// The longest validity a TokenRequest may ask for (a Go duration, at least 1h).
        #[arg(long)]
        service_account_max_token_expiration: Option<String>,
        /// The jwks_uri of the OIDC discovery document (default:
        /// https://<this server>/openid/v1/jwks).
        #[arg(long)]
        service_account_jwks_uri: Option<String>,
        /// Pod-bound tokens asked for 3607 s (kubelet's) are valid a year but
        /// warn after their requested expiry, as kube does.
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        service_account_extend_token_expiration: bool,
        /// Legacy Secret-based tokens are checked against their Secret and
        /// ServiceAccount on every use (kube's default); `false` accepts
        /// any validly signed one.
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        service_account_lookup: bool,
        /// Ordered list of authorizers (kube-apiserver's names): RBAC,
        /// AlwaysAllow, AlwaysDeny. `system:masters` is always allowed first.
        #[arg(long, value_delimiter = ',', default_value = "RBAC")]
        authorization_mode: Vec<String>,
        /// Requests without credentials are `system:anonymous` (group
        /// `system:unauthenticated`) and left to the authorizer, as kube's
        /// default; `false` answers them 401.
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        anonymous_auth: bool,
        /// PEM bundle of CAs whose client certificates authenticate (CN the
        /// user, O the groups), besides ferrokube's own CA; re-read when it changes.
        #[arg(long)]
        client_ca_file: Option<PathBuf>,
        /// PEM bundle of the CAs of front proxies allowed to name the user in
        /// the --requestheader-* headers.
        #[arg(long)]
        requestheader_client_ca_file: Option<PathBuf>,
        /// Common names a front proxy's certificate may have (empty: any
        /// certificate of --requestheader-client-ca-file).
        #[arg(long, value_delimiter = ',')]
        requestheader_allowed_names: Vec<String>,
        /// Request headers naming the user, first non-empty wins (X-Remote-User is common).
        #[arg(long, value_delimiter = ',')]
        requestheader_username_headers: Vec<String>,
        /// Request headers naming the user's UID (X-Remote-Uid is suggested).
        #[arg(long, value_delimiter = ',')]
        requestheader_uid_headers: Vec<String>,
        /// Request headers naming the user's groups (X-Remote-Group is suggested).
        #[arg(long, value_delimiter = ',')]
        requestheader_group_headers: Vec<String>,
        /// Request header prefixes of the user's extra (X-Remote-Extra- is suggested).
        #[arg(long, value_delimiter = ',')]
        requestheader_extra_headers_prefix: Vec<String>,
        /// Admission plugins to enable besides kube's default ones (kube's names).
        #[arg(long, value_delimiter = ',')]
        enable_admission_plugins: Vec<String>,
        /// Admission plugins to disable, even when on by default.
        #[arg(long, value_delimiter = ',')]
        disable_admission_plugins: Vec<String>,
        /// An AdmissionConfiguration (apiserver.config.k8s.io/v1) with the
        /// plugins' configurations (PodSecurity's defaults and exemptions).
        #[arg(long)]
        admission_control_config_file: Option<PathBuf>,
        /// DefaultTolerationSeconds: the seconds of the toleration of
        /// `node.kubernetes.io/not-ready:NoExecute` added to pods without one.
        #[arg(long, default_value_t = 300)]
        default_not_ready_toleration_seconds: i64,
        /// DefaultTolerationSeconds: the seconds of the toleration of
        /// `node.kubernetes.io/unreachable:NoExecute` added to pods without one.
        #[arg(long, default_value_t = 300)]
        default_unreachable_toleration_seconds: i64,
        /// Log filter (tracing's EnvFilter syntax); quiet by default.
        #[arg(long, default_value = "warn")]
        log_level: String,
        /// A throwaway server for tests and scripts: a memory store, a free
        /// loopback port and a temporary data directory (removed at exit);
        /// prints only the admin kubeconfig's path on stdout once ready, and
        /// exits when its parent process does.
        #[arg(long)]
        ephemeral: bool,
    },
    /// Lay out a KUBEBUILDER_ASSETS directory for controller-runtime's
    /// envtest: `kube-apiserver` runs this binary on its memory store,
    /// `etcd` is `ferrokube envtest-etcd`, `kubectl` links to the kubectl
    /// on PATH. Then `export KUBEBUILDER_ASSETS=DIR`.
    EnvtestAssets {
        /// The directory (created when missing; files it wrote before are replaced).
        dir: PathBuf,
        /// The kubectl to link (default: the one on PATH, if any).
        #[arg(long)]
        kubectl: Option<PathBuf>,
    },
    /// The `etcd` of an envtest assets directory: answers envtest's
    /// `GET /health` on --listen-client-urls and keeps no data; every
    /// other etcd flag is accepted and ignored.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    EnvtestEtcd {
        /// etcd's flags, as envtest passes them.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        etcd_flags: Vec<String>,
    },
}

/// `ferrokube envtest-assets DIR`.
fn envtest_assets(dir: PathBuf, kubectl: Option<PathBuf>) -> ExitCode {
    let ferrokube = match std::env::current_exe() {
        Ok(path) => path,
        Err(error) => {
            eprintln!("ferrokube: envtest-assets: finding this binary: {error}");
            return ExitCode::FAILURE;
        }
    };
    let options = ferrokube::envtest::AssetsOptions {
        ferrokube,
        kubectl: kubectl.or_else(ferrokube::envtest::assets::kubectl_on_path),
    };
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    match ferrokube::envtest::write_assets(&dir, &options) {
        Ok(assets) => {
            if assets.kubectl.is_none() {
                eprintln!("ferrokube: envtest-assets: no kubectl on PATH; none linked");
            }
            println!("export KUBEBUILDER_ASSETS={}", dir.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("ferrokube: envtest-assets: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `ferrokube envtest-etcd [etcd flags]`.
fn envtest_etcd(etcd_flags: &[String]) -> ExitCode {
    let options = ferrokube::envtest::EtcdHealthOptions::parse(etcd_flags);
    if options.help {
        print!("{}", ferrokube::envtest::etcd_health::HELP);
        return ExitCode::SUCCESS;
    }
    if options.version {
        println!(
            "ferrokube envtest-etcd {} (answers /health only)",
            env!("CARGO_PKG_VERSION")
        );
        return ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("ferrokube: starting the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(ferrokube::envtest::serve_health(
        &options,
        shutdown_signal(),
    )) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("ferrokube: envtest-etcd: {error}");
            ExitCode::FAILURE
        }
    }
}

/// kube-apiserver takes flags only (envtest and scripts start it so):
/// `ferrokube --secure-port=6443 …` is `ferrokube serve --secure-port=6443 …`.
fn with_default_subcommand(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let first = args.get(1).map(|arg| arg.to_string_lossy().into_owned());
    if let Some(first) = first {
        if first.starts_with("--") && first != "--help" && first != "--version" {
            args.insert(1, "serve".into());
        }
    }
    args
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(with_default_subcommand(std::env::args_os().collect()));
    let serve = match cli.command {
        Command::EnvtestAssets { dir, kubectl } => return envtest_assets(dir, kubectl),
        Command::EnvtestEtcd { etcd_flags } => return envtest_etcd(&etcd_flags),
        serve @ Command::Serve { .. } => serve,
    };
    let Command::Serve {
        data_dir,
        cert_dir,
        tls_cert_file,
        tls_private_key_file,
        advertise_address,
        allow_privileged,
        feature_gates: _,
        bind_address,
        secure_port,
        tls_san,
        token_auth_file,
        storage_backend,
        etcd_servers,
        etcd_prefix,
        etcd_cafile,
        etcd_certfile,
        etcd_keyfile,
        etcd_compaction_interval,
        fsync,
        history_window,
        min_request_timeout,
        request_timeout,
        encryption_provider_config,
        audit_policy_file,
        audit_log_path,
        audit_log_maxage,
        audit_log_maxbackup,
        audit_log_maxsize,
        audit_log_format,
        audit_log_mode,
        audit_log_batch_buffer_size,
        audit_log_version,
        audit_webhook_config_file,
        audit_webhook_initial_backoff,
        audit_webhook_mode,
        audit_webhook_batch_buffer_size,
        audit_webhook_batch_max_size,
        audit_webhook_batch_max_wait,
        audit_webhook_batch_throttle_enable,
        audit_webhook_batch_throttle_qps,
        audit_webhook_batch_throttle_burst,
        audit_webhook_version,
        http2_max_streams_per_connection,
        max_requests_inflight,
        max_mutating_requests_inflight,
        enable_priority_and_fairness,
        header_read_timeout,
        idle_connection_timeout,
        controllers,
        service_cluster_ip_range,
        service_node_port_range,
        service_account_signing_key_file,
        service_account_key_file,
        service_account_issuer,
        api_audiences,
        service_account_max_token_expiration,
        service_account_jwks_uri,
        service_account_extend_token_expiration,
        service_account_lookup,
        authorization_mode,
        anonymous_auth,
        client_ca_file,
        requestheader_client_ca_file,
        requestheader_allowed_names,
        requestheader_username_headers,
        requestheader_uid_headers,
        requestheader_group_headers,
        requestheader_extra_headers_prefix,
        enable_admission_plugins,
        disable_admission_plugins,
        admission_control_config_file,
        default_not_ready_toleration_seconds,
        default_unreachable_toleration_seconds,
        log_level,
        ephemeral,
    } = serve
    else {
        return ExitCode::FAILURE;
    };
    // kube-apiserver's `capabilities.Setup(s.AllowPrivileged, ...)`.
    ferrokube::validation::capabilities::set_allow_privileged(allow_privileged.unwrap_or(false));
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(log_level))
        .with_writer(std::io::stderr)
        .init();
    // kube's `ServerRunOptions.Validate`.
    if enable_priority_and_fairness && max_requests_inflight + max_mutating_requests_inflight == 0 {
        eprintln!("ferrokube: --max-requests-inflight plus --max-mutating-requests-inflight must be positive when --enable-priority-and-fairness is true");
        return ExitCode::FAILURE;
    }
    // kube-apiserver's `MaybeDefaultWithSelfSignedCerts`: the named pair,
    // else the cert dir's pair when it is there.
    let serving_certificate = match (tls_cert_file, tls_private_key_file) {
        (Some(cert), Some(key)) => Some((cert, key)),
        _ => cert_dir
            .as_ref()
            .map(|dir| (dir.join("apiserver.crt"), dir.join("apiserver.key")))
            .filter(|(cert, key)| cert.is_file() && key.is_file()),
    };
    let data_dir = data_dir.unwrap_or_else(|| match &cert_dir {
        Some(dir) => dir.join("ferrokube-data"),
        None => PathBuf::from("./ferrokube-data"),
    });
    let storage_backend = storage_backend.unwrap_or(if etcd_servers.is_empty() {
        BackendFlag::Sqlite
    } else {
        BackendFlag::Etcd3
    });
    let ephemeral_dir = match ephemeral.then(ephemeral::start).transpose() {
        Ok(directory) => directory,
        Err(error) => {
            eprintln!("ferrokube: --ephemeral: {error}");
            return ExitCode::FAILURE;
        }
    };
    let (data_dir, storage_backend, secure_port, fsync) = match &ephemeral_dir {
        Some(directory) => (
            directory.path().to_path_buf(),
            BackendFlag::Memory,
            0,
            false,
        ),
        None => (data_dir, storage_backend, secure_port, fsync),
    };
    let config = ServerConfig {
        data_dir,
        serving_certificate,
        advertise_address,
        bind_address,
        secure_port,
        tls_sans: tls_san,
        token_auth_file,
        storage_backend: match storage_backend {
            BackendFlag::Sqlite => StorageBackend::Sqlite,
            BackendFlag::Memory => StorageBackend::Memory,
            BackendFlag::Etcd3 => StorageBackend::Etcd3,
        },
        etcd: {
            let mut etcd = ferrokube_store::etcd::EtcdOptions::new(etcd_servers);
            etcd.prefix = etcd_prefix;
            etcd.tls = ferrokube_store::etcd::EtcdTls {
                ca_file: etcd_cafile,
                cert_file: etcd_certfile,
                key_file: etcd_keyfile,
            };
            etcd.compaction_interval = etcd_compaction_interval;
            etcd
        },
        fsync,
        history_window,
        min_request_timeout: Duration::from_secs(min_request_timeout),
        request_timeout,
        encryption_provider_config,
        http2_max_streams_per_connection,
        serving_timeouts: ferrokube::connection_timeouts::ServingTimeouts {
            header_read: header_read_timeout,
            idle: idle_connection_timeout,
        },
        max_requests_inflight,
        max_mutating_requests_inflight,
        enable_priority_and_fairness,
        controllers: match ferrokube::controllers::parse_controllers(&controllers) {
            Ok(enabled) => enabled,
            Err(error) => {
                eprintln!("ferrokube: --controllers: {error}");
                return ExitCode::FAILURE;
            }
        },
        service_cluster_ip_range: match ferrokube::allocator::IpRange::parse(
            &service_cluster_ip_range,
        ) {
            Ok(range) => range,
            Err(error) => {
                eprintln!("ferrokube: --service-cluster-ip-range: {error}");
                return ExitCode::FAILURE;
            }
        },
        service_accounts: ferrokube::serviceaccount::ServiceAccountOptions {
            signing_key_file: service_account_signing_key_file,
            key_files: service_account_key_file,
            issuers: service_account_issuer,
            api_audiences,
            max_token_expiration_seconds: match service_account_max_token_expiration
                .as_deref()
                .map(ferrokube::go::time::parse_go_duration)
            {
                None => None,
                Some(Ok(nanoseconds)) => Some(nanoseconds / 1_000_000_000),
                Some(Err(error)) => {
                    eprintln!("ferrokube: --service-account-max-token-expiration: {error}");
                    return ExitCode::FAILURE;
                }
            },
            jwks_uri: service_account_jwks_uri,
            extend_token_expiration: Some(service_account_extend_token_expiration),
            lookup: Some(service_account_lookup),
        },
        service_node_port_range: match ferrokube::allocator::PortRange::parse(
            &service_node_port_range,
        ) {
            Ok(range) => range,
            Err(error) => {
                eprintln!("ferrokube: --service-node-port-range: {error}");
                return ExitCode::FAILURE;
            }
        },
        authorization_modes: match ferrokube::authz::parse_modes(&authorization_mode) {
            Ok(modes) => modes,
            Err(error) => {
                eprintln!("ferrokube: --authorization-mode: {error}");
                return ExitCode::FAILURE;
            }
        },
        anonymous_auth,
        client_ca_files: client_ca_file.into_iter().collect(),
        request_header: ferrokube::authn::RequestHeaderFlags {
            client_ca_file: requestheader_client_ca_file,
            allowed_names: requestheader_allowed_names,
            username_headers: requestheader_username_headers,
            uid_headers: requestheader_uid_headers,
            group_headers: requestheader_group_headers,
            extra_headers_prefix: requestheader_extra_headers_prefix,
        },
        admission_plugins: match ferrokube::admission::Plugins::parse(
            &enable_admission_plugins,
            &disable_admission_plugins,
        ) {
            Ok(plugins) => {
                let plugins = plugins.with_toleration_seconds(
                    default_not_ready_toleration_seconds,
                    default_unreachable_toleration_seconds,
                );
                match admission_control_config_file {
                    None => plugins,
                    Some(path) => match plugins.with_config_file(&path) {
                        Ok(plugins) => plugins,
                        Err(error) => {
                            eprintln!("ferrokube: --admission-control-config-file: {error}");
                            return ExitCode::FAILURE;
                        }
                    },
                }
            }
            Err(error) => {
                eprintln!("ferrokube: {error}");
                return ExitCode::FAILURE;
            }
        },
        start_from: None,
        audit: ferrokube::audit::AuditOptions {
            policy_file: audit_policy_file,
            log_path: audit_log_path,
            max_age: audit_log_maxage,
            max_backup: audit_log_maxbackup,
            max_size: audit_log_maxsize,
            format: audit_log_format,
            mode: audit_log_mode,
            batch_buffer_size: audit_log_batch_buffer_size,
            version: audit_log_version,
            webhook: ferrokube::audit::AuditWebhookOptions {
                config_file: audit_webhook_config_file,
                initial_backoff: audit_webhook_initial_backoff,
                mode: audit_webhook_mode,
                batch_buffer_size: audit_webhook_batch_buffer_size,
                batch_max_size: audit_webhook_batch_max_size,
                batch_max_wait: audit_webhook_batch_max_wait,
                batch_throttle_enable: audit_webhook_batch_throttle_enable,
                batch_throttle_qps: audit_webhook_batch_throttle_qps,
                batch_throttle_burst: audit_webhook_batch_throttle_burst,
                version: audit_webhook_version,
            },
        },
        start_from_bootstrapped: false,
    };
    if config.storage_backend == StorageBackend::Etcd3 && config.etcd.endpoints.is_empty() {
        // kube-apiserver's `EtcdOptions.Validate` wording.
        eprintln!("ferrokube: --etcd-servers must be specified");
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("ferrokube: starting the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let server = match Server::bind(config).await {
            Ok(server) => server,
            Err(error) => {
                eprintln!("ferrokube: {error}");
                return ExitCode::FAILURE;
            }
        };
        let kubeconfig = std::fs::canonicalize(&server.kubeconfig_path)
            .unwrap_or(server.kubeconfig_path.clone());
        if ephemeral_dir.is_some() {
            // Only the path, once ready: a script reads one line and goes.
            server.api.post_start_hooks.all_completed().await;
            println!("{}", kubeconfig.display());
        } else {
            println!(
                "ferrokube serving on https://{} — export KUBECONFIG={}",
                server.address,
                kubeconfig.display()
            );
        }
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        server.serve(shutdown_signal()).await;
        drop(ephemeral_dir);
        ExitCode::SUCCESS
    })
}

/// `--ephemeral`: the temporary data directory, and the end of the process with its parent.
mod ephemeral {
    /// Ask the kernel for SIGTERM when the parent exits (the graceful
    /// shutdown then runs and the directory is removed), and make the
    /// directory.
    pub fn start() -> std::io::Result<tempfile::TempDir> {
        let parent = rustix::process::getppid();
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM))?;
        // The parent may have gone before the request: then we were re-parented already.
        if rustix::process::getppid() != parent || parent.is_none() {
            return Err(std::io::Error::other("the parent process has exited"));
        }
        tempfile::Builder::new().prefix("ferrokube-").tempdir()
    }
}

async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

/// `300`, `300s`, `5m`, `1h`, `500ms`.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("invalid duration {text:?}"))?;
    match unit {
        "" | "s" => Ok(Duration::from_secs(number)),
        "ms" => Ok(Duration::from_millis(number)),
        "m" => Ok(Duration::from_secs(number * 60)),
        "h" => Ok(Duration::from_secs(number * 3600)),
        _ => Err(format!("invalid duration {text:?}: use s, ms, m or h")),
    }
}

/// A Go duration flag (`10s`, `1m30s`), not negative.
fn parse_go_duration(text: &str) -> Result<Duration, String> {
    let nanoseconds = ferrokube::go::time::parse_go_duration(text)?;
    u64::try_from(nanoseconds)
        .map(Duration::from_nanos)
        .map_err(|_| format!("{text}: a duration can not be negative"))
}

/// `--request-timeout`: a Go duration (`1m0s`), not negative
/// (`ServerRunOptions.Validate`'s wording).
fn parse_request_timeout(text: &str) -> Result<Duration, String> {
    let nanoseconds = ferrokube::go::time::parse_go_duration(text)?;
    if nanoseconds < 0 {
        return Err("--request-timeout can not be negative value".into());
    }
    Ok(Duration::from_nanos(nanoseconds.unsigned_abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<std::ffi::OsString> {
        list.iter().map(Into::into).collect()
    }

    #[test]
    fn flags_alone_mean_serve_as_kube_apiserver_takes_them() {
        assert_eq!(
            with_default_subcommand(args(&["kube-apiserver", "--secure-port=1"])),
            args(&["kube-apiserver", "serve", "--secure-port=1"])
        );
        for unchanged in [
            &["ferrokube", "serve", "--secure-port=1"][..],
            &["kube-apiserver", "--help"],
            &["ferrokube", "--version"],
            &["ferrokube"],
        ] {
            assert_eq!(with_default_subcommand(args(unchanged)), args(unchanged));
        }
        // envtest's flags parse.
        let cli = Cli::try_parse_from(with_default_subcommand(args(&[
            "kube-apiserver",
            "--advertise-address=127.0.0.1",
            "--allow-privileged=true",
            "--authorization-mode=RBAC",
            "--bind-address=127.0.0.1",
            "--cert-dir=/tmp/k8s_test_framework_1",
            "--client-ca-file=/tmp/k8s_test_framework_1/client-cert-auth-ca.crt",
            "--disable-admission-plugins=ServiceAccount",
            "--etcd-servers=http://127.0.0.1:2379",
            "--secure-port=6443",
            "--service-account-issuer=https://127.0.0.1:6443/",
            "--service-account-key-file=/tmp/k8s_test_framework_1/sa-signer.crt",
            "--service-account-signing-key-file=/tmp/k8s_test_framework_1/sa-signer.key",
            "--service-cluster-ip-range=10.0.0.0/24",
        ])));
        assert!(cli.is_ok(), "{:?}", cli.err());
    }

    #[test]
    fn audit_webhook_flags_parse_as_kubes() {
        let cli = Cli::try_parse_from(with_default_subcommand(args(&[
            "kube-apiserver",
            "--audit-webhook-config-file=/etc/kubernetes/audit-webhook.kubeconfig",
            "--audit-webhook-mode=blocking-strict",
            "--audit-webhook-initial-backoff=1m30s",
            "--audit-webhook-batch-max-wait=500ms",
            "--audit-webhook-batch-throttle-enable=false",
            "--audit-webhook-batch-throttle-qps=2.5",
            "--audit-webhook-batch-throttle-burst=3",
            "--audit-webhook-batch-max-size=10",
            "--audit-webhook-batch-buffer-size=20",
        ])));
        let Ok(Cli {
            command:
                Command::Serve {
                    audit_webhook_initial_backoff,
                    audit_webhook_batch_max_wait,
                    audit_webhook_batch_throttle_enable,
                    ..
                },
        }) = cli
        else {
            panic!("the audit webhook flags do not parse");
        };
        assert_eq!(audit_webhook_initial_backoff, Duration::from_secs(90));
        assert_eq!(audit_webhook_batch_max_wait, Duration::from_millis(500));
        assert!(!audit_webhook_batch_throttle_enable);
    }
}
