//! Server-side apply, managedFields, dry-run and field validation with real
//! clients: kubectl 1.33 and 1.27 (`apply --server-side` with edits, a
//! removed field, a conflict and `--force-conflicts`; `--dry-run=server`;
//! `--validate=strict|warn`) and kube-rs (`Patch::Apply` with
//! `PatchParams::apply(..).force()`, `Patch::Strategic`, `Patch::Merge`,
//! `Patch::Json`).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::TestEnv;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{json, Value};

use ferrokube_testkit::per_version;

per_version!(
    apply_server_side,
    dry_run_server,
    validate_levels,
    from_client_side_apply
);

fn manifest(replicas: u32, with_team_label: bool, extra_spec: &str) -> String {
    let team = if with_team_label {
        "\n    team: core"
    } else {
        ""
    };
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels:
    app: app{team}
spec:
  replicas: {replicas}{extra_spec}
  selector:
    matchLabels: {{app: app}}
  template:
    metadata:
      labels: {{app: app}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports:
        - containerPort: 80
"
    )
}

fn deployment(env: &TestEnv, v: &str) -> Value {
    serde_json::from_str(&env.kubectl_ok(
        v,
        &[
            "get",
            "deployment",
            "app",
            "-n",
            &env.ns,
            "-o",
            "json",
            "--show-managed-fields",
        ],
    ))
    .unwrap()
}

fn entry<'a>(object: &'a Value, manager: &str, operation: &str) -> Option<&'a Value> {
    object["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
}

fn apply_file(env: &TestEnv, v: &str, text: &str, extra: &[&str]) -> (bool, String, String) {
    let mut args = vec!["apply", "--server-side", "-f", "-", "-n", env.ns.as_str()];
    args.extend_from_slice(extra);
    let (status, out, err) = env.kubectl_stdin(v, &args, Some(text));
    (status.success(), out, err)
}

async fn apply_server_side(v: &str) {
    let env = TestEnv::new(&format!("ssa-{}", v.replace('.', ""))).await;
    let (ok, out, err) = apply_file(&env, v, &manifest(2, true, ""), &[]);
    assert!(ok, "{out}{err}");
    assert_eq!(out, "deployment.apps/app serverside-applied\n");
    let first = deployment(&env, v);
    let applied = entry(&first, "kubectl", "Apply").expect("kubectl's Apply entry");
    assert_eq!(applied["apiVersion"], "apps/v1");
    assert_eq!(applied["fieldsType"], "FieldsV1");
    let fields = &applied["fieldsV1"];
    assert_eq!(fields["f:spec"]["f:replicas"], json!({}));
    assert_eq!(fields["f:metadata"]["f:labels"]["f:team"], json!({}));
    assert_eq!(
        fields["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"]["f:ports"]
            ["k:{\"containerPort\":80,\"protocol\":\"TCP\"}"]["f:containerPort"],
        json!({})
    );

    // Second apply: replicas edited, the team label removed from the file.
    let (ok, out, err) = apply_file(&env, v, &manifest(3, false, ""), &[]);
    assert!(ok, "{out}{err}");
    let second = deployment(&env, v);
    assert_eq!(second["spec"]["replicas"], 3);
    assert!(
        second["metadata"]["labels"].get("team").is_none(),
        "{}",
        second["metadata"]
    );
    assert_eq!(second["metadata"]["uid"], first["metadata"]["uid"]);

    // The same file again changes nothing.
    let (ok, _, err) = apply_file(&env, v, &manifest(3, false, ""), &[]);
    assert!(ok, "{err}");
    assert_eq!(
        deployment(&env, v)["metadata"]["resourceVersion"],
        second["metadata"]["resourceVersion"]
    );

    // Another manager takes replicas; applying it again conflicts.
    env.kubectl_ok(
        v,
        &[
            "patch",
            "deployment",
            "app",
            "-n",
            &env.ns,
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":5}}"#,
        ],
    );
    let patched = deployment(&env, v);
    assert!(
        entry(&patched, "kubectl-patch", "Update").is_some(),
        "{}",
        patched["metadata"]
    );
    let (ok, out, err) = apply_file(&env, v, &manifest(3, false, ""), &[]);
    assert!(!ok, "a conflicting apply must fail: {out}");
    assert!(
        err.contains("conflict with \"kubectl-patch\" using apps/v1")
            && err.contains(".spec.replicas"),
        "{err}"
    );
    assert_eq!(deployment(&env, v)["spec"]["replicas"], 5);

    // --force-conflicts takes the field back.
    let (ok, out, err) = apply_file(&env, v, &manifest(3, false, ""), &["--force-conflicts"]);
    assert!(ok, "{out}{err}");
    let forced = deployment(&env, v);
    assert_eq!(forced["spec"]["replicas"], 3);
    assert!(
        entry(&forced, "kubectl-patch", "Update").is_none(),
        "{}",
        forced["metadata"]
    );
}

async fn dry_run_server(v: &str) {
    let env = TestEnv::new(&format!("sdr-{}", v.replace('.', ""))).await;
    let ns = env.ns.as_str();
    let out = env.kubectl_ok(
        v,
        &[
            "create",
            "configmap",
            "dry",
            "--from-literal=a=b",
            "-n",
            ns,
            "--dry-run=server",
            "-o",
            "json",
            "--show-managed-fields",
        ],
    );
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["data"]["a"], "b");
    assert_eq!(
        shown["metadata"]["managedFields"][0]["manager"],
        "kubectl-create"
    );
    let (status, _, err) = env.kubectl(v, &["get", "configmap", "dry", "-n", ns]);
    assert!(!status.success() && err.contains("NotFound"), "{err}");

    env.kubectl_ok(
        v,
        &[
            "create",
            "configmap",
            "kept",
            "--from-literal=a=b",
            "-n",
            ns,
        ],
    );
    let out = env.kubectl_ok(
        v,
        &["delete", "configmap", "kept", "-n", ns, "--dry-run=server"],
    );
    assert!(out.contains("deleted (server dry run)"), "{out}");
    env.kubectl_ok(v, &["get", "configmap", "kept", "-n", ns]);

    // Server-side apply with a server dry run creates nothing either.
    let (ok, out, err) = apply_file(&env, v, &manifest(1, false, ""), &["--dry-run=server"]);
    assert!(ok, "{out}{err}");
    let (status, _, _) = env.kubectl(v, &["get", "deployment", "app", "-n", ns]);
    assert!(!status.success());
}

async fn validate_levels(v: &str) {
    let env = TestEnv::new(&format!("sfv-{}", v.replace('.', ""))).await;
    let ns = env.ns.as_str();
    let unknown = manifest(1, false, "\n  bogus: 1");
    // Server-side apply refuses an undeclared field at any level.
    let (ok, _, err) = apply_file(&env, v, &unknown, &["--validate=strict"]);
    assert!(!ok);
    assert!(err.contains("bogus"), "{err}");
    // Client-side apply: strict refuses, warn creates with a warning.
    let (status, _, err) = env.kubectl_stdin(
        v,
        &["apply", "--validate=strict", "-f", "-", "-n", ns],
        Some(&unknown),
    );
    assert!(!status.success());
    assert!(err.contains("unknown field \"spec.bogus\""), "{err}");
    let (status, out, err) = env.kubectl_stdin(
        v,
        &["apply", "--validate=warn", "-f", "-", "-n", ns],
        Some(&unknown),
    );
    assert!(status.success(), "{out}{err}");
    assert!(err.contains("unknown field \"spec.bogus\""), "{err}");
    // The field was dropped, and a later client-side apply (a strategic
    // patch) warns about it too.
    assert!(deployment(&env, v)["spec"].get("bogus").is_none());
    let changed = manifest(2, false, "\n  bogus: 1");
    let (status, out, err) = env.kubectl_stdin(
        v,
        &["apply", "--validate=warn", "-f", "-", "-n", ns],
        Some(&changed),
    );
    assert!(status.success(), "{out}{err}");
    assert!(err.contains("unknown field \"spec.bogus\""), "{err}");
    assert_eq!(deployment(&env, v)["spec"]["replicas"], 2);
}

/// `kubectl apply` then `kubectl apply --server-side`: the fields the
/// client-side apply set (still as its annotation says) move to the
/// server-side applier without conflicts, and the annotation follows.
async fn from_client_side_apply(v: &str) {
    let env = TestEnv::new(&format!("scsa-{}", v.replace('.', ""))).await;
    let ns = env.ns.as_str();
    let (status, out, err) = env.kubectl_stdin(
        v,
        &["apply", "-f", "-", "-n", ns],
        Some(&manifest(2, true, "")),
    );
    assert!(status.success(), "{out}{err}");
    let before = deployment(&env, v);
    assert!(entry(&before, "kubectl-client-side-apply", "Update").is_some());
    let (ok, out, err) = apply_file(&env, v, &manifest(4, true, ""), &[]);
    assert!(ok, "{out}{err}");
    let after = deployment(&env, v);
    assert_eq!(after["spec"]["replicas"], 4);
    let annotation = after["metadata"]["annotations"]
        ["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .unwrap();
    let last: Value = serde_json::from_str(annotation).unwrap();
    assert_eq!(last["spec"]["replicas"], 4);
    assert!(annotation.ends_with('\n'));
    assert!(entry(&after, "kubectl", "Apply").is_some());
}

#[tokio::test]
async fn kube_rs_status_apply() {
    use k8s_openapi::api::apps::v1::Deployment;
    let env = TestEnv::new("ssa-status").await;
    let api = env.api::<Deployment>();
    let spec = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    });
    api.patch("web", &PatchParams::apply("deployer"), &Patch::Apply(&spec))
        .await
        .unwrap();
    let status = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 9},
        "status": {"replicas": 2, "readyReplicas": 1}
    });
    let applied = api
        .patch_status(
            "web",
            &PatchParams::apply("controller").force(),
            &Patch::Apply(&status),
        )
        .await
        .unwrap();
    // Through /status only the status changes, and only it is owned.
    assert_eq!(applied.spec.as_ref().unwrap().replicas, Some(2));
    assert_eq!(applied.status.as_ref().unwrap().ready_replicas, Some(1));
    let entries = applied.metadata.managed_fields.unwrap();
    let controller = entries
        .iter()
        .find(|e| e.manager.as_deref() == Some("controller"))
        .expect("the status applier's entry");
    assert_eq!(controller.operation.as_deref(), Some("Apply"));
    assert_eq!(controller.subresource.as_deref(), Some("status"));
    assert_eq!(
        controller.fields_v1.as_ref().unwrap().0,
        json!({"f:status": {"f:readyReplicas": {}, "f:replicas": {}}})
    );
    let deployer = entries
        .iter()
        .find(|e| e.manager.as_deref() == Some("deployer"))
        .unwrap();
    assert!(deployer.fields_v1.as_ref().unwrap().0["f:spec"]["f:replicas"].is_object());

    // Apply through /scale: an autoscaler takes spec.replicas from the deployer.
    let scale = json!({
        "apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "web"},
        "spec": {"replicas": 4}
    });
    let scaled = api
        .patch_scale(
            "web",
            &PatchParams::apply("hpa").force(),
            &Patch::Apply(&scale),
        )
        .await
        .unwrap();
    assert_eq!(scaled.spec.unwrap().replicas, Some(4));
    let error = api
        .patch("web", &PatchParams::apply("deployer"), &Patch::Apply(&spec))
        .await
        .unwrap_err();
    let status = common::api_status(error);
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"hpa\" with subresource \"scale\": .spec.replicas"
    );
}

fn managers(cm: &ConfigMap) -> Vec<(String, String)> {
    cm.metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| {
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test]
async fn kube_rs_patch_types_and_managed_fields() {
    let env = TestEnv::new("ssa-kube").await;
    let api = env.api::<ConfigMap>();
    let config = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "owned"},
        "data": {"a": "1", "b": "2"}
    });
    let created = api
        .patch(
            "owned",
            &PatchParams::apply("mgr").force(),
            &Patch::Apply(&config),
        )
        .await
        .unwrap();
    assert_eq!(
        managers(&created),
        vec![("mgr".to_string(), "Apply".to_string())]
    );
    let fields = created.metadata.managed_fields.as_ref().unwrap()[0]
        .fields_v1
        .as_ref()
        .unwrap()
        .0
        .clone();
    assert_eq!(fields, json!({"f:data": {"f:a": {}, "f:b": {}}}));

    let strategic = api
        .patch(
            "owned",
            &PatchParams {
                field_manager: Some("smp".into()),
                ..Default::default()
            },
            &Patch::Strategic(json!({"data": {"a": "10"}})),
        )
        .await
        .unwrap();
    assert_eq!(strategic.data.as_ref().unwrap()["a"], "10");
    assert!(managers(&strategic).contains(&("smp".into(), "Update".into())));

    let merged = api
        .patch(
            "owned",
            &PatchParams {
                field_manager: Some("merge".into()),
                ..Default::default()
            },
            &Patch::Merge(json!({"data": {"c": "3"}})),
        )
        .await
        .unwrap();
    assert_eq!(merged.data.as_ref().unwrap()["c"], "3");

    let ops: json_patch::Patch =
        serde_json::from_value(json!([{"op": "replace", "path": "/data/b", "value": "20"}]))
            .unwrap();
    let json_patched = api
        .patch(
            "owned",
            &PatchParams {
                field_manager: Some("jsonpatch".into()),
                ..Default::default()
            },
            &Patch::Json::<()>(ops),
        )
        .await
        .unwrap();
    assert_eq!(json_patched.data.as_ref().unwrap()["b"], "20");
    let owners = managers(&json_patched);
    for name in ["smp", "merge", "jsonpatch"] {
        assert!(owners.iter().any(|(m, _)| m == name), "{owners:?}");
    }
    // `a` and `b` were taken by the patchers: the applier owns nothing left.
    assert!(!owners.iter().any(|(m, _)| m == "mgr"), "{owners:?}");

    // Re-applying `a` without force conflicts with the strategic patcher.
    let error = api
        .patch("owned", &PatchParams::apply("mgr"), &Patch::Apply(&config))
        .await
        .unwrap_err();
    let status = common::api_status(error);
    assert_eq!(status.code, 409);
    assert_eq!(status.reason, "Conflict");
    assert!(
        status.message.starts_with("Apply failed with 2 conflicts"),
        "{}",
        status.message
    );
    // Forced, it wins both.
    let forced = api
        .patch(
            "owned",
            &PatchParams::apply("mgr").force(),
            &Patch::Apply(&config),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.as_ref().unwrap()["a"], "1");
    assert_eq!(forced.data.as_ref().unwrap()["b"], "2");
    assert!(!managers(&forced)
        .iter()
        .any(|(m, _)| m == "smp" || m == "jsonpatch"));

    // Apply without a field manager and force on a merge patch: 422 as kube.
    let missing = env
        .raw(
            "PATCH",
            &format!("/api/v1/namespaces/{}/configmaps/owned", env.ns),
            Some("application/apply-patch+yaml"),
            serde_json::to_vec(&config).unwrap(),
        )
        .await;
    assert_eq!(missing.status, 422, "{}", missing.body);
    assert_eq!(
        missing.json()["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let forced_merge = env
        .raw(
            "PATCH",
            &format!("/api/v1/namespaces/{}/configmaps/owned?force=true", env.ns),
            Some("application/merge-patch+json"),
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(forced_merge.status, 422, "{}", forced_merge.body);
    assert_eq!(
        forced_merge.json()["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
    let bad_dry_run = env
        .raw(
            "POST",
            &format!("/api/v1/namespaces/{}/configmaps?dryRun=Bogus", env.ns),
            Some("application/json"),
            br#"{"metadata":{"name":"x"}}"#.to_vec(),
        )
        .await;
    assert_eq!(bad_dry_run.status, 422, "{}", bad_dry_run.body);
    assert_eq!(
        bad_dry_run.json()["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Bogus\"}: supported values: \"All\""
    );

    // fieldValidation on a merge patch: Warn answers with a warning and drops
    // the field, Strict refuses with kube's 422 on field `patch`.
    let path = format!("/api/v1/namespaces/{}/configmaps/owned", env.ns);
    let warned = env
        .raw(
            "PATCH",
            &format!("{path}?fieldValidation=Warn"),
            Some("application/merge-patch+json"),
            br#"{"bogus":1}"#.to_vec(),
        )
        .await;
    assert_eq!(warned.status, 200, "{}", warned.body);
    assert_eq!(
        warned.header("warning"),
        r#"299 - "unknown field \"bogus\"""#
    );
    assert!(warned.json().get("bogus").is_none());
    let strict = env
        .raw(
            "PATCH",
            &format!("{path}?fieldValidation=Strict"),
            Some("application/merge-patch+json"),
            br#"{"bogus":1}"#.to_vec(),
        )
        .await;
    assert_eq!(strict.status, 422, "{}", strict.body);
    let body = strict.json();
    assert_eq!(body["reason"], "Invalid");
    assert_eq!(body["details"]["causes"][0]["field"], "patch");
    assert!(body["message"]
        .as_str()
        .unwrap()
        .ends_with("strict decoding error: unknown field \"bogus\""));
    let forced = api.get("owned").await.unwrap();

    // managedFields survive a no-op PUT unchanged.
    let mut same = forced.clone();
    same.metadata.managed_fields = None;
    let replaced = api
        .replace("owned", &PostParams::default(), &same)
        .await
        .unwrap();
    assert_eq!(
        replaced.metadata.resource_version,
        forced.metadata.resource_version
    );
    assert_eq!(
        replaced.metadata.managed_fields,
        forced.metadata.managed_fields
    );
}
