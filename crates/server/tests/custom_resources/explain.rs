//! `kubectl explain` reads a CRD's field descriptions from the published
//! OpenAPI, which follows the CRD until it is deleted.

use super::*;

per_version!(kubectl_explain);

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
