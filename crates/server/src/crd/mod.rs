//! Custom resources: CustomResourceDefinitions read into served resources
//! (`definition.rs`), objects served at the request's version and stored at
//! the storage version (`conversion.rs`), and the task that keeps the served registry equal to the
//! established CRDs (`serving.rs`). The controllers that accept names and
//! establish CRDs are in `controllers/crd_naming.rs`. Custom resources then
//! go down the same request path as every built-in kind.

pub mod cel_syntax;
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
/// of embedded resources (`embedded.rs`, not ratcheted, as in kube).
pub fn validate_values(
    custom: Option<&CustomVersion>,
    object: &serde_json::Value,
    old: Option<&serde_json::Value>,
) -> Vec<crate::status::FieldError> {
    let Some(schema) = custom.and_then(CustomVersion::schema_model) else {
        return Vec::new();
    };
    let mut errors = match old {
        Some(old) => value_check::validate_update(object, old, schema),
        None => value_check::validate(object, schema),
    };
    errors.extend(embedded::validate(object, schema));
    errors
}
