//! core's `ValidateObjectMeta` / `ValidateObjectMetaUpdate`
//! (`pkg/apis/core/validation/validation.go`) add `validateKubeFinalizerName`
//! to apimachinery's ObjectMeta rules: a finalizer without a domain (no `/`)
//! must be one of the standard ones. Only the kinds whose validation calls
//! core's ObjectMeta functions get it; those calling apimachinery's directly
//! (Lease, the admissionregistration and apiextensions kinds, APIService,
//! custom resources, a core/v1 Event write) do not.

use serde_json::Value;

use super::field;
use crate::registry::ResourceDef;
use crate::status::FieldError;

/// `helper.IsStandardFinalizerName`'s set.
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// Whether `resource`'s kind validates its ObjectMeta with core's functions.
pub fn applies_to(resource: &ResourceDef) -> bool {
    if resource.custom {
        return false;
    }
    match resource.group {
        // A core/v1 Event write runs only `legacyValidateEvent` (events.go).
        "" => resource.kind != "Event",
        "apps"
        | "autoscaling"
        | "batch"
        | "certificates.k8s.io"
        | "discovery.k8s.io"
        | "events.k8s.io"
        | "flowcontrol.apiserver.k8s.io"
        | "networking.k8s.io"
        | "node.k8s.io"
        | "policy"
        | "rbac.authorization.k8s.io"
        | "resource.k8s.io"
        | "scheduling.k8s.io"
        | "storage.k8s.io" => true,
        _ => false,
    }
}

/// `validateKubeFinalizerName` of every `metadata.finalizers` entry of an
/// object of `resource` (nothing for kinds it does not apply to).
pub fn finalizer_names(resource: &ResourceDef, object: &Value) -> Vec<FieldError> {
    if !applies_to(resource) {
        return Vec::new();
    }
    let finalizers = crate::object::metadata(object)
        .and_then(|metadata| metadata.get("finalizers"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    finalizers
        .iter()
        .enumerate()
        .filter_map(|(position, finalizer)| {
            let name = finalizer.as_str().unwrap_or_default();
            (!name.contains('/') && !STANDARD_FINALIZERS.contains(&name)).then(|| {
                field::invalid(
                    &field::index("metadata.finalizers", position),
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn resource(group: &str, kind: &str) -> &'static ResourceDef {
        crate::registry::builtin::builtin_resources()
            .iter()
            .find(|resource| resource.group == group && resource.kind == kind)
            .unwrap_or_else(|| panic!("no {group} {kind}"))
    }

    /// Cases from kube's `TestValidateObjectMetaFinalizers`-style checks
    /// (`ValidateObjectMeta` of core): standard names pass, names with a
    /// domain pass, any other bare name is refused at its index.
    #[test]
    fn bare_finalizers_must_be_standard_on_core_kinds() {
        let object = json!({"metadata": {"name": "a", "finalizers": ["kubernetes", "example.com/x", "orphan", "foregroundDeletion", "custom"]}});
        let texts: Vec<String> = finalizer_names(resource("", "ServiceAccount"), &object)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            texts,
            ["metadata.finalizers[4]: Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified"]
        );
        assert_eq!(
            finalizer_names(resource("apps", "Deployment"), &object).len(),
            1
        );
        assert_eq!(
            finalizer_names(resource("events.k8s.io", "Event"), &object).len(),
            1
        );
        for (group, kind) in [
            ("", "Event"),
            ("coordination.k8s.io", "Lease"),
            ("apiregistration.k8s.io", "APIService"),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
            ),
            ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ] {
            assert!(
                finalizer_names(resource(group, kind), &object).is_empty(),
                "{group} {kind}"
            );
        }
    }
}
