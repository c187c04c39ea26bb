//! The HTTPS POST of a ConversionReview to a conversion webhook
//! (`k8s.io/apiserver/pkg/util/webhook`: `ClientManager.HookClient` and its
//! rest client): the webhook's address from `clientConfig.url`, or from
//! `clientConfig.service` through the Service's Endpoints ([`resolve_service`],
//! kube's `proxy.ResolveEndpoint`, the resolver kube-apiserver uses with
//! `--enable-aggregator-routing`: ferrokube has no cluster DNS and no
//! kube-proxy, so a cluster IP leads nowhere), its serving certificate
//! verified against `caBundle` for the host of the URL or
//! `<name>.<namespace>.svc`, with kube's `?timeout=`. Admission webhooks
//! (`crate::admission::webhook`) use it too. Connections are kept and
//! reused ([`ClientPool`]): HTTP/2 when the webhook offers it by ALPN (one
//! multiplexed connection), else a few idle HTTP/1.1 connections.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;

use super::webhook::{ServiceReference, WebhookEndpoint};

/// kube's conversion webhook request timeout (the rest client's 30 s,
/// sent as `?timeout=30s` too).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The largest answer read from a webhook.
const MAX_RESPONSE_BYTES: usize = 256 * 1024 * 1024;

/// A webhook's resolved address.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// What the TCP connection goes to.
    pub host: String,
    pub port: u16,
    /// The name the serving certificate must be valid for.
    pub server_name: String,
    /// Path and query of the POST.
    pub path_and_query: String,
    /// The URL as kube's errors print it (`Post "<url>": ...`).
    pub url: String,
    /// Host, port and server name as one key of the connection pool.
    address: String,
}

/// The pool's key of a host, port and server name.
fn address(host: &str, port: u16, server_name: &str) -> String {
    format!("{host}\n{port}\n{server_name}")
}

/// The address of `clientConfig.url`.
pub fn resolve_url(url: &str) -> Result<Resolved, String> {
    resolve_url_with_timeout(url, TIMEOUT)
}

/// The address of `clientConfig.url` for a call with this `?timeout=`.
pub fn resolve_url_with_timeout(url: &str, timeout: Duration) -> Result<Resolved, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|error| format!("parse {}: {error}", crate::go::strconv::quote(url)))?;
    if uri.scheme_str() != Some("https") {
        return Err(format!("webhook URL {url:?} is not https"));
    }
    let host = uri
        .host()
        .ok_or_else(|| format!("webhook URL {url:?} has no host"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = uri.port_u16().unwrap_or(443);
    Ok(Resolved {
        address: address(&host, port, &host),
        server_name: host.clone(),
        host,
        port,
        path_and_query: with_timeout(
            &match uri.path_and_query().map(|path| path.as_str()) {
                Some(path) if path.starts_with('/') => path.to_string(),
                Some(query) => format!("/{query}"),
                None => "/".to_string(),
            },
            timeout,
        ),
        url: with_timeout(url, timeout),
    })
}

/// `?timeout=<n>s` appended as kube's rest client appends it.
fn with_timeout(url: &str, timeout: Duration) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}timeout={}s", timeout.as_secs())
}

/// The address of `clientConfig.service` (`proxy.ResolveEndpoint`): the
/// Service's port named by `service.port`, then the first ready address of
/// the first Endpoints subset with a port of the same name. `get` reads a
/// stored object by key.
pub fn resolve_service(
    service: &ServiceReference,
    get: impl Fn(&str) -> Option<Value>,
) -> Result<Resolved, String> {
    resolve_service_with_timeout(service, get, TIMEOUT)
}

/// [`resolve_service`] for a call with this `?timeout=`.
pub fn resolve_service_with_timeout(
    service: &ServiceReference,
    get: impl Fn(&str) -> Option<Value>,
    timeout: Duration,
) -> Result<Resolved, String> {
    let name = &service.name;
    let stored = get(&format!(
        "/registry/services/specs/{}/{name}",
        service.namespace
    ))
    .ok_or_else(|| format!("service {} not found", crate::go::strconv::quote(name)))?;
    let service_type = stored
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    if !matches!(service_type, "ClusterIP" | "LoadBalancer" | "NodePort") {
        return Err(format!("unsupported service type {service_type:?}"));
    }
    let port_name = stored
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|port| port.get("port").and_then(Value::as_u64) == Some(u64::from(service.port)))
        .map(|port| port.get("name").and_then(Value::as_str).unwrap_or_default())
        .ok_or_else(|| {
            format!(
                "no service port {} found for service {}",
                service.port,
                crate::go::strconv::quote(name)
            )
        })?;
    let endpoints = get(&format!(
        "/registry/services/endpoints/{}/{name}",
        service.namespace
    ))
    .ok_or_else(|| format!("endpoints {} not found", crate::go::strconv::quote(name)))?;
    let subsets = endpoints.get("subsets").and_then(Value::as_array);
    for subset in subsets.into_iter().flatten() {
        let Some(ip) = subset
            .get("addresses")
            .and_then(Value::as_array)
            .and_then(|addresses| addresses.first())
            .and_then(|address| address.get("ip"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let port = subset
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|port| port.get("name").and_then(Value::as_str).unwrap_or_default() == port_name)
            .and_then(|port| port.get("port").and_then(Value::as_u64))
            .and_then(|port| u16::try_from(port).ok());
        if let Some(port) = port {
            let server_name = format!("{name}.{}.svc", service.namespace);
            let url = format!("https://{server_name}:{}{}", service.port, service.path);
            return Ok(Resolved {
                address: address(ip, port, &server_name),
                host: ip.to_string(),
                port,
                server_name,
                path_and_query: with_timeout(
                    if service.path.is_empty() {
                        "/"
                    } else {
                        &service.path
                    },
                    timeout,
                ),
                url: with_timeout(&url, timeout),
            });
        }
    }
    Err(format!(
        "no endpoints available for service {}",
        crate::go::strconv::quote(name)
    ))
}

/// Where to send a review: resolved, or why it cannot be.
pub fn resolve(
    endpoint: Option<&WebhookEndpoint>,
    get: impl Fn(&str) -> Option<Value>,
) -> Result<Resolved, String> {
    resolve_with_timeout(endpoint, get, TIMEOUT)
}

/// [`resolve`] for a call with this `?timeout=`.
pub fn resolve_with_timeout(
    endpoint: Option<&WebhookEndpoint>,
    get: impl Fn(&str) -> Option<Value>,
    timeout: Duration,
) -> Result<Resolved, String> {
    match endpoint {
        Some(WebhookEndpoint::Url(url)) => resolve_url_with_timeout(url, timeout),
        // The resolver runs as the rest client dials: its errors read as the POST's.
        Some(WebhookEndpoint::Service(service)) => {
            resolve_service_with_timeout(service, get, timeout).map_err(|error| {
                let url = with_timeout(
                    &format!(
                        "https://{}.{}.svc:{}{}",
                        service.name, service.namespace, service.port, service.path
                    ),
                    timeout,
                );
                format!("Post {}: {error}", crate::go::strconv::quote(&url))
            })
        }
        None => Err("no webhook clientConfig".into()),
    }
}

/// POSTs `review` to the webhook and decodes its JSON answer; errors read
/// as the rest client's (`Post "<url>": <cause>`).
pub async fn post(resolved: &Resolved, ca_bundle: &[u8], review: &Value) -> Result<Value, String> {
    let body = Bytes::from(serde_json::to_vec(review).map_err(|error| error.to_string())?);
    ClientPool::shared()
        .post(
            resolved,
            ca_bundle,
            body,
            TIMEOUT,
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        )
        .await
}

type RequestBody = Full<Bytes>;

/// Headers sent with a call besides the content type and accept (an
/// admission webhook's user agent and credentials).
pub type ExtraHeaders<'a> = &'a [(http::HeaderName, http::HeaderValue)];

/// An open connection to one webhook address.
enum Idle {
    /// One HTTP/2 connection, shared by every call (h2's own handle: each
    /// call drives its stream itself, where hyper's client would spawn a
    /// task per request to send its body).
    Http2(h2::client::SendRequest<Bytes>),
    /// HTTP/1.1 connections not in use.
    Http1(Vec<hyper::client::conn::http1::SendRequest<RequestBody>>),
}

/// At most this many idle HTTP/1.1 connections are kept per address (Go's
/// `MaxIdleConnsPerHost` default is 2; webhooks called in parallel reuse more).
const MAX_IDLE_HTTP1: usize = 32;

/// The connections kept for one `caBundle`.
type KeptFor = (Vec<u8>, Idle);

/// Where a connection goes (`Resolved::address`) and what it trusts,
/// borrowed: a call copies and hashes neither the `caBundle` nor the names.
#[derive(Debug, Clone, Copy)]
struct PoolKey<'a> {
    address: &'a str,
    ca_bundle: &'a [u8],
}

/// Webhook connections kept for reuse, and the TLS client config of each
/// `caBundle` (parsed once).
#[derive(Default)]
pub struct ClientPool {
    tls: Mutex<HashMap<Vec<u8>, Arc<rustls::ClientConfig>>>,
    /// Per address, the connections of each `caBundle`.
    idle: Mutex<HashMap<String, Vec<KeptFor>>>,
    /// A client certificate chain and its key (PEM) shown to every server
    /// (the audit webhook's kubeconfig user); none for the shared pool.
    client_identity: Option<(Vec<u8>, Vec<u8>)>,
}

/// A connection taken for one request.
enum Taken {
    Http2(h2::client::SendRequest<Bytes>),
    Http1(hyper::client::conn::http1::SendRequest<RequestBody>),
}

impl ClientPool {
    /// The process's pool (conversion and admission webhooks share it).
    pub fn shared() -> &'static ClientPool {
        static POOL: OnceLock<ClientPool> = OnceLock::new();
        POOL.get_or_init(ClientPool::default)
    }

    /// A pool of its own whose connections present this client
    /// certificate chain and key (PEM).
    pub fn with_client_identity(cert_chain_pem: Vec<u8>, key_pem: Vec<u8>) -> ClientPool {
        ClientPool {
            client_identity: Some((cert_chain_pem, key_pem)),
            ..ClientPool::default()
        }
    }

    /// POSTs the JSON `body` within `timeout` and decodes the JSON answer;
    /// `deadline_text` is the cause kube's error names when the time runs out.
    pub async fn post(
        &self,
        resolved: &Resolved,
        ca_bundle: &[u8],
        body: Bytes,
        timeout: Duration,
        deadline_text: &str,
    ) -> Result<Value, String> {
        self.post_with_headers(resolved, ca_bundle, body, timeout, deadline_text, &[])
            .await
    }

    /// [`ClientPool::post`] with `headers` besides the content type.
    pub async fn post_with_headers(
        &self,
        resolved: &Resolved,
        ca_bundle: &[u8],
        body: Bytes,
        timeout: Duration,
        deadline_text: &str,
        headers: ExtraHeaders<'_>,
    ) -> Result<Value, String> {
        let failed =
            |cause: String| format!("Post {}: {cause}", crate::go::strconv::quote(&resolved.url));
        let exchange = self.exchange(resolved, ca_bundle, body, headers);
        let (status, answer) = match tokio::time::timeout(timeout, exchange).await {
            Ok(Ok(answered)) => answered,
            Ok(Err(cause)) => return Err(failed(cause)),
            Err(_) => return Err(failed(deadline_text.to_string())),
        };
        if !(200..300).contains(&status) {
            // The rest client reports a Status body's message, else the code.
            let message = serde_json::from_slice::<Value>(&answer)
                .ok()
                .filter(|body| body.get("kind").and_then(Value::as_str) == Some("Status"))
                .and_then(|body| {
                    body.get("message")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                });
            return Err(message.unwrap_or_else(|| {
                format!("the server responded with the status code {status} but did not return more information")
            }));
        }
        serde_json::from_slice(&answer)
            .map_err(|error| format!("couldn't get version/kind; json parse error: {error}"))
    }

    /// POSTs a JSON `body` within `timeout` and answers the status code
    /// (the audit webhook backend, `plugin/pkg/audit/webhook`, reads
    /// nothing else of the answer); errors read as the rest client's.
    pub async fn post_json(
        &self,
        resolved: &Resolved,
        ca_bundle: &[u8],
        body: Bytes,
        timeout: Duration,
    ) -> Result<u16, String> {
        let failed =
            |cause: &str| format!("Post {}: {cause}", crate::go::strconv::quote(&resolved.url));
        match tokio::time::timeout(timeout, self.exchange(resolved, ca_bundle, body, &[])).await {
            Ok(Ok((status, _))) => Ok(status),
            Ok(Err(cause)) => Err(failed(&cause)),
            Err(_) => Err(failed("context deadline exceeded")),
        }
    }

    /// The TLS client of one `caBundle`: it as the only roots, ALPN h2 and
    /// http/1.1.
    fn tls_config(&self, ca_bundle: &[u8]) -> Result<Arc<rustls::ClientConfig>, String> {
        if let Some(config) = self
            .tls
            .lock()
            .ok()
            .and_then(|tls| tls.get(ca_bundle).cloned())
        {
            return Ok(config);
        }
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(ca_bundle) {
            let cert = cert.map_err(|error| format!("caBundle: {error}"))?;
            roots
                .add(cert)
                .map_err(|error| format!("caBundle: {error}"))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| error.to_string())?
            .with_root_certificates(roots);
        let mut config = match &self.client_identity {
            None => builder.with_no_client_auth(),
            Some((chain, key)) => {
                let chain = CertificateDer::pem_slice_iter(chain)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|error| format!("client certificate: {error}"))?;
                let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(key)
                    .map_err(|error| format!("client key: {error}"))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|error| format!("client certificate: {error}"))?
            }
        };
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let config = Arc::new(config);
        if let Ok(mut tls) = self.tls.lock() {
            tls.insert(ca_bundle.to_vec(), config.clone());
        }
        Ok(config)
    }

    fn take(&self, key: PoolKey<'_>) -> Option<Taken> {
        let mut idle = self.idle.lock().ok()?;
        let (_, kept) = idle
            .get_mut(key.address)?
            .iter_mut()
            .find(|(ca_bundle, _)| ca_bundle.as_slice() == key.ca_bundle)?;
        match kept {
            // A closed connection shows at `ready`, and is replaced then.
            Idle::Http2(sender) => Some(Taken::Http2(sender.clone())),
            Idle::Http1(senders) => {
                while let Some(sender) = senders.pop() {
                    if !sender.is_closed() && sender.is_ready() {
                        return Some(Taken::Http1(sender));
                    }
                }
                None
            }
        }
    }

    /// Keeps `kept` for `key`'s address and `caBundle`, in place of what
    /// was kept there (`replace`), or only where nothing is.
    fn keep(&self, key: PoolKey<'_>, kept: Idle, replace: bool) -> Option<Idle> {
        let mut idle = self.idle.lock().ok()?;
        let entries = idle.entry(key.address.to_string()).or_default();
        match entries
            .iter_mut()
            .find(|(ca_bundle, _)| ca_bundle.as_slice() == key.ca_bundle)
        {
            Some((_, existing)) if replace => Some(std::mem::replace(existing, kept)),
            Some(_) => Some(kept),
            None => {
                entries.push((key.ca_bundle.to_vec(), kept));
                None
            }
        }
    }

    fn give_back(
        &self,
        key: PoolKey<'_>,
        sender: hyper::client::conn::http1::SendRequest<RequestBody>,
    ) {
        let Ok(mut idle) = self.idle.lock() else {
            return;
        };
        let found = idle.get_mut(key.address).and_then(|entries| {
            entries
                .iter_mut()
                .find(|(ca_bundle, _)| ca_bundle.as_slice() == key.ca_bundle)
        });
        match found {
            Some((_, Idle::Http1(senders))) if senders.len() < MAX_IDLE_HTTP1 => {
                senders.push(sender);
            }
            Some(_) => {}
            None => {
                drop(idle);
                self.keep(key, Idle::Http1(vec![sender]), false);
            }
        }
    }

    /// A new connection; an HTTP/2 one goes into the pool at once.
    async fn connect(
        &self,
        key: PoolKey<'_>,
        resolved: &Resolved,
        ca_bundle: &[u8],
    ) -> Result<Taken, String> {
        let config = self.tls_config(ca_bundle)?;
        let server_name = ServerName::try_from(resolved.server_name.clone())
            .map_err(|error| format!("invalid server name {:?}: {error}", resolved.server_name))?;
        let tcp = tokio::net::TcpStream::connect((resolved.host.as_str(), resolved.port))
            .await
            .map_err(|error| {
                format!(
                    "dial tcp {}:{}: {}",
                    resolved.host,
                    resolved.port,
                    go_dial_error(&error)
                )
            })?;
        let _ = tcp.set_nodelay(true);
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(server_name, tcp)
            .await
            .map_err(|error| format!("tls: {error}"))?;
        let http2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
        if http2 {
            // hyper's client settings: windows of 2 MiB per stream and
            // 5 MiB per connection, no server push.
            let (sender, connection) = h2::client::Builder::new()
                .initial_window_size(2 * 1024 * 1024)
                .initial_connection_window_size(5 * 1024 * 1024)
                .enable_push(false)
                .handshake::<_, Bytes>(tls)
                .await
                .map_err(|error| error.to_string())?;
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::debug!(%error, "webhook HTTP/2 connection ended");
                }
            });
            self.keep(key, Idle::Http2(sender.clone()), true);
            return Ok(Taken::Http2(sender));
        }
        let io = hyper_util::rt::TokioIo::new(tls);
        let (sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|error| error.to_string())?;
        tokio::spawn(connection);
        Ok(Taken::Http1(sender))
    }

    /// One request, on a kept connection when there is one (retried once on
    /// a new connection when a kept one turns out closed): (status, body).
    async fn exchange(
        &self,
        resolved: &Resolved,
        ca_bundle: &[u8],
        body: Bytes,
        headers: ExtraHeaders<'_>,
    ) -> Result<(u16, Bytes), String> {
        let key = PoolKey {
            address: &resolved.address,
            ca_bundle,
        };
        if let Some(taken) = self.take(key) {
            match self.send(key, taken, resolved, body.clone(), headers).await {
                Ok(answered) => return Ok(answered),
                Err((true, _)) => {}
                Err((false, error)) => return Err(error),
            }
        }
        let taken = self.connect(key, resolved, ca_bundle).await?;
        self.send(key, taken, resolved, body, headers)
            .await
            .map_err(|(_, error)| error)
    }

    /// Sends on `taken`; an error says whether nothing was answered on a
    /// connection that may just have been closed (worth a retry).
    async fn send(
        &self,
        key: PoolKey<'_>,
        taken: Taken,
        resolved: &Resolved,
        body: Bytes,
        headers: ExtraHeaders<'_>,
    ) -> Result<(u16, Bytes), (bool, String)> {
        let authority = format!("{}:{}", resolved.server_name, resolved.port);
        let retry = |error: hyper::Error| {
            (
                error.is_canceled() || error.is_closed() || error.is_incomplete_message(),
                error.to_string(),
            )
        };
        let build = |uri: String| {
            let mut request = http::Request::post(uri)
                .header(http::header::CONTENT_TYPE, "application/json")
                .header(http::header::ACCEPT, "application/json, */*")
                .body(Full::new(body.clone()))
                .map_err(|error| (false, error.to_string()))?;
            append(request.headers_mut(), headers);
            Ok::<_, (bool, String)>(request)
        };
        let (response, sender) = match taken {
            Taken::Http2(sender) => {
                let uri = format!("https://{authority}{}", resolved.path_and_query);
                return send_http2(sender, uri, body, headers).await;
            }
            Taken::Http1(mut sender) => {
                let mut request = build(resolved.path_and_query.clone())?;
                let host = http::HeaderValue::from_str(&authority)
                    .map_err(|error| (false, error.to_string()))?;
                request.headers_mut().insert(http::header::HOST, host);
                sender.ready().await.map_err(retry)?;
                let response = sender.send_request(request).await.map_err(retry)?;
                (response, Some(sender))
            }
        };
        let status = response.status().as_u16();
        let answer = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|error| (false, error.to_string()))?
            .to_bytes();
        if let Some(sender) = sender {
            self.give_back(key, sender);
        }
        Ok((status, answer))
    }
}

/// One request on an HTTP/2 connection, its body sent and its answer read
/// by the calling task: (status, body), or whether nothing was answered on
/// a connection that may have just closed (worth a retry) and why.
async fn send_http2(
    sender: h2::client::SendRequest<Bytes>,
    uri: String,
    body: Bytes,
    headers: ExtraHeaders<'_>,
) -> Result<(u16, Bytes), (bool, String)> {
    // Refused before the request left: the connection is gone or going.
    let unsent = |error: h2::Error| (true, error.to_string());
    let unanswered = |error: h2::Error| {
        let retry = error.is_go_away()
            || error.is_io()
            || error.reason() == Some(h2::Reason::REFUSED_STREAM);
        (retry, error.to_string())
    };
    let mut sender = sender.ready().await.map_err(unsent)?;
    let mut request = http::Request::post(uri)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, */*")
        .body(())
        .map_err(|error| (false, error.to_string()))?;
    append(request.headers_mut(), headers);
    let end_of_stream = body.is_empty();
    let (response, mut stream) = sender
        .send_request(request, end_of_stream)
        .map_err(unsent)?;
    if !end_of_stream {
        // Buffered by h2 and sent as the windows allow.
        stream.send_data(body, true).map_err(unanswered)?;
    }
    let response = response.await.map_err(unanswered)?;
    let status = response.status().as_u16();
    let mut received = response.into_body();
    let mut answer = bytes::BytesMut::new();
    while let Some(chunk) = received.data().await {
        let chunk = chunk.map_err(|error| (false, error.to_string()))?;
        let _ = received.flow_control().release_capacity(chunk.len());
        if answer.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err((false, "length limit exceeded".to_string()));
        }
        answer.extend_from_slice(&chunk);
    }
    Ok((status, answer.freeze()))
}

/// Adds `headers` to a request's (several values of one name are all sent).
fn append(map: &mut http::HeaderMap, headers: ExtraHeaders<'_>) {
    for (name, value) in headers {
        map.append(name.clone(), value.clone());
    }
}

/// Go's text of a failed dial (`connect: connection refused`), else the
/// system's.
fn go_dial_error(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".into(),
        std::io::ErrorKind::TimedOut => "i/o timeout".into(),
        _ => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls_resolve_to_their_host_with_kubes_timeout() {
        let resolved = resolve_url("https://127.0.0.1:8443/convert").expect("resolves");
        assert_eq!(resolved.host, "127.0.0.1");
        assert_eq!(resolved.port, 8443);
        assert_eq!(resolved.path_and_query, "/convert?timeout=30s");
        assert_eq!(resolved.url, "https://127.0.0.1:8443/convert?timeout=30s");
        let resolved = resolve_url("https://hooks.example.com?x=1").expect("resolves");
        assert_eq!(
            (resolved.port, resolved.path_and_query.as_str()),
            (443, "/?x=1&timeout=30s")
        );
        assert!(resolve_url("http://hooks.example.com/").is_err());
    }

    #[test]
    fn services_resolve_through_their_endpoints() {
        let service = ServiceReference {
            namespace: "hooks".into(),
            name: "conv".into(),
            path: "/convert".into(),
            port: 443,
        };
        let objects = |key: &str| match key {
            "/registry/services/specs/hooks/conv" => Some(json!({"spec": {"ports": [
                {"name": "metrics", "port": 9090},
                {"name": "https", "port": 443, "targetPort": 8443},
            ]}})),
            "/registry/services/endpoints/hooks/conv" => Some(json!({"subsets": [
                {"addresses": [], "ports": [{"name": "https", "port": 1}]},
                {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "metrics", "port": 9090}, {"name": "https", "port": 8443}]},
            ]})),
            _ => None,
        };
        let resolved = resolve_service(&service, objects).expect("resolves");
        assert_eq!((resolved.host.as_str(), resolved.port), ("127.0.0.1", 8443));
        assert_eq!(resolved.server_name, "conv.hooks.svc");
        assert_eq!(
            resolved.url,
            "https://conv.hooks.svc:443/convert?timeout=30s"
        );

        let missing = resolve_service(&service, |_| None).expect_err("no service");
        assert_eq!(missing, r#"service "conv" not found"#);
        let other_port = ServiceReference {
            port: 80,
            ..service.clone()
        };
        assert_eq!(
            resolve_service(&other_port, objects).expect_err("no port"),
            r#"no service port 80 found for service "conv""#
        );
        let no_endpoints = |key: &str| {
            objects(key)
                .filter(|_| key.contains("/specs/"))
                .or_else(|| key.contains("/endpoints/").then(|| json!({"subsets": []})))
        };
        assert_eq!(
            resolve_service(&service, no_endpoints).expect_err("no endpoints"),
            r#"no endpoints available for service "conv""#
        );
    }
}
