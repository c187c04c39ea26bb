//! JSON -> gnostic messages: the encoder, its field helpers, and `Any`.
//! The messages themselves are in [`super::top_level`], [`super::parameters`]
//! and [`super::schemas`].

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::wire::Msg;
use super::yaml_text::yaml;

pub(super) type Obj = Map<String, Value>;

/// The common run of fields shared by `PrimitivesItems`, `Header` and the
/// non-body parameter sub-schemas, from `type` to `multipleOf`.
pub(super) const PRIMITIVE_KEYS: &[&str] = &[
    "type",
    "format",
    "items",
    "collectionFormat",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
];

pub(super) const SCHEMA_KEYS: &[&str] = &[
    "$ref",
    "additionalProperties",
    "allOf",
    "default",
    "description",
    "discriminator",
    "enum",
    "example",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "externalDocs",
    "format",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "pattern",
    "properties",
    "readOnly",
    "required",
    "title",
    "type",
    "uniqueItems",
    "xml",
];

pub(super) fn is_extension(key: &str) -> bool {
    key.starts_with("x-")
}

/// `compiler.StringForScalarNode`: strings, integers (their text) and null ("").
pub(super) fn scalar_string(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(text) => Some(Cow::Borrowed(text)),
        Value::Number(number) if number.is_i64() || number.is_u64() => {
            Some(Cow::Owned(number.to_string()))
        }
        Value::Null => Some(Cow::Borrowed("")),
        _ => None,
    }
}

#[derive(Debug, Default)]
pub(super) struct Encoder {
    pub(super) rejected: Vec<String>,
}

impl Encoder {
    pub(super) fn reject(&mut self, message: &str, key: &str) {
        self.rejected.push(format!("{message}.{key}"));
    }

    /// gnostic's `InvalidKeysInMap` (allowed names plus `^x-`).
    pub(super) fn check_keys(&mut self, message: &str, obj: &Obj, allowed: &[&str]) {
        for key in obj.keys() {
            if !is_extension(key) && !allowed.contains(&key.as_str()) {
                self.reject(message, key);
            }
        }
    }

    pub(super) fn object<'v>(
        &mut self,
        message: &str,
        key: &str,
        value: &'v Value,
    ) -> Option<&'v Obj> {
        match value {
            Value::Object(obj) => Some(obj),
            _ => {
                self.reject(message, key);
                None
            }
        }
    }

    // -- typed field writers (value read from `obj[key]`) --------------------

    pub(super) fn string_field(
        &mut self,
        m: &mut Msg,
        tag: u32,
        message: &str,
        obj: &Obj,
        key: &str,
    ) {
        if let Some(value) = obj.get(key) {
            match scalar_string(value) {
                Some(text) => m.string(tag, &text),
                None => self.reject(message, key),
            }
        }
    }

    pub(super) fn bool_field(
        &mut self,
        m: &mut Msg,
        tag: u32,
        message: &str,
        obj: &Obj,
        key: &str,
    ) {
        match obj.get(key) {
            None => {}
            Some(Value::Bool(value)) => m.boolean(tag, *value),
            Some(_) => self.reject(message, key),
        }
    }

    pub(super) fn int_field(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj, key: &str) {
        match obj.get(key) {
            None => {}
            Some(Value::Number(number)) if number.is_i64() => {
                m.int64(tag, number.as_i64().unwrap_or_default());
            }
            Some(_) => self.reject(message, key),
        }
    }

    pub(super) fn double_field(
        &mut self,
        m: &mut Msg,
        tag: u32,
        message: &str,
        obj: &Obj,
        key: &str,
    ) {
        match obj.get(key) {
            None => {}
            Some(Value::Number(number)) => m.double(tag, number.as_f64().unwrap_or_default()),
            Some(_) => self.reject(message, key),
        }
    }

    /// `repeated string` from a JSON array (non-string items skipped, as
    /// `StringArrayForSequenceNode` does).
    pub(super) fn strings_field(
        &mut self,
        m: &mut Msg,
        tag: u32,
        message: &str,
        obj: &Obj,
        key: &str,
    ) {
        match obj.get(key) {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    if let Some(text) = scalar_string(item) {
                        m.repeated_string(tag, &text);
                    }
                }
            }
            Some(_) => self.reject(message, key),
        }
    }

    pub(super) fn any_field(&mut self, m: &mut Msg, tag: u32, obj: &Obj, key: &str) {
        if let Some(value) = obj.get(key) {
            m.message(tag, any(value));
        }
    }

    /// `repeated Any` from a JSON array (`enum`).
    pub(super) fn anys_field(
        &mut self,
        m: &mut Msg,
        tag: u32,
        message: &str,
        obj: &Obj,
        key: &str,
    ) {
        match obj.get(key) {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    m.message(tag, any(item));
                }
            }
            Some(_) => self.reject(message, key),
        }
    }

    /// `repeated NamedAny vendor_extension`: every `x-` key, in order.
    pub(super) fn extensions(&mut self, m: &mut Msg, tag: u32, obj: &Obj) {
        for (key, value) in obj {
            if is_extension(key) {
                m.message(tag, named_any(key, value));
            }
        }
    }

    pub(super) fn sub_message(
        &mut self,
        m: &mut Msg,
        tag: u32,
        message: &str,
        obj: &Obj,
        key: &str,
        build: impl FnOnce(&mut Self, &Obj) -> Msg,
    ) {
        if let Some(value) = obj.get(key) {
            if let Some(inner) = self.object(message, key, value) {
                let built = build(self, inner);
                m.message(tag, built);
            }
        }
    }
}

/// `Any { string yaml = 2 }` (gnostic `NewAny`: `compiler.Marshal` of the node).
fn any(value: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(2, &yaml(value));
    m
}

/// `NamedAny { name = 1, Any value = 2 }`.
pub(super) fn named_any(name: &str, value: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, name);
    m.message(2, any(value));
    m
}
