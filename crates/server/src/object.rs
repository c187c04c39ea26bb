//! Objects as the store caches them, and the ObjectMeta accessors handlers share.
//!
//! A cached object version is its served JSON (`apiVersion` and `kind` first,
//! `metadata.resourceVersion` set) plus a small [`ObjectIndex`] of what the
//! hot paths read on every object (name, namespace, uid, labels, lifecycle
//! fields). No `serde_json::Value` tree is kept: [`StoredObject::value`]
//! parses one on demand. The stored bytes carry no `metadata.resourceVersion`
//! (as kube-apiserver stores them in etcd); the cache sets it from the key's
//! mod revision on decode (`storage/etcd3/store.go`, `decode` →
//! `versioner.UpdateObject`), splicing it into the bytes when they are the
//! canonical serde_json form the store writes ([`canonical`]).

pub mod bounds;
mod canonical;
pub mod feed;
pub mod index;

use std::sync::OnceLock;

use bytes::Bytes;
use ferrokube_store::{Codec, KeyValue};
use serde_json::{Map, Value};

pub use index::{IndexView, ObjectIndex, OwnerRef};

/// The store of objects every layer above the store shares.
pub type ObjectStore = ferrokube_store::Store<ObjectCodec>;

/// One cached object version. Small: 100,000 of them are the cache.
pub enum StoredObject {
    Decoded {
        /// The served JSON encoding: the object itself.
        json: Bytes,
        /// Also where the JSON's body starts (after the type fields).
        index: ObjectIndex,
        /// Other encodings, on first use. Boxed: most objects are only ever
        /// read as JSON.
        encodings: OnceLock<Box<Encodings>>,
    },
    /// Stored bytes that do not decode (kube can only delete such objects).
    Corrupt { error: String },
}

impl StoredObject {
    fn decoded(json: Encoded, mut index: ObjectIndex) -> Self {
        index.set_body_start(json.body_start);
        StoredObject::Decoded {
            json: json.bytes,
            index,
            encodings: OnceLock::new(),
        }
    }

    fn encodings(&self) -> Option<&Encodings> {
        match self {
            StoredObject::Decoded { encodings, .. } => {
                Some(encodings.get_or_init(Default::default))
            }
            StoredObject::Corrupt { .. } => None,
        }
    }

    /// The object as a tree, parsed from its JSON on each call (a few µs per
    /// KiB): for encoders other than JSON and read-modify-write bases. Hot
    /// paths read [`Self::index`] instead.
    pub fn value(&self) -> Option<Value> {
        match self {
            StoredObject::Decoded { json, .. } => serde_json::from_slice(json).ok(),
            StoredObject::Corrupt { .. } => None,
        }
    }

    /// What list/watch filters and controllers read without parsing.
    pub fn index(&self) -> Option<IndexView<'_>> {
        match self {
            StoredObject::Decoded { json, index, .. } => Some(IndexView { json, index }),
            StoredObject::Corrupt { .. } => None,
        }
    }

    /// `apiVersion` and `kind` (`""` when missing or not strings), read from
    /// the head of the JSON without parsing the rest.
    pub fn type_fields(&self) -> Option<(String, String)> {
        let json = self.json()?;
        canonical::type_fields(json).or_else(|| {
            let value = self.value()?;
            let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
            Some((text("apiVersion").to_string(), text("kind").to_string()))
        })
    }

    /// Why the stored bytes do not decode, for a corrupt object.
    pub fn corrupt_error(&self) -> Option<&str> {
        match self {
            StoredObject::Decoded { .. } => None,
            StoredObject::Corrupt { error } => Some(error),
        }
    }

    /// The JSON encoding.
    pub fn json(&self) -> Option<&Bytes> {
        match self {
            StoredObject::Decoded { json, .. } => Some(json),
            StoredObject::Corrupt { .. } => None,
        }
    }

    /// The JSON encoding as a list item: without `apiVersion` and `kind`, as
    /// kube encodes items of built-in lists. Written as `{` + this slice.
    pub fn item_body(&self) -> Option<Bytes> {
        match self {
            StoredObject::Decoded { json, index, .. } => {
                Some(json.slice(index.body_start().min(json.len())..))
            }
            StoredObject::Corrupt { .. } => None,
        }
    }

    /// The protobuf message of the object (kube's RawSerializer form), cached.
    pub fn protobuf(&self) -> Option<&Bytes> {
        self.encodings()?
            .protobuf
            .get_or_init(|| {
                let value = self.value()?;
                crate::protobuf::encode_message_of(&value).map(Bytes::from)
            })
            .as_ref()
    }

    /// The object as a CBOR list item (no tag, no type fields), cached.
    pub fn cbor_item(&self) -> Option<&Bytes> {
        Some(self.encodings()?.cbor_item.get_or_init(|| {
            let value = self.value().unwrap_or(Value::Null);
            Bytes::from(crate::cbor::encode_list_item(&value))
        }))
    }
}

/// The encodings of an object version other than JSON, each produced on first use.
#[derive(Default)]
pub struct Encodings {
    /// The protobuf message (no envelope); `None` for kinds without a
    /// protobuf form (`crate::protobuf`).
    protobuf: OnceLock<Option<Bytes>>,
    /// The CBOR list-item form (`cbor::encode_list_item`).
    cbor_item: OnceLock<Bytes>,
}

/// One object's JSON with `apiVersion` and `kind` first, so that a list can
/// reuse the same bytes without them.
pub struct Encoded {
    pub bytes: Bytes,
    /// Offset of the first field after the type fields (or of the closing brace).
    body_start: usize,
}

impl Encoded {
    fn from_value(value: &Value) -> Self {
        let Some(map) = value.as_object() else {
            return Encoded {
                bytes: Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
                body_start: 0,
            };
        };
        let mut out = Vec::with_capacity(512);
        out.push(b'{');
        let mut first = true;
        let write_field = |out: &mut Vec<u8>, key: &str, value: &Value, first: &mut bool| {
            if !*first {
                out.push(b',');
            }
            *first = false;
            let _ = serde_json::to_writer(&mut *out, key);
            out.push(b':');
            let _ = serde_json::to_writer(&mut *out, value);
        };
        for key in ["apiVersion", "kind"] {
            if let Some(field) = map.get(key) {
                write_field(&mut out, key, field, &mut first);
            }
        }
        let mut body_start = None;
        for (key, field) in map
            .iter()
            .filter(|(key, _)| *key != "apiVersion" && *key != "kind")
        {
            if body_start.is_none() {
                if !first {
                    out.push(b',');
                    first = true;
                }
                body_start = Some(out.len());
            }
            write_field(&mut out, key, field, &mut first);
        }
        let body_start = body_start.unwrap_or(out.len());
        out.push(b'}');
        Encoded {
            bytes: Bytes::from(out),
            body_start,
        }
    }
}

/// Decodes stored JSON and stamps `metadata.resourceVersion`.
#[derive(Debug, Default, Clone, Copy)]
pub struct ObjectCodec;

impl Codec for ObjectCodec {
    type Object = StoredObject;

    fn decode(&self, kv: &KeyValue) -> StoredObject {
        decode_bytes(&kv.value, kv.mod_revision)
    }

    fn deleted(&self, previous: &StoredObject, revision: i64) -> StoredObject {
        match previous {
            // The served JSON is canonical: re-stamp it. The index is rebuilt
            // with it, as its ranges move with the resourceVersion's length.
            StoredObject::Decoded { json, .. } => match canonical::stamp(json, revision) {
                Some((bytes, body_start, index)) => StoredObject::decoded(
                    Encoded {
                        bytes: Bytes::from(bytes),
                        body_start,
                    },
                    index,
                ),
                None => decode_bytes(json, revision),
            },
            StoredObject::Corrupt { error } => StoredObject::Corrupt {
                error: error.clone(),
            },
        }
    }
}

/// The cached form of stored (or served) JSON, with its resourceVersion set to
/// `revision`: spliced into the bytes when they are canonical, through a
/// parsed tree otherwise.
fn decode_bytes(stored: &[u8], revision: i64) -> StoredObject {
    if let Some((bytes, body_start, index)) = canonical::stamp(stored, revision) {
        return StoredObject::decoded(
            Encoded {
                bytes: Bytes::from(bytes),
                body_start,
            },
            index,
        );
    }
    match serde_json::from_slice::<Value>(stored) {
        Ok(mut value) if value.is_object() => {
            set_resource_version(&mut value, revision);
            let json = Encoded::from_value(&value);
            let index = ObjectIndex::scan(&json.bytes);
            StoredObject::decoded(json, index)
        }
        Ok(_) => StoredObject::Corrupt {
            error: "stored value is not a JSON object".into(),
        },
        Err(error) => StoredObject::Corrupt {
            error: error.to_string(),
        },
    }
}

/// A cached object version made from a served tree (an object converted on
/// read): as the store's decoder would cache it, at the tree's own
/// `metadata.resourceVersion`.
pub fn stored_from_value(value: &Value) -> StoredObject {
    let revision = resource_version(value).parse().unwrap_or(0);
    decode_bytes(&serde_json::to_vec(value).unwrap_or_default(), revision)
}

/// The storage form of an object: JSON without `metadata.resourceVersion`
/// (copied without it only when it has one: a create's object has none).
pub fn storage_bytes(object: &Value) -> Bytes {
    storage_bytes_as(object, None)
}

/// [`storage_bytes`] with `apiVersion` set to `api_version` when given (a
/// custom resource stored at its storage version): one copy at most, and
/// none when nothing changes.
pub fn storage_bytes_as(object: &Value, api_version: Option<&str>) -> Bytes {
    let has_resource_version =
        metadata(object).is_some_and(|metadata| metadata.contains_key("resourceVersion"));
    let api_version = api_version
        .filter(|wanted| object.get("apiVersion").and_then(Value::as_str) != Some(*wanted));
    if has_resource_version || api_version.is_some() {
        let mut object = object.clone();
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("resourceVersion");
        }
        if let (Some(map), Some(api_version)) = (object.as_object_mut(), api_version) {
            map.insert("apiVersion".into(), Value::String(api_version.to_string()));
        }
        return Bytes::from(serde_json::to_vec(&object).unwrap_or_default());
    }
    Bytes::from(serde_json::to_vec(object).unwrap_or_default())
}

/// An object's served JSON (`apiVersion` and `kind` first, as the cache
/// holds it) from a tree: what a cached object's JSON would be.
pub fn served_json(value: &Value) -> Bytes {
    Encoded::from_value(value).bytes
}

pub fn set_resource_version(object: &mut Value, revision: i64) {
    if let Some(metadata) = metadata_mut(object) {
        metadata.insert(
            "resourceVersion".into(),
            Value::String(revision.to_string()),
        );
    }
}

/// The strings of a JSON array, skipping other items (a missing or
/// non-array value is empty): how rules' string lists are read.
pub fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata`, created as an empty map when missing or not a map.
pub fn metadata_mut(object: &mut Value) -> Option<&mut Map<String, Value>> {
    let map = object.as_object_mut()?;
    let metadata = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    metadata.as_object_mut()
}

pub fn metadata(object: &Value) -> Option<&Map<String, Value>> {
    object.get("metadata").and_then(Value::as_object)
}

/// A string field of `metadata`, `""` when missing.
pub fn meta_str<'a>(object: &'a Value, field: &str) -> &'a str {
    metadata(object)
        .and_then(|metadata| metadata.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub fn name(object: &Value) -> &str {
    meta_str(object, "name")
}

pub fn namespace(object: &Value) -> &str {
    meta_str(object, "namespace")
}

pub fn resource_version(object: &Value) -> &str {
    meta_str(object, "resourceVersion")
}

pub fn labels(object: &Value) -> Option<&Map<String, Value>> {
    metadata(object)
        .and_then(|metadata| metadata.get("labels"))
        .and_then(Value::as_object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_stamps_resource_version_and_flags_corruption() {
        let kv = |value: &str| KeyValue {
            key: "/registry/configmaps/default/a".into(),
            value: Bytes::from(value.to_string()),
            create_revision: 3,
            mod_revision: 7,
        };
        let decoded = ObjectCodec.decode(&kv(r#"{"metadata":{"name":"a"}}"#));
        assert_eq!(decoded.value().as_ref().map(resource_version), Some("7"));
        assert!(matches!(
            ObjectCodec.decode(&kv("{not json")),
            StoredObject::Corrupt { .. }
        ));
        assert!(matches!(
            ObjectCodec.decode(&kv("[1]")),
            StoredObject::Corrupt { .. }
        ));
        let stored = storage_bytes(&decoded.value().expect("decoded"));
        let typed = ObjectCodec.decode(&kv(
            r#"{"metadata":{"name":"a"},"kind":"ConfigMap","apiVersion":"v1","data":{"k":"v"}}"#,
        ));
        let json = typed.json().expect("json");
        assert_eq!(
            &json[..],
            br#"{"apiVersion":"v1","kind":"ConfigMap","data":{"k":"v"},"metadata":{"name":"a","resourceVersion":"7"}}"#
        );
        let reparsed: Value = serde_json::from_slice(json).expect("valid json");
        assert_eq!(Some(reparsed), typed.value());
        assert_eq!(
            &typed.item_body().expect("item")[..],
            br#""data":{"k":"v"},"metadata":{"name":"a","resourceVersion":"7"}}"#
        );
        let bare = Encoded::from_value(&serde_json::json!({"apiVersion": "v1", "kind": "X"}));
        assert_eq!(&bare.bytes[bare.body_start..], b"}");
        let untyped = Encoded::from_value(&serde_json::json!({"a": 1}));
        assert_eq!(&untyped.bytes[untyped.body_start..], br#""a":1}"#);
        assert_eq!(&stored[..], br#"{"metadata":{"name":"a"}}"#);
        // Without a resourceVersion the object is stored as it serializes.
        let fresh = serde_json::json!({"metadata": {"name": "a"}, "data": {"k": "v"}});
        assert_eq!(
            &storage_bytes(&fresh)[..],
            br#"{"data":{"k":"v"},"metadata":{"name":"a"}}"#
        );
    }
}
