//! The served documents follow the registry snapshot.

use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::crd::serving::registry_of;
use crate::registry::builtin_resources;

fn crd(group: &str, description: &str) -> Value {
    json!({
        "metadata": { "name": format!("widgets.{group}") },
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": { "plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList" },
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": { "status": {} },
                "schema": { "openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": { "type": "object", "description": description,
                                  "properties": {
                                      "color": { "type": "string", "description": "The colour.", "default": "red" },
                                      "size": { "x-kubernetes-int-or-string": true, "nullable": true }
                                  } }
                    }
                } }
            }, {
                "name": "v2", "served": false, "storage": false
            }]
        },
        "status": {
            "acceptedNames": { "plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList" },
            "conditions": [{ "type": "Established", "status": "True" }]
        }
    })
}

fn registry(crds: &[Value]) -> Arc<Registry> {
    Arc::new(registry_of(crds))
}

fn parse(doc: &Document) -> Value {
    serde_json::from_slice(&doc.json).expect("JSON document")
}

#[test]
fn custom_resources_are_published_in_v2_v3_and_protobuf() {
    let api = OpenApi::new(builtin_resources());
    let with_widget = registry(&[crd("example.com", "Desired state.")]);

    let v2_doc = api.v2_served(&with_widget).expect("v2");
    let doc = parse(&v2_doc);
    let widget = &doc["definitions"]["com.example.v1.Widget"];
    assert_eq!(
        widget["properties"]["spec"]["description"],
        "Desired state."
    );
    assert_eq!(
        widget["properties"]["spec"]["properties"]["color"],
        json!({ "type": "string", "description": "The colour." }),
        "v2 prunes defaults"
    );
    assert_eq!(
        widget["properties"]["spec"]["properties"]["size"],
        json!({ "x-kubernetes-int-or-string": true })
    );
    assert!(doc["definitions"]["com.example.v1.WidgetList"].is_object());
    assert!(
        doc["definitions"]["io.k8s.api.apps.v1.Deployment"].is_object(),
        "built-ins stay"
    );
    let item = &doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status"];
    assert_eq!(
        item["patch"]["operationId"],
        "patchExampleComV1NamespacedWidgetStatus"
    );
    assert_eq!(
        item["patch"]["consumes"],
        json!([
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml"
        ])
    );
    assert!(
        doc["paths"].get("/apis/example.com/v2/widgets").is_none(),
        "v2 is not served"
    );
    let defs = doc["definitions"].as_object().expect("definitions");
    let mut dangling = Vec::new();
    definitions::collect_refs(&doc, &mut |name| {
        if !defs.contains_key(name) && doc["parameters"].get(name).is_none() {
            dangling.push(name.to_string());
        }
    });
    assert!(dangling.is_empty(), "dangling: {dangling:?}");
    assert_ne!(v2_doc.etag, api.v2().expect("built-in").etag);

    // gnostic accepts every key of the merged document.
    let encoded = v2_protobuf::encode(&doc).expect("protobuf");
    assert!(encoded.rejected.is_empty(), "{:?}", encoded.rejected);
    let proto = api.v2_protobuf_served(&with_widget).expect("protobuf");
    assert_eq!(proto.json, bytes::Bytes::from(encoded.bytes));
    assert_eq!(proto.etag, v2_doc.etag);

    let index = parse(&api.v3_index_served(&with_widget).expect("index"));
    let gv = api
        .v3_group_version_served(&with_widget, "apis/example.com/v1")
        .expect("build")
        .expect("served");
    assert_eq!(
        index["paths"]["apis/example.com/v1"]["serverRelativeURL"],
        format!("/openapi/v3/apis/example.com/v1?hash={}", gv.hash)
    );
    assert!(index["paths"]["apis/apps/v1"].is_object());
    let v3_doc = parse(&gv);
    let schemas = v3_doc["components"]["schemas"]
        .as_object()
        .expect("schemas");
    let widget = &schemas["com.example.v1.Widget"];
    assert_eq!(
        widget["properties"]["spec"]["properties"]["color"]["default"],
        "red"
    );
    assert_eq!(
        widget["properties"]["spec"]["properties"]["size"]["nullable"],
        true
    );
    assert_eq!(
        widget["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    let mut dangling = Vec::new();
    definitions::collect_refs(&v3_doc, &mut |name| {
        if !schemas.contains_key(name) {
            dangling.push(name.to_string());
        }
    });
    assert!(dangling.is_empty(), "dangling: {dangling:?}");
    let create = &v3_doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets"]["post"];
    assert_eq!(
        create["requestBody"]["content"]
            .as_object()
            .map(|content| content.keys().cloned().collect::<Vec<_>>()),
        Some(vec![
            "application/json".to_string(),
            "application/yaml".to_string()
        ])
    );
    assert!(api
        .v3_group_version_served(&with_widget, "apis/example.com/v2")
        .expect("build")
        .is_none());
    // Built-in group versions are the built-in documents, untouched.
    let apps = api
        .v3_group_version_served(&with_widget, "apis/apps/v1")
        .expect("build")
        .expect("apps");
    assert_eq!(
        &apps,
        api.v3_group_version("apis/apps/v1")
            .expect("build")
            .expect("apps")
    );
}

#[test]
fn documents_follow_the_snapshot() {
    let api = OpenApi::new(builtin_resources());
    let builtin = registry(&[]);
    let first = registry(&[crd("example.com", "First.")]);
    let changed = registry(&[crd("example.com", "Second.")]);

    // Without custom resources: the built-in documents themselves.
    assert_eq!(&api.v2_served(&builtin).expect("v2"), api.v2().expect("v2"));
    assert_eq!(
        &api.v3_index_served(&builtin).expect("index"),
        api.v3_index().expect("index")
    );

    let key = "apis/example.com/v1";
    let hash = |registry: &Arc<Registry>| {
        api.v3_group_version_served(registry, key)
            .expect("build")
            .map(|doc| doc.hash)
    };
    let first_hash = hash(&first).expect("served");
    assert_eq!(
        hash(&first),
        Some(first_hash.clone()),
        "cached for the snapshot"
    );
    let changed_hash = hash(&changed).expect("served");
    assert_ne!(first_hash, changed_hash, "a schema change changes the hash");
    let index = parse(&api.v3_index_served(&changed).expect("index"));
    assert!(index["paths"][key]["serverRelativeURL"]
        .as_str()
        .is_some_and(|url| url.ends_with(&changed_hash)));
    assert_ne!(
        api.v2_served(&first).expect("v2").etag,
        api.v2_served(&changed).expect("v2").etag
    );

    // The CRD deleted: gone from every document.
    assert_eq!(hash(&builtin), None);
    let index = parse(&api.v3_index_served(&builtin).expect("index"));
    assert!(index["paths"].get(key).is_none());
    assert!(
        !String::from_utf8_lossy(&api.v2_served(&builtin).expect("v2").json)
            .contains("com.example.v1.Widget")
    );
}
