//! A panic while answering one request answers that request, as
//! kube-apiserver's `WithPanicRecovery` filter does
//! (`apiserver/pkg/server/filters/wrap.go`): a 500 with a plain-text body,
//! and the panic logged. The server and its other requests go on.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use super::exchange::ApiResponse;
use crate::route::Method;
use crate::status::PANIC_BODY;

/// Polls `future`, turning a panic inside it into `Err` with its message.
pub struct CatchUnwind<F> {
    future: Pin<Box<F>>,
}

impl<F: Future> CatchUnwind<F> {
    pub fn new(future: F) -> Self {
        CatchUnwind {
            future: Box::pin(future),
        }
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let future = self.future.as_mut();
        match catch_unwind(AssertUnwindSafe(|| future.poll(context))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        return (*text).to_string();
    }
    if let Some(text) = payload.downcast_ref::<String>() {
        return text.clone();
    }
    "a panic without a message".to_string()
}

/// The answer to a request whose handler panicked.
pub fn panicked(method: Method, path: &str, message: &str) -> ApiResponse {
    tracing::error!(?method, %path, panic = %message, "apiserver panic'd");
    let mut response = ApiResponse::text(500, PANIC_BODY);
    // The audit log's `Panic` stage (kube's `WithAudit` sees the panic).
    response.audited = Some(Box::new(super::exchange::AuditedResponse {
        panic: Some(message.to_string()),
        ..Default::default()
    }));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_an_error_and_other_futures_go_on() {
        let caught = CatchUnwind::new(async {
            tokio::task::yield_now().await;
            panic!("boom");
        })
        .await;
        assert_eq!(caught.err().as_deref(), Some("boom"));
        let fine = CatchUnwind::new(async { 7 }).await;
        assert_eq!(fine, Ok(7));
        let response = panicked(Method::Get, "/api", "boom");
        assert_eq!(response.status, 500);
        let content_type = response
            .headers
            .iter()
            .find(|(name, _)| name == http::header::CONTENT_TYPE)
            .map(|(_, value)| value.as_str());
        assert_eq!(content_type, Some("text/plain; charset=utf-8"));
    }
}
