//! Schemas: defaulting, pruning and value validation of custom resources.

use super::*;

/// The CRD's schema on every write: defaults filled in, unknown fields
/// pruned (kept under `x-kubernetes-preserve-unknown-fields`), and reported
/// per `fieldValidation` as kube reports them.
#[tokio::test]
async fn schemas_default_and_prune() {
    let env = TestEnv::new("crd-schema").await;
    let group = format!("g{}.example.com", suffix());
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": format!("pools.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "pools", "kind": "Pool"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "replicas": {"type": "integer", "default": 1},
                        "mode": {"type": "string", "default": "auto"},
                        "ports": {"type": "array", "items": {"type": "object", "properties": {
                            "port": {"type": "integer"},
                            "protocol": {"type": "string", "default": "TCP"},
                        }}},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    }},
                }}},
            }],
        },
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(&group, "v1", "Pool"), "pools");
    let pools: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource);
    let pool = |name: &str| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1"),
            "kind": "Pool",
            "metadata": {"name": name},
            "spec": {"ports": [{"port": 80}], "bogus": 1, "extra": {"any": {"thing": 1}}},
            "top": "level",
        }))
        .unwrap()
    };
    // Established within a moment; the first create may race it.
    let mut created = None;
    for _ in 0..300 {
        match pools.create(&PostParams::default(), &pool("p1")).await {
            Ok(object) => {
                created = Some(object);
                break;
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    let created = created.expect("the Pool CRD never served");
    assert_eq!(
        created.data["spec"],
        json!({
            "replicas": 1,
            "mode": "auto",
            "ports": [{"port": 80, "protocol": "TCP"}],
            "extra": {"any": {"thing": 1}},
        })
    );
    assert!(created.data.get("top").is_none());

    let path = format!("/apis/{group}/v1/namespaces/{}/pools", env.ns);
    let body = |name: &str| serde_json::to_vec(&pool(name)).unwrap();
    let strict = env
        .raw(
            "POST",
            &format!("{path}?fieldValidation=Strict"),
            Some("application/json"),
            body("p2"),
        )
        .await;
    assert_eq!(strict.status, 400, "{}", strict.body);
    assert_eq!(
        strict.json()["message"],
        r#"Pool in version "v1" cannot be handled as a Pool: strict decoding error: unknown field "spec.bogus", unknown field "top""#
    );
    let warned = env
        .raw(
            "POST",
            &format!("{path}?fieldValidation=Warn"),
            Some("application/json"),
            body("p3"),
        )
        .await;
    assert_eq!(warned.status, 201, "{}", warned.body);
    let warnings: Vec<&str> = warned
        .headers
        .get_all("warning")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .collect();
    assert_eq!(
        warnings,
        [
            r#"299 - "unknown field \"spec.bogus\"""#,
            r#"299 - "unknown field \"top\"""#
        ]
    );

    // A merge patch is defaulted and pruned too.
    let patched = pools
        .patch(
            "p1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"mode": null, "bogus": 2}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["spec"]["mode"], "auto");
    assert!(patched.data["spec"].get("bogus").is_none());
}

/// Values are validated against the schema with kube's texts and causes;
/// an update ratchets failures on values it leaves as they were.
#[tokio::test]
async fn schemas_validate_values_as_kube() {
    let env = TestEnv::new("crd-values").await;
    let group = format!("g{}.example.com", suffix());
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let schema = |maximum: i64| {
        json!({"openAPIV3Schema": {"type": "object", "properties": {
            "spec": {"type": "object", "required": ["size"], "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": maximum},
                "color": {"type": "string", "enum": ["red", "blue"]},
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                "when": {"type": "string", "format": "date-time"},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            }},
        }}})
    };
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": format!("gauges.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gauges", "kind": "Gauge"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema(100)}],
        },
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(&group, "v1", "Gauge"), "gauges");
    let gauges: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource);
    let gauge = |name: &str, spec: Value| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1"), "kind": "Gauge",
            "metadata": {"name": name}, "spec": spec,
        }))
        .unwrap()
    };

    let bad = gauge(
        "bad",
        json!({"size": 200, "color": "green", "name": "Abc", "when": "noon", "tags": ["a", "a"]}),
    );
    let status = match create_once_served(&gauges, &bad).await {
        Err(kube::Error::Api(status)) => status,
        other => panic!("an invalid Gauge answered {other:?}"),
    };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        format!(
            r#"Gauge.{group} "bad" is invalid: [spec.color: Unsupported value: "green": supported values: "red", "blue", spec.name: Invalid value: "Abc": spec.name in body should match '^[a-z]+$', spec.size: Invalid value: 200: spec.size in body should be less than or equal to 100, spec.tags[1]: Duplicate value: "a", spec.when: Invalid value: "noon": spec.when in body must be of type date-time: "noon"]"#
        )
    );
    let raw = env
        .raw(
            "POST",
            &format!("/apis/{group}/v1/namespaces/{}/gauges", env.ns),
            Some("application/json"),
            serde_json::to_vec(&gauge("raw", json!({"size": "x"}))).unwrap(),
        )
        .await;
    assert_eq!(raw.status, 422, "{}", raw.body);
    let causes = &raw.json()["details"]["causes"];
    assert_eq!(
        causes,
        &json!([{"reason": "FieldValueTypeInvalid",
                 "message": "Invalid value: \"string\": spec.size in body must be of type integer: \"string\"",
                 "field": "spec.size"}])
    );
    let missing = gauge("missing", json!({}));
    match gauges.create(&PostParams::default(), &missing).await {
        Err(kube::Error::Api(status)) => assert_eq!(
            status.message,
            format!(r#"Gauge.{group} "missing" is invalid: spec.size: Required value"#)
        ),
        other => panic!("a Gauge without size answered {other:?}"),
    }

    // Stored under a looser schema, then the schema tightens: an update that
    // leaves size alone passes, one that changes it to another bad value fails.
    gauges
        .create(
            &PostParams::default(),
            &gauge("loose", json!({"size": 50, "when": "2024-05-01T10:00:00Z"})),
        )
        .await
        .unwrap();
    let mut current = crds.get(&format!("gauges.{group}")).await.unwrap();
    let mut versions = serde_json::to_value(&current.spec.versions).unwrap();
    versions[0]["schema"] = schema(10);
    current.spec.versions = serde_json::from_value(versions).unwrap();
    crds.replace(&format!("gauges.{group}"), &PostParams::default(), &current)
        .await
        .unwrap();
    let mut tightened = false;
    for _ in 0..300 {
        let probe = gauge("probe", json!({"size": 50}));
        match gauges.create(&PostParams::default(), &probe).await {
            Err(kube::Error::Api(status)) if status.code == 422 => {
                tightened = true;
                break;
            }
            Ok(_) => {
                gauges
                    .delete("probe", &DeleteParams::default())
                    .await
                    .unwrap();
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    assert!(tightened, "the new schema was never served");
    let labelled = gauges
        .patch(
            "loose",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"seen": "yes"}}})),
        )
        .await
        .unwrap();
    assert_eq!(labelled.data["spec"]["size"], 50);
    match gauges
        .patch(
            "loose",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 60}})),
        )
        .await
    {
        Err(kube::Error::Api(status)) => assert_eq!(
            status.message,
            format!(
                r#"Gauge.{group} "loose" is invalid: spec.size: Invalid value: 60: spec.size in body should be less than or equal to 10"#
            )
        ),
        other => panic!("a worse Gauge answered {other:?}"),
    }
}

/// Duplicate keys of a custom resource's body are strict errors as kube's
/// unstructured decoder reports them (before the pruned fields), for JSON
/// and YAML, on create, update and merge patch; and embedded resources
/// (`x-kubernetes-embedded-resource`) get their type and metadata checked.
#[tokio::test]
async fn schemas_duplicate_fields_and_embedded_resources() {
    let env = TestEnv::new("crd-dup").await;
    let group = format!("g{}.example.com", suffix());
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": format!("boxes.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "boxes", "kind": "Box"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer"},
                        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                     "x-kubernetes-preserve-unknown-fields": true},
                    }},
                }}},
            }],
        },
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(&group, "v1", "Box"), "boxes");
    let boxes: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource);
    let plain = |name: &str| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1"), "kind": "Box",
            "metadata": {"name": name}, "spec": {"size": 1},
        }))
        .unwrap()
    };
    create_once_served(&boxes, &plain("b0")).await.unwrap();

    let path = format!("/apis/{group}/v1/namespaces/{}/boxes", env.ns);
    let json_body = |name: &str| {
        format!(
            r#"{{"apiVersion":"{group}/v1","kind":"Box","metadata":{{"name":"{name}"}},"spec":{{"size":1,"size":2,"bogus":true}}}}"#
        )
        .into_bytes()
    };
    let warnings = |response: &common::RawResponse| -> Vec<String> {
        response
            .headers
            .get_all("warning")
            .iter()
            .filter_map(|value| value.to_str().ok().map(str::to_string))
            .collect()
    };
    let post = |level: &str, content_type: &'static str, body: Vec<u8>| {
        let url = format!("{path}?fieldValidation={level}");
        let env = &env;
        async move { env.raw("POST", &url, Some(content_type), body).await }
    };

    // JSON: Strict refuses, duplicates first; Warn stores the last value.
    let strict = post("Strict", "application/json", json_body("j1")).await;
    assert_eq!(strict.status, 400, "{}", strict.body);
    assert_eq!(
        strict.json()["message"],
        r#"Box in version "v1" cannot be handled as a Box: strict decoding error: duplicate field "spec.size", unknown field "spec.bogus""#
    );
    let warned = post("Warn", "application/json", json_body("j2")).await;
    assert_eq!(warned.status, 201, "{}", warned.body);
    assert_eq!(
        warnings(&warned),
        [
            r#"299 - "duplicate field \"spec.size\"""#,
            r#"299 - "unknown field \"spec.bogus\"""#
        ]
    );
    assert_eq!(warned.json()["spec"], json!({"size": 2}));
    let ignored = post("Ignore", "application/json", json_body("j3")).await;
    assert_eq!(ignored.status, 201, "{}", ignored.body);
    assert!(warnings(&ignored).is_empty());

    // YAML: go-yaml's error, one warning per line under Warn.
    let yaml_body = |name: &str| {
        format!(
            "apiVersion: {group}/v1\nkind: Box\nmetadata:\n  name: {name}\nspec:\n  size: 1\n  size: 2\n"
        )
        .into_bytes()
    };
    let strict = post("Strict", "application/yaml", yaml_body("y1")).await;
    assert_eq!(strict.status, 400, "{}", strict.body);
    assert_eq!(
        strict.json()["message"],
        "Box in version \"v1\" cannot be handled as a Box: strict decoding error: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key \"size\" already set in map"
    );
    let warned = post("Warn", "application/yaml", yaml_body("y2")).await;
    assert_eq!(warned.status, 201, "{}", warned.body);
    assert_eq!(
        warnings(&warned),
        [r#"299 - "line 7: key \"size\" already set in map""#]
    );

    // Update and merge patch refuse a duplicate under Strict too.
    let current = boxes.get("b0").await.unwrap();
    let rv = current.metadata.resource_version.unwrap();
    let put = env
        .raw(
            "PUT",
            &format!("{path}/b0?fieldValidation=Strict"),
            Some("application/json"),
            format!(
                r#"{{"apiVersion":"{group}/v1","kind":"Box","metadata":{{"name":"b0","resourceVersion":"{rv}"}},"spec":{{"size":1,"size":3}}}}"#
            )
            .into_bytes(),
        )
        .await;
    assert_eq!(put.status, 400, "{}", put.body);
    assert_eq!(
        put.json()["message"],
        r#"Box in version "v1" cannot be handled as a Box: strict decoding error: duplicate field "spec.size""#
    );
    let patch = env
        .raw(
            "PATCH",
            &format!("{path}/b0?fieldValidation=Strict"),
            Some("application/merge-patch+json"),
            br#"{"spec":{"size":4,"size":5}}"#.to_vec(),
        )
        .await;
    assert_eq!(patch.status, 422, "{}", patch.body);
    assert_eq!(
        patch.json()["details"]["causes"][0]["field"],
        json!("patch")
    );
    assert!(patch.json()["details"]["causes"][0]["message"]
        .as_str()
        .unwrap()
        .ends_with(r#"strict decoding error: duplicate field "spec.size""#));

    // Embedded resources: apiVersion and kind required, metadata as ObjectMeta.
    let embedded: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{group}/v1"), "kind": "Box",
        "metadata": {"name": "e1"},
        "spec": {"template": {"metadata": {"name": "a/b"}}},
    }))
    .unwrap();
    match boxes.create(&PostParams::default(), &embedded).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
            assert_eq!(
                status.message,
                format!(
                    r#"Box.{group} "e1" is invalid: [spec.template.apiVersion: Required value, spec.template.kind: Required value, spec.template.metadata.name: Invalid value: "a/b": may not contain '/']"#
                )
            );
        }
        other => panic!("a Box with a bad embedded resource answered {other:?}"),
    }
    let good: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{group}/v1"), "kind": "Box",
        "metadata": {"name": "e2"},
        "spec": {"template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": {"a": "b"}}}},
    }))
    .unwrap();
    boxes.create(&PostParams::default(), &good).await.unwrap();
}
