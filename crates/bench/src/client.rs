//! The HTTPS client: rustls (ring) with the kubeconfig's CA and client
//! certificate, HTTP/2 by ALPN, a small pool of connections that the load
//! workers multiplex their streams over, as client-go does (it keeps one
//! HTTP/2 connection per host; `--connections` widens that). A server that
//! only speaks HTTP/1.1, or `--http1`, gets one connection per worker.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, USER_AGENT};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::kubeconfig::{split_server, Credentials, Kubeconfig};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("tls configuration: {0}")]
    Config(String),
    #[error("connecting to {address}: {source}")]
    Connect {
        address: String,
        source: std::io::Error,
    },
    #[error("tls handshake: {0}")]
    Tls(std::io::Error),
    #[error("http handshake: {0}")]
    Handshake(hyper::Error),
    #[error("request: {0}")]
    Request(hyper::Error),
    #[error("reading the response body: {0}")]
    Body(hyper::Error),
    #[error("bad request: {0}")]
    Build(String),
}

impl ClientError {
    /// A short, stable category for error tallies.
    pub fn kind(&self) -> &'static str {
        match self {
            ClientError::Config(_) => "config",
            ClientError::Connect { .. } => "connect",
            ClientError::Tls(_) => "tls",
            ClientError::Handshake(_) => "handshake",
            ClientError::Request(_) => "request",
            ClientError::Body(_) => "body",
            ClientError::Build(_) => "build",
        }
    }
}

/// Connection settings.
#[derive(Debug, Clone, Copy)]
pub struct ClientOptions {
    /// HTTP/2 connections shared by all workers.
    pub connections: usize,
    /// Offer only `http/1.1` in ALPN (one connection per worker).
    pub http1: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connections: 1,
            http1: false,
        }
    }
}

/// A response with its whole body.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Bytes,
}

enum Sender {
    H2(http2::SendRequest<Full<Bytes>>),
    H1(http1::SendRequest<Full<Bytes>>),
}

#[derive(Default)]
struct Slot {
    generation: u64,
    sender: Option<http2::SendRequest<Full<Bytes>>>,
}

struct Inner {
    host: String,
    port: u16,
    server_name: ServerName<'static>,
    /// `https://authority` + path prefix, for HTTP/2 request URIs.
    base: String,
    /// `authority`, for HTTP/1.1's Host header.
    authority: HeaderValue,
    prefix: String,
    tls: TlsConnector,
    auth: Option<HeaderValue>,
    h2: bool,
    slots: Vec<tokio::sync::Mutex<Slot>>,
}

/// A cheaply cloneable client for one server.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

/// The rustls client configuration for `kc`.
pub fn tls_config(kc: &Kubeconfig, http1_only: bool) -> Result<Arc<ClientConfig>, ClientError> {
    let bad = |what: &str, e: &dyn std::fmt::Display| ClientError::Config(format!("{what}: {e}"));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| bad("protocol versions", &e))?;
    let builder = if kc.insecure_skip_tls_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
    } else {
        let ca = kc.ca_pem.as_deref().ok_or_else(|| {
            ClientError::Config(
                "the cluster has no certificate-authority(-data) and this tool carries no system roots; \
                 add the CA or insecure-skip-tls-verify: true"
                    .into(),
            )
        })?;
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(ca) {
            let cert = cert.map_err(|e| bad("certificate-authority", &e))?;
            roots
                .add(cert)
                .map_err(|e| bad("certificate-authority", &e))?;
        }
        if roots.is_empty() {
            return Err(ClientError::Config(
                "certificate-authority has no certificate".into(),
            ));
        }
        builder.with_root_certificates(roots)
    };
    let mut config = match &kc.credentials {
        Credentials::ClientCert { cert_pem, key_pem } => {
            let chain = CertificateDer::pem_slice_iter(cert_pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad("client-certificate", &e))?;
            let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| bad("client-key", &e))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| bad("client certificate", &e))?
        }
        Credentials::Token(_) | Credentials::None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = if http1_only {
        vec![b"http/1.1".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    Ok(Arc::new(config))
}

impl Client {
    /// Connects to `kc`'s server: negotiates the protocol on a first
    /// connection and, for HTTP/2, opens the rest of the pool. With
    /// `options.http1` nothing is opened until the first request.
    pub async fn connect(kc: &Kubeconfig, options: ClientOptions) -> Result<Client, ClientError> {
        let mut inner = Inner::new(kc, options)?;
        if !options.http1 {
            let (first, h2) = inner.open().await?;
            if let (Sender::H2(first), true) = (first, h2) {
                let mut senders = vec![first];
                for _ in 1..inner.slots.len() {
                    if let (Sender::H2(sender), _) = inner.open().await? {
                        senders.push(sender);
                    }
                }
                for (slot, sender) in inner.slots.iter_mut().zip(senders) {
                    *slot.get_mut() = Slot {
                        generation: 1,
                        sender: Some(sender),
                    };
                }
            } else {
                // The server chose HTTP/1.1.
                inner.h2 = false;
                inner.slots.clear();
            }
        }
        Ok(Client {
            inner: Arc::new(inner),
        })
    }

    /// `"h2"` or `"http/1.1"`.
    pub fn protocol(&self) -> &'static str {
        if self.inner.h2 {
            "h2"
        } else {
            "http/1.1"
        }
    }

    /// Shared HTTP/2 connections (0 for HTTP/1.1, where each session has
    /// its own).
    pub fn pooled_connections(&self) -> usize {
        self.inner.slots.len()
    }

    /// A session for worker `index`: over pooled connection `index % n`
    /// for HTTP/2, over a connection of its own for HTTP/1.1.
    pub fn session(&self, index: usize) -> Session {
        let slots = self.inner.slots.len().max(1);
        Session {
            client: self.clone(),
            slot: index % slots,
            generation: 0,
            sender: None,
        }
    }

    /// One request on a throwaway session.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<Reply, ClientError> {
        self.session(0).send(method, path, body).await
    }

    /// One request with its body sent as `content_type`.
    pub async fn request_as(
        &self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        content_type: &str,
    ) -> Result<Reply, ClientError> {
        self.session(0)
            .send_as(method, path, body, content_type)
            .await
    }
}

impl Inner {
    fn new(kc: &Kubeconfig, options: ClientOptions) -> Result<Inner, ClientError> {
        let (host, port, prefix) =
            split_server(&kc.server).map_err(|e| ClientError::Config(e.to_string()))?;
        let name = kc.tls_server_name.clone().unwrap_or_else(|| host.clone());
        let server_name = ServerName::try_from(name.clone())
            .map_err(|e| ClientError::Config(format!("server name {name:?}: {e}")))?;
        let authority = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let auth = match &kc.credentials {
            Credentials::Token(token) => Some(
                HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|e| ClientError::Config(format!("token: {e}")))?,
            ),
            _ => None,
        };
        let tls = TlsConnector::from(tls_config(kc, options.http1)?);
        let h2 = !options.http1;
        Ok(Inner {
            base: format!("https://{authority}{prefix}"),
            authority: HeaderValue::from_str(&authority)
                .map_err(|e| ClientError::Config(format!("authority: {e}")))?,
            host,
            port,
            server_name,
            prefix,
            tls,
            auth,
            h2,
            slots: (0..if h2 { options.connections.max(1) } else { 0 })
                .map(|_| tokio::sync::Mutex::new(Slot::default()))
                .collect(),
        })
    }

    /// A new connection; `true` when it speaks HTTP/2.
    async fn open(&self) -> Result<(Sender, bool), ClientError> {
        let address = format!("{}:{}", self.host, self.port);
        let tcp = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|source| ClientError::Connect { address, source })?;
        let _ = tcp.set_nodelay(true);
        let tls = self
            .tls
            .connect(self.server_name.clone(), tcp)
            .await
            .map_err(ClientError::Tls)?;
        let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
        let io = TokioIo::new(tls);
        if h2 {
            // Go's HTTP/2 transport (client-go, kubectl) advertises a 4 MiB
            // stream window and a 1 GiB connection window; a smaller window
            // makes large lists wait on WINDOW_UPDATE round trips.
            let (sender, conn) = http2::Builder::new(TokioExecutor::new())
                .initial_stream_window_size(4 << 20)
                .initial_connection_window_size(1 << 30)
                .handshake(io)
                .await
                .map_err(ClientError::Handshake)?;
            tokio::spawn(conn);
            Ok((Sender::H2(sender), true))
        } else {
            let (sender, conn) = http1::handshake(io).await.map_err(ClientError::Handshake)?;
            tokio::spawn(conn);
            Ok((Sender::H1(sender), false))
        }
    }
}

/// One worker's view of the client.
pub struct Session {
    client: Client,
    slot: usize,
    generation: u64,
    sender: Option<Sender>,
}

impl Session {
    /// Makes `self.sender` a live connection.
    async fn ensure_sender(&mut self) -> Result<(), ClientError> {
        if let Some(sender) = &self.sender {
            let closed = match sender {
                Sender::H2(s) => s.is_closed(),
                Sender::H1(s) => s.is_closed(),
            };
            if !closed {
                return Ok(());
            }
            self.sender = None;
        }
        let inner = &self.client.inner;
        let sender = if inner.h2 {
            let Some(slot) = inner.slots.get(self.slot) else {
                return Err(ClientError::Config("no connection slot".into()));
            };
            let mut slot = slot.lock().await;
            let usable = slot.sender.as_ref().is_some_and(|s| !s.is_closed());
            if !usable || slot.generation == self.generation {
                // Empty, closed, or the connection this session saw fail:
                // replace it (once, for all sessions on the slot).
                if let (Sender::H2(fresh), _) = inner.open().await? {
                    slot.generation += 1;
                    slot.sender = Some(fresh);
                } else {
                    return Err(ClientError::Config(
                        "the server stopped offering h2 on a new connection".into(),
                    ));
                }
            }
            self.generation = slot.generation;
            match &slot.sender {
                Some(s) => Sender::H2(s.clone()),
                None => return Err(ClientError::Config("no connection".into())),
            }
        } else {
            inner.open().await?.0
        };
        self.sender = Some(sender);
        Ok(())
    }

    /// Sends one request and reads the whole response.
    pub async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<Reply, ClientError> {
        self.send_as(method, path, body, JSON).await
    }

    /// [`Session::send`] with the body sent as `content_type` (patches).
    pub async fn send_as(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        content_type: &str,
    ) -> Result<Reply, ClientError> {
        let response = self.open_as(method, path, body, JSON, content_type).await?;
        let status = response.status();
        let is_h2 = matches!(self.sender, Some(Sender::H2(_)));
        let body = match response.into_body().collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => {
                if !is_h2 {
                    self.sender = None;
                }
                return Err(ClientError::Body(e));
            }
        };
        Ok(Reply { status, body })
    }

    /// Sends one request with `Accept: accept` and returns as soon as the
    /// response head arrives: the body streams (watches) or is read by the
    /// caller (timed lists). Over HTTP/1.1 the session's connection is busy
    /// until that body has been read or dropped.
    pub async fn open(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        accept: &str,
    ) -> Result<Response<Incoming>, ClientError> {
        self.open_as(method, path, body, accept, JSON).await
    }

    /// [`Session::open`] with the body sent as `content_type`.
    pub async fn open_as(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        accept: &str,
        content_type: &str,
    ) -> Result<Response<Incoming>, ClientError> {
        self.ensure_sender().await?;
        let inner = &self.client.inner;
        let Some(sender) = self.sender.as_mut() else {
            return Err(ClientError::Config("no connection".into()));
        };
        let is_h2 = matches!(sender, Sender::H2(_));
        let uri = if is_h2 {
            format!("{}{path}", inner.base)
        } else {
            format!("{}{path}", inner.prefix)
        };
        let accept = if accept == JSON {
            HeaderValue::from_static(JSON)
        } else {
            HeaderValue::from_str(accept)
                .map_err(|e| ClientError::Build(format!("accept {accept:?}: {e}")))?
        };
        let mut builder = Request::builder()
            .method(method)
            .uri(uri)
            .header(ACCEPT, accept)
            .header(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE));
        if !is_h2 {
            builder = builder.header(HOST, inner.authority.clone());
        }
        if let Some(auth) = &inner.auth {
            builder = builder.header(AUTHORIZATION, auth.clone());
        }
        if body.is_some() {
            let content_type = if content_type == JSON {
                HeaderValue::from_static(JSON)
            } else {
                HeaderValue::from_str(content_type).map_err(|e| {
                    ClientError::Build(format!("content-type {content_type:?}: {e}"))
                })?
            };
            builder = builder.header(CONTENT_TYPE, content_type);
        }
        let request = builder
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|e| ClientError::Build(e.to_string()))?;
        let result = match sender {
            Sender::H2(s) => s.send_request(request).await,
            Sender::H1(s) => match s.ready().await {
                Ok(()) => s.send_request(request).await,
                Err(e) => Err(e),
            },
        };
        match result {
            Ok(response) => Ok(response),
            Err(e) => {
                // A failed connection is replaced on the next send.
                if e.is_closed() || e.is_canceled() || !is_h2 {
                    self.sender = None;
                }
                Err(ClientError::Request(e))
            }
        }
    }
}

/// The media type every request body is sent as, and the default Accept.
pub const JSON: &str = "application/json";

pub const USER_AGENT_VALUE: &str = concat!("ferrokube-bench/", env!("CARGO_PKG_VERSION"));

/// `insecure-skip-tls-verify: true`: accepts any server certificate but
/// still checks the handshake signatures.
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// How long to wait for a single request before counting it as failed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
