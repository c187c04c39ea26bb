//! Server-side apply of custom resources reads the CRD's schema: items of a
//! `x-kubernetes-list-type: map` list belong to whoever applied them (by
//! their `x-kubernetes-list-map-keys`), a `set` by value, an atomic list to
//! one applier (another conflicts), as kube's structured-merge-diff does.

use super::*;

#[tokio::test]
async fn apply_owns_list_items_by_the_crd_list_types() {
    let env = TestEnv::new("crd-apply").await;
    let group = format!("g{}.example.com", suffix());
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": format!("gadgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": {
                    "conditions": {"type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["type"],
                        "items": {"type": "object", "required": ["type"], "properties": {
                            "type": {"type": "string"}, "status": {"type": "string"}}}},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                }}},
            }}}],
        },
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(&group, "v1", "Gadget"),
        "gadgets",
    );
    let gadgets: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource);
    let applied = |spec: Value| {
        json!({"apiVersion": format!("{group}/v1"), "kind": "Gadget",
               "metadata": {"name": "g1"}, "spec": spec})
    };
    let apply = |manager: &'static str, spec: Value| {
        let gadgets = gadgets.clone();
        let body = applied(spec);
        async move {
            gadgets
                .patch("g1", &PatchParams::apply(manager), &Patch::Apply(&body))
                .await
        }
    };
    // The first apply may race the CRD's establishment.
    let mut first = None;
    for _ in 0..300 {
        match apply(
            "alpha",
            json!({"conditions": [{"type": "Ready", "status": "True"}], "tags": ["a"], "args": ["x"]}),
        )
        .await
        {
            Ok(object) => {
                first = Some(object);
                break;
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    assert!(first.is_some(), "the Gadget CRD never served");
    // An atomic list is one field: another applier conflicts over it.
    match apply("beta", json!({"args": ["y"]})).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 409);
            assert_eq!(
                status.message,
                r#"Apply failed with 1 conflict: conflict with "alpha": .spec.args"#
            );
        }
        other => panic!("a conflicting apply answered {other:?}"),
    }
    let merged = apply(
        "beta",
        json!({"conditions": [{"type": "Synced", "status": "False"}], "tags": ["b"]}),
    )
    .await
    .unwrap();
    assert_eq!(
        merged.data["spec"],
        json!({
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}],
            "tags": ["a", "b"],
            "args": ["x"],
        })
    );
    let fields = |manager: &str| {
        merged
            .metadata
            .managed_fields
            .iter()
            .flatten()
            .find(|entry| entry.manager.as_deref() == Some(manager))
            .and_then(|entry| entry.fields_v1.as_ref())
            .map(|fields| fields.0.clone())
            .unwrap_or_else(|| panic!("no managedFields entry of {manager}"))
    };
    assert_eq!(
        fields("beta")["f:spec"],
        json!({"f:conditions": {"k:{\"type\":\"Synced\"}": {".": {}, "f:status": {}, "f:type": {}}},
               "f:tags": {"v:\"b\"": {}}})
    );
    assert_eq!(
        fields("alpha")["f:spec"],
        json!({"f:args": {}, "f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}, "f:type": {}}},
               "f:tags": {"v:\"a\"": {}}})
    );
    // alpha applying without its condition removes only what alpha owned.
    let reapplied = apply("alpha", json!({"tags": ["a"]})).await.unwrap();
    assert_eq!(
        reapplied.data["spec"]["conditions"],
        json!([{"type": "Synced", "status": "False"}])
    );
}
