//! What an update may do to an object that is being deleted, and when an
//! update deletes it: `rest.BeforeUpdate` (deletion fields kept),
//! `ValidateObjectMetaUpdate` (`ValidateNoNewFinalizers`, immutable grace
//! period) and the store's `ShouldDeleteDuringUpdate` (plus the namespace
//! store's `ShouldDeleteNamespaceDuringUpdate`).

use serde_json::Value;

use super::before_delete::{deletion_grace_period, deletion_timestamp, finalizers};
use super::namespace::spec_finalizers;
use crate::object;
use crate::registry::ResourceDef;
use crate::status::{FieldError, FieldErrorKind};

/// Carry the deletion fields over from `old` and report what may not change.
pub fn settle_deletion_fields(old: &Value, new: &mut Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let old_timestamp = deletion_timestamp(old).map(str::to_string);
    let old_grace = deletion_grace_period(old);
    if old_timestamp.is_some() {
        let old_finalizers = finalizers(old);
        let mut added: Vec<String> = finalizers(new)
            .into_iter()
            .filter(|finalizer| !old_finalizers.contains(finalizer))
            .collect();
        added.sort();
        added.dedup();
        if !added.is_empty() {
            errors.push(FieldError::forbidden(
                "metadata.finalizers",
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers {}",
                    crate::go::fmt::sharp_v_strings(&added)
                ),
            ));
        }
    }
    let new_timestamp = deletion_timestamp(new).map(str::to_string);
    let new_grace = deletion_grace_period(new);
    let Some(metadata) = object::metadata_mut(new) else {
        return errors;
    };
    match (&old_timestamp, &new_timestamp) {
        // An update can never remove or change a deletion timestamp.
        (Some(old), _) => {
            metadata.insert("deletionTimestamp".into(), Value::String(old.clone()));
        }
        (None, Some(new)) => errors.push(FieldError::invalid(
            "metadata.deletionTimestamp",
            new,
            "field is immutable",
        )),
        (None, None) => {}
    }
    match (old_grace, new_grace) {
        (Some(old), None) => {
            metadata.insert("deletionGracePeriodSeconds".into(), Value::from(old));
        }
        (old, Some(new)) if old != Some(new) => errors.push(FieldError {
            kind: FieldErrorKind::Invalid(new.to_string()),
            field: "metadata.deletionGracePeriodSeconds".into(),
            detail: "field is immutable".into(),
        }),
        _ => {}
    }
    errors
}

/// `ShouldDeleteDuringUpdate`: the update removed the last finalizer of an
/// object whose deletion has no grace period left; namespaces also need an
/// empty `spec.finalizers`.
pub fn should_delete_during_update(resource: &ResourceDef, old: &Value, new: &Value) -> bool {
    if !finalizers(new).is_empty() || deletion_timestamp(old).is_none() {
        return false;
    }
    if !matches!(deletion_grace_period(old), None | Some(0)) {
        return false;
    }
    if (resource.group, resource.plural) == ("", "namespaces") {
        return spec_finalizers(new).is_empty();
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finalizers_may_only_go_while_deleting() {
        let old = json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z", "deletionGracePeriodSeconds": 0, "finalizers": ["a"]}});
        let mut added = json!({"metadata": {"finalizers": ["a", "c", "b"]}});
        let errors = settle_deletion_fields(&old, &mut added);
        assert_eq!(
            errors[0].to_string(),
            r#"metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b", "c"}"#
        );
        let mut removed = json!({"metadata": {}});
        assert!(settle_deletion_fields(&old, &mut removed).is_empty());
        assert_eq!(
            removed["metadata"]["deletionTimestamp"],
            json!("2026-01-01T00:00:00Z")
        );
        assert_eq!(removed["metadata"]["deletionGracePeriodSeconds"], json!(0));
        let mut regrace =
            json!({"metadata": {"finalizers": ["a"], "deletionGracePeriodSeconds": 5}});
        assert_eq!(
            settle_deletion_fields(&old, &mut regrace)[0].to_string(),
            "metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable"
        );
    }

    #[test]
    fn the_last_finalizer_removal_deletes() {
        let registry = crate::registry::Registry::new(crate::registry::builtin_resources());
        let configmaps = registry.lookup("", "v1", "configmaps").unwrap();
        let namespaces = registry.lookup("", "v1", "namespaces").unwrap();
        let old = json!({"metadata": {"deletionTimestamp": "t", "deletionGracePeriodSeconds": 0, "finalizers": ["a"]}});
        assert!(should_delete_during_update(
            configmaps,
            &old,
            &json!({"metadata": {}})
        ));
        assert!(!should_delete_during_update(
            configmaps,
            &old,
            &json!({"metadata": {"finalizers": ["a"]}})
        ));
        let graceful =
            json!({"metadata": {"deletionTimestamp": "t", "deletionGracePeriodSeconds": 30}});
        assert!(!should_delete_during_update(
            configmaps,
            &graceful,
            &json!({"metadata": {}})
        ));
        let ns_old =
            json!({"metadata": {"deletionTimestamp": "t"}, "spec": {"finalizers": ["kubernetes"]}});
        assert!(!should_delete_during_update(namespaces, &ns_old, &ns_old));
        assert!(should_delete_during_update(
            namespaces,
            &ns_old,
            &json!({"metadata": {}, "spec": {}})
        ));
    }
}
