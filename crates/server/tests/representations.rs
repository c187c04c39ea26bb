//! Alternate representations against the real binary: Kubernetes protobuf
//! (decoded with prost's generated types from `k8s-pb`, an independent
//! codec), YAML, CBOR, PartialObjectMetadata(List), Tables, `?pretty`, gzip,
//! and the 406/415 answers of negotiation; kubectl 1.33 and 1.27 (whose
//! typed clients use protobuf) and kube-rs's metadata-only API.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use std::io::Read as _;

use common::{suffix, TestEnv};
use ferrokube::protobuf::{parse_envelope, write_envelope};
use futures::{StreamExt as _, TryStreamExt as _};
use http_body_util::BodyExt as _;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as pb_meta;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use prost::Message as _;
use serde_json::{json, Value};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

struct Reply {
    status: u16,
    headers: http::HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| {
            panic!(
                "not JSON ({error}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The object's message inside a `k8s\0` envelope, checking its type.
    fn protobuf<T: prost::Message + Default>(&self, api_version: &str, kind: &str) -> T {
        assert_eq!(self.header("content-type"), PROTOBUF, "{}", self.status);
        let envelope = parse_envelope(&self.body).unwrap();
        assert_eq!(
            (envelope.api_version.as_str(), envelope.kind.as_str()),
            (api_version, kind)
        );
        T::decode(envelope.raw).unwrap()
    }
}

async fn call(
    env: &TestEnv,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Reply {
    let mut request = http::Request::builder().method(method).uri(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(kube::client::Body::from(body)).unwrap();
    let response = env.client.send(request).await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

fn config_maps(env: &TestEnv) -> String {
    format!("/api/v1/namespaces/{}/configmaps", env.ns)
}

fn pb_config_map(name: &str) -> Vec<u8> {
    let config_map = k8s_pb::api::core::v1::ConfigMap {
        metadata: Some(pb_meta::ObjectMeta {
            name: Some(name.to_string()),
            ..Default::default()
        }),
        data: [("k".to_string(), "v".to_string())].into(),
        ..Default::default()
    };
    write_envelope("v1", "ConfigMap", &config_map.encode_to_vec())
}

#[tokio::test]
async fn protobuf_for_every_verb_and_for_errors() {
    let env = TestEnv::new("repr-pb").await;
    let path = config_maps(&env);
    let accept = [("Accept", PROTOBUF), ("Content-Type", PROTOBUF)];

    let created = call(&env, "POST", &path, &accept, pb_config_map("pb")).await;
    assert_eq!(created.status, 201);
    let config_map: k8s_pb::api::core::v1::ConfigMap = created.protobuf("v1", "ConfigMap");
    let meta = config_map.metadata.unwrap();
    assert_eq!(meta.name.as_deref(), Some("pb"));
    assert!(meta.uid.is_some() && meta.creation_timestamp.is_some());
    assert_eq!(config_map.data.get("k").map(String::as_str), Some("v"));

    let got = call(&env, "GET", &format!("{path}/pb"), &accept, vec![]).await;
    let config_map: k8s_pb::api::core::v1::ConfigMap = got.protobuf("v1", "ConfigMap");
    assert_eq!(
        config_map.metadata.unwrap().resource_version,
        meta.resource_version
    );

    let listed = call(&env, "GET", &path, &accept, vec![]).await;
    let list: k8s_pb::api::core::v1::ConfigMapList = listed.protobuf("v1", "ConfigMapList");
    // (Namespaces also hold the `kube-root-ca.crt` config map.)
    assert!(list
        .items
        .iter()
        .any(|item| item.metadata.as_ref().unwrap().name.as_deref() == Some("pb")));
    assert!(list
        .metadata
        .unwrap()
        .resource_version
        .is_some_and(|rv| !rv.is_empty()));

    let patched = call(
        &env,
        "PATCH",
        &format!("{path}/pb"),
        &[
            ("Accept", PROTOBUF),
            ("Content-Type", "application/merge-patch+json"),
        ],
        br#"{"data":{"k":"patched"}}"#.to_vec(),
    )
    .await;
    assert_eq!(patched.status, 200);
    let config_map: k8s_pb::api::core::v1::ConfigMap = patched.protobuf("v1", "ConfigMap");
    assert_eq!(
        config_map.data.get("k").map(String::as_str),
        Some("patched")
    );

    let missing = call(&env, "GET", &format!("{path}/nope"), &accept, vec![]).await;
    assert_eq!(missing.status, 404);
    let status: pb_meta::Status = missing.protobuf("v1", "Status");
    assert_eq!(status.code, Some(404));
    assert_eq!(status.reason.as_deref(), Some("NotFound"));
    assert_eq!(
        status.message.as_deref(),
        Some("configmaps \"nope\" not found")
    );

    // Also for a resource that does not exist.
    let unknown = call(&env, "GET", "/api/v1/nosuchthings", &accept, vec![]).await;
    assert_eq!(unknown.status, 404);
    let status: pb_meta::Status = unknown.protobuf("v1", "Status");
    assert_eq!(
        status.message.as_deref(),
        Some("the server could not find the requested resource")
    );

    let deleted = call(&env, "DELETE", &format!("{path}/pb"), &accept, vec![]).await;
    assert_eq!(deleted.status, 200);
    assert_eq!(deleted.header("content-type"), PROTOBUF);

    // Protobuf first, JSON as the fallback: built-in kinds answer protobuf.
    let both = call(
        &env,
        "GET",
        &path,
        &[(
            "Accept",
            "application/vnd.kubernetes.protobuf, application/json",
        )],
        vec![],
    )
    .await;
    assert_eq!(both.header("content-type"), PROTOBUF);
}

#[tokio::test]
async fn yaml_and_cbor_bodies_and_responses() {
    let env = TestEnv::new("repr-yc").await;
    let path = config_maps(&env);
    let yaml_body =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n";
    let created = call(
        &env,
        "POST",
        &path,
        &[
            ("Accept", "application/yaml"),
            ("Content-Type", "application/yaml"),
        ],
        yaml_body.as_bytes().to_vec(),
    )
    .await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    assert_eq!(created.header("content-type"), "application/yaml");
    let from_yaml = ferrokube::yaml::yaml_to_json(&created.body).unwrap();
    let json = call(
        &env,
        "GET",
        &format!("{path}/from-yaml"),
        &[("Accept", "application/json")],
        vec![],
    )
    .await
    .json();
    assert_eq!(from_yaml, json);

    let cbor_body = ferrokube::cbor::encode(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "from-cbor", "labels": {"a": "b"}},
        "data": {"k": "v"}
    }));
    let cbor_headers = [
        ("Accept", "application/cbor"),
        ("Content-Type", "application/cbor"),
    ];
    let created = call(&env, "POST", &path, &cbor_headers, cbor_body).await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    assert_eq!(created.header("content-type"), "application/cbor");
    assert!(created.body.starts_with(&ferrokube::cbor::SELF_DESCRIBED));
    let from_cbor = ferrokube::cbor::decode(&created.body).unwrap();
    assert_eq!(from_cbor["metadata"]["labels"], json!({"a": "b"}));
    let json = call(
        &env,
        "GET",
        &format!("{path}/from-cbor"),
        &[("Accept", "application/json")],
        vec![],
    )
    .await
    .json();
    assert_eq!(from_cbor, json);

    let list = call(&env, "GET", &path, &cbor_headers, vec![]).await;
    let list = ferrokube::cbor::decode(&list.body).unwrap();
    assert_eq!(list["kind"], "ConfigMapList");
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["metadata"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"from-cbor") && names.contains(&"from-yaml"),
        "{names:?}"
    );
    assert!(list["items"][0].get("kind").is_none());

    // A CBOR body that does not decode is a 400 Status, in CBOR.
    let bad = call(
        &env,
        "POST",
        &path,
        &cbor_headers,
        vec![0xd9, 0xd9, 0xf7, 0xa1],
    )
    .await;
    assert_eq!(bad.status, 400);
    let status = ferrokube::cbor::decode(&bad.body).unwrap();
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(
        status["message"],
        "the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: unexpected EOF (d9d9f7a1)"
    );
}

#[tokio::test]
async fn partial_object_metadata_in_json_and_protobuf() {
    let env = TestEnv::new("repr-pom").await;
    let api: Api<ConfigMap> = env.api();
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = Some("meta".into());
    config_map.data = Some([("k".to_string(), "v".to_string())].into());
    api.create(&Default::default(), &config_map).await.unwrap();
    let path = config_maps(&env);

    let one = call(
        &env,
        "GET",
        &format!("{path}/meta"),
        &[(
            "Accept",
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        )],
        vec![],
    )
    .await;
    assert_eq!(
        one.header("content-type"),
        "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
    );
    let one = one.json();
    assert_eq!(one["kind"], "PartialObjectMetadata");
    assert_eq!(one["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(one["metadata"]["name"], "meta");
    assert!(one.get("data").is_none());

    let list = call(
        &env,
        "GET",
        &path,
        &[(
            "Accept",
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
        )],
        vec![],
    )
    .await;
    let envelope = parse_envelope(&list.body).unwrap();
    assert_eq!(envelope.kind, "PartialObjectMetadataList");
    let list = pb_meta::PartialObjectMetadataList::decode(envelope.raw).unwrap();
    assert!(list
        .items
        .iter()
        .any(|item| item.metadata.as_ref().unwrap().name.as_deref() == Some("meta")));

    let wrong = call(
        &env,
        "GET",
        &path,
        &[(
            "Accept",
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        )],
        vec![],
    )
    .await;
    assert_eq!(wrong.status, 406);
    assert_eq!(
        wrong.json()["message"],
        "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"
    );

    // kube-rs's metadata-only API.
    let metas = api.list_metadata(&ListParams::default()).await.unwrap();
    assert!(metas
        .items
        .iter()
        .any(|item| item.metadata.name.as_deref() == Some("meta")));
    let meta = api.get_metadata("meta").await.unwrap();
    assert_eq!(meta.metadata.name.as_deref(), Some("meta"));
}

#[tokio::test]
async fn kube_rs_watch_metadata() {
    let env = TestEnv::new("repr-wm").await;
    let api: Api<ConfigMap> = env.api();
    let listed = api.list_metadata(&ListParams::default()).await.unwrap();
    let version = listed.metadata.resource_version.unwrap();
    let stream = api
        .watch_metadata(&WatchParams::default().timeout(10), &version)
        .await
        .unwrap();
    let mut stream = stream.boxed();
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = Some(format!("w-{}", suffix()));
    api.create(&Default::default(), &config_map).await.unwrap();
    // The root CA publisher may add the namespace's kube-root-ca.crt after
    // the list (as kube's controller does): skip events about other objects.
    let meta = loop {
        let event = stream.try_next().await.unwrap().unwrap();
        let WatchEvent::Added(meta) = event else {
            panic!("expected ADDED, got {event:?}");
        };
        assert_eq!(meta.types.as_ref().unwrap().kind, "PartialObjectMetadata");
        if meta.metadata.name != Some("kube-root-ca.crt".to_string()) {
            break meta;
        }
    };
    assert_eq!(meta.metadata.name, config_map.metadata.name);
}

#[tokio::test]
async fn negotiation_refusals() {
    let env = TestEnv::new("repr-neg").await;
    let path = config_maps(&env);
    let html = call(&env, "GET", &path, &[("Accept", "text/html")], vec![]).await;
    assert_eq!(html.status, 406);
    assert_eq!(
        html.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor",
               "reason": "NotAcceptable", "code": 406})
    );

    // Tables exist in JSON and YAML only.
    let table_pb = call(
        &env,
        "GET",
        &path,
        &[(
            "Accept",
            "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1",
        )],
        vec![],
    )
    .await;
    assert_eq!(table_pb.status, 406);
    let table_yaml = call(
        &env,
        "GET",
        &path,
        &[("Accept", "application/yaml;as=Table;g=meta.k8s.io;v=v1")],
        vec![],
    )
    .await;
    assert_eq!(table_yaml.status, 200);
    assert_eq!(
        table_yaml.header("content-type"),
        "application/yaml;as=Table;v=v1;g=meta.k8s.io"
    );
    let table = ferrokube::yaml::yaml_to_json(&table_yaml.body).unwrap();
    assert_eq!(table["kind"], "Table");

    // Kinds without a table convertor (reviews) refuse Tables before any work.
    let review = call(
        &env,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        &[
            ("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1"),
            ("Content-Type", "application/json"),
        ],
        br#"{"spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}"#.to_vec(),
    )
    .await;
    assert_eq!(review.status, 406);

    let unsupported = call(
        &env,
        "POST",
        &path,
        &[
            ("Content-Type", "text/plain"),
            ("Accept", "application/json"),
        ],
        b"hello".to_vec(),
    )
    .await;
    assert_eq!(unsupported.status, 415);
    assert_eq!(
        unsupported.json()["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"
    );
}

#[tokio::test]
async fn pretty_and_gzip() {
    let env = TestEnv::new("repr-gz").await;
    let path = config_maps(&env);
    let api: Api<ConfigMap> = env.api();
    for index in 0..40 {
        let mut config_map = ConfigMap::default();
        config_map.metadata.name = Some(format!("big-{index}"));
        config_map.data = Some([("blob".to_string(), "x".repeat(4096))].into());
        api.create(&Default::default(), &config_map).await.unwrap();
    }
    let pretty = call(
        &env,
        "GET",
        &format!("{path}/big-0?pretty=true"),
        &[("Accept", "application/json")],
        vec![],
    )
    .await;
    assert!(String::from_utf8_lossy(&pretty.body).starts_with("{\n  \""));

    let gzip = [("Accept", "application/json"), ("Accept-Encoding", "gzip")];
    let big = call(&env, "GET", &path, &gzip, vec![]).await;
    assert_eq!(big.header("content-encoding"), "gzip");
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(big.body.as_slice())
        .read_to_end(&mut text)
        .unwrap();
    assert!(text.len() >= ferrokube::api::GZIP_THRESHOLD_BYTES);
    let list: Value = serde_json::from_slice(&text).unwrap();
    assert!(list["items"].as_array().unwrap().len() >= 40);

    let small = call(&env, "GET", &format!("{path}/big-0"), &gzip, vec![]).await;
    assert_eq!(small.header("content-encoding"), "");
    assert_eq!(small.json()["metadata"]["name"], "big-0");
    let plain = call(
        &env,
        "GET",
        &path,
        &[("Accept", "application/json")],
        vec![],
    )
    .await;
    assert_eq!(plain.header("content-encoding"), "");
}

use ferrokube_testkit::per_version;

per_version!(kubectl_typed_clients_read_protobuf);

/// `kubectl describe` reads through client-go's typed clientset, which asks
/// for protobuf (`application/vnd.kubernetes.protobuf,application/json`).
async fn kubectl_typed_clients_read_protobuf(version: &str) {
    let env = TestEnv::new("repr-kubectl").await;
    env.kubectl_ok(
        version,
        &[
            "-n",
            &env.ns,
            "create",
            "configmap",
            "described",
            "--from-literal=colour=blue",
        ],
    );
    let (status, out, err) = env.kubectl(
        version,
        &["-n", &env.ns, "describe", "configmap", "described", "-v=8"],
    );
    assert!(status.success(), "{err}");
    assert!(out.contains("Name:         described"), "{out}");
    assert!(out.contains("colour:\n----\nblue"), "{out}");
    // kubectl 1.33's typed clients ask for protobuf and get it (client-go
    // logs the response headers at -v=8); 1.27's ask for JSON.
    if version == "1.33" {
        assert!(
            err.contains("Content-Type: application/vnd.kubernetes.protobuf"),
            "{err}"
        );
    }
    let yaml = env.kubectl_ok(
        version,
        &["-n", &env.ns, "get", "configmap", "described", "-o", "yaml"],
    );
    assert!(yaml.contains("colour: blue"), "{yaml}");
    let missing = env.kubectl(version, &["-n", &env.ns, "describe", "configmap", "absent"]);
    assert!(!missing.0.success());
    assert!(
        missing.2.contains("configmaps \"absent\" not found"),
        "{}",
        missing.2
    );
}

/// A watch that ends after one second, with everything it sent.
async fn short_watch(env: &TestEnv, accept: &str) -> Reply {
    let path = format!("{}?watch=1&timeoutSeconds=1", config_maps(env));
    call(env, "GET", &path, &[("Accept", accept)], vec![]).await
}

#[tokio::test]
async fn protobuf_and_cbor_watch_streams() {
    let env = TestEnv::new("repr-watch").await;
    let api: Api<ConfigMap> = env.api();
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = Some("watched".into());
    api.create(&Default::default(), &config_map).await.unwrap();

    // Protobuf: 4-byte big-endian length, then a WatchEvent whose object is
    // a RawExtension holding the object's own envelope.
    let stream = short_watch(&env, PROTOBUF).await;
    assert_eq!(stream.status, 200);
    assert_eq!(
        stream.header("content-type"),
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    assert_eq!(stream.header("content-encoding"), "");
    let mut rest = stream.body.as_slice();
    let mut names = Vec::new();
    while !rest.is_empty() {
        let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
        let event = pb_meta::WatchEvent::decode(&rest[4..4 + len]).unwrap();
        rest = &rest[4 + len..];
        assert_eq!(event.r#type.as_deref(), Some("ADDED"));
        let raw = event.object.unwrap().raw.unwrap();
        let envelope = parse_envelope(&raw).unwrap();
        assert_eq!(envelope.kind, "ConfigMap");
        let object = k8s_pb::api::core::v1::ConfigMap::decode(envelope.raw).unwrap();
        names.push(object.metadata.unwrap().name.unwrap());
    }
    assert!(names.contains(&"watched".to_string()), "{names:?}");

    // CBOR: a CBOR sequence of self-described WatchEvents.
    let stream = short_watch(&env, "application/cbor").await;
    assert_eq!(stream.header("content-type"), "application/cbor-seq");
    let events = ferrokube::cbor::decode_seq(&stream.body).unwrap();
    assert!(stream.body.starts_with(&ferrokube::cbor::SELF_DESCRIBED));
    assert!(events
        .iter()
        .any(|event| event["type"] == "ADDED" && event["object"]["metadata"]["name"] == "watched"));

    // PartialObjectMetadata per event, in protobuf.
    let stream = short_watch(
        &env,
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    )
    .await;
    let len = u32::from_be_bytes(stream.body[..4].try_into().unwrap()) as usize;
    let event = pb_meta::WatchEvent::decode(&stream.body[4..4 + len]).unwrap();
    let raw = event.object.unwrap().raw.unwrap();
    assert_eq!(parse_envelope(&raw).unwrap().kind, "PartialObjectMetadata");

    // A Table per event in JSON (what `kubectl get -w` reads).
    let stream = short_watch(&env, "application/json;as=Table;g=meta.k8s.io;v=v1").await;
    let first: Value =
        serde_json::from_slice(stream.body.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(first["object"]["kind"], "Table");
}

/// A list far above the TLS record queue's high-water mark (256 KiB), sent
/// as the cached items themselves through HTTP/2's vectored writes and the
/// queue, arrives whole and in order in JSON (kube-rs's typed list),
/// protobuf (decoded by k8s-pb) and CBOR, while a watch on the same client
/// keeps receiving its small, coalesced events between the lists.
#[tokio::test]
async fn large_lists_arrive_whole_in_every_format_beside_a_watch() {
    const COUNT: usize = 240;
    let env = TestEnv::new("repr-large").await;
    let path = config_maps(&env);
    let api: Api<ConfigMap> = env.api();
    let blob = |index: usize| format!("{index:04}-{}", "y".repeat(4500 + index % 7));
    for index in 0..COUNT {
        let mut config_map = ConfigMap::default();
        config_map.metadata.name = Some(format!("big-{index:04}"));
        config_map.data = Some([("blob".to_string(), blob(index))].into());
        api.create(&Default::default(), &config_map).await.unwrap();
    }
    let version = api
        .list(&ListParams::default().limit(1))
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut events = api
        .watch(&WatchParams::default().timeout(60), &version)
        .await
        .unwrap()
        .boxed();
    let expected = |name: &str| -> Option<String> {
        let index: usize = name.strip_prefix("big-")?.parse().ok()?;
        Some(blob(index))
    };
    for round in 0..3 {
        let marker = format!("marker-{round}");
        let mut config_map = ConfigMap::default();
        config_map.metadata.name = Some(marker.clone());
        api.create(&Default::default(), &config_map).await.unwrap();

        // JSON, through kube-rs.
        let listed = api.list(&ListParams::default()).await.unwrap();
        // Besides ours, the namespace holds kube-root-ca.crt.
        assert!(listed.items.len() > COUNT + round);
        let mut big = 0;
        for item in &listed.items {
            let name = item.metadata.name.as_deref().unwrap();
            if let Some(want) = expected(name) {
                assert_eq!(item.data.as_ref().unwrap()["blob"], want, "{name}");
                big += 1;
            }
        }
        assert_eq!(big, COUNT);
        assert!(listed
            .items
            .iter()
            .any(|item| item.metadata.name.as_deref() == Some(marker.as_str())));

        // Protobuf.
        let reply = call(&env, "GET", &path, &[("Accept", PROTOBUF)], vec![]).await;
        assert!(reply.body.len() > 1 << 20, "{} bytes", reply.body.len());
        let list: k8s_pb::api::core::v1::ConfigMapList = reply.protobuf("v1", "ConfigMapList");
        assert_eq!(list.items.len(), listed.items.len());
        let mut big = 0;
        for item in &list.items {
            let name = item.metadata.as_ref().unwrap().name.as_deref().unwrap();
            if let Some(want) = expected(name) {
                assert_eq!(item.data["blob"], want, "{name}");
                big += 1;
            }
        }
        assert_eq!(big, COUNT);

        // CBOR.
        let reply = call(
            &env,
            "GET",
            &path,
            &[("Accept", "application/cbor")],
            vec![],
        )
        .await;
        assert_eq!(reply.header("content-type"), "application/cbor");
        let list = ferrokube::cbor::decode(&reply.body).unwrap();
        let items = list["items"].as_array().unwrap();
        assert_eq!(items.len(), listed.items.len());
        let mut big = 0;
        for item in items {
            let name = item["metadata"]["name"].as_str().unwrap();
            if let Some(want) = expected(name) {
                assert_eq!(item["data"]["blob"], want.as_str(), "{name}");
                big += 1;
            }
        }
        assert_eq!(big, COUNT);

        // The watch saw the marker created before the lists.
        let event = tokio::time::timeout(std::time::Duration::from_secs(10), events.try_next())
            .await
            .expect("the watch event arrives")
            .unwrap()
            .unwrap();
        let WatchEvent::Added(added) = event else {
            panic!("expected ADDED, got {event:?}");
        };
        assert_eq!(added.metadata.name.as_deref(), Some(marker.as_str()));
    }
}
