//! Custom resources between the versions of their CRD, for
//! `spec.conversion.strategy: None` (apiextensions-apiserver
//! `pkg/apiserver/conversion/nop_converter.go`: only `apiVersion` changes,
//! and each item of a list gets it):
//!
//! - a write at any served version is stored at the storage version
//!   (`customresource_handler.go`, `crdConversionRESTOptionsGetter`: the
//!   storage codec encodes to `encoderVersion`): [`CustomVersion::storage_api_version`];
//! - every object read is served at the request's version, after the
//!   defaults of the schema of the version it is stored as (the storage
//!   codec's `unstructuredDefaulter`, which picks the schema by the stored
//!   object's version): [`served_json`] for a cached object (its JSON shared
//!   when nothing changes, the `apiVersion` spliced into a copy when only it
//!   changes, the tree path when defaults apply), [`serve`] for a tree.
//!
//! For `Webhook` conversion these functions leave objects as they are:
//! `api/conversion.rs` calls the webhook (`webhook.rs`) on the async paths
//! before anything here reads them.

use bytes::Bytes;
use serde_json::Value;

use super::definition::CompiledSchema;
use super::definition::CustomVersion;
use super::schema;
use crate::object::{self, StoredObject};
use crate::schema::Model;

/// `spec.conversion.strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConversionStrategy {
    /// The default: versions differ only in `apiVersion`.
    None,
    /// A conversion webhook (`webhook.rs`, called by `api/conversion.rs`).
    Webhook,
}

impl ConversionStrategy {
    pub fn of_crd(crd: &Value) -> Self {
        match crd
            .pointer("/spec/conversion/strategy")
            .and_then(Value::as_str)
        {
            Some("Webhook") => ConversionStrategy::Webhook,
            _ => ConversionStrategy::None,
        }
    }
}

/// The compiled schemas of a CRD's versions that have defaults, by
/// `<group>/<version>`: what defaulting on read needs. Versions without
/// defaults are left out, so most objects are read without parsing.
#[derive(Debug, Default, PartialEq)]
pub struct ReadDefaults {
    by_api_version: Vec<(String, CompiledSchema)>,
}

impl ReadDefaults {
    /// From every version's compiled schema (served or not: objects may be
    /// stored at any), sharing them.
    pub fn of_compiled(group: &str, versions: &[(&str, Option<CompiledSchema>)]) -> Self {
        let by_api_version = versions
            .iter()
            .filter_map(|(name, compiled)| {
                let compiled = compiled.as_ref()?;
                schema::has_defaults(compiled.model())
                    .then(|| (format!("{group}/{name}"), compiled.clone()))
            })
            .collect();
        ReadDefaults { by_api_version }
    }

    /// The schema with defaults of the version `api_version` names.
    fn for_api_version(&self, api_version: &str) -> Option<&Model> {
        self.by_api_version
            .iter()
            .find(|(known, _)| known == api_version)
            .map(|(_, compiled)| compiled.model())
    }
}

impl CustomVersion {
    /// Objects change between versions (strategy `None`).
    fn converts(&self) -> bool {
        self.conversion == ConversionStrategy::None
    }

    /// The `apiVersion` an object written through this version is stored
    /// as; `None` when it is stored as written (webhook conversion, or a CRD
    /// without a storage version).
    pub fn storage_api_version(&self) -> Option<&str> {
        (self.converts() && !self.storage_api_version.is_empty())
            .then_some(self.storage_api_version.as_str())
    }
}

/// A stored object's JSON as served at `custom`'s version. Shares the cached
/// bytes when the object is stored at that version and its stored version's
/// schema has no defaults; splices the `apiVersion` when only it differs.
pub fn served_json(object: &StoredObject, custom: &CustomVersion) -> Option<Bytes> {
    let json = object.json()?;
    if !custom.converts() {
        return Some(json.clone());
    }
    if let Some(stored) = head_api_version(json) {
        if custom.read_defaults.for_api_version(stored).is_none() {
            if stored == custom.api_version {
                return Some(json.clone());
            }
            if let Some(spliced) = splice_api_version(json, &custom.api_version) {
                return Some(spliced);
            }
        }
    }
    served_value(object, custom).map(|value| object::served_json(&value))
}

/// A stored object as a tree, as served at `custom`'s version.
pub fn served_value(object: &StoredObject, custom: &CustomVersion) -> Option<Value> {
    let mut value = object.value()?;
    serve(&mut value, custom);
    Some(value)
}

/// A custom resource read from storage (or just written), as served at
/// `custom`'s version: the defaults of the version it is stored as, then
/// `apiVersion` set to the request's.
pub fn serve(value: &mut Value, custom: &CustomVersion) {
    if !custom.converts() {
        return;
    }
    default_as_stored(value, custom);
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "apiVersion".into(),
            Value::String(custom.api_version.clone()),
        );
    }
}

/// The defaults of the schema of the version `value` is stored as (the
/// storage codec's `unstructuredDefaulter`): what an object gets on read
/// before any conversion, webhook conversion too.
pub fn default_as_stored(value: &mut Value, custom: &CustomVersion) {
    let defaults = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|stored| custom.read_defaults.for_api_version(stored));
    if let Some(defaults) = defaults {
        schema::default(value, defaults);
    }
}

/// A handler's answer as served at `custom`'s version: an object of the
/// custom kind, or each item of its list (deletecollection); anything else
/// (a `Status`) is left alone.
pub fn serve_response(value: &mut Value, custom: &CustomVersion, kind: &str, list_kind: &str) {
    let group_prefix = match custom.api_version.rsplit_once('/') {
        Some((group, _)) => format!("{group}/"),
        None => return,
    };
    let of_group = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .is_some_and(|api_version| api_version.starts_with(&group_prefix));
    if !of_group {
        return;
    }
    match value.get("kind").and_then(Value::as_str) {
        Some(found) if found == kind => serve(value, custom),
        Some(found) if found == list_kind => {
            if let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) {
                for item in items {
                    serve(item, custom);
                }
            }
        }
        _ => {}
    }
}

/// What served JSON starts with: `apiVersion` first (`object.rs`).
const HEAD: &[u8] = br#"{"apiVersion":""#;

/// The `apiVersion` at the head of served JSON, when it is a plain string
/// (no escapes).
pub fn head_api_version(json: &[u8]) -> Option<&str> {
    let rest = json.strip_prefix(HEAD)?;
    let end = rest
        .iter()
        .position(|&byte| byte == b'"' || byte == b'\\')?;
    if rest[end] != b'"' {
        return None;
    }
    std::str::from_utf8(&rest[..end]).ok()
}

/// `json` with its head `apiVersion` replaced by `api_version`, without
/// parsing the rest; `None` when the head is not a plain `apiVersion`.
fn splice_api_version(json: &[u8], api_version: &str) -> Option<Bytes> {
    let stored = head_api_version(json)?;
    let rest = &json[HEAD.len() + stored.len() + 1..];
    let quoted = serde_json::to_string(api_version).ok()?;
    let mut out = Vec::with_capacity(json.len() + quoted.len());
    out.extend_from_slice(&HEAD[..HEAD.len() - 1]);
    out.extend_from_slice(quoted.as_bytes());
    out.extend_from_slice(rest);
    Some(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrokube_store::{Codec, KeyValue};
    use serde_json::json;
    use std::sync::Arc;

    fn stored(value: &Value) -> StoredObject {
        object::ObjectCodec.decode(&KeyValue {
            key: "/registry/example.com/widgets/default/w".into(),
            value: Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
            create_revision: 4,
            mod_revision: 9,
        })
    }

    fn crd(strategy: Option<&str>, defaults: bool) -> Value {
        let mut schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer"},
        }}}});
        if defaults {
            schema["properties"]["spec"]["properties"]["size"]["default"] = json!(3);
        }
        let mut crd = json!({
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [
                    {"name": "v1beta1", "served": true, "storage": false, "schema": {"openAPIV3Schema": schema}},
                    {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}},
                ],
            },
            "status": {
                "acceptedNames": {"plural": "widgets", "kind": "Widget"},
                "conditions": [{"type": "Established", "status": "True"}],
            },
        });
        if let Some(strategy) = strategy {
            crd["spec"]["conversion"] = json!({"strategy": strategy});
        }
        crd
    }

    fn version(crd: &Value, name: &str) -> CustomVersion {
        super::super::served_versions(crd)
            .into_iter()
            .map(|(_, custom)| custom)
            .find(|custom| custom.api_version == format!("example.com/{name}"))
            .expect("served version")
    }

    /// Objects whose head can be spliced: escapes, unicode, keys that sort
    /// before `apiVersion`, numbers and nesting elsewhere.
    fn objects() -> Vec<Value> {
        vec![
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}),
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "Zed": 1, "_x": [1, {"a": "b"}],
                   "metadata": {"name": "w", "labels": {"a\"b": "c\\d"}}, "spec": {"text": "é ✓ \u{1F600}\n"}}),
            json!({"kind": "Widget", "apiVersion": "example.com/v1beta1", "metadata": {"name": "w"}, "spec": {"size": 1}}),
            json!({"apiVersion": "example.com/v1", "metadata": {"name": "w"}}),
        ]
    }

    #[test]
    fn the_splice_is_the_tree_path() {
        let crd = crd(None, false);
        for target in ["v1", "v1beta1"] {
            let custom = version(&crd, target);
            for value in objects() {
                let object = stored(&value);
                let spliced = served_json(&object, &custom).expect("served");
                let by_tree = object::served_json(&served_value(&object, &custom).expect("value"));
                assert_eq!(
                    String::from_utf8_lossy(&spliced),
                    String::from_utf8_lossy(&by_tree)
                );
                let parsed: Value = serde_json::from_slice(&spliced).expect("valid JSON");
                assert_eq!(parsed["apiVersion"], format!("example.com/{target}"));
                let mut expected = object.value().expect("value");
                expected["apiVersion"] = json!(format!("example.com/{target}"));
                assert_eq!(parsed, expected, "nothing but apiVersion changes");
            }
        }
    }

    #[test]
    fn the_storage_version_shares_the_cached_bytes() {
        let custom = version(&crd(None, false), "v1");
        let object = stored(&objects()[0]);
        let served = served_json(&object, &custom).expect("served");
        let cached = object.json().expect("json");
        assert_eq!(served.as_ptr(), cached.as_ptr(), "no copy");
    }

    #[test]
    fn heads_that_cannot_be_spliced_take_the_tree_path() {
        let custom = version(&crd(None, false), "v1beta1");
        assert_eq!(
            head_api_version(br#"{"apiVersion":"a\/b","kind":"X"}"#),
            None
        );
        assert_eq!(head_api_version(br#"{"kind":"X"}"#), None);
        assert_eq!(
            head_api_version(br#"{"apiVersion":"example.com/v1","kind":"X"}"#),
            Some("example.com/v1")
        );
        // Stored without apiVersion: the tree path adds it first.
        let object = stored(&json!({"metadata": {"name": "w"}, "kind": "Widget"}));
        let served: Value =
            serde_json::from_slice(&served_json(&object, &custom).expect("served")).expect("json");
        assert_eq!(served["apiVersion"], "example.com/v1beta1");
    }

    #[test]
    fn defaults_apply_on_read_by_the_stored_version() {
        let custom = version(&crd(None, true), "v1beta1");
        let object = stored(&json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {}}));
        let served: Value =
            serde_json::from_slice(&served_json(&object, &custom).expect("served")).expect("json");
        assert_eq!(served["spec"]["size"], 3);
        assert_eq!(served["apiVersion"], "example.com/v1beta1");
        // An object of another group is not one of ours: no defaults.
        let foreign = stored(&json!({"apiVersion": "other.com/v1", "spec": {}}));
        let served = served_value(&foreign, &custom).expect("value");
        assert_eq!(served["spec"], json!({}));
    }

    #[test]
    fn writes_are_stored_at_the_storage_version() {
        let crd = crd(None, false);
        assert_eq!(
            version(&crd, "v1beta1").storage_api_version(),
            Some("example.com/v1")
        );
        let stored = object::storage_bytes_as(
            &json!({"apiVersion": "example.com/v1beta1", "metadata": {"name": "w", "resourceVersion": "3"}}),
            version(&crd, "v1beta1").storage_api_version(),
        );
        assert_eq!(
            &stored[..],
            br#"{"apiVersion":"example.com/v1","metadata":{"name":"w"}}"#
        );
    }

    #[test]
    fn webhook_conversion_is_left_as_written() {
        let crd = crd(Some("Webhook"), true);
        let custom = version(&crd, "v1beta1");
        assert_eq!(custom.storage_api_version(), None);
        let object = stored(&json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {}}));
        let served = served_json(&object, &custom).expect("served");
        assert_eq!(&served, object.json().expect("json"));
    }

    #[test]
    fn responses_convert_objects_and_list_items_not_statuses() {
        let custom = Arc::new(version(&crd(None, false), "v1beta1"));
        let mut list = json!({"apiVersion": "example.com/v1beta1", "kind": "WidgetList", "items": [
            {"apiVersion": "example.com/v1", "kind": "Widget"},
        ]});
        serve_response(&mut list, &custom, "Widget", "WidgetList");
        assert_eq!(list["items"][0]["apiVersion"], "example.com/v1beta1");
        let mut object = json!({"apiVersion": "example.com/v1", "kind": "Widget"});
        serve_response(&mut object, &custom, "Widget", "WidgetList");
        assert_eq!(object["apiVersion"], "example.com/v1beta1");
        let mut status = json!({"apiVersion": "v1", "kind": "Status"});
        serve_response(&mut status, &custom, "Status", "StatusList");
        assert_eq!(status["apiVersion"], "v1");
    }
}
