//! The request path after TLS and HTTP: authentication check, dispatch
//! of the routed request, negotiation, the verb handlers and the write
//! pipeline (`write/`). Modules import only modules of lower layers: the
//! groups below, bottom first (`layers.rs` holds the same table and checks
//! every import against it).

// Layer 0: request values and shared types, importing nothing of `api`.
mod continue_token;
mod csr_strategy;
mod exchange;
pub mod max_in_flight;
mod strategy;
mod target;
// Layer 1: shared state, typed options, selections, typed objects.
mod context;
mod deadline;
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
mod binding;
mod component_status;
mod create;
mod delete;
mod get;
mod kubelet_proxy;
mod list;
mod meta_endpoints;
mod patch;
mod proxy;
mod reviews;
mod scale;
mod token_request;
mod update;
mod watch;
// Layer 6: handlers built on other handlers (eviction deletes as DELETE does).
mod eviction;
// (the connect subresources admit, then hand over to kubelet_proxy or proxy).
mod connect;
// Layer 7: routing a resource request to its handler, and panic recovery.
mod dispatch;
mod panic_recovery;

#[cfg(test)]
mod handler_tests;
#[cfg(test)]
mod layers;
#[cfg(test)]
mod legacy_token_tests;
#[cfg(test)]
mod list_tests;
#[cfg(test)]
mod token_tests;
#[cfg(test)]
mod typed_tests;
#[cfg(test)]
mod watch_tests;

use std::sync::Arc;

pub use context::{
    Api, ApiConfig, Authentication, DEFAULT_MIN_REQUEST_TIMEOUT, DEFAULT_REQUEST_TIMEOUT,
    MAX_REQUEST_BODY_BYTES,
};
pub use continue_token::{
    decode as decode_continue_token, encode_start as encode_continue_token, ContinueKey,
    RandomUnavailable,
};
pub use deadline::is_long_running;
pub use deletion::DeleteOptions;
pub use exchange::{
    ApiRequest, ApiResponse, AuditCapture, AuditedResponse, AuthorizationDecision, ListPayload,
    Payload, ResponseBody, StreamBody,
};
pub use representation::GZIP_THRESHOLD_BYTES;

use crate::route::Endpoint;
use crate::status::Status;

/// Proof that a request passed [`Api::admit`]: only `admit` makes one, so
/// a request cannot reach its handler unauthorized.
#[derive(Debug)]
pub struct Admitted {
    /// The seat the request holds while it is served: APF's, or with APF
    /// off a `--max-requests-inflight` / `--max-mutating-requests-inflight`
    /// one (`max_in_flight.rs`). Shared: the response body may hold it
    /// (`server.rs`), and a read that outlives its deadline keeps it until
    /// its handler is done ([`Api::handle_admitted`]).
    seat: Option<Arc<Seat>>,
    /// APF's classification, for the `X-Kubernetes-PF-*` response headers.
    classification: Option<crate::flowcontrol::Classification>,
    /// A watch's APF seat, held while its handler sets the watch up and
    /// freed when [`Api::handle_admitted`] returns, not kept for the stream
    /// (kube frees it once the watch is initialized).
    initializing: Option<Seat>,
}

/// A seat held while a request is served; dropping it frees the seat.
#[derive(Debug)]
pub enum Seat {
    MaxInFlight(max_in_flight::InFlightSeat),
    PriorityAndFairness(crate::flowcontrol::Seat),
}

impl Admitted {
    /// The request's seat, for a caller that keeps it until the response
    /// body is sent (kube's filter holds it until `ServeHTTP` returns,
    /// after the body is written); it is free once that share and
    /// [`Api::handle_admitted`]'s are dropped.
    pub fn share_seat(&self) -> Option<Arc<Seat>> {
        self.seat.clone()
    }
}

/// kube's `tooManyRequests` (`server/filters/maxinflight.go`):
/// `Retry-After` and Go's `http.Error` (plain text with a newline,
/// `X-Content-Type-Options: nosniff`).
fn too_many_requests(retry_after: &str) -> ApiResponse {
    ApiResponse::bytes(
        429,
        "text/plain; charset=utf-8",
        bytes::Bytes::from_static(max_in_flight::TooManyRequests::BODY.as_bytes()),
    )
    .with_header(http::header::X_CONTENT_TYPE_OPTIONS, "nosniff")
    .with_header(http::header::RETRY_AFTER, retry_after)
}

/// `setResponseHeaders` (`priority-and-fairness.go`): the UIDs of the
/// FlowSchema and PriorityLevelConfiguration that classified the request.
fn with_flow_control_headers(
    response: ApiResponse,
    classification: crate::flowcontrol::Classification,
) -> ApiResponse {
    // Built once: `from_static` checks the name every time it runs.
    const FLOW_SCHEMA_UID: http::HeaderName =
        http::HeaderName::from_static(crate::flowcontrol::FLOW_SCHEMA_UID_HEADER);
    const PRIORITY_LEVEL_UID: http::HeaderName =
        http::HeaderName::from_static(crate::flowcontrol::PRIORITY_LEVEL_UID_HEADER);
    let (flow_schema_uid, priority_level_uid) = classification.into_uids();
    response
        .with_header(FLOW_SCHEMA_UID, flow_schema_uid)
        .with_header(PRIORITY_LEVEL_UID, priority_level_uid)
}

impl Api {
    /// Answer one request. Never panics on client input; every failure is a
    /// `Status`, and a panic all the same answers this request with kube's
    /// 500 (`panic_recovery.rs`) instead of taking the connection down.
    pub async fn handle(self: &Arc<Self>, request: ApiRequest) -> ApiResponse {
        let mut request = request;
        match self.admit(&mut request).await {
            Ok(admitted) => self.handle_admitted(request, admitted).await,
            Err(refused) => *refused,
        }
    }

    /// What kube's filters do before any handler reads the request body:
    /// the `timeout` check (`WithRequestDeadline`), the 401 of a request
    /// without credentials (`WithAuthentication`) and authorization
    /// (`WithAuthorization`; dry-run requests are authorized as any other),
    /// with impersonation (`WithImpersonation`) between the last two: the
    /// request's user becomes the impersonated one and the impersonation
    /// headers are removed; then API Priority and Fairness (or the
    /// max-in-flight limits), which may wait for a seat. `server.rs` calls
    /// it before reading the body.
    pub async fn admit(&self, request: &mut ApiRequest) -> Result<Admitted, Box<ApiResponse>> {
        if let Err(status) = deadline::check_timeout(request) {
            return Err(Box::new(status.into()));
        }
        // `WithAuthentication` with kube's anonymous authenticator last in
        // the union: no credentials make `system:anonymous`, whom the
        // authorizer judges like anyone (the bootstrap policy lets
        // `system:unauthenticated` reach health checks and `/version`).
        if request.user.is_none() {
            if !self.anonymous_auth {
                return Err(Box::new(Status::unauthorized().into()));
            }
            request.user = Some(crate::authn::UserInfo::anonymous());
        }
        if crate::authz::impersonation::has_impersonation_headers(&request.headers) {
            let anonymous = crate::authn::UserInfo::anonymous();
            let requestor = request.user.as_ref().unwrap_or(&anonymous);
            match crate::authz::impersonation::impersonate(
                &self.authorizer,
                requestor,
                &request.headers,
            ) {
                Ok(Some(impersonated)) => request.user = Some(impersonated),
                Ok(None) => {}
                Err(status) => {
                    return Err(Box::new(representation::represent_error(&status, request)))
                }
            }
            crate::authz::impersonation::remove_impersonation_headers(&mut request.headers);
        }
        let endpoint = &request.endpoint;
        let Some(user) = &request.user else {
            return Err(Box::new(Status::unauthorized().into()));
        };
        let attributes = crate::authz::Attributes::of_request(
            user,
            request.method,
            &request.path,
            &request.query,
            endpoint,
        );
        // `WithPriorityAndFairness` (or `WithMaxInFlightLimit`) runs after
        // impersonation and before authorization: a request that will be
        // forbidden takes a seat too.
        let long_running = deadline::is_long_running(endpoint);
        let mut initializing = None;
        let (seat, classification) = match &self.flow_control {
            // Long-running requests other than watches skip APF.
            Some(_) if long_running && attributes.verb != "watch" => (None, None),
            Some(flow_control) => {
                let deadline = deadline::deadline(request, self.request_timeout);
                let wait_until = flow_control.wait_until(request.received, deadline);
                match flow_control.admit(&attributes, wait_until).await {
                    None => (None, None),
                    Some(crate::flowcontrol::Decision::Exempt(classification)) => {
                        (None, Some(classification))
                    }
                    // A watch holds its seat only while it is set up.
                    Some(crate::flowcontrol::Decision::Admitted(classification, seat))
                        if long_running =>
                    {
                        initializing = Some(Seat::PriorityAndFairness(seat));
                        (None, Some(classification))
                    }
                    Some(crate::flowcontrol::Decision::Admitted(classification, seat)) => (
                        Some(Arc::new(Seat::PriorityAndFairness(seat))),
                        Some(classification),
                    ),
                    Some(crate::flowcontrol::Decision::Rejected(classification, retry_after)) => {
                        let refused = too_many_requests(&retry_after.to_string());
                        return Err(Box::new(with_flow_control_headers(refused, classification)));
                    }
                }
            }
            None => {
                let seat = self
                    .max_in_flight
                    .admit(attributes.verb, long_running, &user.groups)
                    .map_err(|max_in_flight::TooManyRequests| {
                        Box::new(too_many_requests(
                            max_in_flight::TooManyRequests::RETRY_AFTER,
                        ))
                    })?;
                (seat.map(|seat| Arc::new(Seat::MaxInFlight(seat))), None)
            }
        };
        let audited = request.audit != exchange::AuditCapture::Off;
        // The allow reason ("RBAC: allowed by …") is written only for the
        // audit log's `authorization.k8s.io/reason`.
        let decision = if audited {
            self.authorizer.authorize(&attributes)
        } else {
            self.authorizer.authorize_request(&attributes)
        };
        let allowed = decision.allowed();
        let status = (!allowed).then(|| crate::authz::forbidden(&attributes, &decision.reason));
        if audited {
            request.authorization = Some(exchange::AuthorizationDecision {
                allowed,
                reason: decision.reason,
            });
        }
        match status {
            None => Ok(Admitted {
                seat,
                classification,
                initializing,
            }),
            Some(status) => {
                let forbidden = representation::represent_error(&status, request);
                Err(Box::new(match classification {
                    Some(classification) => with_flow_control_headers(forbidden, classification),
                    None => forbidden,
                }))
            }
        }
    }

    /// Answer a request [`admit`](Self::admit) let through, within its
    /// deadline (`deadline.rs`): past it the answer is kube's 504 and the
    /// handler finishes in the background, as kube's timeout filter leaves
    /// its handler goroutine running (`timeout.go`, "post-timeout activity").
    ///
    /// The seat of a request that times out (`timeout.go` runs the inner
    /// handler, APF's `execute` included, in a goroutine that outlives the
    /// 504): a write's handler returns at the deadline (`handlers/rest.go`
    /// `finishRequest` selects on the context and leaves the storage call
    /// to its own goroutine), so its seat is free once the 504 is sent; a
    /// GET or LIST handler does not look at its context (the watch cache's
    /// `waitUntilFreshAndBlock` waits its 3 s regardless), so its seat stays
    /// taken until the handler is done.
    pub async fn handle_admitted(
        self: &Arc<Self>,
        request: ApiRequest,
        mut admitted: Admitted,
    ) -> ApiResponse {
        let outliving_seat = match request.method {
            crate::route::Method::Get | crate::route::Method::Head => admitted.seat.take(),
            _ => None,
        };
        let response = self.handle_within_deadline(request, outliving_seat).await;
        // The watch is set up: its seat is free again.
        drop(admitted.initializing);
        // This share of the seat is dropped when this returns.
        match admitted.classification.take() {
            Some(classification) => with_flow_control_headers(response, classification),
            None => response,
        }
    }

    /// `seat`: a share of the request's seat that a handler still running
    /// at the deadline keeps until it is done.
    async fn handle_within_deadline(
        self: &Arc<Self>,
        request: ApiRequest,
        seat: Option<Arc<Seat>>,
    ) -> ApiResponse {
        let Some(deadline) = deadline::deadline(&request, self.request_timeout) else {
            return self.handle_guarded(request).await;
        };
        // kube's filter selects on the context first when the deadline has
        // passed already (`?timeout=1ns`): the handler never answers.
        if std::time::Instant::now() >= deadline {
            return deadline::timeout_response();
        }
        let api = self.clone();
        let mut handler = Box::pin(async move { api.handle_guarded(request).await });
        tokio::select! {
            biased;
            response = &mut handler => response,
            () = tokio::time::sleep_until(deadline.into()) => {
                tokio::spawn(async move {
                    let response = handler.await;
                    drop(seat);
                    tracing::debug!(status = response.status, "post-timeout activity finished");
                });
                deadline::timeout_response()
            }
        }
    }

    async fn handle_guarded(self: &Arc<Self>, request: ApiRequest) -> ApiResponse {
        let method = request.method;
        let path = request.path.clone();
        match panic_recovery::CatchUnwind::new(self.handle_unguarded(request)).await {
            Ok(response) => response,
            Err(message) => panic_recovery::panicked(method, &path, &message),
        }
    }

    async fn handle_unguarded(self: &Arc<Self>, request: ApiRequest) -> ApiResponse {
        let endpoint = &request.endpoint;
        let result = match endpoint {
            Endpoint::Resource(path) => dispatch::handle(self, &request, path).await,
            other => meta_endpoints::handle(self, &request, other).await,
        };
        result.unwrap_or_else(ApiResponse::from)
    }
}
