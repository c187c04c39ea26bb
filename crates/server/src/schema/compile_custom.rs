//! Compiling a custom resource version's schema (`openAPIV3Schema`, as the
//! CRD's JSON text) into a model layered on the built-in one, the way
//! apiextensions-apiserver builds the type its field manager and unknown
//! field checks read (`apiserver/customresource_handler.go`,
//! `buildOpenAPIModelsForApply`): the version's schema with `apiVersion`
//! and `kind` strings and `metadata` the built-in `ObjectMeta` at the root.

use serde_json::{json, Map, Value};

use super::compile_openapi::compile_layered;
use super::model::Model;

/// The model of one CRD version's schema text; `None` when the text is not
/// a JSON object or the built-in definitions did not load. The parsed JSON
/// is dropped once compiled (a 200-field schema's tree is several times
/// its model).
pub fn compile_custom_resource(schema_text: &str) -> Option<Model> {
    let mut schema: Value = serde_json::from_str(schema_text).ok()?;
    let map = schema.as_object_mut()?;
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let properties = properties.as_object_mut()?;
    properties.insert("apiVersion".into(), json!({"type": "string"}));
    properties.insert("kind".into(), json!({"type": "string"}));
    properties.insert(
        "metadata".into(),
        json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}),
    );
    let base = super::builtin().ok()?;
    Some(compile_layered(base, &schema))
}

/// A custom resource version's model, compiled on first use from its schema
/// text and shared by clones. A cache of the text: it takes no part in
/// equality (two versions with the same schema text are equal whether or
/// not either was compiled yet).
#[derive(Debug, Default, Clone)]
pub struct LazyCustomModel(std::sync::OnceLock<Option<std::sync::Arc<Model>>>);

impl LazyCustomModel {
    /// The model of `schema_text`, compiled by the first caller.
    pub fn get_or_compile(&self, schema_text: Option<&str>) -> Option<&Model> {
        self.0
            .get_or_init(|| compile_custom_resource(schema_text?).map(std::sync::Arc::new))
            .as_deref()
    }
}

impl PartialEq for LazyCustomModel {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}
