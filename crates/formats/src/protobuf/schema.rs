//! The message table behind the transcoder: every message of kube's
//! `generated.proto` files (upstream `staging/src/k8s.io/api/<group>/<version>/
//! generated.proto`, `apimachinery/pkg/apis/meta/v1/generated.proto`, ...),
//! keyed by OpenAPI-style name (`io.k8s.api.core.v1.ConfigMap`), as vendored in
//! `crates/formats/data/protobuf-schema.json` by `scripts/vendor-protobuf.py`.
//!
//! Parsed once, on first use (the server does not pay for it at startup).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::ProtobufError;

static SCHEMA_JSON: &[u8] = include_bytes!("../../data/protobuf-schema.json");

/// A proto scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    String,
    Bytes,
    Bool,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Double,
    Float,
}

/// What a field holds: a scalar or a message (index into [`Schema`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Scalar(Scalar),
    Message(usize),
}

/// Cardinality: `optional`, `repeated`, or `map<string, V>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Single,
    Repeated,
    Map,
}

/// How the Go field behind a singular proto field shows in kube's JSON.
/// gogo's generated Marshal writes every non-pointer field, zero or not, so
/// the wire alone cannot tell "unset" from "set to zero".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// A Go pointer (`*int32 replicas`): set means present, zero included.
    Pointer,
    /// A Go value without `omitempty` (`name string json:"name"`): always shown.
    Required,
    /// A Go value with `omitempty`: a zero value is left out.
    OmitEmpty,
}

/// Messages whose JSON form is not an object of their fields; each has a
/// custom MarshalJSON upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WellKnown {
    /// `util/intstr/intstr.go`: {type 1, intVal 2, strVal 3} -> number or string.
    IntOrString,
    /// `api/resource/quantity_proto.go`: {string 1} -> string.
    Quantity,
    /// `apis/meta/v1/time_proto.go`: {seconds 1, nanos 2} -> RFC 3339, seconds only.
    Time,
    /// `apis/meta/v1/micro_time_proto.go`: RFC 3339 with microseconds.
    MicroTime,
    /// `apis/meta/v1/duration.go`: {duration 1 (ns)} -> Go duration string.
    Duration,
    /// `runtime/types_proto.go` RawExtension: {raw 1} -> the embedded JSON.
    RawExtension,
    /// `apis/meta/v1/types.go` FieldsV1: {Raw 1} -> the embedded JSON.
    FieldsV1,
    /// apiextensions `JSON`: {raw 1} -> the embedded JSON.
    Json,
    /// apiextensions `JSONSchemaPropsOrArray`: {schema 1, jSONSchemas 2}.
    JsonOrArray,
    /// apiextensions `JSONSchemaPropsOrBool`: {allows 1, schema 2}.
    JsonOrBool,
    /// apiextensions `JSONSchemaPropsOrStringArray`: {schema 1, property 2}.
    JsonOrStringArray,
    /// Named `[]string` types (`meta/v1 Verbs`, `ExtraValue`): {items 1}.
    StringList,
}

#[derive(Debug)]
pub struct Field {
    /// kube's JSON name; empty for a Go struct embedded with `json:",inline"`
    /// (its fields are flattened into the parent object).
    pub json: String,
    pub tag: u32,
    pub ty: FieldType,
    pub shape: Shape,
    pub presence: Presence,
}

#[derive(Debug)]
pub struct Message {
    pub name: String,
    /// Declaration order (= Go struct order = kube's JSON key order).
    pub fields: Vec<Field>,
    /// Field indexes sorted by tag (wire order for encoding, lookup for decoding).
    pub by_tag: Vec<usize>,
    pub well_known: Option<WellKnown>,
    /// Open-addressing table of JSON name -> rank + 1 (position in `by_tag`;
    /// 0 = empty), so the encoder finds a key's field with one hash and one
    /// comparison instead of probing the object once per schema field.
    json_slots: Vec<u16>,
    /// Ranks of the `json:",inline"` fields (empty JSON name).
    pub inline_ranks: Vec<u16>,
}

impl Message {
    /// Index into `fields` of the field with this number.
    pub fn index_by_tag(&self, tag: u32) -> Option<usize> {
        self.by_tag
            .binary_search_by_key(&tag, |&i| self.fields[i].tag)
            .ok()
            .map(|i| self.by_tag[i])
    }

    pub fn field_by_tag(&self, tag: u32) -> Option<&Field> {
        self.index_by_tag(tag).map(|i| &self.fields[i])
    }

    /// Fields in ascending tag order.
    pub fn fields_by_tag(&self) -> impl Iterator<Item = &Field> {
        self.by_tag.iter().map(|&i| &self.fields[i])
    }

    /// The field at `rank` in tag order.
    pub fn field_at_rank(&self, rank: u16) -> &Field {
        &self.fields[self.by_tag[usize::from(rank)]]
    }

    /// The rank (position in tag order) of the field with this JSON name.
    #[inline]
    pub fn rank_of_json(&self, key: &str) -> Option<u16> {
        if self.json_slots.is_empty() {
            return None;
        }
        let mask = self.json_slots.len() - 1;
        let mut i = (name_hash(key) as usize) & mask;
        loop {
            let slot = self.json_slots[i];
            if slot == 0 {
                return None;
            }
            let rank = slot - 1;
            if self.field_at_rank(rank).json == key {
                return Some(rank);
            }
            i = (i + 1) & mask;
        }
    }

    fn index_json_names(&mut self) {
        let named = self.fields.iter().filter(|f| !f.json.is_empty()).count();
        let size = (named * 4).next_power_of_two().max(4);
        self.json_slots = vec![0; size];
        self.inline_ranks.clear();
        for rank in 0..self.by_tag.len() {
            let json = &self.fields[self.by_tag[rank]].json;
            if json.is_empty() {
                self.inline_ranks.push(rank as u16);
                continue;
            }
            let mut i = (name_hash(json) as usize) & (size - 1);
            while self.json_slots[i] != 0 {
                i = (i + 1) & (size - 1);
            }
            self.json_slots[i] = rank as u16 + 1;
        }
    }
}

/// A cheap hash of a JSON field name: its length and its first, middle and
/// last bytes (one cache line), mixed by one multiplication. Names within a
/// message rarely collide on these; a collision costs a probe.
#[inline]
fn name_hash(key: &str) -> u64 {
    let b = key.as_bytes();
    let n = b.len();
    if n == 0 {
        return 0;
    }
    let x = (n as u64)
        ^ (u64::from(b[0]) << 8)
        ^ (u64::from(b[n - 1]) << 16)
        ^ (u64::from(b[n / 2]) << 24);
    x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 29
}

#[derive(Debug)]
pub struct Schema {
    messages: Vec<Message>,
    index: HashMap<String, usize>,
    /// apiVersion -> kind -> message index.
    kinds: HashMap<String, HashMap<String, usize>>,
}

/// Meta types every group version serves (`metav1.AddToGroupVersion`); the
/// vendored `kinds` table lists them only under their own group.
const META_KINDS: &[&str] = &[
    "Status",
    "WatchEvent",
    "DeleteOptions",
    "ListOptions",
    "GetOptions",
    "CreateOptions",
    "UpdateOptions",
    "PatchOptions",
    "PartialObjectMetadata",
    "PartialObjectMetadataList",
    "APIGroup",
    "APIGroupList",
    "APIResourceList",
    "APIVersions",
];
const META_V1: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";

impl Schema {
    pub fn message(&self, index: usize) -> Option<&Message> {
        self.messages.get(index)
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn by_name(&self, name: &str) -> Option<&Message> {
        self.index_of(name).and_then(|i| self.message(i))
    }

    /// Every (apiVersion, kind) of the vendored kinds table.
    pub fn kinds(&self) -> Vec<(String, String)> {
        self.kinds
            .iter()
            .flat_map(|(api_version, kinds)| {
                kinds
                    .keys()
                    .map(move |kind| (api_version.clone(), kind.clone()))
            })
            .collect()
    }

    /// The message index for an (apiVersion, kind) (see [`Schema::message_for`]).
    pub fn index_for(&self, api_version: &str, kind: &str) -> Option<usize> {
        if let Some(&i) = self.kinds.get(api_version).and_then(|k| k.get(kind)) {
            return Some(i);
        }
        if META_KINDS.contains(&kind) {
            return self.index_of(&format!("{META_V1}{kind}"));
        }
        None
    }

    /// The message for an (apiVersion, kind), as kube's scheme would pick it.
    pub fn message_for(&self, api_version: &str, kind: &str) -> Option<&Message> {
        if let Some(&i) = self.kinds.get(api_version).and_then(|k| k.get(kind)) {
            return self.message(i);
        }
        if META_KINDS.contains(&kind) {
            return self.by_name(&format!("{META_V1}{kind}"));
        }
        None
    }

    fn parse(bytes: &[u8]) -> Result<Schema, String> {
        let doc: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let raw = doc
            .get("messages")
            .and_then(Value::as_object)
            .ok_or("no messages")?;
        let index: HashMap<String, usize> = raw
            .keys()
            .enumerate()
            .map(|(i, k)| (k.clone(), i))
            .collect();
        let mut messages = Vec::with_capacity(raw.len());
        for (name, fields) in raw {
            let fields = fields
                .as_array()
                .ok_or_else(|| format!("{name}: not a list"))?;
            let fields = fields
                .iter()
                .map(|f| parse_field(f, &index).map_err(|e| format!("{name}: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            let mut by_tag: Vec<usize> = (0..fields.len()).collect();
            by_tag.sort_by_key(|&i| fields[i].tag);
            if fields.len() >= usize::from(u16::MAX) {
                return Err(format!("{name}: too many fields"));
            }
            let mut message = Message {
                well_known: well_known(name),
                name: name.clone(),
                fields,
                by_tag,
                json_slots: Vec::new(),
                inline_ranks: Vec::new(),
            };
            message.index_json_names();
            messages.push(message);
        }
        let mut kinds: HashMap<String, HashMap<String, usize>> = HashMap::new();
        if let Some(table) = doc.get("kinds").and_then(Value::as_object) {
            for (api_version, by_kind) in table {
                let entry = kinds.entry(api_version.clone()).or_default();
                for (kind, message) in by_kind.as_object().into_iter().flatten() {
                    let message = message.as_str().unwrap_or_default();
                    let i = *index
                        .get(message)
                        .ok_or_else(|| format!("kind {api_version} {kind}: no {message}"))?;
                    entry.insert(kind.clone(), i);
                }
            }
        }
        Ok(Schema {
            messages,
            index,
            kinds,
        })
    }
}

/// `["name", 1, "*int32"]`: JSON name, tag, type. The type is a scalar or a
/// message name, after an optional `[]` (repeated) or `map[string]`; a
/// singular type may start with `*` (Go pointer), any type with `!` (a Go
/// value, slice or map without omitempty).
fn parse_field(f: &Value, index: &HashMap<String, usize>) -> Result<Field, String> {
    let (json, tag, ty) = match f.as_array().map(Vec::as_slice) {
        Some([json, tag, ty]) => (json.as_str(), tag.as_u64(), ty.as_str()),
        _ => (None, None, None),
    };
    let (Some(json), Some(tag), Some(mut ty)) = (json, tag, ty) else {
        return Err(format!("bad field {f}"));
    };
    let tag = u32::try_from(tag).map_err(|_| format!("bad tag {tag}"))?;
    let mut presence = Presence::OmitEmpty;
    if let Some(rest) = ty.strip_prefix('*') {
        (presence, ty) = (Presence::Pointer, rest);
    } else if let Some(rest) = ty.strip_prefix('!') {
        (presence, ty) = (Presence::Required, rest);
    }
    let mut shape = Shape::Single;
    if let Some(rest) = ty.strip_prefix("[]") {
        (shape, ty) = (Shape::Repeated, rest);
    } else if let Some(rest) = ty.strip_prefix("map[string]") {
        (shape, ty) = (Shape::Map, rest);
    }
    let ty = match ty {
        "string" => FieldType::Scalar(Scalar::String),
        "bytes" => FieldType::Scalar(Scalar::Bytes),
        "bool" => FieldType::Scalar(Scalar::Bool),
        "int32" => FieldType::Scalar(Scalar::Int32),
        "int64" => FieldType::Scalar(Scalar::Int64),
        "uint32" => FieldType::Scalar(Scalar::Uint32),
        "uint64" => FieldType::Scalar(Scalar::Uint64),
        "double" => FieldType::Scalar(Scalar::Double),
        "float" => FieldType::Scalar(Scalar::Float),
        name => FieldType::Message(
            *index
                .get(name)
                .ok_or_else(|| format!("no message {name}"))?,
        ),
    };
    Ok(Field {
        json: json.to_string(),
        tag,
        ty,
        shape,
        presence,
    })
}

fn well_known(name: &str) -> Option<WellKnown> {
    const AX: &str = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.";
    let short = name.rsplit('.').next().unwrap_or_default();
    Some(match name {
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => WellKnown::IntOrString,
        "io.k8s.apimachinery.pkg.api.resource.Quantity"
        | "io.k8s.apimachinery.pkg.api.resource.QuantityValue" => WellKnown::Quantity,
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => WellKnown::Time,
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => WellKnown::MicroTime,
        "io.k8s.apimachinery.pkg.apis.meta.v1.Duration" => WellKnown::Duration,
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1" => WellKnown::FieldsV1,
        "io.k8s.apimachinery.pkg.apis.meta.v1.Verbs" => WellKnown::StringList,
        "io.k8s.apimachinery.pkg.runtime.RawExtension" => WellKnown::RawExtension,
        _ if name.starts_with(AX) => match short {
            "JSON" => WellKnown::Json,
            "JSONSchemaPropsOrArray" => WellKnown::JsonOrArray,
            "JSONSchemaPropsOrBool" => WellKnown::JsonOrBool,
            "JSONSchemaPropsOrStringArray" => WellKnown::JsonOrStringArray,
            _ => return None,
        },
        _ if name.starts_with("io.k8s.api.") && short == "ExtraValue" => WellKnown::StringList,
        _ => return None,
    })
}

static SCHEMA: OnceLock<Result<Schema, String>> = OnceLock::new();

/// The vendored schema, parsed on first use.
pub fn schema() -> Result<&'static Schema, ProtobufError> {
    SCHEMA
        .get_or_init(|| Schema::parse(SCHEMA_JSON))
        .as_ref()
        .map_err(|e| ProtobufError::Schema(e.clone()))
}

/// The protobuf message (OpenAPI-style name) kube uses for an apiVersion and
/// kind, e.g. `("apps/v1", "Deployment")` -> `io.k8s.api.apps.v1.Deployment`;
/// meta kinds (`Status`, `DeleteOptions`, `WatchEvent`, ...) in any group.
/// `None` for kinds without a protobuf form (CRDs, `Table`).
pub fn message_for(api_version: &str, kind: &str) -> Option<&'static str> {
    schema()
        .ok()?
        .message_for(api_version, kind)
        .map(|m| m.name.as_str())
}
