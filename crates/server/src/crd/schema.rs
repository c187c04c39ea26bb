//! Defaulting (`structural/defaulting/algorithm.go`) and pruning of unknown
//! fields (`structural/pruning/algorithm.go`, which also reports what it
//! dropped for `fieldValidation`: `unknown field "spec.foo"`) of custom
//! resources, walking their version's compiled model
//! (`schema::compile_custom_resource`) from its schema root: each node's
//! properties, items and additional properties, and its value facts
//! (`schema::NodeValues`: default, nullable, embedded resource).
//!
//! Value validation (`value_check.rs`) and embedded resources
//! (`embedded.rs`) walk the same model.

use serde_json::{Map, Value};

use crate::schema::{Model, NodeId};

/// The schema of `key`'s value under `id`: the declared property, else
/// `additionalProperties` (a schema, or `true`: a node that keeps anything).
pub(crate) fn field_schema(model: &Model, id: NodeId, key: &str) -> Option<NodeId> {
    let node = model.node(id);
    node.property(key).or_else(|| additional(model, id))
}

/// `additionalProperties` of `id` as a node.
pub(crate) fn additional(model: &Model, id: NodeId) -> Option<NodeId> {
    model
        .node(id)
        .additional_properties
        .or(model.values(id).additional_any())
}

/// Whether defaulting can change anything: some schema in the tree under
/// the model's schema root has a `default`.
pub fn has_defaults(model: &Model) -> bool {
    model
        .schema_root()
        .is_some_and(|root| subtree_has_defaults(model, root, 0))
}

/// The nesting a schema can have (serde_json parses at most 128 levels).
const MAX_DEPTH: usize = 256;

fn subtree_has_defaults(model: &Model, id: NodeId, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let node = model.node(id);
    model.values(id).default.is_some()
        || node
            .properties
            .iter()
            .flatten()
            .any(|property| subtree_has_defaults(model, property.node, depth + 1))
        || node
            .items
            .is_some_and(|items| subtree_has_defaults(model, items, depth + 1))
        || node
            .additional_properties
            .is_some_and(|additional| subtree_has_defaults(model, additional, depth + 1))
}

/// `structuraldefaulting.Default`: missing properties (and nulls where null
/// is not allowed) take their schema's default, recursively.
pub fn default(value: &mut Value, model: &Model) {
    if let Some(root) = model.schema_root() {
        default_at(value, model, root);
    }
}

fn default_at(value: &mut Value, model: &Model, id: NodeId) {
    let node = model.node(id);
    match value {
        Value::Object(map) => {
            for property in node.properties.iter().flatten() {
                let Some(default) = model.values(property.node).default.as_deref() else {
                    continue;
                };
                let missing = match map.get(&*property.name) {
                    None => true,
                    Some(found) => non_nullable_null(found, model, property.node),
                };
                if missing {
                    map.insert(property.name.to_string(), default.clone());
                }
            }
            let additional = additional(model, id);
            for (name, field) in map.iter_mut() {
                if let Some(property) = node.property(name) {
                    default_at(field, model, property);
                } else if let Some(additional) = additional {
                    if let (true, Some(default_value)) = (
                        non_nullable_null(field, model, additional),
                        model.values(additional).default.as_deref(),
                    ) {
                        *field = default_value.clone();
                    }
                    default_at(field, model, additional);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = node.items else {
                return;
            };
            for item in items.iter_mut() {
                if let (true, Some(default_value)) = (
                    non_nullable_null(item, model, item_schema),
                    model.values(item_schema).default.as_deref(),
                ) {
                    *item = default_value.clone();
                }
                default_at(item, model, item_schema);
            }
        }
        _ => {}
    }
}

fn non_nullable_null(value: &Value, model: &Model, id: NodeId) -> bool {
    value.is_null() && !model.values(id).nullable
}

/// `PruneWithOptions(obj, schema, isResourceRoot: true)`: drops every field
/// the schema does not know (the root's `apiVersion`, `kind` and `metadata`
/// are kept, as for any embedded resource) and returns the dropped paths in
/// kube's form (`spec.foo`, `spec.items[0].bar`), sorted.
pub fn prune(object: &mut Value, model: &Model) -> Vec<String> {
    prune_as(object, model, true)
}

/// `Prune(obj, schema, isResourceRoot)`: as [`prune`], with the meta fields
/// of the top level kept only when `resource_root` (a CRD default's value is
/// pruned as a resource root only where its schema is an embedded resource).
pub fn prune_as(object: &mut Value, model: &Model, resource_root: bool) -> Vec<String> {
    let mut pruned = Vec::new();
    prune_value(
        object,
        model,
        model.schema_root(),
        resource_root,
        "",
        &mut pruned,
    );
    pruned.sort();
    pruned
}

const META_FIELDS: &[&str] = &["apiVersion", "kind", "metadata"];

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `root`: the resource's root, which keeps its meta fields as an embedded
/// resource does.
fn prune_value(
    value: &mut Value,
    model: &Model,
    schema: Option<NodeId>,
    root: bool,
    path: &str,
    pruned: &mut Vec<String>,
) {
    if let Some(schema) = schema.filter(|id| model.node(*id).preserve_unknown_fields) {
        skip_prune(value, model, schema, root, path, pruned);
        return;
    }
    match value {
        Value::Object(map) => {
            let Some(schema) = schema else {
                for key in map.keys() {
                    pruned.push(child(path, key));
                }
                map.clear();
                return;
            };
            let embedded = root || model.values(schema).embedded_resource;
            let mut dropped = Vec::new();
            for (key, field) in map.iter_mut() {
                if embedded && keeps_meta_field(key, field) {
                    continue;
                }
                match field_schema(model, schema, key) {
                    Some(next) => {
                        let nested = child(path, key);
                        prune_value(field, model, Some(next), false, &nested, pruned);
                    }
                    None => dropped.push(key.clone()),
                }
            }
            remove(map, dropped, path, pruned);
        }
        Value::Array(items) => {
            let item_schema = schema.and_then(|schema| model.node(schema).items);
            for (index, item) in items.iter_mut().enumerate() {
                let nested = format!("{path}[{index}]");
                prune_value(item, model, item_schema, false, &nested, pruned);
            }
        }
        _ => {}
    }
}

/// `apiVersion` and `kind` when strings, and `metadata`, of an embedded resource.
fn keeps_meta_field(key: &str, field: &Value) -> bool {
    match key {
        "apiVersion" | "kind" => field.is_string(),
        "metadata" => true,
        _ => false,
    }
}

fn remove(
    map: &mut Map<String, Value>,
    dropped: Vec<String>,
    path: &str,
    pruned: &mut Vec<String>,
) {
    for key in dropped {
        pruned.push(child(path, &key));
        map.remove(&key);
    }
}

/// `skipPrune`: under `x-kubernetes-preserve-unknown-fields` unknown fields
/// stay, but the known ones are still pruned inside.
fn skip_prune(
    value: &mut Value,
    model: &Model,
    schema: NodeId,
    root: bool,
    path: &str,
    pruned: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            let embedded = root || model.values(schema).embedded_resource;
            for (key, field) in map.iter_mut() {
                if embedded && META_FIELDS.contains(&key.as_str()) {
                    continue;
                }
                if let Some(next) = field_schema(model, schema, key) {
                    let nested = child(path, key);
                    prune_value(field, model, Some(next), false, &nested, pruned);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = model.node(schema).items else {
                return;
            };
            for (index, item) in items.iter_mut().enumerate() {
                let nested = format!("{path}[{index}]");
                skip_prune(item, model, item_schema, false, &nested, pruned);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::compile_values;
    use serde_json::json;

    fn schema() -> Model {
        compile_values(&json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "replicas": {"type": "integer", "default": 1},
                        "color": {"type": "string", "default": "red"},
                        "note": {"type": "string", "nullable": true, "default": "n"},
                        "ports": {"type": "array", "items": {
                            "type": "object",
                            "properties": {"port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}},
                        }},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                                 "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                     "properties": {"spec": {"type": "object"}}},
                    },
                },
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
            },
        }))
    }

    #[test]
    fn defaults_fill_missing_fields_and_non_nullable_nulls() {
        let mut object = json!({"spec": {"color": null, "note": null, "ports": [{"port": 80}]}});
        default(&mut object, &schema());
        assert_eq!(
            object["spec"],
            json!({"replicas": 1, "color": "red", "note": null, "ports": [{"port": 80, "protocol": "TCP"}]})
        );
        let mut no_spec = json!({});
        default(&mut no_spec, &schema());
        assert_eq!(
            no_spec,
            json!({}),
            "no default for spec itself, so nothing below"
        );
    }

    #[test]
    fn unknown_fields_are_pruned_and_reported_as_kube_names_them() {
        let mut object = json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "extra": 1,
            "spec": {
                "replicas": 2, "bogus": true,
                "ports": [{"port": 80, "x": 1}],
                "labels": {"a": "b"},
                "free": {"anything": {"goes": 1}, "known": {"a": "kept", "b": "pruned"}},
                "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}, "junk": 1},
            },
            "status": {"ready": true, "phase": "x"},
        });
        let pruned = prune(&mut object, &schema());
        assert_eq!(
            pruned,
            [
                "extra",
                "spec.bogus",
                "spec.free.known.b",
                "spec.ports[0].x",
                "spec.template.junk",
                "status.phase",
            ]
        );
        assert_eq!(object["apiVersion"], "example.com/v1");
        assert_eq!(object["metadata"], json!({"name": "w"}));
        assert_eq!(object["spec"]["free"]["anything"], json!({"goes": 1}));
        assert_eq!(object["spec"]["template"]["kind"], "Pod");
        assert_eq!(object["spec"]["labels"], json!({"a": "b"}));
        assert!(object.get("extra").is_none());
    }

    #[test]
    fn a_preserving_root_keeps_everything() {
        let schema = compile_values(
            &json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        );
        let mut object = json!({"apiVersion": "a/v1", "kind": "K", "spec": {"x": [1, {"y": 2}]}});
        let before = object.clone();
        assert!(prune(&mut object, &schema).is_empty());
        assert_eq!(object, before);
    }
}
