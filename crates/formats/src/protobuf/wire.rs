//! The protobuf wire format (protobuf.dev/programming-guides/encoding):
//! varints, tags, fixed32/64 and length-delimited fields. The reader never
//! trusts a length prefix: every length is checked against what remains.

use super::ProtobufError;

pub const VARINT: u8 = 0;
pub const FIXED64: u8 = 1;
pub const LEN: u8 = 2;
pub const START_GROUP: u8 = 3;
pub const END_GROUP: u8 = 4;
pub const FIXED32: u8 = 5;

/// The largest field number protobuf allows (2^29 - 1).
const MAX_TAG: u64 = (1 << 29) - 1;

/// A cursor over one message's bytes.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub fn read_varint(&mut self) -> Result<u64, ProtobufError> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let byte = *self.buf.get(self.pos).ok_or(ProtobufError::Truncated)?;
            self.pos += 1;
            // The tenth byte may only carry the top bit of a 64-bit value.
            if i == 9 && byte > 1 {
                return Err(ProtobufError::BadVarint);
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(ProtobufError::BadVarint)
    }

    /// A field key: (field number, wire type).
    pub fn read_key(&mut self) -> Result<(u32, u8), ProtobufError> {
        let key = self.read_varint()?;
        let tag = key >> 3;
        if tag == 0 || tag > MAX_TAG {
            return Err(ProtobufError::BadTag(tag));
        }
        // MAX_TAG fits in u32.
        Ok((tag as u32, (key & 7) as u8))
    }

    pub fn read_bytes(&mut self) -> Result<&'a [u8], ProtobufError> {
        let len = self.read_varint()?;
        if len > self.remaining() as u64 {
            return Err(ProtobufError::Truncated);
        }
        let start = self.pos;
        self.pos += len as usize;
        Ok(&self.buf[start..self.pos])
    }

    pub fn read_fixed64(&mut self) -> Result<u64, ProtobufError> {
        let bytes = self.take::<8>()?;
        Ok(u64::from_le_bytes(bytes))
    }

    pub fn read_fixed32(&mut self) -> Result<u32, ProtobufError> {
        let bytes = self.take::<4>()?;
        Ok(u32::from_le_bytes(bytes))
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], ProtobufError> {
        let end = self.pos.checked_add(N).ok_or(ProtobufError::Truncated)?;
        let slice = self
            .buf
            .get(self.pos..end)
            .ok_or(ProtobufError::Truncated)?;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        self.pos = end;
        Ok(out)
    }

    /// Skips the value of a field kube's schema does not know (proto keeps
    /// unknown fields; kube's gogo code skips them the same way). Groups are
    /// not used by any kube message and are refused.
    pub fn skip(&mut self, wire: u8) -> Result<(), ProtobufError> {
        match wire {
            VARINT => self.read_varint().map(drop),
            FIXED64 => self.read_fixed64().map(drop),
            LEN => self.read_bytes().map(drop),
            FIXED32 => self.read_fixed32().map(drop),
            other => Err(ProtobufError::UnsupportedWireType(other)),
        }
    }
}

pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

pub fn put_key(out: &mut Vec<u8>, tag: u32, wire: u8) {
    put_varint(out, (u64::from(tag) << 3) | u64::from(wire));
}

/// A length-delimited field: key, length, bytes.
pub fn put_bytes(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    put_key(out, tag, LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            u32::MAX as u64,
            u64::MAX,
            (-1i64) as u64,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut r = Reader::new(&out);
            assert_eq!(r.read_varint().unwrap(), v);
            assert!(r.is_empty());
        }
        let mut out = Vec::new();
        put_varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(
            Reader::new(&[0x80]).read_varint(),
            Err(ProtobufError::Truncated)
        ));
        assert!(matches!(
            Reader::new(&[0xff; 11]).read_varint(),
            Err(ProtobufError::BadVarint)
        ));
        // Length prefix larger than the input: no allocation, an error.
        assert!(matches!(
            Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2]).read_bytes(),
            Err(ProtobufError::Truncated)
        ));
        assert!(matches!(
            Reader::new(&[0x00]).read_key(),
            Err(ProtobufError::BadTag(0))
        ));
        let mut r = Reader::new(&[0x0b]);
        let (_, wire) = r.read_key().unwrap();
        assert!(matches!(
            r.skip(wire),
            Err(ProtobufError::UnsupportedWireType(START_GROUP))
        ));
        assert!(matches!(
            Reader::new(&[1, 2, 3]).read_fixed32(),
            Err(ProtobufError::Truncated)
        ));
        let _ = END_GROUP;
    }
}
