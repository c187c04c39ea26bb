//! `matchPolicy: Equivalent` (`generic/webhook.go` `ShouldCallHook`, the
//! `EquivalentResourceMapper`): a webhook whose rules do not name the
//! request's group and version is still called when they name the same
//! resource at another group or version it is served at, with the objects
//! converted to that version and the review's `kind`/`resource` naming it
//! (`requestKind`/`requestResource` keep the request's).
//!
//! Equivalent resources here: the built-ins ferrokube serves in more than
//! one version (`versions/`: events core `v1` ⇄ `events.k8s.io/v1`,
//! horizontalpodautoscalers `autoscaling/v2` ⇄ `v1`) and the served
//! versions of a CRD with `conversion.strategy: None` (only `apiVersion`
//! changes). Not done: CRDs converted by a webhook (their other versions
//! are not matched), and subresources whose kind is not the resource's
//! (`scale`).

use serde_json::Value;

use crate::admission::attributes::{Attributes, GroupVersionName};
use crate::crd::conversion::ConversionStrategy;
use crate::crd::serving::CRD_PREFIX;
use crate::object::ObjectStore;
use crate::status::Status;

/// How objects are converted between equivalent versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conversion {
    /// `versions::convert` (a built-in's typed conversion).
    BuiltIn,
    /// A CRD without a conversion webhook: only `apiVersion` changes.
    ApiVersion,
}

/// A resource equivalent to the request's, at another group or version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Equivalent {
    pub resource: GroupVersionName,
    pub kind: GroupVersionName,
    conversion: Conversion,
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// The equivalents of the request's resource (its own excluded), in the
/// order its versions are served.
pub fn equivalents(store: &ObjectStore, attributes: &Attributes<'_>) -> Vec<Equivalent> {
    let resource = &attributes.resource;
    let (versions, kind, conversion): (Vec<(String, String)>, String, Conversion) =
        match (resource.group.as_str(), resource.name.as_str()) {
            ("" | "events.k8s.io", "events") => (
                vec![
                    ("".into(), "v1".into()),
                    ("events.k8s.io".into(), "v1".into()),
                ],
                "Event".into(),
                Conversion::BuiltIn,
            ),
            ("autoscaling", "horizontalpodautoscalers") => (
                vec![
                    ("autoscaling".into(), "v2".into()),
                    ("autoscaling".into(), "v1".into()),
                ],
                "HorizontalPodAutoscaler".into(),
                Conversion::BuiltIn,
            ),
            ("", _) => return Vec::new(),
            (group, plural) => {
                let key = format!("{CRD_PREFIX}{plural}.{group}");
                let Some(crd) = store
                    .snapshot()
                    .get(&key)
                    .and_then(|entry| entry.object.value())
                else {
                    return Vec::new();
                };
                if ConversionStrategy::of_crd(&crd) != ConversionStrategy::None {
                    return Vec::new();
                }
                let served = crd
                    .pointer("/spec/versions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|version| version.get("served").and_then(Value::as_bool) == Some(true))
                    .filter_map(|version| version.get("name").and_then(Value::as_str))
                    .map(|version| (group.to_string(), version.to_string()))
                    .collect();
                let kind = crd
                    .pointer("/spec/names/kind")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                (served, kind, Conversion::ApiVersion)
            }
        };
    // A subresource of another kind (`scale`) has no equivalent here.
    if attributes.kind.name != kind {
        return Vec::new();
    }
    versions
        .into_iter()
        .filter(|(group, version)| !(*group == resource.group && *version == resource.version))
        .map(|(group, version)| Equivalent {
            resource: GroupVersionName::new(&group, &version, &resource.name),
            kind: GroupVersionName::new(&group, &version, &kind),
            conversion,
        })
        .collect()
}

impl Equivalent {
    /// The request's attributes as this resource sees them: its kind and
    /// resource, `old_object` (already converted) as the old object.
    pub fn attributes<'a>(
        &self,
        attributes: &Attributes<'a>,
        old_object: Option<&'a Value>,
    ) -> Attributes<'a> {
        Attributes {
            kind: self.kind.clone(),
            resource: self.resource.clone(),
            old_object,
            options: attributes.options.clone(),
            ..*attributes
        }
    }

    /// `object` converted to this resource's version.
    pub fn to_this(&self, object: &Value) -> Result<Value, Status> {
        let mut converted = object.clone();
        self.convert(
            &mut converted,
            &api_version(&self.kind.group, &self.kind.version),
        )?;
        Ok(converted)
    }

    /// `object` (at this resource's version) converted back to the
    /// request's.
    pub fn back(&self, object: &mut Value, attributes: &Attributes<'_>) -> Result<(), Status> {
        self.convert(
            object,
            &api_version(&attributes.kind.group, &attributes.kind.version),
        )
    }

    fn convert(&self, object: &mut Value, to: &str) -> Result<(), Status> {
        match self.conversion {
            Conversion::BuiltIn => crate::versions::convert(object, to).map_err(Status::internal),
            Conversion::ApiVersion => {
                if let Some(fields) = object.as_object_mut() {
                    fields.insert("apiVersion".into(), Value::String(to.to_string()));
                }
                Ok(())
            }
        }
    }
}
