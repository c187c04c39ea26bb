//! JSON tree -> CBOR, as kube's `modes.Encode` writes unstructured content.

use serde_json::{Map, Number, Value};

use super::SELF_DESCRIBED;
use crate::segments::Sink;

const UNSIGNED: u8 = 0;
const NEGATIVE: u8 = 1;
const BYTES: u8 = 2;
const ARRAY: u8 = 4;
const MAP: u8 = 5;

/// One object: tag 55799, then the item.
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&SELF_DESCRIBED);
    encode_into(value, &mut out);
    out
}

/// One watch event of an `application/cbor-seq` stream: `WatchEvent{type,
/// object}` with the object embedded as its own tagged item (RawExtension's
/// MarshalCBOR writes CBOR raw bytes as they are).
pub fn encode_watch_event(event_type: &str, object: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&SELF_DESCRIBED);
    put_head(&mut out, MAP, 2);
    // "type" (4 bytes) sorts before "object" (6 bytes).
    put_bytes(&mut out, b"type");
    put_bytes(&mut out, event_type.as_bytes());
    put_bytes(&mut out, b"object");
    out.extend_from_slice(&SELF_DESCRIBED);
    encode_into(object, &mut out);
    out
}

/// A list (`head` plus `items`) without first building one tree of it.
pub fn encode_list(head: &Map<String, Value>, items: &[&Value]) -> Vec<u8> {
    let items: Vec<Vec<u8>> = items.iter().map(|item| encode_list_item(item)).collect();
    encode_list_raw(head, items.iter().map(Vec::as_slice), items.len())
}

/// One list item as [`encode_list`] writes it (no tag): items of built-in
/// lists carry no type fields, as in JSON. Cached per object version
/// (`object::StoredObject::cbor_item`), so a list concatenates.
pub fn encode_list_item(item: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(1024);
    match item {
        Value::Object(map) => put_map(&mut out, map, &["kind", "apiVersion"]),
        other => encode_into(other, &mut out),
    }
    // Kept per object version: no spare capacity (shrinking reallocates in place).
    out.shrink_to_fit();
    out
}

/// A list from `head` and `count` items already encoded by [`encode_list_item`].
pub fn encode_list_raw<'a>(
    head: &Map<String, Value>,
    items: impl Iterator<Item = &'a [u8]>,
    count: usize,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_list(head, count, &mut out, |out| {
        for item in items {
            out.put(item);
        }
    });
    out
}

/// [`encode_list_raw`] into a [`Sink`]: `write_items` writes the `count`
/// encoded items (a segmented response shares the cached ones).
pub fn write_list<S: Sink>(
    head: &Map<String, Value>,
    count: usize,
    sink: &mut S,
    write_items: impl FnOnce(&mut S),
) {
    let mut write_items = Some(write_items);
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&SELF_DESCRIBED);
    let mut keys: Vec<&str> = head
        .keys()
        .map(String::as_str)
        .filter(|key| *key != "items")
        .chain(["items"])
        .collect();
    keys.sort_unstable_by(|a, b| (a.len(), a.as_bytes()).cmp(&(b.len(), b.as_bytes())));
    put_head(&mut out, MAP, keys.len() as u64);
    for key in keys {
        put_bytes(&mut out, key.as_bytes());
        if key == "items" {
            put_head(&mut out, ARRAY, count as u64);
            sink.put(&out);
            out.clear();
            if let Some(write_items) = write_items.take() {
                write_items(sink);
            }
        } else if let Some(value) = head.get(key) {
            encode_into(value, &mut out);
        }
    }
    sink.put(&out);
}

/// The item alone, without tag.
pub fn encode_into(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.push(0xf6),
        Value::Bool(false) => out.push(0xf4),
        Value::Bool(true) => out.push(0xf5),
        Value::Number(number) => put_number(out, number),
        Value::String(text) => put_bytes(out, text.as_bytes()),
        Value::Array(items) => {
            put_head(out, ARRAY, items.len() as u64);
            for item in items {
                encode_into(item, out);
            }
        }
        Value::Object(map) => put_map(out, map, &[]),
    }
}

fn put_map(out: &mut Vec<u8>, map: &Map<String, Value>, skip: &[&str]) {
    // Bytewise lexical order of the encoded keys: for byte strings that is
    // shorter first, then by content (RFC 8949 4.2.1).
    let mut entries: Vec<(&String, &Value)> = map
        .iter()
        .filter(|(key, _)| !skip.contains(&key.as_str()))
        .collect();
    put_head(out, MAP, entries.len() as u64);
    entries.sort_unstable_by(|a, b| (a.0.len(), a.0.as_bytes()).cmp(&(b.0.len(), b.0.as_bytes())));
    for (key, item) in entries {
        put_bytes(out, key.as_bytes());
        encode_into(item, out);
    }
}

fn put_number(out: &mut Vec<u8>, number: &Number) {
    if let Some(int) = number.as_i64() {
        if int >= 0 {
            put_head(out, UNSIGNED, int as u64);
        } else {
            put_head(out, NEGATIVE, !(int as u64));
        }
    } else if let Some(uint) = number.as_u64() {
        put_head(out, UNSIGNED, uint);
    } else if let Some(float) = number.as_f64() {
        put_float(out, float);
    }
}

/// The shortest of float16/32/64 that holds the value exactly (`ShortestFloat16`).
fn put_float(out: &mut Vec<u8>, float: f64) {
    let single = float as f32;
    if f64::from(single) != float {
        out.push(0xfb);
        out.extend_from_slice(&float.to_be_bytes());
        return;
    }
    if let Some(half) = f32_to_f16_exact(single) {
        out.push(0xf9);
        out.extend_from_slice(&half.to_be_bytes());
        return;
    }
    out.push(0xfa);
    out.extend_from_slice(&single.to_be_bytes());
}

/// The IEEE half-precision bits of a finite `f32`, when the conversion is exact.
pub(super) fn f32_to_f16_exact(value: f32) -> Option<u16> {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32 - 127;
    let mantissa = bits & 0x7f_ffff;
    if exponent == -127 {
        // Zero, or an f32 subnormal (far below half's range).
        return (mantissa == 0).then_some(sign);
    }
    if exponent == 128 {
        return None;
    }
    if (-14..=15).contains(&exponent) {
        if mantissa & 0x1fff != 0 {
            return None;
        }
        return Some(sign | (((exponent + 15) as u16) << 10) | (mantissa >> 13) as u16);
    }
    if (-24..-14).contains(&exponent) {
        let significand = 0x80_0000 | mantissa;
        let shift = (-(exponent + 1)) as u32;
        if significand & ((1 << shift) - 1) != 0 {
            return None;
        }
        return Some(sign | (significand >> shift) as u16);
    }
    None
}

pub(super) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_head(out, BYTES, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A data item head with the shortest argument encoding.
fn put_head(out: &mut Vec<u8>, major: u8, argument: u64) {
    let major = major << 5;
    if argument < 24 {
        out.push(major | argument as u8);
    } else if argument <= u64::from(u8::MAX) {
        out.push(major | 24);
        out.push(argument as u8);
    } else if argument <= u64::from(u16::MAX) {
        out.push(major | 25);
        out.extend_from_slice(&(argument as u16).to_be_bytes());
    } else if argument <= u64::from(u32::MAX) {
        out.push(major | 26);
        out.extend_from_slice(&(argument as u32).to_be_bytes());
    } else {
        out.push(major | 27);
        out.extend_from_slice(&argument.to_be_bytes());
    }
}
