//! CBOR -> JSON tree, as kube's `modes.DecodeLax` fills unstructured content:
//! byte and text strings both become strings, integers must fit an int64,
//! floats must be finite, map keys are strings and unique, and the
//! self-described tag may wrap any item.

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::{CborError, MAX_NESTING};

/// Decodes exactly one data item (optionally tagged 55799); trailing bytes are an error.
pub fn decode(body: &[u8]) -> Result<Value, CborError> {
    if body.is_empty() {
        return Err(CborError::Empty);
    }
    let mut reader = Reader { data: body, at: 0 };
    let value = reader.item(0)?;
    if reader.at < body.len() {
        return Err(CborError::Extraneous(body.len() - reader.at, reader.at));
    }
    Ok(value)
}

/// Decodes an `application/cbor-seq` body: data items one after another (RFC 8742).
pub fn decode_seq(body: &[u8]) -> Result<Vec<Value>, CborError> {
    let mut reader = Reader { data: body, at: 0 };
    let mut items = Vec::new();
    while reader.at < body.len() {
        items.push(reader.item(0)?);
    }
    Ok(items)
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

/// The head of one data item: major type, additional information, argument.
struct Head {
    major: u8,
    info: u8,
    argument: u64,
}

const BREAK: u8 = 0xff;
const INDEFINITE: u8 = 31;

fn type_name(major: u8) -> &'static str {
    match major {
        0 => "positive integer",
        1 => "negative integer",
        2 => "byte string",
        3 => "UTF-8 text string",
        4 => "array",
        5 => "map",
        6 => "tag",
        _ => "primitives",
    }
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, CborError> {
        let byte = *self.data.get(self.at).ok_or(CborError::Truncated)?;
        self.at += 1;
        Ok(byte)
    }

    fn take(&mut self, len: u64) -> Result<&'a [u8], CborError> {
        let len = usize::try_from(len).map_err(|_| CborError::Truncated)?;
        let end = self.at.checked_add(len).ok_or(CborError::Truncated)?;
        let slice = self.data.get(self.at..end).ok_or(CborError::Truncated)?;
        self.at = end;
        Ok(slice)
    }

    fn peek_break(&self) -> bool {
        self.data.get(self.at) == Some(&BREAK)
    }

    fn head(&mut self) -> Result<Head, CborError> {
        let first = self.byte()?;
        let (major, info) = (first >> 5, first & 0x1f);
        let argument = match info {
            0..=23 => u64::from(info),
            24 => u64::from(self.byte()?),
            25 => u64::from(u16::from_be_bytes(fixed(self.take(2)?))),
            26 => u64::from(u32::from_be_bytes(fixed(self.take(4)?))),
            27 => u64::from_be_bytes(fixed(self.take(8)?)),
            INDEFINITE if matches!(major, 2..=5) => 0,
            INDEFINITE if major == 7 => return Err(CborError::UnexpectedBreak),
            _ => return Err(CborError::InvalidAdditional(info, type_name(major))),
        };
        Ok(Head {
            major,
            info,
            argument,
        })
    }

    fn item(&mut self, depth: usize) -> Result<Value, CborError> {
        let head = self.head()?;
        self.item_with_head(head, depth)
    }

    fn item_with_head(&mut self, head: Head, depth: usize) -> Result<Value, CborError> {
        match head.major {
            0 => i64::try_from(head.argument)
                .map(|int| Value::Number(int.into()))
                .map_err(|_| CborError::IntegerOverflow("positive integer")),
            1 => i64::try_from(head.argument)
                .map(|int| Value::Number((-1 - int).into()))
                .map_err(|_| CborError::IntegerOverflow("negative integer")),
            2 | 3 => self.string(head).map(Value::String),
            4 => self.array(head, depth),
            5 => self.map(head, depth).map(Value::Object),
            6 => self.tagged(head, depth),
            _ => simple(head),
        }
    }

    /// A byte or text string as Go reads either into a string.
    fn string(&mut self, head: Head) -> Result<String, CborError> {
        let bytes = self.string_bytes(&head)?;
        if head.major == 3 {
            return String::from_utf8(bytes).map_err(|_| CborError::InvalidUtf8);
        }
        Ok(String::from_utf8(bytes)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()))
    }

    fn string_bytes(&mut self, head: &Head) -> Result<Vec<u8>, CborError> {
        if head.info != INDEFINITE {
            return Ok(self.take(head.argument)?.to_vec());
        }
        let mut out = Vec::new();
        loop {
            if self.peek_break() {
                self.at += 1;
                return Ok(out);
            }
            let chunk = self.head()?;
            if chunk.major != head.major || chunk.info == INDEFINITE {
                return Err(CborError::IndefiniteChunk(
                    type_name(chunk.major),
                    type_name(head.major),
                ));
            }
            let bytes = self.take(chunk.argument)?;
            if head.major == 3 && std::str::from_utf8(bytes).is_err() {
                return Err(CborError::InvalidUtf8);
            }
            out.extend_from_slice(bytes);
        }
    }

    fn array(&mut self, head: Head, depth: usize) -> Result<Value, CborError> {
        if depth >= MAX_NESTING {
            return Err(CborError::TooDeep(MAX_NESTING));
        }
        let mut items = Vec::new();
        if head.info == INDEFINITE {
            while !self.peek_break() {
                items.push(self.item(depth + 1)?);
            }
            self.at += 1;
        } else {
            // Every item takes at least one byte: never reserve more than is left.
            let left = (self.data.len() - self.at) as u64;
            if head.argument > left {
                return Err(CborError::Truncated);
            }
            items.reserve(head.argument as usize);
            for _ in 0..head.argument {
                items.push(self.item(depth + 1)?);
            }
        }
        Ok(Value::Array(items))
    }

    fn map(&mut self, head: Head, depth: usize) -> Result<Map<String, Value>, CborError> {
        if depth >= MAX_NESTING {
            return Err(CborError::TooDeep(MAX_NESTING));
        }
        let mut map = Map::new();
        let mut index = 0usize;
        loop {
            if head.info == INDEFINITE {
                if self.peek_break() {
                    self.at += 1;
                    break;
                }
            } else if index as u64 >= head.argument {
                break;
            }
            let key = self.key()?;
            let value = self.item(depth + 1)?;
            if map.contains_key(&key) {
                return Err(CborError::DuplicateKey(key, index));
            }
            map.insert(key, value);
            index += 1;
        }
        Ok(map)
    }

    fn key(&mut self) -> Result<String, CborError> {
        let mut head = self.head()?;
        while head.major == 6 && head.argument == 55_799 {
            head = self.head()?;
        }
        match head.major {
            2 | 3 => self.string(head),
            other => Err(CborError::MapKey(type_name(other))),
        }
    }

    /// A tag and its content. Every tag is a nesting level, as in
    /// fxamacker/cbor's well-formedness check (`MaxNestedLevels` counts
    /// arrays, maps and tags): a chain of tags is bounded like nested arrays.
    fn tagged(&mut self, head: Head, depth: usize) -> Result<Value, CborError> {
        if depth >= MAX_NESTING {
            return Err(CborError::TooDeep(MAX_NESTING));
        }
        let depth = depth + 1;
        match head.argument {
            // Self-described CBOR: no meaning of its own.
            55_799 => self.item(depth),
            // Expected later encoding of a byte string: the string a Go
            // []byte would have in JSON (tags 21, 22, 23 of RFC 8949 3.4.5.2).
            tag @ 21..=23 => {
                let inner = self.head()?;
                if inner.major != 2 {
                    return self.item_with_head(inner, depth);
                }
                let bytes = self.string_bytes(&inner)?;
                Ok(Value::String(match tag {
                    21 => base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes),
                    22 => base64::engine::general_purpose::STANDARD.encode(bytes),
                    _ => bytes.iter().map(|byte| format!("{byte:02x}")).collect(),
                }))
            }
            // RFC 3339 and epoch times: kube accepts them as strings/numbers.
            0 => {
                let inner = self.head()?;
                if inner.major != 3 {
                    return Err(CborError::Unsupported(
                        "tag number 0 must be followed by text string".into(),
                    ));
                }
                self.string(inner).map(Value::String)
            }
            other => Err(CborError::Unsupported(format!(
                "tag number {other} is not supported"
            ))),
        }
    }
}

fn fixed<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

fn simple(head: Head) -> Result<Value, CborError> {
    let float = match head.info {
        20 => return Ok(Value::Bool(false)),
        21 => return Ok(Value::Bool(true)),
        22 => return Ok(Value::Null),
        23 => {
            return Err(CborError::Unsupported(
                "simple value 23 (undefined) is not allowed".into(),
            ))
        }
        25 => f16_to_f64(head.argument as u16),
        26 => f64::from(f32::from_bits(head.argument as u32)),
        27 => f64::from_bits(head.argument),
        _ => {
            return Err(CborError::Unsupported(format!(
                "simple value {} is not recognized",
                head.argument
            )))
        }
    };
    if float.is_nan() {
        return Err(CborError::NotFinite("floating-point NaN"));
    }
    if float.is_infinite() {
        return Err(CborError::NotFinite("floating-point infinity"));
    }
    Number::from_f64(float)
        .map(Value::Number)
        .ok_or(CborError::NotFinite("floating-point NaN"))
}

pub(super) fn f16_to_f64(half: u16) -> f64 {
    let sign = if half & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((half >> 10) & 0x1f);
    let mantissa = f64::from(half & 0x3ff);
    let magnitude = match exponent {
        0 => mantissa * 2f64.powi(-24),
        31 if mantissa == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + mantissa / 1024.0) * 2f64.powi(exponent - 15),
    };
    sign * magnitude
}
