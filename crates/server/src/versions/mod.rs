//! Built-in resources kube-apiserver 1.34 serves in more than one version
//! (with no `--runtime-config`; `data/discovery-v1.34.json`): events
//! (core `v1` and `events.k8s.io/v1`) and horizontalpodautoscalers
//! (`autoscaling/v2` and `autoscaling/v1`).
//!
//! Each is stored at one version, as kube's storage factory encodes it
//! (`pkg/kubeapiserver/default_storage_factory_builder.go`: events at core
//! `v1`, shared with events.k8s.io; HPAs at `autoscaling/v2`), and every
//! object read is served at the request's version: a typed conversion
//! between the two wire forms that equals kube's round trip through the
//! internal type (`event.rs`, `hpa.rs`). The request path calls:
//! - [`served`] for every stored object a response or watch event carries
//!   (shared as is when it is at the request's version already);
//! - [`to_version`] for the base of a read-modify-write and for field
//!   selectors, [`as_read_back`] for handler answers built as trees;
//! - [`storage_form`] for what a write stores.

pub mod event;
mod go_json;

/// Go's `encoding/json` HTML-safe escapes, for other Go-compatible encoders (the audit log).
pub(crate) use go_json::html_escape;
pub mod hpa;
mod hpa_metrics;

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::object::{self, StoredObject};
use crate::registry::ResourceDef;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum Error {
    /// A round-trip annotation that does not decode (`json.Unmarshal`'s error).
    #[error("{0}")]
    Annotation(String),
    /// A stored object of a version or kind the resource does not convert.
    #[error("converting ({from}, Kind={kind}) to ({to}): unknown conversion")]
    Unknown {
        from: String,
        to: String,
        kind: String,
    },
}

/// The `apiVersion` objects of `resource` are stored as, when the resource
/// is built in and served in more than one version.
pub fn storage_api_version(resource: &ResourceDef) -> Option<&'static str> {
    if resource.custom {
        return None;
    }
    match (resource.group, resource.plural) {
        ("" | "events.k8s.io", "events") => Some("v1"),
        ("autoscaling", "horizontalpodautoscalers") => Some("autoscaling/v2"),
        _ => None,
    }
}

/// Every `apiVersion` `resource` is served at, when it is a built-in
/// served in more than one.
pub fn served_api_versions(resource: &ResourceDef) -> Option<&'static [&'static str]> {
    match storage_api_version(resource)? {
        "v1" => Some(&["v1", "events.k8s.io/v1"]),
        _ => Some(&["autoscaling/v2", "autoscaling/v1"]),
    }
}

/// `value` (an object of `resource`'s kind, at any version it is served
/// in) converted to `api_version`.
pub fn convert(value: &mut Value, api_version: &str) -> Result<(), Error> {
    let Some(object) = value.as_object_mut() else {
        return Ok(());
    };
    let from = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    // Without an `apiVersion` it is no typed object (list items that omit
    // their type): nothing to convert from.
    if from == api_version || from.is_empty() {
        return Ok(());
    }
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match (kind.as_str(), from.as_str(), api_version) {
        ("Event", "v1", "events.k8s.io/v1") => event::core_to_events(object),
        ("Event", "events.k8s.io/v1", "v1") => event::events_to_core(object),
        ("HorizontalPodAutoscaler", "autoscaling/v2", "autoscaling/v1") => hpa::v2_to_v1(object),
        ("HorizontalPodAutoscaler", "autoscaling/v1", "autoscaling/v2") => hpa::v1_to_v2(object)?,
        _ => {
            return Err(Error::Unknown {
                from,
                to: api_version.to_string(),
                kind,
            })
        }
    }
    Ok(())
}

/// `value` at the version `resource` is requested at (nothing to do for
/// resources served in one version).
pub fn to_version(value: &mut Value, resource: &ResourceDef) -> Result<(), Error> {
    if storage_api_version(resource).is_none() {
        return Ok(());
    }
    convert(value, &resource.api_version())
}

/// `value` (an object a handler answers with, at any served version) as a
/// read of it from storage serves it: kube answers a write with the object
/// the storage returned, decoded at the storage version and converted back,
/// so what the conversion adds (an autoscaling/v1 HPA's implicit 80% CPU
/// target, Go's zero values) shows in the answer as in later reads.
pub fn as_read_back(value: &mut Value, resource: &ResourceDef) -> Result<(), Error> {
    let Some(storage) = storage_api_version(resource) else {
        return Ok(());
    };
    let converted = value.get("apiVersion").and_then(Value::as_str) != Some(storage);
    convert(value, storage)?;
    if converted {
        default_as_decoded_from_storage(value);
    }
    convert(value, &resource.api_version())
}

/// kube defaults what it decodes from storage: an object written at another
/// version than the storage one is converted and then defaulted at the
/// storage version (`SetDefaults_HorizontalPodAutoscaler` of
/// `autoscaling/v2` for an `autoscaling/v1` write, so its behavior
/// annotation reads back with both rules generated). Events have no defaults.
fn default_as_decoded_from_storage(value: &mut Value) {
    let is_v2_autoscaler = value.get("apiVersion").and_then(Value::as_str)
        == Some("autoscaling/v2")
        && value.get("kind").and_then(Value::as_str) == Some("HorizontalPodAutoscaler");
    if let (true, Some(map)) = (is_v2_autoscaler, value.as_object_mut()) {
        crate::defaults_non_core::horizontal_pod_autoscaler_v2(map);
    }
}

/// A stored object as served at `resource`'s version: the same object
/// (its cached encodings shared) when it is stored at that version,
/// otherwise a converted copy at the same `resourceVersion`. Corrupt
/// objects are left for the readers, which skip them.
pub fn served(
    object: &Arc<StoredObject>,
    resource: &ResourceDef,
) -> Result<Arc<StoredObject>, Error> {
    Ok(match converted(object, resource)? {
        Some(converted) => Arc::new(converted),
        None => object.clone(),
    })
}

/// [`served`] without the sharing: `None` when `object` is served as it is.
pub fn converted(
    object: &StoredObject,
    resource: &ResourceDef,
) -> Result<Option<StoredObject>, Error> {
    if storage_api_version(resource).is_none() {
        return Ok(None);
    }
    let Some(json) = object.json() else {
        return Ok(None);
    };
    let wanted = resource.api_version();
    if crate::crd::conversion::head_api_version(json) == Some(wanted.as_str()) {
        return Ok(None);
    }
    let Some(mut value) = object.value() else {
        return Ok(None);
    };
    convert(&mut value, &wanted)?;
    Ok(Some(object::stored_from_value(&value)))
}

/// What a write of `object` (at the request's version) stores: the object
/// at the storage version.
pub fn storage_form<'v>(
    object: &'v Value,
    resource: &ResourceDef,
) -> Result<Cow<'v, Value>, Error> {
    let Some(storage) = storage_api_version(resource) else {
        return Ok(Cow::Borrowed(object));
    };
    if object.get("apiVersion").and_then(Value::as_str) == Some(storage) {
        return Ok(Cow::Borrowed(object));
    }
    let mut converted = object.clone();
    convert(&mut converted, storage)?;
    default_as_decoded_from_storage(&mut converted);
    // What the annotations held must decode as the storage version's typed
    // object, as kube's conversion into it would (`json.Unmarshal` of the
    // v1 types): nothing a typed client cannot read is stored.
    let (group, version) = storage.rsplit_once('/').unwrap_or(("", storage));
    if let Some(error) = crate::decode_error::typed_decode_error_of_value(
        group,
        version,
        resource.kind,
        &converted,
        None,
        crate::decode_error::Wording::Json,
    ) {
        return Err(Error::Annotation(error));
    }
    Ok(Cow::Owned(converted))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;
    use ferrokube_store::{Codec, KeyValue};
    use serde_json::json;

    fn resource(group: &str, version: &str, plural: &str) -> &'static ResourceDef {
        registry::builtin_resources()
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .expect("served")
    }

    #[test]
    fn exactly_the_multi_version_built_ins_convert() {
        let mut by_plural: std::collections::BTreeMap<(&str, &str), Vec<&ResourceDef>> =
            Default::default();
        for resource in registry::builtin_resources() {
            let storage_group = if resource.group == "events.k8s.io" {
                ""
            } else {
                resource.group
            };
            by_plural
                .entry((storage_group, resource.plural))
                .or_default()
                .push(resource);
        }
        for versions in by_plural.values() {
            for resource in versions {
                assert_eq!(
                    storage_api_version(resource).is_some(),
                    versions.len() > 1,
                    "{}/{}",
                    resource.api_version(),
                    resource.plural
                );
            }
        }
        assert_eq!(
            storage_api_version(resource("", "v1", "events")),
            Some("v1")
        );
        assert_eq!(
            storage_api_version(resource("events.k8s.io", "v1", "events")),
            Some("v1")
        );
        assert_eq!(
            storage_api_version(resource("autoscaling", "v1", "horizontalpodautoscalers")),
            Some("autoscaling/v2")
        );
    }

    #[test]
    fn stored_objects_are_shared_at_their_version_and_converted_otherwise() {
        let stored = Arc::new(
            object::ObjectCodec.decode(&KeyValue {
                key: "/registry/events/ns/e".into(),
                value: bytes::Bytes::from(
                    serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "Event",
                    "metadata": {"name": "e", "namespace": "ns"}, "message": "hi",
                    "involvedObject": {"kind": "Pod", "name": "p"}}))
                    .unwrap_or_default(),
                ),
                create_revision: 3,
                mod_revision: 7,
            }),
        );
        let core = served(&stored, resource("", "v1", "events")).expect("served");
        assert!(Arc::ptr_eq(&core, &stored));
        let events = served(&stored, resource("events.k8s.io", "v1", "events")).expect("served");
        assert_eq!(
            events.value(),
            Some(json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": "e", "namespace": "ns", "resourceVersion": "7"},
                "note": "hi", "regarding": {"kind": "Pod", "name": "p"},
                "eventTime": null, "deprecatedSource": {},
                "deprecatedFirstTimestamp": null, "deprecatedLastTimestamp": null}))
        );
        // Written back, it is stored as core/v1 with Go's zero values.
        assert_eq!(
            storage_form(
                &events.value().unwrap_or_default(),
                resource("events.k8s.io", "v1", "events")
            )
            .expect("converts")
            .as_ref(),
            &json!({"apiVersion": "v1", "kind": "Event",
                "metadata": {"name": "e", "namespace": "ns", "resourceVersion": "7"},
                "message": "hi", "involvedObject": {"kind": "Pod", "name": "p"},
                "eventTime": null, "source": {}, "firstTimestamp": null, "lastTimestamp": null,
                "reportingComponent": "", "reportingInstance": ""})
        );
    }

    #[test]
    fn unknown_versions_are_errors() {
        let mut value =
            json!({"apiVersion": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler"});
        assert_eq!(
            convert(&mut value, "autoscaling/v1").map_err(|error| error.to_string()),
            Err("converting (autoscaling/v2beta2, Kind=HorizontalPodAutoscaler) to (autoscaling/v1): unknown conversion".to_string())
        );
    }
}
