//! Custom resources through real clients: a CRD applied with kubectl becomes
//! Established, its kind is discovered and served for every verb, its
//! printer columns print, and deleting the CRD deletes its resources.
//! kubectl 1.33 and 1.27 each run every scenario (`<scenario>::v1_33`,
//! `::v1_27`); kube-rs drives the CRD and its objects through typed and
//! dynamic APIs. Every run uses a group of its own: CRDs are cluster-wide.
//! `kubectl explain` reads a CRD's field descriptions from the published
//! OpenAPI, which follows the CRD until it is deleted.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use ferrokube_testkit as common;

use common::{suffix, TestEnv};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::{json, Value};

use ferrokube_testkit::per_version;

per_version!(kubectl_lifecycle, kubectl_explain);

fn crd_manifest(group: &str) -> String {
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.{group}
spec:
  group: {group}
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {{type: string}}
              size: {{type: integer}}
              replicas: {{type: integer}}
          status:
            type: object
            properties:
              replicas: {{type: integer}}
    subresources:
      status: {{}}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    selectableFields:
    - jsonPath: .spec.color
    additionalPrinterColumns:
    - {{name: Color, type: string, jsonPath: .spec.color}}
    - {{name: Size, type: integer, jsonPath: .spec.size}}
    - {{name: Age, type: date, jsonPath: .metadata.creationTimestamp}}
"#
    )
}

fn widget_manifest(group: &str, name: &str, color: &str) -> String {
    format!(
        r#"apiVersion: {group}/v1
kind: Widget
metadata:
  name: {name}
spec:
  color: {color}
  size: 3
  replicas: 1
"#
    )
}

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

fn kubectl_stdin_ok(env: &TestEnv, v: &str, args: &[&str], stdin: &str) -> String {
    let (status, out, err) = env.kubectl_stdin(v, args, Some(stdin));
    assert!(
        status.success(),
        "kubectl.{v} {args:?} failed ({status}):\nstdout:\n{out}\nstderr:\n{err}"
    );
    out
}

async fn kubectl_lifecycle(v: &str) {
    let env = TestEnv::new(&format!("crd-{}", v.replace('.', ""))).await;
    let group = format!("g{}.example.com", suffix());
    let crd_name = format!("widgets.{group}");
    let ns = env.ns.as_str();
    // Qualified names: the other kubectl version's run serves `widgets` in
    // another group at the same time.
    let widgets = format!("widgets.{group}");
    let widget = format!("widget.{group}");
    let (widgets, widget) = (widgets.as_str(), widget.as_str());

    let out = kubectl_stdin_ok(&env, v, &["apply", "-f", "-"], &crd_manifest(&group));
    assert_eq!(
        out.trim(),
        format!("customresourcedefinition.apiextensions.k8s.io/{crd_name} created")
    );
    let out = env.kubectl_ok(
        v,
        &[
            "wait",
            "--for=condition=established",
            &format!("crd/{crd_name}"),
            "--timeout=30s",
        ],
    );
    assert!(out.contains("condition met"), "{out}");

    let crd = json(&env.kubectl_ok(v, &["get", "crd", &crd_name, "-o", "json"]));
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Widget");
    assert_eq!(crd["status"]["acceptedNames"]["listKind"], "WidgetList");
    assert_eq!(crd["status"]["acceptedNames"]["shortNames"], json!(["wd"]));
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
    assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
    assert_eq!(crd["metadata"]["generation"], 1);
    let conditions = crd["status"]["conditions"].as_array().unwrap();
    let condition = |kind: &str| {
        conditions
            .iter()
            .find(|c| c["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} condition in {conditions:?}"))
    };
    assert_eq!(condition("NamesAccepted")["status"], "True");
    assert_eq!(condition("NamesAccepted")["reason"], "NoConflicts");
    assert_eq!(condition("Established")["status"], "True");
    assert_eq!(condition("Established")["reason"], "InitialNamesAccepted");

    // Discovery: the kind, its short name and its subresources.
    let out = env.kubectl_ok(v, &["api-resources", "--api-group", &group]);
    let row = out
        .lines()
        .find(|line| line.starts_with("widgets "))
        .unwrap_or_else(|| panic!("no widgets row in:\n{out}"));
    let words: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        words,
        ["widgets", "wd", &format!("{group}/v1"), "true", "Widget"]
    );

    let out = kubectl_stdin_ok(
        &env,
        v,
        &["apply", "-n", ns, "-f", "-"],
        &widget_manifest(&group, "w1", "red"),
    );
    assert_eq!(out.trim(), format!("widget.{group}/w1 created"));

    // Printer columns, by kind, by short name and through `get all`.
    let out = env.kubectl_ok(v, &["get", widgets, "-n", ns]);
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "COLOR", "SIZE", "AGE"], "{out}");
    let row: Vec<&str> = lines
        .next()
        .unwrap_or_else(|| panic!("no row in {out:?}"))
        .split_whitespace()
        .collect();
    assert_eq!(&row[..3], ["w1", "red", "3"]);
    let out = env.kubectl_ok(v, &["get", &format!("wd.{group}"), "-n", ns, "-o", "name"]);
    assert_eq!(out.trim(), format!("widget.{group}/w1"));
    let out = env.kubectl_ok(v, &["get", "all", "-n", ns, "-o", "name"]);
    assert!(out.contains(&format!("widget.{group}/w1")), "{out}");

    // Merge patch: spec changes bump the generation.
    env.kubectl_ok(
        v,
        &[
            "patch",
            widget,
            "w1",
            "-n",
            ns,
            "--type=merge",
            "-p",
            r#"{"spec":{"color":"blue"}}"#,
        ],
    );
    let object = json(&env.kubectl_ok(v, &["get", widget, "w1", "-n", ns, "-o", "json"]));
    assert_eq!(object["spec"]["color"], "blue");
    assert_eq!(object["metadata"]["generation"], 2);
    assert_eq!(object["apiVersion"], format!("{group}/v1"));

    // Field selectors: metadata.name always, spec.color as a selectable field.
    let select = |selector: &str| {
        env.kubectl(
            v,
            &[
                "get",
                widgets,
                "-n",
                ns,
                "-o",
                "name",
                "--field-selector",
                selector,
            ],
        )
    };
    let (status, out, err) = select("spec.color=blue");
    assert!(status.success(), "{err}");
    assert_eq!(out.trim(), format!("widget.{group}/w1"));
    let (status, out, _) = select("spec.color=red");
    assert!(status.success() && out.trim().is_empty(), "{out}");
    let (status, out, _) = select("metadata.name=w1");
    assert!(
        status.success() && out.trim() == format!("widget.{group}/w1"),
        "{out}"
    );
    let (status, _, err) = select("spec.size=3");
    assert!(!status.success());
    assert!(
        err.contains("field label not supported: spec.size"),
        "{err}"
    );

    // Strategic merge patch is refused for custom resources, as kube does.
    let (status, _, err) = env.kubectl(
        v,
        &[
            "patch",
            widget,
            "w1",
            "-n",
            ns,
            "--type=strategic",
            "-p",
            r#"{"spec":{"size":4}}"#,
        ],
    );
    assert!(!status.success());
    assert!(err.contains("is not supported"), "{err}");

    // The scale subresource.
    let out = env.kubectl_ok(v, &["scale", widget, "w1", "-n", ns, "--replicas=3"]);
    assert_eq!(out.trim(), format!("widget.{group}/w1 scaled"));
    let object = json(&env.kubectl_ok(v, &["get", widget, "w1", "-n", ns, "-o", "json"]));
    assert_eq!(object["spec"]["replicas"], 3);

    let out = env.kubectl_ok(v, &["delete", widget, "w1", "-n", ns]);
    assert_eq!(out.trim(), format!("widget.{group} \"w1\" deleted"));
    let (status, _, err) = env.kubectl(v, &["get", widget, "w1", "-n", ns]);
    assert!(!status.success());
    assert!(
        err.contains("NotFound") || err.contains("not found"),
        "{err}"
    );

    // Deleting the CRD deletes its remaining resources, then the CRD.
    kubectl_stdin_ok(
        &env,
        v,
        &["apply", "-n", ns, "-f", "-"],
        &widget_manifest(&group, "w2", "green"),
    );
    let out = env.kubectl_ok(v, &["delete", "crd", &crd_name, "--timeout=60s"]);
    assert!(out.contains("deleted"), "{out}");
    let (status, _, err) = env.kubectl(v, &["get", "crd", &crd_name]);
    assert!(!status.success(), "the CRD is still there");
    assert!(
        err.contains("NotFound") || err.contains("not found"),
        "{err}"
    );
    let res = env
        .raw(
            "GET",
            &format!("/apis/{group}/v1/namespaces/{ns}/widgets"),
            None,
            vec![],
        )
        .await;
    assert_eq!(res.status, 404, "{}", res.body);
}

/// kube-rs: the CRD through the typed API, its objects through the dynamic
/// API, the status subresource, a watch, and cleanup on CRD deletion.
#[tokio::test]
async fn kube_rs_custom_resources() {
    let env = TestEnv::new("crd-kube").await;
    let group = format!("g{}.example.com", suffix());
    let crd_name = format!("gadgets.{group}");
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                }},
                "subresources": {"status": {}},
            }],
        },
    }))
    .unwrap();
    let created = crds.create(&PostParams::default(), &crd).await.unwrap();
    assert_eq!(created.spec.names.singular.as_deref(), Some("gadget"));
    assert_eq!(created.spec.names.list_kind.as_deref(), Some("GadgetList"));
    let mut established = false;
    for _ in 0..300 {
        let crd = crds.get(&crd_name).await.unwrap();
        established = crd
            .status
            .and_then(|status| status.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        if established {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(established, "the CRD never became Established");

    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(&group, "v1alpha1", "Gadget"),
        "gadgets",
    );
    let gadgets: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource);
    let gadget: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{group}/v1alpha1"),
        "kind": "Gadget",
        "metadata": {"name": "g1"},
        "spec": {"anything": {"nested": [1, 2]}},
        "status": {"ignored": "on create"},
    }))
    .unwrap();
    let created = gadgets
        .create(&PostParams::default(), &gadget)
        .await
        .unwrap();
    assert_eq!(created.data["spec"]["anything"]["nested"], json!([1, 2]));
    assert!(
        created.data.get("status").is_none(),
        "create may not set status"
    );
    assert_eq!(created.metadata.generation, Some(1));

    // A watch from the create's resourceVersion sees the status change.
    let from = created.metadata.resource_version.clone().unwrap();
    let mut events = gadgets
        .watch(&WatchParams::default().timeout(20), &from)
        .await
        .unwrap()
        .boxed();

    // Status through /status, which does not bump the generation.
    let patched = gadgets
        .patch_status(
            "g1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Ready"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["status"]["phase"], "Ready");
    assert_eq!(patched.metadata.generation, Some(1));
    match events.try_next().await.unwrap() {
        Some(WatchEvent::Modified(object)) => {
            assert_eq!(object.data["status"]["phase"], "Ready");
            assert_eq!(object.metadata.name.as_deref(), Some("g1"));
        }
        other => panic!("expected the status change, got {other:?}"),
    }

    // Server-side apply of the custom resource.
    let applied = gadgets
        .patch(
            "g1",
            &PatchParams::apply("tester").force(),
            &Patch::Apply(json!({
                "apiVersion": format!("{group}/v1alpha1"),
                "kind": "Gadget",
                "metadata": {"name": "g1"},
                "spec": {"anything": {"nested": [3]}},
            })),
        )
        .await
        .unwrap();
    assert_eq!(applied.data["spec"]["anything"]["nested"], json!([3]));
    assert_eq!(applied.metadata.generation, Some(2));
    assert!(applied
        .metadata
        .managed_fields
        .unwrap_or_default()
        .iter()
        .any(|entry| entry.manager.as_deref() == Some("tester")));

    // Label selectors and deletecollection.
    for name in ["g2", "g3"] {
        let mut other = gadget.clone();
        other.metadata.name = Some(name.into());
        other.metadata.labels = Some([("tier".to_string(), "spare".to_string())].into());
        gadgets
            .create(&PostParams::default(), &other)
            .await
            .unwrap();
    }
    let spare = ListParams::default().labels("tier=spare");
    assert_eq!(gadgets.list(&spare).await.unwrap().items.len(), 2);
    gadgets
        .delete_collection(&DeleteParams::default(), &spare)
        .await
        .unwrap();
    let list = gadgets.list(&Default::default()).await.unwrap();
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|item| item.metadata.name.clone())
        .collect();
    assert_eq!(names, ["g1"]);

    // A finalizer on a gadget holds the CRD's deletion until it is removed.
    gadgets
        .patch(
            "g1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["example.com/hold"]}})),
        )
        .await
        .unwrap();
    crds.delete(&crd_name, &DeleteParams::default())
        .await
        .unwrap();
    let mut held = None;
    for _ in 0..100 {
        let gadget = gadgets.get("g1").await.unwrap();
        if gadget.metadata.deletion_timestamp.is_some() {
            held = Some(gadget);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(held.is_some(), "the gadget was never marked for deletion");
    let terminating = crds.get(&crd_name).await.unwrap();
    assert!(terminating.metadata.deletion_timestamp.is_some());
    let conditions = terminating.status.unwrap().conditions.unwrap_or_default();
    assert!(conditions
        .iter()
        .any(|c| c.type_ == "Terminating" && c.status == "True"));
    // Nothing new while the CRD terminates.
    let mut late = gadget.clone();
    late.metadata.name = Some("late".into());
    match gadgets.create(&PostParams::default(), &late).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 405);
            assert_eq!(
                status.message,
                "create not allowed while custom resource definition is terminating"
            );
        }
        other => panic!("a create while terminating answered {other:?}"),
    }
    gadgets
        .patch(
            "g1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    let mut gone = false;
    for _ in 0..300 {
        if crds.get_opt(&crd_name).await.unwrap().is_none() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the CRD was never deleted");
}

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

/// A deprecated version answers with kube's default deprecation warning,
/// naming the newest served version; discovery hashes the storage version.
#[tokio::test]
async fn deprecated_versions_warn_and_share_the_storage_hash() {
    let env = TestEnv::new("crd-versions").await;
    let group = format!("g{}.example.com", suffix());
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": format!("things.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": false, "deprecated": true, "schema": schema},
                {"name": "v1", "served": true, "storage": true, "schema": schema},
            ],
        },
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let old = format!("/apis/{group}/v1alpha1/namespaces/{}/things", env.ns);
    let mut listed = env.raw("GET", &old, None, vec![]).await;
    for _ in 0..300 {
        if listed.status != 404 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        listed = env.raw("GET", &old, None, vec![]).await;
    }
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(
        listed.header("warning"),
        format!(r#"299 - "{group}/v1alpha1 Thing is deprecated; use {group}/v1 Thing""#)
    );
    let current = env
        .raw(
            "GET",
            &format!("/apis/{group}/v1/namespaces/{}/things", env.ns),
            None,
            vec![],
        )
        .await;
    assert_eq!(current.header("warning"), "");
    let mut hashes = Vec::new();
    for version in ["v1alpha1", "v1"] {
        let list = env
            .raw("GET", &format!("/apis/{group}/{version}"), None, vec![])
            .await
            .json();
        hashes.push(
            list["resources"][0]["storageVersionHash"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
    }
    let (alpha, stable) = (hashes[0].clone(), hashes[1].clone());
    assert!(!stable.is_empty());
    assert_eq!(alpha, stable, "both versions hash the storage version");
}

/// A malformed CRD is refused with kube's 422 and its causes.
#[tokio::test]
async fn invalid_crds_are_refused_as_kube_refuses_them() {
    let env = TestEnv::new("crd-invalid").await;
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "wrong.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": false}],
        },
    }))
    .unwrap();
    let status = match crds.create(&PostParams::default(), &crd).await {
        Err(kube::Error::Api(status)) => status,
        other => panic!("an invalid CRD answered {other:?}"),
    };
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert!(
        status.message.starts_with(
            r#"CustomResourceDefinition.apiextensions.k8s.io "wrong.example.com" is invalid: [metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group, spec.versions: Invalid value: "#
        ),
        "{}",
        status.message
    );
    assert!(
        status
            .message
            .ends_with("must have exactly one version marked as storage version]"),
        "{}",
        status.message
    );
    assert!(crds.get_opt("wrong.example.com").await.unwrap().is_none());
}

/// Deleting a namespace deletes the custom resources in it (the namespace
/// controller sees kinds established after it started).
#[tokio::test]
async fn namespace_deletion_removes_custom_resources() {
    use k8s_openapi::api::core::v1::Namespace;

    let env = TestEnv::new("crd-ns").await;
    let group = format!("g{}.example.com", suffix());
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": format!("notes.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "notes", "kind": "Note"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(&group, "v1", "Note"), "notes");
    let notes: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource);
    let note: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{group}/v1"), "kind": "Note", "metadata": {"name": "n1"},
    }))
    .unwrap();
    let mut created = false;
    for _ in 0..300 {
        match notes.create(&PostParams::default(), &note).await {
            Ok(_) => {
                created = true;
                break;
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    assert!(created, "the Note CRD never served");
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    namespaces
        .delete(&env.ns, &DeleteParams::default())
        .await
        .unwrap();
    let mut gone = false;
    for _ in 0..600 {
        if namespaces.get_opt(&env.ns).await.unwrap().is_none() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the namespace was never deleted");
    let everywhere: Api<DynamicObject> = Api::all_with(env.client.clone(), &resource);
    assert!(everywhere
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .is_empty());
}

/// A CRD whose fields are described; the plural is unique to the run so
/// `kubectl explain <plural>` never resolves to another run's group.
fn described_crd_manifest(group: &str, plural: &str) -> String {
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  scope: Namespaced
  names:
    plural: {plural}
    kind: Gizmo
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A gizmo explained by its schema.
        properties:
          spec:
            type: object
            description: The desired state of the gizmo.
            properties:
              color:
                type: string
                description: The colour the gizmo is painted.
                default: red
              size:
                x-kubernetes-int-or-string: true
                description: How big the gizmo is, a number or a name.
"#
    )
}

async fn kubectl_explain(v: &str) {
    let env = TestEnv::new(&format!("explain-{}", v.replace('.', ""))).await;
    let sfx = suffix();
    let group = format!("g{sfx}.example.com");
    let plural = format!("gizmos{sfx}");
    let crd_name = format!("{plural}.{group}");
    let gv_key = format!("apis/{group}/v1");
    // `util.ToRESTFriendlyName`: the group reversed (`com.example.v1.Widget`
    // for `example.com`).
    let definition = format!("com.example.g{sfx}.v1.Gizmo");

    let before = env.raw("GET", "/openapi/v2", None, vec![]).await;
    assert_eq!(before.status, 200);
    kubectl_stdin_ok(
        &env,
        v,
        &["apply", "-f", "-"],
        &described_crd_manifest(&group, &plural),
    );
    env.kubectl_ok(
        v,
        &[
            "wait",
            "--for=condition=established",
            &format!("crd/{crd_name}"),
            "--timeout=30s",
        ],
    );

    let out = env.kubectl_ok(v, &["explain", &format!("{plural}.spec")]);
    for expected in [
        "KIND:",
        "Gizmo",
        "The desired state of the gizmo.",
        "color",
        "The colour the gizmo is painted.",
        "How big the gizmo is, a number or a name.",
    ] {
        assert!(out.contains(expected), "no {expected:?} in:\n{out}");
    }
    let out = env.kubectl_ok(v, &["explain", &plural]);
    assert!(out.contains("A gizmo explained by its schema."), "{out}");
    assert!(out.contains("metadata"), "{out}");
    // The v2 explainer reads the protobuf form of /openapi/v2.
    let out = env.kubectl_ok(
        v,
        &[
            "explain",
            &format!("{plural}.spec"),
            "--output=plaintext-openapiv2",
        ],
    );
    assert!(out.contains("The colour the gizmo is painted."), "{out}");

    // The raw documents: v2 holds the definition (defaults pruned), v3
    // lists the group version with the hash of a document that holds it.
    let v2 = env.raw("GET", "/openapi/v2", None, vec![]).await;
    assert_eq!(v2.status, 200);
    assert_ne!(
        v2.header("etag"),
        before.header("etag"),
        "the ETag follows the content"
    );
    let v2 = v2.json();
    let gizmo = &v2["definitions"][&definition];
    assert_eq!(
        gizmo["properties"]["spec"]["properties"]["color"],
        json!({"type": "string", "description": "The colour the gizmo is painted."}),
        "{gizmo}"
    );
    assert_eq!(
        gizmo["x-kubernetes-group-version-kind"],
        json!([{"group": group, "kind": "Gizmo", "version": "v1"}])
    );
    let index = env.raw("GET", "/openapi/v3", None, vec![]).await.json();
    let url = index["paths"][&gv_key]["serverRelativeURL"]
        .as_str()
        .unwrap_or_else(|| panic!("{gv_key} not in the v3 index: {index}"))
        .to_string();
    let doc = env.raw("GET", &url, None, vec![]).await;
    assert_eq!(doc.status, 200);
    assert_eq!(doc.header("cache-control"), "public, immutable");
    let doc = doc.json();
    let schema = &doc["components"]["schemas"][&definition];
    assert_eq!(
        schema["properties"]["spec"]["properties"]["color"]["default"],
        "red"
    );

    env.kubectl_ok(v, &["delete", "crd", &crd_name, "--timeout=60s"]);
    let index = env.raw("GET", "/openapi/v3", None, vec![]).await.json();
    assert!(
        index["paths"].get(&gv_key).is_none(),
        "{gv_key} still in the v3 index after the CRD was deleted"
    );
    let gone = env
        .raw("GET", &format!("/openapi/v3/{gv_key}"), None, vec![])
        .await;
    assert_eq!(gone.status, 404, "{}", gone.body);
    let v2 = env.raw("GET", "/openapi/v2", None, vec![]).await.json();
    assert!(v2["definitions"].get(&definition).is_none());
    let (status, _, err) = env.kubectl(v, &["explain", &plural]);
    assert!(!status.success(), "explain still finds {plural}: {err}");
}

/// Creates `object`, retrying while its CRD is not served yet (404); the
/// first other answer is returned.
async fn create_once_served(
    api: &Api<DynamicObject>,
    object: &DynamicObject,
) -> Result<DynamicObject, kube::Error> {
    for _ in 0..300 {
        match api.create(&PostParams::default(), object).await {
            Err(kube::Error::Api(status)) if status.code == 404 => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            other => return other,
        }
    }
    panic!("the CRD of {:?} never served", object.types);
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

// ---- Versions (conversion strategy None) ----

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
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": false, "schema": schema},
                {"name": "v1", "served": true, "storage": true, "schema": schema},
            ],
        },
    })
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

/// The widgets API at `version`.
fn widgets_at(client: &kube::Client, ns: &str, group: &str, version: &str) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(group, version, "Widget"),
        "widgets",
    );
    Api::namespaced_with(client.clone(), ns, &resource)
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
