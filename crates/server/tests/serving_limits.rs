//! Connection-level limits as kube-apiserver sets them
//! (`server/secure_serving.go` `SecureServingInfo.Serve`): the HTTP/2
//! `SETTINGS_MAX_CONCURRENT_STREAMS` a client is told, read from the
//! server's first SETTINGS frame over TLS with ALPN `h2` (every kubectl and
//! kube-rs test talks HTTP/2 to the same listener).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use ferrokube_testkit::TestServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;

/// The parameters of the server's first SETTINGS frame.
async fn server_settings(server: &TestServer) -> Vec<(u16, u32)> {
    let pki =
        ferrokube::pki::ensure(&server.data_dir.join("pki"), &["127.0.0.1".to_string()]).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca_cert_der().unwrap()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let address = server.url.trim_start_matches("https://");
    let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    // The client preface and an empty SETTINGS frame.
    tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await
        .unwrap();
    tls.flush().await.unwrap();
    let mut header = [0u8; 9];
    tls.read_exact(&mut header).await.unwrap();
    assert_eq!(header[3], 0x4, "the server's first frame is SETTINGS");
    let length =
        usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
    let mut payload = vec![0u8; length];
    tls.read_exact(&mut payload).await.unwrap();
    payload
        .chunks_exact(6)
        .map(|setting| {
            (
                u16::from_be_bytes([setting[0], setting[1]]),
                u32::from_be_bytes([setting[2], setting[3], setting[4], setting[5]]),
            )
        })
        .collect()
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
