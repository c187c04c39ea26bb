//! kube's HTTP prober (`pkg/probe/http`) as `componentstatus.HttpServer`
//! uses it: a GET of `https://127.0.0.1:<port>/healthz` that does not check
//! the certificate (`InsecureSkipVerify`), answered 200–399 is a success
//! whose message is the body (at most 10 KiB), another code a failure
//! (`HTTP probe failed with statuscode: N`), a connection that fails a
//! failure whose message is Go's `Get "<url>": <error>` text.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// `maxRespBodyLength` of kube's HTTP prober.
const MAX_BODY: usize = 10 * 1024;

/// The outcome of one probe, as `DoServerCheck` returns it.
#[derive(Debug, PartialEq)]
pub struct Probe {
    pub result: Outcome,
    pub message: String,
    pub error: String,
}

#[derive(Debug, PartialEq, Clone, Copy)]
pub enum Outcome {
    Success,
    Failure,
}

impl Probe {
    pub fn success(message: impl Into<String>) -> Self {
        Probe {
            result: Outcome::Success,
            message: message.into(),
            error: String::new(),
        }
    }

    fn failure(message: impl Into<String>) -> Self {
        Probe {
            result: Outcome::Failure,
            message: message.into(),
            error: String::new(),
        }
    }

    /// A failure the prober reports as an error (the etcd check's).
    pub fn failure_with_error(error: impl Into<String>) -> Self {
        Probe {
            result: Outcome::Failure,
            message: String::new(),
            error: error.into(),
        }
    }

    /// `ToConditionStatus`.
    pub fn condition_status(&self) -> &'static str {
        match self.result {
            Outcome::Success => "True",
            Outcome::Failure => "False",
        }
    }
}

/// Probes `https://127.0.0.1:<port>/healthz`, giving up after `timeout`
/// (Go's `Client.Timeout`).
pub async fn https_healthz(port: u16, timeout: Duration) -> Probe {
    let url = format!("https://127.0.0.1:{port}/healthz");
    match tokio::time::timeout(timeout, get(port)).await {
        Ok(Ok((code, _))) if !(200..400).contains(&code) => {
            Probe::failure(format!("HTTP probe failed with statuscode: {code}"))
        }
        Ok(Ok((_, body))) => Probe::success(String::from_utf8_lossy(&body).into_owned()),
        // `DoHTTPProbe` turns a failed request into a failure, its text
        // the message.
        Ok(Err(error)) => Probe::failure(format!("Get \"{url}\": {error}")),
        Err(_) => Probe::failure(format!(
            "Get \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        )),
    }
}

/// One HTTP/1.1 GET of `/healthz` over TLS: the status code and the body's
/// first [`MAX_BODY`] bytes; errors in Go's words where they are common.
async fn get(port: u16) -> Result<(u16, Bytes), String> {
    let address = format!("127.0.0.1:{port}");
    let tcp = tokio::net::TcpStream::connect(&address)
        .await
        .map_err(|error| format!("dial tcp {address}: {}", dial_error(&error)))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(SkipVerify(provider)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let server_name = ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into());
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(server_name, tcp)
        .await
        .map_err(|error| error.to_string())?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
            .await
            .map_err(|error| error.to_string())?;
    tokio::spawn(connection);
    let request = http::Request::get("/healthz")
        .header(http::header::HOST, &address)
        .header(http::header::USER_AGENT, "kube-probe/1.34")
        .header(http::header::ACCEPT, "*/*")
        .body(Empty::<Bytes>::new())
        .map_err(|error| error.to_string())?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|error| error.to_string())?;
    let code = response.status().as_u16();
    // `ReadAtMost`: a longer body is cut, not an error.
    let mut body = Vec::new();
    let mut incoming = response.into_body();
    while body.len() < MAX_BODY {
        match incoming.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    body.extend_from_slice(&data);
                }
            }
            Some(Err(error)) => return Err(error.to_string()),
            None => break,
        }
    }
    body.truncate(MAX_BODY);
    Ok((code, Bytes::from(body)))
}

/// Go's `connect: <errno text>` for a failed dial.
fn dial_error(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_string(),
        _ => {
            let text = error.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text);
            format!("connect: {}", text.to_lowercase())
        }
    }
}

/// `InsecureSkipVerify`: any certificate is accepted; the handshake's
/// signatures are still checked with it, as Go does.
#[derive(Debug)]
struct SkipVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for SkipVerify {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An HTTPS server with a self-signed certificate on an ephemeral port,
    /// answering each connection's request with `answers`' next status and
    /// body.
    async fn healthz_server(answers: Vec<(u16, &'static str)>) -> u16 {
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = rcgen::CertificateParams::new(vec!["kube-scheduler".to_string()])
            .and_then(|params| params.self_signed(&key))
            .expect("certificate");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        tokio::spawn(async move {
            for (code, body) in answers {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let Ok(tls) = acceptor.accept(tcp).await else {
                    continue;
                };
                let service = hyper::service::service_fn(move |request: http::Request<_>| {
                    let _: hyper::body::Incoming = request.into_body();
                    async move {
                        http::Response::builder()
                            .status(code)
                            .body(http_body_util::Full::new(Bytes::from(body)))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            }
        });
        port
    }

    #[tokio::test]
    async fn any_certificate_is_accepted_and_the_code_decides() {
        let port = healthz_server(vec![(200, "ok"), (500, "broken")]).await;
        let healthy = https_healthz(port, Duration::from_secs(5)).await;
        assert_eq!(healthy, Probe::success("ok"));
        assert_eq!(healthy.condition_status(), "True");
        let failing = https_healthz(port, Duration::from_secs(5)).await;
        assert_eq!(
            failing,
            Probe::failure("HTTP probe failed with statuscode: 500")
        );
    }

    #[tokio::test]
    async fn a_port_nobody_listens_on_fails_with_gos_text() {
        // A port just freed: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|address| address.port())
            .expect("a free port");
        let probe = https_healthz(port, Duration::from_secs(5)).await;
        assert_eq!(
            probe,
            Probe::failure(format!(
                "Get \"https://127.0.0.1:{port}/healthz\": dial tcp 127.0.0.1:{port}: connect: connection refused"
            ))
        );
        assert_eq!(probe.condition_status(), "False");
    }
}
