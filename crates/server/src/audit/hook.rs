//! Where auditing meets the request path (`server.rs` `serve_one`): the
//! `Audit-Id` of every request (`endpoints/filters/audit_init.go`
//! `WithAuditInit`: the client's `Audit-ID` header, else a new UUID,
//! echoed in the response), the event begun after authentication
//! (`WithAudit` sits right after `WithAuthentication`), and completed from
//! the response, a long-running one when its body ends.

use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::SystemTime;

use http_body::{Body, Frame, SizeHint};
use serde_json::Value;

use crate::api::{ApiRequest, ApiResponse, AuditCapture, Payload, ResponseBody};
use crate::authn::UserInfo;
use crate::authz::Attributes;

use super::policy::Level;
use super::request::{Arrival, RequestAudit};
use super::Auditor;

/// The request header a client may set and the response header kube echoes.
pub const AUDIT_ID_HEADER: &str = "audit-id";

/// The request's audit ID: the client's `Audit-ID` header as it is, else a
/// new UUID.
pub fn audit_id(headers: &http::HeaderMap) -> String {
    headers
        .get(AUDIT_ID_HEADER)
        .and_then(|value| value.to_str().ok())
        .filter(|value| !value.is_empty())
        .map_or_else(|| crate::uid::new_v4().to_string(), str::to_string)
}

/// What `serve_one` knows when it starts auditing a request.
pub struct Start<'a> {
    pub audit_id: &'a str,
    pub received: SystemTime,
    pub request_uri: &'a str,
    pub headers: &'a http::HeaderMap,
    pub peer: IpAddr,
    /// Credentials were given and refused.
    pub refused: bool,
    /// `--anonymous-auth`.
    pub anonymous_auth: bool,
}

/// One request's audit, from authentication to the response.
pub struct Audit {
    event: RequestAudit,
    /// The user before impersonation, to see whether `admit` replaced it.
    authenticated: Option<UserInfo>,
    failed_authentication: bool,
    /// Whether blocking-strict backends stored `RequestReceived`.
    stored: Option<super::Stored>,
}

impl Audit {
    /// Evaluates the policy for `request` (user set by authentication, not
    /// yet admitted) and writes `RequestReceived`; `None` when the policy
    /// says `None`. Sets what the handlers must keep for the log.
    pub fn begin(
        auditor: &Arc<Auditor>,
        start: &Start<'_>,
        request: &mut ApiRequest,
    ) -> Option<Audit> {
        let anonymous = UserInfo::anonymous();
        let user = match &request.user {
            Some(user) => Some(user),
            None if !start.refused && start.anonymous_auth => Some(&anonymous),
            None => None,
        };
        let placeholder = UserInfo::default();
        let attributes = Attributes::of_request(
            user.unwrap_or(&placeholder),
            request.method,
            &request.path,
            &request.query,
            &request.endpoint,
        );
        let arrival = Arrival {
            audit_id: start.audit_id,
            received: start.received,
            request_uri: start.request_uri,
            headers: start.headers,
            peer: start.peer,
            long_running: crate::api::is_long_running(&request.endpoint),
        };
        let (event, stored) = match user {
            Some(user) => RequestAudit::begin(auditor, &arrival, Some(user), &attributes)?,
            None => (
                RequestAudit::begin_unauthenticated(auditor, &arrival, &attributes)?,
                None,
            ),
        };
        request.audit = if event.level() >= Level::RequestResponse {
            AuditCapture::Object
        } else {
            AuditCapture::Status
        };
        Some(Audit {
            event,
            authenticated: request.user.clone(),
            failed_authentication: user.is_none(),
            stored,
        })
    }

    /// `WithAudit`: false when a blocking-strict backend could not store the
    /// `RequestReceived` event; the request is then refused
    /// ([`store_failed`]) and audited no further.
    pub async fn received_stored(&mut self) -> bool {
        match self.stored.take() {
            Some(stored) => stored.wait().await,
            None => true,
        }
    }

    /// The body once read.
    pub fn request_body(&mut self, request: &ApiRequest) {
        self.event
            .request_body(request.header("content-type"), &request.body);
    }

    /// Records the response: `ResponseComplete` (or `Panic`) now, or for a
    /// long-running stream `ResponseStarted` now and `ResponseComplete`
    /// when its body ends (the response's body is wrapped for that).
    pub fn finish(mut self, request: &ApiRequest, response: &mut ApiResponse) -> Option<StreamEnd> {
        let code = response.status;
        let audited = response.audited.take();
        let payload_status = match &response.payload {
            Some(Payload::Value(value)) if is_status(value) => Some(value.clone()),
            _ => None,
        };
        let (status, object, panic) = match audited {
            Some(audited) => {
                let audited = *audited;
                (
                    audited.status.or(payload_status),
                    audited.object,
                    audited.panic,
                )
            }
            None => (payload_status, None, None),
        };
        if self.failed_authentication {
            self.event.unauthorized(code, status.as_ref());
            return None;
        }
        for (key, value) in &response.audit_annotations {
            self.event.annotate(key, value);
        }
        if let Some(decision) = &request.authorization {
            let verdict = if decision.allowed { "allow" } else { "forbid" };
            self.event
                .annotate("authorization.k8s.io/decision", verdict);
            self.event
                .annotate("authorization.k8s.io/reason", &decision.reason);
        }
        if request.user.is_some() && request.user != self.authenticated {
            if let Some(user) = &request.user {
                self.event.impersonated(user);
            }
        }
        if let Some(message) = panic {
            self.event.panicked(&message);
            return None;
        }
        let streaming = matches!(response.body, ResponseBody::Stream(_));
        if streaming && self.event.is_long_running() {
            self.event.response_started(code);
            return Some(StreamEnd {
                event: Some(self.event),
            });
        }
        self.event.complete(code, status.as_ref(), object);
        None
    }
}

/// kube's answer when `RequestReceived` could not be stored
/// (`responsewriters.InternalError`: Go's `http.Error` of
/// `Internal Server Error: %q: failed to store audit event`, `&<>` escaped).
pub fn store_failed(request_uri: &str) -> ApiResponse {
    let text = format!(
        "Internal Server Error: {}: failed to store audit event",
        crate::go::strconv::quote(request_uri)
    )
    .replace('&', "&amp;")
    .replace('<', "&lt;")
    .replace('>', "&gt;");
    ApiResponse::bytes(
        500,
        "text/plain; charset=utf-8",
        bytes::Bytes::from(format!("{text}\n")),
    )
    .with_header(http::header::X_CONTENT_TYPE_OPTIONS, "nosniff")
}

fn is_status(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str) == Some("Status")
}

/// The `ResponseComplete` of a long-running response, written when its
/// body ends or is dropped (the client went away).
pub struct StreamEnd {
    event: Option<RequestAudit>,
}

impl Drop for StreamEnd {
    fn drop(&mut self) {
        if let Some(event) = self.event.take() {
            event.finish_stream();
        }
    }
}

/// A response body that writes the request's `ResponseComplete` when it
/// is dropped.
pub struct AuditedBody<B> {
    inner: B,
    _end: StreamEnd,
}

impl<B> AuditedBody<B> {
    pub fn new(inner: B, end: StreamEnd) -> Self {
        AuditedBody { inner, _end: end }
    }
}

impl<B: Body + Unpin> Body for AuditedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
