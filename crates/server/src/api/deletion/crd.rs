//! The CRD registry's own `Delete`
//! (`apiextensions-apiserver/pkg/registry/customresourcedefinition/etcd.go`):
//! the first DELETE only marks the CRD (deletion timestamp, the cleanup
//! finalizer, `Terminating`); the CRD finalizer controller
//! (`controllers/crd_finalizer.rs`) deletes every custom resource and then
//! removes the finalizer, which lets the CRD go.

use std::time::SystemTime;

use serde_json::{json, Value};

use super::before_delete;
use crate::api::target::Target;
use crate::object;

/// `apiextensions.CustomResourceCleanupFinalizer`.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

pub fn is_crd(target: &Target<'_>) -> bool {
    (target.resource.group, target.resource.plural)
        == ("apiextensions.k8s.io", "customresourcedefinitions")
}

/// The first DELETE: deletion timestamp, the cleanup finalizer, and the
/// Terminating condition kube sets in the same update.
pub fn mark_terminating(crd: &mut Value, now: SystemTime) {
    let timestamp = crate::go::time::rfc3339(now);
    if before_delete::deletion_timestamp(crd).is_none() {
        if let Some(metadata) = object::metadata_mut(crd) {
            metadata.insert("deletionTimestamp".into(), json!(timestamp));
        }
    }
    let mut finalizers = before_delete::finalizers(crd);
    if !finalizers
        .iter()
        .any(|finalizer| finalizer == CLEANUP_FINALIZER)
    {
        finalizers.push(CLEANUP_FINALIZER.into());
        before_delete::set_finalizers(crd, finalizers);
    }
    crate::crd::set_condition(
        crd,
        "Terminating",
        "True",
        "InstanceDeletionPending",
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        &timestamp,
    );
}
