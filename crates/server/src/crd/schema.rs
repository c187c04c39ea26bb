//! A CRD version's structural schema, compiled once when the registry is
//! built, and the two things kube does with it to every object written:
//! defaulting (`structural/defaulting/algorithm.go`) and pruning of unknown
//! fields (`structural/pruning/algorithm.go`), which also reports what it
//! dropped for `fieldValidation` (`unknown field "spec.foo"`).
//!
//! Value validation (types, formats, enums, bounds) reads the same tree:
//! each node's checks are its `rules` (`value_rules.rs`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::value_rules::ValueRules;

/// The parts of an OpenAPI v3 schema that pruning and defaulting read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Structural {
    pub properties: BTreeMap<String, Structural>,
    pub items: Option<Box<Structural>>,
    /// `additionalProperties` as a schema (`true` is an empty schema that
    /// keeps any key and prunes nothing below it only when it also
    /// preserves unknown fields).
    pub additional_properties: Option<Box<Structural>>,
    pub preserve_unknown_fields: bool,
    pub embedded_resource: bool,
    pub nullable: bool,
    /// Boxed: most nodes have none, and a `Value` is four words.
    pub default: Option<Box<Value>>,
    /// The value checks of this node, if it has any.
    pub rules: Option<Box<ValueRules>>,
}

impl Structural {
    /// The structural view of a JSON schema (`openAPIV3Schema`).
    pub fn compile(schema: &Value) -> Structural {
        let flag = |name: &str| schema.get(name).and_then(Value::as_bool) == Some(true);
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| (name.clone(), Structural::compile(property)))
                    .collect()
            })
            .unwrap_or_default();
        let additional_properties = match schema.get("additionalProperties") {
            Some(Value::Bool(true)) => Some(Box::new(Structural {
                preserve_unknown_fields: true,
                ..Structural::default()
            })),
            Some(object @ Value::Object(_)) => Some(Box::new(Structural::compile(object))),
            _ => None,
        };
        Structural {
            properties,
            items: schema
                .get("items")
                .filter(|items| items.is_object())
                .map(|items| Box::new(Structural::compile(items))),
            additional_properties,
            preserve_unknown_fields: flag("x-kubernetes-preserve-unknown-fields"),
            embedded_resource: flag("x-kubernetes-embedded-resource"),
            nullable: flag("nullable"),
            default: schema.get("default").cloned().map(Box::new),
            rules: ValueRules::compile(schema),
        }
    }

    /// Whether defaulting can change anything: some schema in the tree has
    /// a `default`.
    pub fn has_defaults(&self) -> bool {
        self.default.is_some()
            || self.properties.values().any(Structural::has_defaults)
            || self.items.as_deref().is_some_and(Structural::has_defaults)
            || self
                .additional_properties
                .as_deref()
                .is_some_and(Structural::has_defaults)
    }
}

/// `structuraldefaulting.Default`: missing properties (and nulls where null
/// is not allowed) take their schema's default, recursively.
pub fn default(value: &mut Value, schema: &Structural) {
    match value {
        Value::Object(map) => {
            for (name, property) in &schema.properties {
                let Some(default) = property.default.as_deref() else {
                    continue;
                };
                let missing = match map.get(name) {
                    None => true,
                    Some(found) => non_nullable_null(found, Some(property)),
                };
                if missing {
                    map.insert(name.clone(), default.clone());
                }
            }
            for (name, field) in map.iter_mut() {
                if let Some(property) = schema.properties.get(name) {
                    default(field, property);
                } else if let Some(additional) = &schema.additional_properties {
                    if let (true, Some(default_value)) = (
                        non_nullable_null(field, Some(additional)),
                        additional.default.as_deref(),
                    ) {
                        *field = default_value.clone();
                    }
                    default(field, additional);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = &schema.items else {
                return;
            };
            for item in items.iter_mut() {
                if let (true, Some(default_value)) = (
                    non_nullable_null(item, Some(item_schema)),
                    item_schema.default.as_deref(),
                ) {
                    *item = default_value.clone();
                }
                default(item, item_schema);
            }
        }
        _ => {}
    }
}

fn non_nullable_null(value: &Value, schema: Option<&Structural>) -> bool {
    value.is_null() && schema.is_some_and(|schema| !schema.nullable)
}

/// `PruneWithOptions(obj, schema, isResourceRoot: true)`: drops every field
/// the schema does not know (the root's `apiVersion`, `kind` and `metadata`
/// are kept, as for any embedded resource) and returns the dropped paths in
/// kube's form (`spec.foo`, `spec.items[0].bar`), sorted.
pub fn prune(object: &mut Value, schema: &Structural) -> Vec<String> {
    prune_as(object, schema, true)
}

/// `Prune(obj, schema, isResourceRoot)`: as [`prune`], with the meta fields
/// of the top level kept only when `resource_root` (a CRD default's value is
/// pruned as a resource root only where its schema is an embedded resource).
pub fn prune_as(object: &mut Value, schema: &Structural, resource_root: bool) -> Vec<String> {
    let mut pruned = Vec::new();
    prune_value(object, Some(schema), resource_root, "", &mut pruned);
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
    schema: Option<&Structural>,
    root: bool,
    path: &str,
    pruned: &mut Vec<String>,
) {
    if let Some(schema) = schema.filter(|schema| schema.preserve_unknown_fields) {
        skip_prune(value, schema, root, path, pruned);
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
            let mut dropped = Vec::new();
            for (key, field) in map.iter_mut() {
                if (root || schema.embedded_resource) && keeps_meta_field(key, field) {
                    continue;
                }
                let next = schema
                    .properties
                    .get(key)
                    .or(schema.additional_properties.as_deref());
                match next {
                    Some(next) => {
                        let nested = child(path, key);
                        prune_value(field, Some(next), false, &nested, pruned);
                    }
                    None => dropped.push(key.clone()),
                }
            }
            remove(map, dropped, path, pruned);
        }
        Value::Array(items) => {
            let item_schema = schema.and_then(|schema| schema.items.as_deref());
            for (index, item) in items.iter_mut().enumerate() {
                let nested = format!("{path}[{index}]");
                prune_value(item, item_schema, false, &nested, pruned);
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
    schema: &Structural,
    root: bool,
    path: &str,
    pruned: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if (root || schema.embedded_resource) && META_FIELDS.contains(&key.as_str()) {
                    continue;
                }
                let next = schema
                    .properties
                    .get(key)
                    .or(schema.additional_properties.as_deref());
                if let Some(next) = next {
                    let nested = child(path, key);
                    prune_value(field, Some(next), false, &nested, pruned);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = schema.items.as_deref() else {
                return;
            };
            for (index, item) in items.iter_mut().enumerate() {
                let nested = format!("{path}[{index}]");
                skip_prune(item, item_schema, false, &nested, pruned);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Structural {
        Structural::compile(&json!({
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
        let schema = Structural::compile(
            &json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        );
        let mut object = json!({"apiVersion": "a/v1", "kind": "K", "spec": {"x": [1, {"y": 2}]}});
        let before = object.clone();
        assert!(prune(&mut object, &schema).is_empty());
        assert_eq!(object, before);
    }
}
