//! Versions (conversion strategy None): stored at the storage version,
//! served at the request's.

use super::*;

per_version!(kubectl_reads_every_served_version);

/// Widgets served at v1beta1 and v1 (the storage version), converted by
/// kube's `None` strategy: only `apiVersion` differs between them.
fn two_version_crd(group: &str) -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "color": {"type": "string"},
            "size": {"type": "integer"},
        }},
    }}});
    widget_crd(
        group,
        json!([
            {"name": "v1beta1", "served": true, "storage": false, "schema": schema},
            {"name": "v1", "served": true, "storage": true, "schema": schema},
        ]),
    )
}

fn widget_at(group: &str, version: &str, name: &str, color: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("{group}/{version}"),
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"color": color},
    }))
    .unwrap()
}

/// Creates `object` once the CRD serves it (Established within a moment).
async fn create_when_served(api: &Api<DynamicObject>, object: &DynamicObject) -> DynamicObject {
    create_once_served(api, object)
        .await
        .unwrap_or_else(|error| panic!("{error:?}"))
}

/// A GET of `path` with `accept`: (status, content type, body).
async fn get_as(client: &kube::Client, path: &str, accept: &str) -> (u16, String, Vec<u8>) {
    use http_body_util::BodyExt;
    let request = http::Request::builder()
        .method("GET")
        .uri(path)
        .header("Accept", accept)
        .body(kube::client::Body::empty())
        .unwrap();
    let response = client.send(request).await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, content_type, body.to_vec())
}

fn api_version_of(object: &DynamicObject) -> &str {
    object
        .types
        .as_ref()
        .map_or("", |types| types.api_version.as_str())
}

/// A widget created at v1beta1 is read at both versions (get, list, watch,
/// YAML, CBOR), updated through v1 and seen at v1beta1, patched and applied
/// at v1beta1 while stored at v1; a default added to the storage version's
/// schema later is applied on read.
#[tokio::test]
async fn served_versions_convert_with_strategy_none() {
    let env = TestEnv::new("crd-conv").await;
    let group = format!("g{}.example.com", suffix());
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(two_version_crd(&group)).unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let beta = widgets_at(&env.client, &env.ns, &group, "v1beta1");
    let stable = widgets_at(&env.client, &env.ns, &group, "v1");
    let (beta_version, stable_version) = (format!("{group}/v1beta1"), format!("{group}/v1"));

    let created = create_when_served(&beta, &widget_at(&group, "v1beta1", "w1", "red")).await;
    assert_eq!(api_version_of(&created), beta_version);
    let watch_from = created.metadata.resource_version.clone().unwrap();
    let mut beta_events = beta
        .watch(&WatchParams::default().timeout(20), "0")
        .await
        .unwrap()
        .boxed();

    // Get and list at each version.
    assert_eq!(
        api_version_of(&stable.get("w1").await.unwrap()),
        stable_version
    );
    assert_eq!(api_version_of(&beta.get("w1").await.unwrap()), beta_version);
    for (api, version) in [(&beta, &beta_version), (&stable, &stable_version)] {
        let listed = api.list(&ListParams::default()).await.unwrap();
        assert_eq!(listed.items.len(), 1);
        assert_eq!(api_version_of(&listed.items[0]), version.as_str());
        let raw = env
            .raw(
                "GET",
                &format!("/apis/{version}/namespaces/{}/widgets?limit=10", env.ns),
                None,
                vec![],
            )
            .await
            .json();
        assert_eq!(raw["apiVersion"], version.as_str());
        assert_eq!(raw["items"][0]["apiVersion"], version.as_str(), "{raw}");
        assert_eq!(raw["items"][0]["kind"], "Widget", "{raw}");
    }

    // YAML and CBOR read the converted object too.
    let one = format!("/apis/{group}/v1beta1/namespaces/{}/widgets/w1", env.ns);
    let (status, _, yaml) = get_as(&env.client, &one, "application/yaml").await;
    assert_eq!(status, 200);
    let yaml = String::from_utf8(yaml).unwrap();
    assert!(
        yaml.starts_with(&format!("apiVersion: {beta_version}\n")),
        "{yaml}"
    );
    let list = format!("/apis/{group}/v1beta1/namespaces/{}/widgets", env.ns);
    for path in [&one, &list] {
        let (status, content_type, cbor) = get_as(&env.client, path, "application/cbor").await;
        assert_eq!((status, content_type.as_str()), (200, "application/cbor"));
        let decoded = ferrokube::cbor::decode(&cbor).unwrap();
        let object = if path == &list {
            &decoded["items"][0]
        } else {
            &decoded
        };
        assert_eq!(object["apiVersion"], beta_version.as_str(), "{decoded}");
    }

    // An update through v1 is seen at v1beta1, on get and on the v1beta1 watch.
    let mut through_stable = stable.get("w1").await.unwrap();
    through_stable.data["spec"]["color"] = json!("blue");
    let replaced = stable
        .replace("w1", &PostParams::default(), &through_stable)
        .await
        .unwrap();
    assert_eq!(api_version_of(&replaced), stable_version);
    assert_eq!(replaced.metadata.generation, Some(2));
    // managedFields keep the version each write used: the color now
    // belongs to the update through v1.
    let managed = replaced.metadata.managed_fields.clone().unwrap_or_default();
    assert!(
        managed.iter().any(|entry| {
            entry.api_version.as_deref() == Some(stable_version.as_str())
                && entry
                    .fields_v1
                    .as_ref()
                    .is_some_and(|fields| fields.0.pointer("/f:spec/f:color").is_some())
        }),
        "{managed:?}"
    );
    let read_back = beta.get("w1").await.unwrap();
    assert_eq!(api_version_of(&read_back), beta_version);
    assert_eq!(read_back.data["spec"]["color"], "blue");
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match beta_events.try_next().await.unwrap() {
            Some(WatchEvent::Added(object) | WatchEvent::Modified(object)) => {
                assert_eq!(api_version_of(&object), beta_version, "{object:?}");
                seen.push(object.data["spec"]["color"].clone());
            }
            other => panic!("unexpected watch event {other:?}"),
        }
    }
    assert_eq!(seen, [json!("red"), json!("blue")]);
    let mut from_revision = beta
        .watch(&WatchParams::default().timeout(20), &watch_from)
        .await
        .unwrap()
        .boxed();
    match from_revision.try_next().await.unwrap() {
        Some(WatchEvent::Modified(object)) => assert_eq!(api_version_of(&object), beta_version),
        other => panic!("expected the update, got {other:?}"),
    }

    // A no-op replace at v1beta1 of the object stored at v1 writes nothing.
    let unchanged = beta
        .replace("w1", &PostParams::default(), &read_back)
        .await
        .unwrap();
    assert_eq!(
        unchanged.metadata.resource_version,
        read_back.metadata.resource_version
    );
    assert_eq!(unchanged.metadata.generation, Some(2));

    // A merge patch at v1beta1 with a resourceVersion precondition, and a stale one.
    let precondition = read_back.metadata.resource_version.clone().unwrap();
    let patched = beta
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {"resourceVersion": precondition},
                "spec": {"size": 4},
            })),
        )
        .await
        .unwrap();
    assert_eq!(api_version_of(&patched), beta_version);
    assert_eq!(patched.data["spec"], json!({"color": "blue", "size": 4}));
    let stale = beta
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"resourceVersion": precondition}, "spec": {"size": 5}}),
            ),
        )
        .await;
    assert!(
        matches!(&stale, Err(kube::Error::Api(status)) if status.code == 409),
        "{stale:?}"
    );

    // Server-side apply at v1beta1: managedFields keep the version each write used.
    let applied = beta
        .patch(
            "w1",
            &PatchParams::apply("conv-tester").force(),
            &Patch::Apply(json!({
                "apiVersion": beta_version,
                "kind": "Widget",
                "metadata": {"name": "w1"},
                "spec": {"color": "green"},
            })),
        )
        .await
        .unwrap();
    assert_eq!(api_version_of(&applied), beta_version);
    assert_eq!(applied.data["spec"]["color"], "green");
    let managed = applied.metadata.managed_fields.clone().unwrap_or_default();
    let version_of = |manager: &str, operation: &str| {
        managed
            .iter()
            .find(|entry| {
                entry.manager.as_deref() == Some(manager)
                    && entry.operation.as_deref() == Some(operation)
            })
            .and_then(|entry| entry.api_version.clone())
    };
    assert_eq!(
        version_of("conv-tester", "Apply"),
        Some(beta_version.clone())
    );
    assert_eq!(
        stable.get("w1").await.unwrap().data["spec"]["color"],
        "green"
    );

    // Delete at v1beta1 answers at v1beta1 while a finalizer holds the object.
    beta.patch(
        "w1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": ["example.com/hold"]}})),
    )
    .await
    .unwrap();
    let kept = beta.delete("w1", &DeleteParams::default()).await.unwrap();
    let kept = kept.left().expect("kept by its finalizer");
    assert_eq!(api_version_of(&kept), beta_version);
    assert!(kept.metadata.deletion_timestamp.is_some());
    stable
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();

    // A default added later to the storage version's schema is applied on
    // read (kube defaults with the stored version's schema), at v1beta1 too.
    create_when_served(&beta, &widget_at(&group, "v1beta1", "w2", "red")).await;
    let mut crd = crds.get(&format!("widgets.{group}")).await.unwrap();
    let mut spec = serde_json::to_value(&crd.spec).unwrap();
    spec["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]
        ["default"] = json!(7);
    crd.spec = serde_json::from_value(spec).unwrap();
    crds.replace(&format!("widgets.{group}"), &PostParams::default(), &crd)
        .await
        .unwrap();
    let mut defaulted = None;
    for _ in 0..300 {
        let read = beta.get("w2").await.unwrap();
        if read.data["spec"]["size"] == 7 {
            defaulted = Some(read);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let defaulted = defaulted.expect("the default never applied on read");
    assert_eq!(api_version_of(&defaulted), beta_version);
    let listed = beta.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items[0].data["spec"]["size"], 7);
}

/// A widget created at v1beta1 is stored at v1, the storage version: the
/// stored bytes are read from the SQLite file after the server stops.
#[tokio::test]
async fn writes_are_stored_at_the_storage_version() {
    use common::{create_namespace, skip_if_external, TestServer};

    if skip_if_external("writes_are_stored_at_the_storage_version") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start_in(dir.path(), true);
    let client = server.client().await;
    create_namespace(&client, "conv").await;
    let group = "stored.example.com";
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(two_version_crd(group)).unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let beta = widgets_at(&client, "conv", group, "v1beta1");
    create_when_served(&beta, &widget_at(group, "v1beta1", "w1", "red")).await;
    assert!(server.stop_with("TERM").success());

    let db = rusqlite::Connection::open(dir.path().join("store.db")).unwrap();
    let stored: Vec<u8> = db
        .query_row(
            "SELECT value FROM kv WHERE key = ?1",
            [format!("/registry/{group}/widgets/conv/w1")],
            |row| row.get(0),
        )
        .unwrap();
    let stored: Value = serde_json::from_slice(&stored).unwrap();
    assert_eq!(stored["apiVersion"], format!("{group}/v1"));
    assert_eq!(stored["spec"]["color"], "red");
    // managedFields keep the version the create used.
    assert_eq!(
        stored["metadata"]["managedFields"][0]["apiVersion"],
        format!("{group}/v1beta1")
    );
}

async fn kubectl_reads_every_served_version(v: &str) {
    let env = TestEnv::new(&format!("crd-conv-{}", v.replace('.', ""))).await;
    let group = format!("g{}.example.com", suffix());
    let crd = serde_json::to_string(&two_version_crd(&group)).unwrap();
    kubectl_stdin_ok(&env, v, &["apply", "-f", "-"], &crd);
    env.kubectl_ok(
        v,
        &[
            "wait",
            "--for=condition=established",
            &format!("crd/widgets.{group}"),
            "--timeout=30s",
        ],
    );
    let widget = serde_json::to_string(&widget_at(&group, "v1beta1", "w1", "red")).unwrap();
    kubectl_stdin_ok(&env, v, &["apply", "-n", &env.ns, "-f", "-"], &widget);
    for version in ["v1beta1", "v1"] {
        let resource = format!("widgets.{version}.{group}");
        let out = env.kubectl_ok(
            v,
            &[
                "get",
                &resource,
                "w1",
                "-n",
                &env.ns,
                "-o",
                "jsonpath={.apiVersion}",
            ],
        );
        assert_eq!(out, format!("{group}/{version}"));
        let listed = json(&env.kubectl_ok(v, &["get", &resource, "-n", &env.ns, "-o", "json"]));
        assert_eq!(
            listed["items"][0]["apiVersion"],
            format!("{group}/{version}")
        );
    }
    // A second apply, now at v1, updates the object stored at v1.
    let widget = serde_json::to_string(&widget_at(&group, "v1", "w1", "blue")).unwrap();
    let out = kubectl_stdin_ok(&env, v, &["apply", "-n", &env.ns, "-f", "-"], &widget);
    assert!(out.contains("configured"), "{out}");
    let out = env.kubectl_ok(
        v,
        &[
            "get",
            &format!("widgets.v1beta1.{group}"),
            "w1",
            "-n",
            &env.ns,
            "-o",
            "jsonpath={.apiVersion} {.spec.color}",
        ],
    );
    assert_eq!(out, format!("{group}/v1beta1 blue"));
}
