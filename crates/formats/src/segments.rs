//! Response bodies written in pieces: a list is its head, each item's cached
//! encoding (shared, not copied) and the separators between them.
//!
//! A 10,000-Pod list is about 48 MB. Concatenating it before the first byte
//! goes out cost a cold copy of the whole body into a fresh allocation (page
//! faults on every page) and held the response head back until the copy was
//! done. [`SegmentedBody`] instead hands the connection [`Chunk`]s of about
//! [`CHUNK_BYTES`] as it asks for data: lists of the shared pieces
//! themselves, which HTTP/2 frames and TLS read through vectored writes, so
//! the only user-space copy of an item is the one into its TLS record (a
//! gathering copy here cost a tenth of a 10,000-Pod list's server time).
//! Runs of small pieces (separators, tiny items) are copied together, so a
//! frame does not become hundreds of tiny slices. The total length is known
//! up front, so the response still carries a `Content-Length`.

use std::collections::VecDeque;
use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};

/// The size of the chunks handed to the connection: a few HTTP/2 frames.
pub const CHUNK_BYTES: usize = 64 * 1024;
/// Pieces shorter than this are copied into one run instead of being passed
/// as their own slice.
const SMALL_PIECE: usize = 256;

/// Data handed to the connection: one buffer, or shared pieces in order.
#[derive(Debug, Clone)]
pub enum Chunk {
    One(Bytes),
    Pieces(Pieces),
}

impl From<Bytes> for Chunk {
    fn from(bytes: Bytes) -> Self {
        Chunk::One(bytes)
    }
}

impl Buf for Chunk {
    fn remaining(&self) -> usize {
        match self {
            Chunk::One(bytes) => bytes.remaining(),
            Chunk::Pieces(pieces) => pieces.remaining(),
        }
    }

    fn chunk(&self) -> &[u8] {
        match self {
            Chunk::One(bytes) => bytes.chunk(),
            Chunk::Pieces(pieces) => pieces.chunk(),
        }
    }

    fn advance(&mut self, count: usize) {
        match self {
            Chunk::One(bytes) => bytes.advance(count.min(bytes.len())),
            Chunk::Pieces(pieces) => pieces.advance(count),
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        match self {
            Chunk::One(bytes) => bytes.chunks_vectored(dst),
            Chunk::Pieces(pieces) => pieces.chunks_vectored(dst),
        }
    }
}

/// Shared byte pieces read as one buffer; never holds an empty piece.
#[derive(Debug, Clone, Default)]
pub struct Pieces {
    parts: VecDeque<Bytes>,
    remaining: usize,
}

impl Pieces {
    fn push(&mut self, part: Bytes) {
        if !part.is_empty() {
            self.remaining += part.len();
            self.parts.push_back(part);
        }
    }
}

impl Buf for Pieces {
    fn remaining(&self) -> usize {
        self.remaining
    }

    fn chunk(&self) -> &[u8] {
        self.parts.front().map_or(&[], |part| &part[..])
    }

    fn advance(&mut self, count: usize) {
        let mut count = count.min(self.remaining);
        self.remaining -= count;
        while count > 0 {
            let Some(front) = self.parts.front_mut() else {
                break;
            };
            if count < front.len() {
                front.advance(count);
                break;
            }
            count -= front.len();
            self.parts.pop_front();
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        let mut filled = 0;
        for (slot, part) in dst.iter_mut().zip(&self.parts) {
            *slot = IoSlice::new(part);
            filled += 1;
        }
        filled
    }
}

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

/// An `http_body::Body` over [`Segments`]: exact size, [`Chunk`]s of at
/// least [`CHUNK_BYTES`] (but the last) made of the shared pieces themselves.
#[derive(Debug)]
pub struct SegmentedBody {
    parts: VecDeque<Bytes>,
    remaining: usize,
}

impl SegmentedBody {
    fn next_chunk(&mut self) -> Option<Chunk> {
        let first = self.parts.pop_front()?;
        if first.len() >= CHUNK_BYTES {
            return Some(Chunk::One(first));
        }
        let mut chunk = Pieces::default();
        let mut run = BytesMut::new();
        let mut next = Some(first);
        while let Some(part) = next.take() {
            if part.len() < SMALL_PIECE {
                run.extend_from_slice(&part);
            } else {
                chunk.push(run.split().freeze());
                chunk.push(part);
            }
            if chunk.remaining + run.len() < CHUNK_BYTES {
                next = self.parts.pop_front();
            }
        }
        chunk.push(run.freeze());
        if chunk.parts.len() == 1 {
            return chunk.parts.pop_front().map(Chunk::One);
        }
        Some(Chunk::Pieces(chunk))
    }
}

impl Body for SegmentedBody {
    type Data = Chunk;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Chunk>, std::io::Error>>> {
        let chunk = self.next_chunk();
        if let Some(chunk) = &chunk {
            self.remaining = self.remaining.saturating_sub(chunk.remaining());
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

    /// A chunk's bytes, read through `chunks_vectored` and `advance` as
    /// the connection reads them.
    fn drain(mut chunk: Chunk) -> Vec<u8> {
        let mut out = Vec::new();
        while chunk.has_remaining() {
            let mut slices = [IoSlice::new(&[]); 3];
            let filled = chunk.chunks_vectored(&mut slices);
            assert!(filled > 0);
            // Take one and a half slices' worth, as a frame boundary would.
            let mut take = slices[0].len();
            out.extend_from_slice(&slices[0]);
            if filled > 1 {
                let half = slices[1].len() / 2;
                out.extend_from_slice(&slices[1][..half]);
                take += half;
            }
            chunk.advance(take);
        }
        out
    }

    #[tokio::test]
    async fn the_body_sends_every_byte_in_bounded_chunks() {
        let (segments, expected) = sample();
        let mut body = segments.into_body();
        assert_eq!(body.size_hint().exact(), Some(expected.len() as u64));
        let mut got = Vec::new();
        let mut sizes = Vec::new();
        while let Some(frame) = body.frame().await {
            let data = frame.expect("frame").into_data().expect("data");
            sizes.push(data.remaining());
            got.extend_from_slice(&drain(data));
            assert_eq!(
                body.size_hint().exact(),
                Some((expected.len() - got.len()) as u64)
            );
        }
        assert!(body.is_end_stream());
        assert_eq!(got, expected);
        assert!(sizes.len() > 3, "sent in several chunks: {sizes:?}");
        let (last, full) = sizes.split_last().expect("chunks");
        assert!(*last > 0);
        // Every chunk but the last reaches the chunk size; it exceeds it by
        // less than one piece.
        for size in full {
            assert!(*size >= CHUNK_BYTES, "{sizes:?}");
            assert!(*size < CHUNK_BYTES * 3 + 5 + 200, "{sizes:?}");
        }
    }

    #[tokio::test]
    async fn large_pieces_are_shared_and_small_ones_joined() {
        let item = Bytes::from(vec![b'i'; 4_000]);
        let mut segments = Segments::new();
        segments.put(b"{\"items\":[");
        for index in 0..40 {
            if index > 0 {
                segments.put_shared(&Bytes::from_static(b","));
            }
            segments.put_shared(&item);
        }
        segments.put(b"]}");
        let mut body = segments.into_body();
        let Some(Ok(frame)) = body.frame().await else {
            panic!("a first chunk");
        };
        let Ok(Chunk::Pieces(pieces)) = frame.into_data() else {
            panic!("a chunk of pieces");
        };
        let mut slices = [IoSlice::new(&[]); 64];
        let filled = pieces.chunks_vectored(&mut slices);
        assert_eq!(filled, pieces.parts.len());
        // head, item, then "," + item pairs: the separator is its own small run.
        assert_eq!(&slices[0][..], b"{\"items\":[");
        for slice in &slices[1..filled] {
            if slice.len() == item.len() {
                assert_eq!(slice.as_ptr(), item.as_ptr(), "the item is not copied");
            } else {
                assert_eq!(&slice[..], b",");
            }
        }
    }

    #[test]
    fn advancing_pieces_past_their_end_stops_at_empty() {
        let mut pieces = Pieces::default();
        pieces.push(Bytes::from_static(b"ab"));
        pieces.push(Bytes::new());
        pieces.push(Bytes::from_static(b"cde"));
        assert_eq!(pieces.parts.len(), 2, "empty pieces are not kept");
        pieces.advance(3);
        assert_eq!(pieces.chunk(), b"de");
        assert_eq!(pieces.remaining(), 2);
        pieces.advance(10);
        assert_eq!(pieces.remaining(), 0);
        assert!(pieces.chunk().is_empty());
    }

    #[tokio::test]
    async fn an_empty_body_ends_at_once() {
        let mut body = Segments::new().into_body();
        assert!(body.is_end_stream());
        assert_eq!(body.size_hint().exact(), Some(0));
        assert!(body.frame().await.is_none());
    }
}
