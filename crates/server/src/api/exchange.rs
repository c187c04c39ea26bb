//! The request and response values handlers work on: IO-free, so handlers
//! are tested without sockets.

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use serde_json::Value;

use crate::authn::UserInfo;
use crate::negotiate::Representation;
use crate::query::Query;
use crate::route::Method;
use crate::status::Status;

/// A request with its body already read (bounded by the body limit).
#[derive(Debug, Clone)]
pub struct ApiRequest {
    pub method: Method,
    pub path: String,
    pub query: Query,
    pub headers: http::HeaderMap,
    pub body: Bytes,
    /// The authenticated user; `None` for anonymous requests.
    pub user: Option<UserInfo>,
}

impl ApiRequest {
    pub fn new(method: Method, path_and_query: &str) -> Self {
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        ApiRequest {
            method,
            path: path.to_string(),
            query: Query::parse(query),
            headers: http::HeaderMap::new(),
            body: Bytes::new(),
            user: None,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

pub type StreamBody = BoxBody<Bytes, std::io::Error>;

pub enum ResponseBody {
    Full(Bytes),
    /// A long-running response (watch).
    Stream(StreamBody),
}

pub struct ApiResponse {
    pub status: u16,
    pub headers: Vec<(http::HeaderName, String)>,
    pub body: ResponseBody,
}

impl ApiResponse {
    pub fn bytes(status: u16, content_type: &str, body: Bytes) -> Self {
        ApiResponse {
            status,
            headers: vec![(http::header::CONTENT_TYPE, content_type.to_string())],
            body: ResponseBody::Full(body),
        }
    }

    pub fn json(status: u16, value: &Value) -> Self {
        Self::bytes(
            status,
            "application/json",
            Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
        )
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
            ResponseBody::Stream(_) => None,
        }
    }

    /// The body parsed as JSON (tests).
    pub fn body_json(&self) -> Value {
        self.body_bytes()
            .and_then(|bytes| serde_json::from_slice(bytes).ok())
            .unwrap_or(Value::Null)
    }
}

impl From<Status> for ApiResponse {
    fn from(status: Status) -> Self {
        ApiResponse::error(&status)
    }
}
