//! Custom resources through real clients: a CRD applied with kubectl becomes
//! Established, its kind is discovered and served for every verb, its
//! printer columns print, and deleting the CRD deletes its resources.
//! kubectl 1.33 and 1.27 each run every scenario (`<scenario>::v1_33`,
//! `::v1_27`); kube-rs drives the CRD and its objects through typed and
//! dynamic APIs. Every run uses a group of its own: CRDs are cluster-wide.
//! Schemas (`schemas.rs`), versions (`versions.rs`) and the published
//! OpenAPI (`explain.rs`) have files of their own in this test binary.
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

per_version!(kubectl_lifecycle);

mod apply;
mod cel_rules;
mod conversion;
mod explain;
mod garbage_collection;
mod operator;
mod schemas;
mod versions;

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
            "versions": [{"name": "v1", "served": true, "storage": false,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
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

    // apiextensions.k8s.io/v1 CRDs must have structural schemas.
    let non_structural: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "loose.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "loose", "kind": "Loose"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"properties": {"size": {"type": "integer"}}}},
            }}}],
        },
    }))
    .unwrap();
    let status = match crds.create(&PostParams::default(), &non_structural).await {
        Err(kube::Error::Api(status)) => status,
        other => panic!("a non-structural CRD answered {other:?}"),
    };
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        r#"CustomResourceDefinition.apiextensions.k8s.io "loose.example.com" is invalid: spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"#
    );

    // The rest of `ValidateCustomResourceDefinition`: one CRD per rule, each
    // refused with kube's single cause.
    let at = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties";
    let spec = |properties: Value| json!({"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}});
    let cases: Vec<(Value, Value, String)> = vec![
        (json!(null), json!({}), "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required".into()),
        (spec(json!({"ref": {"type": "object", "$ref": "#/definitions/Other"}})), json!({}),
            format!("{at}[ref].$ref: Forbidden: $ref is not supported")),
        (spec(json!({"ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
            "items": {"type": "object", "properties": {"port": {"type": "integer"}}}}})), json!({}),
            format!("{at}[ports].items.properties[port].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property")),
        (spec(json!({"size": {"type": "integer", "default": "large"}})), json!({}),
            format!(r#"{at}[size].default: Invalid value: "string":  in body must be of type integer: "string""#)),
        (spec(json!({"color": {"type": "string"}})), json!({"selectableFields": [{"jsonPath": ".spec.shade"}]}),
            r#"spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.shade": is an invalid path: does not refer to a valid field"#.into()),
        (spec(json!({})), json!({"conversion": {"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "http://conv.example.com/convert"}, "conversionReviewVersions": ["v1"]}}}),
            r#"spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]"#.into()),
    ];
    for (index, (schema, extra, cause)) in cases.into_iter().enumerate() {
        let name = format!("rules{index}.example.com");
        let mut body = json!({
            "metadata": {"name": name},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": format!("rules{index}"), "kind": format!("Rules{index}")},
                "versions": [{"name": "v1", "served": true, "storage": true}],
            },
        });
        if !schema.is_null() {
            body["spec"]["versions"][0]["schema"] = json!({"openAPIV3Schema": schema});
        }
        for (key, value) in extra.as_object().unwrap() {
            match key.as_str() {
                "conversion" => body["spec"]["conversion"] = value.clone(),
                _ => body["spec"]["versions"][0][key] = value.clone(),
            }
        }
        let crd: CustomResourceDefinition = serde_json::from_value(body).unwrap();
        let status = match crds.create(&PostParams::default(), &crd).await {
            Err(kube::Error::Api(status)) => status,
            other => panic!("case {index} answered {other:?}"),
        };
        assert_eq!(status.code, 422, "case {index}");
        assert_eq!(
            status.message,
            format!(
                r#"CustomResourceDefinition.apiextensions.k8s.io "{name}" is invalid: {cause}"#
            ),
            "case {index}"
        );
    }
}

/// Through a CRD's `/status` the metadata sent is kept (kube's CRD status
/// strategy resets the new metadata to itself), while the spec is not.
#[tokio::test]
async fn crd_status_updates_keep_labels_and_finalizers() {
    let env = TestEnv::new("crd-status").await;
    let group = format!("g{}.example.com", suffix());
    let name = format!("notes.{group}");
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": name, "finalizers": ["example.com/hold"]},
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
    let patch = json!({"metadata": {"labels": {"via": "status"}, "finalizers": null}, "spec": {"scope": "Cluster"}});
    let patched = crds
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(
        patched
            .metadata
            .labels
            .unwrap_or_default()
            .get("via")
            .map(String::as_str),
        Some("status")
    );
    assert_eq!(patched.metadata.finalizers, None);
    assert_eq!(patched.spec.scope, "Namespaced", "the spec stays");
    crds.delete(&name, &DeleteParams::default()).await.unwrap();
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

/// A namespaced `widgets.<group>` CRD (kind Widget) with these `versions`.
fn widget_crd(group: &str, versions: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": versions,
        },
    })
}

/// The widgets API at `version`.
fn widgets_at(client: &kube::Client, ns: &str, group: &str, version: &str) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(group, version, "Widget"),
        "widgets",
    );
    Api::namespaced_with(client.clone(), ns, &resource)
}
