//! `/openapi/v3`: one OpenAPI 3.0 document per group version (and per
//! discovery root), plus the index listing them.
//!
//! Mirrors kube-openapi `pkg/builder3` (document shape: `$ref`s with siblings
//! wrapped as `allOf: [{$ref}]`, IntOrString / Quantity as `oneOf`) and
//! `pkg/handler3` (`OpenAPIV3Discovery` index, `?hash=` URLs).

use serde_json::{json, Map, Value};

use super::definitions::{collect_refs, Definitions, V2_REF_PREFIX};
use super::params::Param;
use super::paths::{Body, Operation, PathItem, Schema};
use super::v2::{consumes, produces, status_text};
use super::KUBE_VERSION;

pub(crate) const V3_REF_PREFIX: &str = "#/components/schemas/";

const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// Documents that carry no `securitySchemes` upstream (served without authentication).
const UNSECURED: &[&str] = &[".well-known/openid-configuration", "openid/v1/jwks"];

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("{V3_REF_PREFIX}{name}") })
}

/// A vendored v2 schema in v3 form (refs rewritten, siblings of `$ref` moved
/// next to an `allOf`).
pub(crate) fn convert_definition(name: &str, schema: &Value) -> Value {
    let mut out = convert(schema);
    // builder3 uses `OpenAPIV3OneOfTypes` for these two.
    let one_of = match name {
        INT_OR_STRING => Some(json!([{ "type": "integer" }, { "type": "string" }])),
        QUANTITY => Some(json!([{ "type": "string" }, { "type": "number" }])),
        _ => None,
    };
    if let (Some(one_of), Value::Object(map)) = (one_of, &mut out) {
        map.remove("type");
        map.insert("oneOf".into(), one_of);
    }
    out
}

fn convert(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            let mut reference = None;
            for (key, child) in map {
                match key.as_str() {
                    "$ref" => {
                        let target = child.as_str().unwrap_or_default();
                        let name = target.strip_prefix(V2_REF_PREFIX).unwrap_or(target);
                        reference = Some(format!("{V3_REF_PREFIX}{name}"));
                    }
                    // Literal values: copy untouched.
                    "default" | "example" | "enum" | "x-kubernetes-group-version-kind" => {
                        out.insert(key.clone(), child.clone());
                    }
                    "properties" => {
                        let props = child.as_object().map(|props| {
                            props
                                .iter()
                                .map(|(name, sub)| (name.clone(), convert(sub)))
                                .collect::<Map<_, _>>()
                        });
                        out.insert(
                            key.clone(),
                            props.map_or_else(|| child.clone(), Value::Object),
                        );
                    }
                    _ => {
                        out.insert(key.clone(), convert(child));
                    }
                }
            }
            if let Some(reference) = reference {
                if out.is_empty() {
                    out.insert("$ref".into(), Value::String(reference));
                } else {
                    out.insert("allOf".into(), json!([{ "$ref": reference }]));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(convert).collect()),
        other => other.clone(),
    }
}

fn param_json(p: &Param) -> Value {
    let mut map = Map::new();
    map.insert("description".into(), Value::String(p.description.clone()));
    map.insert("in".into(), Value::String(p.location.as_str().into()));
    map.insert("name".into(), Value::String(p.name.into()));
    if p.required {
        map.insert("required".into(), Value::Bool(true));
    }
    map.insert(
        "schema".into(),
        json!({ "type": p.ty.as_str(), "uniqueItems": true }),
    );
    Value::Object(map)
}

fn content(types: &[&str], schema: &Value) -> Value {
    let map: Map<String, Value> = types
        .iter()
        .map(|t| ((*t).to_string(), json!({ "schema": schema })))
        .collect();
    Value::Object(map)
}

/// The request body; its content types are what the operation consumes
/// (kube-openapi `builder3` reads the route's `Consumes`).
fn request_body(op: &Operation, body: &Body) -> Value {
    let types = consumes(op);
    match body {
        Body::Object(def) => {
            let schema = def
                .as_deref()
                .map_or_else(|| json!({ "type": "object" }), schema_ref);
            json!({ "content": content(types, &schema), "required": true })
        }
        Body::DeleteOptions => {
            json!({ "content": content(types, &schema_ref("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")) })
        }
        Body::Patch => json!({
            "content": content(types, &schema_ref("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")),
            "required": true
        }),
    }
}

fn operation_json(op: &Operation) -> Value {
    let mut map = Map::new();
    if let Some(description) = &op.description {
        map.insert("description".into(), Value::String(description.clone()));
    }
    map.insert("operationId".into(), Value::String(op.id.clone()));
    if !op.params.is_empty() {
        map.insert(
            "parameters".into(),
            Value::Array(op.params.iter().map(param_json).collect()),
        );
    }
    if let Some(body) = &op.body {
        map.insert("requestBody".into(), request_body(op, body));
    }
    let mut responses = Map::new();
    for (code, schema) in &op.responses {
        let mut response = Map::new();
        let schema = match schema {
            Schema::Ref(name) => Some(schema_ref(name)),
            Schema::String => Some(json!({ "type": "string" })),
            Schema::None => None,
        };
        if let Some(schema) = schema {
            response.insert("content".into(), content(produces(op.media), &schema));
        }
        response.insert(
            "description".into(),
            Value::String(status_text(*code).into()),
        );
        responses.insert(code.to_string(), Value::Object(response));
    }
    map.insert("responses".into(), Value::Object(responses));
    map.insert("tags".into(), json!([op.tag]));
    if let Some(action) = op.action {
        map.insert("x-kubernetes-action".into(), Value::String(action.into()));
    }
    if let Some(gvk) = &op.gvk {
        map.insert("x-kubernetes-group-version-kind".into(), gvk.to_json());
    }
    Value::Object(map)
}

fn path_json(item: &PathItem) -> Value {
    let mut map = Map::new();
    for op in &item.ops {
        map.insert(op.method.key().into(), operation_json(op));
    }
    if !item.params.is_empty() {
        map.insert(
            "parameters".into(),
            Value::Array(item.params.iter().map(param_json).collect()),
        );
    }
    Value::Object(map)
}

/// The document served at `/openapi/v3/<key>` for the paths under `key`.
pub(crate) fn document(key: &str, items: &[PathItem], defs: &Definitions) -> Value {
    document_with(key, items, defs, Map::new())
}

/// [`document`] with schemas of its own (custom resources' definitions, in
/// v3 form already) besides the vendored ones the paths reach.
pub(crate) fn document_with(
    key: &str,
    items: &[PathItem],
    defs: &Definitions,
    custom_schemas: Map<String, Value>,
) -> Value {
    let mut paths = Map::new();
    for item in items {
        paths.insert(item.path.clone(), path_json(item));
    }
    let paths = Value::Object(paths);
    let mut roots = Vec::new();
    collect_refs(&paths, &mut |name| roots.push(name.to_string()));
    for schema in custom_schemas.values() {
        collect_refs(schema, &mut |name| roots.push(name.to_string()));
    }
    let mut schemas = custom_schemas;
    for name in defs.closure(roots.iter().map(String::as_str)) {
        if let Some(schema) = defs.get(&name) {
            let converted = convert_definition(&name, schema);
            schemas.insert(name, converted);
        }
    }
    let mut components = Map::new();
    if !schemas.is_empty() {
        components.insert("schemas".into(), Value::Object(schemas));
    }
    if !UNSECURED.contains(&key) {
        components.insert(
            "securitySchemes".into(),
            json!({
                "BearerToken": {
                    "description": "Bearer Token authentication",
                    "in": "header",
                    "name": "authorization",
                    "type": "apiKey"
                }
            }),
        );
    }
    json!({
        "components": components,
        "info": { "title": "Kubernetes", "version": KUBE_VERSION },
        "openapi": "3.0.0",
        "paths": paths
    })
}

/// `/openapi/v3`: `{"paths": {"apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=..."}}}`
/// (upstream `OpenAPIV3Discovery`, `constructServerRelativeURL`).
pub(crate) fn index<'a, I>(entries: I) -> Value
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let paths: Map<String, Value> = entries
        .into_iter()
        .map(|(key, hash)| {
            (
                key.to_string(),
                json!({ "serverRelativeURL": format!("/openapi/v3/{key}?hash={hash}") }),
            )
        })
        .collect();
    json!({ "paths": paths })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_with_siblings_become_all_of() {
        let v2 = json!({
            "properties": {
                "metadata": { "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "description": "d" },
                "items": { "type": "array", "items": { "$ref": "#/definitions/X" } }
            },
            "type": "object"
        });
        let v3 = convert_definition("X", &v2);
        assert_eq!(
            v3["properties"]["metadata"],
            json!({ "allOf": [{ "$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" }], "description": "d" })
        );
        assert_eq!(
            v3["properties"]["items"]["items"],
            json!({ "$ref": "#/components/schemas/X" })
        );
        let ios = convert_definition(
            INT_OR_STRING,
            &json!({ "description": "d", "format": "int-or-string", "type": "string" }),
        );
        assert_eq!(
            ios,
            json!({ "description": "d", "format": "int-or-string", "oneOf": [{ "type": "integer" }, { "type": "string" }] })
        );
    }
}
