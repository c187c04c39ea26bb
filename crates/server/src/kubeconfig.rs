//! `<data-dir>/admin.kubeconfig`: a kubeconfig for the admin client
//! certificate, in the shape `kubectl config view --raw` prints and kubeadm
//! writes (`cmd/kubeadm/app/util/kubeconfig/kubeconfig.go`,
//! `CreateWithCerts`), with the certificates embedded as `*-data` fields so
//! the file works alone with kubectl, client-go, kube-rs and the Python client.
//!
//! The YAML is written by hand; every value is either base64, a fixed name or
//! a double-quoted URL, so no escaping is needed.

use std::fs;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::pki::{self, Pki, PkiError};

/// File name under the data directory.
pub const KUBECONFIG_FILE: &str = "admin.kubeconfig";
/// Names used inside the kubeconfig.
pub const CLUSTER_NAME: &str = "ferrokube";
pub const USER_NAME: &str = "ferrokube-admin";
pub const CONTEXT_NAME: &str = "ferrokube";

/// Errors of [`write`].
#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    #[error("writing kubeconfig {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
}

/// `https://HOST:PORT` for a listener bound to `bind`: the loopback address
/// of the same family for a wildcard bind, IPv6 in brackets.
pub fn server_url(bind: SocketAddr) -> String {
    let host = match bind.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    match host {
        IpAddr::V4(ip) => format!("https://{ip}:{}", bind.port()),
        IpAddr::V6(ip) => format!("https://[{ip}]:{}", bind.port()),
    }
}

/// The kubeconfig text for `pki`'s admin credentials and `server`.
pub fn render(pki: &Pki, server: &str) -> String {
    let b64 = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem.as_bytes());
    let ca = b64(&pki.ca_cert_pem);
    let cert = b64(&pki.admin_cert_pem);
    let key = b64(&pki.admin_key_pem);
    let server = yaml_double_quoted(server);
    format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - cluster:\n\
         \x20   certificate-authority-data: {ca}\n\
         \x20   server: {server}\n\
         \x20 name: {CLUSTER_NAME}\n\
         contexts:\n\
         - context:\n\
         \x20   cluster: {CLUSTER_NAME}\n\
         \x20   user: {USER_NAME}\n\
         \x20 name: {CONTEXT_NAME}\n\
         current-context: {CONTEXT_NAME}\n\
         preferences: {{}}\n\
         users:\n\
         - name: {USER_NAME}\n\
         \x20 user:\n\
         \x20   client-certificate-data: {cert}\n\
         \x20   client-key-data: {key}\n"
    )
}

/// A YAML double-quoted scalar.
fn yaml_double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Writes `<data_dir>/admin.kubeconfig` (mode 0600, it holds the admin
/// key) for a server listening on `bind`, and returns its path. An
/// up-to-date file is left untouched.
pub fn write(data_dir: &Path, pki: &Pki, bind: SocketAddr) -> Result<PathBuf, KubeconfigError> {
    let path = data_dir.join(KUBECONFIG_FILE);
    let text = render(pki, &server_url(bind));
    if fs::read(&path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(path);
    }
    match pki::write_file(&path, text.as_bytes(), 0o600) {
        Ok(()) => Ok(path),
        Err(PkiError::Write { path, source }) => Err(KubeconfigError::Write { path, source }),
        Err(other) => Err(KubeconfigError::Write {
            path,
            source: io::Error::other(other.to_string()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn setup() -> (tempfile::TempDir, Pki) {
        let dir = tempfile::tempdir().expect("tempdir");
        let pki = pki::ensure(&dir.path().join("pki"), &[]).expect("pki");
        (dir, pki)
    }

    #[test]
    fn server_urls() {
        let url = |s: &str| server_url(s.parse().expect("addr"));
        assert_eq!(url("0.0.0.0:6443"), "https://127.0.0.1:6443");
        assert_eq!(url("127.0.0.1:8443"), "https://127.0.0.1:8443");
        assert_eq!(url("10.1.2.3:6443"), "https://10.1.2.3:6443");
        assert_eq!(url("[::]:6443"), "https://[::1]:6443");
        assert_eq!(url("[::1]:6443"), "https://[::1]:6443");
        assert_eq!(url("[fd00::5]:1"), "https://[fd00::5]:1");
    }

    /// Pulls `key: value` out of the rendered text (first occurrence).
    fn field<'a>(text: &'a str, key: &str) -> &'a str {
        text.lines()
            .find_map(|l| l.trim_start().strip_prefix(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("no {key} in kubeconfig"))
    }

    #[test]
    fn kubeconfig_has_what_kubectl_needs() {
        let (dir, pki) = setup();
        let path = write(dir.path(), &pki, "0.0.0.0:6443".parse().expect("addr")).expect("write");
        assert_eq!(path, dir.path().join(KUBECONFIG_FILE));
        let text = fs::read_to_string(&path).expect("read");
        for needle in [
            "apiVersion: v1\n",
            "kind: Config\n",
            "current-context: ferrokube\n",
            "    server: \"https://127.0.0.1:6443\"\n",
            "  name: ferrokube\n",
            "    cluster: ferrokube\n",
            "    user: ferrokube-admin\n",
            "- name: ferrokube-admin\n",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        let decode = |key: &str| {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(field(&text, key))
                .expect("base64");
            String::from_utf8(raw).expect("utf8")
        };
        assert_eq!(decode("certificate-authority-data"), pki.ca_cert_pem);
        assert_eq!(decode("client-certificate-data"), pki.admin_cert_pem);
        assert_eq!(decode("client-key-data"), pki.admin_key_pem);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).expect("stat").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Rewriting with the same inputs leaves the file as it is.
        write(dir.path(), &pki, "0.0.0.0:6443".parse().expect("addr")).expect("rewrite");
        assert_eq!(fs::read_to_string(&path).expect("read"), text);
        // A new bind address is picked up.
        write(dir.path(), &pki, "[::]:7443".parse().expect("addr")).expect("rewrite");
        assert!(fs::read_to_string(&path)
            .expect("read")
            .contains("server: \"https://[::1]:7443\""));
    }

    /// Every kubectl available here: the one on PATH and the versioned
    /// binaries next to it (`kubectl.1.27` ...), when present.
    fn kubectls() -> Vec<PathBuf> {
        let Some(on_path) = std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("kubectl"))
                .find(|p| p.is_file())
        }) else {
            return Vec::new();
        };
        let mut out = vec![on_path.clone()];
        if let Some(dir) = fs::canonicalize(&on_path)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
        {
            for minor in 27..=33 {
                let p = dir.join(format!("kubectl.1.{minor}"));
                if p.is_file() {
                    out.push(p);
                }
            }
        }
        out
    }

    #[test]
    fn kubectl_parses_the_kubeconfig() {
        let kubectls = kubectls();
        if kubectls.is_empty() {
            eprintln!("kubectl not on PATH; skipping");
            return;
        }
        let (dir, pki) = setup();
        let path = write(dir.path(), &pki, "[::]:6443".parse().expect("addr")).expect("write");
        for kubectl in kubectls {
            let query = |expr: &str| {
                let out = Command::new(&kubectl)
                    .args(["config", "view", "--kubeconfig"])
                    .arg(&path)
                    .args(["--raw", "-o", &format!("jsonpath={expr}")])
                    .env_remove("KUBECONFIG")
                    .output()
                    .expect("run kubectl");
                assert!(
                    out.status.success(),
                    "{}: {}",
                    kubectl.display(),
                    String::from_utf8_lossy(&out.stderr)
                );
                String::from_utf8_lossy(&out.stdout).into_owned()
            };
            assert_eq!(
                query("{.users[0].name}"),
                USER_NAME,
                "{}",
                kubectl.display()
            );
            assert_eq!(query("{.clusters[0].cluster.server}"), "https://[::1]:6443");
            assert_eq!(query("{.current-context}"), CONTEXT_NAME);
        }
    }

    /// A minimal HTTPS server on `server_config`: `/version` for the admin
    /// certificate, 401 otherwise. Records whether each connection used h2.
    mod live {
        use super::super::*;
        use crate::authn::{user_from_peer_certificate, UserInfo};
        use crate::tls::{negotiated_h2, peer_leaf_certificate, server_config};
        use bytes::Bytes;
        use http_body_util::Full;
        use hyper::{Request, Response, StatusCode};
        use hyper_util::rt::{TokioExecutor, TokioIo};
        use std::convert::Infallible;
        use std::sync::{Arc, Mutex};

        pub const VERSION_JSON: &str = r#"{"major":"1","minor":"34","gitVersion":"v1.34.0","gitCommit":"0000000000000000000000000000000000000000","gitTreeState":"clean","buildDate":"2025-08-27T00:00:00Z","goVersion":"go1.24.6","compiler":"gc","platform":"linux/amd64"}"#;

        /// One entry per connection: (used h2, user from the certificate).
        pub type Seen = Arc<Mutex<Vec<(bool, Option<UserInfo>)>>>;

        pub struct Server {
            pub addr: SocketAddr,
            pub seen: Seen,
            task: tokio::task::JoinHandle<()>,
        }

        impl Drop for Server {
            fn drop(&mut self) {
                self.task.abort();
            }
        }

        pub async fn start(pki: &Pki, bind: &str) -> Server {
            let config = server_config(pki, &[]).expect("tls config");
            let acceptor = tokio_rustls::TlsAcceptor::from(config);
            let listener = tokio::net::TcpListener::bind(bind).await.expect("bind");
            let addr = listener.local_addr().expect("addr");
            let seen = Arc::new(Mutex::new(Vec::new()));
            let seen2 = seen.clone();
            let task = tokio::spawn(async move {
                while let Ok((tcp, _)) = listener.accept().await {
                    let acceptor = acceptor.clone();
                    let seen = seen2.clone();
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let conn = tls.get_ref().1;
                        let user = peer_leaf_certificate(conn)
                            .and_then(|c| user_from_peer_certificate(c.as_ref()));
                        if let Ok(mut s) = seen.lock() {
                            s.push((negotiated_h2(conn), user.clone()));
                        }
                        let svc = hyper::service::service_fn(
                            move |req: Request<hyper::body::Incoming>| {
                                let admin =
                                    user.as_ref().is_some_and(|u| u.name == "ferrokube-admin");
                                async move {
                                    let (status, body) = match (admin, req.uri().path()) {
                                        (false, _) => (StatusCode::UNAUTHORIZED, "{}".to_string()),
                                        (true, "/version") => {
                                            (StatusCode::OK, VERSION_JSON.to_string())
                                        }
                                        (true, _) => (StatusCode::NOT_FOUND, "{}".to_string()),
                                    };
                                    Ok::<_, Infallible>(
                                        Response::builder()
                                            .status(status)
                                            .header("content-type", "application/json")
                                            .body(Full::new(Bytes::from(body)))
                                            .unwrap_or_default(),
                                    )
                                }
                            },
                        );
                        let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                            .serve_connection(TokioIo::new(tls), svc)
                            .await;
                    });
                }
            });
            Server { addr, seen, task }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn kubectl_talks_to_a_server_with_this_kubeconfig() {
        let Some(kubectl) = kubectls().into_iter().next() else {
            eprintln!("kubectl not on PATH; skipping");
            return;
        };
        let (dir, pki) = setup();
        let server = live::start(&pki, "127.0.0.1:0").await;
        let bind: SocketAddr = format!("0.0.0.0:{}", server.addr.port())
            .parse()
            .expect("addr");
        let path = write(dir.path(), &pki, bind).expect("write");
        let out = tokio::task::spawn_blocking(move || {
            Command::new(kubectl)
                .args(["get", "--raw", "/version", "--kubeconfig"])
                .arg(&path)
                .env_remove("KUBECONFIG")
                .output()
        })
        .await
        .expect("join")
        .expect("run kubectl");
        assert!(
            out.status.success(),
            "kubectl: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("v1.34.0"));
        let seen = server.seen.lock().expect("lock").clone();
        assert!(!seen.is_empty());
        // client-go negotiates HTTP/2 and presents the admin certificate.
        assert!(
            seen.iter().all(|(h2, user)| *h2 && user.is_some()),
            "{seen:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn kube_rs_talks_to_a_server_with_this_kubeconfig() {
        let (dir, pki) = setup();
        let server = live::start(&pki, "[::1]:0").await;
        let path = write(dir.path(), &pki, server.addr).expect("write");
        let kubeconfig = kube::config::Kubeconfig::read_from(&path).expect("kube-rs reads it");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("kube-rs config");
        assert_eq!(
            config.cluster_url.to_string(),
            format!("https://[::1]:{}/", server.addr.port())
        );
        let client = kube::Client::try_from(config).expect("client");
        let info = client.apiserver_version().await.expect("GET /version");
        assert_eq!(info.git_version, "v1.34.0");
        let seen = server.seen.lock().expect("lock").clone();
        assert!(seen.iter().all(|(_, user)| user.is_some()), "{seen:?}");
    }
}
