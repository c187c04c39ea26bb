//! The `authorizer` variable of ValidatingAdmissionPolicy expressions
//! (`apiserver/pkg/cel/library/authz.go`): a policy that lets only users who
//! may `escalate` configmaps set a `privileged` key, exercised by kubectl as
//! jane (refused, then allowed once RBAC grants her the verb) and as the
//! admin (`system:masters`, always allowed).

use super::*;

const POLICY: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: privileged-configmaps
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["configmaps"]
  validations:
  - expression: "!has(object.data) || !('privileged' in object.data) || authorizer.requestResource.check('escalate').allowed()"
    message: "only users who may escalate configmaps can set privileged"
  - expression: "authorizer.group('').resource('configmaps').namespace(object.metadata.namespace).name(object.metadata.name).check('create').allowed()"
    messageExpression: "'no create: ' + authorizer.group('').resource('configmaps').namespace(object.metadata.namespace).check('create').reason()"
  - expression: "!authorizer.serviceAccount('dev', 'nobody').path('/healthz').check('get').allowed()"
    message: "an unbound service account may not read /healthz"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: privileged-configmaps
spec:
  policyName: privileged-configmaps
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: dev
"#;

fn configmap(name: &str, privileged: bool) -> String {
    let data = if privileged {
        "data:\n  privileged: \"true\"\n"
    } else {
        "data:\n  plain: \"true\"\n"
    };
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: dev\n{data}")
}

fn create(cluster: &Cluster, kubeconfig: &Path, manifest: &str) -> (bool, String, String) {
    let file = cluster
        .dir
        .path()
        .join(format!("manifest-{}.yaml", manifest.len()));
    std::fs::write(&file, manifest).unwrap();
    cluster.kubectl(
        "1.33",
        kubeconfig,
        &["create", "-f", &file.display().to_string()],
    )
}

#[tokio::test]
async fn policy_rules_ask_the_authorizer_about_the_requesting_user() {
    let cluster = Cluster::start(&[]);
    cluster.kubectl_admin(&["create", "namespace", "dev"]);
    grant_discovery(&cluster);
    cluster.kubectl_admin(&[
        "create",
        "role",
        "cm-writer",
        "--verb=create,get",
        "--resource=configmaps",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "jane-writes",
        "--role=cm-writer",
        "--user=jane",
        "-n",
        "dev",
    ]);
    let policy = cluster.dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    cluster.kubectl_admin(&["apply", "-f", &policy.display().to_string()]);
    let jane = cluster.kubeconfig_for(JANE_TOKEN);
    let admin = cluster.server.kubeconfig.clone();

    // jane may create configmaps, but not escalate them.
    let (ok, out, err) = create(&cluster, &jane, &configmap("plain", false));
    assert!(ok, "{out}{err}");
    let (ok, _, err) = create(&cluster, &jane, &configmap("jane-privileged", true));
    assert!(!ok, "jane set privileged without the escalate verb");
    assert!(
        // No `reason`: kube's Invalid with the denial as a cause of field "".
        err.contains(r#"The configmaps "jane-privileged" is invalid: : ValidatingAdmissionPolicy 'privileged-configmaps' with binding 'privileged-configmaps' denied request: only users who may escalate configmaps can set privileged"#),
        "{err}"
    );
    // The admin (system:masters) may.
    let (ok, out, err) = create(&cluster, &admin, &configmap("admin-privileged", true));
    assert!(ok, "{out}{err}");

    // Granted `escalate`, jane's request passes the same policy.
    // `kubectl create role` refuses verbs it does not know: a manifest.
    let role = cluster.dir.path().join("escalator.yaml");
    std::fs::write(
        &role,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: cm-escalator\n  namespace: dev\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [escalate]\n",
    )
    .unwrap();
    cluster.kubectl_admin(&["apply", "-f", &role.display().to_string()]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "jane-escalates",
        "--role=cm-escalator",
        "--user=jane",
        "-n",
        "dev",
    ]);
    let mut created = false;
    for _ in 0..50 {
        let (ok, _, err) = create(&cluster, &jane, &configmap("jane-privileged", true));
        if ok {
            created = true;
            break;
        }
        assert!(err.contains("only users who may escalate"), "{err}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(created, "jane's escalate grant never reached the policy");
}
