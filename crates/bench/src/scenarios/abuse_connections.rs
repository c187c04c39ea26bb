//! The `abuse` scenario's held connections: `n` of a kind kept open
//! against the server, each replaced as soon as the server closes it —
//! slow (TLS done, then request headers one byte a second), half-open TCP
//! (connected, nothing sent), half-open TLS (the first half of a
//! ClientHello) — and how long the server let them stay.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;
use tokio_rustls::TlsConnector;

use crate::client::tls_config;
use crate::kubeconfig::{split_server, Credentials, Kubeconfig};
use crate::BenchError;

/// What one abusive kind of connection met.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HeldConnections {
    pub opened: u64,
    /// Closed by the server (timeouts, limits).
    pub closed_by_server: u64,
    /// The longest one connection was held before the server closed it, s.
    pub longest_held_s: f64,
    /// Connections refused or failing to open.
    pub failed_to_open: u64,
}

/// Where to connect and how to speak TLS without credentials.
#[derive(Clone)]
pub struct RawTarget {
    host: String,
    port: u16,
    name: ServerName<'static>,
    tls: TlsConnector,
    tls_config: Arc<rustls::ClientConfig>,
}

impl RawTarget {
    pub fn new(kc: &Kubeconfig) -> Result<RawTarget, BenchError> {
        let (host, port, _) =
            split_server(&kc.server).map_err(|e| BenchError::Setup(e.to_string()))?;
        let name = ServerName::try_from(kc.tls_server_name.clone().unwrap_or_else(|| host.clone()))
            .map_err(|e| BenchError::Setup(format!("server name: {e}")))?;
        let mut anonymous = kc.clone();
        anonymous.credentials = Credentials::None;
        let tls_config = tls_config(&anonymous, true)?;
        Ok(RawTarget {
            host,
            port,
            name,
            tls: TlsConnector::from(tls_config.clone()),
            tls_config,
        })
    }

    /// The first bytes a TLS client sends: its ClientHello.
    fn client_hello(&self) -> Vec<u8> {
        let mut hello = Vec::new();
        if let Ok(mut conn) =
            rustls::ClientConnection::new(self.tls_config.clone(), self.name.clone())
        {
            let _ = conn.write_tls(&mut hello);
        }
        hello
    }
}

#[derive(Clone, Copy)]
pub enum Kind {
    Slow,
    HalfOpenTcp,
    HalfOpenTls,
}

/// Holds one connection of `kind` open as long as the server lets it;
/// `Some(held)` when the server closed it.
async fn hold(target: &RawTarget, kind: Kind, stop: &AtomicBool) -> Result<Option<Duration>, ()> {
    let mut tcp = TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|_| ())?;
    let opened = Instant::now();
    let mut buf = [0u8; 1024];
    match kind {
        Kind::HalfOpenTcp | Kind::HalfOpenTls => {
            if let Kind::HalfOpenTls = kind {
                let hello = target.client_hello();
                tcp.write_all(&hello[..hello.len() / 2])
                    .await
                    .map_err(|_| ())?;
            }
            while !stop.load(Ordering::Relaxed) {
                match tokio::time::timeout(Duration::from_millis(500), tcp.read(&mut buf)).await {
                    Ok(Ok(0)) | Ok(Err(_)) => return Ok(Some(opened.elapsed())),
                    // Whatever the server sends (an alert), keep waiting for the close.
                    Ok(Ok(_)) | Err(_) => {}
                }
            }
            Ok(None)
        }
        Kind::Slow => {
            let mut tls = target
                .tls
                .connect(target.name.clone(), tcp)
                .await
                .map_err(|_| ())?;
            let request = b"GET /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
            for byte in request.iter().cycle() {
                if stop.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                if tls.write_all(&[*byte]).await.is_err() || tls.flush().await.is_err() {
                    return Ok(Some(opened.elapsed()));
                }
                match tokio::time::timeout(Duration::from_secs(1), tls.read(&mut buf)).await {
                    Ok(Ok(0)) | Ok(Err(_)) => return Ok(Some(opened.elapsed())),
                    Ok(Ok(_)) | Err(_) => {}
                }
            }
            Ok(None)
        }
    }
}

/// `n` connections of `kind`, each replaced once the server closes it.
pub async fn abusers(
    target: RawTarget,
    kind: Kind,
    n: usize,
    stop: Arc<AtomicBool>,
) -> HeldConnections {
    let stats = Arc::new(Mutex::new(HeldConnections::default()));
    let mut tasks = JoinSet::new();
    for _ in 0..n {
        let (target, stop, stats) = (target.clone(), stop.clone(), stats.clone());
        tasks.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let outcome = hold(&target, kind, &stop).await;
                let failed = outcome.is_err();
                {
                    let mut s = stats
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    match outcome {
                        Err(()) => s.failed_to_open += 1,
                        Ok(held) => {
                            s.opened += 1;
                            if let Some(held) = held {
                                s.closed_by_server += 1;
                                let held = (held.as_secs_f64() * 10.0).round() / 10.0;
                                s.longest_held_s = s.longest_held_s.max(held);
                            }
                        }
                    }
                }
                if failed {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    let s = stats
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    s.clone()
}
