//! protobuf -> kube JSON. The result is what kube's Go types would marshal
//! to after a gogo Unmarshal of the same bytes (`json.Marshal` of the typed
//! object), so the rest of the server sees a protobuf request exactly as if
//! the client had sent JSON:
//! - a pointer field that is present is kept, zero or not (`replicas: 0`);
//! - a zero non-pointer `omitempty` field is dropped (gogo writes every
//!   non-pointer field, so `generateName: ""` arrives on every object);
//! - a zero `metav1.Time` (an empty message, time_proto.go) is dropped, as
//!   kube 1.34's `omitzero` does; absent fields stay absent;
//! - unknown field numbers are skipped, as gogo's generated code does.

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::schema::{Field, FieldType, Message, Presence, Scalar, Schema, Shape, WellKnown};
use super::wire::{Reader, FIXED32, FIXED64, LEN, VARINT};
use super::{ProtobufError, MAX_DEPTH};
use crate::go::time::{format_duration, format_time};

/// Decodes one message of type `message` (no envelope).
pub fn decode_message(
    schema: &Schema,
    message: usize,
    buf: &[u8],
    depth: usize,
) -> Result<Value, ProtobufError> {
    if depth > MAX_DEPTH {
        return Err(ProtobufError::TooDeep(MAX_DEPTH));
    }
    let msg = schema
        .message(message)
        .ok_or_else(|| ProtobufError::UnknownMessage(message.to_string()))?;
    match msg.well_known {
        Some(wk) => decode_well_known(schema, msg, wk, buf, depth),
        None => decode_fields(schema, msg, buf, depth).map(Value::Object),
    }
}

fn decode_fields(
    schema: &Schema,
    msg: &Message,
    buf: &[u8],
    depth: usize,
) -> Result<Map<String, Value>, ProtobufError> {
    let mut slots: Vec<Option<Value>> = (0..msg.fields.len()).map(|_| None).collect();
    let mut r = Reader::new(buf);
    while !r.is_empty() {
        let (tag, wire) = r.read_key()?;
        let Some(index) = msg.index_by_tag(tag) else {
            r.skip(wire)?;
            continue;
        };
        let field = &msg.fields[index];
        let slot = &mut slots[index];
        match field.shape {
            Shape::Single => {
                let value = decode_value(schema, msg, field, field.ty, wire, &mut r, depth)?;
                match (slot.as_mut(), value) {
                    // proto merges a repeated occurrence of a message field.
                    (Some(Value::Object(old)), Value::Object(new)) => old.extend(new),
                    (_, value) => *slot = Some(value),
                }
            }
            Shape::Repeated => {
                let Value::Array(items) = slot.get_or_insert_with(|| Value::Array(Vec::new()))
                else {
                    continue;
                };
                let packed =
                    wire == LEN && matches!(field.ty, FieldType::Scalar(s) if s.is_numeric());
                if packed {
                    let FieldType::Scalar(scalar) = field.ty else {
                        continue;
                    };
                    let mut inner = Reader::new(r.read_bytes()?);
                    while !inner.is_empty() {
                        items.push(decode_scalar(
                            msg,
                            field,
                            scalar,
                            scalar.wire(),
                            &mut inner,
                        )?);
                    }
                } else {
                    items.push(decode_value(
                        schema, msg, field, field.ty, wire, &mut r, depth,
                    )?);
                }
            }
            Shape::Map => {
                expect_wire(msg, field, wire, LEN)?;
                let (key, value) = decode_map_entry(schema, msg, field, r.read_bytes()?, depth)?;
                if let Value::Object(map) = slot.get_or_insert_with(|| Value::Object(Map::new())) {
                    map.insert(key, value);
                }
            }
        }
    }
    let mut out = Map::new();
    for (field, slot) in msg.fields.iter().zip(slots) {
        let Some(value) = slot else { continue };
        if field.json.is_empty() {
            // Go struct embedded with `json:",inline"`.
            if let Value::Object(inner) = value {
                out.extend(inner);
            }
            continue;
        }
        if field.shape == Shape::Single && omitted(schema, field, &value) {
            continue;
        }
        out.insert(field.json.clone(), value);
    }
    Ok(out)
}

/// Whether kube's JSON would leave this singular value out: null (a zero
/// Time, an empty RawExtension) always; a zero scalar, IntOrString or
/// Quantity when the Go field is a value with omitempty. Embedded JSON
/// (`default: false`) is a struct in Go and never "empty".
fn omitted(schema: &Schema, field: &Field, value: &Value) -> bool {
    if value.is_null() {
        return true;
    }
    if field.presence != Presence::OmitEmpty {
        return false;
    }
    if let FieldType::Message(index) = field.ty {
        let scalar_like = schema
            .message(index)
            .and_then(|m| m.well_known)
            .is_some_and(|wk| matches!(wk, WellKnown::IntOrString | WellKnown::Quantity));
        if !scalar_like {
            return false;
        }
    }
    match value {
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

fn decode_value(
    schema: &Schema,
    msg: &Message,
    field: &Field,
    ty: FieldType,
    wire: u8,
    r: &mut Reader<'_>,
    depth: usize,
) -> Result<Value, ProtobufError> {
    match ty {
        FieldType::Scalar(scalar) => decode_scalar(msg, field, scalar, wire, r),
        FieldType::Message(index) => {
            expect_wire(msg, field, wire, LEN)?;
            decode_message(schema, index, r.read_bytes()?, depth + 1)
        }
    }
}

fn decode_map_entry(
    schema: &Schema,
    msg: &Message,
    field: &Field,
    entry: &[u8],
    depth: usize,
) -> Result<(String, Value), ProtobufError> {
    let mut key = String::new();
    let mut value = None;
    let mut r = Reader::new(entry);
    while !r.is_empty() {
        match r.read_key()? {
            (1, wire) => {
                expect_wire(msg, field, wire, LEN)?;
                key = utf8(msg, field, r.read_bytes()?)?;
            }
            (2, wire) => {
                value = Some(decode_value(
                    schema, msg, field, field.ty, wire, &mut r, depth,
                )?)
            }
            (_, wire) => r.skip(wire)?,
        }
    }
    // A missing value is the zero value of its type.
    let value = match value {
        Some(v) => v,
        None => match field.ty {
            FieldType::Scalar(Scalar::String | Scalar::Bytes) => Value::String(String::new()),
            FieldType::Scalar(Scalar::Bool) => Value::Bool(false),
            FieldType::Scalar(_) => Value::from(0),
            FieldType::Message(index) => decode_message(schema, index, &[], depth + 1)?,
        },
    };
    Ok((key, value))
}

impl Scalar {
    fn is_numeric(self) -> bool {
        !matches!(self, Scalar::String | Scalar::Bytes)
    }

    pub(super) fn wire(self) -> u8 {
        match self {
            Scalar::String | Scalar::Bytes => LEN,
            Scalar::Double => FIXED64,
            Scalar::Float => FIXED32,
            _ => VARINT,
        }
    }
}

fn expect_wire(msg: &Message, field: &Field, wire: u8, expected: u8) -> Result<(), ProtobufError> {
    if wire == expected {
        return Ok(());
    }
    Err(ProtobufError::WireType {
        message: msg.name.clone(),
        field: field_name(field),
        wire,
    })
}

fn field_name(field: &Field) -> String {
    if field.json.is_empty() {
        format!("#{}", field.tag)
    } else {
        field.json.clone()
    }
}

fn utf8(msg: &Message, field: &Field, bytes: &[u8]) -> Result<String, ProtobufError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtobufError::InvalidUtf8 {
        message: msg.name.clone(),
        field: field_name(field),
    })
}

/// A JSON number for a double, integral values as integers (Go's
/// encoding/json writes 3, not 3.0).
pub(super) fn number(f: f64) -> Option<Value> {
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        return Some(Value::from(f as i64));
    }
    Number::from_f64(f).map(Value::Number)
}

fn decode_scalar(
    msg: &Message,
    field: &Field,
    scalar: Scalar,
    wire: u8,
    r: &mut Reader<'_>,
) -> Result<Value, ProtobufError> {
    expect_wire(msg, field, wire, scalar.wire())?;
    Ok(match scalar {
        Scalar::String => Value::String(utf8(msg, field, r.read_bytes()?)?),
        Scalar::Bytes => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(r.read_bytes()?))
        }
        Scalar::Bool => Value::Bool(r.read_varint()? != 0),
        // proto int32 is sign-extended to 64 bits on the wire; truncate back.
        Scalar::Int32 => Value::from(r.read_varint()? as i32),
        Scalar::Int64 => Value::from(r.read_varint()? as i64),
        Scalar::Uint32 => Value::from(r.read_varint()? as u32),
        Scalar::Uint64 => Value::from(r.read_varint()?),
        Scalar::Double | Scalar::Float => {
            let f = if scalar == Scalar::Double {
                f64::from_bits(r.read_fixed64()?)
            } else {
                f64::from(f32::from_bits(r.read_fixed32()?))
            };
            number(f).ok_or_else(|| invalid(msg, field, "a NaN or infinite number"))?
        }
    })
}

fn invalid(msg: &Message, field: &Field, reason: &str) -> ProtobufError {
    ProtobufError::InvalidValue {
        context: format!("{}.{}", msg.name, field_name(field)),
        reason: reason.to_string(),
    }
}

/// The fields of a well-known message, by tag, decoded generically.
fn plain_fields(
    schema: &Schema,
    msg: &Message,
    buf: &[u8],
    depth: usize,
) -> Result<Vec<(u32, Value)>, ProtobufError> {
    let mut out = Vec::new();
    let mut r = Reader::new(buf);
    while !r.is_empty() {
        let (tag, wire) = r.read_key()?;
        match msg.field_by_tag(tag) {
            Some(field) => out.push((
                tag,
                decode_value(schema, msg, field, field.ty, wire, &mut r, depth)?,
            )),
            None => r.skip(wire)?,
        }
    }
    Ok(out)
}

fn last(fields: &[(u32, Value)], tag: u32) -> Option<&Value> {
    fields.iter().rev().find(|(t, _)| *t == tag).map(|(_, v)| v)
}

fn all(fields: Vec<(u32, Value)>, tag: u32) -> Vec<Value> {
    fields
        .into_iter()
        .filter(|(t, _)| *t == tag)
        .map(|(_, v)| v)
        .collect()
}

/// Embedded raw bytes (RawExtension, FieldsV1, apiextensions JSON; field 1):
/// JSON as is; a nested `k8s\0` protobuf envelope (what watch events carry)
/// decoded.
fn embedded(
    schema: &Schema,
    msg: &Message,
    buf: &[u8],
    depth: usize,
) -> Result<Value, ProtobufError> {
    let mut bytes: &[u8] = &[];
    let mut r = Reader::new(buf);
    while !r.is_empty() {
        match r.read_key()? {
            (1, LEN) => bytes = r.read_bytes()?,
            (_, wire) => r.skip(wire)?,
        }
    }
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    if bytes.starts_with(&super::envelope::MAGIC) {
        return super::envelope::decode_nested(schema, bytes, depth + 1);
    }
    serde_json::from_slice(bytes)
        .map_err(|e| ProtobufError::EmbeddedJson(msg.name.clone(), e.to_string()))
}

fn decode_well_known(
    schema: &Schema,
    msg: &Message,
    wk: WellKnown,
    buf: &[u8],
    depth: usize,
) -> Result<Value, ProtobufError> {
    if matches!(
        wk,
        WellKnown::RawExtension | WellKnown::FieldsV1 | WellKnown::Json
    ) {
        return embedded(schema, msg, buf, depth);
    }
    let fields = plain_fields(schema, msg, buf, depth)?;
    let int = |tag| last(&fields, tag).and_then(Value::as_i64).unwrap_or(0);
    let text = |tag| {
        last(&fields, tag)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let bad = |reason: &str| ProtobufError::InvalidValue {
        context: msg.name.clone(),
        reason: reason.to_string(),
    };
    Ok(match wk {
        // intstr.go: Type 0 = Int, 1 = String.
        WellKnown::IntOrString if int(1) == 1 => Value::String(text(3)),
        WellKnown::IntOrString => Value::from(int(2)),
        WellKnown::Quantity => Value::String(text(1)),
        // An empty Time is Go's zero time: JSON null (dropped by the caller).
        WellKnown::Time | WellKnown::MicroTime if buf.is_empty() => Value::Null,
        // time_proto.go ignores nanos; micro_time_proto.go keeps them.
        WellKnown::Time => {
            Value::String(format_time(int(1), 0, false).ok_or_else(|| bad("year outside 0..9999"))?)
        }
        WellKnown::MicroTime => Value::String(
            format_time(int(1), int(2), true).ok_or_else(|| bad("year outside 0..9999"))?,
        ),
        WellKnown::Duration => Value::String(format_duration(int(1))),
        WellKnown::RawExtension | WellKnown::FieldsV1 | WellKnown::Json => Value::Null,
        WellKnown::StringList => Value::Array(all(fields, 1)),
        // apiextensions types_jsonschema.go MarshalJSON.
        WellKnown::JsonOrArray => {
            let schema_value = last(&fields, 1).cloned();
            let array = all(fields, 2);
            match schema_value {
                _ if !array.is_empty() => Value::Array(array),
                Some(v) => v,
                None => Value::Null,
            }
        }
        WellKnown::JsonOrBool => match last(&fields, 2) {
            Some(v) => v.clone(),
            None => Value::Bool(last(&fields, 1).and_then(Value::as_bool).unwrap_or(false)),
        },
        WellKnown::JsonOrStringArray => {
            let schema_value = last(&fields, 1).cloned();
            let array = all(fields, 2);
            match schema_value {
                _ if !array.is_empty() => Value::Array(array),
                Some(v) => v,
                None => Value::Null,
            }
        }
    })
}
