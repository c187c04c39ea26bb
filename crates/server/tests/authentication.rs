//! Authentication as kube-apiserver 1.34 does it, through real clients:
//! `--client-ca-file` (kubectl with a certificate of a second CA, `kubectl
//! auth whoami`), a certificate without a common name (anonymous), a
//! certificate no trusted CA signed (401), front-proxy authentication
//! (`--requestheader-*`: kube-rs sending the proxy certificate and the
//! X-Remote-* headers), and the `kube-system/extension-apiserver-authentication`
//! ConfigMap that publishes it all. Certificates are made here with rcgen.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use ferrokube_testkit as common;

use common::{config_from, kubectl_path, TestServer};
use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use serde_json::{json, Value};

/// A CA made for a test, and the certificates it signs.
struct TestCa {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    pem: String,
}

impl TestCa {
    fn new(name: &str) -> TestCa {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let pem = params.self_signed(&key).unwrap().pem();
        TestCa {
            issuer: rcgen::Issuer::new(params, key),
            pem,
        }
    }

    /// A client certificate and its key, in PEM, with the subject's common
    /// name `cn` (none when empty) and organizations `groups`.
    fn client_cert(&self, cn: &str, groups: &[&str]) -> (String, String) {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        let mut name = rcgen::DistinguishedName::new();
        // rcgen keeps one value per attribute type: the second organization
        // goes in under the same OID (2.5.4.10) as a custom type.
        for (index, group) in groups.iter().enumerate() {
            let ty = match index {
                0 => rcgen::DnType::OrganizationName,
                1 => rcgen::DnType::CustomDnType(vec![2, 5, 4, 10]),
                _ => panic!("at most two groups"),
            };
            name.push(ty, *group);
        }
        if !cn.is_empty() {
            name.push(rcgen::DnType::CommonName, cn);
        }
        params.distinguished_name = name;
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// A server started with a two-CA `--client-ca-file` and (when asked)
/// front-proxy authentication, and the CAs behind them.
struct Cluster {
    server: TestServer,
    dir: tempfile::TempDir,
    /// The second CA of the `--client-ca-file` bundle.
    client_ca: TestCa,
    proxy_ca: TestCa,
}

const PROXY_NAME: &str = "front-proxy-client";

impl Cluster {
    fn start(front_proxy: bool) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let (first, client_ca, proxy_ca) = (
            TestCa::new("first-ca"),
            TestCa::new("client-ca"),
            TestCa::new("front-proxy-ca"),
        );
        let bundle = dir.path().join("client-ca.crt");
        std::fs::write(&bundle, format!("{}{}", first.pem, client_ca.pem)).unwrap();
        let proxy_bundle = dir.path().join("front-proxy-ca.crt");
        std::fs::write(&proxy_bundle, &proxy_ca.pem).unwrap();
        let mut flags = vec!["--client-ca-file", bundle.to_str().unwrap()];
        let front_proxy_flags = [
            "--requestheader-client-ca-file",
            proxy_bundle.to_str().unwrap(),
            "--requestheader-allowed-names",
            PROXY_NAME,
            "--requestheader-username-headers",
            "X-Remote-User",
            "--requestheader-uid-headers",
            "X-Remote-Uid",
            "--requestheader-group-headers",
            "X-Remote-Group",
            "--requestheader-extra-headers-prefix",
            "X-Remote-Extra-",
        ];
        if front_proxy {
            flags.extend(front_proxy_flags);
        }
        let server = TestServer::start_with(&flags);
        Cluster {
            server,
            dir,
            client_ca,
            proxy_ca,
        }
    }

    /// A kubeconfig that authenticates with the certificate `(cert, key)`.
    fn kubeconfig(&self, name: &str, (cert, key): &(String, String)) -> PathBuf {
        let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        let ca = std::fs::read_to_string(self.server.data_dir.join("pki").join("ca.crt")).unwrap();
        let path = self.dir.path().join(format!("{name}.kubeconfig"));
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {}\nusers:\n- name: u\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n",
                self.server.url,
                b64(&ca),
                b64(cert),
                b64(key),
            ),
        )
        .unwrap();
        path
    }

    async fn client(&self, name: &str, pair: &(String, String)) -> Client {
        let config = config_from(&self.kubeconfig(name, pair)).await;
        Client::try_from(config).unwrap()
    }

    fn kubectl(&self, kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(kubectl_path("1.33"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.path().join("kubectl-cache"))
            .args(args)
            .env_remove("KUBECONFIG")
            .output()
            .unwrap();
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    }
}

struct Response {
    status: u16,
    body: Value,
}

/// A request with extra headers; the body and answer are JSON.
async fn send(
    client: &Client,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> Response {
    let mut request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("Accept", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = match body {
        Some(body) => {
            request = request.header("Content-Type", "application/json");
            serde_json::to_vec(&body).unwrap()
        }
        None => Vec::new(),
    };
    let response = client
        .send(request.body(kube::client::Body::from(body)).unwrap())
        .await
        .unwrap_or_else(|error| panic!("{method} {path}: {error:?}"));
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    Response { status, body }
}

const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

async fn whoami(client: &Client, headers: &[(&str, &str)]) -> Response {
    send(
        client,
        "POST",
        WHOAMI,
        headers,
        Some(json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})),
    )
    .await
}

fn unauthorized() -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    })
}

#[tokio::test]
async fn client_ca_file_certificates_authenticate_and_cn_less_ones_are_anonymous() {
    let cluster = Cluster::start(false);

    // kubectl with a certificate of the second CA of --client-ca-file.
    let alice = cluster.client_ca.client_cert("alice", &["dev", "ops"]);
    let kubeconfig = cluster.kubeconfig("alice", &alice);
    let (ok, out, err) = cluster.kubectl(&kubeconfig, &["auth", "whoami", "-o", "json"]);
    assert!(ok, "{out}{err}");
    let review: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        review["status"]["userInfo"],
        json!({"username": "alice", "groups": ["dev", "ops", "system:authenticated"]})
    );
    // As alice, authorized as alice.
    let (ok, out, err) = cluster.kubectl(&kubeconfig, &["get", "configmaps", "-n", "default"]);
    assert!(!ok, "{out}");
    assert!(
        err.contains(
            "User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
        ),
        "{err}"
    );
    // The first-run admin kubeconfig (ferrokube's own CA) still works.
    let (ok, out, err) = cluster.kubectl(&cluster.server.kubeconfig, &["auth", "whoami"]);
    assert!(ok && out.contains("ferrokube-admin"), "{out}{err}");

    // A certificate without a common name falls through to anonymous.
    let nameless = cluster.client_ca.client_cert("", &["dev"]);
    let client = cluster.client("nameless", &nameless).await;
    let res = send(
        &client,
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[],
        None,
    )
    .await;
    assert_eq!(res.status, 403, "{:?}", res.body);
    assert_eq!(
        res.body["message"],
        "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    let res = send(&client, "GET", "/healthz", &[], None).await;
    assert_eq!((res.status, res.body), (200, json!("ok")));

    // A certificate no trusted CA signed: the handshake passes (kube's
    // RequestClientCert) and the request is 401, even for /healthz.
    let stranger = TestCa::new("stranger-ca").client_cert("mallory", &["system:masters"]);
    let client = cluster.client("stranger", &stranger).await;
    let res = send(&client, "GET", "/healthz", &[], None).await;
    assert_eq!((res.status, res.body), (401, unauthorized()));
}

#[tokio::test]
async fn a_front_proxy_names_the_user_in_headers() {
    let cluster = Cluster::start(true);
    let proxy = cluster.proxy_ca.client_cert(PROXY_NAME, &[]);
    let client = cluster.client("proxy", &proxy).await;
    let jane = [
        ("X-Remote-User", "jane"),
        ("X-Remote-Uid", "uid-jane"),
        ("X-Remote-Group", "team-a"),
        ("X-Remote-Group", "team-b"),
        ("X-Remote-Extra-Scopes", "read"),
        ("X-Remote-Extra-Scopes", "write"),
        ("X-Remote-Extra-Example.com%2Fteam", "blue"),
    ];
    let res = whoami(&client, &jane).await;
    assert_eq!(res.status, 201, "{:?}", res.body);
    assert_eq!(
        res.body["status"]["userInfo"],
        json!({
            "username": "jane",
            "uid": "uid-jane",
            "groups": ["team-a", "team-b", "system:authenticated"],
            "extra": {"scopes": ["read", "write"], "example.com/team": ["blue"]},
        })
    );
    // Authorized as jane, like any user.
    let res = send(
        &client,
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &jane,
        None,
    )
    .await;
    assert_eq!(res.status, 403, "{:?}", res.body);
    assert_eq!(
        res.body["message"],
        "configmaps is forbidden: User \"jane\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    let masters = [
        ("X-Remote-User", "root"),
        ("X-Remote-Group", "system:masters"),
    ];
    let res = send(
        &client,
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &masters,
        None,
    )
    .await;
    assert_eq!(res.status, 200, "{:?}", res.body);

    // A certificate of the front-proxy CA with a common name not in
    // --requestheader-allowed-names is refused.
    let wrong = cluster.proxy_ca.client_cert("not-the-proxy", &[]);
    let client = cluster.client("wrong-proxy", &wrong).await;
    let res = whoami(&client, &jane).await;
    assert_eq!((res.status, res.body), (401, unauthorized()));

    // A certificate of the client CA sending the headers is its own user.
    let bob = cluster.client_ca.client_cert("bob", &["dev"]);
    let client = cluster.client("bob", &bob).await;
    let res = whoami(&client, &jane).await;
    assert_eq!(res.status, 201, "{:?}", res.body);
    assert_eq!(
        res.body["status"]["userInfo"],
        json!({"username": "bob", "groups": ["dev", "system:authenticated"]})
    );

    // With front-proxy authentication on, a client-CA certificate without a
    // common name is 401, not anonymous: the request-header authenticator's
    // failure to verify it is the union's answer when nobody authenticates
    // (kube's `union.go` and `x509.Verifier`).
    let nameless = cluster.client_ca.client_cert("", &["dev"]);
    let client = cluster.client("nameless", &nameless).await;
    let res = send(&client, "GET", "/healthz", &[], None).await;
    assert_eq!((res.status, res.body), (401, unauthorized()));
}

#[tokio::test]
async fn the_extension_apiserver_authentication_configmap_publishes_the_settings() {
    let cluster = Cluster::start(true);
    let admin = cluster.server.client().await;
    let configmaps: kube::Api<ConfigMap> = kube::Api::namespaced(admin, "kube-system");
    // Written by a post-start hook, which readiness waited for.
    let configmap = configmaps
        .get("extension-apiserver-authentication")
        .await
        .unwrap();
    let data = configmap.data.unwrap();
    let own_ca =
        std::fs::read_to_string(cluster.server.data_dir.join("pki").join("ca.crt")).unwrap();
    let bundle = &data["client-ca-file"];
    assert!(bundle.contains(cluster.client_ca.pem.trim()), "{bundle}");
    assert!(bundle.contains(own_ca.trim()), "{bundle}");
    assert_eq!(bundle.matches("BEGIN CERTIFICATE").count(), 3, "{bundle}");
    assert_eq!(
        data["requestheader-client-ca-file"].trim(),
        cluster.proxy_ca.pem.trim()
    );
    assert_eq!(
        data["requestheader-allowed-names"],
        "[\"front-proxy-client\"]"
    );
    assert_eq!(
        data["requestheader-username-headers"],
        "[\"X-Remote-User\"]"
    );
    assert_eq!(data["requestheader-uid-headers"], "[\"X-Remote-Uid\"]");
    assert_eq!(data["requestheader-group-headers"], "[\"X-Remote-Group\"]");
    assert_eq!(
        data["requestheader-extra-headers-prefix"],
        "[\"X-Remote-Extra-\"]"
    );
    assert_eq!(data.len(), 7, "{:?}", data.keys().collect::<Vec<_>>());

    // Deleted, it is written again (kube's controller watches it).
    configmaps
        .delete("extension-apiserver-authentication", &Default::default())
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let restored = loop {
        match configmaps
            .get_opt("extension-apiserver-authentication")
            .await
            .unwrap()
        {
            Some(configmap) => break configmap,
            None => {
                assert!(std::time::Instant::now() < deadline, "never written again");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    };
    assert_eq!(restored.data.unwrap(), data);

    // Extension API servers read it through the bootstrap policy's Role.
    let (ok, out, err) = cluster.kubectl(
        &cluster.server.kubeconfig,
        &[
            "auth",
            "can-i",
            "get",
            "configmaps/extension-apiserver-authentication",
            "-n",
            "kube-system",
            "--as",
            "system:kube-controller-manager",
        ],
    );
    assert!(ok && out.trim() == "yes", "{out}{err}");
}
