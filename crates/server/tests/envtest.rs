//! ferrokube as a drop-in for kube-apiserver under controller-runtime's
//! envtest (`pkg/internal/testing/controlplane`): the binary started with
//! exactly the flags envtest passes (no `serve` subcommand), in envtest's
//! certificate layout (a cert dir holding `apiserver.crt`/`.key` from a tiny
//! CA, `sa-signer.crt`/`.key`, `client-cert-auth-ca.crt`) and working
//! directory, on the etcd envtest starts; then driven with kubectl as
//! envtest's provisioned `system:masters` user. And the assets directory
//! `ferrokube envtest-assets` lays out, started as envtest starts
//! `$KUBEBUILDER_ASSETS/etcd` and `$KUBEBUILDER_ASSETS/kube-apiserver`.
#![allow(clippy::unwrap_used)]

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
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

fn kubectl(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    kubectl_with(&kubectl_path("1.33"), kubeconfig, args)
}

fn kubectl_with(binary: &Path, kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(binary)
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

/// envtest's cert dir (`k8s_test_framework_*`, also the API server's
/// working directory) as `APIServer.setProcessState` fills it, the flags it
/// starts the API server with, and the kubeconfig of the `system:masters`
/// user `AddUser` provisions.
struct EnvtestApiServerSetup {
    cert_dir: tempfile::TempDir,
    port: u16,
    args: Vec<String>,
    kubeconfig: PathBuf,
}

impl EnvtestApiServerSetup {
    fn new(etcd_servers_flag: String) -> EnvtestApiServerSetup {
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
        let args = vec![
            "--advertise-address=127.0.0.1".to_string(),
            "--allow-privileged=true".to_string(),
            "--authorization-mode=RBAC".to_string(),
            "--bind-address=127.0.0.1".to_string(),
            format!("--cert-dir={}", dir.display()),
            format!("--client-ca-file={}", path("client-cert-auth-ca.crt")),
            "--disable-admission-plugins=ServiceAccount".to_string(),
            etcd_servers_flag,
            format!("--secure-port={port}"),
            format!("--service-account-issuer=https://127.0.0.1:{port}/"),
            format!("--service-account-key-file={}", path("sa-signer.crt")),
            format!(
                "--service-account-signing-key-file={}",
                path("sa-signer.key")
            ),
            "--service-cluster-ip-range=10.0.0.0/24".to_string(),
        ];

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
        EnvtestApiServerSetup {
            cert_dir,
            port,
            args,
            kubeconfig,
        }
    }

    fn dir(&self) -> &Path {
        self.cert_dir.path()
    }

    /// `process.State.Start`: the binary with the flags, in the cert dir.
    fn start(&self, binary: &Path) -> Process {
        Process(
            Command::new(binary)
                .args(&self.args)
                .current_dir(self.dir())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }

    /// envtest polls /healthz until it answers 200.
    fn wait_healthy(&self, kubectl_binary: &Path) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (ok, out, err) = kubectl_with(
                kubectl_binary,
                &self.kubeconfig,
                &["get", "--raw", "/healthz"],
            );
            if ok && out == "ok" {
                break;
            }
            assert!(Instant::now() < deadline, "never healthy: {out}{err}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
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
    let setup = EnvtestApiServerSetup::new(etcd.servers_flag());
    let dir = setup.dir();
    let port = setup.port;
    let kubeconfig = setup.kubeconfig.clone();
    let _server = setup.start(&ferrokube_bin());
    setup.wait_healthy(&kubectl_path("1.33"));

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

/// A process envtest started: killed and reaped on drop if still running.
struct Process(Child);

impl Process {
    /// envtest's `State.Stop`: SIGTERM, then wait for the exit.
    fn terminate(&mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET http://127.0.0.1:port/path` over HTTP/1.1: the status line and body.
fn http_get(port: u16, path: &str) -> Option<(String, String)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}

/// `<binary> --help` as envtest's `CheckFlag` runs it: it must succeed.
fn help_of(binary: &Path) -> String {
    let out = Command::new(binary).arg("--help").output().unwrap();
    assert!(out.status.success(), "{} --help: {out:?}", binary.display());
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// envtest's `CheckFlag` pattern: `(?m)^\s*--flag\b`.
fn lists_flag(help: &str, flag: &str) -> bool {
    help.lines().any(|line| {
        line.trim_start()
            .strip_prefix("--")
            .and_then(|rest| rest.strip_prefix(flag))
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    })
}

#[test]
fn envtest_assets_start_as_envtest_starts_them() {
    let assets = tempfile::tempdir().unwrap();
    let assets_dir = assets.path().join("bin");
    let kubectl_target = kubectl_path("1.33");
    let made = Command::new(ferrokube_bin())
        .arg("envtest-assets")
        .arg(&assets_dir)
        .arg("--kubectl")
        .arg(&kubectl_target)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    assert_eq!(
        String::from_utf8_lossy(&made.stdout),
        format!("export KUBEBUILDER_ASSETS={}\n", assets_dir.display())
    );
    // BinPathFinder's names in $KUBEBUILDER_ASSETS.
    let etcd_binary = assets_dir.join("etcd");
    let apiserver_binary = assets_dir.join("kube-apiserver");
    let kubectl_binary = assets_dir.join("kubectl");
    assert_eq!(std::fs::read_link(&kubectl_binary).unwrap(), kubectl_target);

    // Etcd.setProcessState: --help for --unsafe-no-fsync, then the
    // default flags (sorted, as process.Arguments renders them), then
    // poll <client URL>/health until 200.
    let etcd_help = help_of(&etcd_binary);
    let etcd_data = tempfile::Builder::new()
        .prefix("k8s_test_framework_")
        .tempdir()
        .unwrap();
    let (client_port, peer_port) = (free_port(), free_port());
    let client_url = format!("http://127.0.0.1:{client_port}");
    let mut etcd_args = vec![
        format!("--advertise-client-urls={client_url}"),
        format!("--data-dir={}", etcd_data.path().display()),
        format!("--listen-client-urls={client_url}"),
        format!("--listen-peer-urls=http://127.0.0.1:{peer_port}"),
    ];
    if lists_flag(&etcd_help, "unsafe-no-fsync") {
        etcd_args.push("--unsafe-no-fsync=true".into());
    }
    let mut etcd = Process(
        Command::new(&etcd_binary)
            .args(&etcd_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let (status, body) = loop {
        if let Some(answer) = http_get(client_port, "/health") {
            break answer;
        }
        assert!(Instant::now() < deadline, "etcd never answered /health");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(body, r#"{"health":"true","reason":""}"#);

    // APIServer.discoverFlags: no --insecure-port in the help.
    let apiserver_help = help_of(&apiserver_binary);
    assert!(
        lists_flag(&apiserver_help, "secure-port"),
        "{apiserver_help}"
    );
    assert!(!lists_flag(&apiserver_help, "insecure-port"));
    let setup = EnvtestApiServerSetup::new(format!("--etcd-servers={client_url}"));
    let mut apiserver = setup.start(&apiserver_binary);
    setup.wait_healthy(&kubectl_binary);

    // kubectl from the assets directory, as ControlPlane.KubeCtl runs it.
    let kubectl_ok = |args: &[&str]| {
        let (ok, out, err) = kubectl_with(&kubectl_binary, &setup.kubeconfig, args);
        assert!(ok, "kubectl {args:?}:\n{out}{err}");
        out
    };
    kubectl_ok(&["create", "namespace", "assets-ns"]);
    kubectl_ok(&[
        "create",
        "configmap",
        "from-kubectl",
        "-n",
        "assets-ns",
        "--from-literal=by=kubectl",
    ]);
    // kube-rs, as a controller under test, with envtest's admin user.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        use k8s_openapi::api::core::v1::ConfigMap;
        use kube::api::{Api, PostParams};
        let client = common::client_from(&setup.kubeconfig).await;
        let config_maps: Api<ConfigMap> = Api::namespaced(client, "assets-ns");
        let read = config_maps.get("from-kubectl").await.unwrap();
        assert_eq!(read.data.unwrap()["by"], "kubectl");
        let mut made = ConfigMap::default();
        made.metadata.name = Some("from-kube-rs".into());
        made.data = Some([("by".to_string(), "kube-rs".to_string())].into());
        config_maps
            .create(&PostParams::default(), &made)
            .await
            .unwrap();
    });
    let by = kubectl_ok(&[
        "get",
        "configmap",
        "from-kube-rs",
        "-n",
        "assets-ns",
        "-o",
        "jsonpath={.data.by}",
    ]);
    assert_eq!(by, "kube-rs");
    // ferrokube ran on its memory store: no SQLite file, nothing asked of
    // the stand-in etcd but /health.
    assert!(setup.dir().join("ferrokube-data").is_dir());
    assert!(!setup.dir().join("ferrokube-data").join("store.db").exists());

    // ControlPlane.Stop: the API server, then etcd, each by SIGTERM.
    assert!(apiserver.terminate().success());
    assert!(etcd.terminate().success());
}
