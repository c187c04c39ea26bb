//! Deletion as kube-apiserver's generic store does it: DeleteOptions,
//! graceful deletion, finalizers (including the garbage collector's),
//! namespaces' two-phase deletion, and the unsafe deletion of objects whose
//! stored bytes cannot be decoded. The DELETE handlers are in `../delete.rs`.

pub mod before_delete;
pub mod crd;
pub mod namespace;
pub mod options;
pub mod update_rules;

pub use options::DeleteOptions;

/// `ValidateFinalizers` (`apimachinery/pkg/api/validation/objectmeta.go`):
/// qualified names, and never both `orphan` and `foregroundDeletion`.
pub fn finalizer_errors(object: &serde_json::Value) -> Vec<crate::status::FieldError> {
    use crate::status::{FieldError, FieldErrorKind};
    let finalizers = before_delete::finalizers(object);
    let mut errors = Vec::new();
    for finalizer in &finalizers {
        for message in crate::selector::is_qualified_name(finalizer) {
            errors.push(FieldError::invalid(
                "metadata.finalizers",
                finalizer,
                message,
            ));
        }
    }
    let has = |name: &str| finalizers.iter().any(|finalizer| finalizer == name);
    if has(before_delete::FINALIZER_ORPHAN) && has(before_delete::FINALIZER_FOREGROUND) {
        errors.push(FieldError {
            kind: FieldErrorKind::Invalid(crate::go::fmt::sharp_v_strings(&finalizers)),
            field: "metadata.finalizers".into(),
            detail: "finalizer orphan and foregroundDeletion cannot be both set".into(),
        });
    }
    errors
}

#[cfg(test)]
mod tests;
