//! What the webhook plugins present to a webhook (`--admission-control-
//! config-file` with a `WebhookAdmissionConfiguration` whose
//! `kubeConfigFile` names users after webhooks' `host:port`), through
//! kubectl 1.33: the test runs an HTTPS webhook that demands a client
//! certificate of its own CA and answers with a warning naming what it was
//! shown (user agent, `Authorization`, `Impersonate-User`, whether the
//! certificate was the configured one); kubectl prints that warning. The
//! mutating plugin, given no configuration, calls anonymously and the
//! webhook's TLS refuses it, which `failurePolicy: Fail` turns into kube's
//! error.
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use ferrokube_testkit as common;

use base64::Engine as _;
use common::TestServer;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{json, Value};

/// A CA made here: its certificate and what signs with it.
struct Authority {
    cert: rcgen::Certificate,
    issuer: Issuer<'static, KeyPair>,
}

fn authority() -> Authority {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    Authority {
        cert,
        issuer: Issuer::new(params, key),
    }
}

/// The webhook: HTTPS on 127.0.0.1 with a certificate of `serving`, only
/// for clients with a certificate of `clients`; each review is allowed
/// with a warning naming what the call showed. Answers its port.
async fn start_webhook(serving: &Authority, clients: &Authority, expected: Vec<u8>) -> u16 {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    let cert = params.signed_by(&key, &serving.issuer).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(clients.cert.der().to_vec()))
        .unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let expected = Arc::new(expected);
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, expected) = (acceptor.clone(), expected.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let presented = tls
                    .get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|chain| chain.first())
                    .is_some_and(|cert| cert.as_ref() == expected.as_slice());
                let service = hyper::service::service_fn(
                    move |request: http::Request<Incoming>| async move {
                        let header = |name: &str| {
                            request
                                .headers()
                                .get(name)
                                .and_then(|value| value.to_str().ok())
                                .unwrap_or("-")
                                .to_string()
                        };
                        let seen = format!(
                            "seen: {} | {} | {} | client certificate {}",
                            header("user-agent"),
                            header("authorization"),
                            header("impersonate-user"),
                            if presented { "ok" } else { "unknown" }
                        );
                        let body = request.into_body().collect().await?.to_bytes();
                        let review: Value = serde_json::from_slice(&body).unwrap();
                        let answer = json!({
                            "apiVersion": "admission.k8s.io/v1",
                            "kind": "AdmissionReview",
                            "response": {
                                "uid": review["request"]["uid"],
                                "allowed": true,
                                "warnings": [seen],
                            },
                        });
                        Ok::<_, hyper::Error>(http::Response::new(Full::new(bytes::Bytes::from(
                            serde_json::to_vec(&answer).unwrap(),
                        ))))
                    },
                );
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            });
        }
    });
    port
}

fn kubectl(server: &TestServer, args: &[&str]) -> (bool, String, String) {
    let (status, out, err) = server.kubectl_stdin("1.33", args, None);
    (status.success(), out, err)
}

/// A webhook configuration of `kind` calling `url` for ConfigMap creates.
fn configuration(kind: &str, name: &str, url: &str, ca_bundle: &str) -> String {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [{
            "name": format!("{name}.example.com"),
            "clientConfig": {"url": url, "caBundle": ca_bundle},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "failurePolicy": "Fail",
        }],
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_are_called_as_the_kubeconfig_user_named_after_them() {
    if common::skip_if_external("webhooks_are_called_as_the_kubeconfig_user_named_after_them") {
        return;
    }
    let (serving, clients) = (authority(), authority());
    let client_key = KeyPair::generate().unwrap();
    let client_cert = CertificateParams::new(vec!["apiserver".to_string()])
        .unwrap()
        .signed_by(&client_key, &clients.issuer)
        .unwrap();
    let port = start_webhook(&serving, &clients, client_cert.der().to_vec()).await;
    let directory = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = directory.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    write("client.crt", &client_cert.pem());
    write("client.key", &client_key.serialize_pem());
    // Relative files are read from the kubeconfig's folder; another user
    // for another address must not be chosen.
    let kubeconfig = write(
        "webhooks.kubeconfig",
        &format!(
            r#"apiVersion: v1
kind: Config
users:
- name: "127.0.0.1:{port}"
  user:
    client-certificate: client.crt
    client-key: client.key
    token: s3cret
    as: webhook-caller
- name: "10.0.0.1:443"
  user:
    token: wrong
"#
        ),
    );
    let admission = write(
        "admission.yaml",
        &format!(
            r#"apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: {}
"#,
            kubeconfig.display()
        ),
    );
    let server = TestServer::start_with(&[
        "--admission-control-config-file",
        admission.to_str().unwrap(),
    ]);
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(serving.cert.pem());
    let url = format!("https://127.0.0.1:{port}/validate");
    let validating = write(
        "validating.json",
        &configuration("ValidatingWebhookConfiguration", "shown", &url, &ca_bundle),
    );
    let (created, out, err) = kubectl(&server, &["create", "-f", validating.to_str().unwrap()]);
    assert!(created, "{out}{err}");
    let (created, out, err) = kubectl(&server, &["create", "configmap", "first"]);
    assert!(created, "{out}{err}");
    assert_eq!(
        err,
        "Warning: seen: kube-apiserver-admission | Bearer s3cret | webhook-caller | client certificate ok\n"
    );
    // The mutating plugin has no configuration: it calls without a client
    // certificate, the webhook's TLS refuses it, and the create fails.
    let mutating = write(
        "mutating.json",
        &configuration(
            "MutatingWebhookConfiguration",
            "anonymous",
            &url,
            &ca_bundle,
        ),
    );
    let (created, out, err) = kubectl(&server, &["create", "-f", mutating.to_str().unwrap()]);
    assert!(created, "{out}{err}");
    let (created, _, err) = kubectl(&server, &["create", "configmap", "second"]);
    assert!(!created);
    assert!(
        err.starts_with(&format!(
            "error: failed to create configmap: Internal error occurred: failed calling webhook \"anonymous.example.com\": failed to call webhook: Post \"{url}?timeout=10s\": "
        )),
        "{err}"
    );
}

/// A webhook plugin configuration kube would refuse stops the start.
#[test]
fn a_relative_kubeconfig_path_stops_the_start() {
    let directory = tempfile::tempdir().unwrap();
    let config = directory.path().join("admission.yaml");
    std::fs::write(
        &config,
        r#"apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: webhooks.kubeconfig
"#,
    )
    .unwrap();
    let stderr = TestServer::refused_start(&[
        "--admission-control-config-file".as_ref(),
        config.as_os_str(),
    ]);
    assert!(
        stderr.contains(r#"ferrokube: --admission-control-config-file: admission plugin "MutatingAdmissionWebhook": kubeConfigFile: Invalid value: "webhooks.kubeconfig": must be an absolute file path"#),
        "{stderr}"
    );
}
