//! `meta.k8s.io` Tables. Every kind gets kube's default columns for now
//! (`rest.NewDefaultTableConvertor`: Name, Created At); per-kind printer
//! columns come with the representations work.

use serde_json::{json, Value};

use crate::api::ApiRequest;
use crate::object;
use crate::registry::ResourceDef;

/// `includeObject`: None | Metadata (default) | Object.
fn row_object(value: &Value, include: &str, version: &str) -> Option<Value> {
    match include {
        "None" => None,
        "Object" => Some(value.clone()),
        _ => Some(json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": format!("meta.k8s.io/{version}"),
            "metadata": object::metadata(value).cloned().unwrap_or_default(),
        })),
    }
}

pub fn table(
    resource: &ResourceDef,
    version: &str,
    items: &[Value],
    revision: i64,
    continue_token: Option<&str>,
    request: &ApiRequest,
) -> Value {
    let _ = resource;
    let include = request.query.get("includeObject").unwrap_or("Metadata");
    let columns = json!([
        {"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names", "priority": 0},
        {"name": "Created At", "type": "date", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata", "priority": 0},
    ]);
    let rows: Vec<Value> = items
        .iter()
        .map(|value| {
            let mut row = json!({
                "cells": [object::name(value), object::meta_str(value, "creationTimestamp")],
            });
            if let (Some(object), Some(map)) = (row_object(value, include, version), row.as_object_mut()) {
                map.insert("object".into(), object);
            }
            row
        })
        .collect();
    let mut metadata = serde_json::Map::new();
    metadata.insert("resourceVersion".into(), json!(revision.to_string()));
    if let Some(token) = continue_token {
        metadata.insert("continue".into(), json!(token));
    }
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": rows,
    })
}
