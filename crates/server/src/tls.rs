//! The serving TLS configuration.
//!
//! Follows kube-apiserver's secure serving setup
//! (`staging/src/k8s.io/apiserver/pkg/server/secure_serving.go`): TLS 1.2 and
//! 1.3, ALPN `h2` then `http/1.1`, and client certificates requested but not
//! required, so that requests without one still reach `/healthz`, `/readyz`
//! or a bearer-token authenticator.
//!
//! As kube-apiserver (`tls.RequestClientCert`), the handshake only checks
//! that the client holds the key of the certificate it presents; whether a
//! CA trusts it is for the authenticators (`crate::authn`: the client CA
//! for the x509 authenticator, the request-header CA for front proxies), so
//! an untrusted certificate gets a 401 rather than a failed handshake. The
//! CertificateRequest names the trusted CAs (Go's `ClientCAs`).

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::{
    DigitallySignedStruct, DistinguishedName, RootCertStore, ServerConfig, ServerConnection,
    SignatureScheme,
};

use crate::pki::{Pki, PkiError};

/// ALPN protocol ids, in the server's order of preference.
pub const ALPN_H2: &[u8] = b"h2";
pub const ALPN_HTTP11: &[u8] = b"http/1.1";

/// Errors of [`server_config`].
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("loading tls material: {0}")]
    Pki(#[from] PkiError),
    #[error("adding the ca to the client trust store: {0}")]
    TrustStore(rustls::Error),
    #[error("building the client certificate verifier: {0}")]
    ClientVerifier(#[from] rustls::server::VerifierBuilderError),
    #[error("configuring tls: {0}")]
    Config(#[from] rustls::Error),
}

/// The rustls server configuration for the API server's listener: the
/// serving certificate of `pki`, client certificates requested with
/// ferrokube's CA and `client_cas` (the `--client-ca-file` and
/// `--requestheader-client-ca-file` roots) named as acceptable.
pub fn server_config(
    pki: &Pki,
    client_cas: &[CertificateDer<'static>],
) -> Result<Arc<ServerConfig>, TlsError> {
    let provider = Arc::new(go_preference(rustls::crypto::ring::default_provider()));

    let own_ca = pki.ca_cert_der()?;
    let mut roots = RootCertStore::empty();
    roots.add(own_ca.clone()).map_err(TlsError::TrustStore)?;
    for ca in client_cas {
        // The same CA twice (ours in a --client-ca-file) is one hint.
        if ca == &own_ca {
            continue;
        }
        roots.add(ca.clone()).map_err(TlsError::TrustStore)?;
    }
    let hints = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()?;
    let client_verifier = Arc::new(RequestClientCert { hints });

    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_client_cert_verifier(client_verifier)
        .with_single_cert(pki.serving_cert_chain()?, pki.serving_key_der()?)?;
    config.alpn_protocols = vec![ALPN_H2.to_vec(), ALPN_HTTP11.to_vec()];
    // The server's order decides, as in Go's crypto/tls (kube-apiserver).
    config.ignore_client_order = true;
    Ok(Arc::new(config))
}

/// Go's `tls.RequestClientCert`: a client certificate is asked for, not
/// required, and not checked against any CA here (the authenticators do);
/// the handshake signature still proves the client holds its key.
#[derive(Debug)]
struct RequestClientCert {
    /// The webpki verifier of the trusted CAs: for the CA names sent in the
    /// CertificateRequest and for the handshake signatures.
    hints: Arc<dyn ClientCertVerifier>,
}

impl ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.hints.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.hints.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.hints.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.hints.supported_verify_schemes()
    }
}

/// The TLS 1.3 suites in the order Go's server picks them on hardware with
/// AES instructions (`defaultCipherSuitesTLS13`): AES-128-GCM first, then
/// AES-256-GCM, then ChaCha20-Poly1305, so kubectl, client-go, curl and
/// rustls clients all get the suite kube-apiserver would give them (and the
/// cheapest one: ten AES rounds instead of fourteen per block, on every byte
/// of a large list). TLS 1.2 suites keep rustls's order after them.
fn go_preference(mut provider: rustls::crypto::CryptoProvider) -> rustls::crypto::CryptoProvider {
    use rustls::CipherSuite::{
        TLS13_AES_128_GCM_SHA256, TLS13_AES_256_GCM_SHA384, TLS13_CHACHA20_POLY1305_SHA256,
    };
    let rank = |suite: &rustls::SupportedCipherSuite| match suite.suite() {
        TLS13_AES_128_GCM_SHA256 => 0,
        TLS13_AES_256_GCM_SHA384 => 1,
        TLS13_CHACHA20_POLY1305_SHA256 => 2,
        _ => 3,
    };
    provider.cipher_suites.sort_by_key(rank);
    provider
}

/// The client certificate chain of a connection (leaf first), if one was
/// sent; not verified: feed it to
/// [`crate::authn::Authenticator::peer_certificate`].
pub fn peer_certificate_chain(conn: &ServerConnection) -> Option<Vec<CertificateDer<'static>>> {
    let chain = conn.peer_certificates()?;
    if chain.is_empty() {
        return None;
    }
    Some(chain.iter().map(|c| c.clone().into_owned()).collect())
}

/// The client leaf certificate of a connection, if one was sent (not
/// verified).
pub fn peer_leaf_certificate(conn: &ServerConnection) -> Option<CertificateDer<'static>> {
    conn.peer_certificates()?
        .first()
        .map(|c| c.clone().into_owned())
}

/// Whether the connection negotiated HTTP/2 through ALPN.
pub fn negotiated_h2(conn: &ServerConnection) -> bool {
    conn.alpn_protocol() == Some(ALPN_H2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authn::user_from_peer_certificate;
    use rustls::pki_types::ServerName;
    use rustls::ClientConfig;
    use tokio_rustls::{TlsAcceptor, TlsConnector};

    struct Outcome {
        client_alpn: Option<Vec<u8>>,
        server_alpn: Option<Vec<u8>>,
        server_h2: bool,
        peer: Option<CertificateDer<'static>>,
        version: Option<rustls::ProtocolVersion>,
        suite: Option<rustls::CipherSuite>,
    }

    fn client_config(
        pki: &Pki,
        with_cert: bool,
        versions: &[&'static rustls::SupportedProtocolVersion],
        alpn: &[&[u8]],
    ) -> Arc<ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        roots.add(pki.ca_cert_der().expect("ca")).expect("add ca");
        let builder = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .expect("versions")
            .with_root_certificates(roots);
        let mut config = if with_cert {
            builder
                .with_client_auth_cert(
                    pki.admin_cert_chain().expect("admin chain"),
                    pki.admin_key_der().expect("admin key"),
                )
                .expect("client cert")
        } else {
            builder.with_no_client_auth()
        };
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Arc::new(config)
    }

    async fn handshake(
        server: Arc<ServerConfig>,
        client: Arc<ClientConfig>,
        name: &str,
    ) -> Result<Outcome, String> {
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        let server_name = ServerName::try_from(name.to_string()).map_err(|e| e.to_string())?;
        let (client_res, server_res) = tokio::join!(
            TlsConnector::from(client).connect(server_name, client_io),
            TlsAcceptor::from(server).accept(server_io),
        );
        let client = client_res.map_err(|e| format!("client: {e}"))?;
        let server = server_res.map_err(|e| format!("server: {e}"))?;
        let conn = server.get_ref().1;
        Ok(Outcome {
            client_alpn: client.get_ref().1.alpn_protocol().map(<[u8]>::to_vec),
            server_alpn: conn.alpn_protocol().map(<[u8]>::to_vec),
            server_h2: negotiated_h2(conn),
            peer: peer_leaf_certificate(conn),
            version: conn.protocol_version(),
            suite: conn.negotiated_cipher_suite().map(|suite| suite.suite()),
        })
    }

    fn new_pki() -> (tempfile::TempDir, Pki) {
        let dir = tempfile::tempdir().expect("tempdir");
        let pki = crate::pki::ensure(dir.path(), &[]).expect("pki");
        (dir, pki)
    }

    const BOTH: &[&[u8]] = &[ALPN_H2, ALPN_HTTP11];
    const TLS13: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];
    const TLS12: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];

    #[tokio::test]
    async fn handshake_with_admin_certificate_negotiates_h2() {
        let (_dir, pki) = new_pki();
        let server = server_config(&pki, &[]).expect("server config");
        for name in ["localhost", "127.0.0.1", "::1", "kubernetes.default.svc"] {
            let out = handshake(server.clone(), client_config(&pki, true, TLS13, BOTH), name)
                .await
                .expect("handshake");
            assert_eq!(out.client_alpn.as_deref(), Some(ALPN_H2), "{name}");
            assert_eq!(out.server_alpn.as_deref(), Some(ALPN_H2));
            assert!(out.server_h2);
            assert_eq!(out.version, Some(rustls::ProtocolVersion::TLSv1_3));
            let peer = out.peer.expect("server sees the client certificate");
            let user = user_from_peer_certificate(peer.as_ref()).expect("user");
            assert_eq!(user.name, "ferrokube-admin");
            assert!(user.groups.iter().any(|g| g == "system:masters"));
        }
    }

    #[tokio::test]
    async fn the_server_picks_aes_128_gcm_as_go_does() {
        let (_dir, pki) = new_pki();
        let server = server_config(&pki, &[]).expect("server config");
        let client = client_config(&pki, true, TLS13, BOTH);
        // rustls clients (and OpenSSL's curl) list AES-256-GCM first.
        assert_eq!(
            client.crypto_provider().cipher_suites[0].suite(),
            rustls::CipherSuite::TLS13_AES_256_GCM_SHA384
        );
        let out = handshake(server, client, "localhost")
            .await
            .expect("handshake");
        assert_eq!(
            out.suite,
            Some(rustls::CipherSuite::TLS13_AES_128_GCM_SHA256)
        );
    }

    #[tokio::test]
    async fn handshake_over_tls12_with_certificate() {
        let (_dir, pki) = new_pki();
        let server = server_config(&pki, &[]).expect("server config");
        let out = handshake(server, client_config(&pki, true, TLS12, BOTH), "localhost")
            .await
            .expect("handshake");
        assert_eq!(out.version, Some(rustls::ProtocolVersion::TLSv1_2));
        assert_eq!(out.server_alpn.as_deref(), Some(ALPN_H2));
        assert!(out.peer.is_some());
    }

    #[tokio::test]
    async fn handshake_without_client_certificate_succeeds() {
        let (_dir, pki) = new_pki();
        let server = server_config(&pki, &[]).expect("server config");
        let out = handshake(
            server.clone(),
            client_config(&pki, false, TLS13, &[ALPN_HTTP11]),
            "localhost",
        )
        .await
        .expect("handshake");
        assert!(out.peer.is_none());
        assert_eq!(out.server_alpn.as_deref(), Some(ALPN_HTTP11));
        assert!(!out.server_h2);
        // No ALPN at all is fine too (HTTP/1.1 clients without ALPN).
        let out = handshake(server, client_config(&pki, false, TLS12, &[]), "localhost")
            .await
            .expect("handshake");
        assert_eq!(out.server_alpn, None);
    }

    #[tokio::test]
    async fn certificate_from_another_ca_completes_the_handshake_and_is_refused_by_authn() {
        let (_dir, pki) = new_pki();
        let (_other_dir, other) = new_pki();
        let server = server_config(&pki, &[]).expect("server config");
        // Trust our server, present a client certificate of another CA.
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        roots.add(pki.ca_cert_der().expect("ca")).expect("add");
        let client = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots)
            .with_client_auth_cert(
                other.admin_cert_chain().expect("chain"),
                other.admin_key_der().expect("key"),
            )
            .expect("client cert");
        // kube's tls.RequestClientCert: the handshake succeeds ...
        let out = handshake(server, Arc::new(client), "localhost")
            .await
            .expect("handshake");
        let chain = vec![out.peer.expect("the certificate reaches the server")];
        // ... and the x509 authenticator refuses the certificate (a 401).
        let client_ca =
            crate::authn::CaBundle::load("test", &[], Some(&pki.ca_cert_pem)).expect("bundle");
        let authenticator =
            crate::authn::Authenticator::new(true).with_client_ca(Arc::new(client_ca));
        let peer = authenticator.peer_certificate(&chain);
        let error = authenticator
            .authenticate(Some(&peer), &mut http::HeaderMap::new())
            .expect_err("refused");
        let text = error.to_string();
        assert!(
            text.starts_with("verifying certificate SN=")
                && text.ends_with(" failed: x509: certificate signed by unknown authority"),
            "{text}"
        );
    }
}
