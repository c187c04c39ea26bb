//! kube JSON -> protobuf, field by field in ascending tag order (the order
//! gogo's generated MarshalToSizedBuffer produces). Fields absent or null in
//! the JSON are not written; a Go client decodes them as zero values, the same
//! object it would get from kube-apiserver. Map entries are written in sorted
//! key order, as gogo does. JSON keys the schema does not know are ignored
//! (as encoding/json ignores unknown fields).

use base64::Engine as _;
use serde_json::Value;

use super::schema::{Field, FieldType, Message, Scalar, Schema, Shape, WellKnown};
use super::wire::{put_bytes, put_key, put_varint, FIXED32, FIXED64, VARINT};
use super::{ProtobufError, MAX_DEPTH};
use crate::go::time::{parse_duration, parse_time};

/// Go's zero `time.Time` (0001-01-01T00:00:00Z) as Unix seconds: kube writes
/// it as an empty Time message (time_proto.go).
const GO_ZERO_TIME: i64 = -62_135_596_800;

/// Encodes `value` as message number `message`, appending to `out`.
pub fn encode_message(
    schema: &Schema,
    message: usize,
    value: &Value,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), ProtobufError> {
    if depth > MAX_DEPTH {
        return Err(ProtobufError::TooDeep(MAX_DEPTH));
    }
    let msg = schema
        .message(message)
        .ok_or_else(|| ProtobufError::UnknownMessage(message.to_string()))?;
    if let Some(wk) = msg.well_known {
        return encode_well_known(schema, msg, wk, value, depth, out);
    }
    let Value::Object(object) = value else {
        return Err(mismatch(&msg.name, "an object", value));
    };
    // The object's keys (few) are looked up in the message's name table
    // rather than every schema field in the object, then written in tag
    // order. Up to FOUND present fields live on the stack.
    const FOUND: usize = 32;
    let mut stack: [(u16, &Value); FOUND] = [(0, value); FOUND];
    let mut spill: Vec<(u16, &Value)> = Vec::new();
    let mut count = 0;
    macro_rules! push {
        ($rank:expr, $item:expr) => {
            if count < FOUND {
                stack[count] = ($rank, $item);
            } else {
                if spill.is_empty() {
                    spill.extend_from_slice(&stack);
                }
                spill.push(($rank, $item));
            }
            count += 1;
        };
    }
    for &rank in &msg.inline_ranks {
        push!(rank, value);
    }
    for (key, item) in object {
        // Unknown keys (apiVersion, kind, ...) never touch their value.
        if let Some(rank) = msg.rank_of_json(key) {
            if !item.is_null() {
                push!(rank, item);
            }
        }
    }
    let found: &mut [(u16, &Value)] = if count <= FOUND {
        &mut stack[..count]
    } else {
        &mut spill
    };
    found.sort_unstable_by_key(|&(rank, _)| rank);
    for &(rank, value) in found.iter() {
        let field = msg.field_at_rank(rank);
        if field.json.is_empty() {
            // `json:",inline"`: the embedded struct's fields sit in this object.
            let FieldType::Message(inner) = field.ty else {
                continue;
            };
            put_nested(out, field.tag, |out| {
                encode_message(schema, inner, value, depth + 1, out)
            })?;
            continue;
        }
        match field.shape {
            Shape::Single => encode_value(schema, msg, field, field.tag, value, depth, out)?,
            Shape::Repeated => {
                let Value::Array(items) = value else {
                    return Err(mismatch(&context(msg, field), "an array", value));
                };
                for item in items {
                    encode_value(schema, msg, field, field.tag, item, depth, out)?;
                }
            }
            Shape::Map => {
                let Value::Object(map) = value else {
                    return Err(mismatch(&context(msg, field), "an object", value));
                };
                // gogo writes entries in sorted key order; serde_json's map
                // iterates sorted already (BTreeMap) unless built with
                // preserve_order: checked while writing, redone sorted if not.
                let start = out.len();
                let mut previous: Option<&String> = None;
                let mut sorted = true;
                for (key, item) in map {
                    if previous.is_some_and(|p| p > key) {
                        sorted = false;
                        break;
                    }
                    previous = Some(key);
                    encode_entry(schema, msg, field, key, item, depth, out)?;
                }
                if !sorted {
                    out.truncate(start);
                    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                    for (key, item) in entries {
                        encode_entry(schema, msg, field, key, item, depth, out)?;
                    }
                }
            }
        }
    }
    Ok(())
}

fn encode_entry(
    schema: &Schema,
    msg: &Message,
    field: &Field,
    key: &str,
    item: &Value,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), ProtobufError> {
    put_nested(out, field.tag, |entry| {
        put_bytes(entry, 1, key.as_bytes());
        if item.is_null() {
            // Go decodes null map values as the zero value.
            encode_zero(field, entry);
            Ok(())
        } else {
            encode_value(schema, msg, field, 2, item, depth, entry)
        }
    })
}

/// A length-delimited field whose content `write` appends to `out` in place
/// (no buffer per nested message): one byte is set aside for the length, and
/// the content moves only when its length needs a longer varint.
fn put_nested(
    out: &mut Vec<u8>,
    tag: u32,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), ProtobufError>,
) -> Result<(), ProtobufError> {
    put_key(out, tag, super::wire::LEN);
    let at = out.len();
    out.push(0);
    write(out)?;
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
    } else {
        // Longer varint: shift the content once (no allocation).
        let mut prefix = [0u8; 10];
        let mut n = 0;
        let mut rest = len as u64;
        while rest >= 0x80 {
            prefix[n] = (rest as u8 & 0x7f) | 0x80;
            rest >>= 7;
            n += 1;
        }
        prefix[n] = rest as u8;
        n += 1;
        out.splice(at..at + 1, prefix[..n].iter().copied());
    }
    Ok(())
}

fn encode_zero(field: &Field, entry: &mut Vec<u8>) {
    match field.ty {
        FieldType::Scalar(Scalar::String | Scalar::Bytes) | FieldType::Message(_) => {
            put_bytes(entry, 2, &[])
        }
        FieldType::Scalar(scalar) => {
            put_key(entry, 2, scalar.wire());
            match scalar {
                Scalar::Double => entry.extend_from_slice(&0f64.to_le_bytes()),
                Scalar::Float => entry.extend_from_slice(&0f32.to_le_bytes()),
                _ => put_varint(entry, 0),
            }
        }
    }
}

fn context(msg: &Message, field: &Field) -> String {
    format!("{}.{}", msg.name, field.json)
}

pub(super) fn mismatch(context: &str, expected: &str, got: &Value) -> ProtobufError {
    let got = match got {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    ProtobufError::InvalidValue {
        context: context.to_string(),
        reason: format!("expected {expected}, got {got}"),
    }
}

/// One singular value (an element of a repeated field, a map entry's value)
/// of `field`'s type, keyed with `tag`.
fn encode_value(
    schema: &Schema,
    msg: &Message,
    field: &Field,
    tag: u32,
    value: &Value,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), ProtobufError> {
    match field.ty {
        FieldType::Message(inner) => put_nested(out, tag, |out| {
            if value.is_null() {
                return Ok(());
            }
            encode_message(schema, inner, value, depth + 1, out)
        }),
        // The error context is only formatted on failure: this runs for every scalar.
        FieldType::Scalar(scalar) => {
            encode_scalar(&|| context(msg, field), tag, scalar, value, out)
        }
    }
}

fn encode_scalar(
    ctx: &dyn Fn() -> String,
    tag: u32,
    scalar: Scalar,
    value: &Value,
    out: &mut Vec<u8>,
) -> Result<(), ProtobufError> {
    let int_in = |lo: i64, hi: i64| -> Result<i64, ProtobufError> {
        value
            .as_i64()
            .filter(|n| (lo..=hi).contains(n))
            .ok_or_else(|| mismatch(&ctx(), "an integer in range", value))
    };
    match scalar {
        Scalar::String => {
            let s = value
                .as_str()
                .ok_or_else(|| mismatch(&ctx(), "a string", value))?;
            put_bytes(out, tag, s.as_bytes());
        }
        Scalar::Bytes => {
            let s = value
                .as_str()
                .ok_or_else(|| mismatch(&ctx(), "a base64 string", value))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| ProtobufError::InvalidValue {
                    context: ctx(),
                    reason: e.to_string(),
                })?;
            put_bytes(out, tag, &bytes);
        }
        Scalar::Bool => {
            let b = value
                .as_bool()
                .ok_or_else(|| mismatch(&ctx(), "a boolean", value))?;
            put_key(out, tag, VARINT);
            put_varint(out, u64::from(b));
        }
        Scalar::Int32 | Scalar::Int64 => {
            let n = if scalar == Scalar::Int32 {
                int_in(i64::from(i32::MIN), i64::from(i32::MAX))?
            } else {
                int_in(i64::MIN, i64::MAX)?
            };
            put_key(out, tag, VARINT);
            // Negative int32/int64 go out as ten-byte two's complement varints.
            put_varint(out, n as u64);
        }
        Scalar::Uint32 | Scalar::Uint64 => {
            let max = if scalar == Scalar::Uint32 {
                u64::from(u32::MAX)
            } else {
                u64::MAX
            };
            let n = value
                .as_u64()
                .filter(|n| *n <= max)
                .ok_or_else(|| mismatch(&ctx(), "an unsigned integer in range", value))?;
            put_key(out, tag, VARINT);
            put_varint(out, n);
        }
        Scalar::Double => {
            let f = value
                .as_f64()
                .ok_or_else(|| mismatch(&ctx(), "a number", value))?;
            put_key(out, tag, FIXED64);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Scalar::Float => {
            let f = value
                .as_f64()
                .ok_or_else(|| mismatch(&ctx(), "a number", value))?;
            put_key(out, tag, FIXED32);
            out.extend_from_slice(&(f as f32).to_le_bytes());
        }
    }
    Ok(())
}

/// Encodes a field of a well-known message through its schema field (so
/// nested messages such as JSONSchemaProps go through the table).
fn put_field(
    schema: &Schema,
    msg: &Message,
    tag: u32,
    value: &Value,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), ProtobufError> {
    let field = msg
        .field_by_tag(tag)
        .ok_or_else(|| ProtobufError::Schema(format!("{} has no field {tag}", msg.name)))?;
    encode_value(schema, msg, field, tag, value, depth, out)
}

fn encode_well_known(
    schema: &Schema,
    msg: &Message,
    wk: WellKnown,
    value: &Value,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), ProtobufError> {
    let name = msg.name.as_str();
    let int = |tag: u32, n: i64, out: &mut Vec<u8>| {
        put_key(out, tag, VARINT);
        put_varint(out, n as u64);
    };
    match (wk, value) {
        (_, Value::Null) => {}
        // intstr.go: gogo writes all three fields.
        (WellKnown::IntOrString, Value::Number(_)) => {
            let n = value
                .as_i64()
                .filter(|n| i32::try_from(*n).is_ok())
                .ok_or_else(|| mismatch(name, "an int32", value))?;
            int(1, 0, out);
            int(2, n, out);
            put_bytes(out, 3, b"");
        }
        (WellKnown::IntOrString, Value::String(s)) => {
            int(1, 1, out);
            int(2, 0, out);
            put_bytes(out, 3, s.as_bytes());
        }
        // quantity.go UnmarshalJSON accepts bare numbers too.
        (WellKnown::Quantity, Value::String(s)) => put_bytes(out, 1, s.as_bytes()),
        (WellKnown::Quantity, Value::Number(n)) => put_bytes(out, 1, n.to_string().as_bytes()),
        (WellKnown::Time | WellKnown::MicroTime, Value::String(s)) => {
            let (seconds, nanos) =
                parse_time(s).ok_or_else(|| mismatch(name, "an RFC 3339 time", value))?;
            if seconds == GO_ZERO_TIME && nanos == 0 {
                return Ok(());
            }
            int(1, seconds, out);
            // time_proto.go writes no nanoseconds for Time (a zero field).
            int(
                2,
                if wk == WellKnown::Time {
                    0
                } else {
                    i64::from(nanos / 1000 * 1000)
                },
                out,
            );
        }
        (WellKnown::Duration, Value::String(s)) => {
            let ns = parse_duration(s).ok_or_else(|| mismatch(name, "a Go duration", value))?;
            int(1, ns, out);
        }
        (WellKnown::RawExtension | WellKnown::FieldsV1 | WellKnown::Json, value) => {
            // Written in place: no intermediate buffer for the embedded JSON.
            put_nested(out, 1, |out| {
                serde_json::to_writer(&mut *out, value)
                    .map_err(|e| ProtobufError::EmbeddedJson(name.to_string(), e.to_string()))
            })?;
        }
        (WellKnown::StringList, Value::Array(items)) => {
            for item in items {
                put_field(schema, msg, 1, item, depth, out)?;
            }
        }
        (WellKnown::JsonOrArray, Value::Array(items)) => {
            for item in items {
                put_field(schema, msg, 2, item, depth, out)?;
            }
        }
        (WellKnown::JsonOrArray | WellKnown::JsonOrStringArray, Value::Object(_)) => {
            put_field(schema, msg, 1, value, depth, out)?;
        }
        (WellKnown::JsonOrStringArray, Value::Array(items)) => {
            for item in items {
                put_field(schema, msg, 2, item, depth, out)?;
            }
        }
        (WellKnown::JsonOrBool, Value::Bool(b)) => int(1, i64::from(*b), out),
        // types_jsonschema.go: a schema means Allows = true.
        (WellKnown::JsonOrBool, Value::Object(_)) => {
            int(1, 1, out);
            put_field(schema, msg, 2, value, depth, out)?;
        }
        (_, value) => return Err(mismatch(name, "its JSON form", value)),
    }
    Ok(())
}
