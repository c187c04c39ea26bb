//! `/openapi/v2`: the swagger 2.0 document kube-apiserver serves
//! (shape of upstream `api/openapi-spec/swagger.json`, built by kube-openapi
//! `pkg/builder` and served by `pkg/handler`).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::definitions::{collect_refs, Definitions, V2_REF_PREFIX};
use super::params::Param;
use super::paths::{Body, Media, Operation, PathItem, Routes, Schema};
use super::KUBE_VERSION;

/// Shared body parameters (kube-openapi `collectSharedParameters` names).
const DELETE_BODY: &str = "body-2Y1dVQaQ";
const PATCH_BODY: &str = "body-78PwaGsr";

const JSON: &str = "application/json";
const YAML: &str = "application/yaml";
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const CBOR: &str = "application/cbor";

/// Patch content types in the order kube lists them (`consumes` of PATCH).
pub(crate) const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/apply-patch+cbor",
];

/// Media types an operation produces, in kube's order.
pub(crate) fn produces(media: Media) -> &'static [&'static str] {
    match media {
        Media::Object => &[JSON, YAML, PROTOBUF, CBOR],
        Media::Stream => &[
            JSON,
            YAML,
            PROTOBUF,
            CBOR,
            "application/json;stream=watch",
            "application/vnd.kubernetes.protobuf;stream=watch",
            "application/cbor-seq",
        ],
        Media::Discovery => &[JSON, YAML, PROTOBUF],
        Media::Log => &["text/plain", JSON, YAML, PROTOBUF],
        Media::Connect => &["*/*"],
        Media::Version | Media::Oidc => &[JSON],
        Media::JwkSet => &["application/jwk-set+json"],
        Media::Nothing => &[],
        Media::Custom => &[JSON, YAML],
    }
}

/// Patch content types of custom resources (no strategic merge patch).
pub(crate) const CUSTOM_PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// What an operation consumes (in v3: its request body's content types).
pub(crate) fn consumes(op: &Operation) -> &'static [&'static str] {
    if op.media == Media::Custom {
        return if op.body == Some(Body::Patch) {
            CUSTOM_PATCH_TYPES
        } else {
            &[JSON, YAML]
        };
    }
    if op.body == Some(Body::Patch) {
        return PATCH_TYPES;
    }
    match op.media {
        // Discovery endpoints (`/api/`, `/apis/<group>/<version>/`) have no action.
        Media::Discovery | Media::Object if op.action.is_none() => &[JSON, YAML, PROTOBUF],
        Media::Version => &[JSON],
        Media::Oidc | Media::JwkSet | Media::Nothing => &[],
        _ => &["*/*"],
    }
}

pub(crate) fn status_text(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        _ => "Unauthorized",
    }
}

fn strings(items: &[&str]) -> Value {
    Value::Array(
        items
            .iter()
            .map(|s| Value::String((*s).to_string()))
            .collect(),
    )
}

fn schema_json(schema: &Schema) -> Option<Value> {
    match schema {
        Schema::Ref(name) => Some(json!({ "$ref": format!("{V2_REF_PREFIX}{name}") })),
        Schema::String => Some(json!({ "type": "string" })),
        Schema::None => None,
    }
}

/// A parameter written out in full (v2 form).
fn param_json(p: &Param) -> Value {
    let mut map = Map::new();
    map.insert("description".into(), Value::String(p.description.clone()));
    map.insert("in".into(), Value::String(p.location.as_str().into()));
    map.insert("name".into(), Value::String(p.name.into()));
    if p.required {
        map.insert("required".into(), Value::Bool(true));
    }
    map.insert("type".into(), Value::String(p.ty.as_str().into()));
    map.insert("uniqueItems".into(), Value::Bool(true));
    Value::Object(map)
}

/// Renders parameters, replacing shared ones by `#/parameters/<name>` refs.
fn params_json(
    list: &[Param],
    body: Option<&Body>,
    shared: &mut BTreeMap<String, Value>,
) -> Vec<Value> {
    // Sorted by name then `in`, as kube-openapi does before sharing.
    let mut entries: Vec<(&str, &str, Value)> = Vec::new();
    if let Some(body) = body {
        let value = match body {
            Body::Object(def) => {
                let schema = match def {
                    Some(name) => json!({ "$ref": format!("{V2_REF_PREFIX}{name}") }),
                    None => json!({ "type": "object" }),
                };
                json!({ "in": "body", "name": "body", "required": true, "schema": schema })
            }
            Body::DeleteOptions => {
                let full = json!({ "in": "body", "name": "body", "schema": { "$ref": format!("{V2_REF_PREFIX}io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions") } });
                shared.insert(DELETE_BODY.into(), full);
                json!({ "$ref": format!("#/parameters/{DELETE_BODY}") })
            }
            Body::Patch => {
                let full = json!({ "in": "body", "name": "body", "required": true, "schema": { "$ref": format!("{V2_REF_PREFIX}io.k8s.apimachinery.pkg.apis.meta.v1.Patch") } });
                shared.insert(PATCH_BODY.into(), full);
                json!({ "$ref": format!("#/parameters/{PATCH_BODY}") })
            }
        };
        entries.push(("body", "body", value));
    }
    for p in list {
        let value = match p.v2_name {
            Some(name) => {
                shared.insert(name.to_string(), param_json(p));
                json!({ "$ref": format!("#/parameters/{name}") })
            }
            None => param_json(p),
        };
        entries.push((p.name, p.location.as_str(), value));
    }
    entries.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    entries.into_iter().map(|(_, _, value)| value).collect()
}

fn operation_json(op: &Operation, shared: &mut BTreeMap<String, Value>) -> Value {
    let mut map = Map::new();
    let consumes = consumes(op);
    if !consumes.is_empty() {
        map.insert("consumes".into(), strings(consumes));
    }
    if let Some(description) = &op.description {
        map.insert("description".into(), Value::String(description.clone()));
    }
    map.insert("operationId".into(), Value::String(op.id.clone()));
    let params = params_json(&op.params, op.body.as_ref(), shared);
    if !params.is_empty() {
        map.insert("parameters".into(), Value::Array(params));
    }
    let produces = produces(op.media);
    if !produces.is_empty() {
        map.insert("produces".into(), strings(produces));
    }
    let mut responses = Map::new();
    for (code, schema) in &op.responses {
        let mut response = Map::new();
        response.insert(
            "description".into(),
            Value::String(status_text(*code).into()),
        );
        if let Some(schema) = schema_json(schema) {
            response.insert("schema".into(), schema);
        }
        responses.insert(code.to_string(), Value::Object(response));
    }
    map.insert("responses".into(), Value::Object(responses));
    map.insert("schemes".into(), strings(&["https"]));
    map.insert("tags".into(), strings(&[op.tag.as_str()]));
    if let Some(action) = op.action {
        map.insert("x-kubernetes-action".into(), Value::String(action.into()));
    }
    if let Some(gvk) = &op.gvk {
        map.insert("x-kubernetes-group-version-kind".into(), gvk.to_json());
    }
    Value::Object(map)
}

fn path_json(item: &PathItem, shared: &mut BTreeMap<String, Value>) -> Value {
    let mut map = Map::new();
    for op in &item.ops {
        map.insert(op.method.key().into(), operation_json(op, shared));
    }
    if !item.params.is_empty() {
        map.insert(
            "parameters".into(),
            Value::Array(params_json(&item.params, None, shared)),
        );
    }
    Value::Object(map)
}

/// `base` (the built-in document) with the custom resources' `items` and
/// `custom_definitions` merged in, as apiextensions' OpenAPI controller
/// merges each CRD's spec into the static one (`builder.MergeSpecs`); what
/// the built-in document already holds stays as it is.
pub(crate) fn merge(
    mut base: Value,
    items: &[PathItem],
    custom_definitions: Map<String, Value>,
    defs: &Definitions,
) -> Value {
    let mut shared = BTreeMap::new();
    let mut paths = Map::new();
    for item in items {
        paths.insert(item.path.clone(), path_json(item, &mut shared));
    }
    let mut roots = Vec::new();
    let mut visit = |name: &str| roots.push(name.to_string());
    for value in paths
        .values()
        .chain(shared.values())
        .chain(custom_definitions.values())
    {
        collect_refs(value, &mut visit);
    }
    let mut definitions: Map<String, Value> = custom_definitions;
    for name in defs.closure(roots.iter().map(String::as_str)) {
        if let Some(schema) = defs.get(&name) {
            definitions.insert(name, schema.clone());
        }
    }
    let sections = [
        ("paths", paths),
        ("parameters", shared.into_iter().collect()),
        ("definitions", definitions),
    ];
    for (section, entries) in sections {
        let slot = base
            .as_object_mut()
            .map(|root| root.entry(section).or_insert_with(|| json!({})));
        if let Some(Value::Object(target)) = slot {
            for (key, value) in entries {
                target.entry(key).or_insert(value);
            }
        }
    }
    base
}

/// The whole swagger document: every route, and the definitions they reach.
pub(crate) fn document(routes: &Routes, defs: &Definitions) -> Value {
    let mut shared = BTreeMap::new();
    let mut paths = Map::new();
    for item in routes.values().flatten() {
        paths.insert(item.path.clone(), path_json(item, &mut shared));
    }
    let mut roots = Vec::new();
    let paths = Value::Object(paths);
    collect_refs(&paths, &mut |name| roots.push(name.to_string()));
    for param in shared.values() {
        collect_refs(param, &mut |name| roots.push(name.to_string()));
    }
    let mut definitions = Map::new();
    for name in defs.closure(roots.iter().map(String::as_str)) {
        if let Some(schema) = defs.get(&name) {
            definitions.insert(name, schema.clone());
        }
    }
    json!({
        "definitions": definitions,
        "info": { "title": "Kubernetes", "version": KUBE_VERSION },
        "parameters": shared,
        "paths": paths,
        "security": [ { "BearerToken": [] } ],
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "in": "header",
                "name": "authorization",
                "type": "apiKey"
            }
        },
        "swagger": "2.0"
    })
}
