//! PodSecurity admission through kubectl 1.33: a namespace labelled
//! `pod-security.kubernetes.io/enforce=restricted` refuses a privileged pod
//! with kube's message, a Deployment with the same template is created with
//! a `Warning:` (warn level) and never refused, label changes are validated
//! and tried on the pods already there, and updates that do not touch
//! containers are not evaluated again. With an audit log, the audit level's
//! violations are the event's `pod-security.kubernetes.io/audit-violations`
//! annotation.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use ferrokube_testkit as common;

use common::{kubectl_path, TestEnv, TestServer};
use serde_json::Value;

fn pod_manifest(name: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: c
    image: nginx
    securityContext:
      privileged: true
"#
    )
}

fn deployment_manifest(name: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: c
        image: nginx
        securityContext:
          privileged: true
"#
    )
}

/// kube's detail for a privileged container named `c` at `restricted`.
const RESTRICTED_DETAIL: &str = r#"privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enforce_refuses_pods_and_warns_on_deployments_for_kubectl() {
    let env = TestEnv::new("psa").await;
    let ns = env.ns.clone();
    env.kubectl_ok(
        "1.33",
        &[
            "label",
            "ns",
            &ns,
            "pod-security.kubernetes.io/enforce=restricted",
        ],
    );

    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&pod_manifest("priv")),
    );
    assert!(!status.success());
    assert!(
        stderr.contains(&format!(
            r#"Error from server (Forbidden): error when creating "STDIN": pods "priv" is forbidden: violates PodSecurity "restricted:latest": {RESTRICTED_DETAIL}"#
        )),
        "{stderr}"
    );
    // Dry-run is refused the same way.
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "--dry-run=server", "-n", &ns, "-f", "-"],
        Some(&pod_manifest("priv")),
    );
    assert!(!status.success());
    assert!(stderr.contains("violates PodSecurity"), "{stderr}");

    // Only enforce set: a Deployment is neither refused nor warned about.
    let (status, stdout, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&deployment_manifest("quiet")),
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "deployment.apps/quiet created");
    assert!(!stderr.contains("PodSecurity"), "{stderr}");

    // With warn=restricted too: created, with kube's warning.
    env.kubectl_ok(
        "1.33",
        &[
            "label",
            "ns",
            &ns,
            "pod-security.kubernetes.io/warn=restricted",
        ],
    );
    let (status, stdout, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&deployment_manifest("loud")),
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "deployment.apps/loud created");
    assert!(
        stderr.contains(&format!(
            r#"Warning: would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}"#
        )),
        "{stderr}"
    );
    // A refused pod gets no warning on top of its error.
    let (_, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&pod_manifest("priv")),
    );
    assert!(!stderr.contains("Warning:"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warn_level_admits_with_warning_lines() {
    let env = TestEnv::new("psa-warn").await;
    let ns = env.ns.clone();
    env.kubectl_ok(
        "1.33",
        &[
            "label",
            "ns",
            &ns,
            "pod-security.kubernetes.io/warn=baseline",
            "pod-security.kubernetes.io/warn-version=v1.33",
        ],
    );
    let (status, stdout, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&pod_manifest("priv")),
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "pod/priv created");
    assert!(
        stderr.contains(
            r#"Warning: would violate PodSecurity "baseline:v1.33": privileged (container "c" must not set securityContext.privileged=true)"#
        ),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_labels_are_validated_and_tried_on_existing_pods() {
    let env = TestEnv::new("psa-ns").await;
    let ns = env.ns.clone();
    for name in ["priv-b", "priv-a"] {
        let (status, _, stderr) = env.kubectl_stdin(
            "1.33",
            &["create", "-n", &ns, "-f", "-"],
            Some(&pod_manifest(name)),
        );
        assert!(status.success(), "{stderr}");
    }

    // An invalid level is refused (422) with kube's field error.
    let (status, _, stderr) = env.kubectl(
        "1.33",
        &[
            "label",
            "ns",
            &ns,
            "pod-security.kubernetes.io/enforce=bogus",
        ],
    );
    assert!(!status.success());
    assert!(
        stderr.contains(&format!(
            r#"The Namespace "{ns}" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted"#
        )),
        "{stderr}"
    );

    // A stricter enforce level: allowed, the violating pods reported.
    let (status, _, stderr) = env.kubectl(
        "1.33",
        &[
            "label",
            "ns",
            &ns,
            "pod-security.kubernetes.io/enforce=baseline",
        ],
    );
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            r#"Warning: existing pods in namespace "{ns}" violate the new PodSecurity enforce level "baseline:latest""#
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("Warning: priv-a (and 1 other pod): privileged"),
        "{stderr}"
    );

    // Updates that leave containers alone are not evaluated again; a new
    // image is, and refused.
    env.kubectl_ok(
        "1.33",
        &["label", "pod", "-n", &ns, "priv-a", "touched=yes"],
    );
    let (status, _, stderr) = env.kubectl(
        "1.33",
        &["set", "image", "-n", &ns, "pod/priv-a", "c=nginx:1.27"],
    );
    assert!(!status.success());
    assert!(
        stderr.contains(r#"pods "priv-a" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)"#),
        "{stderr}"
    );
}

/// The audit events of pod creates in `namespace`, once `count` are written
/// (the log writer is asynchronous).
fn pod_create_events(log: &Path, namespace: &str, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found: Vec<Value> = std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| {
                event["verb"] == "create"
                    && event["objectRef"]["resource"] == "pods"
                    && event["objectRef"]["namespace"] == namespace
                    && event["stage"] == "ResponseComplete"
            })
            .collect();
        if found.len() >= count || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_level_violations_are_audit_annotations() {
    let directory = tempfile::tempdir().unwrap();
    let policy = directory.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    )
    .unwrap();
    let log = directory.path().join("audit.log");
    let server = TestServer::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-log-path",
        log.to_str().unwrap(),
    ]);
    let kubectl = |args: &[&str], stdin: Option<&str>| {
        let mut command = Command::new(kubectl_path("1.33"));
        command
            .arg("--kubeconfig")
            .arg(&server.kubeconfig)
            .args(args)
            .env_remove("KUBECONFIG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        {
            use std::io::Write;
            let mut input = child.stdin.take().unwrap();
            input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    kubectl(&["create", "namespace", "audited"], None);
    kubectl(
        &[
            "label",
            "ns",
            "audited",
            "pod-security.kubernetes.io/audit=baseline",
        ],
        None,
    );
    kubectl(
        &["create", "-n", "audited", "-f", "-"],
        Some(&pod_manifest("priv")),
    );
    let events = pod_create_events(&log, "audited", 1);
    assert_eq!(events.len(), 1, "{events:?}");
    let annotations = &events[0]["annotations"];
    assert_eq!(
        annotations["pod-security.kubernetes.io/audit-violations"],
        r#"would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)"#
    );
    assert_eq!(
        annotations["pod-security.kubernetes.io/enforce-policy"],
        "privileged:latest"
    );
}

fn restricted_pod_manifest(name: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  securityContext:
    runAsNonRoot: true
    seccompProfile:
      type: RuntimeDefault
  containers:
  - name: c
    image: nginx
    securityContext:
      allowPrivilegeEscalation: false
      capabilities:
        drop: ["ALL"]
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ephemeral_containers_are_evaluated_as_pod_updates() {
    let env = TestEnv::new("psa-debug").await;
    let ns = env.ns.clone();
    env.kubectl_ok(
        "1.33",
        &[
            "label",
            "ns",
            &ns,
            "pod-security.kubernetes.io/enforce=restricted",
        ],
    );
    let (status, stdout, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&restricted_pod_manifest("good")),
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "pod/good created");
    // `kubectl debug` adds an ephemeral container through
    // `pods/ephemeralcontainers`: evaluated, and refused at restricted.
    let (status, _, stderr) = env.kubectl(
        "1.33",
        &[
            "debug",
            "-n",
            &ns,
            "good",
            "--image=busybox",
            "--container=dbg",
            "--profile=general",
        ],
    );
    assert!(!status.success());
    assert!(
        stderr.contains(r#"pods "good" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "dbg" must set securityContext.allowPrivilegeEscalation=false)"#),
        "{stderr}"
    );
    // The `restricted` debugging profile complies.
    let (status, _, stderr) = env.kubectl(
        "1.33",
        &[
            "debug",
            "-n",
            &ns,
            "good",
            "--image=busybox",
            "--container=dbg2",
            "--profile=restricted",
        ],
    );
    assert!(status.success(), "{stderr}");
}

/// kubectl 1.33 against a server whose `--admission-control-config-file`
/// gives PodSecurity a default policy and exemptions (kube's
/// `PodSecurityConfiguration`): namespaces without labels enforce the
/// default, and an exempt namespace, user or runtime class is let through;
/// labelling an exempt namespace warns that its policy is ignored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admission_configuration_sets_defaults_and_exemptions() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(
        directory.path().join("pod-security.yaml"),
        r#"apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  enforce: baseline
exemptions:
  usernames: [exempt-user]
  namespaces: [exempt-ns]
  runtimeClasses: [sandboxed]
"#,
    )
    .unwrap();
    let config = directory.path().join("admission.yaml");
    std::fs::write(
        &config,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: pod-security.yaml\n",
    )
    .unwrap();
    let server =
        TestServer::start_with(&["--admission-control-config-file", config.to_str().unwrap()]);
    let kubectl = |args: &[&str], stdin: Option<&str>| {
        let mut command = Command::new(kubectl_path("1.33"));
        command
            .arg("--kubeconfig")
            .arg(&server.kubeconfig)
            .args(args)
            .env_remove("KUBECONFIG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        {
            use std::io::Write;
            let mut input = child.stdin.take().unwrap();
            input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
        }
        child.wait_with_output().unwrap()
    };
    let ok = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    ok(kubectl(&["create", "namespace", "plain"], None));
    ok(kubectl(&["create", "namespace", "exempt-ns"], None));

    // The default policy is enforced in a namespace without labels.
    let refused = kubectl(
        &["create", "-n", "plain", "-f", "-"],
        Some(&pod_manifest("priv")),
    );
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        r#"Error from server (Forbidden): error when creating "STDIN": pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)"#
    );

    // An exempt namespace, an exempt user, an exempt runtime class.
    ok(kubectl(
        &["create", "-n", "exempt-ns", "-f", "-"],
        Some(&pod_manifest("priv")),
    ));
    ok(kubectl(
        &[
            "create",
            "-n",
            "plain",
            "--as",
            "exempt-user",
            "--as-group",
            "system:masters",
            "-f",
            "-",
        ],
        Some(&pod_manifest("by-exempt-user")),
    ));
    let sandboxed_class = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: sandboxed\nhandler: runsc\n";
    ok(kubectl(&["create", "-f", "-"], Some(sandboxed_class)));
    let sandboxed = pod_manifest("sandboxed").replace(
        "spec:\n  containers:",
        "spec:\n  runtimeClassName: sandboxed\n  containers:",
    );
    ok(kubectl(
        &["create", "-n", "plain", "-f", "-"],
        Some(&sandboxed),
    ));
    // Another user, the same pod: refused.
    let other_user = kubectl(
        &[
            "create",
            "-n",
            "plain",
            "--as",
            "someone-else",
            "--as-group",
            "system:masters",
            "-f",
            "-",
        ],
        Some(&pod_manifest("by-other-user")),
    );
    assert!(!other_user.status.success());

    // Labels on an exempt namespace are accepted and said to be ignored.
    let stderr = ok(kubectl(
        &[
            "label",
            "ns",
            "exempt-ns",
            "pod-security.kubernetes.io/enforce=restricted",
            "pod-security.kubernetes.io/warn=baseline",
        ],
        None,
    ));
    assert_eq!(
        stderr.trim(),
        r#"Warning: namespace "exempt-ns" is exempt from Pod Security, and the policy (enforce=restricted:latest, warn=baseline:latest) will be ignored"#
    );
    let listed = ok(kubectl(
        &["get", "pods", "-n", "exempt-ns", "-o", "name"],
        None,
    ));
    assert!(listed.is_empty());
}

/// A configuration kube would refuse stops the start with its errors.
#[test]
fn a_bad_pod_security_configuration_stops_the_start() {
    let directory = tempfile::tempdir().unwrap();
    let config = directory.path().join("admission.yaml");
    std::fs::write(
        &config,
        r#"apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: strict
    exemptions:
      usernames: [a, a]
"#,
    )
    .unwrap();
    let stderr = TestServer::refused_start(&[
        "--admission-control-config-file".as_ref(),
        config.as_os_str(),
    ]);
    assert!(
        stderr.contains(r#"ferrokube: --admission-control-config-file: admission plugin "PodSecurity": [defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted, exemptions.usernames[1]: Duplicate value: "a"]"#),
        "{stderr}"
    );
}
