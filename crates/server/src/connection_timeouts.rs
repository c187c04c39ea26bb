//! Header-read and idle timeouts of one connection, as kube-apiserver's
//! `http.Server` has them (`server/secure_serving.go`
//! `SecureServingInfo.Serve`: `ReadHeaderTimeout` 32 s, `IdleTimeout` 90 s,
//! the latter also HTTP/2's idle timeout) and as Go's `net/http`
//! (`conn.serve`) applies them:
//!
//! - idle: no request in flight and no byte of a new one for
//!   [`ServingTimeouts::idle`] → the connection is shut down gracefully (for
//!   HTTP/2 a GOAWAY, as Go's `http2` server sends). A request is in flight
//!   from the moment hyper hands it to the service until its response body
//!   is dropped, so a watch or a slow list is never idle;
//! - header read (HTTP/1.1 only, as in Go): the first byte of a request
//!   arrived while none was in flight and the request line and headers were
//!   not complete within [`ServingTimeouts::header_read`] → the connection is
//!   closed without an answer (Go's `readRequest` fails on its deadline).
//!
//! hyper has a header-read timer of its own, but it runs from the end of the
//! previous response, so it would also close idle keep-alive connections
//! after 32 s instead of kube's 90 s: this module keeps the two apart.
//! Connections upgraded for `exec`/`attach`/`portforward` leave hyper (and
//! these timers) when they switch protocols.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

/// kube's `ReadHeaderTimeout` ("just shy of requestTimeoutUpperBound").
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);
/// kube's `IdleTimeout` ("matches http.DefaultTransport keep-alive timeout").
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The connection timers of a listener. kube has no flags for them; ferrokube
/// takes hidden ones so tests can shorten them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServingTimeouts {
    /// Go's `ReadHeaderTimeout`; also the TLS handshake's limit, as Go's
    /// `http.Server.tlsHandshakeTimeout` takes the smallest of its read
    /// timeouts.
    pub header_read: Duration,
    /// Go's `IdleTimeout`.
    pub idle: Duration,
}

impl Default for ServingTimeouts {
    fn default() -> Self {
        ServingTimeouts {
            header_read: DEFAULT_HEADER_READ_TIMEOUT,
            idle: DEFAULT_IDLE_TIMEOUT,
        }
    }
}

/// Why a connection's timer ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// No request for the idle timeout: shut down gracefully.
    Idle,
    /// A request's head did not arrive in time: close at once.
    HeaderRead,
}

#[derive(Debug)]
struct State {
    /// When the connection last became idle (no request in flight).
    idle_since: Instant,
    /// When the first byte of a request that has not reached the service yet
    /// arrived, on an HTTP/1.1 connection.
    header_started: Option<Instant>,
}

/// What one connection is doing, shared by its reader ([`ActivityIo`]), its
/// requests ([`RequestGuard`]) and its timer ([`ConnectionActivity::expired`]).
#[derive(Debug)]
pub struct ConnectionActivity {
    timeouts: ServingTimeouts,
    /// Whether header-read timing applies (HTTP/1.1; HTTP/2 frames such as
    /// PINGs and window updates arrive between requests).
    times_headers: bool,
    in_flight: AtomicUsize,
    state: Mutex<State>,
    changed: Notify,
}

impl ConnectionActivity {
    pub fn new(timeouts: ServingTimeouts, times_headers: bool) -> Arc<Self> {
        Arc::new(ConnectionActivity {
            timeouts,
            times_headers,
            in_flight: AtomicUsize::new(0),
            state: Mutex::new(State {
                idle_since: Instant::now(),
                header_started: None,
            }),
            changed: Notify::new(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is two instants: a poisoned lock still holds usable ones.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A request reached the service; the guard ends it when dropped (with
    /// its response body).
    pub fn request_started(self: &Arc<Self>) -> RequestGuard {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.state().header_started = None;
        self.changed.notify_one();
        RequestGuard {
            activity: self.clone(),
        }
    }

    fn bytes_read(&self) {
        if !self.times_headers || self.in_flight.load(Ordering::Acquire) > 0 {
            return;
        }
        let mut state = self.state();
        if state.header_started.is_none() {
            state.header_started = Some(Instant::now());
            drop(state);
            self.changed.notify_one();
        }
    }

    /// The next deadline and what it means; `None` while a request is in flight.
    fn deadline(&self) -> Option<(Instant, Expiry)> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let state = self.state();
        Some(match state.header_started {
            Some(started) => (started + self.timeouts.header_read, Expiry::HeaderRead),
            None => (state.idle_since + self.timeouts.idle, Expiry::Idle),
        })
    }

    /// Resolves when a timer of the connection runs out.
    pub async fn expired(&self) -> Expiry {
        loop {
            // `notify_one` keeps a permit: a change between reading the
            // deadline and waiting is not lost.
            let changed = self.changed.notified();
            match self.deadline() {
                None => changed.await,
                Some((at, expiry)) => {
                    tokio::select! {
                        () = changed => {}
                        () = tokio::time::sleep_until(at) => {
                            // A request may have started as the timer fired.
                            if self.deadline().is_some_and(|(now_at, _)| now_at <= Instant::now()) {
                                return expiry;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One request in flight on a connection; its drop makes the connection idle
/// again when it was the last one.
#[derive(Debug)]
pub struct RequestGuard {
    activity: Arc<ConnectionActivity>,
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        if self.activity.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.activity.state().idle_since = Instant::now();
            self.activity.changed.notify_one();
        }
    }
}

/// A connection's transport that tells its [`ConnectionActivity`] when bytes
/// arrive.
pub struct ActivityIo<T> {
    inner: T,
    activity: Arc<ConnectionActivity>,
}

impl<T> ActivityIo<T> {
    pub fn new(inner: T, activity: Arc<ConnectionActivity>) -> Self {
        ActivityIo { inner, activity }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ActivityIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(context, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.bytes_read();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ActivityIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(context, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(context, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Short timers, so the tests wait little; the assertions are about which
    /// timer ran out, not when.
    fn short() -> ServingTimeouts {
        ServingTimeouts {
            header_read: Duration::from_millis(20),
            idle: Duration::from_millis(40),
        }
    }

    #[tokio::test]
    async fn an_idle_connection_expires_as_idle() {
        let activity = ConnectionActivity::new(short(), true);
        assert_eq!(activity.expired().await, Expiry::Idle);
    }

    #[tokio::test]
    async fn a_started_header_expires_as_a_header_read_timeout() {
        let activity = ConnectionActivity::new(short(), true);
        activity.bytes_read();
        assert_eq!(activity.expired().await, Expiry::HeaderRead);
    }

    #[tokio::test]
    async fn http2_bytes_between_requests_do_not_start_a_header() {
        let activity = ConnectionActivity::new(short(), false);
        activity.bytes_read();
        assert_eq!(activity.expired().await, Expiry::Idle);
    }

    #[tokio::test]
    async fn a_request_in_flight_never_expires_and_its_end_makes_the_connection_idle() {
        let activity = ConnectionActivity::new(short(), true);
        activity.bytes_read();
        let guard = activity.request_started();
        // Bytes of the body, read while the request is in flight.
        activity.bytes_read();
        let waiting = tokio::time::timeout(Duration::from_millis(300), activity.expired()).await;
        assert!(waiting.is_err(), "a request in flight never expires");
        drop(guard);
        assert_eq!(activity.expired().await, Expiry::Idle);
    }
}
