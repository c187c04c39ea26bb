//! Custom resources: CustomResourceDefinitions read into served resources
//! (`definition.rs`), objects served at the request's version and stored at
//! the storage version (`conversion.rs`), and the task that keeps the served registry equal to the
//! established CRDs (`serving.rs`). The controllers that accept names and
//! establish CRDs are in `controllers/crd_naming.rs`. Custom resources then
//! go down the same request path as every built-in kind.

pub mod cel_cost;
pub mod cel_rules;
pub mod cel_syntax;
pub mod cel_validation;
pub mod conditions;
pub mod conversion;
pub mod conversion_rules;
pub mod default_rules;
pub mod definition;
pub mod embedded;
pub mod openapi_rules;
pub mod schema;
pub mod selectable_fields;
pub mod serving;
pub mod structural_rules;
pub mod validation;
pub mod value_check;
pub mod version_rules;
pub mod webhook;
pub mod webhook_client;

pub use conditions::{condition_true, set_condition};
pub use definition::{served_versions, CustomVersion, PrinterColumn, ScalePaths};
pub use serving::{keep_registry_current, CRD_PREFIX};

/// What kube's decoder does to every custom resource written through any
/// verb: defaults from the schema, then unknown fields pruned.
pub fn default_and_prune(custom: Option<&CustomVersion>, object: &mut serde_json::Value) {
    if let Some(schema) = custom.and_then(CustomVersion::schema_model) {
        schema::default(object, schema);
        schema::prune(object, schema);
    }
}

/// kube's schema validation of a custom resource after defaulting and
/// pruning (`customResourceStrategy.Validate` / `ValidateUpdate`, the
/// latter ratcheting unchanged values), then the type and object metadata
/// of embedded resources (`embedded.rs`, not ratcheted, as in kube), then
/// the `x-kubernetes-validations` rules (`cel_validation.rs`) unless an
/// earlier error means the object does not have the shape they were
/// written for (`hasBlockingErr`).
pub fn validate_values(
    custom: Option<&CustomVersion>,
    object: &serde_json::Value,
    old: Option<&serde_json::Value>,
) -> Vec<crate::status::FieldError> {
    let Some(compiled) = custom.and_then(|custom| custom.model.as_ref()) else {
        return Vec::new();
    };
    let schema = compiled.model();
    let mut errors = match old {
        Some(old) => value_check::validate_update(object, old, schema),
        None => value_check::validate(object, schema),
    };
    errors.extend(embedded::validate(object, schema));
    if !compiled.cel().is_empty() {
        if has_blocking_error(&errors) {
            errors.push(crate::status::FieldError {
                kind: crate::status::FieldErrorKind::Invalid(crate::go::strconv::quote("null")),
                field: "<nil>".into(),
                detail: "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
            });
        } else {
            errors.extend(cel_validation::validate(
                object,
                old,
                schema,
                compiled.cel(),
            ));
        }
    }
    errors
}

/// `hasBlockingErr` (`customresource/strategy.go`): a type, required, enum
/// or size violation stops the CEL rules.
fn has_blocking_error(errors: &[crate::status::FieldError]) -> bool {
    use crate::status::FieldErrorKind;
    errors.iter().any(|error| {
        matches!(
            error.kind,
            FieldErrorKind::NotSupported(..)
                | FieldErrorKind::Required
                | FieldErrorKind::TooLong(_)
                | FieldErrorKind::TooMany(..)
                | FieldErrorKind::TypeInvalid(_)
        )
    })
}
