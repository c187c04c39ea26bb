//! Response bodies written in pieces: a list is its head, each item's cached
//! encoding (shared, not copied) and the separators between them.
//!
//! A 10,000-Pod list is about 48 MB. Concatenating it before the first byte
//! goes out cost a cold copy of the whole body into a fresh allocation (page
//! faults on every page) and held the response head back until the copy was
//! done. [`SegmentedBody`] instead gathers the pieces into chunks of
//! [`CHUNK_BYTES`] as the connection asks for data, so memory per response
//! stays at one chunk and sending starts at once. The total length is known
//! up front, so the response still carries a `Content-Length`.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};

/// The size of the chunks handed to the connection: a few HTTP/2 frames, small
/// enough to stay in cache between the gathering copy and the TLS encryption.
pub const CHUNK_BYTES: usize = 64 * 1024;

/// Where an encoder writes a body: small pieces are copied, shared pieces
/// (cached item encodings) are kept by reference.
pub trait Sink {
    fn put(&mut self, bytes: &[u8]);
    fn put_shared(&mut self, bytes: &Bytes);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    fn put_shared(&mut self, bytes: &Bytes) {
        self.extend_from_slice(bytes);
    }
}

/// A body as a sequence of byte pieces, built by an encoder.
#[derive(Debug, Default, Clone)]
pub struct Segments {
    parts: VecDeque<Bytes>,
    /// Small pieces written since the last shared one.
    pending: Vec<u8>,
    len: usize,
}

impl Sink for Segments {
    fn put(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        self.len += bytes.len();
    }

    fn put_shared(&mut self, bytes: &Bytes) {
        if bytes.is_empty() {
            return;
        }
        self.flush_pending();
        self.len += bytes.len();
        self.parts.push_back(bytes.clone());
    }
}

impl Segments {
    pub fn new() -> Self {
        Self::default()
    }

    /// The body's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn flush_pending(&mut self) {
        if !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            self.parts.push_back(Bytes::from(pending));
        }
    }

    /// Every piece in order (tests, compression).
    pub fn parts(&self) -> impl Iterator<Item = &[u8]> {
        self.parts
            .iter()
            .map(|part| &part[..])
            .chain(std::iter::once(&self.pending[..]))
            .filter(|part| !part.is_empty())
    }

    /// The whole body in one buffer (tests, and bodies that are compressed).
    pub fn concat(&self) -> Bytes {
        let mut out = Vec::with_capacity(self.len);
        for part in self.parts() {
            out.extend_from_slice(part);
        }
        Bytes::from(out)
    }

    /// The body that sends these pieces in chunks.
    pub fn into_body(mut self) -> SegmentedBody {
        self.flush_pending();
        SegmentedBody {
            parts: self.parts,
            remaining: self.len,
        }
    }
}

/// An `http_body::Body` over [`Segments`]: exact size, chunks of about
/// [`CHUNK_BYTES`] gathered on demand; a piece that large on its own goes out
/// without a copy.
#[derive(Debug)]
pub struct SegmentedBody {
    parts: VecDeque<Bytes>,
    remaining: usize,
}

impl SegmentedBody {
    fn next_chunk(&mut self) -> Option<Bytes> {
        let first = self.parts.pop_front()?;
        if first.len() >= CHUNK_BYTES {
            return Some(first);
        }
        let mut chunk = BytesMut::with_capacity(CHUNK_BYTES + 1024);
        chunk.extend_from_slice(&first);
        while chunk.len() < CHUNK_BYTES {
            let Some(part) = self.parts.front() else {
                break;
            };
            if chunk.len() + part.len() > CHUNK_BYTES + 1024 {
                // It starts the next chunk (and a large piece goes out uncopied).
                break;
            }
            chunk.extend_from_slice(part);
            self.parts.pop_front();
        }
        Some(chunk.freeze())
    }
}

impl Body for SegmentedBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let chunk = self.next_chunk();
        if let Some(chunk) = &chunk {
            self.remaining = self.remaining.saturating_sub(chunk.len());
        }
        Poll::Ready(chunk.map(|chunk| Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.parts.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    fn sample() -> (Segments, Vec<u8>) {
        let mut segments = Segments::new();
        let mut expected = Vec::new();
        let big = Bytes::from(vec![b'x'; CHUNK_BYTES * 2 + 5]);
        for index in 0..3_000u32 {
            let separator = format!(",{index}:");
            segments.put(separator.as_bytes());
            expected.extend_from_slice(separator.as_bytes());
            let item = Bytes::from(format!("item-{index}-{}", "y".repeat(index as usize % 97)));
            segments.put_shared(&item);
            expected.extend_from_slice(&item);
            if index % 1000 == 7 {
                segments.put_shared(&big);
                expected.extend_from_slice(&big);
            }
        }
        segments.put(b"]}");
        expected.extend_from_slice(b"]}");
        (segments, expected)
    }

    #[test]
    fn concat_and_length_match_the_pieces() {
        let (segments, expected) = sample();
        assert_eq!(segments.len(), expected.len());
        assert_eq!(&segments.concat()[..], &expected[..]);
        let mut into_vec = Vec::new();
        for part in segments.parts() {
            into_vec.put(part);
        }
        assert_eq!(into_vec, expected);
    }

    #[tokio::test]
    async fn the_body_sends_every_byte_in_bounded_chunks() {
        let (segments, expected) = sample();
        let mut body = segments.into_body();
        assert_eq!(body.size_hint().exact(), Some(expected.len() as u64));
        let mut got = Vec::new();
        let mut chunks = 0;
        while let Some(frame) = body.frame().await {
            let data = frame.expect("frame").into_data().expect("data");
            assert!(!data.is_empty());
            // Gathered chunks stay near the chunk size; only a large shared
            // piece is bigger, and it is sent whole.
            assert!(data.len() <= CHUNK_BYTES + 1024 || data.len() == CHUNK_BYTES * 2 + 5);
            got.extend_from_slice(&data);
            chunks += 1;
            assert_eq!(
                body.size_hint().exact(),
                Some((expected.len() - got.len()) as u64)
            );
        }
        assert!(body.is_end_stream());
        assert_eq!(got, expected);
        assert!(chunks > 3, "sent in several chunks, got {chunks}");
    }

    #[tokio::test]
    async fn an_empty_body_ends_at_once() {
        let mut body = Segments::new().into_body();
        assert!(body.is_end_stream());
        assert_eq!(body.size_hint().exact(), Some(0));
        assert!(body.frame().await.is_none());
    }
}
