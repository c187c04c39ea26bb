//! `json.Unmarshal` of annotation values into Go types, with the errors
//! Go's `encoding/json` gives (`SyntaxError`, the first `UnmarshalTypeError`
//! in body order with its `Struct.field` context, a `metav1.Time` parse
//! error), for the annotations kube decodes and validates: a Node's taints
//! and avoid-pods, a Pod's tolerations.
//!
//! A number Go cannot store in an integer field is named by its literal in
//! Go's error; serde reads non-integral numbers as `f64`, so such a literal
//! is printed as Rust prints the `f64` (`1.5`, but `1e3` as `1000`).

use serde_json::{Map, Value};

/// The Go type a value decodes into, as far as `encoding/json` tells types
/// apart in its errors.
pub enum Shape {
    /// A string kind, named as Go prints its type.
    Str(&'static str),
    Bool,
    /// A signed integer kind (`int64`, also behind a pointer).
    Int(&'static str),
    /// `metav1.Time` (its `UnmarshalJSON`).
    Time,
    /// A struct: its type's name (`Struct.Name()`), its `%v` type, and its
    /// fields by JSON name.
    Struct(&'static str, &'static str, &'static [(&'static str, Shape)]),
    Slice(&'static str, &'static Shape),
}

/// `encoding/json`'s decoding state: the first type error is kept and
/// decoding goes on; an `UnmarshalJSON` error (a time) stops it.
#[derive(Default)]
struct Decoder {
    struct_name: Option<&'static str>,
    stack: Vec<&'static str>,
    saved: Option<String>,
    aborted: Option<String>,
}

/// A JSON value with its object members in body order (Go decodes them in
/// that order, so the first type error is the first in the text), duplicates
/// kept.
enum Ordered {
    Null,
    Bool(bool),
    /// A number: its value when it is an integer Go's `ParseInt` reads,
    /// and its literal.
    Number(Option<i64>, String),
    String(String),
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Ordered;
            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Null)
            }
            fn visit_none<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Null)
            }
            fn visit_bool<E>(self, value: bool) -> Result<Ordered, E> {
                Ok(Ordered::Bool(value))
            }
            fn visit_i64<E>(self, value: i64) -> Result<Ordered, E> {
                Ok(Ordered::Number(Some(value), value.to_string()))
            }
            fn visit_u64<E>(self, value: u64) -> Result<Ordered, E> {
                Ok(Ordered::Number(
                    i64::try_from(value).ok(),
                    value.to_string(),
                ))
            }
            fn visit_f64<E>(self, value: f64) -> Result<Ordered, E> {
                Ok(Ordered::Number(None, value.to_string()))
            }
            fn visit_str<E>(self, value: &str) -> Result<Ordered, E> {
                Ok(Ordered::String(value.to_string()))
            }
            fn visit_string<E>(self, value: String) -> Result<Ordered, E> {
                Ok(Ordered::String(value))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Ordered, A::Error> {
                let mut members = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Ordered>()? {
                    members.push((key, value));
                }
                Ok(Ordered::Object(members))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl Ordered {
    /// The JSON kind Go names in `UnmarshalTypeError`.
    fn go_kind(&self) -> &'static str {
        match self {
            Ordered::Null => "null",
            Ordered::Bool(_) => "bool",
            Ordered::Number(..) => "number",
            Ordered::String(_) => "string",
            Ordered::Array(_) => "array",
            Ordered::Object(_) => "object",
        }
    }
}

impl Decoder {
    /// `UnmarshalTypeError.Error()` with the context `addErrorContext` adds.
    fn type_error(&self, kind: &str, go_type: &str) -> String {
        match self.struct_name {
            Some(name) if !self.stack.is_empty() => format!(
                "json: cannot unmarshal {kind} into Go struct field {name}.{} of type {go_type}",
                self.stack.join(".")
            ),
            _ => format!("json: cannot unmarshal {kind} into Go value of type {go_type}"),
        }
    }

    fn save(&mut self, error: String) {
        if self.saved.is_none() {
            self.saved = Some(error);
        }
    }

    /// The value as the Go type holds it (null and wrong-typed fields at
    /// their zero values, unknown fields dropped).
    fn decode(&mut self, value: &Ordered, shape: &'static Shape) -> Value {
        if self.aborted.is_some() {
            return Value::Null;
        }
        match (shape, value) {
            (_, Ordered::Null) => Value::Null,
            (Shape::Str(_), Ordered::String(text)) => Value::String(text.clone()),
            (Shape::Bool, Ordered::Bool(flag)) => Value::Bool(*flag),
            (Shape::Str(go_type), other) => {
                self.save(self.type_error(other.go_kind(), go_type));
                Value::Null
            }
            (Shape::Bool, other) => {
                self.save(self.type_error(other.go_kind(), "bool"));
                Value::Null
            }
            (Shape::Int(_), Ordered::Number(Some(number), _)) => Value::from(*number),
            (Shape::Int(go_type), Ordered::Number(None, literal)) => {
                // `UnmarshalTypeError{Value: "number " + literal}`.
                self.save(self.type_error(&format!("number {literal}"), go_type));
                Value::Null
            }
            (Shape::Int(go_type), other) => {
                self.save(self.type_error(other.go_kind(), go_type));
                Value::Null
            }
            (Shape::Time, Ordered::String(text)) => {
                if let Err(error) = crate::go::time_parse::parse_go_time(text, false) {
                    self.aborted = Some(error);
                }
                Value::String(text.clone())
            }
            (Shape::Time, other) => {
                self.aborted = Some(self.type_error(other.go_kind(), "string"));
                Value::Null
            }
            (Shape::Struct(name, _, fields), Ordered::Object(members)) => {
                let mut decoded = Map::new();
                for (key, item) in members {
                    let Some((json_name, field_shape)) = fields
                        .iter()
                        .find(|(name, _)| name.eq_ignore_ascii_case(key))
                    else {
                        continue;
                    };
                    let outer = self.struct_name.replace(name);
                    self.stack.push(json_name);
                    let item = self.decode(item, field_shape);
                    self.stack.pop();
                    self.struct_name = outer;
                    if self.aborted.is_some() {
                        return Value::Null;
                    }
                    decoded.insert((*json_name).to_string(), item);
                }
                Value::Object(decoded)
            }
            (Shape::Struct(_, go_type, _), other) => {
                self.save(self.type_error(other.go_kind(), go_type));
                Value::Null
            }
            (Shape::Slice(_, element), Ordered::Array(items)) => Value::Array(
                items
                    .iter()
                    .map(|item| self.decode(item, element))
                    .collect(),
            ),
            (Shape::Slice(go_type, _), other) => {
                self.save(self.type_error(other.go_kind(), go_type));
                Value::Null
            }
        }
    }
}

/// `json.Unmarshal([]byte(text), &shape)`: the decoded value or the error text.
pub fn unmarshal(text: &str, shape: &'static Shape) -> Result<Value, String> {
    if let Some(syntax) = crate::decode_error::go_json_syntax_error(text.as_bytes()) {
        return Err(syntax);
    }
    let value: Ordered = serde_json::from_str(text).map_err(|error| error.to_string())?;
    let mut decoder = Decoder::default();
    let decoded = decoder.decode(&value, shape);
    match (decoder.aborted, decoder.saved) {
        (Some(error), _) | (None, Some(error)) => Err(error),
        (None, None) => Ok(decoded),
    }
}
