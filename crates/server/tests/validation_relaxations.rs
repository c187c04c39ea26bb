//! Update-time relaxations through kubectl 1.33, as kube-apiserver 1.34
//! grants them: an object stored with a label value that validation refuses
//! today (kube's own tests put such objects straight into storage; here the
//! test edits the stopped server's SQLite store, where objects are JSON)
//! stays writable — a Pod's pod affinity, a Deployment's template, a
//! NetworkPolicy's pod selector, a PodDisruptionBudget's selector — while a
//! new object with the value is refused. And a Job replaced without the
//! `resources: {}` its stored template has (kube compares templates with
//! `Semantic.DeepEqual`, where `{}` of a value struct is its absence).
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use ferrokube_testkit::{kubectl_path, TestServer};

/// A label value kube accepts, replaced in storage by one it refuses.
const MARKER: &str = "relaxation-marker";
const INVALID: &str = "-1";

fn kubectl(server: &TestServer, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(kubectl_path("1.33"))
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

#[track_caller]
fn kubectl_ok(server: &TestServer, args: &[&str], stdin: Option<&str>) -> String {
    let out = kubectl(server, args, stdin);
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn objects(value: &str) -> String {
    let expression = format!("{{key: k, operator: In, values: [\"{value}\"]}}");
    format!(
        r#"apiVersion: v1
kind: Pod
metadata: {{name: relaxed, namespace: default}}
spec:
  containers: [{{name: c, image: busybox}}]
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: zone
        labelSelector: {{matchExpressions: [{expression}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: relaxed, namespace: default}}
spec:
  selector: {{matchLabels: {{app: relaxed}}}}
  template:
    metadata: {{labels: {{app: relaxed}}}}
    spec:
      containers: [{{name: c, image: busybox}}]
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: zone
        whenUnsatisfiable: DoNotSchedule
        labelSelector: {{matchExpressions: [{expression}]}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {{name: relaxed, namespace: default}}
spec:
  podSelector: {{matchExpressions: [{expression}]}}
  policyTypes: [Ingress]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: relaxed, namespace: default}}
spec:
  minAvailable: 1
  selector: {{matchExpressions: [{expression}]}}
"#
    )
}

/// Rewrites the marker in every stored object of the stopped server.
fn store_invalid_values(data_dir: &Path) {
    let db = rusqlite::Connection::open(data_dir.join("store.db")).unwrap();
    let mut statement = db
        .prepare("SELECT key, value FROM kv WHERE key LIKE '%/relaxed'")
        .unwrap();
    let rows: Vec<(String, Vec<u8>)> = statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut rewritten = 0;
    for (key, value) in rows {
        let text = String::from_utf8(value).unwrap();
        if !text.contains(MARKER) {
            continue;
        }
        let text = text.replace(MARKER, INVALID);
        db.execute(
            "UPDATE kv SET value = ?1 WHERE key = ?2",
            rusqlite::params![text.into_bytes(), key],
        )
        .unwrap();
        rewritten += 1;
    }
    assert_eq!(rewritten, 4, "pod, deployment, network policy, budget");
}

#[test]
fn objects_stored_with_now_invalid_label_values_stay_writable() {
    let data = tempfile::tempdir().unwrap();
    let mut server = TestServer::start_in(data.path(), true);
    kubectl_ok(&server, &["apply", "-f", "-"], Some(&objects(MARKER)));
    assert!(server.stop_with("TERM").success());
    store_invalid_values(data.path());

    let server = TestServer::start_in(data.path(), true);
    let stored = kubectl_ok(
        &server,
        &[
            "get",
            "networkpolicy",
            "relaxed",
            "-n",
            "default",
            "-o",
            "json",
        ],
        None,
    );
    assert!(stored.contains(&format!("\"{INVALID}\"")), "{stored}");
    for kind in ["pod", "deployment", "networkpolicy", "poddisruptionbudget"] {
        kubectl_ok(
            &server,
            &["label", kind, "relaxed", "-n", "default", "touched=yes"],
            None,
        );
    }
    kubectl_ok(
        &server,
        &[
            "scale",
            "deployment",
            "relaxed",
            "-n",
            "default",
            "--replicas=2",
        ],
        None,
    );

    // A new object with the value is refused, as on create in kube.
    let fresh = objects(INVALID).replace("name: relaxed", "name: fresh");
    let out = kubectl(&server, &["create", "-f", "-"], Some(&fresh));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for kind in [
        "Pod \"fresh\" is invalid",
        "Deployment.apps \"fresh\" is invalid",
        "NetworkPolicy.networking.k8s.io \"fresh\" is invalid",
        "PodDisruptionBudget.policy \"fresh\" is invalid",
    ] {
        assert!(stderr.contains(kind), "{kind}: {stderr}");
    }
}

#[test]
fn a_job_replaced_without_its_empty_value_structs_is_unchanged() {
    let server = TestServer::start();
    let job = r#"apiVersion: batch/v1
kind: Job
metadata: {name: semantic, namespace: default}
spec:
  template:
    metadata: {annotations: {}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {}, env: []}]
"#;
    kubectl_ok(&server, &["create", "-f", "-"], Some(job));
    let stored = kubectl_ok(
        &server,
        &["get", "job", "semantic", "-n", "default", "-o", "json"],
        None,
    );
    let mut object: serde_json::Value = serde_json::from_str(&stored).unwrap();
    let container = &mut object["spec"]["template"]["spec"]["containers"][0];
    let had_resources = container.as_object_mut().unwrap().remove("resources");
    assert_eq!(had_resources, Some(serde_json::json!({})), "{stored}");
    object["spec"]["template"]["spec"]["containers"][0]["env"] = serde_json::json!(null);
    object["metadata"]["labels"]["touched"] = serde_json::json!("yes");
    kubectl_ok(&server, &["replace", "-f", "-"], Some(&object.to_string()));
    // A real change of the template is still refused.
    object["spec"]["template"]["spec"]["containers"][0]["image"] = serde_json::json!("nginx");
    object["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let out = kubectl(&server, &["replace", "-f", "-"], Some(&object.to_string()));
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("spec.template: Invalid value"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Deployment and a StatefulSet whose stored templates carry a
/// `controller.kubernetes.io/pod-deletion-cost` that is no 32-bit integer
/// (planted in the stopped server's store) may change it to another invalid
/// value (`AllowInvalidPodDeletionCost` from the old template); a new
/// Deployment with it is refused with kube's cause.
#[test]
fn templates_stored_with_an_invalid_deletion_cost_keep_it_writable() {
    const COST: &str = "controller.kubernetes.io/pod-deletion-cost";
    let manifests = |name: &str, cost: &str| {
        format!(
            r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: default}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}, annotations: {{"{COST}": "{cost}"}}}}
    spec: {{containers: [{{name: c, image: busybox}}]}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: {name}, namespace: default}}
spec:
  serviceName: {name}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}, annotations: {{"{COST}": "{cost}"}}}}
    spec: {{containers: [{{name: c, image: busybox}}]}}
"#
        )
    };
    let data = tempfile::tempdir().unwrap();
    let mut server = TestServer::start_in(data.path(), true);
    kubectl_ok(
        &server,
        &["apply", "-f", "-"],
        Some(&manifests("costly", "8675309")),
    );
    assert!(server.stop_with("TERM").success());
    let db = rusqlite::Connection::open(data.path().join("store.db")).unwrap();
    let planted = db
        .execute(
            "UPDATE kv SET value = CAST(replace(CAST(value AS TEXT), '\"8675309\"', '\"+8675309\"') AS BLOB) WHERE key LIKE '%/costly'",
            [],
        )
        .unwrap();
    assert_eq!(planted, 2, "the deployment and the stateful set");
    drop(db);

    let server = TestServer::start_in(data.path(), true);
    let stored = kubectl_ok(
        &server,
        &["get", "deployment", "costly", "-n", "default", "-o", "json"],
        None,
    );
    assert!(stored.contains("\"+8675309\""), "{stored}");
    let patch = format!(
        r#"{{"spec":{{"template":{{"metadata":{{"annotations":{{"{COST}":"cheap"}}}}}}}}}}"#
    );
    for kind in ["deployment", "statefulset"] {
        kubectl_ok(
            &server,
            &[
                "patch", kind, "costly", "-n", "default", "--type", "merge", "-p", &patch,
            ],
            None,
        );
    }
    let out = kubectl(
        &server,
        &["create", "-f", "-"],
        Some(&manifests("fresh", "cheap")),
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for kind in [
        "Deployment.apps \"fresh\" is invalid",
        "StatefulSet.apps \"fresh\" is invalid",
    ] {
        assert!(stderr.contains(kind), "{kind}: {stderr}");
    }
    assert!(
        stderr.contains(&format!(
            "spec.template.annotations[{COST}]: Invalid value: \"cheap\": must be a 32bit integer"
        )),
        "{stderr}"
    );
}
