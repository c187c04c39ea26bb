//! The API side of namespace termination: the namespace registry's custom
//! `Delete` (`pkg/registry/core/namespace/storage/storage.go`), the
//! `finalize` subresource's rules (`namespace/strategy.go`
//! `namespaceFinalizeStrategy`, `ValidateNamespaceFinalizeUpdate`), and the
//! NamespaceLifecycle admission's 403 for new content in a terminating
//! namespace (`plugin/pkg/admission/namespace/lifecycle/admission.go`).
//! Emptying the namespace is the namespace controller's work.

use std::time::SystemTime;

use serde_json::{json, Value};

use super::before_delete::{self, FINALIZER_FOREGROUND, FINALIZER_ORPHAN};
use super::options::{DeleteOptions, FOREGROUND, ORPHAN};
use crate::api::target::Target;
use crate::object;
use crate::status::{GroupResource, Result, Status};

pub fn is_namespace(target: &Target<'_>) -> bool {
    (target.resource.group, target.resource.plural) == ("", "namespaces")
}

/// `spec.finalizers` of a namespace.
pub fn spec_finalizers(namespace: &Value) -> Vec<String> {
    namespace
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .map(|values| {
            values
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The precondition check of the registries with their own `Delete`
/// (namespaces, CRDs): the UID and resourceVersion conflicts carry their
/// own wording.
pub fn check_preconditions(
    namespace: &Value,
    options: &DeleteOptions,
    resource: &GroupResource,
) -> Result<()> {
    let Some(preconditions) = &options.preconditions else {
        return Ok(());
    };
    let name = object::name(namespace);
    let uid = object::meta_str(namespace, "uid");
    if let Some(expected) = preconditions
        .uid
        .as_deref()
        .filter(|expected| *expected != uid)
    {
        return Err(Status::conflict_because(
            resource,
            name,
            &format!(
                "Precondition failed: UID in precondition: {expected}, UID in object meta: {uid}"
            ),
        ));
    }
    let revision = object::resource_version(namespace);
    if let Some(expected) = preconditions
        .resource_version
        .as_deref()
        .filter(|expected| *expected != revision)
    {
        return Err(Status::conflict_because(
            resource,
            name,
            &format!(
                "Precondition failed: ResourceVersion in precondition: {expected}, ResourceVersion in object meta: {revision}"
            ),
        ));
    }
    Ok(())
}

/// The first DELETE of a namespace: a deletion timestamp (no grace period),
/// phase Terminating, and the garbage collector's finalizers as the options
/// ask (`shouldHaveOrphanFinalizer` / `shouldHaveDeleteDependentsFinalizer`).
pub fn mark_terminating(namespace: &mut Value, options: &DeleteOptions, now: SystemTime) {
    if before_delete::deletion_timestamp(namespace).is_none() {
        if let Some(metadata) = object::metadata_mut(namespace) {
            metadata.insert(
                "deletionTimestamp".into(),
                json!(crate::go::time::rfc3339(now)),
            );
        }
    }
    if let Some(map) = namespace.as_object_mut() {
        let status = map.entry("status").or_insert_with(|| json!({}));
        if !status.is_object() {
            *status = json!({});
        }
        if let Some(status) = status.as_object_mut() {
            status.insert("phase".into(), json!("Terminating"));
        }
    }
    let current = before_delete::finalizers(namespace);
    let has = |name: &str| current.iter().any(|finalizer| finalizer == name);
    let orphan = match (
        options.orphan_dependents,
        options.propagation_policy.as_deref(),
    ) {
        (Some(orphan), _) => orphan,
        (None, Some(policy)) => policy == ORPHAN,
        (None, None) => has(FINALIZER_ORPHAN),
    };
    let foreground = match (
        options.orphan_dependents,
        options.propagation_policy.as_deref(),
    ) {
        (Some(orphan), _) => !orphan,
        (None, Some(policy)) => policy == FOREGROUND,
        (None, None) => has(FINALIZER_FOREGROUND),
    };
    if orphan == has(FINALIZER_ORPHAN) && foreground == has(FINALIZER_FOREGROUND) {
        return;
    }
    let mut wanted: Vec<String> = current
        .iter()
        .filter(|finalizer| *finalizer != FINALIZER_ORPHAN && *finalizer != FINALIZER_FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        wanted.push(FINALIZER_ORPHAN.into());
    }
    if foreground {
        wanted.push(FINALIZER_FOREGROUND.into());
    }
    before_delete::set_finalizers(namespace, wanted);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminating_sets_phase_timestamp_and_gc_finalizers() {
        let mut namespace = json!({"metadata": {"name": "n"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
        mark_terminating(
            &mut namespace,
            &DeleteOptions::default(),
            SystemTime::UNIX_EPOCH,
        );
        assert_eq!(namespace["status"]["phase"], json!("Terminating"));
        assert_eq!(
            namespace["metadata"]["deletionTimestamp"],
            json!("1970-01-01T00:00:00Z")
        );
        assert!(namespace["metadata"]
            .get("deletionGracePeriodSeconds")
            .is_none());
        assert!(namespace["metadata"].get("finalizers").is_none());
        let foreground = DeleteOptions {
            propagation_policy: Some("Foreground".into()),
            ..Default::default()
        };
        mark_terminating(&mut namespace, &foreground, SystemTime::now());
        assert_eq!(
            namespace["metadata"]["finalizers"],
            json!(["foregroundDeletion"])
        );
        assert_eq!(
            namespace["metadata"]["deletionTimestamp"],
            json!("1970-01-01T00:00:00Z")
        );
    }

    #[test]
    fn finalize_names() {
        let ok = json!({"spec": {"finalizers": ["kubernetes", "example.com/x"]}});
        assert!(crate::validation::namespace::namespace_finalize(&ok).is_empty());
        let bad = json!({"spec": {"finalizers": ["custom"]}});
        assert_eq!(
            crate::validation::namespace::namespace_finalize(&bad)[0].to_string(),
            r#"spec.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified"#
        );
    }
}
