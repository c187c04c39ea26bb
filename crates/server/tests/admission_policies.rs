//! ValidatingAdmissionPolicies through real clients: kubectl 1.33 applies
//! a policy with a ConfigMap as its `paramKind`, its bindings and the
//! param; kubectl and kube-rs then write Deployments and ConfigMaps that
//! the policies deny (kube's messages, reasons and codes) or warn about
//! (kube's warning text, as kubectl prints it). Policies are cluster-wide,
//! so each one's `matchConditions` limit it to the test's namespace.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{api_status, TestEnv};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

fn policies_manifest(ns: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: replica-limit
  namespace: {ns}
data:
  maxReplicas: "3"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas-{ns}
spec:
  failurePolicy: Fail
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  matchConditions:
  - name: own-namespace
    expression: "request.namespace == '{ns}'"
  variables:
  - name: replicas
    expression: "object.spec.replicas"
  validations:
  - expression: "variables.replicas <= int(params.data.maxReplicas)"
    messageExpression: "'replicas ' + string(variables.replicas) + ' is more than ' + params.data.maxReplicas"
    reason: Forbidden
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: "deployments need a team label"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replicas-{ns}
spec:
  policyName: replicas-{ns}
  validationActions: [Deny]
  paramRef:
    name: replica-limit
    namespace: {ns}
    parameterNotFoundAction: Deny
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: names-{ns}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  matchConditions:
  - name: own-namespace
    expression: "request.namespace == '{ns}'"
  validations:
  - expression: "!object.metadata.name.startsWith('bad-')"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: names-deny-{ns}
spec:
  policyName: names-{ns}
  validationActions: [Deny]
  matchResources:
    objectSelector:
      matchLabels:
        vap: deny
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: names-warn-{ns}
spec:
  policyName: names-{ns}
  validationActions: [Warn, Audit]
  matchResources:
    objectSelector:
      matchLabels:
        vap: warn
"#
    )
}

fn deployment_manifest(name: &str, replicas: i64, labels: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels: {labels}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: c
        image: nginx
"#
    )
}

fn deployment(name: &str, replicas: i64, labels: serde_json::Value) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }))
    .unwrap()
}

fn configmap_manifest(name: &str, label: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels:\n    vap: {label}\ndata:\n  a: b\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_with_params_denies_and_warns_for_kubectl_and_kube_rs() {
    let env = TestEnv::new("vap").await;
    let ns = env.ns.clone();
    let (status, stdout, stderr) =
        env.kubectl_stdin("1.33", &["apply", "-f", "-"], Some(&policies_manifest(&ns)));
    assert!(status.success(), "{stdout}\n{stderr}");

    // kubectl: more replicas than the param allows, refused with the
    // messageExpression and the validation's reason (Forbidden, 403).
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&deployment_manifest("big", 5, "{team: a}")),
    );
    assert!(!status.success());
    let message = format!(
        "ValidatingAdmissionPolicy 'replicas-{ns}' with binding 'replicas-{ns}' denied request: replicas 5 is more than 3"
    );
    assert!(
        stderr.contains(&format!(
            r#"Error from server (Forbidden): error when creating "STDIN": deployments.apps "big" is forbidden: {message}"#
        )),
        "{stderr}"
    );
    // Within the limit and labelled: created.
    let (status, stdout, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&deployment_manifest("small", 2, "{team: a}")),
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "deployment.apps/small created");

    // kube-rs: the second validation's message, reason Invalid (422).
    let deployments: Api<Deployment> = env.api();
    let unlabelled = deployment("nolabel", 1, json!({"x": "y"}));
    let denied = api_status(
        deployments
            .create(&PostParams::default(), &unlabelled)
            .await
            .unwrap_err(),
    );
    assert_eq!((denied.code, denied.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        denied.message,
        format!(
            r#"deployments.apps "nolabel" is forbidden: ValidatingAdmissionPolicy 'replicas-{ns}' with binding 'replicas-{ns}' denied request: deployments need a team label"#
        )
    );

    // Without its param, the binding's parameterNotFoundAction Deny refuses.
    let configmaps: Api<ConfigMap> = env.api();
    configmaps
        .delete("replica-limit", &DeleteParams::default())
        .await
        .unwrap();
    let denied = api_status(
        deployments
            .create(
                &PostParams::default(),
                &deployment("later", 1, json!({"team": "a"})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!((denied.code, denied.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        denied.message,
        format!(
            "deployments.apps \"later\" is forbidden: ValidatingAdmissionPolicy 'replicas-{ns}' with binding 'replicas-{ns}' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
        )
    );

    // kubectl: a ConfigMap the Deny binding selects, refused with the
    // expression as the message (no message given); a 422 with the message
    // as its cause, which kubectl prints as kube's (`is invalid: : …`).
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&configmap_manifest("bad-one", "deny")),
    );
    assert!(!status.success());
    assert_eq!(
        stderr.trim(),
        format!(
            r#"The configmaps "bad-one" is invalid: : ValidatingAdmissionPolicy 'names-{ns}' with binding 'names-deny-{ns}' denied request: failed expression: !object.metadata.name.startsWith('bad-')"#
        )
    );
    // The Warn binding: created, with kube's warning as kubectl prints it.
    let (status, stdout, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&configmap_manifest("bad-two", "warn")),
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "configmap/bad-two created");
    assert!(
        stderr.contains(&format!(
            "Warning: Validation failed for ValidatingAdmissionPolicy 'names-{ns}' with binding 'names-warn-{ns}': failed expression: !object.metadata.name.startsWith('bad-')"
        )),
        "{stderr}"
    );
    // Dry-run is judged the same.
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "--dry-run=server", "-n", &ns, "-f", "-"],
        Some(&configmap_manifest("bad-three", "deny")),
    );
    assert!(!status.success());
    assert!(
        stderr.contains("denied request: failed expression"),
        "{stderr}"
    );
    // Names the policy does not refuse pass either binding.
    let fine: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "good", "labels": {"vap": "deny"}}, "data": {"a": "b"}
    }))
    .unwrap();
    configmaps
        .create(&PostParams::default(), &fine)
        .await
        .unwrap();

    // Removing the policies lifts them.
    for (kind, names) in [
        (
            "validatingadmissionpolicybindings",
            vec![
                format!("replicas-{ns}"),
                format!("names-deny-{ns}"),
                format!("names-warn-{ns}"),
            ],
        ),
        (
            "validatingadmissionpolicies",
            vec![format!("replicas-{ns}"), format!("names-{ns}")],
        ),
    ] {
        for name in names {
            env.kubectl_ok("1.33", &["delete", kind, &name]);
        }
    }
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&configmap_manifest("bad-four", "deny")),
    );
    assert!(status.success(), "{stderr}");
}

/// kubectl's `get -o jsonpath` of a policy's status field, once the status
/// controller has observed `generation` (an empty string until then).
fn observed_status(env: &TestEnv, name: &str, generation: i64, jsonpath: &str) -> String {
    for _ in 0..300 {
        let observed = env.kubectl_ok(
            "1.33",
            &[
                "get",
                "validatingadmissionpolicy",
                name,
                "-o",
                "jsonpath={.status.observedGeneration}",
            ],
        );
        if observed.trim() == generation.to_string() {
            return env.kubectl_ok(
                "1.33",
                &[
                    "get",
                    "validatingadmissionpolicy",
                    name,
                    "-o",
                    &format!("jsonpath={jsonpath}"),
                ],
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the status controller never observed generation {generation} of {name}");
}

/// The ValidatingAdmissionPolicy status controller type-checks a policy's
/// expressions against the kinds it matches (`typechecking.go`) and writes
/// kube's warnings to `status.typeChecking`, with `observedGeneration`;
/// a well-typed policy gets an empty `typeChecking`.
#[tokio::test]
async fn a_mistyped_policy_expression_shows_kubes_warning_in_its_status() {
    let env = TestEnv::new("vap-typecheck").await;
    let ns = env.ns.clone();
    let name = format!("typed-{ns}");
    let manifest = |expression: &str| {
        format!(
            r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {name}
spec:
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  matchConditions:
  - name: own-namespace
    expression: "request.namespace == '{ns}'"
  validations:
  - expression: "{expression}"
  - expression: "object.spec.replicas <= int(params.data.max)"
    messageExpression: "'replicas ' + string(object.spec.replicas) + ' over ' + params.data.max"
"#
        )
    };
    // Well typed: generation 1 is observed with an empty `typeChecking`.
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["apply", "-f", "-"],
        Some(&manifest("object.spec.replicas > 1")),
    );
    assert!(status.success(), "{stderr}");
    let type_checking = observed_status(&env, &name, 1, "{.status.typeChecking}");
    assert_eq!(type_checking, "{}");

    // Mistyped for a Deployment (accepted on write, where `object` is
    // dyn): generation 2 gets kube's warning.
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["apply", "-f", "-"],
        Some(&manifest(
            "object.spec.replicaz > 1 && object.spec.replicas == 'x'",
        )),
    );
    assert!(status.success(), "{stderr}");
    let warnings = observed_status(&env, &name, 2, "{.status.typeChecking.expressionWarnings}");
    let warnings: serde_json::Value = serde_json::from_str(&warnings).unwrap();
    assert_eq!(
        warnings,
        json!([{
            "fieldRef": "spec.validations[0].expression",
            "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz > 1 && object.spec.replicas == 'x'\n | ...........^\nERROR: <input>:1:50: found no matching overload for '_==_' applied to '(int, string)'\n | object.spec.replicaz > 1 && object.spec.replicas == 'x'\n | .................................................^\n",
        }])
    );
    let field_ref = env.kubectl_ok(
        "1.33",
        &[
            "get",
            "validatingadmissionpolicy",
            &name,
            "-o",
            "jsonpath={.status.typeChecking.expressionWarnings[0].fieldRef}",
        ],
    );
    assert_eq!(field_ref, "spec.validations[0].expression");
    env.kubectl_ok("1.33", &["delete", "validatingadmissionpolicy", &name]);
}

/// A ValidatingAdmissionPolicy matching `CONNECT` on `pods/exec` (kube's
/// policy plugin handles CONNECT) sees the PodExecOptions as `object` and
/// refuses `kubectl exec` of a shell; other commands go on to the kubelet
/// lookup (the pod has no node here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_on_connect_denies_kubectl_exec() {
    let env = TestEnv::new("vapcon").await;
    let ns = env.ns.clone();
    let manifest = format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: no-shell-{ns}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CONNECT"]
      resources: ["pods/exec"]
  matchConditions:
  - name: own-namespace
    expression: "request.namespace == '{ns}'"
  validations:
  - expression: "request.operation == 'CONNECT' && object.kind == 'PodExecOptions' && object.command[0] != 'sh'"
    message: "no shells in pods"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: no-shell-{ns}
spec:
  policyName: no-shell-{ns}
  validationActions: [Deny]
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: {ns}
spec:
  containers:
  - name: c
    image: busybox
"#
    );
    let (status, stdout, stderr) =
        env.kubectl_stdin("1.33", &["apply", "-f", "-"], Some(&manifest));
    assert!(status.success(), "{stdout}\n{stderr}");
    let (status, _, stderr) =
        env.kubectl("1.33", &["exec", "-n", &ns, "p", "--", "sh", "-c", "id"]);
    assert!(!status.success());
    // Without a reason the denial is kube's 422 Invalid, whose cause
    // kubectl prints.
    let message = format!(
        "ValidatingAdmissionPolicy 'no-shell-{ns}' with binding 'no-shell-{ns}' denied request: no shells in pods"
    );
    assert!(
        stderr.contains(&format!(r#"The pods "p" is invalid: : {message}"#)),
        "{stderr}"
    );
    let denied = env
        .raw(
            "POST",
            &format!("/api/v1/namespaces/{ns}/pods/p/exec?command=sh&stdout=true"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(denied.status, 422, "{}", denied.body);
    let status = denied.json();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(
        status["message"],
        format!(r#"pods "p" is forbidden: {message}"#)
    );
    let (status, _, stderr) = env.kubectl("1.33", &["exec", "-n", &ns, "p", "--", "ls"]);
    assert!(!status.success());
    assert!(
        stderr.contains("pod p does not have a host assigned"),
        "{stderr}"
    );
    let (status, _, stderr) = env.kubectl(
        "1.33",
        &[
            "delete",
            &format!("validatingadmissionpolicy/no-shell-{ns}"),
            &format!("validatingadmissionpolicybinding/no-shell-{ns}"),
        ],
    );
    assert!(status.success(), "{stderr}");
}

/// kube's runtime cost limit on a policy's expressions (`filter.go`
/// `ForInput`, cel-go's `CostLimit(PerCallLimit)`): a validation whose
/// evaluation costs more than 1M is cancelled and, under `failurePolicy:
/// Fail`, the request is denied with kube's words (a 422: the evaluation
/// error's reason is Invalid, which kubectl prints as `is invalid: : …`);
/// a cheap evaluation of the same expression passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_expression_over_the_per_call_limit_denies_under_fail() {
    let env = TestEnv::new("vap-cost").await;
    let ns = env.ns.clone();
    let manifest = format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: cost-{ns}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  matchConditions:
  - name: this-namespace
    expression: request.namespace == '{ns}'
  validations:
  - expression: "!has(object.data) || !('a' in object.data) || object.data.a.contains(object.data.a)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: cost-{ns}
spec:
  policyName: cost-{ns}
  validationActions: [Deny]
"#
    );
    let (status, stdout, stderr) =
        env.kubectl_stdin("1.33", &["apply", "-f", "-"], Some(&manifest));
    assert!(status.success(), "{stdout}\n{stderr}");
    let configmap = |name: &str, value: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: {value}\n")
    };
    // 2000 × 2000 for 20000 characters: over PerCallLimit (1M).
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&configmap("long", &"ab".repeat(10_000))),
    );
    assert!(
        !status.success(),
        "kubectl created a ConfigMap over the limit"
    );
    assert!(
        stderr.contains(&format!(
            r#"The configmaps "long" is invalid: : ValidatingAdmissionPolicy 'cost-{ns}' with binding 'cost-{ns}' denied request: expression '!has(object.data) || !('a' in object.data) || object.data.a.contains(object.data.a)' resulted in error: operation cancelled: actual cost limit exceeded"#
        )),
        "{stderr}"
    );
    let (status, stdout, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &ns, "-f", "-"],
        Some(&configmap("short", &"ab".repeat(100))),
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "configmap/short created");
    let (status, _, stderr) = env.kubectl(
        "1.33",
        &[
            "delete",
            "validatingadmissionpolicy,validatingadmissionpolicybinding",
            &format!("cost-{ns}"),
        ],
    );
    assert!(status.success(), "{stderr}");
}

/// `matchPolicy: Equivalent` (the default): a policy whose rules name
/// `events.k8s.io/v1` events judges a core v1 Event that kubectl creates,
/// on the object converted to `events.k8s.io/v1` (`note`, not `message`)
/// with `request.kind` naming that version and `request.requestKind` the
/// request's; with `Exact` it does not apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_equivalent_policy_judges_core_events_at_events_k8s_io() {
    let env = TestEnv::new("vapeq").await;
    let ns = env.ns.clone();
    let policy = |match_policy: &str| {
        format!(
            r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: notes-{ns}
spec:
  matchConstraints:
    matchPolicy: {match_policy}
    resourceRules:
    - apiGroups: ["events.k8s.io"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["events"]
  matchConditions:
  - name: own-namespace
    expression: "request.namespace == '{ns}'"
  validations:
  - expression: "request.kind.group == 'events.k8s.io' && request.requestKind.group == '' && request.resource.group == 'events.k8s.io'"
    message: "not seen at events.k8s.io/v1"
  - expression: "object.apiVersion == 'events.k8s.io/v1' && object.note != 'forbidden'"
    message: "forbidden notes"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: notes-{ns}
spec:
  policyName: notes-{ns}
  validationActions: [Deny]
"#
        )
    };
    let event = |name: &str, message: &str| {
        format!(
            r#"apiVersion: v1
kind: Event
metadata:
  name: {name}
  namespace: {ns}
involvedObject:
  kind: Pod
  name: p
  namespace: {ns}
reason: Tested
message: {message}
type: Normal
"#
        )
    };
    let (status, stdout, stderr) =
        env.kubectl_stdin("1.33", &["apply", "-f", "-"], Some(&policy("Equivalent")));
    assert!(status.success(), "{stdout}\n{stderr}");
    // Seen at events.k8s.io/v1 (the first validation holds) and allowed.
    let (status, _, stderr) =
        env.kubectl_stdin("1.33", &["create", "-f", "-"], Some(&event("fine", "ok")));
    assert!(status.success(), "{stderr}");
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-f", "-"],
        Some(&event("refused", "forbidden")),
    );
    assert!(!status.success());
    assert!(
        stderr.contains(&format!(
            "ValidatingAdmissionPolicy 'notes-{ns}' with binding 'notes-{ns}' denied request: forbidden notes"
        )),
        "{stderr}"
    );
    // Exact: the core v1 create is not matched.
    let (status, stdout, stderr) =
        env.kubectl_stdin("1.33", &["apply", "-f", "-"], Some(&policy("Exact")));
    assert!(status.success(), "{stdout}\n{stderr}");
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-f", "-"],
        Some(&event("exact", "forbidden")),
    );
    assert!(status.success(), "{stderr}");
    let (status, _, stderr) = env.kubectl(
        "1.33",
        &[
            "delete",
            &format!("validatingadmissionpolicy/notes-{ns}"),
            &format!("validatingadmissionpolicybinding/notes-{ns}"),
        ],
    );
    assert!(status.success(), "{stderr}");
}
