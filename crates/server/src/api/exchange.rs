//! The request and response values handlers work on: IO-free, so handlers
//! are tested without sockets.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use serde_json::Value;

use crate::authn::UserInfo;
use crate::negotiate::Representation;
use crate::object::StoredObject;
use crate::query::Query;
use crate::route::{route, Endpoint, Method};
use crate::status::Status;

/// A request with its body already read (bounded by the body limit).
#[derive(Debug, Clone)]
pub struct ApiRequest {
    pub method: Method,
    pub path: String,
    pub query: Query,
    /// What the method, path and query address, routed once when the
    /// request is built; metrics, authentication and dispatch all read it.
    pub endpoint: Endpoint,
    pub headers: http::HeaderMap,
    pub body: Bytes,
    /// The authenticated user; `None` for anonymous requests.
    pub user: Option<UserInfo>,
    /// When the request was received: its deadline counts from here
    /// (kube's `WithRequestReceivedTimestamp`).
    pub received: std::time::Instant,
    /// What the audit log needs of the response (`Off` without auditing:
    /// no work at all).
    pub audit: AuditCapture,
    /// The authorizer's decision, kept for the audit annotations when the
    /// request is audited.
    pub authorization: Option<AuthorizationDecision>,
}

/// How much of a response the audit log records (`crate::audit`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AuditCapture {
    #[default]
    Off,
    /// A failure's `Status` (levels `Metadata` and `Request`).
    Status,
    /// The response object too (`RequestResponse`).
    Object,
}

/// The authorizer's verdict on a request, for kube's
/// `authorization.k8s.io/decision` and `authorization.k8s.io/reason`
/// audit annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationDecision {
    pub allowed: bool,
    pub reason: String,
}

/// What the audit log records of a response, captured while it is encoded.
#[derive(Debug, Default)]
pub struct AuditedResponse {
    /// The `Status` the response holds, if it is one.
    pub status: Option<Value>,
    /// The response object (`AuditCapture::Object`).
    pub object: Option<Value>,
    /// The panic the handler ended in (kube's `Panic` stage).
    pub panic: Option<String>,
}

impl ApiRequest {
    pub fn new(method: Method, path_and_query: &str) -> Self {
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        let query = Query::parse(query);
        ApiRequest {
            method,
            endpoint: route(method, path, &query),
            path: path.to_string(),
            query,
            headers: http::HeaderMap::new(),
            body: Bytes::new(),
            user: None,
            received: std::time::Instant::now(),
            audit: AuditCapture::Off,
            authorization: None,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

pub type StreamBody = BoxBody<Bytes, std::io::Error>;

pub enum ResponseBody {
    Full(Bytes),
    /// A large body sent in pieces as the connection takes them (lists).
    Segments(crate::segments::Segments),
    /// A long-running response (watch).
    Stream(StreamBody),
}

pub struct ApiResponse {
    pub status: u16,
    pub headers: Vec<(http::HeaderName, String)>,
    pub body: ResponseBody,
    /// What a resource response holds, for `representation::represent` to
    /// encode in the negotiated media type; `None` for bodies sent as they are.
    pub payload: Option<Payload>,
    /// Kept for the audit log when the request asked (`ApiRequest::audit`).
    pub audited: Option<Box<AuditedResponse>>,
    /// Audit annotations admission added (`audit.AddAuditAnnotation`), for
    /// the request's audit event.
    pub audit_annotations: Vec<(String, String)>,
}

/// The content of a resource response before it is encoded.
pub enum Payload {
    /// An object or `Status` a handler built (the body holds its JSON).
    Value(Value),
    /// One stored object version read at `revision` (GET; the body is filled
    /// from the object's cached encodings).
    Stored {
        object: Arc<StoredObject>,
        revision: i64,
    },
    /// A page of a list (LIST; the body is filled when encoded).
    List(ListPayload),
}

/// One page of a list: the `<Kind>List` head and the items.
pub struct ListPayload {
    pub api_version: String,
    /// The list kind (`PodList`).
    pub kind: String,
    pub revision: i64,
    pub continue_token: Option<String>,
    pub remaining: Option<usize>,
    pub items: Vec<Arc<StoredObject>>,
}

impl ApiResponse {
    pub fn bytes(status: u16, content_type: &str, body: Bytes) -> Self {
        ApiResponse {
            status,
            headers: vec![(http::header::CONTENT_TYPE, content_type.to_string())],
            body: ResponseBody::Full(body),
            payload: None,
            audited: None,
            audit_annotations: Vec::new(),
        }
    }

    /// An object (or `Status`) in JSON; resource endpoints re-encode it in
    /// the negotiated representation.
    pub fn json(status: u16, value: &Value) -> Self {
        let mut response = Self::bytes(
            status,
            "application/json",
            Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
        );
        response.payload = Some(Payload::Value(value.clone()));
        response
    }

    /// An object a resource handler produced (create, update, patch, delete),
    /// kept as it is: `representation::represent` encodes it once, in the
    /// negotiated media type (encoding it here too was 4% of a create's CPU).
    pub fn object(status: u16, value: Value) -> Self {
        let mut response = Self::bytes(status, "application/json", Bytes::new());
        response.payload = Some(Payload::Value(value));
        response
    }

    /// One stored object version (GET); encoded by `representation::represent`.
    pub fn stored(status: u16, object: Arc<StoredObject>, revision: i64) -> Self {
        let json = object.json().cloned().unwrap_or_default();
        let mut response = Self::bytes(status, "application/json", json);
        response.payload = Some(Payload::Stored { object, revision });
        response
    }

    /// A list page (LIST); encoded by `representation::represent`.
    pub fn list(status: u16, list: ListPayload) -> Self {
        let mut response = Self::bytes(status, "application/json", Bytes::new());
        response.payload = Some(Payload::List(list));
        response
    }

    pub fn represented(status: u16, representation: Representation, value: &Value) -> Self {
        Self::bytes(
            status,
            &representation.content_type(),
            Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
        )
    }

    pub fn text(status: u16, text: impl Into<String>) -> Self {
        Self::bytes(
            status,
            "text/plain; charset=utf-8",
            Bytes::from(text.into()),
        )
    }

    pub fn error(status: &Status) -> Self {
        let mut response = Self::json(status.code, &status.to_json());
        if let Some(seconds) = status
            .details
            .as_ref()
            .and_then(|details| details.retry_after_seconds)
        {
            response
                .headers
                .push((http::header::RETRY_AFTER, seconds.to_string()));
        }
        response
    }

    pub fn with_header(mut self, name: http::HeaderName, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// One `Warning` header per value (`299 - "text"`).
    pub fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        for warning in warnings {
            self.headers.push((http::header::WARNING, warning));
        }
        self
    }

    /// The body of a full response (tests).
    pub fn body_bytes(&self) -> Option<&Bytes> {
        match &self.body {
            ResponseBody::Full(bytes) => Some(bytes),
            ResponseBody::Segments(_) | ResponseBody::Stream(_) => None,
        }
    }

    /// The whole body of a full or segmented response (tests).
    pub fn body_whole(&self) -> Option<Bytes> {
        match &self.body {
            ResponseBody::Full(bytes) => Some(bytes.clone()),
            ResponseBody::Segments(segments) => Some(segments.concat()),
            ResponseBody::Stream(_) => None,
        }
    }

    /// The body parsed as JSON (tests); a handler's object before it is represented.
    pub fn body_json(&self) -> Value {
        if let (Some(Payload::Value(value)), ResponseBody::Full(bytes)) =
            (&self.payload, &self.body)
        {
            if bytes.is_empty() {
                return value.clone();
            }
        }
        self.body_whole()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or(Value::Null)
    }
}

impl From<Status> for ApiResponse {
    fn from(status: Status) -> Self {
        ApiResponse::error(&status)
    }
}
