//! The garbage collector with custom kinds on both sides of an
//! ownerReference: a custom resource owning a ConfigMap and another custom
//! resource, deleted in the background, takes both with it (kube-rs).

use super::*;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;

#[tokio::test]
async fn dependents_of_a_custom_resource_owner_are_collected() {
    let env = TestEnv::new("crd-gc").await;
    let group = format!("g{}.example.com", suffix());
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": format!("parts.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "parts", "kind": "Part"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(&group, "v1", "Part"), "parts");
    let parts: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource);
    let part = |name: &str, owner: Option<&DynamicObject>| -> DynamicObject {
        let mut object = json!({"apiVersion": format!("{group}/v1"), "kind": "Part", "metadata": {"name": name}});
        if let Some(owner) = owner {
            object["metadata"]["ownerReferences"] = json!([{"apiVersion": format!("{group}/v1"),
                "kind": "Part", "name": owner.name_any(), "uid": owner.uid().unwrap()}]);
        }
        serde_json::from_value(object).unwrap()
    };
    let owner = match create_once_served(&parts, &part("owner", None)).await {
        Ok(owner) => owner,
        Err(status) => panic!("{status:?}"),
    };
    parts
        .create(&PostParams::default(), &part("child", Some(&owner)))
        .await
        .unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.ns);
    let config_map: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "owned",
        "ownerReferences": [{"apiVersion": format!("{group}/v1"), "kind": "Part",
            "name": "owner", "uid": owner.uid().unwrap()}]}}))
    .unwrap();
    config_maps
        .create(&PostParams::default(), &config_map)
        .await
        .unwrap();

    parts
        .delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    let mut collected = false;
    for _ in 0..600 {
        let child = parts.get_opt("child").await.unwrap();
        let owned = config_maps.get_opt("owned").await.unwrap();
        if child.is_none() && owned.is_none() {
            collected = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        collected,
        "the dependents of the deleted Part were never collected"
    );
}
