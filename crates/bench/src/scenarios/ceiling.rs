//! `ceiling`: a minimal HTTPS server in this process, on the stack
//! ferrokube serves with (rustls with ring, P-256 certificates, client
//! certificates verified against a CA, ALPN h2 then http/1.1, hyper-util's
//! auto builder, TCP_NODELAY), answering every request with one fixed JSON
//! object, driven by the same client and runner as `get`. What `get`
//! reaches as a fraction of it is the share of the transport's best that
//! the API server keeps.
//!
//! The server runs on a Tokio runtime of its own with as many workers as
//! cores, as a ferrokube process would, so client and server compete for
//! the CPUs the same way in both runs.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::thread::JoinHandle;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

use super::{configmap_body, FixedGet};
use crate::cli::Cli;
use crate::client::Client;
use crate::kubeconfig::{Credentials, Kubeconfig};
use crate::report::{LoadResult, ScenarioResult, Target};
use crate::runner;
use crate::BenchError;

/// PEM material for the ceiling server and its one client.
struct Pki {
    ca_pem: String,
    server_cert_pem: String,
    server_key_pem: String,
    client_cert_pem: String,
    client_key_pem: String,
}

fn pki() -> Result<Pki, rcgen::Error> {
    let key = || KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256);
    let named = |cn: &str| {
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, cn);
        params.distinguished_name = dn;
        params
    };
    let ca_key = key()?;
    let mut ca_params = named("ferrokube-bench-ceiling-ca");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
    ];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::from_params(&ca_params, &ca_key);

    let server_key = key()?;
    let mut server_params = named("ferrokube-bench-ceiling");
    server_params.subject_alt_names = vec![
        SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        SanType::DnsName("localhost".try_into()?),
    ];
    server_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = server_params.signed_by(&server_key, &issuer)?;

    let client_key = key()?;
    let mut client_params = named("ferrokube-bench");
    client_params
        .distinguished_name
        .push(DnType::OrganizationName, "system:masters");
    client_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client_cert = client_params.signed_by(&client_key, &issuer)?;

    Ok(Pki {
        ca_pem: ca_cert.pem(),
        server_cert_pem: server_cert.pem(),
        server_key_pem: server_key.serialize_pem(),
        client_cert_pem: client_cert.pem(),
        client_key_pem: client_key.serialize_pem(),
    })
}

fn server_tls(pki: &Pki) -> Result<Arc<ServerConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pki.ca_pem.as_bytes()) {
        roots
            .add(cert.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()
        .map_err(|e| e.to_string())?;
    let chain = CertificateDer::pem_slice_iter(pki.server_cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let key =
        PrivateKeyDer::from_pem_slice(pki.server_key_pem.as_bytes()).map_err(|e| e.to_string())?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| e.to_string())?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .map_err(|e| e.to_string())?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// What the server answers to a request body.
pub type Responder = Arc<dyn Fn(&[u8]) -> Bytes + Send + Sync>;

/// The running ceiling server; stopped on drop.
pub struct CeilingServer {
    pub address: SocketAddr,
    pub kubeconfig: Kubeconfig,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl CeilingServer {
    /// Serves `body` for every request on 127.0.0.1, on a runtime with
    /// `threads` workers.
    pub fn start(body: Bytes, threads: usize) -> Result<CeilingServer, BenchError> {
        CeilingServer::start_with(Arc::new(move |_: &[u8]| body.clone()), threads)
    }

    /// Answers every request with what `respond` makes of its body (an
    /// in-process admission webhook, for `webhook-create`).
    pub fn start_with(respond: Responder, threads: usize) -> Result<CeilingServer, BenchError> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            BenchError::Setup(format!("ceiling server: {what}: {e}"))
        };
        let pki = pki().map_err(|e| fail("certificates", &e))?;
        let tls = server_tls(&pki).map_err(|e| fail("tls", &e))?;
        let listener =
            std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| fail("bind", &e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| fail("bind", &e))?;
        let address = listener.local_addr().map_err(|e| fail("bind", &e))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("ceiling-server")
            .enable_all()
            .build()
            .map_err(|e| fail("runtime", &e))?;
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("ceiling-server".into())
            .spawn(move || {
                runtime.block_on(serve(listener, TlsAcceptor::from(tls), respond, stopped));
                runtime.shutdown_background();
            })
            .map_err(|e| fail("thread", &e))?;
        Ok(CeilingServer {
            address,
            kubeconfig: Kubeconfig {
                context: "ceiling".into(),
                server: format!("https://{address}"),
                ca_pem: Some(pki.ca_pem.into_bytes()),
                insecure_skip_tls_verify: false,
                tls_server_name: None,
                credentials: Credentials::ClientCert {
                    cert_pem: pki.client_cert_pem.into_bytes(),
                    key_pem: pki.client_key_pem.into_bytes(),
                },
                namespace: None,
            },
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }
}

impl Drop for CeilingServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    acceptor: TlsAcceptor,
    respond: Responder,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let builder = Arc::new(auto::Builder::new(TokioExecutor::new()));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut stopped => break,
        };
        let Ok((stream, _)) = accepted else { continue };
        let _ = stream.set_nodelay(true);
        let acceptor = acceptor.clone();
        let builder = builder.clone();
        let respond = respond.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            // As ferrokube does: keep the client's leaf for authentication.
            let peer = Arc::new(
                tls.get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|c| c.first())
                    .map(|c| c.to_vec()),
            );
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let respond = respond.clone();
                let _peer = peer.clone();
                async move {
                    let received = request
                        .into_body()
                        .collect()
                        .await
                        .map(|body| body.to_bytes())
                        .unwrap_or_default();
                    let mut response = Response::new(Full::new(respond(&received)));
                    response
                        .headers_mut()
                        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                    Ok::<_, Infallible>(response)
                }
            });
            let _ = builder
                .serve_connection_with_upgrades(TokioIo::new(tls), service)
                .await;
        });
    }
}

pub async fn run(cli: &Cli) -> Result<ScenarioResult, BenchError> {
    let body = Bytes::from(configmap_body(
        "ceiling",
        &cli.namespace,
        "ceiling",
        cli.ceiling_size,
    ));
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    let server = CeilingServer::start(body.clone(), threads)?;
    let client = Client::connect(&server.kubeconfig, cli.client_options()).await?;
    let path = format!("/api/v1/namespaces/{}/configmaps/ceiling", cli.namespace);
    let outcome = runner::run(
        &client,
        Arc::new(FixedGet { path }),
        &cli.load_options("ceiling", None),
    )
    .await;
    Ok(ScenarioResult {
        scenario: "ceiling".into(),
        label: "ceiling".into(),
        target: Target {
            source: "in-process".into(),
            server: server.kubeconfig.server.clone(),
            kubeconfig: None,
            binary: None,
            server_args: Vec::new(),
        },
        load: Some(LoadResult::from_outcome(
            &outcome,
            cli.concurrency,
            client.protocol(),
            client.pooled_connections(),
            body.len(),
            body.len(),
            cli.warmup_s(),
        )),
        ready: None,
        watch: None,
        list: None,
        server_memory: None,
        ..Default::default()
    })
}
