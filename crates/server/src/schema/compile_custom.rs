//! Compiling a custom resource version's schema (`openAPIV3Schema`) into a
//! model layered on the built-in one, with every node's value facts
//! (`value_rules.rs`), once per CRD generation: the one model its serving
//! reads.
//!
//! [`Model::schema_root`] is the schema as written, which apiextensions
//! validates, prunes and defaults objects with (`NewStructural` of the
//! version's schema in `customresource_handler.go`); [`Model::root`] is the
//! type its field manager and unknown-field checks read
//! (`buildOpenAPIModelsForApply`): the same root with `apiVersion` and
//! `kind` strings and `metadata` the built-in `ObjectMeta`.

use serde_json::{json, Value};

use super::compile_openapi::compile_layered_values;
use super::model::Model;

/// The model of one CRD version's schema; `None` when it is not a JSON
/// object.
pub fn compile_custom_resource(schema: &Value) -> Option<Model> {
    schema.as_object()?;
    let typed_root = [
        ("apiVersion", json!({"type": "string"})),
        ("kind", json!({"type": "string"})),
        (
            "metadata",
            json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}),
        ),
    ];
    Some(compile_layered_values(base(), schema, &typed_root))
}

/// The model of one schema as written, with its value facts and nothing
/// added at its root (a CRD default's schema, checked on its own).
pub fn compile_values(schema: &Value) -> Model {
    compile_layered_values(base(), schema, &[])
}

/// The built-in model custom models are layered on; the empty one if the
/// vendored definitions did not load (then `metadata` reads as unknown).
fn base() -> &'static Model {
    super::builtin().unwrap_or_else(|_| Model::empty())
}
