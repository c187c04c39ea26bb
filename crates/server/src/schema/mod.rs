//! One compiled schema model for every reader of OpenAPI schemas.
//!
//! The vendored built-in definitions (`crate::openapi`) are compiled once
//! per process, on first use, into one [`Model`] ([`builtin`]): an arena of
//! nodes with every `$ref` resolved to a node id. A custom resource
//! version's schema is compiled into a small model layered on it
//! ([`compile_layered`]), so both read the same way.
//!
//! Readers (each keeps its own interpretation, none resolves `$ref`s):
//! field validation's strict-decoding shapes (`field_validation/shape.rs`),
//! server-side apply's structured-merge-diff types (`fieldmanager/schema.rs`),
//! the quantity paths (`schema_walk/compile.rs`), strategic merge patch's Go
//! types (`patch/strategic/schema.rs`) and the Go types of decode errors
//! (`decode_error/go_types.rs`); and, on a custom resource's model, its
//! value validation (`crd/value_check.rs`), pruning and defaulting
//! (`crd/schema.rs`) and embedded resources (`crd/embedded.rs`), which read
//! each node's value facts ([`NodeValues`], `value_rules.rs`).

mod compile_custom;
mod compile_openapi;
pub mod formats;
mod model;
#[cfg(test)]
mod tests;
pub mod value_rules;

use std::sync::OnceLock;

pub use compile_custom::{compile_custom_resource, compile_values};
use compile_openapi::compile_definitions;
pub use compile_openapi::compile_layered;
pub use model::{
    ListTypeExtension, MapType, Model, Node, NodeId, Property, Reference, SchemaType, EMPTY,
};
pub use value_rules::{NodeValues, ValidationRule};

use crate::openapi::OpenApiError;

/// The model of the vendored built-in definitions, compiled on first use
/// (a few milliseconds) and kept for the life of the process.
pub fn builtin() -> Result<&'static Model, OpenApiError> {
    static BUILTIN: OnceLock<Result<Model, OpenApiError>> = OnceLock::new();
    BUILTIN
        .get_or_init(|| crate::openapi::definitions().map(compile_definitions))
        .as_ref()
        .map_err(Clone::clone)
}
