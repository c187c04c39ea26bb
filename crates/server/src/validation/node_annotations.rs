//! A Node's own annotations (`pkg/apis/core/validation/validation.go`
//! `ValidateNodeSpecificAnnotations`): the JSON of
//! `scheduler.alpha.kubernetes.io/taints` (`ValidateTaintsInNodeAnnotations`:
//! decoded as `[]core.Taint`, then `validateNodeTaints`) and of
//! `scheduler.alpha.kubernetes.io/preferAvoidPods`
//! (`ValidateAvoidPodsInNodeAnnotations`: decoded as `v1.AvoidPods`, each
//! entry's pod controller required and a controller). A value Go's
//! `encoding/json` cannot decode is reported with its error, as kube does.

use serde_json::{Map, Value};

use super::field::{self, child, index};
use crate::status::FieldError;

const TAINTS: &str = "scheduler.alpha.kubernetes.io/taints";
const PREFER_AVOID_PODS: &str = "scheduler.alpha.kubernetes.io/preferAvoidPods";

/// The Go types the two annotations decode into, as far as `encoding/json`
/// tells them apart in its errors.
enum Shape {
    /// A string kind, named as Go prints its type.
    Str(&'static str),
    Bool,
    /// `metav1.Time` (its `UnmarshalJSON`).
    Time,
    /// A struct: its type's name (`Struct.Name()`), its `%v` type, and its
    /// fields by JSON name.
    Struct(&'static str, &'static str, &'static [(&'static str, Shape)]),
    Slice(&'static str, &'static Shape),
}

static TAINT: Shape = Shape::Struct(
    "Taint",
    "core.Taint",
    &[
        ("key", Shape::Str("string")),
        ("value", Shape::Str("string")),
        ("effect", Shape::Str("core.TaintEffect")),
        ("timeAdded", Shape::Time),
    ],
);
static TAINT_LIST: Shape = Shape::Slice("[]core.Taint", &TAINT);

/// The owner reference a pod signature holds (constants, so that the
/// struct field tables can embed them).
const OWNER_REFERENCE_REF: Shape = Shape::Struct(
    "OwnerReference",
    "v1.OwnerReference",
    &[
        ("apiVersion", Shape::Str("string")),
        ("kind", Shape::Str("string")),
        ("name", Shape::Str("string")),
        ("uid", Shape::Str("types.UID")),
        ("controller", Shape::Bool),
        ("blockOwnerDeletion", Shape::Bool),
    ],
);
static AVOID_ENTRY: Shape = Shape::Struct(
    "PreferAvoidPodsEntry",
    "v1.PreferAvoidPodsEntry",
    &[
        ("podSignature", POD_SIGNATURE_REF),
        ("evictionTime", Shape::Time),
        ("reason", Shape::Str("string")),
        ("message", Shape::Str("string")),
    ],
);
const POD_SIGNATURE_REF: Shape = Shape::Struct(
    "PodSignature",
    "v1.PodSignature",
    &[("podController", OWNER_REFERENCE_REF)],
);
static AVOID_PODS: Shape = Shape::Struct(
    "AvoidPods",
    "v1.AvoidPods",
    &[(
        "preferAvoidPods",
        Shape::Slice("[]v1.PreferAvoidPodsEntry", &AVOID_ENTRY),
    )],
);

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
    Number,
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
            fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Number)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Number)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Number)
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
            Ordered::Number => "number",
            Ordered::String(_) => "string",
            Ordered::Array(_) => "array",
            Ordered::Object(_) => "object",
        }
    }
}

impl Decoder {
    /// `UnmarshalTypeError.Error()` with the context `addErrorContext` adds.
    fn type_error(&self, value: &Ordered, go_type: &str) -> String {
        match self.struct_name {
            Some(name) if !self.stack.is_empty() => format!(
                "json: cannot unmarshal {} into Go struct field {name}.{} of type {go_type}",
                value.go_kind(),
                self.stack.join(".")
            ),
            _ => format!(
                "json: cannot unmarshal {} into Go value of type {go_type}",
                value.go_kind()
            ),
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
                self.save(self.type_error(other, go_type));
                Value::Null
            }
            (Shape::Bool, other) => {
                self.save(self.type_error(other, "bool"));
                Value::Null
            }
            (Shape::Time, Ordered::String(text)) => {
                if let Err(error) = crate::go::time_parse::parse_go_time(text, false) {
                    self.aborted = Some(error);
                }
                Value::String(text.clone())
            }
            (Shape::Time, other) => {
                self.aborted = Some(self.type_error(other, "string"));
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
                self.save(self.type_error(other, go_type));
                Value::Null
            }
            (Shape::Slice(_, element), Ordered::Array(items)) => Value::Array(
                items
                    .iter()
                    .map(|item| self.decode(item, element))
                    .collect(),
            ),
            (Shape::Slice(go_type, _), other) => {
                self.save(self.type_error(other, go_type));
                Value::Null
            }
        }
    }
}

/// `json.Unmarshal([]byte(text), &shape)`: the decoded value or the error text.
fn unmarshal(text: &str, shape: &'static Shape) -> Result<Value, String> {
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

/// `ValidateNodeSpecificAnnotations` of the object's annotations.
pub fn node_specific_annotations(object: &Value, errors: &mut Vec<FieldError>) {
    let annotations = object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object);
    let text = |key: &str| {
        annotations
            .and_then(|annotations| annotations.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let path = "metadata.annotations";
    let taints = text(TAINTS);
    if !taints.is_empty() {
        match unmarshal(taints, &TAINT_LIST) {
            Err(error) => errors.push(field::invalid(path, TAINTS, error)),
            Ok(list) => {
                let list = list.as_array().cloned().unwrap_or_default();
                super::node::taint_list(&list, &child(path, TAINTS), errors);
            }
        }
    }
    let avoid = text(PREFER_AVOID_PODS);
    if !avoid.is_empty() {
        let avoid_path = child(path, "AvoidPods");
        match unmarshal(avoid, &AVOID_PODS) {
            Err(error) => errors.push(field::invalid(&avoid_path, PREFER_AVOID_PODS, error)),
            Ok(avoids) => {
                for (position, entry) in field::items_at(&avoids, "preferAvoidPods")
                    .iter()
                    .enumerate()
                {
                    prefer_avoid_pods_entry(
                        entry,
                        &index(&child(path, PREFER_AVOID_PODS), position),
                        errors,
                    );
                }
            }
        }
    }
}

/// `validatePreferAvoidPodsEntry`: a pod controller, which is a controller.
/// (kube dereferences a missing `controller` and fails with a 500; it is
/// reported here as not a controller.)
fn prefer_avoid_pods_entry(entry: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let signature_path = child(path, "PodSignature");
    let Some(controller) = entry
        .pointer("/podSignature/podController")
        .filter(|controller| !controller.is_null())
    else {
        errors.push(field::required(&signature_path, ""));
        return;
    };
    if controller.get("controller").and_then(Value::as_bool) != Some(true) {
        errors.push(field::invalid_rendered(
            &child(&child(&signature_path, "PodController"), "Controller"),
            "false",
            "must point to a controller",
        ));
    }
}

#[cfg(test)]
#[path = "node_annotations_tests.rs"]
mod tests;
