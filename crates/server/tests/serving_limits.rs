//! Connection-level limits as kube-apiserver sets them
//! (`server/secure_serving.go` `SecureServingInfo.Serve`): the HTTP/2
//! settings a client is told, read from the server's first SETTINGS frame
//! over TLS with ALPN `h2` (every kubectl test talks HTTP/2 to the same
//! listener); the header-read and idle timeouts (shortened by the hidden
//! `--header-read-timeout` and `--idle-connection-timeout` flags) with raw
//! clients, kube-rs (HTTP/1.1) and kubectl (HTTP/2); and
//! `--max-requests-inflight` (`server/filters/maxinflight.go`).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use ferrokube_testkit::TestServer;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;
const FRAME_GOAWAY: u8 = 0x7;
const FRAME_WINDOW_UPDATE: u8 = 0x8;

/// How long a test waits for something that must happen "eventually": far
/// beyond the shortened timers, only there so a failure does not hang.
const EVENTUALLY: Duration = Duration::from_secs(60);

type Tls = tokio_rustls::client::TlsStream<tokio::net::TcpStream>;

/// A TLS connection to the server with `alpn`, as the admin (client
/// certificate) or with no credentials.
async fn connect(server: &TestServer, alpn: &[u8], admin: bool) -> Tls {
    let pki =
        ferrokube::pki::ensure(&server.data_dir.join("pki"), &["127.0.0.1".to_string()]).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca_cert_der().unwrap()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let mut config = if admin {
        builder
            .with_client_auth_cert(
                pki.admin_cert_chain().unwrap(),
                pki.admin_key_der().unwrap(),
            )
            .unwrap()
    } else {
        builder.with_no_client_auth()
    };
    config.alpn_protocols = vec![alpn.to_vec()];
    let address = server.url.trim_start_matches("https://");
    let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(alpn));
    tls
}

/// Reads until the server closes the connection (end of stream or a reset):
/// what it sent until then, or `None` if it is still open after
/// [`EVENTUALLY`].
async fn until_closed(tls: &mut Tls) -> Option<Vec<u8>> {
    let mut received = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    tokio::time::timeout(EVENTUALLY, async {
        loop {
            match tls.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(read) => received.extend_from_slice(&buffer[..read]),
            }
        }
    })
    .await
    .ok()?;
    Some(received)
}

/// One HTTP/1.1 request on a new connection that the server closes after
/// answering (`Connection: close`): the whole answer as text.
async fn http1_once(server: &TestServer, admin: bool, request: &str) -> String {
    let mut tls = connect(server, b"http/1.1", admin).await;
    tls.write_all(request.as_bytes()).await.unwrap();
    tls.flush().await.unwrap();
    let answer = until_closed(&mut tls)
        .await
        .expect("the server closes the connection after its answer");
    String::from_utf8_lossy(&answer).into_owned()
}

fn config_map(name: &str, data: &str) -> ConfigMap {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "data": {"value": data},
    }))
    .unwrap()
}

/// An HTTP/2 connection after the preface: the server's first SETTINGS
/// frame's parameters.
async fn h2_connection(server: &TestServer) -> (Tls, Vec<(u16, u32)>) {
    let mut tls = connect(server, b"h2", false).await;
    // The client preface and an empty SETTINGS frame.
    tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await
        .unwrap();
    tls.flush().await.unwrap();
    let (kind, payload) = read_frame(&mut tls).await.unwrap();
    assert_eq!(kind, 0x4, "the server's first frame is SETTINGS");
    let settings = payload
        .chunks_exact(6)
        .map(|setting| {
            (
                u16::from_be_bytes([setting[0], setting[1]]),
                u32::from_be_bytes([setting[2], setting[3], setting[4], setting[5]]),
            )
        })
        .collect();
    (tls, settings)
}

/// One HTTP/2 frame: its type and payload; `None` at the end of the stream.
async fn read_frame(tls: &mut Tls) -> Option<(u8, Vec<u8>)> {
    let mut header = [0u8; 9];
    tls.read_exact(&mut header).await.ok()?;
    let length =
        usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
    let mut payload = vec![0u8; length];
    tls.read_exact(&mut payload).await.ok()?;
    Some((header[3], payload))
}

/// The parameters of the server's first SETTINGS frame.
async fn server_settings(server: &TestServer) -> Vec<(u16, u32)> {
    h2_connection(server).await.1
}

#[tokio::test]
async fn http2_streams_per_connection_are_kubes_100_or_the_flags() {
    let server = TestServer::start();
    let settings = server_settings(&server).await;
    assert!(
        settings.contains(&(SETTINGS_MAX_CONCURRENT_STREAMS, 100)),
        "{settings:?}"
    );
    drop(server);
    let server = TestServer::start_with(&["--http2-max-streams-per-connection=250"]);
    let settings = server_settings(&server).await;
    assert!(
        settings.contains(&(SETTINGS_MAX_CONCURRENT_STREAMS, 250)),
        "{settings:?}"
    );
}

#[tokio::test]
async fn http2_buffers_are_kubes_256_kib() {
    let server = TestServer::start();
    let settings = server_settings(&server).await;
    for setting in [SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_FRAME_SIZE] {
        assert!(
            settings.contains(&(setting, 256 * 1024)),
            "{setting}: {settings:?}"
        );
    }
    drop(server);
    // 256 KiB × 10,000 streams is beyond HTTP/2's largest window: capped.
    let server = TestServer::start_with(&["--http2-max-streams-per-connection=10000"]);
    let (mut h2, settings) = h2_connection(&server).await;
    assert!(
        settings.contains(&(SETTINGS_MAX_CONCURRENT_STREAMS, 10000)),
        "{settings:?}"
    );
    // The connection window's WINDOW_UPDATE (stream 0) follows; the
    // connection lives on.
    let payload = loop {
        let (kind, payload) = read_frame(&mut h2).await.unwrap();
        // Skip the SETTINGS acknowledgement.
        if kind == FRAME_WINDOW_UPDATE {
            break payload;
        }
    };
    let increment = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
    assert_eq!(increment, (1 << 31) - 1 - 65_535);
}

/// Go's `ReadHeaderTimeout`: a client that sends half a request's headers is
/// disconnected without an answer; a connection that sends nothing is idle,
/// not slow, and the header timer does not close it.
#[tokio::test]
async fn a_request_whose_headers_do_not_arrive_is_disconnected() {
    let server = TestServer::start_with(&["--header-read-timeout=1s"]);
    let mut tls = connect(&server, b"http/1.1", false).await;
    tls.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    tls.flush().await.unwrap();
    let answer = until_closed(&mut tls)
        .await
        .expect("the server closes a connection whose headers never end");
    assert!(answer.is_empty(), "{:?}", String::from_utf8_lossy(&answer));

    // Quiet for longer than the header timeout, then a whole request.
    let mut quiet = connect(&server, b"http/1.1", false).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    quiet
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    quiet.flush().await.unwrap();
    let answer = until_closed(&mut quiet).await.expect("answered and closed");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nok"), "{answer}");
}

/// Go's `IdleTimeout`: an HTTP/1.1 connection without requests is closed, an
/// HTTP/2 one gets a GOAWAY first; kube-rs's pool and kubectl carry on.
#[tokio::test]
async fn idle_connections_are_closed_and_clients_carry_on() {
    let server = TestServer::start_with(&["--idle-connection-timeout=1s"]);
    let mut tls = connect(&server, b"http/1.1", false).await;
    tls.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    tls.flush().await.unwrap();
    let answer = until_closed(&mut tls)
        .await
        .expect("the server closes an idle keep-alive connection");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");

    let (mut h2, _) = h2_connection(&server).await;
    let goaway = tokio::time::timeout(EVENTUALLY, async {
        while let Some((kind, _)) = read_frame(&mut h2).await {
            if kind == FRAME_GOAWAY {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(
        goaway.ok(),
        Some(true),
        "an idle HTTP/2 connection gets a GOAWAY"
    );

    // A client keeping its connection in a pool: the next request after the
    // server closed it goes out on a new one.
    let client = server.client().await;
    let namespaces: Api<Namespace> = Api::all(client);
    namespaces.list(&ListParams::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let listed = namespaces.list(&ListParams::default()).await.unwrap();
    assert!(listed
        .items
        .iter()
        .any(|namespace| { namespace.metadata.name.as_deref() == Some("default") }));

    let kubectl = ferrokube_testkit::kubectl_path("1.33");
    let output = std::process::Command::new(kubectl)
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .args(["get", "namespace", "default", "-o", "name"])
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "namespace/default\n"
    );
}

/// A watch is a request in flight: its connection is never idle, whether
/// kubectl's (HTTP/2) or kube-rs's.
#[tokio::test]
async fn watches_outlive_the_idle_timeout() {
    let server =
        TestServer::start_with(&["--idle-connection-timeout=1s", "--header-read-timeout=1s"]);
    let client = server.client().await;
    let configmaps: Api<ConfigMap> = Api::namespaced(client, "default");
    let before = configmaps
        .create(&PostParams::default(), &config_map("before", "1"))
        .await
        .unwrap();

    let mut kubectl = std::process::Command::new(ferrokube_testkit::kubectl_path("1.33"))
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .args(["get", "configmaps", "-n", "default", "-w", "-o", "name"])
        .env_remove("KUBECONFIG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = kubectl.stdout.take().unwrap();
    let (lines, printed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let wait_for = |name: &str| loop {
        let line = printed.recv_timeout(EVENTUALLY).unwrap();
        if line == format!("configmap/{name}") {
            return;
        }
    };
    wait_for("before");

    let mut watch = Box::pin(
        configmaps
            .watch(
                &WatchParams::default().timeout(290),
                before.metadata.resource_version.as_deref().unwrap(),
            )
            .await
            .unwrap(),
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    configmaps
        .create(&PostParams::default(), &config_map("after-idle", "2"))
        .await
        .unwrap();
    let seen = tokio::time::timeout(EVENTUALLY, async {
        use futures::StreamExt;
        while let Some(event) = watch.next().await {
            if let WatchEvent::Added(configmap) = event.unwrap() {
                if configmap.metadata.name.as_deref() == Some("after-idle") {
                    return true;
                }
            }
        }
        false
    })
    .await;
    assert_eq!(
        seen.ok(),
        Some(true),
        "kube-rs's watch saw the new ConfigMap"
    );
    wait_for("after-idle");
    let _ = kubectl.kill();
    let _ = kubectl.wait();
}

/// `WithMaxInFlightLimit`: with `--max-requests-inflight=1`, a list whose
/// answer the client does not read holds the one read-only seat; other
/// read-only requests get kube's 429 (before authorization: a request that
/// would be forbidden too), `system:masters` and mutating requests do not.
/// These limits apply with API Priority and Fairness off (`priority_and_fairness.rs`
/// tests the default).
#[tokio::test]
async fn requests_beyond_max_requests_inflight_get_429_with_retry_after() {
    let server = TestServer::start_with(&[
        "--max-requests-inflight=1",
        "--enable-priority-and-fairness=false",
    ]);
    let client = server.client().await;
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    // 32 MiB of ConfigMaps: more than the socket buffers hold.
    let value = "x".repeat(1024 * 1024);
    for index in 0..32 {
        configmaps
            .create(
                &PostParams::default(),
                &config_map(&format!("big-{index}"), &value),
            )
            .await
            .unwrap();
    }
    let mut slow = connect(&server, b"http/1.1", true).await;
    slow.write_all(
        b"GET /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n",
    )
    .await
    .unwrap();
    slow.flush().await.unwrap();

    let anonymous_list =
        "GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let refused = tokio::time::timeout(EVENTUALLY, async {
        loop {
            let answer = http1_once(&server, false, anonymous_list).await;
            if answer.starts_with("HTTP/1.1 429 ") {
                return answer;
            }
            assert!(answer.starts_with("HTTP/1.1 403 "), "{answer}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("a 429 while the slow list holds the seat");
    assert!(
        refused.starts_with("HTTP/1.1 429 Too Many Requests\r\n"),
        "{refused}"
    );
    let lowercase = refused.to_ascii_lowercase();
    assert!(lowercase.contains("\r\nretry-after: 1\r\n"), "{refused}");
    assert!(
        lowercase.contains("\r\ncontent-type: text/plain; charset=utf-8\r\n"),
        "{refused}"
    );
    assert!(
        refused.ends_with("\r\n\r\nToo many requests, please try again later.\n"),
        "{refused}"
    );

    // system:masters is never refused.
    let namespaces: Api<Namespace> = Api::all(client);
    namespaces.list(&ListParams::default()).await.unwrap();
    // Mutating requests have their own seats: this one reaches authorization.
    let create = "POST /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
    let answer = http1_once(&server, false, create).await;
    assert!(answer.starts_with("HTTP/1.1 403 "), "{answer}");

    // The seat is free again once the slow client has gone.
    drop(slow);
    let freed = tokio::time::timeout(EVENTUALLY, async {
        loop {
            let answer = http1_once(&server, false, anonymous_list).await;
            if answer.starts_with("HTTP/1.1 403 ") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(freed.is_ok(), "the seat was freed");
}

/// API Priority and Fairness (kube's default) with two seats in all
/// (`--max-requests-inflight=1 --max-mutating-requests-inflight=1`):
/// `global-default` gets one. A list by `jane` (impersonated) whose answer
/// the client does not read holds it; an anonymous request (also
/// `global-default`) waits in its queue a quarter of its `timeout` and is
/// refused with kube's 429, `Retry-After` and the PF headers; exempt
/// requests (`system:masters`, the `probes` schema) are served meanwhile;
/// a request waiting in the queue is served once the seat is free.
#[tokio::test]
async fn priority_and_fairness_queues_then_refuses_beyond_the_seats() {
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    let server = TestServer::start_with(&[
        "--max-requests-inflight=1",
        "--max-mutating-requests-inflight=1",
    ]);
    let client = server.client().await;
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let value = "x".repeat(1024 * 1024);
    for index in 0..32 {
        configmaps
            .create(
                &PostParams::default(),
                &config_map(&format!("big-{index}"), &value),
            )
            .await
            .unwrap();
    }
    let roles: Api<ClusterRole> = Api::all(client.clone());
    roles
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({
                "metadata": {"name": "configmap-reader"},
                "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["configmaps"]}],
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    bindings
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({
                "metadata": {"name": "jane-reads-configmaps"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "configmap-reader"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"}],
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    let mut slow = connect(&server, b"http/1.1", true).await;
    slow.write_all(
        b"GET /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\nImpersonate-User: jane\r\nAccept: application/json\r\n\r\n",
    )
    .await
    .unwrap();
    slow.flush().await.unwrap();

    // Waits a second (a quarter of 4s) in its queue.
    let impatient =
        "GET /version?timeout=4s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let refused = tokio::time::timeout(EVENTUALLY, async {
        loop {
            let answer = http1_once(&server, false, impatient).await;
            if answer.starts_with("HTTP/1.1 429 ") {
                return answer;
            }
            assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("a 429 while the slow list holds global-default's seat");
    let lowercase = refused.to_ascii_lowercase();
    let retry_after = lowercase
        .split("\r\nretry-after: ")
        .nth(1)
        .and_then(|rest| rest.split("\r\n").next())
        .unwrap_or_else(|| panic!("{refused}"));
    assert!(
        retry_after.parse::<u32>().is_ok_and(|seconds| seconds >= 1),
        "{refused}"
    );
    assert!(
        lowercase.contains("\r\ncontent-type: text/plain; charset=utf-8\r\n"),
        "{refused}"
    );
    assert!(
        lowercase.contains("\r\nx-kubernetes-pf-flowschema-uid: "),
        "{refused}"
    );
    assert!(
        lowercase.contains("\r\nx-kubernetes-pf-prioritylevel-uid: "),
        "{refused}"
    );
    assert!(
        refused.ends_with("\r\n\r\nToo many requests, please try again later.\n"),
        "{refused}"
    );

    // Exempt: system:masters, and health probes.
    let namespaces: Api<Namespace> = Api::all(client);
    namespaces.list(&ListParams::default()).await.unwrap();
    let probe = http1_once(
        &server,
        false,
        "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(probe.starts_with("HTTP/1.1 200 "), "{probe}");

    // A patient request (15 s in its queue) is served once the seat frees.
    let patient = "GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let mut queued = connect(&server, b"http/1.1", false).await;
    queued.write_all(patient.as_bytes()).await.unwrap();
    queued.flush().await.unwrap();
    // Ordering only (no assertion on time): let it reach its queue first.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(slow);
    let answer = until_closed(&mut queued).await.expect("answered");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
}

/// Lets `jane` list and create configmaps (she is not exempt from APF).
async fn jane_may_list_and_create_configmaps(client: &kube::Client) {
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    let roles: Api<ClusterRole> = Api::all(client.clone());
    roles
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({
                "metadata": {"name": "configmap-writer"},
                "rules": [{"verbs": ["list", "create"], "apiGroups": [""], "resources": ["configmaps"]}],
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    bindings
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({
                "metadata": {"name": "jane-writes-configmaps"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "configmap-writer"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"}],
            }))
            .unwrap(),
        )
        .await
        .unwrap();
}

/// A validating webhook for configmap creates whose server accepts TCP
/// connections and never answers: each create waits its 30 s timeout.
async fn register_a_webhook_that_never_answers(client: &kube::Client) -> tokio::net::TcpListener {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = params.self_signed(&key).unwrap();
    use base64::Engine as _;
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(ca.pem());
    let resource = kube::discovery::ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: "ValidatingWebhookConfiguration".into(),
        plural: "validatingwebhookconfigurations".into(),
    };
    let configuration: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "silent"},
        "webhooks": [{
            "name": "silent.example.com",
            "clientConfig": {"url": format!("https://127.0.0.1:{port}/"), "caBundle": ca_bundle},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"], "scope": "Namespaced"}],
            "timeoutSeconds": 30,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }],
    }))
    .unwrap();
    let api: Api<kube::api::DynamicObject> = Api::all_with(client.clone(), &resource);
    api.create(&PostParams::default(), &configuration)
        .await
        .unwrap();
    listener
}

/// What happens to the seat of a request past its deadline, as kube's
/// filters order it (`timeout.go` runs APF's `execute` in the goroutine
/// that outlives the 504): a write's handler returns at the deadline
/// (`finishRequest`), freeing its seat with the 504, so a request queued
/// behind it is served; a list waiting for a future resourceVersion keeps
/// its seat for the watch cache's whole 3 s wait (`waitUntilFreshAndBlock`
/// ignores the context), so a request queued behind it, whose queue wait
/// (a quarter of its `timeout`) ends first, is refused with the 429.
/// APF with two seats in all: `global-default` has one.
#[tokio::test]
async fn a_timed_out_write_frees_its_seat_at_the_504_and_a_timed_out_list_keeps_it() {
    let server = TestServer::start_with(&[
        "--max-requests-inflight=1",
        "--max-mutating-requests-inflight=1",
    ]);
    let client = server.client().await;
    jane_may_list_and_create_configmaps(&client).await;
    let _silent = register_a_webhook_that_never_answers(&client).await;

    // A create by jane, stuck in the webhook, times out after 1 s.
    let body = r#"{"metadata":{"name":"stuck"},"data":{"a":"b"}}"#;
    let mut write = connect(&server, b"http/1.1", true).await;
    write
        .write_all(
            format!(
                "POST /api/v1/namespaces/default/configmaps?timeout=1s HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                 Impersonate-User: jane\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    write.flush().await.unwrap();
    // Ordering only (no assertion on time): let the create take the seat.
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Queued behind it for at most 3 s (a quarter of 12 s): served once
    // the create's 504 frees the seat, long before the webhook's 30 s.
    let queued = http1_once(
        &server,
        false,
        "GET /version?timeout=12s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(queued.starts_with("HTTP/1.1 200 "), "{queued}");
    let answer =
        String::from_utf8_lossy(&until_closed(&mut write).await.expect("answered")).into_owned();
    assert!(answer.starts_with("HTTP/1.1 504 "), "{answer}");
    assert!(
        answer.contains("request did not complete within the allotted timeout"),
        "{answer}"
    );

    // A list by jane from a resourceVersion far ahead: the filter's 504
    // after 1 s, its handler waiting 3 s for the revision.
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let current: u64 = configmaps
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap()
        .parse()
        .unwrap();
    let mut read = connect(&server, b"http/1.1", true).await;
    read.write_all(
        format!(
            "GET /api/v1/namespaces/default/configmaps?resourceVersion={}&timeout=1s HTTP/1.1\r\n\
             Host: 127.0.0.1\r\nImpersonate-User: jane\r\nConnection: close\r\n\r\n",
            current + 1000
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    read.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Queued for at most 1.5 s (a quarter of 6 s): the list's handler
    // still holds the seat then, 504 or not.
    let refused = http1_once(
        &server,
        false,
        "GET /version?timeout=6s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(refused.starts_with("HTTP/1.1 429 "), "{refused}");
    let answer =
        String::from_utf8_lossy(&until_closed(&mut read).await.expect("answered")).into_owned();
    assert!(answer.starts_with("HTTP/1.1 504 "), "{answer}");
    assert!(
        answer.contains("request did not complete within the allotted timeout"),
        "{answer}"
    );
    // Once the list's handler is done, the seat serves again.
    let served = tokio::time::timeout(EVENTUALLY, async {
        loop {
            let answer = http1_once(
                &server,
                false,
                "GET /version?timeout=6s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
            )
            .await;
            if answer.starts_with("HTTP/1.1 200 ") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(served.is_ok(), "the seat is free once the list is done");
}
