//! Protobuf wire writer.

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;

/// One message being written (sub-messages are written into their own
/// buffer, then embedded with their length).
#[derive(Debug, Default)]
pub(super) struct Msg(pub(super) Vec<u8>);

impl Msg {
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.0.push((value as u8 & 0x7f) | 0x80);
            value >>= 7;
        }
        self.0.push(value as u8);
    }

    fn key(&mut self, tag: u32, wire: u8) {
        self.varint((u64::from(tag) << 3) | u64::from(wire));
    }

    fn len_field(&mut self, tag: u32, bytes: &[u8]) {
        self.key(tag, LEN);
        self.varint(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    /// A proto3 `string`: omitted when empty.
    pub(super) fn string(&mut self, tag: u32, value: &str) {
        if !value.is_empty() {
            self.len_field(tag, value.as_bytes());
        }
    }

    /// One element of a `repeated string` (written even when empty).
    pub(super) fn repeated_string(&mut self, tag: u32, value: &str) {
        self.len_field(tag, value.as_bytes());
    }

    /// A proto3 `bool`: omitted when false.
    pub(super) fn boolean(&mut self, tag: u32, value: bool) {
        if value {
            self.oneof_bool(tag, true);
        }
    }

    /// A `bool` oneof member: always written.
    pub(super) fn oneof_bool(&mut self, tag: u32, value: bool) {
        self.key(tag, VARINT);
        self.0.push(u8::from(value));
    }

    /// A proto3 `int64`: omitted when 0, negatives as 10-byte varints.
    pub(super) fn int64(&mut self, tag: u32, value: i64) {
        if value != 0 {
            self.key(tag, VARINT);
            self.varint(value as u64);
        }
    }

    /// A proto3 `double`: omitted when +0.0.
    pub(super) fn double(&mut self, tag: u32, value: f64) {
        if value.to_bits() != 0 {
            self.key(tag, FIXED64);
            self.0.extend_from_slice(&value.to_le_bytes());
        }
    }

    /// An embedded message: always written once present.
    pub(super) fn message(&mut self, tag: u32, message: Msg) {
        self.len_field(tag, &message.0);
    }
}
