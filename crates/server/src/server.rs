//! The listener: TLS (h2 and HTTP/1.1 by ALPN), authentication per request,
//! the body limit, and graceful shutdown.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use ferrokube_store::etcd::EtcdBackend;
use ferrokube_store::{Backend, LocalBackend, MemoryDisk, SqliteDisk, SqliteOptions, Store};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::coalesce::CoalescingIo;
use crate::connection_timeouts::{ActivityIo, ConnectionActivity, Expiry, ServingTimeouts};
use crate::segments::Chunk;

use crate::api::Authentication;
use crate::api::{Api, ApiRequest, ApiResponse, ResponseBody, MAX_REQUEST_BODY_BYTES};
use crate::authn::{Authenticator, TokenFile};
use crate::bootstrap;
use crate::object::ObjectCodec;
use crate::route::Method;
use crate::serviceaccount::{ServiceAccountError, ServiceAccountTokens, Signer};
use crate::status::Status;
use crate::{kubeconfig, pki, tls};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageBackend {
    /// SQLite in the data directory: the embedded default.
    Sqlite,
    /// Process memory: gone when the process ends.
    Memory,
    /// An etcd v3 cluster (`--etcd-servers`): several replicas may share it.
    Etcd3,
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub data_dir: PathBuf,
    /// `--tls-cert-file`/`--tls-private-key-file` (or `--cert-dir`'s
    /// `apiserver.crt`/`apiserver.key`): served instead of the certificate
    /// ferrokube issues from its own CA.
    pub serving_certificate: Option<(PathBuf, PathBuf)>,
    /// `--advertise-address`: what the `kubernetes` Service's endpoints name.
    pub advertise_address: Option<IpAddr>,
    pub bind_address: IpAddr,
    /// 0 picks a free port.
    pub secure_port: u16,
    pub tls_sans: Vec<String>,
    pub token_auth_file: Option<PathBuf>,
    pub storage_backend: StorageBackend,
    /// Where and how to reach etcd when `storage_backend` is `Etcd3`.
    pub etcd: ferrokube_store::etcd::EtcdOptions,
    pub fsync: bool,
    /// How long changes stay readable for watches, Exact lists and continue tokens.
    pub history_window: Duration,
    /// kube-apiserver's `--min-request-timeout` (watch duration without `timeoutSeconds`).
    pub min_request_timeout: Duration,
    /// kube-apiserver's `--request-timeout`: the deadline of every request
    /// that is not long-running (`api/deadline.rs`).
    pub request_timeout: Duration,
    /// kube-apiserver's `--encryption-provider-config`: values are stored
    /// encrypted as it configures (`encryption_config.rs`).
    pub encryption_provider_config: Option<PathBuf>,
    /// kube-apiserver's `--http2-max-streams-per-connection` (0: kube's 100).
    pub http2_max_streams_per_connection: u32,
    /// Header-read (and TLS handshake) and idle timeouts of a connection
    /// (`connection_timeouts.rs`; kube's 32 s and 90 s).
    pub serving_timeouts: crate::connection_timeouts::ServingTimeouts,
    /// kube-apiserver's `--max-requests-inflight` (0: no limit).
    pub max_requests_inflight: usize,
    /// kube-apiserver's `--max-mutating-requests-inflight` (0: no limit).
    pub max_mutating_requests_inflight: usize,
    /// kube-apiserver's `--enable-priority-and-fairness` (default true):
    /// APF (`crate::flowcontrol`) instead of the max-in-flight limits.
    pub enable_priority_and_fairness: bool,
    /// `--controllers`: the built-in controllers that run (`crate::controllers`).
    pub controllers: std::collections::BTreeSet<&'static str>,
    /// `--service-cluster-ip-range`.
    pub service_cluster_ip_range: crate::allocator::IpRange,
    /// `--service-node-port-range`.
    pub service_node_port_range: crate::allocator::PortRange,
    /// `--service-account-*` and `--api-audiences`.
    pub service_accounts: crate::serviceaccount::ServiceAccountOptions,
    /// `--authorization-mode`, in order (`crate::authz::parse_modes`).
    pub authorization_modes: Vec<crate::authz::Mode>,
    /// `--anonymous-auth`.
    pub anonymous_auth: bool,
    /// `--client-ca-file`: more CAs whose client certificates authenticate
    /// (ferrokube's own CA always does).
    pub client_ca_files: Vec<PathBuf>,
    /// `--requestheader-*`: front-proxy authentication.
    pub request_header: crate::authn::RequestHeaderFlags,
    /// `--enable-admission-plugins` / `--disable-admission-plugins`.
    pub admission_plugins: crate::admission::Plugins,
    /// Start a memory store from this checkpoint of another server's store
    /// instead of an empty one (in-process test servers, `crates/testing`).
    pub start_from: Option<ServerCheckpoint>,
    /// `--audit-policy-file` and `--audit-log-*` (`crate::audit`).
    pub audit: crate::audit::AuditOptions,
    /// `start_from` is the state a server of this binary reached once its
    /// bootstrap post-start hooks (`rbac/bootstrap-roles`,
    /// `scheduling/bootstrap-system-priority-classes`) had run, with
    /// nothing written since (`crates/testing`'s process-wide template):
    /// the hooks are marked done without reconciling again, which would
    /// change nothing. Ignored without `start_from`.
    pub start_from_bootstrapped: bool,
}

/// The whole state of a server's memory store (`ferrokube_store::Checkpoint`).
pub type ServerCheckpoint = ferrokube_store::Checkpoint<crate::object::StoredObject>;

impl ServerConfig {
    /// The `ferrokube serve` defaults with the store in `data_dir`, on the
    /// memory backend and a free loopback port: what an in-process or
    /// throwaway server starts from.
    pub fn ephemeral(data_dir: PathBuf) -> ServerConfig {
        ServerConfig {
            data_dir,
            serving_certificate: None,
            advertise_address: None,
            bind_address: IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
            secure_port: 0,
            tls_sans: Vec::new(),
            token_auth_file: None,
            storage_backend: StorageBackend::Memory,
            etcd: ferrokube_store::etcd::EtcdOptions::new(Vec::new()),
            fsync: false,
            history_window: ferrokube_store::DEFAULT_HISTORY_WINDOW,
            min_request_timeout: Duration::from_secs(1800),
            request_timeout: Duration::from_secs(60),
            encryption_provider_config: None,
            http2_max_streams_per_connection: 0,
            serving_timeouts: crate::connection_timeouts::ServingTimeouts::default(),
            max_requests_inflight: crate::api::max_in_flight::DEFAULT_MAX_REQUESTS_INFLIGHT,
            max_mutating_requests_inflight:
                crate::api::max_in_flight::DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
            enable_priority_and_fairness: true,
            controllers: crate::controllers::parse_controllers(&["*".to_string()])
                .unwrap_or_default(),
            service_cluster_ip_range: crate::allocator::IpRange::parse(
                crate::allocator::DEFAULT_SERVICE_CLUSTER_IP_RANGE,
            )
            .unwrap_or_else(|_| unreachable!("the default range parses")),
            service_node_port_range: crate::allocator::PortRange::default(),
            service_accounts: crate::serviceaccount::ServiceAccountOptions::default(),
            authorization_modes: vec![crate::authz::Mode::Rbac],
            anonymous_auth: true,
            client_ca_files: Vec::new(),
            request_header: crate::authn::RequestHeaderFlags::default(),
            admission_plugins: crate::admission::Plugins::default(),
            start_from: None,
            audit: crate::audit::AuditOptions::default(),
            start_from_bootstrapped: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("binding {address}: {source}")]
    Bind {
        address: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    DataDir(#[from] crate::data_dir::DataDirError),
    #[error("reading or creating the continue-token key {path}: {source}")]
    ContinueKey {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("making the continue-token key: {0}")]
    ContinueKeyRandom(#[from] crate::api::RandomUnavailable),
    #[error(transparent)]
    Pki(#[from] pki::PkiError),
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error(transparent)]
    Kubeconfig(#[from] kubeconfig::KubeconfigError),
    #[error(transparent)]
    Authn(#[from] crate::authn::AuthnError),
    #[error("opening the store: {0}")]
    Store(String),
    #[error(transparent)]
    ServiceAccount(#[from] crate::serviceaccount::ServiceAccountError),
    #[error(transparent)]
    Encryption(#[from] crate::encryption_config::EncryptionConfigError),
    #[error(transparent)]
    Audit(#[from] crate::audit::AuditError),
}

/// A server that is bound and ready to serve.
pub struct Server {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    authenticator: Arc<Authenticator>,
    pub api: Arc<Api>,
    pub address: SocketAddr,
    pub kubeconfig_path: PathBuf,
    /// Whether this replica runs the controllers: Lease-based leader election
    /// among the replicas on one etcd; always true on an embedded store.
    pub leading: tokio::sync::watch::Receiver<bool>,
    /// HTTP/2 streams a client may open at once on one connection.
    http2_max_streams: u32,
    serving_timeouts: crate::connection_timeouts::ServingTimeouts,
    /// The audit log, when a policy and a log path are given.
    auditor: Option<Arc<crate::audit::Auditor>>,
    /// Held while the server lives: no second process opens this store.
    _data_dir: crate::data_dir::DataDir,
}

/// kube's HTTP/2 stream limit when `--http2-max-streams-per-connection` is
/// 0 (`SecureServingInfo.Serve`: "match http2.initialMaxConcurrentStreams
/// used by clients"); hyper's own default is 200.
pub const DEFAULT_HTTP2_MAX_STREAMS: u32 = 100;

/// The store, and the etcd backend itself when it is one (for the values
/// replicas share through etcd).
async fn open_store(
    config: &ServerConfig,
) -> Result<(crate::object::ObjectStore, Option<Arc<EtcdBackend>>), ServerError> {
    let store_error = |error: ferrokube_store::StoreError| ServerError::Store(error.to_string());
    if let Some(checkpoint) = &config.start_from {
        if config.storage_backend != StorageBackend::Memory {
            return Err(ServerError::Store(
                "a checkpoint starts only a memory store".into(),
            ));
        }
        let store = Store::open_checkpoint(checkpoint, ObjectCodec, config.history_window)
            .await
            .map_err(store_error)?;
        return Ok((store, None));
    }
    let (backend, etcd) = open_backend(config).await?;
    let store = Store::open_with_history(backend, ObjectCodec, config.history_window)
        .await
        .map_err(store_error)?;
    Ok((store, etcd))
}

/// The backend, and the etcd backend itself when it is one (for the values
/// replicas share through etcd).
async fn open_backend(
    config: &ServerConfig,
) -> Result<(Arc<dyn Backend>, Option<Arc<EtcdBackend>>), ServerError> {
    let transformers = config
        .encryption_provider_config
        .as_deref()
        .map(crate::encryption_config::load)
        .transpose()?;
    let (backend, etcd) = open_plain_backend(config).await?;
    let Some(transformers) = transformers else {
        return Ok((backend, etcd));
    };
    let etcd_keys = etcd.as_ref().map(|etcd| etcd.keys().clone());
    let backend =
        ferrokube_store::encryption::EncryptingBackend::new(backend, transformers, etcd_keys);
    Ok((Arc::new(backend), etcd))
}

/// The backend, as it stores values: unencrypted.
async fn open_plain_backend(
    config: &ServerConfig,
) -> Result<(Arc<dyn Backend>, Option<Arc<EtcdBackend>>), ServerError> {
    let store_error = |error: ferrokube_store::BackendError| ServerError::Store(error.to_string());
    if config.storage_backend == StorageBackend::Etcd3 {
        let etcd = EtcdBackend::connect(config.etcd.clone())
            .await
            .map_err(|error| ServerError::Store(error.to_string()))?;
        let etcd = Arc::new(etcd);
        return Ok((etcd.clone(), Some(etcd)));
    }
    let backend: Arc<dyn Backend> = match config.storage_backend {
        StorageBackend::Memory => {
            Arc::new(LocalBackend::open(MemoryDisk::new()).map_err(store_error)?)
        }
        StorageBackend::Sqlite => {
            let path = config.data_dir.join("store.db");
            let fsync = config.fsync;
            let disk = tokio::task::spawn_blocking(move || {
                SqliteDisk::open(&path, SqliteOptions { fsync })
            })
            .await
            .map_err(|error| ServerError::Store(error.to_string()))?
            .map_err(store_error)?;
            Arc::new(LocalBackend::open(disk).map_err(store_error)?)
        }
        StorageBackend::Etcd3 => unreachable!("opened above"),
    };
    Ok((backend, None))
}

/// The key that signs continue tokens. On etcd every replica must accept the
/// others' tokens, so the key lives in etcd beside the prefix
/// (`<prefix>.ferrokube/continue-token-key`, outside what the cache
/// watches): the first replica stores a random one, all read the same.
async fn continue_key(
    config: &ServerConfig,
    etcd: Option<&EtcdBackend>,
) -> Result<crate::api::ContinueKey, ServerError> {
    let Some(etcd) = etcd else {
        let path = config.data_dir.join("continue.key");
        return crate::api::ContinueKey::load_or_create(&path)
            .map_err(|source| ServerError::ContinueKey { path, source });
    };
    let candidate = crate::api::ContinueKey::random()?;
    let shared = etcd
        .shared_value(
            "continue-token-key",
            Bytes::copy_from_slice(candidate.bytes()),
        )
        .await
        .map_err(|error| ServerError::Store(error.to_string()))?;
    let key = <[u8; 32]>::try_from(shared.as_ref())
        .map_err(|_| ServerError::Store("the continue-token key in etcd is not 32 bytes".into()))?;
    Ok(crate::api::ContinueKey::from_bytes(key))
}

/// The key service-account tokens are signed with when
/// `--service-account-signing-key-file` is not given: generated on the first
/// start (ECDSA P-256) and kept in `<data-dir>/pki/service-account.key`.
/// On etcd every replica must verify the tokens the others sign, so the
/// generated key lives in etcd beside the prefix
/// (`<prefix>.ferrokube/service-account-key`, as the continue-token key):
/// the first replica stores its key, every replica uses the stored one.
async fn service_account_signer(
    config: &ServerConfig,
    etcd: Option<&EtcdBackend>,
) -> Result<Option<Signer>, ServerError> {
    if config.service_accounts.signing_key_file.is_some() {
        return Ok(None);
    }
    let Some(etcd) = etcd else {
        let path = config.data_dir.join("pki").join("service-account.key");
        return Ok(Some(signer_in_file(&path)?));
    };
    let (_, candidate) = Signer::generate()?;
    let shared = etcd
        .shared_value("service-account-key", Bytes::from(candidate))
        .await
        .map_err(|error| ServerError::Store(error.to_string()))?;
    Ok(Some(Signer::from_pem(&shared)?))
}

/// The signing key in `path`, made there (mode 0600) when absent.
fn signer_in_file(path: &std::path::Path) -> Result<Signer, ServiceAccountError> {
    match std::fs::read(path) {
        Ok(pem) => Signer::from_pem(&pem).map_err(|error| ServiceAccountError::File {
            path: path.to_path_buf(),
            source: Box::new(error),
        }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let (signer, pem) = Signer::generate()?;
            let write = |source| ServiceAccountError::Write {
                path: path.to_path_buf(),
                source,
            };
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(write)?;
            }
            let temporary = path.with_extension("key.tmp");
            {
                use std::io::Write;
                use std::os::unix::fs::OpenOptionsExt;
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .open(&temporary)
                    .map_err(write)?;
                file.write_all(pem.as_bytes()).map_err(write)?;
                file.sync_all().map_err(write)?;
            }
            std::fs::rename(&temporary, path).map_err(write)?;
            Ok(signer)
        }
        Err(source) => Err(ServiceAccountError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// kube-apiserver's `scheduling/bootstrap-system-priority-classes` and
/// `rbac/bootstrap-roles` post-start hooks (`storage_rbac.go`
/// `PostStartHook`), each marked done once it has reconciled; the
/// controllers start after the RBAC policy, which authorizes them.
fn spawn_bootstrap_hooks(
    api: &Arc<Api>,
    controllers: crate::controllers::ControllersConfig,
    leading: tokio::sync::watch::Receiver<bool>,
) {
    let priority_api = api.clone();
    tokio::spawn(async move {
        match crate::priority_classes::ensure_system_priority_classes(&priority_api).await {
            Ok(()) => priority_api
                .post_start_hooks
                .complete(crate::priority_classes::POST_START_HOOK),
            Err(error) => tracing::error!(%error, "system priority classes not created"),
        }
    });
    let hook_api = api.clone();
    tokio::spawn(async move {
        match crate::rbac_policy::ensure_rbac_policy(&hook_api).await {
            Ok(()) => hook_api
                .post_start_hooks
                .complete(crate::rbac_policy::POST_START_HOOK),
            Err(error) => tracing::error!(%error, "unable to initialize roles"),
        }
        crate::controllers::spawn(hook_api, controllers, leading);
    });
}

impl Server {
    /// Bind, prepare PKI, open the store, write the kubeconfig.
    pub async fn bind(config: ServerConfig) -> Result<Server, ServerError> {
        // A bad policy or log path stops the start, as kube-apiserver's.
        let auditor = config.audit.start()?;
        let data_dir = crate::data_dir::DataDir::open(&config.data_dir)?;
        let requested = SocketAddr::new(config.bind_address, config.secure_port);
        let listener = TcpListener::bind(requested)
            .await
            .map_err(|source| ServerError::Bind {
                address: requested,
                source,
            })?;
        let address = listener.local_addr().map_err(|source| ServerError::Bind {
            address: requested,
            source,
        })?;
        let mut sans = config.tls_sans.clone();
        if !config.bind_address.is_unspecified() {
            sans.push(config.bind_address.to_string());
        }
        // Parse the vendored RBAC policy while the store opens, so the
        // rbac/bootstrap-roles hook does not wait for it after start.
        let policy = tokio::task::spawn_blocking(|| {
            let _ = crate::rbac_policy::BootstrapPolicy::get();
        });
        let pki_dir = config.data_dir.join("pki");
        let (pki, store) = tokio::join!(
            async { tokio::task::spawn_blocking(move || pki::ensure(&pki_dir, &sans)).await },
            open_store(&config)
        );
        let mut pki = pki.map_err(|error| ServerError::Store(error.to_string()))??;
        if let Some((cert, key)) = &config.serving_certificate {
            pki.use_serving_certificate(cert, key)?;
        }
        let (store, etcd) = store?;
        // SQLite made its files with the umask's mode.
        data_dir.make_files_private()?;
        let server_address = kubeconfig::server_url(address)
            .trim_start_matches("https://")
            .to_string();
        let continue_key = continue_key(&config, etcd.as_deref()).await?;
        let signer = service_account_signer(&config, etcd.as_deref()).await?;
        let service_accounts = ServiceAccountTokens::load(&config.service_accounts, signer)?;
        let token_file = match &config.token_auth_file {
            Some(path) => Some(TokenFile::load(path)?),
            None => None,
        };
        let client_ca = Arc::new(crate::authn::CaBundle::load(
            "--client-ca-file",
            &config.client_ca_files,
            Some(&pki.ca_cert_pem),
        )?);
        let request_header = config.request_header.clone().into_config()?;
        let _ = policy.await;
        let api = Api::with_config(
            store,
            server_address,
            continue_key,
            crate::api::ApiConfig {
                min_request_timeout: config.min_request_timeout,
                request_timeout: config.request_timeout,
                authorization_modes: config.authorization_modes.clone(),
                anonymous_auth: config.anonymous_auth,
                admission_plugins: config.admission_plugins.clone(),
                max_requests_inflight: config.max_requests_inflight,
                max_mutating_requests_inflight: config.max_mutating_requests_inflight,
                enable_priority_and_fairness: config.enable_priority_and_fairness,
            },
            Authentication {
                service_accounts: Arc::new(service_accounts),
                token_file,
                client_ca: Some(client_ca.clone()),
                request_header: request_header.clone(),
            },
        );
        bootstrap::ensure_system_namespaces(&api)
            .await
            .map_err(|error| ServerError::Store(error.to_string()))?;
        // kube-apiserver's `rbac/bootstrap-roles` post-start hook, on every
        // replica; the health checks fail until it has run.
        let hook = crate::rbac_policy::POST_START_HOOK;
        api.post_start_hooks.register(hook);
        // kube-apiserver's `scheduling/bootstrap-system-priority-classes`,
        // registered after the RBAC hook as kube registers it.
        let priority_hook = crate::priority_classes::POST_START_HOOK;
        api.post_start_hooks.register(priority_hook);
        // kube-apiserver's `priority-and-fairness-config-producer`, after it.
        api.post_start_hooks
            .register(crate::flowcontrol_producer::POST_START_HOOK);
        tokio::spawn(crate::flowcontrol_producer::run(api.clone()));
        // APF follows the configuration objects the store holds.
        if let Some(flow_control) = api.flow_control.clone() {
            tokio::spawn(crate::flowcontrol_consumer::run(api.clone(), flow_control));
        }
        let leading = if config.storage_backend == StorageBackend::Etcd3 {
            crate::leader_election::spawn(
                api.clone(),
                crate::leader_election::LeaderElectionConfig::new(),
            )
        } else {
            crate::leader_election::always_leading()
        };
        api.services.configure(
            config.service_cluster_ip_range.clone(),
            config.service_node_port_range,
        );
        bootstrap::KubernetesService::new(
            config.advertise_address.unwrap_or(config.bind_address),
            address.port(),
        )
        .spawn(api.clone(), leading.clone());
        // The controllers act under their own identities, authorized by the
        // bootstrap policy: they start once the hook has written it, as
        // kube-controller-manager starts once the apiserver's /healthz
        // (which waits for that hook) answers ok.
        let controllers = crate::controllers::ControllersConfig {
            enabled: config.controllers.clone(),
            root_ca_pem: pki.ca_cert_pem.clone(),
        };
        if config.start_from.is_some() && config.start_from_bootstrapped {
            // The checkpoint holds what both hooks write, reconciled.
            api.post_start_hooks.complete(priority_hook);
            api.post_start_hooks.complete(hook);
            crate::controllers::spawn(api.clone(), controllers, leading.clone());
        } else {
            spawn_bootstrap_hooks(&api, controllers, leading.clone());
        }
        // Parse the vendored OpenAPI definitions in the background, after start:
        // the first write that needs a schema then finds them ready.
        let warm = api.clone();
        tokio::task::spawn_blocking(move || {
            let _ = warm
                .openapi
                .definition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
        });
        // The CAs named in the CertificateRequest, as Go's ClientCAs.
        let mut acceptable_cas = client_ca.certificates();
        if let Some(config) = &request_header {
            acceptable_cas.extend(config.client_ca.certificates());
        }
        let acceptor = TlsAcceptor::from(tls::server_config(&pki, &acceptable_cas)?);
        // kube's dynamic CA files, and the ConfigMap that publishes them.
        let mut bundles = vec![client_ca];
        if let Some(config) = &request_header {
            bundles.push(config.client_ca.clone());
        }
        let reloaded = crate::authn::spawn_reloader(bundles, api.shutdown_signal());
        crate::cluster_authentication_trust::spawn(api.clone(), reloaded);
        crate::legacy_token_tracking::spawn(api.clone());
        let kubeconfig_path = kubeconfig::write(&config.data_dir, &pki, address)?;
        Ok(Server {
            listener,
            acceptor,
            authenticator: api.authenticator.clone(),
            api,
            address,
            kubeconfig_path,
            leading,
            http2_max_streams: match config.http2_max_streams_per_connection {
                0 => DEFAULT_HTTP2_MAX_STREAMS,
                streams => streams,
            },
            serving_timeouts: config.serving_timeouts,
            auditor,
            _data_dir: data_dir,
        })
    }

    /// Serve until `shutdown` resolves, then finish in-flight requests and flush the store.
    pub async fn serve(self, shutdown: impl std::future::Future<Output = ()>) {
        // Every connection holds a receiver: `closed` resolves when the last
        // one has finished (hyper-util's `GracefulShutdown` does the same,
        // but only for connections it drives itself).
        let (closing, _) = tokio::sync::watch::channel(false);
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder
            .http2()
            .max_concurrent_streams(self.http2_max_streams)
            .initial_stream_window_size(HTTP2_BUFFER_PER_STREAM)
            .max_frame_size(HTTP2_BUFFER_PER_STREAM)
            .initial_connection_window_size(
                HTTP2_BUFFER_PER_STREAM
                    .saturating_mul(self.http2_max_streams)
                    .min(HTTP2_MAX_WINDOW),
            );
        let builder = Arc::new(builder);
        let timeouts = self.serving_timeouts;
        tokio::pin!(shutdown);
        let mut accept_backoff: Option<Duration> = None;
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                () = &mut shutdown => break,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => {
                    accept_backoff = None;
                    accepted
                }
                Err(error) => {
                    // Out of file descriptors, say: back off as Go's
                    // `http.Server.Serve` does (5 ms doubling to 1 s)
                    // instead of spinning on an accept that fails at once.
                    let delay = accept_backoff.map_or(Duration::from_millis(5), |delay| {
                        (delay * 2).min(Duration::from_secs(1))
                    });
                    accept_backoff = Some(delay);
                    tracing::warn!(%error, ?delay, "accepting a connection failed; retrying");
                    tokio::select! {
                        () = tokio::time::sleep(delay) => continue,
                        () = &mut shutdown => break,
                    }
                }
            };
            let _ = stream.set_nodelay(true);
            let connection = Connection {
                acceptor: self.acceptor.clone(),
                api: self.api.clone(),
                authenticator: self.authenticator.clone(),
                builder: builder.clone(),
                timeouts,
                closing: closing.subscribe(),
                auditor: self.auditor.clone(),
            };
            tokio::spawn(connection.serve(stream, peer));
        }
        self.api.begin_shutdown();
        drop(self.listener);
        let _ = closing.send(true);
        if tokio::time::timeout(Duration::from_secs(30), closing.closed())
            .await
            .is_err()
        {
            tracing::warn!("in-flight requests did not finish within 30s");
        }
        if let Err(error) = self.api.store.close().await {
            tracing::error!(%error, "closing the store");
        }
        if let Some(auditor) = self.auditor {
            // Every event of the requests served is written before exit.
            let _ = tokio::task::spawn_blocking(move || auditor.shutdown()).await;
        }
    }

    /// The audit log, when this server audits (tests flush it).
    pub fn auditor(&self) -> Option<&Arc<crate::audit::Auditor>> {
        self.auditor.as_ref()
    }
}

/// What `serve_one` knows of the connection a request came on.
struct Origin<'a> {
    auditor: Option<&'a Arc<crate::audit::Auditor>>,
    peer: IpAddr,
}

/// kube's HTTP/2 per-stream receive buffer and largest frame read
/// (`SecureServingInfo.Serve`: `resourceBody99Percentile`, 256 KiB); the
/// connection's buffer is this times the streams allowed.
const HTTP2_BUFFER_PER_STREAM: u32 = 256 * 1024;
/// HTTP/2's largest flow-control window (2^31 - 1): h2 refuses a larger
/// one, which `--http2-max-streams-per-connection` above 8191 would ask for.
const HTTP2_MAX_WINDOW: u32 = (1 << 31) - 1;

/// What serving one accepted connection needs.
struct Connection {
    acceptor: TlsAcceptor,
    api: Arc<Api>,
    authenticator: Arc<Authenticator>,
    builder: Arc<auto::Builder<TokioExecutor>>,
    timeouts: ServingTimeouts,
    /// Turns true when the server shuts down; dropped when the connection ends.
    closing: tokio::sync::watch::Receiver<bool>,
    /// The audit log, when a policy and a log path are given.
    auditor: Option<Arc<crate::audit::Auditor>>,
}

impl Connection {
    /// The TLS handshake, then requests until the client leaves, a timer of
    /// `connection_timeouts.rs` runs out or the server shuts down.
    async fn serve(self, stream: tokio::net::TcpStream, peer: SocketAddr) {
        let Connection {
            acceptor,
            api,
            authenticator,
            builder,
            timeouts,
            mut closing,
            auditor,
        } = self;
        // Go's `tlsHandshakeTimeout` is the smallest of the server's read
        // timeouts: kube's `ReadHeaderTimeout`.
        let tls = match tokio::time::timeout(timeouts.header_read, acceptor.accept(stream)).await {
            Ok(Ok(mut tls)) => {
                tls.get_mut()
                    .1
                    .set_buffer_limit(Some(crate::coalesce::TLS_QUEUE_LIMIT));
                tls
            }
            Ok(Err(error)) => {
                tracing::debug!(%peer, %error, "tls handshake failed");
                return;
            }
            Err(_) => return,
        };
        let http2 = tls.get_ref().1.alpn_protocol() == Some(&b"h2"[..]);
        let activity = ConnectionActivity::new(timeouts, !http2);
        // The client certificate is fixed for the connection: verify it once.
        let certificate_user = tls::peer_certificate_chain(tls.get_ref().1)
            .map(|chain| authenticator.peer_certificate(&chain));
        let certificate_user = Arc::new(certificate_user);
        let requests = activity.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let api = api.clone();
            let authenticator = authenticator.clone();
            let certificate_user = certificate_user.clone();
            let auditor = auditor.clone();
            // In flight until the response body is dropped.
            let in_flight = requests.request_started();
            async move {
                let response = serve_one(
                    &api,
                    &authenticator,
                    certificate_user.as_ref().as_ref(),
                    Origin {
                        auditor: auditor.as_ref(),
                        peer: peer.ip(),
                    },
                    request,
                )
                .await;
                Ok::<_, Infallible>(response.map(|body| Holding::body(body, in_flight)))
            }
        });
        let io = TokioIo::new(ActivityIo::new(CoalescingIo::new(tls), activity.clone()));
        let connection = builder.serve_connection_with_upgrades(io, service);
        tokio::pin!(connection);
        let mut shutting_down = false;
        let ended = loop {
            tokio::select! {
                ended = connection.as_mut() => break ended,
                _ = closing.changed(), if !shutting_down => {
                    shutting_down = true;
                    connection.as_mut().graceful_shutdown();
                }
                expiry = activity.expired(), if !shutting_down => match expiry {
                    // Go closes an idle HTTP/1.1 connection; its HTTP/2
                    // server sends a GOAWAY first: hyper's graceful
                    // shutdown does both.
                    Expiry::Idle => {
                        tracing::debug!(%peer, "closing an idle connection");
                        shutting_down = true;
                        connection.as_mut().graceful_shutdown();
                    }
                    Expiry::HeaderRead => {
                        tracing::debug!(%peer, "a request's headers did not arrive in time");
                        return;
                    }
                },
            }
        };
        if let Err(error) = ended {
            tracing::debug!(%peer, %error, "connection ended with an error");
        }
    }
}

/// A response body that holds something until it is dropped: the
/// connection's in-flight mark, a request's in-flight seat.
struct Holding<T> {
    body: HyperBody,
    _held: T,
}

impl<T: Send + Sync + Unpin + 'static> Holding<T> {
    fn body(body: HyperBody, held: T) -> HyperBody {
        Holding { body, _held: held }.boxed()
    }
}

impl<T: Unpin> hyper::body::Body for Holding<T> {
    type Data = Chunk;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Chunk>, std::io::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// Response bodies hand the connection [`Chunk`]s: a list's shared pieces go
/// to the TLS layer without being gathered first.
type HyperBody = http_body_util::combinators::BoxBody<Chunk, std::io::Error>;

fn full(bytes: Bytes) -> HyperBody {
    Full::new(Chunk::One(bytes))
        .map_err(|never: Infallible| match never {})
        .boxed()
}

async fn serve_one(
    api: &Arc<Api>,
    authenticator: &Authenticator,
    certificate: Option<&crate::authn::PeerCertificate>,
    origin: Origin<'_>,
    request: hyper::Request<Incoming>,
) -> hyper::Response<HyperBody> {
    let (mut parts, body) = request.into_parts();
    // kube's `WithAuditInit`, on every request, audited or not.
    let audit_id = crate::audit::audit_id(&parts.headers);
    let received = origin.auditor.map(|_| std::time::SystemTime::now());
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|pq| pq.as_str())
        .unwrap_or("/");
    let mut api_request = ApiRequest::new(Method::parse(parts.method.as_str()), path_and_query);
    // Credentials that fail are refused everywhere, even where anonymous
    // requests pass; no credentials at all are left to `Api::admit`.
    let mut authn_notes = crate::authn::AuthnNotes::default();
    let (user, refused) = match authenticator.authenticate_noting(
        certificate,
        &mut parts.headers,
        &mut authn_notes,
    ) {
        Ok(user) => (Some(user), false),
        Err(crate::authn::AuthnError::Unauthorized) => (None, false),
        Err(error) => {
            // kube's WithAuthentication: "Unable to authenticate the request".
            tracing::debug!(%error, "unable to authenticate the request");
            (None, true)
        }
    };
    api_request.user = user;
    // The legacy token validator's last-used label, written before the
    // request goes on, as kube writes it inside authentication.
    crate::legacy_token_tracking::label_secrets(api, &authn_notes.secret_labels).await;
    let mut audit = match (origin.auditor, received) {
        (Some(auditor), Some(received)) => {
            let start = crate::audit::Start {
                audit_id: &audit_id,
                received,
                request_uri: path_and_query,
                headers: &parts.headers,
                peer: origin.peer,
                refused,
                anonymous_auth: api.anonymous_auth,
            };
            crate::audit::Audit::begin(auditor, &start, &mut api_request)
        }
        _ => None,
    };
    let started = std::time::Instant::now();
    // Unauthenticated and unauthorized requests make no series (kube counts
    // only requests that passed its filters, on its installed routes).
    let mut labels = api
        .registry
        .with(|registry| {
            crate::metrics::RequestLabels::of(
                registry,
                &api_request.endpoint,
                parts
                    .headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|value| value.to_str().ok()),
                api_request.query.get("dryRun").is_some(),
            )
        })
        .filter(|_| api_request.user.is_some());
    // Authenticate and authorize before reading a body: a client that may
    // not make the request cannot make the server buffer megabytes (kube's
    // WithAuthentication and WithAuthorization answer before any handler
    // reads the body).
    // kube's `WithAudit`: a blocking-strict backend that could not store
    // `RequestReceived` fails the request.
    let stored = match audit.as_mut() {
        Some(audit) => audit.received_stored().await,
        None => true,
    };
    let admitted = if !stored {
        audit = None;
        Err(Box::new(crate::audit::store_failed(path_and_query)))
    } else if refused {
        Err(Box::new(ApiResponse::error(&Status::unauthorized())))
    } else {
        // `admit` reads the headers (the Accept of a 403).
        api_request.headers = parts.headers;
        api.admit(&mut api_request).await
    };
    // Held until the response body is sent, as kube's filter holds it until
    // its handler has written the answer.
    let mut seat = None;
    // What the audit event reads of the request once its handler took it.
    let auditing = audit.is_some();
    let view = |request: &ApiRequest| auditing.then(|| audit_view(request));
    let (mut response, audit_request) = match admitted {
        Err(response) => {
            labels = None;
            drain(body).await;
            (*response, view(&api_request))
        }
        Ok(admitted) => {
            seat = admitted.share_seat();
            match read_body(body).await {
                Ok(bytes) => {
                    api_request.body = bytes;
                    let kept = view(&api_request);
                    if let Some(audit) = audit.as_mut() {
                        audit.request_body(&api_request);
                    }
                    (api.handle_admitted(api_request, admitted).await, kept)
                }
                Err(status) => (ApiResponse::error(&status), view(&api_request)),
            }
        }
    };
    if !refused {
        add_authentication_notes(&mut response, authn_notes);
    }
    let stream_end = match (audit, &audit_request) {
        (Some(audit), Some(request)) => audit.finish(request, &mut response),
        _ => None,
    };
    let code = response.status;
    let mut response = into_hyper(response, parts.method == http::Method::HEAD);
    if let Some(seat) = seat {
        response = response.map(|body| Holding::body(body, seat));
    }
    if let Ok(value) = http::HeaderValue::from_str(&audit_id) {
        response
            .headers_mut()
            .insert(crate::audit::AUDIT_ID_HEADER, value);
    }
    let response = match stream_end {
        Some(end) => response.map(|body| crate::audit::AuditedBody::new(body, end).boxed()),
        None => response,
    };
    match labels {
        // Timed until the body's last byte is handed to the connection.
        Some(labels) => response.map(|body| {
            crate::metrics::TimedBody::new(body, api.metrics.clone(), labels, code, started).boxed()
        }),
        None => response,
    }
}

/// The warnings authentication added come first in the response (kube's
/// recorder has them before any handler's); its audit annotations go to
/// the request's event.
fn add_authentication_notes(response: &mut ApiResponse, notes: crate::authn::AuthnNotes) {
    let warnings: Vec<_> = notes
        .warnings
        .iter()
        .filter_map(|text| crate::field_validation::warning_header_value(text))
        .map(|value| (http::header::WARNING, value))
        .collect();
    response.headers.splice(0..0, warnings);
    response.audit_annotations.extend(notes.audit_annotations);
}

/// What the audit event reads of a request after its handler took it: the
/// user (impersonation) and the authorizer's decision.
fn audit_view(request: &ApiRequest) -> ApiRequest {
    let mut view = ApiRequest::new(request.method, "/");
    view.user = request.user.clone();
    view.authorization = request.authorization.clone();
    view
}

/// How much of an oversized body is read and dropped so the client, still
/// writing, gets the 413 instead of a broken pipe (Go's server drains too).
const MAX_DRAIN_BYTES: usize = 64 * 1024 * 1024;

/// The body of a refused request, drained without being kept (so a client
/// still writing gets the answer rather than a broken pipe), up to
/// [`MAX_DRAIN_BYTES`].
async fn drain(body: Incoming) {
    let mut body = body;
    let mut drained = 0usize;
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            drained += data.len();
            if drained > MAX_DRAIN_BYTES {
                break;
            }
        }
    }
}

/// The request body up to the limit; beyond it a 413, after draining the rest.
async fn read_body(body: Incoming) -> Result<Bytes, Status> {
    let mut body = body;
    let mut collected = bytes::BytesMut::new();
    let mut drained = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame
            .map_err(|error| Status::bad_request(format!("reading the request body: {error}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if collected.len() + data.len() <= MAX_REQUEST_BODY_BYTES && drained == 0 {
            collected.extend_from_slice(&data);
        } else {
            drained += data.len();
            if drained > MAX_DRAIN_BYTES {
                break;
            }
        }
    }
    if drained > 0 {
        return Err(Status::request_entity_too_large(MAX_REQUEST_BODY_BYTES));
    }
    Ok(collected.freeze())
}

fn into_hyper(response: ApiResponse, head: bool) -> hyper::Response<HyperBody> {
    let body = match response.body {
        ResponseBody::Full(_) if head => full(Bytes::new()),
        ResponseBody::Full(bytes) => full(bytes),
        ResponseBody::Segments(_) if head => full(Bytes::new()),
        ResponseBody::Segments(segments) => segments.into_body().boxed(),
        ResponseBody::Stream(stream) => {
            stream.map_frame(|frame| frame.map_data(Chunk::One)).boxed()
        }
    };
    let mut out = hyper::Response::new(body);
    *out.status_mut() = http::StatusCode::from_u16(response.status)
        .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    // The header map filled directly, each value taking its string's
    // buffer: no builder, no copy. Appending never panics: a map that is
    // full (tens of thousands of `Warning`s) keeps what it holds.
    let headers = out.headers_mut();
    for (name, value) in response.headers {
        match http::HeaderValue::from_maybe_shared(Bytes::from(value)) {
            Ok(value) => {
                if headers.try_append(name, value).is_err() {
                    tracing::warn!("too many response headers; the rest are left out");
                    break;
                }
            }
            Err(_) => {
                tracing::warn!(header = %name, "a response header's value is not valid in HTTP; left out")
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_keep_their_headers_and_never_panic_on_too_many() {
        let response = ApiResponse::bytes(201, "application/json", Bytes::from_static(b"{}"))
            .with_header(http::header::WARNING, "299 - \"one\"")
            .with_header(http::header::WARNING, "bad\nvalue")
            .with_header(http::header::WARNING, "299 - \"two\"");
        let answer = into_hyper(response, false);
        assert_eq!(answer.status(), 201);
        let warnings: Vec<_> = answer
            .headers()
            .get_all(http::header::WARNING)
            .iter()
            .collect();
        assert_eq!(warnings, ["299 - \"one\"", "299 - \"two\""]);
        // More than a header map holds (a create with tens of thousands
        // of unknown fields under fieldValidation=Warn).
        let many = (0..40_000).fold(
            ApiResponse::bytes(201, "application/json", Bytes::new()),
            |response, n| response.with_header(http::header::WARNING, format!("299 - \"{n}\"")),
        );
        let answer = into_hyper(many, false);
        assert_eq!(answer.status(), 201);
        assert!(answer.headers().len() > 20_000);
    }
}
