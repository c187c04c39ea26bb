//! What a write stores, through real clients: a patch cannot store what a
//! typed client cannot decode, an object cannot outgrow what kube-apiserver
//! on etcd stores, and no body takes the server down.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{api_status, TestEnv};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, PodTemplate};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn configmap(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name}, "data": {"a": value}
    }))
    .unwrap()
}

/// The names of the ConfigMaps a typed list decodes (the list fails as a
/// whole when one object does not decode).
async fn typed_names(api: &Api<ConfigMap>) -> Vec<String> {
    let list = api.list(&ListParams::default()).await.unwrap();
    let mut names: Vec<String> = list
        .items
        .iter()
        .filter_map(|cm| cm.metadata.name.clone())
        .filter(|name| name != "kube-root-ca.crt")
        .collect();
    names.sort();
    names
}

/// The repro of the issue: 16 JSON patch `copy` operations of `/data` into
/// itself once answered 200 and stored a 70 MB ConfigMap whose `data.d0`
/// was an object; every `Api<ConfigMap>` list in the namespace failed from
/// then on. kube-apiserver stops it at `JSONPatchMaxCopyBytes`.
#[tokio::test]
async fn json_patch_copy_bomb_is_refused_and_lists_stay_readable() {
    let env = TestEnv::new("wr-copy").await;
    let api: Api<ConfigMap> = env.api();
    let created = api
        .create(&PostParams::default(), &configmap("c", &"x".repeat(1024)))
        .await
        .unwrap();
    let copies: Vec<serde_json::Value> = (0..16)
        .map(|n| json!({"op": "copy", "from": "/data", "path": format!("/data/d{n}")}))
        .collect();
    let patch: json_patch::Patch = serde_json::from_value(json!(copies)).unwrap();
    let refused = api
        .patch("c", &PatchParams::default(), &Patch::Json::<()>(patch))
        .await;
    let status = api_status(refused.unwrap_err());
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert!(
        status
            .message
            .starts_with("Unable to complete the copy, the accumulated size increase of copy is ")
            && status.message.ends_with(", exceeding the limit 3145728"),
        "{}",
        status.message
    );

    // A patch that keeps the size but breaks the type is refused as kube
    // refuses a patched object that does not decode.
    for patch in [
        Patch::Merge(json!({"data": {"d0": {"a": "b"}}})),
        Patch::Strategic(json!({"data": {"d0": 5}})),
    ] {
        let status = api_status(
            api.patch("c", &PatchParams::default(), &patch)
                .await
                .unwrap_err(),
        );
        assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
        assert!(
            status
                .message
                .starts_with(" \"\" is invalid: patch: Invalid value: "),
            "{}",
            status.message
        );
    }
    let merge_text = api_status(
        api.patch(
            "c",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"d0": {"a": "b"}}})),
        )
        .await
        .unwrap_err(),
    )
    .message;
    assert!(merge_text.ends_with(
        "json: cannot unmarshal object into Go struct field ConfigMap.data of type string"
    ));

    // Nothing was stored: the object is as created and lists decode.
    assert_eq!(api.get("c").await.unwrap(), created);
    assert_eq!(typed_names(&api).await, vec!["c".to_string()]);
}

/// Replicas beyond int32 through a patch of the object and of `/scale`.
#[tokio::test]
async fn patched_integers_must_fit_their_type() {
    let env = TestEnv::new("wr-int").await;
    let api: Api<Deployment> = env.api();
    let deployment: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        }
    }))
    .unwrap();
    api.create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let huge = json!({"spec": {"replicas": 1_099_511_627_776u64}});
    let status = api_status(
        api.patch("d", &PatchParams::default(), &Patch::Merge(&huge))
            .await
            .unwrap_err(),
    );
    assert_eq!(status.code, 422);
    assert!(status.message.ends_with(
        "json: cannot unmarshal number 1099511627776 into Go struct field DeploymentSpec.spec.replicas of type int32"
    ), "{}", status.message);
    let status = api_status(
        api.patch_scale("d", &PatchParams::default(), &Patch::Merge(&huge))
            .await
            .unwrap_err(),
    );
    assert_eq!(status.code, 422);
    assert!(
        status
            .message
            .ends_with("into Go struct field ScaleSpec.spec.replicas of type int32"),
        "{}",
        status.message
    );
    // Typed reads still work and show the replicas kube defaulted.
    assert_eq!(api.get("d").await.unwrap().spec.unwrap().replicas, Some(1));
    assert_eq!(
        api.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
}

/// An object larger than one etcd request is refused with the Status a
/// kube-apiserver on etcd answers (etcd's own message, a 500), whatever
/// the backend. PodTemplates with long container args: kube's validation
/// bounds a ConfigMap's data at 1 MiB (a 422), below etcd's limit.
#[tokio::test]
async fn objects_larger_than_etcd_stores_are_refused() {
    let env = TestEnv::new("wr-size").await;
    let api: Api<PodTemplate> = env.api();
    let template = |name: &str, length: usize| -> PodTemplate {
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": name},
            "template": {"spec": {"containers": [
                {"name": "c", "image": "nginx", "args": ["y".repeat(length)]}]}}
        }))
        .unwrap()
    };
    let status = api_status(
        api.create(&PostParams::default(), &template("big", 1_600_000))
            .await
            .unwrap_err(),
    );
    assert_eq!(status.code, 500);
    assert_eq!(status.message, "etcdserver: request is too large");
    api.create(&PostParams::default(), &template("fits", 1_400_000))
        .await
        .unwrap();
    let grow = json!({"metadata": {"annotations": {"b": "z".repeat(200_000)}}});
    let status = api_status(
        api.patch("fits", &PatchParams::default(), &Patch::Merge(&grow))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (status.code, status.message.as_str()),
        (500, "etcdserver: request is too large")
    );
    let names: Vec<String> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .filter_map(|template| template.metadata.name.clone())
        .collect();
    assert_eq!(names, vec!["fits".to_string()]);
    // kube's own bound on ConfigMaps comes first: a 422, not etcd's 500.
    let config_maps: Api<ConfigMap> = env.api();
    let status = api_status(
        config_maps
            .create(
                &PostParams::default(),
                &configmap("big", &"y".repeat(1_100_000)),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (status.code, status.message.as_str()),
        (
            422,
            "ConfigMap \"big\" is invalid: : Too long: may not be more than 1048576 bytes"
        )
    );
}

/// A 2 MiB chain of CBOR tags once overflowed a worker's stack and aborted
/// the process: now a 4xx, and the server keeps answering.
#[tokio::test]
async fn a_cbor_tag_chain_does_not_take_the_server_down() {
    let env = TestEnv::new("wr-cbor").await;
    let path = format!("/api/v1/namespaces/{}/configmaps", env.ns);
    for bomb in [
        vec![0xd5u8; 2 * 1024 * 1024],
        [0xd9u8, 0xd9, 0xf7].repeat(500_000),
    ] {
        let response = env.raw("POST", &path, Some("application/cbor"), bomb).await;
        assert!(
            (400..500).contains(&response.status),
            "{} {}",
            response.status,
            response.body
        );
    }
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    assert!(namespaces.get(&env.ns).await.is_ok());
}
