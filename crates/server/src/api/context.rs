//! The state every handler shares: the store, the registry, the OpenAPI
//! documents, the continue-token key, allocators and metrics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::continue_token::ContinueKey;
use crate::authn::{Authenticator, TokenFile};
use crate::object::ObjectStore;
use crate::openapi::OpenApi;
use crate::registry::live::CATCH_UP_TIMEOUT;
use crate::registry::{builtin_resources, LiveRegistry, Registry};
use crate::serviceaccount::{ServiceAccountAuthenticator, ServiceAccountTokens};

/// kube-apiserver's `--min-request-timeout` default.
pub const DEFAULT_MIN_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1800);

/// kube-apiserver's `--request-timeout` default (`1m0s`).
pub const DEFAULT_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Largest request body kube-apiserver accepts (`MaxRequestBodyBytes`, 3 MiB).
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Everything the handlers share.
pub struct Api {
    pub store: ObjectStore,
    /// The served resources: built-in kinds and established CRDs, kept
    /// current by `crd::keep_registry_current` (spawned with the `Api`).
    pub registry: Arc<LiveRegistry>,
    pub openapi: OpenApi,
    /// `host:port` clients reach us at, for `/api`'s serverAddressByClientCIDRs.
    pub server_address: String,
    pub started: Instant,
    shutting_down: AtomicBool,
    /// Tells long-running requests (watches) to end when the server stops.
    shutdown: tokio::sync::watch::Sender<bool>,
    /// `--min-request-timeout`: a watch without `timeoutSeconds` ends after a
    /// random time in [this, 2 × this), as kube-apiserver randomises it.
    pub min_request_timeout: std::time::Duration,
    /// `--request-timeout`: the longest a request that is not long-running
    /// may take (`api/deadline.rs`).
    pub request_timeout: std::time::Duration,
    /// Signs and checks this server's list continue tokens (`continue_token.rs`).
    pub continue_key: ContinueKey,
    /// Service ClusterIP and NodePort allocation (`crate::allocator`).
    pub services: crate::allocator::ServiceAllocator,
    /// Request counts and durations for `/metrics` (`crate::metrics`).
    pub metrics: Arc<crate::metrics::RequestMetrics>,
    /// Service-account token keys, issuers and audiences (TokenRequest,
    /// the legacy token controller, OIDC discovery).
    pub service_accounts: Arc<ServiceAccountTokens>,
    /// The request authenticator (`server.rs` runs it; TokenReview asks it).
    pub authenticator: Arc<Authenticator>,
    /// `--authorization-mode`'s chain (`crate::authz`), asked by every request.
    pub authorizer: crate::authz::Authorizer,
    /// `--anonymous-auth` ([`ApiConfig::anonymous_auth`]).
    pub anonymous_auth: bool,
    /// Work that runs once the server is up, reported by the health checks
    /// (`crate::post_start_hooks`).
    pub post_start_hooks: crate::post_start_hooks::PostStartHooks,
    /// The admission chain of every write (`crate::admission`).
    pub admission: crate::admission::Admission,
    /// `--max-requests-inflight` and `--max-mutating-requests-inflight`
    /// (`max_in_flight.rs`), taken in [`Api::admit`] when API Priority and
    /// Fairness is off.
    pub max_in_flight: super::max_in_flight::MaxInFlight,
    /// API Priority and Fairness (`crate::flowcontrol`), `None` with
    /// `--enable-priority-and-fairness=false`.
    pub flow_control: Option<Arc<crate::flowcontrol::FlowControl>>,
}

/// How requests are authenticated: the service-account token settings,
/// the optional `--token-auth-file`, the client CA bundle and front-proxy
/// (`--requestheader-*`) authentication.
pub struct Authentication {
    pub service_accounts: Arc<ServiceAccountTokens>,
    pub token_file: Option<TokenFile>,
    /// `--client-ca-file` and ferrokube's CA (`None`: no certificate authenticates).
    pub client_ca: Option<Arc<crate::authn::CaBundle>>,
    pub request_header: Option<crate::authn::RequestHeaderConfig>,
}

impl Authentication {
    /// A fresh signing key and no token file (tests, `Api::new`).
    pub fn ephemeral() -> Authentication {
        let tokens = match ServiceAccountTokens::ephemeral() {
            Ok(tokens) => tokens,
            // ring cannot fail to make a P-256 key unless the system RNG is gone.
            Err(error) => panic!("making a service-account signing key: {error}"),
        };
        Authentication {
            service_accounts: Arc::new(tokens),
            token_file: None,
            client_ca: None,
            request_header: None,
        }
    }
}

/// How an [`Api`] is set up beyond its store and identity.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// `--min-request-timeout`.
    pub min_request_timeout: std::time::Duration,
    /// `--request-timeout`.
    pub request_timeout: std::time::Duration,
    /// `--authorization-mode`, in order.
    pub authorization_modes: Vec<crate::authz::Mode>,
    /// `--anonymous-auth`: requests without credentials are
    /// `system:anonymous` in `system:unauthenticated`, left to the
    /// authorizer; without it they are 401.
    pub anonymous_auth: bool,
    /// `--enable-admission-plugins` / `--disable-admission-plugins`.
    pub admission_plugins: crate::admission::Plugins,
    /// `--max-requests-inflight` (0: no limit).
    pub max_requests_inflight: usize,
    /// `--max-mutating-requests-inflight` (0: no limit).
    pub max_mutating_requests_inflight: usize,
    /// `--enable-priority-and-fairness`: APF's seats (the two limits above,
    /// added) replace the max-in-flight limits.
    pub enable_priority_and_fairness: bool,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            min_request_timeout: DEFAULT_MIN_REQUEST_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            authorization_modes: crate::authz::DEFAULT_MODES.to_vec(),
            anonymous_auth: true,
            admission_plugins: crate::admission::Plugins::default(),
            max_requests_inflight: super::max_in_flight::DEFAULT_MAX_REQUESTS_INFLIGHT,
            max_mutating_requests_inflight:
                super::max_in_flight::DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
            enable_priority_and_fairness: true,
        }
    }
}

impl Api {
    /// `continue_key` signs continue tokens (`server.rs`, `continue_key`, keeps
    /// it across restarts and replicas; tests use [`ContinueKey::random`]).
    pub fn new(store: ObjectStore, server_address: String, continue_key: ContinueKey) -> Arc<Self> {
        Self::with_min_request_timeout(
            store,
            server_address,
            continue_key,
            DEFAULT_MIN_REQUEST_TIMEOUT,
        )
    }

    pub fn with_min_request_timeout(
        store: ObjectStore,
        server_address: String,
        continue_key: ContinueKey,
        min_request_timeout: std::time::Duration,
    ) -> Arc<Self> {
        let config = ApiConfig {
            min_request_timeout,
            ..ApiConfig::default()
        };
        Self::with_config(
            store,
            server_address,
            continue_key,
            config,
            Authentication::ephemeral(),
        )
    }

    /// The server's constructor: kube's authenticator chain (front proxy,
    /// client certificates, the token file, then service-account tokens, as
    /// `authenticator/config.go` orders them)
    /// and `--authorization-mode`'s authorizer.
    pub fn with_config(
        store: ObjectStore,
        server_address: String,
        continue_key: ContinueKey,
        config: ApiConfig,
        authentication: Authentication,
    ) -> Arc<Self> {
        let service_accounts = authentication.service_accounts;
        let mut authenticator = Authenticator::new(false)
            .with_api_audiences(service_accounts.api_audiences().to_vec())
            .with_request_header(authentication.request_header);
        if let Some(client_ca) = authentication.client_ca {
            authenticator = authenticator.with_client_ca(client_ca);
        }
        if let Some(token_file) = authentication.token_file {
            authenticator = authenticator.with_token_authenticator(Arc::new(token_file));
        }
        authenticator = authenticator.with_token_authenticator(Arc::new(
            ServiceAccountAuthenticator::new(service_accounts.clone(), store.clone()),
        ));
        let registry = Arc::new(LiveRegistry::new(Registry::new(builtin_resources())));
        let shutdown = tokio::sync::watch::channel(false).0;
        let authorizer = crate::authz::Authorizer::new(
            &config.authorization_modes,
            &store,
            shutdown.subscribe(),
        );
        let min_request_timeout = config.min_request_timeout;
        // kube's `BuildPriorityAndFairness`: the server's concurrency limit
        // is the sum of the two max-in-flight limits.
        let flow_control = config.enable_priority_and_fairness.then(|| {
            Arc::new(crate::flowcontrol::FlowControl::new(
                config.max_requests_inflight + config.max_mutating_requests_inflight,
                config.request_timeout,
            ))
        });
        let admission = crate::admission::Admission::new(store.clone(), config.admission_plugins)
            .with_registry(registry.clone())
            .with_authorizer(authorizer.clone());
        let api = Arc::new(Api {
            store,
            registry: registry.clone(),
            openapi: OpenApi::new(builtin_resources()),
            server_address,
            started: Instant::now(),
            shutting_down: AtomicBool::new(false),
            shutdown,
            min_request_timeout,
            request_timeout: config.request_timeout,
            continue_key,
            services: Default::default(),
            metrics: crate::metrics::RequestMetrics::new(),
            service_accounts,
            authenticator: Arc::new(authenticator),
            authorizer,
            anonymous_auth: config.anonymous_auth,
            post_start_hooks: Default::default(),
            admission,
            max_in_flight: super::max_in_flight::MaxInFlight::new(
                config.max_requests_inflight,
                config.max_mutating_requests_inflight,
            ),
            flow_control,
        });
        // Outside a runtime (a few synchronous tests) only built-in kinds are served.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(crate::crd::keep_registry_current(
                api.store.clone(),
                registry,
                api.shutdown_signal(),
            ));
        }
        api
    }

    /// The registry once it reflects every CRD the store holds now (for
    /// answers that would otherwise say "not found"). "Now" is a consistent
    /// read, so on etcd a CRD established through another replica counts.
    pub async fn registry_now(&self) -> Arc<Registry> {
        let revision = match self.store.consistent_snapshot(CATCH_UP_TIMEOUT).await {
            Ok(snapshot) => snapshot.revision,
            Err(_) => *self.store.subscribe().borrow(),
        };
        self.registry.caught_up(revision).await
    }

    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::Release);
        self.shutdown.send_replace(true);
    }

    /// Resolves once the server begins to shut down.
    pub fn shutdown_signal(&self) -> tokio::sync::watch::Receiver<bool> {
        self.shutdown.subscribe()
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }
}
