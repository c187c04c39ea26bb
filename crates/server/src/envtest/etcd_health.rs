//! `ferrokube envtest-etcd`: the `etcd` of an envtest assets directory. It
//! takes every flag envtest (or its user) passes to etcd, listens on the
//! `--listen-client-urls`, and answers `GET /health` as etcd 3.5 does
//! (`200 {"health":"true","reason":""}`), which is all envtest asks of it
//! (controller-runtime `controlplane/etcd.go`: `HealthCheck.Path =
//! "/health"`, polled by `process.go` `pollURLUntilOK`) before it starts
//! the API server. It keeps no data: the `kube-apiserver` beside it is
//! ferrokube on its own store. SIGTERM (envtest's `Stop`) ends it.

use std::convert::Infallible;
use std::net::{SocketAddr, ToSocketAddrs as _};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

/// etcd's default `--listen-client-urls`.
pub const DEFAULT_CLIENT_URL: &str = "http://localhost:2379";

/// The body of etcd 3.5's `/health` when healthy.
pub const HEALTHY: &str = r#"{"health":"true","reason":""}"#;

#[derive(Debug, thiserror::Error)]
pub enum EtcdHealthError {
    #[error("--listen-client-urls: {url:?}: {message}")]
    Url { url: String, message: String },
    #[error("listening on {address}: {source}")]
    Bind {
        address: SocketAddr,
        source: std::io::Error,
    },
}

/// The flags that matter, read from etcd's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdHealthOptions {
    pub client_urls: Vec<String>,
    pub help: bool,
    pub version: bool,
}

impl EtcdHealthOptions {
    /// etcd's flags (`--name=value` or `--name value`); every flag but
    /// `--listen-client-urls`, `--help` and `--version` is ignored.
    pub fn parse(arguments: &[String]) -> EtcdHealthOptions {
        let mut options = EtcdHealthOptions {
            client_urls: Vec::new(),
            help: false,
            version: false,
        };
        let mut arguments = arguments.iter();
        while let Some(argument) = arguments.next() {
            let flag = argument.trim_start_matches('-');
            match flag.split_once('=') {
                Some(("listen-client-urls", value)) => options.add_urls(value),
                None if flag == "listen-client-urls" => {
                    if let Some(value) = arguments.next() {
                        options.add_urls(value);
                    }
                }
                None if flag == "help" || flag == "h" => options.help = true,
                None if flag == "version" => options.version = true,
                _ => {}
            }
        }
        if options.client_urls.is_empty() {
            options.client_urls.push(DEFAULT_CLIENT_URL.to_string());
        }
        options
    }

    fn add_urls(&mut self, value: &str) {
        self.client_urls.extend(
            value
                .split(',')
                .map(str::trim)
                .filter(|url| !url.is_empty())
                .map(str::to_string),
        );
    }
}

/// The help text: envtest reads `etcd --help` for `--unsafe-no-fsync`
/// (`Etcd.defaultArgs`); the stand-in accepts that flag as every other.
pub const HELP: &str = "\
ferrokube envtest-etcd: the etcd of a ferrokube envtest assets directory.

Answers GET /health on the client URLs so that envtest starts the API
server; keeps no data (the kube-apiserver beside it is ferrokube on its own
store). Every other etcd flag is accepted and ignored.

  --listen-client-urls  http://host:port[,…] (default http://localhost:2379)
  --unsafe-no-fsync     accepted and ignored
";

/// `http://host:port` → the addresses to listen on.
pub fn listen_addresses(url: &str) -> Result<Vec<SocketAddr>, EtcdHealthError> {
    let error = |message: &str| EtcdHealthError::Url {
        url: url.to_string(),
        message: message.to_string(),
    };
    let Some(authority) = url.strip_prefix("http://") else {
        return Err(error(
            "only http:// client URLs are served (envtest's default); the stand-in has no TLS",
        ));
    };
    let authority = authority.trim_end_matches('/');
    if authority.contains('/') {
        return Err(error("a client URL has no path"));
    }
    let addresses: Vec<SocketAddr> = authority
        .to_socket_addrs()
        .map_err(|resolve| error(&resolve.to_string()))?
        .collect();
    if addresses.is_empty() {
        return Err(error("the host resolves to no address"));
    }
    Ok(addresses)
}

/// etcd's answer to one request.
pub fn answer(method: &hyper::Method, path: &str) -> (StatusCode, &'static str) {
    match (method, path) {
        (&hyper::Method::GET, "/health") => (StatusCode::OK, HEALTHY),
        _ => (StatusCode::NOT_FOUND, "404 page not found\n"),
    }
}

/// Listen on every client URL and answer until `shutdown` resolves.
pub async fn serve_health(
    options: &EtcdHealthOptions,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), EtcdHealthError> {
    let mut listeners = Vec::new();
    for url in &options.client_urls {
        for address in listen_addresses(url)? {
            let listener = tokio::net::TcpListener::bind(address)
                .await
                .map_err(|source| EtcdHealthError::Bind { address, source })?;
            listeners.push(listener);
        }
    }
    let mut accepting = tokio::task::JoinSet::new();
    for listener in listeners {
        accepting.spawn(accept_loop(listener));
    }
    shutdown.await;
    accepting.abort_all();
    Ok(())
}

async fn accept_loop(listener: tokio::net::TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            continue;
        };
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(|request: Request<hyper::body::Incoming>| async move {
                    let (status, body) = answer(request.method(), request.uri().path());
                    let mut response =
                        Response::new(Full::new(Bytes::from_static(body.as_bytes())));
                    *response.status_mut() = status;
                    let content_type = if status == StatusCode::OK {
                        "application/json"
                    } else {
                        "text/plain; charset=utf-8"
                    };
                    response.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static(content_type),
                    );
                    Ok::<_, Infallible>(response)
                });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|text| text.to_string()).collect()
    }

    #[test]
    fn reads_envtests_etcd_flags() {
        // etcd.go's defaultArgs, as TemplateAndArguments renders them.
        let options = EtcdHealthOptions::parse(&strings(&[
            "--advertise-client-urls=http://127.0.0.1:40001",
            "--data-dir=/tmp/k8s_test_framework_1",
            "--listen-client-urls=http://127.0.0.1:40001",
            "--listen-peer-urls=http://127.0.0.1:40002",
            "--unsafe-no-fsync=true",
        ]));
        assert_eq!(options.client_urls, ["http://127.0.0.1:40001"]);
        assert!(!options.help && !options.version);
        let spaced = EtcdHealthOptions::parse(&strings(&[
            "--listen-client-urls",
            "http://127.0.0.1:1,http://127.0.0.1:2",
        ]));
        assert_eq!(
            spaced.client_urls,
            ["http://127.0.0.1:1", "http://127.0.0.1:2"]
        );
        assert_eq!(
            EtcdHealthOptions::parse(&[]).client_urls,
            [DEFAULT_CLIENT_URL]
        );
        assert!(EtcdHealthOptions::parse(&strings(&["--help"])).help);
        assert!(EtcdHealthOptions::parse(&strings(&["-h"])).help);
        assert!(EtcdHealthOptions::parse(&strings(&["--version"])).version);
    }

    #[test]
    fn client_urls_are_plain_http_host_and_port() -> Result<(), Box<dyn std::error::Error>> {
        let expected: SocketAddr = "127.0.0.1:2379".parse()?;
        assert_eq!(listen_addresses("http://127.0.0.1:2379")?, [expected]);
        assert_eq!(listen_addresses("http://127.0.0.1:2379/")?, [expected]);
        for bad in [
            "https://127.0.0.1:2379",
            "127.0.0.1:2379",
            "http://127.0.0.1:2379/prefix",
            "http://127.0.0.1",
        ] {
            assert!(
                matches!(listen_addresses(bad), Err(EtcdHealthError::Url { .. })),
                "{bad}"
            );
        }
        Ok(())
    }

    #[test]
    fn answers_health_as_etcd_does() {
        assert_eq!(
            answer(&hyper::Method::GET, "/health"),
            (StatusCode::OK, r#"{"health":"true","reason":""}"#)
        );
        assert_eq!(
            answer(&hyper::Method::GET, "/v3/kv/range").0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            answer(&hyper::Method::POST, "/health").0,
            StatusCode::NOT_FOUND
        );
    }

    #[tokio::test]
    async fn serves_health_until_shut_down() -> Result<(), Box<dyn std::error::Error>> {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0")?;
            probe.local_addr()?.port()
        };
        let options =
            EtcdHealthOptions::parse(&[format!("--listen-client-urls=http://127.0.0.1:{port}")]);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            serve_health(&options, async {
                let _ = stopped.await;
            })
            .await
        });
        let response = loop {
            use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
            let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
                tokio::task::yield_now().await;
                continue;
            };
            stream
                .write_all(b"GET /health HTTP/1.1\r\nHost: etcd\r\nConnection: close\r\n\r\n")
                .await?;
            let mut response = String::new();
            stream.read_to_string(&mut response).await?;
            break response;
        };
        assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
        assert!(response.ends_with(HEALTHY), "{response}");
        let _ = stop.send(());
        server.await??;
        Ok(())
    }
}
