//! kubectl's write paths that PATCH: client-side `apply` (three-way strategic
//! merge with the last-applied annotation) repeated with edits and a removed
//! field, `patch --type=json|merge|strategic`, `scale`, `label`, `annotate`,
//! and `get -w`. Runs once per kubectl version.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::TestEnv;
use serde_json::Value;

use ferrokube_testkit::per_version;

per_version!(apply_three_times, patch_types, scale_label_annotate);

fn manifest(replicas: u32, env_b: &str, with_sidecar: bool, with_label: bool) -> String {
    let label = if with_label { "\n    team: core" } else { "" };
    let sidecar = if with_sidecar {
        "\n      - name: side\n        image: busybox:1.36"
    } else {
        ""
    };
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels:
    app: app{label}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: app}}
  template:
    metadata:
      labels: {{app: app}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        env:
        - {{name: A, value: \"1\"}}
        - {{name: B, value: \"{env_b}\"}}{sidecar}
"
    )
}

fn deployment(env: &TestEnv, v: &str) -> Value {
    serde_json::from_str(&env.kubectl_ok(
        v,
        &["get", "deployment", "app", "-n", &env.ns, "-o", "json"],
    ))
    .unwrap()
}

async fn apply_three_times(v: &str) {
    let env = TestEnv::new(&format!("ka-{}", v.replace('.', ""))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.yaml");
    let path = file.to_str().unwrap();
    let ns = env.ns.as_str();

    std::fs::write(&file, manifest(2, "2", true, true)).unwrap();
    assert_eq!(
        env.kubectl_ok(v, &["apply", "-f", path, "-n", ns]),
        "deployment.apps/app created\n"
    );
    let first = deployment(&env, v);
    assert!(
        first["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string()
    );

    std::fs::write(&file, manifest(3, "3", true, true)).unwrap();
    assert_eq!(
        env.kubectl_ok(v, &["apply", "-f", path, "-n", ns]),
        "deployment.apps/app configured\n"
    );
    let second = deployment(&env, v);
    assert_eq!(second["spec"]["replicas"], 3);
    assert_eq!(
        second["spec"]["template"]["spec"]["containers"][0]["env"][1]["value"],
        "3"
    );
    assert_eq!(second["metadata"]["generation"], 2);

    // The sidecar and the team label leave the manifest: apply prunes them.
    std::fs::write(&file, manifest(3, "3", false, false)).unwrap();
    assert_eq!(
        env.kubectl_ok(v, &["apply", "-f", path, "-n", ns]),
        "deployment.apps/app configured\n"
    );
    let third = deployment(&env, v);
    let containers: Vec<&str> = third["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(containers, ["web"]);
    assert!(
        third["metadata"]["labels"].get("team").is_none(),
        "{}",
        third["metadata"]["labels"]
    );
    assert_eq!(third["metadata"]["uid"], first["metadata"]["uid"]);

    // A fourth apply of the same file changes nothing.
    assert_eq!(
        env.kubectl_ok(v, &["apply", "-f", path, "-n", ns]),
        "deployment.apps/app unchanged\n"
    );
    assert_eq!(
        deployment(&env, v)["metadata"]["resourceVersion"],
        third["metadata"]["resourceVersion"]
    );
}

async fn patch_types(v: &str) {
    let env = TestEnv::new(&format!("kp-{}", v.replace('.', ""))).await;
    let ns = env.ns.as_str();
    let (status, out, err) = env.kubectl_stdin(
        v,
        &["apply", "-f", "-", "-n", ns],
        Some(&manifest(1, "2", true, true)),
    );
    assert!(status.success(), "{out}{err}");
    env.kubectl_ok(
        v,
        &["patch", "deployment", "app", "-n", ns, "-p", r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}}}"#],
    );
    let after_strategic = deployment(&env, v);
    let containers = after_strategic["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    assert_eq!(
        containers.len(),
        2,
        "strategic merge keeps the other container"
    );
    assert_eq!(containers[0]["image"], "nginx:1.26");

    env.kubectl_ok(
        v,
        &[
            "patch",
            "deployment",
            "app",
            "-n",
            ns,
            "--type=merge",
            "-p",
            r#"{"metadata":{"labels":{"merged":"yes"}}}"#,
        ],
    );
    env.kubectl_ok(
        v,
        &[
            "patch",
            "deployment",
            "app",
            "-n",
            ns,
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/replicas","value":4}]"#,
        ],
    );
    let after = deployment(&env, v);
    assert_eq!(after["metadata"]["labels"]["merged"], "yes");
    assert_eq!(after["spec"]["replicas"], 4);

    let (status, _, err) = env.kubectl(
        v,
        &[
            "patch",
            "deployment",
            "app",
            "-n",
            ns,
            "--type=json",
            "-p",
            r#"[{"op":"test","path":"/spec/replicas","value":9}]"#,
        ],
    );
    assert!(!status.success());
    assert!(err.contains("testing value /spec/replicas failed"), "{err}");
}

async fn scale_label_annotate(v: &str) {
    let env = TestEnv::new(&format!("ks-{}", v.replace('.', ""))).await;
    let ns = env.ns.as_str();
    let (status, out, err) = env.kubectl_stdin(
        v,
        &["apply", "-f", "-", "-n", ns],
        Some(&manifest(1, "2", false, true)),
    );
    assert!(status.success(), "{out}{err}");
    assert_eq!(
        env.kubectl_ok(v, &["scale", "deployment", "app", "-n", ns, "--replicas=5"]),
        "deployment.apps/app scaled\n"
    );
    assert_eq!(
        env.kubectl_ok(v, &["label", "deployment", "app", "-n", ns, "tier=web"]),
        "deployment.apps/app labeled\n"
    );
    // kubectl 1.27 prints "annotate", later versions "annotated" (a client-side string).
    let annotated = env.kubectl_ok(
        v,
        &["annotate", "deployment", "app", "-n", ns, "note=hello"],
    );
    let expected = if v == "1.27" {
        "deployment.apps/app annotate\n"
    } else {
        "deployment.apps/app annotated\n"
    };
    assert_eq!(annotated, expected);
    let after = deployment(&env, v);
    assert_eq!(after["spec"]["replicas"], 5);
    assert_eq!(after["metadata"]["labels"]["tier"], "web");
    assert_eq!(after["metadata"]["annotations"]["note"], "hello");
}
