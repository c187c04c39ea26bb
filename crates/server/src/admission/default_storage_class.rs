//! DefaultStorageClass (`plugin/pkg/admission/storage/storageclass/setdefault`
//! `claimDefaulterPlugin.Admit`): a PersistentVolumeClaim created without a
//! class (no `spec.storageClassName`, no beta
//! `volume.beta.kubernetes.io/storage-class` annotation) gets the default
//! StorageClass, the newest of several (`pkg/volume/util` `GetDefaultClass`);
//! without a default it is left alone.

use serde_json::Value;

use super::attributes::{Attributes, Operation};
use super::default_class::{annotation_is_true, newest_default};
use crate::object::ObjectStore;

/// `storageutil.IsDefaultStorageClassAnnotation`.
pub const IS_DEFAULT_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";
/// `storageutil.BetaIsDefaultStorageClassAnnotation`.
pub const BETA_IS_DEFAULT_ANNOTATION: &str = "storageclass.beta.kubernetes.io/is-default-class";
/// `v1.BetaStorageClassAnnotation`: a claim's class before `storageClassName`.
const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// `claimDefaulterPlugin.Admit`.
pub fn admit(store: &ObjectStore, attributes: &Attributes<'_>, object: Option<&mut Value>) {
    if attributes.operation != Operation::Create
        || !attributes.resource.group.is_empty()
        || attributes.resource.name != "persistentvolumeclaims"
        || !attributes.subresource.is_empty()
    {
        return;
    }
    let Some(claim) = object else {
        return;
    };
    if has_class(claim) {
        return;
    }
    let Some(default) = newest_default(store, "/registry/storageclasses/", is_default) else {
        return;
    };
    if let Some(map) = claim.as_object_mut() {
        let spec = map
            .entry("spec")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(spec) = spec.as_object_mut() {
            spec.insert("storageClassName".into(), Value::String(default));
        }
    }
}

/// `helper.PersistentVolumeClaimHasClass`: the beta annotation, or
/// `spec.storageClassName` set (even to `""`, which asks for no class).
fn has_class(claim: &Value) -> bool {
    let annotated = claim
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(BETA_STORAGE_CLASS_ANNOTATION))
        .is_some();
    annotated
        || claim
            .pointer("/spec/storageClassName")
            .is_some_and(|name| !name.is_null())
}

/// `storageutil.IsDefaultAnnotation`: the GA or the beta annotation.
fn is_default(class: &Value) -> bool {
    annotation_is_true(class, IS_DEFAULT_ANNOTATION)
        || annotation_is_true(class, BETA_IS_DEFAULT_ANNOTATION)
}
