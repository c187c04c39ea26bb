//! The request path after TLS and HTTP: authentication check, dispatch
//! of the routed request, negotiation, the verb handlers and the write
//! pipeline (`write/`). Modules import only modules of lower layers: the
//! groups below, bottom first (`layers.rs` holds the same table and checks
//! every import against it).

// Layer 0: request values and shared types, importing nothing of `api`.
mod continue_token;
mod exchange;
mod strategy;
mod target;
// Layer 1: shared state, typed options, selections, typed objects.
mod context;
mod options;
mod patch_type;
mod selection;
mod typed;
// Layer 2: reading and the response side.
mod conversion;
mod list_options;
mod representation;
// Layer 3: deletion rules the handlers and the write pipeline share.
mod deletion;
// Layer 4: the write pipeline.
mod write;
// Layer 5: handlers, one per verb (or subresource), each only choosing a
// pipeline.
mod apply;
mod create;
mod delete;
mod get;
mod list;
mod meta_endpoints;
mod patch;
mod reviews;
mod scale;
mod token_request;
mod update;
mod watch;
// Layer 6: routing a resource request to its handler, and panic recovery.
mod dispatch;
mod panic_recovery;

#[cfg(test)]
mod handler_tests;
#[cfg(test)]
mod layers;
#[cfg(test)]
mod list_tests;
#[cfg(test)]
mod token_tests;
#[cfg(test)]
mod typed_tests;
#[cfg(test)]
mod watch_tests;

use std::sync::Arc;

pub use context::{Api, Authentication, DEFAULT_MIN_REQUEST_TIMEOUT, MAX_REQUEST_BODY_BYTES};
pub use continue_token::{ContinueKey, RandomUnavailable};
pub use exchange::{ApiRequest, ApiResponse, ListPayload, Payload, ResponseBody, StreamBody};
pub use representation::GZIP_THRESHOLD_BYTES;

use crate::route::Endpoint;
use crate::status::Status;

impl Api {
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
        let endpoint = &request.endpoint;
        if let Err(status) = check_timeout(&request, endpoint) {
            return status.into();
        }
        if request.user.is_none() && !endpoint.is_public() {
            return Status::unauthorized().into();
        }
        let result = match endpoint {
            Endpoint::Resource(path) => dispatch::handle(self, &request, path).await,
            other => meta_endpoints::handle(self, &request, other).await,
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
    crate::go::time::parse_go_duration(value)
        .map(|_| ())
        .map_err(|error| {
            Status::bad_request(format!(
                "invalid timeout specified in the request URL - {error}"
            ))
        })
}
