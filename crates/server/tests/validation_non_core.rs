//! Kind validation of the non-core API groups (networking, storage, policy,
//! scheduling) seen through real clients: kubectl 1.33 prints kube's 422
//! text for a bad Ingress and a forbidden StorageClass update; kube-rs gets
//! kube's Status (code, reason, message, causes) for a NetworkPolicy, a
//! PodDisruptionBudget and a PriorityClass, and the v1 defaults the
//! validation relies on. Needs `kubectl.1.33` (see `common::kubectl_dir`).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{expect_api_error, suffix, TestEnv};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const KUBECTL: &str = "1.33";

#[tokio::test]
async fn kubectl_prints_kubes_text_for_a_bad_ingress() {
    let env = TestEnv::new("valnet-ing").await;
    let ns = env.ns.as_str();
    let manifest = r#"apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: bad
spec:
  rules:
  - host: "*.*.example.com"
    http:
      paths:
      - path: relative
        pathType: Prefix
        backend:
          service:
            name: web
            port: {number: 80, name: http}
"#;
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["apply", "-f", "-", "-n", ns], Some(manifest));
    assert!(!status.success(), "apply must fail: {out}{err}");
    assert_eq!(
        err,
        "The Ingress \"bad\" is invalid: \n\
         * spec.rules[0].host: Invalid value: \"*.*.example.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n\
         * spec.rules[0].http.paths[0].path: Invalid value: \"relative\": must be an absolute path\n\
         * spec.rules[0].http.paths[0].backend: Invalid value: \"\": cannot set both port name & port number\n"
    );
    let (status, _, err) = env.kubectl(KUBECTL, &["get", "ingress", "bad", "-n", ns]);
    assert!(!status.success());
    assert!(err.contains("NotFound"), "{err}");
    // The same Ingress made valid is stored.
    let fixed = manifest
        .replace("\"*.*.example.com\"", "\"*.example.com\"")
        .replace("relative", "/app")
        .replace(", name: http", "");
    let out = env.kubectl_ok_stdin(&["apply", "-f", "-", "-n", ns], &fixed);
    assert_eq!(out, "ingress.networking.k8s.io/bad created\n");
}

#[tokio::test]
async fn kubectl_prints_kubes_text_for_a_forbidden_storage_class_update() {
    let env = TestEnv::new("valnet-sc").await;
    let name = format!("fast-{}", suffix());
    let manifest = |reclaim: &str, kind: &str| {
        format!(
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: {name}\nprovisioner: example.com/disk\nparameters:\n  type: {kind}\nreclaimPolicy: {reclaim}\n"
        )
    };
    let out = env.kubectl_ok_stdin(&["create", "-f", "-"], &manifest("Retain", "ssd"));
    assert_eq!(out, format!("storageclass.storage.k8s.io/{name} created\n"));
    // The v1 defaults are applied.
    let stored = env.kubectl_ok(
        KUBECTL,
        &[
            "get",
            "storageclass",
            &name,
            "-o",
            "jsonpath={.volumeBindingMode}",
        ],
    );
    assert_eq!(stored, "Immediate");
    let (status, out, err) = env.kubectl_stdin(
        KUBECTL,
        &["replace", "-f", "-"],
        Some(&manifest("Delete", "hdd")),
    );
    assert!(!status.success(), "replace must fail: {out}{err}");
    assert_eq!(
        err,
        format!(
            "The StorageClass \"{name}\" is invalid: \n\
             * parameters: Forbidden: updates to parameters are forbidden.\n\
             * reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.\n"
        )
    );
    let (status, _, err) = env.kubectl_stdin(
        KUBECTL,
        &["create", "-f", "-"],
        Some("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: noprov\nprovisioner: \"\"\nreclaimPolicy: Recycle\n"),
    );
    assert!(!status.success());
    assert_eq!(
        err,
        "The StorageClass \"noprov\" is invalid: \n\
         * provisioner: Required value\n\
         * reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"\n"
    );
    env.kubectl_ok(KUBECTL, &["delete", "storageclass", &name]);
}

trait KubectlStdin {
    fn kubectl_ok_stdin(&self, args: &[&str], stdin: &str) -> String;
}

impl KubectlStdin for TestEnv {
    #[track_caller]
    fn kubectl_ok_stdin(&self, args: &[&str], stdin: &str) -> String {
        let (status, out, err) = self.kubectl_stdin(KUBECTL, args, Some(stdin));
        assert!(status.success(), "kubectl {args:?} failed: {out}{err}");
        out
    }
}

#[tokio::test]
async fn kube_rs_gets_kubes_status_for_network_policies_and_budgets() {
    let env = TestEnv::new("valnet-rs").await;
    let policies: Api<NetworkPolicy> = env.api();
    let bad: NetworkPolicy = serde_json::from_value(json!({
        "metadata": {"name": "np"},
        "spec": {"podSelector": {}, "ingress": [{
            "from": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24"]}}],
            "ports": [{"port": 90, "endPort": 80}],
        }]},
    }))
    .unwrap();
    let status = expect_api_error(
        policies.create(&PostParams::default(), &bad).await,
        422,
        "Invalid",
        "NetworkPolicy.networking.k8s.io \"np\" is invalid: [spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`, spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`]",
    );
    let details = status.details.unwrap();
    assert_eq!(details.kind, "NetworkPolicy");
    assert_eq!(details.group, "networking.k8s.io");
    let causes: Vec<(String, String)> = details
        .causes
        .iter()
        .map(|cause| (cause.reason.clone(), cause.field.clone()))
        .collect();
    assert_eq!(
        causes,
        vec![
            (
                "FieldValueInvalid".into(),
                "spec.ingress[0].ports[0].endPort".into()
            ),
            (
                "FieldValueInvalid".into(),
                "spec.ingress[0].from[0].ipBlock.except[0]".into()
            ),
        ]
    );
    // A valid policy gets kube's v1 defaults: TCP ports and the policy types its rules imply.
    let good: NetworkPolicy = serde_json::from_value(json!({
        "metadata": {"name": "np"},
        "spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]},
    }))
    .unwrap();
    let created = policies
        .create(&PostParams::default(), &good)
        .await
        .unwrap();
    let spec = created.spec.unwrap();
    assert_eq!(
        spec.policy_types,
        Some(vec!["Ingress".to_string(), "Egress".to_string()])
    );
    let port = &spec.egress.unwrap()[0].ports.clone().unwrap()[0];
    assert_eq!(port.protocol.as_deref(), Some("TCP"));

    let budgets: Api<PodDisruptionBudget> = env.api();
    let both: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": {"name": "pdb"},
        "spec": {"maxUnavailable": "150%", "selector": {"matchLabels": {"app": "web"}}},
    }))
    .unwrap();
    expect_api_error(
        budgets.create(&PostParams::default(), &both).await,
        422,
        "Invalid",
        "PodDisruptionBudget.policy \"pdb\" is invalid: spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%",
    );
    let fine: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": {"name": "pdb"},
        "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
    }))
    .unwrap();
    budgets.create(&PostParams::default(), &fine).await.unwrap();
}

#[tokio::test]
async fn kube_rs_priority_classes_keep_their_value_and_system_names() {
    let env = TestEnv::new("valnet-pc").await;
    let classes: Api<PriorityClass> = Api::all(env.client.clone());
    // The bootstrap's system classes passed the same validation.
    let node_critical = classes.get("system-node-critical").await.unwrap();
    assert_eq!(node_critical.value, 2_000_001_000);
    let reserved: PriorityClass = serde_json::from_value(json!({
        "metadata": {"name": "system-mine"}, "value": 10,
    }))
    .unwrap();
    expect_api_error(
        classes.create(&PostParams::default(), &reserved).await,
        422,
        "Invalid",
        "PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
    );
    let name = format!("tier-{}", suffix());
    let class: PriorityClass = serde_json::from_value(json!({
        "metadata": {"name": name}, "value": 1000,
    }))
    .unwrap();
    let mut created = classes
        .create(&PostParams::default(), &class)
        .await
        .unwrap();
    created.value = 2000;
    expect_api_error(
        classes.replace(&name, &PostParams::default(), &created).await,
        422,
        "Invalid",
        &format!("PriorityClass.scheduling.k8s.io \"{name}\" is invalid: value: Forbidden: may not be changed in an update."),
    );
    classes
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn kube_rs_certificate_signing_requests_need_a_pem_request_and_usages() {
    use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
    let env = TestEnv::new("valnet-csr").await;
    let requests: Api<CertificateSigningRequest> = Api::all(env.client.clone());
    let name = format!("csr-{}", suffix());
    let base64 = |bytes: &[u8]| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    };
    let bad: CertificateSigningRequest = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"request": base64(b"hi"), "signerName": "example.com/signer", "usages": []},
    }))
    .unwrap();
    expect_api_error(
        requests.create(&PostParams::default(), &bad).await,
        422,
        "Invalid",
        &format!("CertificateSigningRequest.certificates.k8s.io \"{name}\" is invalid: [spec.request: Invalid value: []byte{{0x68, 0x69}}: PEM block type must be CERTIFICATE REQUEST, spec.usages: Required value]"),
    );
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["node.example.com".to_string()]).unwrap();
    let request = params.serialize_request(&key).unwrap();
    // CheckSignature: a flipped bit of the signature (the DER's last byte).
    let mut tampered = request.der().to_vec();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    let tampered_pem = format!(
        "-----BEGIN CERTIFICATE REQUEST-----\n{}\n-----END CERTIFICATE REQUEST-----\n",
        base64(&tampered)
    );
    let forged: CertificateSigningRequest = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"request": base64(tampered_pem.as_bytes()), "signerName": "example.com/signer", "usages": ["client auth"]},
    }))
    .unwrap();
    let refused = requests
        .create(&PostParams::default(), &forged)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("{refused}");
    };
    assert_eq!(status.code, 422);
    assert!(
        status
            .message
            .starts_with(&format!("CertificateSigningRequest.certificates.k8s.io \"{name}\" is invalid: spec.request: Invalid value: []byte{{0x2d, 0x2d")),
        "{}",
        status.message
    );
    assert!(
        status
            .message
            .ends_with("}: x509: ECDSA verification failure"),
        "{}",
        status.message
    );
    let pem = request.pem().unwrap();
    let good: CertificateSigningRequest = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"request": base64(pem.as_bytes()), "signerName": "example.com/signer", "usages": ["client auth"]},
    }))
    .unwrap();
    requests
        .create(&PostParams::default(), &good)
        .await
        .unwrap();
    requests
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
}
