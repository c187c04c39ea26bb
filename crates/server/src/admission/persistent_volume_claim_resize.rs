//! PersistentVolumeClaimResize
//! (`plugin/pkg/admission/storage/persistentvolume/resize`
//! `persistentVolumeClaimResize.Validate`): an update growing a claim's
//! `spec.resources.requests.storage` is allowed only for a bound claim whose
//! StorageClass (the same before and after) has `allowVolumeExpansion: true`.

use serde_json::Value;

use super::attributes::{Attributes, Operation};
use super::namespace_lifecycle::forbidden;
use crate::object::ObjectStore;
use crate::quantity::Quantity;
use crate::status::Result;

/// `v1.BetaStorageClassAnnotation`.
const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// `persistentVolumeClaimResize.Validate`.
pub fn validate(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<()> {
    if attributes.operation != Operation::Update
        || !attributes.resource.group.is_empty()
        || attributes.resource.name != "persistentvolumeclaims"
        || !attributes.subresource.is_empty()
    {
        return Ok(());
    }
    let (Some(claim), Some(old)) = (object, attributes.old_object) else {
        return Ok(());
    };
    if !grows(requested_storage(claim), requested_storage(old)) {
        return Ok(());
    }
    if old.pointer("/status/phase").and_then(Value::as_str) != Some("Bound") {
        return Err(forbidden(
            attributes,
            object,
            "Only bound persistent volume claims can be expanded",
        ));
    }
    if !allow_resize(store, claim, old) {
        return Err(forbidden(
            attributes,
            object,
            "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
        ));
    }
    Ok(())
}

fn requested_storage(claim: &Value) -> Option<Quantity> {
    claim
        .pointer("/spec/resources/requests/storage")
        .and_then(Value::as_str)
        .and_then(|text| Quantity::parse(text).ok())
}

/// `newSize.Cmp(oldSize) > 0`, a missing quantity being zero.
fn grows(new: Option<Quantity>, old: Option<Quantity>) -> bool {
    match (new, old) {
        (Some(new), Some(old)) => new.cmp_value(&old).is_gt(),
        (Some(new), None) => new.sign() > 0,
        (None, Some(old)) => old.sign() < 0,
        (None, None) => false,
    }
}

/// `apihelper.GetPersistentVolumeClaimClass`: the beta annotation, else
/// `spec.storageClassName`.
fn claim_class(claim: &Value) -> &str {
    if let Some(class) = claim
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(BETA_STORAGE_CLASS_ANNOTATION))
        .and_then(Value::as_str)
    {
        return class;
    }
    claim
        .pointer("/spec/storageClassName")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `allowResize`: the same, non-empty class before and after, and that
/// class allows expansion.
fn allow_resize(store: &ObjectStore, claim: &Value, old: &Value) -> bool {
    let (class, old_class) = (claim_class(claim), claim_class(old));
    if class.is_empty() || old_class.is_empty() || class != old_class {
        return false;
    }
    let snapshot = store.snapshot();
    let Some(storage_class) = snapshot
        .get(&format!("/registry/storageclasses/{class}"))
        .and_then(|entry| entry.object.value())
    else {
        return false;
    };
    storage_class
        .get("allowVolumeExpansion")
        .and_then(Value::as_bool)
        == Some(true)
}
