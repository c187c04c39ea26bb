//! admissionregistration objects through kubectl 1.33: an invalid
//! ValidatingWebhookConfiguration and ValidatingAdmissionPolicy (and a
//! binding) are refused with kube's 422 and field messages, valid ones are
//! stored with kube's v1 defaults; and a policy bound with
//! `validationActions: [Audit]` and `auditAnnotations` leaves kube's audit
//! annotations on the request's ResponseComplete event
//! (`validating/dispatcher.go` `publishValidationFailureAnnotation`,
//! `auditAnnotationCollector.publish`).
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ferrokube_testkit::{kubectl_path, TestServer};
use serde_json::Value;

const AUDIT_POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/openapi*", "/api", "/api/v1", "/apis*", "/version"]
- level: Metadata
"#;

fn kubectl(server: &TestServer, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    use std::io::Write;
    let mut child = Command::new(kubectl_path("1.33"))
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

fn events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The first event matching `predicate`, once written (the writer is
/// asynchronous).
fn wait_for(log: &Path, predicate: impl Fn(&Value) -> bool) -> Option<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(found) = events(log).into_iter().find(|e| predicate(e)) {
            return Some(found);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

const INVALID_WEBHOOK: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: invalid-hook
webhooks:
- name: short.name
  clientConfig:
    url: http://example.com/validate
  rules:
  - operations: ["*", "CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["*/*", "pods"]
  sideEffects: Some
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 31
"#;

const VALID_WEBHOOK: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: valid-hook
webhooks:
- name: valid.hook.example.com
  clientConfig:
    url: https://127.0.0.1:1/validate
  rules:
  - operations: ["CREATE"]
    apiGroups: ["example.com"]
    apiVersions: ["v1"]
    resources: ["widgets"]
  sideEffects: None
  admissionReviewVersions: ["v1"]
"#;

const INVALID_POLICY: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: invalid-policy
spec:
  failurePolicy: Sometimes
  matchConstraints:
    resourceRules:
    - operations: ["CREATE"]
      apiGroups: [""]
      apiVersions: ["v1"]
      resources: ["configmaps"]
  validations:
  - expression: "object.data.size() <"
    message: "two\nlines"
    reason: Teapot
  auditAnnotations:
  - key: "bad key"
    valueExpression: "'x'"
"#;

const INVALID_BINDING: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: invalid-binding
spec:
  policyName: audited.example.com
  validationActions: ["Deny", "Warn"]
"#;

/// Audits ConfigMaps without a `team` label; annotates every ConfigMap
/// create with its name.
const AUDIT_POLICY_OBJECTS: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: audited.example.com
spec:
  matchConstraints:
    resourceRules:
    - operations: ["CREATE"]
      apiGroups: [""]
      apiVersions: ["v1"]
      resources: ["configmaps"]
  validations:
  - expression: "true"
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: "a ConfigMap needs a <team> label"
  auditAnnotations:
  - key: created-name
    valueExpression: "'configmap ' + object.metadata.name"
  - key: skipped
    valueExpression: "null"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: audited-binding
spec:
  policyName: audited.example.com
  validationActions: ["Audit"]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: default
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admissionregistration_objects_are_validated_and_audit_bindings_annotate() {
    let directory = tempfile::tempdir().unwrap();
    let policy = directory.path().join("policy.yaml");
    std::fs::write(&policy, AUDIT_POLICY).unwrap();
    let log = directory.path().join("audit.log");
    let server = TestServer::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-log-path",
        log.to_str().unwrap(),
    ]);

    // An invalid webhook configuration: kube's 422 and its field messages.
    let (ok, _, stderr) = kubectl(&server, &["apply", "-f", "-"], Some(INVALID_WEBHOOK));
    assert!(!ok, "{stderr}");
    for expected in [
        r#"The ValidatingWebhookConfiguration "invalid-hook" is invalid"#,
        r#"webhooks[0].name: Invalid value: "short.name": should be a domain with at least three segments separated by dots"#,
        r#"webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if '*' is present, must not specify other operations"#,
        r#"webhooks[0].rules[0].resources: Invalid value: []string{"*/*", "pods"}: if '*/*' is present, must not specify other resources"#,
        r#"webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun""#,
        "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
        r#"webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme"#,
    ] {
        assert!(stderr.contains(expected), "missing {expected}:\n{stderr}");
    }

    // A valid one is stored, with kube's v1 defaults.
    let (ok, stdout, stderr) = kubectl(&server, &["apply", "-f", "-"], Some(VALID_WEBHOOK));
    assert!(ok, "{stdout}{stderr}");
    let (ok, stdout, stderr) = kubectl(
        &server,
        &[
            "get",
            "validatingwebhookconfiguration",
            "valid-hook",
            "-o",
            "json",
        ],
        None,
    );
    assert!(ok, "{stderr}");
    let stored: Value = serde_json::from_str(&stdout).unwrap();
    let hook = &stored["webhooks"][0];
    assert_eq!(hook["failurePolicy"], "Fail");
    assert_eq!(hook["matchPolicy"], "Equivalent");
    assert_eq!(hook["timeoutSeconds"], 10);
    assert_eq!(hook["namespaceSelector"], serde_json::json!({}));
    assert_eq!(hook["rules"][0]["scope"], "*");

    // An invalid policy and binding.
    let (ok, _, stderr) = kubectl(&server, &["apply", "-f", "-"], Some(INVALID_POLICY));
    assert!(!ok, "{stderr}");
    for expected in [
        r#"The ValidatingAdmissionPolicy "invalid-policy" is invalid"#,
        r#"spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore""#,
        r#"spec.validations[0].expression: Invalid value: "object.data.size() <": compilation failed: ERROR: <input>:1:21: Syntax error:"#,
        r#"spec.validations[0].message: Invalid value: "two\nlines": message must not contain line breaks"#,
        r#"spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge""#,
        r#"spec.auditAnnotations[0].key: Invalid value: "invalid-policy/bad key": name part must consist of alphanumeric characters"#,
    ] {
        assert!(stderr.contains(expected), "missing {expected}:\n{stderr}");
    }
    let (ok, _, stderr) = kubectl(&server, &["apply", "-f", "-"], Some(INVALID_BINDING));
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains(r#"spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn"}: must not contain both Deny and Warn"#),
        "{stderr}"
    );

    // The audited policy: accepted, defaulted.
    let (ok, stdout, stderr) = kubectl(&server, &["apply", "-f", "-"], Some(AUDIT_POLICY_OBJECTS));
    assert!(ok, "{stdout}{stderr}");
    let (ok, stdout, stderr) = kubectl(
        &server,
        &[
            "get",
            "validatingadmissionpolicy",
            "audited.example.com",
            "-o",
            "json",
        ],
        None,
    );
    assert!(ok, "{stderr}");
    let stored: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(stored["spec"]["failurePolicy"], "Fail");
    assert_eq!(
        stored["spec"]["matchConstraints"]["matchPolicy"],
        "Equivalent"
    );

    // A ConfigMap without the label: created (Audit does not deny), and
    // its create's ResponseComplete event carries kube's annotations.
    let (ok, stdout, stderr) = kubectl(
        &server,
        &["create", "configmap", "unlabelled", "-n", "default"],
        None,
    );
    assert!(ok, "{stdout}{stderr}");
    let event = wait_for(&log, |event| {
        event["stage"] == "ResponseComplete"
            && event["verb"] == "create"
            && event["objectRef"]["resource"] == "configmaps"
            && event["objectRef"]["name"] == "unlabelled"
    })
    .unwrap_or_else(|| panic!("no event for the create in {:?}", events(&log)));
    let annotations = &event["annotations"];
    let failure = annotations["validation.policy.admission.k8s.io/validation_failure"]
        .as_str()
        .unwrap_or_else(|| panic!("no validation_failure in {event}"));
    let failure: Value = serde_json::from_str(failure).unwrap();
    assert_eq!(
        failure,
        serde_json::json!([{
            "message": "a ConfigMap needs a <team> label",
            "policy": "audited.example.com",
            "binding": "audited-binding",
            "expressionIndex": 1,
            "validationActions": ["Audit"],
        }])
    );
    assert_eq!(
        annotations["audited.example.com/created-name"],
        "configmap unlabelled"
    );
    assert!(annotations.get("audited.example.com/skipped").is_none());
    // Go's encoder escapes '<' inside the annotation's JSON value.
    let line = std::fs::read_to_string(&log).unwrap();
    assert!(
        line.contains(r#"a ConfigMap needs a \\u003cteam\\u003e label"#),
        "{line}"
    );

    // A labelled one passes the validation: only the annotation of the value.
    let (ok, stdout, stderr) = kubectl(
        &server,
        &["create", "-f", "-"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labelled\n  namespace: default\n  labels:\n    team: a\n"),
    );
    assert!(ok, "{stdout}{stderr}");
    let event = wait_for(&log, |event| {
        event["stage"] == "ResponseComplete"
            && event["verb"] == "create"
            && event["objectRef"]["name"] == "labelled"
    })
    .unwrap();
    assert!(event["annotations"]
        .get("validation.policy.admission.k8s.io/validation_failure")
        .is_none());
    assert_eq!(
        event["annotations"]["audited.example.com/created-name"],
        "configmap labelled"
    );
}
