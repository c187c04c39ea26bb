//! The request path after TLS and HTTP: authentication check, routing,
//! negotiation, and the verb handlers.

mod apply;
mod body;
mod continue_token;
mod create;
mod delete;
mod deletion;
mod exchange;
mod get;
mod list;
mod list_options;
mod meta_endpoints;
mod panic_recovery;
mod patch;
mod representation;
mod resource;
mod scale;
mod strategy;
mod typed;
mod update;
mod watch;
mod write;

#[cfg(test)]
mod handler_tests;
#[cfg(test)]
mod list_tests;
#[cfg(test)]
mod typed_tests;
#[cfg(test)]
mod watch_tests;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub use continue_token::{ContinueKey, RandomUnavailable};
pub use exchange::{ApiRequest, ApiResponse, ListPayload, Payload, ResponseBody, StreamBody};
use ferrokube_store::Store;
pub use representation::GZIP_THRESHOLD_BYTES;

use crate::object::ObjectCodec;
use crate::openapi::OpenApi;
use crate::registry::{Registry, RESOURCES};
use crate::route::{route, Endpoint};
use crate::status::Status;

pub type ObjectStore = Store<ObjectCodec>;

/// kube-apiserver's `--min-request-timeout` default.
pub const DEFAULT_MIN_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1800);

/// Largest request body kube-apiserver accepts (`MaxRequestBodyBytes`, 3 MiB).
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Everything the handlers share.
pub struct Api {
    pub store: ObjectStore,
    pub registry: Registry,
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
    /// Signs and checks this server's list continue tokens (`continue_token.rs`).
    pub continue_key: ContinueKey,
    /// Service ClusterIP and NodePort allocation (`crate::allocator`).
    pub services: crate::allocator::ServiceAllocator,
    /// Request counts and durations for `/metrics` (`crate::metrics`).
    pub metrics: Arc<crate::metrics::RequestMetrics>,
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
        Arc::new(Api {
            store,
            registry: Registry::new(RESOURCES),
            openapi: OpenApi::new(RESOURCES),
            server_address,
            started: Instant::now(),
            shutting_down: AtomicBool::new(false),
            shutdown: tokio::sync::watch::channel(false).0,
            min_request_timeout,
            continue_key,
            services: Default::default(),
            metrics: crate::metrics::RequestMetrics::new(),
        })
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

    /// Answer one request. Never panics on client input; every failure is a
    /// `Status`, and a panic all the same answers this request with kube's
    /// 500 (`panic_recovery.rs`) instead of taking the connection down.
    pub async fn handle(self: &Arc<Self>, request: ApiRequest) -> ApiResponse {
        let method = request.method;
        let path = request.path.clone();
        match panic_recovery::CatchUnwind::new(self.handle_unguarded(request)).await {
            Ok(response) => response,
            Err(message) => panic_recovery::panicked(method, &path, &message),
        }
    }

    async fn handle_unguarded(self: &Arc<Self>, request: ApiRequest) -> ApiResponse {
        let endpoint = route(request.method, &request.path, &request.query);
        if let Err(status) = check_timeout(&request, &endpoint) {
            return status.into();
        }
        let public = matches!(endpoint, Endpoint::Health(..) | Endpoint::Version);
        if request.user.is_none() && !public {
            return Status::unauthorized().into();
        }
        let result = match endpoint {
            Endpoint::Resource(path) => resource::handle(self, &request, path).await,
            other => meta_endpoints::handle(self, &request, other),
        };
        result.unwrap_or_else(ApiResponse::from)
    }
}

/// Requests kube-apiserver serves without a deadline
/// (`BasicLongRunningRequestCheck` with its verbs and subresources).
fn is_long_running(endpoint: &Endpoint) -> bool {
    let Endpoint::Resource(path) = endpoint else {
        return false;
    };
    path.verb == crate::route::Verb::Watch
        || matches!(
            path.subresource.as_deref(),
            Some("attach" | "exec" | "proxy" | "log" | "portforward")
        )
}

/// `WithRequestDeadline` (`endpoints/filters/request_deadline.go`): the
/// `timeout` query parameter of a request that is not long-running must be
/// a Go duration, checked before authentication.
fn check_timeout(request: &ApiRequest, endpoint: &Endpoint) -> Result<(), Status> {
    let Some(value) = request
        .query
        .get("timeout")
        .filter(|value| !value.is_empty())
    else {
        return Ok(());
    };
    if is_long_running(endpoint) {
        return Ok(());
    }
    crate::protobuf::wellknown::parse_go_duration(value)
        .map(|_| ())
        .map_err(|error| {
            Status::bad_request(format!(
                "invalid timeout specified in the request URL - {error}"
            ))
        })
}
