//! ferrokube as a drop-in for kube-apiserver under controller-runtime's
//! envtest (`pkg/internal/testing/controlplane`): the binary started with
//! exactly the flags envtest passes (no `serve` subcommand), in envtest's
//! certificate layout (a cert dir holding `apiserver.crt`/`.key` from a tiny
//! CA, `sa-signer.crt`/`.key`, `client-cert-auth-ca.crt`) and working
//! directory, on the etcd envtest starts; then driven with kubectl as
//! envtest's provisioned `system:masters` user.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use ferrokube_testkit as common;

use common::etcd::{free_port, Etcd};
use common::{ferrokube_bin, kubectl_path};

/// A self-signed CA as envtest's `TinyCA` makes one (ECDSA P-256, PKCS#8 key).
struct TinyCa {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    cert_pem: String,
    key_pem: String,
}

impl TinyCa {
    fn new(name: &str) -> TinyCa {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert_pem = params.self_signed(&key).unwrap().pem();
        let key_pem = key.serialize_pem();
        TinyCa {
            issuer: rcgen::Issuer::new(params, key),
            cert_pem,
            key_pem,
        }
    }

    /// `NewServingCert`: localhost and 127.0.0.1.
    fn serving(&self) -> (String, String) {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params =
            rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
                .unwrap();
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// `NewClientCert`: the user as CN, one group as O.
    fn client(&self, name: &str, group: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, group);
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// The API server process; SIGTERM and reaped on drop.
struct ApiServer(Child);

impl Drop for ApiServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(kubectl_path("1.33"))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[track_caller]
fn kubectl_ok(kubeconfig: &Path, args: &[&str]) -> String {
    let (ok, out, err) = kubectl(kubeconfig, args);
    assert!(ok, "kubectl {args:?}:\n{out}{err}");
    out
}

#[test]
fn starts_with_envtests_flags_and_certificate_layout() {
    // `kube-apiserver --help`: envtest looks for `--insecure-port` there
    // (present before 1.24) and must not find it; the ignored flags say so.
    let help = Command::new(ferrokube_bin())
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(!String::from_utf8_lossy(&help.stdout).contains("--insecure-port"));
    let serve_help = Command::new(ferrokube_bin())
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let serve_help = String::from_utf8_lossy(&serve_help.stdout).into_owned();
    for flag in [
        "--disable-admission-plugins",
        "--allow-privileged",
        "--cert-dir",
    ] {
        assert!(serve_help.contains(flag), "{flag} in:\n{serve_help}");
    }
    assert!(
        serve_help.contains("Accepted for kube-apiserver compatibility and ignored"),
        "{serve_help}"
    );

    let etcd = Etcd::start();
    // `k8s_test_framework_*`: envtest's cert dir, also the process's working directory.
    let cert_dir = tempfile::Builder::new()
        .prefix("k8s_test_framework_")
        .tempdir()
        .unwrap();
    let dir = cert_dir.path();
    let serving_ca = TinyCa::new("serving-ca");
    let (serving_cert, serving_key) = serving_ca.serving();
    std::fs::write(dir.join("apiserver.crt"), serving_cert).unwrap();
    std::fs::write(dir.join("apiserver.key"), serving_key).unwrap();
    let sa_signer = TinyCa::new("sa-signer");
    std::fs::write(dir.join("sa-signer.crt"), &sa_signer.cert_pem).unwrap();
    std::fs::write(dir.join("sa-signer.key"), &sa_signer.key_pem).unwrap();
    let client_ca = TinyCa::new("client-ca");
    std::fs::write(dir.join("client-cert-auth-ca.crt"), &client_ca.cert_pem).unwrap();

    let port = free_port();
    let path = |name: &str| dir.join(name).display().to_string();
    // APIServer.defaultArgs plus CertAuthn.Configure's --client-ca-file.
    let args = [
        "--advertise-address=127.0.0.1".to_string(),
        "--allow-privileged=true".to_string(),
        "--authorization-mode=RBAC".to_string(),
        "--bind-address=127.0.0.1".to_string(),
        format!("--cert-dir={}", dir.display()),
        format!("--client-ca-file={}", path("client-cert-auth-ca.crt")),
        "--disable-admission-plugins=ServiceAccount".to_string(),
        etcd.servers_flag(),
        format!("--secure-port={port}"),
        format!("--service-account-issuer=https://127.0.0.1:{port}/"),
        format!("--service-account-key-file={}", path("sa-signer.crt")),
        format!(
            "--service-account-signing-key-file={}",
            path("sa-signer.key")
        ),
        "--service-cluster-ip-range=10.0.0.0/24".to_string(),
    ];
    let _server = ApiServer(
        Command::new(ferrokube_bin())
            .args(&args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );

    // envtest's AddUser: a client certificate for a system:masters user,
    // and the serving CA as the only trusted root.
    let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let (admin_cert, admin_key) = client_ca.client("envtest-admin", "system:masters");
    let kubeconfig = dir.join("envtest.kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority-data: {}\nusers:\n- name: envtest-admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\ncontexts:\n- name: envtest\n  context:\n    cluster: envtest\n    user: envtest-admin\ncurrent-context: envtest\n",
            b64(&serving_ca.cert_pem),
            b64(&admin_cert),
            b64(&admin_key),
        ),
    )
    .unwrap();

    // envtest polls /healthz until it answers 200.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (ok, out, err) = kubectl(&kubeconfig, &["get", "--raw", "/healthz"]);
        if ok && out == "ok" {
            break;
        }
        assert!(Instant::now() < deadline, "never healthy: {out}{err}");
        std::thread::sleep(Duration::from_millis(100));
    }

    let whoami = kubectl_ok(
        &kubeconfig,
        &["auth", "whoami", "-o", "jsonpath={.status.userInfo}"],
    );
    let user: serde_json::Value = serde_json::from_str(&whoami).unwrap();
    assert_eq!(user["username"], "envtest-admin");
    assert_eq!(
        user["groups"],
        serde_json::json!(["system:masters", "system:authenticated"])
    );
    kubectl_ok(&kubeconfig, &["create", "namespace", "envtest-ns"]);
    kubectl_ok(
        &kubeconfig,
        &[
            "create",
            "configmap",
            "cm",
            "-n",
            "envtest-ns",
            "--from-literal=a=1",
        ],
    );
    let value = kubectl_ok(
        &kubeconfig,
        &[
            "get",
            "configmap",
            "cm",
            "-n",
            "envtest-ns",
            "-o",
            "jsonpath={.data.a}",
        ],
    );
    assert_eq!(value, "1");
    // --etcd-servers without --storage-backend is etcd, as in kube: no
    // embedded store was opened.
    assert!(!dir.join("ferrokube-data").join("store.db").exists());
    // Tokens signed with envtest's sa-signer key, for its issuer.
    kubectl_ok(
        &kubeconfig,
        &["create", "serviceaccount", "bot", "-n", "envtest-ns"],
    );
    let token = kubectl_ok(&kubeconfig, &["create", "token", "bot", "-n", "envtest-ns"]);
    let claims = token.trim().split('.').nth(1).unwrap();
    let claims: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(claims)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(claims["iss"], format!("https://127.0.0.1:{port}/"));
    // The data went under the cert dir, not the caller's directory.
    assert!(dir.join("ferrokube-data").join("pki").is_dir());
}
