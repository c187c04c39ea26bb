//! Namespace validation (`pkg/apis/core/validation/validation.go`
//! `ValidateNamespace`, `ValidateNamespaceUpdate`, `ValidateNamespaceStatusUpdate`,
//! `ValidateNamespaceFinalizeUpdate`). The name rule (a DNS-1123 label) and
//! `metadata.*` are the ObjectMeta step's; `spec.finalizers` keep their old
//! value on a plain update (the strategy restores them), so only `/finalize`
//! changes them.

use serde_json::Value;

use super::field::{self, child, index};
use crate::status::FieldError;

/// `helper.IsStandardFinalizerName`: the finalizers that need no domain.
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// `validateFinalizerName`: a qualified name, and one with a domain unless standard.
pub fn finalizer_name(path: &str, name: &str, errors: &mut Vec<FieldError>) {
    for message in crate::selector::is_qualified_name(name) {
        errors.push(field::invalid(path, name, message));
    }
    kube_finalizer_name(path, name, errors);
}

/// `validateKubeFinalizerName`.
pub fn kube_finalizer_name(path: &str, name: &str, errors: &mut Vec<FieldError>) {
    if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
        errors.push(field::invalid(
            path,
            name,
            "name is neither a standard finalizer name nor is it fully qualified",
        ));
    }
}

fn spec_finalizers(object: &Value) -> Vec<&str> {
    object
        .get("spec")
        .map(|spec| field::items_at(spec, "finalizers"))
        .unwrap_or_default()
        .iter()
        .map(|finalizer| finalizer.as_str().unwrap_or_default())
        .collect()
}

/// `ValidateNamespace`: every `spec.finalizers` entry, reported at the list's
/// path without an index as kube does.
pub fn namespace(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for name in spec_finalizers(object) {
        finalizer_name("spec.finalizers", name, &mut errors);
    }
    errors
}

/// `ValidateNamespaceFinalizeUpdate`: the finalizers `/finalize` writes, by index.
pub fn namespace_finalize(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (position, name) in spec_finalizers(object).into_iter().enumerate() {
        finalizer_name(&index("spec.finalizers", position), name, &mut errors);
    }
    errors
}

/// `ValidateNamespaceStatusUpdate`: the phase follows `deletionTimestamp`.
/// An empty phase is `Active`, as `SetDefaults_NamespaceStatus` makes it
/// before validation.
pub fn namespace_status(object: &Value) -> Vec<FieldError> {
    let deleting = object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|stamp| !stamp.is_null());
    let phase = match object
        .get("status")
        .map(|status| field::str_at(status, "phase"))
        .unwrap_or_default()
    {
        "" => "Active",
        phase => phase,
    };
    let path = child("status", "Phase");
    match (deleting, phase) {
        (false, "Active") | (true, "Terminating") => Vec::new(),
        (false, _) => vec![field::invalid(
            &path,
            phase,
            "may only be 'Active' if `deletionTimestamp` is empty",
        )],
        (true, _) => vec![field::invalid(
            &path,
            phase,
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )],
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestValidateNamespace`, `TestValidateNamespaceFinalizeUpdate`
    /// and `TestValidateNamespaceStatusUpdate`.
    #[test]
    fn namespaces_as_kube_validates_them() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (json!({"spec": {"finalizers": ["kubernetes"]}}), vec![]),
            (json!({"spec": {"finalizers": ["example.com/foo"]}}), vec![]),
            (json!({"spec": {}}), vec![]),
            (
                json!({"spec": {"finalizers": ["foo"]}}),
                vec!["spec.finalizers: Invalid value: \"foo\": name is neither a standard finalizer name nor is it fully qualified"],
            ),
            (
                json!({"spec": {"finalizers": ["foo/bar/baz"]}}),
                vec!["spec.finalizers: Invalid value: \"foo/bar/baz\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"],
            ),
        ];
        for (object, expected) in cases {
            assert_eq!(texts(&namespace(&object)), expected, "{object}");
        }
        assert_eq!(
            texts(&namespace_finalize(
                &json!({"spec": {"finalizers": ["kubernetes", "Foo"]}})
            )),
            ["spec.finalizers[1]: Invalid value: \"Foo\": name is neither a standard finalizer name nor is it fully qualified"]
        );
    }

    #[test]
    fn status_phase_follows_deletion() {
        assert!(namespace_status(&json!({"status": {"phase": "Active"}})).is_empty());
        assert!(namespace_status(&json!({"status": {}})).is_empty());
        assert_eq!(
            texts(&namespace_status(&json!({"status": {"phase": "Terminating"}}))),
            ["status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"]
        );
        let deleting = json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Active"}});
        assert_eq!(
            texts(&namespace_status(&deleting)),
            ["status.Phase: Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty"]
        );
        let terminating = json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Terminating"}});
        assert!(namespace_status(&terminating).is_empty());
    }
}
