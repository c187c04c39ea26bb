//! `--audit-webhook-config-file`: a test webhook (HTTPS with its own CA,
//! requiring a client certificate, both named by a kubeconfig) receives the `audit.k8s.io/v1` `EventList`s of
//! kubectl 1.33 requests, batched, next to the log backend (kube's union
//! of backends); `blocking-strict` fails a request with kube's 500 when
//! its `RequestReceived` event cannot be stored (a webhook answering 500,
//! a log on `/dev/full`).
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use ferrokube_testkit::{kubectl_path, raw_request, TestServer};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::Value;

/// Configmaps are audited with their objects, nothing else.
const POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
- level: None
"#;

struct AuditWebhook {
    port: u16,
    ca_pem: String,
    /// The client certificate and key the webhook requires (its CA's).
    client_cert_pem: String,
    client_key_pem: String,
    /// Every body POSTed, as JSON, with its path and query.
    received: Arc<Mutex<Vec<(String, Value)>>>,
    calls: Arc<AtomicUsize>,
    /// Answer 500 instead of 200.
    failing: Arc<AtomicBool>,
}

impl AuditWebhook {
    fn items(&self) -> Vec<Value> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .flat_map(|(_, list)| list["items"].as_array().cloned().unwrap_or_default())
            .collect()
    }

    /// A kubeconfig naming the webhook and its CA, as kube's docs write one.
    fn kubeconfig(&self, directory: &Path) -> std::path::PathBuf {
        let path = directory.join("audit-webhook.kubeconfig");
        let encode = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem);
        let (ca, cert, key) = (
            encode(&self.ca_pem),
            encode(&self.client_cert_pem),
            encode(&self.client_key_pem),
        );
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: audit\n  cluster:\n    server: https://127.0.0.1:{}/audit\n    certificate-authority-data: {ca}\ncontexts:\n- name: webhook\n  context:\n    cluster: audit\n    user: apiserver\nusers:\n- name: apiserver\n  user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\ncurrent-context: webhook\n",
                self.port
            ),
        )
        .unwrap();
        path
    }
}

/// An HTTPS server (HTTP/2 or HTTP/1.1) with a certificate for 127.0.0.1
/// issued by its own CA, requiring a client certificate of that CA,
/// recording what it is sent.
async fn start_audit_webhook() -> AuditWebhook {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::from_params(&ca, &ca_key);
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    let cert = params.signed_by(&key, &issuer).unwrap();
    let client_key = KeyPair::generate().unwrap();
    let client_cert = CertificateParams::new(vec!["kube-apiserver".to_string()])
        .unwrap()
        .signed_by(&client_key, &issuer)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(ca_cert.der().to_vec()))
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
    let received = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(AtomicUsize::new(0));
    let failing = Arc::new(AtomicBool::new(false));
    let (served, counted, failure) = (received.clone(), calls.clone(), failing.clone());
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let (served, counted, failure) = (served.clone(), counted.clone(), failure.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service =
                    hyper::service::service_fn(move |request: http::Request<Incoming>| {
                        let (served, counted, failure) =
                            (served.clone(), counted.clone(), failure.clone());
                        async move {
                            let target = request
                                .uri()
                                .path_and_query()
                                .map(|target| target.as_str().to_string())
                                .unwrap_or_default();
                            let body = request.into_body().collect().await?.to_bytes();
                            counted.fetch_add(1, Ordering::SeqCst);
                            let status = if failure.load(Ordering::SeqCst) {
                                500
                            } else {
                                let list: Value = serde_json::from_slice(&body).unwrap();
                                served.lock().unwrap().push((target, list));
                                200
                            };
                            let mut response = http::Response::new(Full::new(bytes::Bytes::new()));
                            *response.status_mut() = http::StatusCode::from_u16(status).unwrap();
                            Ok::<_, hyper::Error>(response)
                        }
                    });
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            });
        }
    });
    AuditWebhook {
        port,
        ca_pem: ca_cert.pem(),
        client_cert_pem: client_cert.pem(),
        client_key_pem: client_key.serialize_pem(),
        received,
        calls,
        failing,
    }
}

fn kubectl(server: &TestServer, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(kubectl_path("1.33"))
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

fn text<'a>(event: &'a Value, pointer: &str) -> &'a str {
    event.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Waits (bounded) until `found` holds.
async fn eventually(mut found: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if found() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_requests_reach_the_audit_webhook_as_event_lists() {
    let hook = start_audit_webhook().await;
    let directory = tempfile::tempdir().unwrap();
    let policy = directory.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let kubeconfig = hook.kubeconfig(directory.path());
    let log = directory.path().join("audit.log");
    let server = TestServer::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-webhook-config-file",
        kubeconfig.to_str().unwrap(),
        "--audit-webhook-batch-max-wait",
        "200ms",
        "--audit-log-path",
        log.to_str().unwrap(),
    ]);
    let create = kubectl(
        &server,
        &[
            "create",
            "configmap",
            "hooked",
            "-n",
            "default",
            "--from-literal=a=b",
        ],
    );
    assert!(create.0, "{create:?}");
    let get = kubectl(
        &server,
        &["get", "configmap", "hooked", "-n", "default", "-o", "json"],
    );
    assert!(get.0, "{get:?}");

    let verbs_done = |items: &[Value]| {
        ["create", "get"].iter().all(|verb| {
            items
                .iter()
                .any(|e| text(e, "/verb") == *verb && text(e, "/stage") == "ResponseComplete")
        })
    };
    assert!(
        eventually(|| verbs_done(&hook.items())).await,
        "{:#?}",
        hook.items()
    );
    let received = hook.received.lock().unwrap().clone();
    for (target, list) in &received {
        assert_eq!(target, "/audit?timeout=30s");
        assert_eq!(list["kind"], "EventList");
        assert_eq!(list["apiVersion"], "audit.k8s.io/v1");
        assert!(list["items"]
            .as_array()
            .is_some_and(|items| !items.is_empty()));
    }
    let items = hook.items();
    let create_events: Vec<&Value> = items
        .iter()
        .filter(|e| text(e, "/verb") == "create")
        .collect();
    let stages: Vec<&str> = create_events.iter().map(|e| text(e, "/stage")).collect();
    assert_eq!(
        stages,
        ["RequestReceived", "ResponseComplete"],
        "{items:#?}"
    );
    let audit_id = text(create_events[0], "/auditID");
    assert!(!audit_id.is_empty());
    assert_eq!(text(create_events[1], "/auditID"), audit_id);
    assert_eq!(text(create_events[1], "/level"), "RequestResponse");
    // A create's name is known once its body is read (`LogRequestObject`).
    assert_eq!(text(create_events[0], "/objectRef/name"), "");
    assert_eq!(text(create_events[1], "/objectRef/name"), "hooked");
    assert_eq!(create_events[1]["responseStatus"]["code"], 201);
    assert_eq!(create_events[1]["responseObject"]["data"]["a"], "b");
    assert!(
        create_events[1].get("kind").is_none(),
        "list items carry no kind"
    );
    // Only configmaps are audited.
    assert!(items
        .iter()
        .all(|e| text(e, "/objectRef/resource") == "configmaps"));

    // The log backend got the same events (kube's union of backends).
    server_flush_wait(&log, audit_id).await;
}

/// The log holds both stages of `audit_id`.
async fn server_flush_wait(log: &Path, audit_id: &str) {
    let stages_in_log = || {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| text(event, "/auditID") == audit_id)
            .map(|event| text(&event, "/stage").to_string())
            .collect::<Vec<_>>()
    };
    assert!(
        eventually(|| stages_in_log().len() == 2).await,
        "{:?}",
        stages_in_log()
    );
    assert_eq!(stages_in_log(), ["RequestReceived", "ResponseComplete"]);
}

/// kube's `WithAudit`: `responsewriters.InternalError` when a
/// blocking-strict backend could not store `RequestReceived`.
fn assert_store_failed(response: &ferrokube_testkit::RawResponse, path: &str) {
    assert_eq!(response.status, 500, "{response:?}");
    assert_eq!(
        response.body,
        format!("Internal Server Error: \"{path}\": failed to store audit event\n")
    );
    assert_eq!(response.header("content-type"), "text/plain; charset=utf-8");
    assert!(!response.header("audit-id").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_strict_fails_requests_whose_event_is_not_stored() {
    let hook = start_audit_webhook().await;
    hook.failing.store(true, Ordering::SeqCst);
    let directory = tempfile::tempdir().unwrap();
    let policy = directory.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let kubeconfig = hook.kubeconfig(directory.path());
    let server = TestServer::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-webhook-config-file",
        kubeconfig.to_str().unwrap(),
        "--audit-webhook-mode",
        "blocking-strict",
        "--audit-webhook-initial-backoff",
        "10ms",
    ]);
    let client = server.client().await;
    let path = "/api/v1/namespaces/default/configmaps";
    let refused = raw_request(&client, "GET", path, None, Vec::new()).await;
    assert_store_failed(&refused, path);
    // Five tries (`DefaultRetryBackoffWithInitialDelay`) for the one event.
    assert_eq!(hook.calls.load(Ordering::SeqCst), 5);
    // Requests the policy does not audit are served.
    let namespaces = raw_request(&client, "GET", "/api/v1/namespaces", None, Vec::new()).await;
    assert_eq!(namespaces.status, 200);
    // Once the webhook takes events, the request is served and audited.
    hook.failing.store(false, Ordering::SeqCst);
    let served = raw_request(&client, "GET", path, None, Vec::new()).await;
    assert_eq!(served.status, 200, "{served:?}");
    let audit_id = served.header("audit-id").to_string();
    assert!(
        eventually(|| hook
            .items()
            .iter()
            .any(|e| text(e, "/auditID") == audit_id && text(e, "/stage") == "ResponseComplete"))
        .await
    );

    // The log backend: a write that fails (ENOSPC) fails the request.
    let full = TestServer::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-log-path",
        "/dev/full",
        "--audit-log-mode",
        "blocking-strict",
    ]);
    let client = full.client().await;
    let refused = raw_request(&client, "GET", path, None, Vec::new()).await;
    assert_store_failed(&refused, path);
}
