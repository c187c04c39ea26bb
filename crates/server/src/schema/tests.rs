use serde_json::json;

use super::*;

fn model() -> &'static Model {
    builtin().expect("vendored definitions compile")
}

fn definition(name: &str) -> &'static Node {
    let model = model();
    model.node(model.definition(name).expect(name))
}

#[test]
fn kinds_lead_to_their_definition() {
    let model = model();
    let id = model.kind("apps", "v1", "Deployment").expect("Deployment");
    assert_eq!(
        model.definition_name(id),
        Some("io.k8s.api.apps.v1.Deployment")
    );
    assert_eq!(model.kind("apps", "v1", "NoSuchKind"), None);
    assert_eq!(model.kind("", "v1", "Deployment"), None);
    let spec = model.node(id).property("spec").expect("spec");
    let target = model.resolve(spec).expect("DeploymentSpec resolves");
    assert_eq!(
        model.definition_name(target),
        Some("io.k8s.api.apps.v1.DeploymentSpec")
    );
}

#[test]
fn list_extensions_are_read_once() {
    let model = model();
    let pod_spec = definition("io.k8s.api.core.v1.PodSpec");
    let containers = model.node(pod_spec.property("containers").expect("containers"));
    assert_eq!(containers.schema_type, Some(SchemaType::Array));
    assert_eq!(containers.list_type, Some(ListTypeExtension::Map));
    assert_eq!(&*containers.list_map_keys, &["name".into()] as &[Box<str>]);
    assert_eq!(containers.patch_strategy.as_deref(), Some("merge"));
    assert_eq!(containers.patch_merge_key.as_deref(), Some("name"));
    let item = containers.items.expect("items");
    let container = model.resolve(item).expect("Container");
    assert_eq!(
        model.definition_name(container),
        Some("io.k8s.api.core.v1.Container")
    );
}

#[test]
fn properties_are_sorted_for_lookup_and_order() {
    let meta = definition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    let names: Vec<&str> = meta
        .properties
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .map(|p| &*p.name)
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert!(meta.property("labels").is_some());
    assert!(meta.property("Labels").is_none());
    let labels = model().node(meta.property("labels").expect("labels"));
    assert!(labels.has_additional_properties);
    assert_eq!(labels.map_type, None);
}

#[test]
fn every_vendored_reference_resolves() {
    let model = model();
    for index in 0..model.len() {
        let node = model.node(index as NodeId);
        assert_ne!(node.reference, Some(Reference::Missing), "node {index}");
    }
}

#[test]
fn recursive_definitions_are_cycles_of_ids() {
    let model = model();
    let name = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
    let props = model.definition(name).expect("JSONSchemaProps");
    let properties = model
        .node(props)
        .property("properties")
        .expect("properties");
    let values = model
        .node(properties)
        .additional_properties
        .expect("a map of schemas");
    assert_eq!(model.resolve(values), Some(props));
}

#[test]
fn a_layered_schema_reaches_builtin_definitions() {
    let base = model();
    let schema = json!({
        "type": "object",
        "properties": {
            "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
            "spec": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": true,
                "properties": {
                    "port": {"x-kubernetes-int-or-string": true},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                    "weird": {"$ref": "#/definitions/does.not.Exist"},
                    "selector": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": false}
                }
            }
        }
    });
    let model = compile_layered(base, &schema);
    let root = model.root().expect("root");
    assert!(root as usize >= base.len(), "local ids follow the base's");
    let meta = model.node(root).property("metadata").expect("metadata");
    assert_eq!(
        model.definition_name(model.resolve(meta).expect("ObjectMeta")),
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    );
    let spec = model.node(model.node(root).property("spec").expect("spec"));
    assert!(spec.preserve_unknown_fields);
    assert!(
        model
            .node(spec.property("port").expect("port"))
            .int_or_string
    );
    let tags = model.node(spec.property("tags").expect("tags"));
    assert_eq!(tags.list_type, Some(ListTypeExtension::Set));
    let item = model.node(tags.items.expect("items"));
    assert_eq!(item.schema_type, Some(SchemaType::String));
    let weird = spec.property("weird").expect("weird");
    assert_eq!(model.resolve(weird), None);
    let selector = model.node(spec.property("selector").expect("selector"));
    assert_eq!(selector.map_type, Some(MapType::Atomic));
    assert!(selector.has_additional_properties);
    assert_eq!(selector.additional_properties, None);
    assert_eq!(
        model.definition("io.k8s.api.core.v1.Pod"),
        base.definition("io.k8s.api.core.v1.Pod")
    );
}

#[test]
fn non_object_schemas_are_the_empty_node() {
    let model = compile_layered(model(), &json!({"properties": {"a": true}}));
    let root = model.node(model.root().expect("root"));
    assert_eq!(root.property("a"), Some(EMPTY));
    assert!(model.node(EMPTY).schema_type.is_none());
}

#[test]
fn a_custom_resource_schema_gets_type_meta_and_object_meta() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["port", "protocol"],
                  "items": {"type": "object", "properties": {"port": {"type": "integer"}}}}}}}});
    let model = compile_custom_resource(&schema).expect("compiles");
    let root = model.node(model.root().expect("root"));
    for key in ["apiVersion", "kind"] {
        let node = model.node(root.property(key).expect(key));
        assert_eq!(node.schema_type, Some(SchemaType::String));
    }
    let meta = model.resolve(root.property("metadata").expect("metadata"));
    assert_eq!(
        meta.and_then(|id| model.definition_name(id)),
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    );
    let spec = model.node(root.property("spec").expect("spec"));
    let ports = model.node(spec.property("ports").expect("ports"));
    assert_eq!(
        &*ports.list_map_keys,
        &["port".into(), "protocol".into()] as &[Box<str>]
    );
    assert!(compile_custom_resource(&json!([1])).is_none());
    assert!(compile_custom_resource(&json!("not a schema")).is_none());
}

#[test]
fn a_custom_resource_model_keeps_the_schema_as_written_with_its_value_facts() {
    let schema = json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}},
        "spec": {"type": "object", "nullable": true, "properties": {
            "size": {"type": "integer", "default": 1, "minimum": 0},
            "any": {"type": "object", "additionalProperties": true},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}}});
    let model = compile_custom_resource(&schema).expect("compiles");
    let typed = model.root().expect("root");
    let written = model.schema_root().expect("schema root");
    assert_ne!(typed, written, "the typed root is a node of its own");
    let meta = model.node(written).property("metadata").expect("metadata");
    assert!(
        model.node(meta).property("name").is_some(),
        "the schema's own metadata is validated as written"
    );
    assert!(model.node(typed).reference.is_none());
    let spec = model.node(written).property("spec").expect("spec");
    assert!(model.values(spec).nullable);
    let size = model.node(spec).property("size").expect("size");
    assert_eq!(model.values(size).default.as_deref(), Some(&json!(1)));
    let rules = model.values(size).rules.as_deref().expect("rules");
    assert_eq!(value_rules::types_of(model.node(size)), "integer");
    assert_eq!(rules.num().minimum, Some(0.0));
    let any = model.node(spec).property("any").expect("any");
    let kept = model
        .values(any)
        .additional_any()
        .expect("additionalProperties: true");
    assert!(model.node(kept).preserve_unknown_fields);
    let either = model.node(spec).property("either").expect("either");
    let alternatives = &model
        .values(either)
        .rules
        .as_deref()
        .expect("rules")
        .junct()
        .any_of;
    assert_eq!(alternatives.len(), 2);
    assert_eq!(
        model.node(alternatives[1]).schema_type,
        Some(SchemaType::String)
    );
    assert!(
        model.values(EMPTY).rules.is_none(),
        "base nodes have no value facts"
    );
}

#[test]
fn a_root_that_declares_type_meta_only_as_typed_is_shared() {
    let schema = json!({"type": "object", "properties": {
        "apiVersion": {"type": "string", "description": "generated"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {"type": "object"}}});
    let model = compile_custom_resource(&schema).expect("compiles");
    assert_eq!(
        model.root(),
        model.schema_root(),
        "one root, one property list"
    );
    let root = model.node(model.root().expect("root"));
    let meta = model.resolve(root.property("metadata").expect("metadata"));
    assert_eq!(
        meta.and_then(|id| model.definition_name(id)),
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    );
    assert!(root.property("spec").is_some());
    let undeclared = compile_custom_resource(&json!({"type": "object"})).expect("compiles");
    assert_eq!(undeclared.root(), undeclared.schema_root());
    let kind = json!({"type": "object", "properties": {"kind": {"type": "string", "enum": ["A"]}}});
    let constrained = compile_custom_resource(&kind).expect("compiles");
    assert_ne!(
        constrained.root(),
        constrained.schema_root(),
        "a constrained kind keeps its own schema root"
    );
}
