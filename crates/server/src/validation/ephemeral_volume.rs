//! A pod's generic ephemeral volume (`pkg/apis/core/validation/validation.go`
//! `validateEphemeralVolumeSource`, `ValidatePersistentVolumeClaimTemplate`,
//! `ValidateTemplateObjectMeta`): a claim template whose metadata carries
//! only labels and annotations and whose spec is a valid claim spec, and the
//! name of the claim the pod will get (`<pod>-<volume>`).

use serde_json::Value;

use super::field::{self, child};
use super::storage_core;
use crate::status::{FieldError, FieldErrorKind};

/// `TotalAnnotationSizeLimitB`.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// The fields of `metav1.ObjectMeta` in declaration order with the name
/// `validateFieldAllowList` reports (the Go name with its first letter
/// lowered: `UID` is `uID`), but for the allowed labels and annotations.
const OBJECT_META_FIELDS: [(&str, &str); 13] = [
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
];

/// Whether a field holds Go's zero value once decoded (an empty list still
/// decodes to a non-nil slice, which `reflect.DeepEqual` tells from nil).
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Number(number) => number.as_f64() == Some(0.0),
        Value::Bool(flag) => !flag,
        Value::Array(_) | Value::Object(_) => false,
    }
}

/// `ValidateTemplateObjectMeta`: annotations (`ValidateAnnotations`),
/// labels, and no other field set.
pub fn template_object_meta(meta: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let annotations_path = child(path, "annotations");
    if let Some(annotations) = field::map_at(meta, "annotations") {
        let mut total = 0;
        for (name, value) in annotations {
            total += name.len() + value.as_str().map_or(0, str::len);
            for message in crate::selector::is_qualified_name(&name.to_lowercase()) {
                errors.push(field::invalid(&annotations_path, name, message));
            }
        }
        if total > TOTAL_ANNOTATION_SIZE_LIMIT {
            errors.push(FieldError {
                kind: FieldErrorKind::TooLong(TOTAL_ANNOTATION_SIZE_LIMIT),
                field: annotations_path,
                detail: String::new(),
            });
        }
    }
    field::labels(
        &child(path, "labels"),
        field::map_at(meta, "labels"),
        errors,
    );
    for (json_name, reported) in OBJECT_META_FIELDS {
        if meta.get(json_name).is_some_and(|value| !is_zero(value)) {
            errors.push(field::forbidden(&child(path, reported), "cannot be set"));
        }
    }
}

/// `validateEphemeralVolumeSource` of the source at `path`.
pub fn ephemeral_source(source: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let template_path = child(path, "volumeClaimTemplate");
    let Some(template) = source
        .get("volumeClaimTemplate")
        .filter(|template| !template.is_null())
    else {
        errors.push(field::required(&template_path, ""));
        return;
    };
    template_object_meta(
        template.get("metadata").unwrap_or(&Value::Null),
        &child(&template_path, "metadata"),
        errors,
    );
    storage_core::persistent_volume_claim_spec(
        template.get("spec").unwrap_or(&Value::Null),
        &child(&template_path, "spec"),
        errors,
    );
}

/// The claim an ephemeral volume creates is `<pod>-<volume>`, which must be
/// a valid claim name (`validateVolumeSource`; skipped while either name is
/// unknown). `volume_path` is the volume's own path.
pub fn claim_name(pod_name: &str, volume_name: &str, volume_path: &str) -> Vec<FieldError> {
    if pod_name.is_empty() || volume_name.is_empty() {
        return Vec::new();
    }
    let claim = format!("{pod_name}-{volume_name}");
    crate::names::dns1123_subdomain(&claim)
        .into_iter()
        .map(|message| {
            field::invalid(
                &child(volume_path, "name"),
                volume_name,
                format!("PVC name {}: {message}", crate::go::strconv::quote(&claim)),
            )
        })
        .collect()
}

#[cfg(test)]
#[path = "ephemeral_volume_tests.rs"]
mod tests;
