//! Write coalescing for one connection: many small flushes become one write.
//!
//! hyper's HTTP/2 codec (h2's `FramedWrite`) flushes the connection before
//! it buffers the next DATA frame larger than 1 KiB, so with hundreds of
//! watch streams on one connection every watch event became its own TLS
//! record and its own `write(2)`: about 1.0 write per delivered event, the
//! largest share of the server's CPU in the watch fan-out benchmark.
//!
//! [`CoalescingIo`] sits between hyper and TLS. Writes go into a buffer; the
//! first flush after new data does not write but spawns a ticket task that
//! yields once (so it runs after every task that is ready now) and then
//! wakes the connection. Until the ticket fires, flushes return at once;
//! meanwhile the other watch streams of the same change queue their frames,
//! and the first flush (or read) after the ticket fired writes them all in
//! one go. A flush therefore waits about one scheduler round; a buffer above
//! [`HIGH_WATER`] is written at once, so memory stays bounded.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Buffered bytes above which a write goes out without waiting.
const HIGH_WATER: usize = 64 * 1024;
/// A write at least this large, with nothing buffered, goes straight to the
/// inner stream: a large body's frames gain nothing from coalescing, and the
/// copy into the buffer was an extra pass over a list's bytes. Behind buffered
/// bytes it joins the buffer: draining first would cost a flush (a system
/// call) per frame, which measured slower than the copy.
const PASS_THROUGH: usize = 16 * 1024;

pub struct CoalescingIo<T> {
    inner: T,
    buffer: Vec<u8>,
    /// Bytes of `buffer` already handed to `inner`.
    written: usize,
    /// The ticket of a postponed flush: set when its round has passed.
    ticket: Option<Arc<AtomicBool>>,
}

impl<T> CoalescingIo<T> {
    pub fn new(inner: T) -> Self {
        CoalescingIo {
            inner,
            buffer: Vec::new(),
            written: 0,
            ticket: None,
        }
    }

    fn pending(&self) -> usize {
        self.buffer.len() - self.written
    }

    fn ticket_fired(&self) -> bool {
        self.ticket
            .as_ref()
            .is_some_and(|ticket| ticket.load(Ordering::Acquire))
    }
}

impl<T: AsyncWrite + Unpin> CoalescingIo<T> {
    /// Hands the whole buffer to `inner` and flushes it.
    fn poll_drain(&mut self, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.buffer.len() {
            let n =
                match Pin::new(&mut self.inner).poll_write(context, &self.buffer[self.written..]) {
                    Poll::Ready(Ok(0)) => {
                        return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                    }
                    Poll::Ready(Ok(n)) => n,
                    Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                    Poll::Pending => return Poll::Pending,
                };
            self.written += n;
        }
        self.buffer.clear();
        self.written = 0;
        self.ticket = None;
        Pin::new(&mut self.inner).poll_flush(context)
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for CoalescingIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // A postponed flush also goes out when the connection is polled to read,
        // so it never depends on the protocol calling flush a second time.
        if self.ticket_fired() {
            if let Poll::Ready(Err(error)) = self.poll_drain(context) {
                return Poll::Ready(Err(error));
            }
        }
        Pin::new(&mut self.inner).poll_read(context, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for CoalescingIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.pending() == 0 && data.len() >= PASS_THROUGH {
            return Pin::new(&mut self.inner).poll_write(context, data);
        }
        if self.pending() >= HIGH_WATER {
            match self.poll_drain(context) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
        }
        self.buffer.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.pending() == 0 && bufs.iter().map(|buf| buf.len()).sum::<usize>() >= PASS_THROUGH {
            return Pin::new(&mut self.inner).poll_write_vectored(context, bufs);
        }
        if self.pending() >= HIGH_WATER {
            match self.poll_drain(context) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
        }
        let mut total = 0;
        for buf in bufs {
            self.buffer.extend_from_slice(buf);
            total += buf.len();
        }
        Poll::Ready(Ok(total))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.pending() == 0 {
            return Pin::new(&mut self.inner).poll_flush(context);
        }
        if self.pending() >= HIGH_WATER || self.ticket_fired() {
            return self.poll_drain(context);
        }
        if self.ticket.is_none() {
            // Let the tasks that are ready now add their frames first (module docs).
            let ticket = Arc::new(AtomicBool::new(false));
            self.ticket = Some(ticket.clone());
            let waker = context.waker().clone();
            tokio::spawn(async move {
                tokio::task::yield_now().await;
                ticket.store(true, Ordering::Release);
                waker.wake();
            });
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.poll_drain(context) {
            Poll::Ready(Ok(())) => Pin::new(&mut self.inner).poll_shutdown(context),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Bytes readable from `reader` without waiting.
    async fn available(reader: &mut tokio::io::DuplexStream) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(Ok(n)) =
            tokio::time::timeout(std::time::Duration::from_millis(20), reader.read(&mut buf)).await
        {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    #[tokio::test]
    async fn flushes_of_one_round_become_one_write() {
        let (client, mut server) = tokio::io::duplex(1 << 20);
        let mut io = CoalescingIo::new(client);
        io.write_all(b"first ").await.unwrap();
        io.flush().await.unwrap();
        io.write_all(b"second").await.unwrap();
        io.flush().await.unwrap();
        // Nothing is written until the ticket's round has passed …
        assert_eq!(io.pending(), 12);
        assert!(io.ticket.is_some());
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        // … then the next flush writes both frames at once.
        io.flush().await.unwrap();
        assert_eq!(io.pending(), 0);
        assert!(io.ticket.is_none());
        assert_eq!(available(&mut server).await, b"first second");
    }

    #[tokio::test]
    async fn the_ticket_wakes_the_connection_task() {
        // A task that flushes and then waits to read is woken by the ticket and
        // writes its data from the read path, without another flush.
        let (client, mut server) = tokio::io::duplex(1 << 20);
        let task = tokio::spawn(async move {
            let mut io = CoalescingIo::new(client);
            io.write_all(b"event").await.unwrap();
            io.flush().await.unwrap();
            let mut byte = [0u8; 1];
            let _ = io.read(&mut byte).await;
            io
        });
        let mut buf = [0u8; 5];
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            server.read_exact(&mut buf),
        )
        .await
        .expect("the deferred write goes out")
        .unwrap();
        assert_eq!(&buf, b"event");
        server.write_all(b"x").await.unwrap();
        let io = task.await.unwrap();
        assert_eq!(io.pending(), 0);
    }

    #[tokio::test]
    async fn large_buffers_are_written_at_once_and_shutdown_drains() {
        let (client, mut server) = tokio::io::duplex(1 << 20);
        let mut io = CoalescingIo::new(client);
        let big = vec![7u8; HIGH_WATER];
        io.write_all(&big).await.unwrap();
        io.flush().await.unwrap();
        assert_eq!(io.pending(), 0, "above the high-water mark nothing waits");
        io.write_all(b"tail").await.unwrap();
        io.shutdown().await.unwrap();
        let got = available(&mut server).await;
        assert_eq!(got.len(), HIGH_WATER + 4);
        assert!(got.ends_with(b"tail"));
    }

    #[tokio::test]
    async fn large_writes_pass_through_when_nothing_is_buffered() {
        let (client, mut server) = tokio::io::duplex(1 << 20);
        let mut io = CoalescingIo::new(client);
        let big = vec![9u8; PASS_THROUGH];
        // Something small is buffered: the large write queues behind it.
        io.write_all(b"head").await.unwrap();
        io.write_all(&big).await.unwrap();
        assert_eq!(io.pending(), 4 + PASS_THROUGH);
        io.flush().await.unwrap();
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        io.flush().await.unwrap();
        assert_eq!(io.pending(), 0);
        // Nothing buffered: the large write goes straight through.
        io.write_all(&big).await.unwrap();
        assert_eq!(io.pending(), 0);
        io.write_all(b"tail").await.unwrap();
        io.shutdown().await.unwrap();
        let got = available(&mut server).await;
        assert_eq!(got.len(), 4 + 2 * PASS_THROUGH + 4);
        assert!(got.starts_with(b"head\x09"));
        assert!(got.ends_with(b"\x09tail"));
    }
}
