//! StorageObjectInUseProtection
//! (`plugin/pkg/admission/storage/storageobjectinuseprotection`
//! `storageProtectionPlugin.Admit`): a PersistentVolumeClaim is created with
//! the `kubernetes.io/pvc-protection` finalizer, a PersistentVolume with
//! `kubernetes.io/pv-protection`, unless it is already there.

use serde_json::Value;

use super::attributes::{Attributes, Operation};

/// `volumeutil.PVCProtectionFinalizer`.
pub const PVC_PROTECTION_FINALIZER: &str = "kubernetes.io/pvc-protection";
/// `volumeutil.PVProtectionFinalizer`.
pub const PV_PROTECTION_FINALIZER: &str = "kubernetes.io/pv-protection";

/// `storageProtectionPlugin.Admit` (`admitPV`, `admitPVC`).
pub fn admit(attributes: &Attributes<'_>, object: Option<&mut Value>) {
    if attributes.operation != Operation::Create
        || !attributes.resource.group.is_empty()
        || !attributes.subresource.is_empty()
    {
        return;
    }
    let finalizer = match attributes.resource.name.as_str() {
        "persistentvolumeclaims" => PVC_PROTECTION_FINALIZER,
        "persistentvolumes" => PV_PROTECTION_FINALIZER,
        _ => return,
    };
    let Some(metadata) = object.and_then(crate::object::metadata_mut) else {
        return;
    };
    let finalizers = metadata
        .entry("finalizers")
        .or_insert_with(|| Value::Array(Vec::new()));
    if finalizers.is_null() {
        *finalizers = Value::Array(Vec::new());
    }
    if let Some(list) = finalizers.as_array_mut() {
        if !list.iter().any(|present| present == finalizer) {
            list.push(Value::String(finalizer.to_string()));
        }
    }
}
