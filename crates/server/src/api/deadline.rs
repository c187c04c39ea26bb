//! Request deadlines, as kube's `WithRequestDeadline`
//! (`endpoints/filters/request_deadline.go`) and
//! `WithTimeoutForNonLongRunningRequests` (`server/filters/timeout.go`) do
//! them: a request that is not long-running has until
//! `received + min(timeout, --request-timeout)` to produce its answer;
//! past it the client gets the timeout filter's 504 and the handler goes on
//! in the background (a write that reached the store completes, as kube's
//! handler goroutine does after its timeout).

use std::time::{Duration, Instant};

use bytes::Bytes;

use super::exchange::{ApiRequest, ApiResponse};
#[cfg(test)]
use crate::api::DEFAULT_REQUEST_TIMEOUT;
use crate::route::Endpoint;
use crate::status::Status;

/// The answer of kube's timeout filter (`baseTimeoutWriter.timeout`): the
/// `Status` of `NewTimeoutError("request did not complete within the
/// allotted timeout", 0)` written with Go's `json.Encoder` (no `kind` or
/// `apiVersion`, a trailing newline) and no `Content-Type`, which Go's
/// server sniffs as `text/plain; charset=utf-8`.
pub fn timeout_response() -> ApiResponse {
    const BODY: &str = concat!(
        r#"{"metadata":{},"status":"Failure","#,
        r#""message":"Timeout: request did not complete within the allotted timeout","#,
        r#""reason":"Timeout","details":{},"code":504}"#,
        "\n"
    );
    ApiResponse::bytes(
        504,
        "text/plain; charset=utf-8",
        Bytes::from_static(BODY.as_bytes()),
    )
}

/// Requests kube-apiserver serves without a deadline
/// (`BasicLongRunningRequestCheck` with kube-apiserver's verbs `watch`,
/// `proxy` and subresources `attach`, `exec`, `proxy`, `log`,
/// `portforward`).
pub fn is_long_running(endpoint: &Endpoint) -> bool {
    let Endpoint::Resource(path) = endpoint else {
        return false;
    };
    path.verb == crate::route::Verb::Watch
        || matches!(
            path.subresource.as_deref(),
            Some("attach" | "exec" | "proxy" | "log" | "portforward")
        )
}

/// The `timeout` query parameter (`parseTimeout`): absent or empty is
/// `None`; otherwise a Go duration, or kube's 400.
fn requested_timeout(request: &ApiRequest) -> Result<Option<i64>, Status> {
    let Some(value) = request
        .query
        .get("timeout")
        .filter(|value| !value.is_empty())
    else {
        return Ok(None);
    };
    crate::go::time::parse_go_duration(value)
        .map(Some)
        .map_err(|error| {
            Status::bad_request(format!(
                "invalid timeout specified in the request URL - {error}"
            ))
        })
}

/// `WithRequestDeadline`'s check, before authentication: the `timeout` of
/// a request that is not long-running must be a Go duration.
pub fn check_timeout(request: &ApiRequest) -> Result<(), Status> {
    if is_long_running(&request.endpoint) {
        return Ok(());
    }
    requested_timeout(request).map(|_| ())
}

/// When the request's answer is due: `None` for long-running requests.
/// A `timeout` of zero or less, or one beyond `maximum`, gives `maximum`
/// (`withRequestDeadline`: "if the user has specified a timeout of 0s,
/// this implies no timeout on the user's part"). The clock starts when the
/// request was received (`ReceivedTimestampFrom`).
pub fn deadline(request: &ApiRequest, maximum: Duration) -> Option<Instant> {
    if is_long_running(&request.endpoint) {
        return None;
    }
    let timeout = match requested_timeout(request) {
        Ok(Some(nanoseconds)) if nanoseconds > 0 => {
            let requested = Duration::from_nanos(nanoseconds.unsigned_abs());
            requested.min(maximum)
        }
        // Checked by `check_timeout` already; an unparsable one never gets here.
        Ok(_) | Err(_) => maximum,
    };
    Some(request.received + timeout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::Method;

    fn request(path_and_query: &str) -> ApiRequest {
        ApiRequest::new(Method::Get, path_and_query)
    }

    #[test]
    fn the_requested_timeout_is_capped_by_the_maximum() {
        let maximum = Duration::from_secs(60);
        let cases = [
            ("/api/v1/pods", maximum),
            ("/api/v1/pods?timeout=", maximum),
            ("/api/v1/pods?timeout=5s", Duration::from_secs(5)),
            ("/api/v1/pods?timeout=1ns", Duration::from_nanos(1)),
            ("/api/v1/pods?timeout=2m", maximum),
            ("/api/v1/pods?timeout=0s", maximum),
            ("/api/v1/pods?timeout=-5s", maximum),
        ];
        for (path, expected) in cases {
            let request = request(path);
            assert_eq!(
                deadline(&request, maximum),
                Some(request.received + expected),
                "{path}"
            );
        }
    }

    #[test]
    fn long_running_requests_have_no_deadline() {
        for path in [
            "/api/v1/pods?watch=true&timeout=1ns",
            "/api/v1/watch/pods?timeout=1ns",
            "/api/v1/namespaces/default/pods/p/log?timeout=1ns",
            "/api/v1/namespaces/default/pods/p/exec?timeout=x",
        ] {
            let request = request(path);
            assert_eq!(deadline(&request, DEFAULT_REQUEST_TIMEOUT), None, "{path}");
            assert!(check_timeout(&request).is_ok(), "{path}");
        }
    }

    #[test]
    fn the_timeout_answer_is_the_filters_status() {
        let response = timeout_response();
        assert_eq!(response.status, 504);
        let body = response.body_bytes().cloned().unwrap_or_default();
        let status: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(status["reason"], "Timeout");
        assert_eq!(status["code"], 504);
        assert_eq!(
            status["message"],
            "Timeout: request did not complete within the allotted timeout"
        );
        assert!(status.get("kind").is_none());
        assert!(body.ends_with(b"\n"));
    }
}
