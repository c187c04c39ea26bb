//! The definitions apiextensions-apiserver publishes for one served version
//! of a CRD: `<reversed group>.<version>.<Kind>` and `...<Kind>List`.
//!
//! Mirrors `pkg/controller/openapi/builder/builder.go` (`buildKubeNative`,
//! `addEmbeddedProperties`, `buildListSchema`), the structural schema's
//! `Unfold` and `ToKubeOpenAPI` (`pkg/apiserver/schema`), and for v2
//! `pkg/controller/openapi/v2/conversion.go` (`ToStructuralOpenAPIV2`) plus
//! kube-openapi `handler.PruneDefaults`, as the v2 controller applies them.
//!
//! Every schema is treated as structural: ferrokube does not yet refuse
//! non-structural CRD schemas (kube publishes `{type: object}` for those).

use serde_json::{json, Map, Value};

use super::definitions::V2_REF_PREFIX;
use super::v3::V3_REF_PREFIX;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

/// `metav1.TypeMeta` as the generated definitions describe it.
const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
/// `PartialObjectMetadata{}.SwaggerDoc()["metadata"]`.
const OBJECT_META_DOC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
/// `PartialObjectMetadataList{}.SwaggerDoc()["metadata"]`.
const LIST_META_DOC: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
/// The descriptions `addEmbeddedProperties` gives an embedded resource's type meta.
const EMBEDDED_API_VERSION_DOC: &str = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const EMBEDDED_KIND_DOC: &str = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// Which document a definition is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `/openapi/v2`: converted by `ToStructuralOpenAPIV2`, defaults pruned.
    V2,
    /// `/openapi/v3/apis/<group>/<version>`: the schema as written, unfolded.
    V3,
}

impl Flavor {
    fn reference(self, name: &str) -> Value {
        match self {
            Flavor::V2 => json!({ "$ref": format!("{V2_REF_PREFIX}{name}") }),
            Flavor::V3 => json!({ "$ref": format!("{V3_REF_PREFIX}{name}") }),
        }
    }

    /// A `$ref` with a description: siblings of `$ref` in v2, `allOf` in v3
    /// (as the v3 form of every built-in definition has them).
    fn described_reference(self, name: &str, description: &str) -> Value {
        match self {
            Flavor::V2 => {
                let mut out = self.reference(name);
                out["description"] = json!(description);
                out
            }
            Flavor::V3 => json!({ "allOf": [self.reference(name)], "description": description }),
        }
    }
}

/// kube-openapi `util.ToRESTFriendlyName("<group>/<version>.<kind>")`:
/// `example.com`, `v1`, `Widget` -> `com.example.v1.Widget`.
pub(crate) fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

fn gvk_extension(group: &str, version: &str, kind: &str) -> Value {
    json!([{ "group": group, "kind": kind, "version": version }])
}

fn flag(node: &Map<String, Value>, key: &str) -> bool {
    node.get(key).and_then(Value::as_bool) == Some(true)
}

/// `buildKubeNative`: the CRD's `openAPIV3Schema` with `apiVersion`, `kind`
/// and `metadata` set, and the kind's `x-kubernetes-group-version-kind`.
pub(crate) fn object_schema(
    group: &str,
    version: &str,
    kind: &str,
    schema: Option<&Value>,
    flavor: Flavor,
) -> Value {
    let structural = schema.and_then(Value::as_object).map(structural);
    let mut out = match structural {
        // kubectl's v2 validation would refuse unknown fields next to any
        // property, so v2 publishes such a kind as a bare object.
        Some(root)
            if !(flavor == Flavor::V2 && flag(&root, "x-kubernetes-preserve-unknown-fields")) =>
        {
            let mut root = root;
            unfold(&mut root);
            if flavor == Flavor::V2 {
                to_v2(&mut root);
                prune_defaults(&mut root);
            }
            set_properties(
                &mut root,
                [
                    (
                        "metadata",
                        flavor.described_reference(OBJECT_META, OBJECT_META_DOC),
                    ),
                    ("apiVersion", type_meta(API_VERSION_DOC)),
                    ("kind", type_meta(KIND_DOC)),
                ],
            );
            add_embedded_properties(&mut root, flavor);
            root
        }
        _ => {
            let mut bare = Map::new();
            bare.insert("type".into(), json!("object"));
            bare
        }
    };
    out.insert(
        "x-kubernetes-group-version-kind".into(),
        gvk_extension(group, version, kind),
    );
    Value::Object(out)
}

/// `buildListSchema`.
pub(crate) fn list_schema(
    group: &str,
    version: &str,
    kind: &str,
    list_kind: &str,
    plural: &str,
    flavor: Flavor,
) -> Value {
    let mut items = json!({
        "description": format!("List of {plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"),
        "type": "array",
    });
    items["items"] = flavor.reference(&definition_name(group, version, kind));
    json!({
        "description": format!("{list_kind} is a list of {kind}"),
        "properties": {
            "apiVersion": type_meta(API_VERSION_DOC),
            "items": items,
            "kind": type_meta(KIND_DOC),
            "metadata": flavor.described_reference(LIST_META, LIST_META_DOC),
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": gvk_extension(group, version, list_kind),
    })
}

fn type_meta(description: &str) -> Value {
    json!({ "description": description, "type": "string" })
}

/// Sets `entries` in `node`'s `properties` (created when missing), as
/// kube-openapi's `SetProperty` does.
fn set_properties(node: &mut Map<String, Value>, entries: [(&str, Value); 3]) {
    let mut properties = match node.remove("properties") {
        Some(Value::Object(properties)) => properties,
        _ => Map::new(),
    };
    for (name, schema) in entries {
        properties.insert(name.to_string(), schema);
    }
    node.insert("properties".into(), Value::Object(properties));
}

/// Keys a structural schema keeps (`ToKubeOpenAPI` writes nothing else:
/// `example`, `externalDocs`, `id`, `$schema`... are gone).
const KEPT: &[&str] = &[
    "default",
    "description",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "pattern",
    "required",
    "title",
    "type",
    "uniqueItems",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];
/// Extensions written only when true.
const FLAGS: &[&str] = &[
    "nullable",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
];
const JUNCTORS: &[&str] = &["allOf", "anyOf", "oneOf"];

/// The schema as `NewStructural(...).ToKubeOpenAPI()` gives it back.
fn structural(node: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in node {
        let key_str = key.as_str();
        if KEPT.contains(&key_str) {
            out.insert(key.clone(), value.clone());
        } else if FLAGS.contains(&key_str) {
            if value.as_bool() == Some(true) {
                out.insert(key.clone(), Value::Bool(true));
            }
        } else if JUNCTORS.contains(&key_str) {
            if let Value::Array(list) = value {
                let list: Vec<Value> = list
                    .iter()
                    .filter_map(Value::as_object)
                    .map(|item| Value::Object(structural(item)))
                    .collect();
                out.insert(key.clone(), Value::Array(list));
            }
        } else if matches!(key_str, "not" | "items") {
            if let Value::Object(child) = value {
                out.insert(key.clone(), Value::Object(structural(child)));
            }
        } else if key_str == "additionalProperties" {
            match value {
                Value::Object(child) => {
                    out.insert(key.clone(), Value::Object(structural(child)));
                }
                Value::Bool(allowed) => {
                    out.insert(key.clone(), Value::Bool(*allowed));
                }
                _ => {}
            }
        } else if key_str == "properties" {
            if let Value::Object(properties) = value {
                let properties: Map<String, Value> = properties
                    .iter()
                    .filter_map(|(name, child)| {
                        Some((name.clone(), Value::Object(structural(child.as_object()?))))
                    })
                    .collect();
                out.insert(key.clone(), Value::Object(properties));
            }
        }
    }
    out
}

/// Calls `visit` on the structural children of `node` (properties, items,
/// additionalProperties), not on value validations.
fn for_each_child(node: &mut Map<String, Value>, visit: &mut dyn FnMut(&mut Map<String, Value>)) {
    if let Some(Value::Object(properties)) = node.get_mut("properties") {
        for child in properties.values_mut() {
            if let Value::Object(child) = child {
                visit(child);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(Value::Object(child)) = node.get_mut(key) {
            visit(child);
        }
    }
}

fn int_or_string_any_of() -> Value {
    json!([{ "type": "integer" }, { "type": "string" }])
}

/// `Structural.Unfold`: `x-kubernetes-int-or-string` spelled out as
/// `anyOf: [{type: integer}, {type: string}]` (in front of an `allOf` when
/// the node has an `anyOf` of its own).
fn unfold(node: &mut Map<String, Value>) {
    if flag(node, "x-kubernetes-int-or-string") {
        let pattern = int_or_string_any_of();
        let any_of_is_pattern = node.get("anyOf") == Some(&pattern);
        let all_of_starts_with_pattern = node
            .get("allOf")
            .and_then(Value::as_array)
            .and_then(|list| list.first())
            .is_some_and(|first| {
                first.get("anyOf") == Some(&pattern)
                    && first.as_object().is_some_and(|first| first.len() == 1)
            });
        if !any_of_is_pattern && !all_of_starts_with_pattern {
            if node.contains_key("anyOf") {
                let mut all_of = vec![json!({ "anyOf": pattern })];
                if let Some(Value::Array(existing)) = node.remove("allOf") {
                    all_of.extend(existing);
                }
                node.insert("allOf".into(), Value::Array(all_of));
            } else {
                node.insert("anyOf".into(), pattern);
            }
        }
    }
    for_each_child(node, &mut unfold);
}

/// `ToStructuralOpenAPIV2`: what kubectl's v2 parser cannot take is
/// dropped. Each node is changed before its children, as kube's visitor does.
fn to_v2(node: &mut Map<String, Value>) {
    for junctor in ["allOf", "anyOf", "oneOf", "not"] {
        node.remove(junctor);
    }
    if node.remove("nullable").is_some() {
        node.remove("type");
        node.remove("items");
        node.remove("properties");
    }
    let preserve_unknown = flag(node, "x-kubernetes-preserve-unknown-fields");
    if preserve_unknown {
        node.remove("items");
        node.remove("properties");
    }
    let typed = |node: &Map<String, Value>, ty: &str| node.get("type") == Some(&json!(ty));
    if !node.contains_key("items") && typed(node, "array") {
        node.remove("type");
    }
    if preserve_unknown && typed(node, "object") {
        node.remove("type");
    }
    let nullable_properties: Vec<String> = match node.get("properties") {
        Some(Value::Object(properties)) => properties
            .iter()
            .filter(|(_, child)| child.get("nullable").and_then(Value::as_bool) == Some(true))
            .map(|(name, _)| name.clone())
            .collect(),
        _ => Vec::new(),
    };
    let nullable_values = node
        .get("additionalProperties")
        .and_then(|child| child.get("nullable"))
        .and_then(Value::as_bool)
        == Some(true);
    if nullable_values {
        node.remove("required");
    } else if !nullable_properties.is_empty() {
        if let Some(Value::Array(required)) = node.get_mut("required") {
            required.retain(|name| {
                name.as_str()
                    .is_none_or(|name| !nullable_properties.iter().any(|n| n == name))
            });
            if required.is_empty() {
                node.remove("required");
            }
        }
    }
    for_each_child(node, &mut to_v2);
}

/// kube-openapi `handler.PruneDefaults`: the v2 document carries no defaults.
fn prune_defaults(node: &mut Map<String, Value>) {
    node.remove("default");
    for_each_child(node, &mut prune_defaults);
}

/// `addEmbeddedProperties`: an `x-kubernetes-embedded-resource` node gets
/// `apiVersion`, `kind` and `metadata` (not in v2 when it also preserves
/// unknown fields: kubectl would then refuse every other field).
fn add_embedded_properties(node: &mut Map<String, Value>, flavor: Flavor) {
    for_each_child(node, &mut |child| add_embedded_properties(child, flavor));
    if flavor == Flavor::V2 && flag(node, "x-kubernetes-preserve-unknown-fields") {
        return;
    }
    if !flag(node, "x-kubernetes-embedded-resource") {
        return;
    }
    set_properties(
        node,
        [
            ("apiVersion", type_meta(EMBEDDED_API_VERSION_DOC)),
            ("kind", type_meta(EMBEDDED_KIND_DOC)),
            (
                "metadata",
                flavor.described_reference(OBJECT_META, OBJECT_META_DOC),
            ),
        ],
    );
    let required = node
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(required) = required {
        for name in ["kind", "apiVersion"] {
            if !required.iter().any(|r| r == name) {
                required.push(json!(name));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(schema: Value) -> Value {
        object_schema("example.com", "v1", "Widget", Some(&schema), Flavor::V2)
    }

    fn v3(schema: Value) -> Value {
        object_schema("example.com", "v1", "Widget", Some(&schema), Flavor::V3)
    }

    #[test]
    fn names_reverse_the_group() {
        assert_eq!(
            definition_name("example.com", "v1", "Widget"),
            "com.example.v1.Widget"
        );
        assert_eq!(
            definition_name("stable.example.com", "v1beta1", "CronTabList"),
            "com.example.stable.v1beta1.CronTabList"
        );
        assert_eq!(definition_name("local", "v1", "Thing"), "local.v1.Thing");
    }

    #[test]
    fn kube_native_properties_and_gvk_are_added() {
        let schema = json!({
            "type": "object",
            "description": "A widget.",
            "properties": {
                "spec": { "type": "object", "description": "Desired state.", "example": {"a": 1},
                          "properties": { "color": { "type": "string", "description": "The colour." } } },
                "metadata": { "type": "object", "properties": { "name": { "type": "string" } } }
            }
        });
        for (doc, prefix) in [
            (v2(schema.clone()), V2_REF_PREFIX),
            (v3(schema), V3_REF_PREFIX),
        ] {
            assert_eq!(
                doc["x-kubernetes-group-version-kind"],
                json!([{ "group": "example.com", "kind": "Widget", "version": "v1" }])
            );
            assert_eq!(doc["description"], "A widget.");
            assert_eq!(
                doc["properties"]["spec"]["properties"]["color"]["description"],
                "The colour."
            );
            // Not structural: dropped.
            assert!(doc["properties"]["spec"].get("example").is_none());
            assert_eq!(doc["properties"]["apiVersion"]["type"], "string");
            assert_eq!(doc["properties"]["kind"]["description"], KIND_DOC);
            let meta = &doc["properties"]["metadata"];
            let reference = meta["$ref"]
                .as_str()
                .or_else(|| meta["allOf"][0]["$ref"].as_str())
                .expect("metadata is a reference");
            assert_eq!(reference, format!("{prefix}{OBJECT_META}"));
            assert_eq!(meta["description"], OBJECT_META_DOC);
        }
    }

    #[test]
    fn v2_drops_junctors_nullable_and_defaults() {
        let doc = v2(json!({
            "type": "object",
            "required": ["spec", "note"],
            "properties": {
                "spec": {
                    "type": "object",
                    "default": {},
                    "oneOf": [{ "required": ["a"] }, { "required": ["b"] }],
                    "not": { "required": ["c"] },
                    "properties": {
                        "a": { "type": "string", "default": "x", "enum": ["x", "y"], "maxLength": 3 },
                        "b": { "type": "string", "anyOf": [{ "pattern": "^b" }] },
                        "port": { "x-kubernetes-int-or-string": true }
                    }
                },
                "note": { "type": "string", "nullable": true },
                "list": { "type": "array", "nullable": true, "items": { "type": "string" } }
            }
        }));
        let spec = &doc["properties"]["spec"];
        for junctor in ["oneOf", "anyOf", "allOf", "not"] {
            assert!(spec.get(junctor).is_none(), "{junctor}");
            assert!(spec["properties"]["b"].get(junctor).is_none(), "{junctor}");
            assert!(
                spec["properties"]["port"].get(junctor).is_none(),
                "{junctor}"
            );
        }
        assert!(spec.get("default").is_none());
        assert_eq!(
            spec["properties"]["a"],
            json!({ "type": "string", "enum": ["x", "y"], "maxLength": 3 }),
            "value validations stay, defaults go"
        );
        assert_eq!(
            spec["properties"]["port"],
            json!({ "x-kubernetes-int-or-string": true })
        );
        // Nullable: untyped, no structure, and no longer required.
        assert_eq!(doc["properties"]["note"], json!({}));
        assert_eq!(doc["properties"]["list"], json!({}));
        assert_eq!(doc["required"], json!(["spec"]));
        assert!(!doc.to_string().contains("nullable"));
    }

    #[test]
    fn v2_preserve_unknown_fields_and_arrays_without_items() {
        let doc = v2(json!({
            "type": "object",
            "properties": {
                "free": { "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                          "properties": { "x": { "type": "string" } } },
                "tuple": { "type": "array", "x-kubernetes-preserve-unknown-fields": true,
                           "items": { "type": "string" } },
                "embedded": { "type": "object", "x-kubernetes-embedded-resource": true,
                              "x-kubernetes-preserve-unknown-fields": true },
                "nullableValues": { "type": "object", "required": ["k"],
                                    "additionalProperties": { "type": "string", "nullable": true } }
            }
        }));
        let props = &doc["properties"];
        assert_eq!(
            props["free"],
            json!({ "x-kubernetes-preserve-unknown-fields": true })
        );
        assert_eq!(
            props["tuple"],
            json!({ "x-kubernetes-preserve-unknown-fields": true })
        );
        // Embedded and preserving: no type meta in v2.
        assert_eq!(
            props["embedded"],
            json!({ "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true })
        );
        assert!(props["nullableValues"].get("required").is_none());
        assert_eq!(props["nullableValues"]["additionalProperties"], json!({}));

        // A root that preserves unknown fields is a bare object in v2 only.
        let root = json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true });
        assert_eq!(
            v2(root.clone()),
            json!({ "type": "object", "x-kubernetes-group-version-kind": [{ "group": "example.com", "kind": "Widget", "version": "v1" }] })
        );
        let in_v3 = v3(root);
        assert_eq!(in_v3["x-kubernetes-preserve-unknown-fields"], true);
        assert!(in_v3["properties"]["metadata"].is_object());
        // No schema at all: a bare object in both.
        let none = object_schema("example.com", "v1", "Widget", None, Flavor::V3);
        assert_eq!(none["type"], "object");
        assert!(none.get("properties").is_none());
    }

    #[test]
    fn v3_keeps_the_schema_and_unfolds_int_or_string() {
        let doc = v3(json!({
            "type": "object",
            "properties": {
                "port": { "x-kubernetes-int-or-string": true, "default": 80 },
                "both": { "x-kubernetes-int-or-string": true, "anyOf": [{ "maximum": 3 }] },
                "note": { "type": "string", "nullable": true, "default": "n" },
                "pick": { "type": "string", "oneOf": [{ "pattern": "^a" }, { "pattern": "^b" }],
                          "x-kubernetes-validations": [{ "rule": "self != 'c'" }] },
                "embedded": { "type": "object", "x-kubernetes-embedded-resource": true,
                              "x-kubernetes-preserve-unknown-fields": true, "required": ["kind"] }
            }
        }));
        let props = &doc["properties"];
        assert_eq!(
            props["port"],
            json!({ "x-kubernetes-int-or-string": true, "default": 80,
                    "anyOf": [{ "type": "integer" }, { "type": "string" }] })
        );
        assert_eq!(
            props["both"]["allOf"],
            json!([{ "anyOf": [{ "type": "integer" }, { "type": "string" }] }])
        );
        assert_eq!(props["both"]["anyOf"], json!([{ "maximum": 3 }]));
        assert_eq!(
            props["note"],
            json!({ "type": "string", "nullable": true, "default": "n" })
        );
        assert_eq!(props["pick"]["oneOf"][1]["pattern"], "^b");
        assert_eq!(
            props["pick"]["x-kubernetes-validations"][0]["rule"],
            "self != 'c'"
        );
        let embedded = &props["embedded"];
        assert_eq!(embedded["required"], json!(["kind", "apiVersion"]));
        assert_eq!(
            embedded["properties"]["apiVersion"]["description"],
            EMBEDDED_API_VERSION_DOC
        );
        assert_eq!(
            embedded["properties"]["metadata"]["allOf"][0]["$ref"],
            format!("{V3_REF_PREFIX}{OBJECT_META}")
        );
    }

    #[test]
    fn list_schema_refers_to_the_kind() {
        for (flavor, prefix) in [(Flavor::V2, V2_REF_PREFIX), (Flavor::V3, V3_REF_PREFIX)] {
            let list = list_schema(
                "example.com",
                "v1",
                "Widget",
                "WidgetList",
                "widgets",
                flavor,
            );
            assert_eq!(list["description"], "WidgetList is a list of Widget");
            assert_eq!(list["required"], json!(["items"]));
            assert_eq!(
                list["properties"]["items"]["items"]["$ref"],
                format!("{prefix}com.example.v1.Widget")
            );
            assert_eq!(
                list["x-kubernetes-group-version-kind"][0]["kind"],
                "WidgetList"
            );
            assert_eq!(list["properties"]["metadata"]["description"], LIST_META_DOC);
        }
    }

    #[test]
    fn type_meta_texts_are_the_vendored_ones() {
        let defs = super::super::definitions::Definitions::load().expect("defs");
        let deployment = defs
            .get("io.k8s.api.apps.v1.Deployment")
            .expect("Deployment");
        assert_eq!(
            deployment["properties"]["apiVersion"],
            type_meta(API_VERSION_DOC)
        );
        assert_eq!(deployment["properties"]["kind"], type_meta(KIND_DOC));
        assert_eq!(
            deployment["properties"]["metadata"]["description"],
            OBJECT_META_DOC
        );
    }
}
