//! The few kubeconfig fields a benchmark client needs: the current (or a
//! chosen) context's cluster URL and CA, and its user's client certificate
//! or bearer token. Both the embedded `*-data` fields and the file-path
//! forms are read (kind and kubeadm embed; minikube points at files).

use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use serde_json::Value;

use crate::yaml;

/// What to authenticate with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// PEM client certificate chain and key.
    ClientCert { cert_pem: Vec<u8>, key_pem: Vec<u8> },
    /// `Authorization: Bearer`.
    Token(String),
    /// Nothing (anonymous).
    None,
}

/// The resolved connection settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kubeconfig {
    pub context: String,
    /// `https://host:port` with an optional path prefix.
    pub server: String,
    /// PEM CA bundle; `None` means the system roots, which this tool does
    /// not carry, so such servers need `insecure_skip_tls_verify`.
    pub ca_pem: Option<Vec<u8>>,
    pub insecure_skip_tls_verify: bool,
    /// `tls-server-name`: the name to verify instead of the URL's host.
    pub tls_server_name: Option<String>,
    pub credentials: Credentials,
    /// The context's namespace, if any.
    pub namespace: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("parsing kubeconfig: {0}")]
    Yaml(#[from] yaml::YamlError),
    #[error("kubeconfig: {0}")]
    Invalid(String),
}

fn invalid(message: impl Into<String>) -> KubeconfigError {
    KubeconfigError::Invalid(message.into())
}

/// Reads and resolves the kubeconfig at `path`; `context` overrides
/// `current-context`.
pub fn load(path: &Path, context: Option<&str>) -> Result<Kubeconfig, KubeconfigError> {
    let text = fs::read_to_string(path).map_err(|source| KubeconfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse(&text, base, context)
}

/// Resolves kubeconfig `text`; relative file paths are taken from `base`
/// (the kubeconfig's directory, as kubectl does).
pub fn parse(
    text: &str,
    base: &Path,
    context: Option<&str>,
) -> Result<Kubeconfig, KubeconfigError> {
    let doc = yaml::parse(text)?;
    let context_name = match context {
        Some(name) => name.to_string(),
        None => str_at(&doc, "current-context")
            .filter(|s| !s.is_empty())
            .ok_or_else(|| invalid("no current-context (pass --context)"))?
            .to_string(),
    };
    let named = |list: &str, name: &str, field: &str| -> Result<Value, KubeconfigError> {
        doc.get(list)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .find(|item| str_at(item, "name") == Some(name))
            .map(|item| item.get(field).cloned().unwrap_or(Value::Null))
            .ok_or_else(|| invalid(format!("no {field} named {name:?} in {list}")))
    };
    let ctx = named("contexts", &context_name, "context")?;
    let cluster_name = str_at(&ctx, "cluster")
        .ok_or_else(|| invalid(format!("context {context_name:?} names no cluster")))?;
    let cluster = named("clusters", cluster_name, "cluster")?;
    let user = match str_at(&ctx, "user") {
        Some(name) if !name.is_empty() => named("users", name, "user")?,
        _ => Value::Null,
    };

    let server = str_at(&cluster, "server")
        .ok_or_else(|| invalid(format!("cluster {cluster_name:?} has no server")))?
        .trim_end_matches('/')
        .to_string();
    if !server.starts_with("https://") {
        return Err(invalid(format!(
            "server {server:?}: only https:// servers are supported"
        )));
    }
    let ca_pem = data_or_file(
        &cluster,
        "certificate-authority-data",
        "certificate-authority",
        base,
    )?;
    let insecure_skip_tls_verify = str_at(&cluster, "insecure-skip-tls-verify") == Some("true");
    let tls_server_name = str_at(&cluster, "tls-server-name").map(str::to_string);

    let cert = data_or_file(&user, "client-certificate-data", "client-certificate", base)?;
    let key = data_or_file(&user, "client-key-data", "client-key", base)?;
    let credentials = match (cert, key) {
        (Some(cert_pem), Some(key_pem)) => Credentials::ClientCert { cert_pem, key_pem },
        (Some(_), None) | (None, Some(_)) => {
            return Err(invalid(
                "user has a client certificate without a key or the reverse",
            ))
        }
        (None, None) => {
            if let Some(token) = str_at(&user, "token").filter(|t| !t.is_empty()) {
                Credentials::Token(token.to_string())
            } else if let Some(file) = str_at(&user, "tokenFile") {
                let path = base.join(file);
                let token = fs::read_to_string(&path)
                    .map_err(|source| KubeconfigError::Read { path, source })?;
                Credentials::Token(token.trim().to_string())
            } else if user.get("exec").is_some() || user.get("auth-provider").is_some() {
                return Err(invalid(
                    "exec and auth-provider users are not supported; use a certificate or token",
                ));
            } else {
                Credentials::None
            }
        }
    };
    Ok(Kubeconfig {
        context: context_name,
        server,
        ca_pem,
        insecure_skip_tls_verify,
        tls_server_name,
        credentials,
        namespace: str_at(&ctx, "namespace").map(str::to_string),
    })
}

/// The string at `key` in the mapping `node`; `None` when missing, null or
/// a collection (every YAML scalar is a string here, see [`yaml`]).
fn str_at<'a>(node: &'a Value, key: &str) -> Option<&'a str> {
    node.get(key).and_then(Value::as_str)
}

/// The base64 `data_key` of `node`, or else the file that `file_key` names.
fn data_or_file(
    node: &Value,
    data_key: &str,
    file_key: &str,
    base: &Path,
) -> Result<Option<Vec<u8>>, KubeconfigError> {
    if let Some(data) = str_at(node, data_key).filter(|s| !s.is_empty()) {
        let compact: String = data.chars().filter(|c| !c.is_whitespace()).collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map_err(|e| invalid(format!("{data_key}: {e}")))?;
        return Ok(Some(bytes));
    }
    if let Some(file) = str_at(node, file_key).filter(|s| !s.is_empty()) {
        let path = base.join(file);
        return fs::read(&path)
            .map(Some)
            .map_err(|source| KubeconfigError::Read { path, source });
    }
    Ok(None)
}

/// Host, port and path prefix of an `https://` URL. IPv6 hosts keep their
/// brackets out: `https://[::1]:6443` gives `::1`.
pub fn split_server(server: &str) -> Result<(String, u16, String), KubeconfigError> {
    let rest = server
        .strip_prefix("https://")
        .ok_or_else(|| invalid(format!("server {server:?} is not https://")))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let end = v6
            .find(']')
            .ok_or_else(|| invalid(format!("bad server {server:?}")))?;
        let port = v6[end + 1..].strip_prefix(':');
        (&v6[..end], port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => p
            .parse()
            .map_err(|_| invalid(format!("bad port in server {server:?}")))?,
        None => 443,
    };
    if host.is_empty() {
        return Err(invalid(format!("no host in server {server:?}")));
    }
    Ok((host.to_string(), port, path.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    /// The shape ferrokube and kubeadm write.
    fn sample() -> String {
        format!(
            "apiVersion: v1\n\
             kind: Config\n\
             clusters:\n\
             - cluster:\n\
             \x20   certificate-authority-data: {ca}\n\
             \x20   server: \"https://127.0.0.1:6443\"\n\
             \x20 name: ferrokube\n\
             - cluster:\n\
             \x20   server: https://other:1\n\
             \x20   insecure-skip-tls-verify: true\n\
             \x20 name: other\n\
             contexts:\n\
             - context:\n\
             \x20   cluster: ferrokube\n\
             \x20   user: ferrokube-admin\n\
             \x20 name: ferrokube\n\
             - context:\n\
             \x20   cluster: other\n\
             \x20   user: tok\n\
             \x20   namespace: ns1\n\
             \x20 name: other\n\
             current-context: ferrokube\n\
             preferences: {{}}\n\
             users:\n\
             - name: ferrokube-admin\n\
             \x20 user:\n\
             \x20   client-certificate-data: {cert}\n\
             \x20   client-key-data: {key}\n\
             - name: tok\n\
             \x20 user:\n\
             \x20   token: abc.def\n",
            ca = b64("CA PEM"),
            cert = b64("CERT PEM"),
            key = b64("KEY PEM"),
        )
    }

    #[test]
    fn current_context_with_embedded_certificates() {
        let kc = parse(&sample(), Path::new("/nowhere"), None).expect("parse");
        assert_eq!(kc.context, "ferrokube");
        assert_eq!(kc.server, "https://127.0.0.1:6443");
        assert_eq!(kc.ca_pem.as_deref(), Some(&b"CA PEM"[..]));
        assert!(!kc.insecure_skip_tls_verify);
        assert_eq!(
            kc.credentials,
            Credentials::ClientCert {
                cert_pem: b"CERT PEM".to_vec(),
                key_pem: b"KEY PEM".to_vec()
            }
        );
        assert_eq!(kc.namespace, None);
    }

    #[test]
    fn other_context_with_token() {
        let kc = parse(&sample(), Path::new("/nowhere"), Some("other")).expect("parse");
        assert_eq!(kc.server, "https://other:1");
        assert!(kc.insecure_skip_tls_verify);
        assert_eq!(kc.ca_pem, None);
        assert_eq!(kc.credentials, Credentials::Token("abc.def".into()));
        assert_eq!(kc.namespace.as_deref(), Some("ns1"));
        let err = parse(&sample(), Path::new("/nowhere"), Some("missing")).expect_err("missing");
        assert!(err.to_string().contains("missing"), "{err}");
    }

    #[test]
    fn file_paths_are_relative_to_the_kubeconfig() {
        let dir = std::env::temp_dir().join(format!("fkb-kc-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("mkdir");
        fs::write(dir.join("ca.crt"), "FILE CA").expect("write");
        fs::write(dir.join("client.crt"), "FILE CERT").expect("write");
        fs::write(dir.join("client.key"), "FILE KEY").expect("write");
        let text = "clusters:\n- name: mk\n  cluster:\n    certificate-authority: ca.crt\n    server: https://192.168.49.2:8443\ncontexts:\n- name: mk\n  context:\n    cluster: mk\n    user: mk\ncurrent-context: mk\nusers:\n- name: mk\n  user:\n    client-certificate: client.crt\n    client-key: client.key\n";
        let kc = parse(text, &dir, None).expect("parse");
        assert_eq!(kc.ca_pem.as_deref(), Some(&b"FILE CA"[..]));
        assert_eq!(
            kc.credentials,
            Credentials::ClientCert {
                cert_pem: b"FILE CERT".to_vec(),
                key_pem: b"FILE KEY".to_vec()
            }
        );
        fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn rejects_what_it_cannot_use() {
        let http = "clusters:\n- name: c\n  cluster:\n    server: http://x\ncontexts:\n- name: c\n  context:\n    cluster: c\ncurrent-context: c\n";
        assert!(parse(http, Path::new("."), None).is_err());
        let exec = "clusters:\n- name: c\n  cluster:\n    server: https://x\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    exec:\n      command: aws\n";
        let err = parse(exec, Path::new("."), None).expect_err("exec");
        assert!(err.to_string().contains("exec"), "{err}");
        assert!(parse("kind: Config\n", Path::new("."), None).is_err());
    }

    #[test]
    fn splits_server_urls() {
        let split = |s: &str| split_server(s).expect("split");
        assert_eq!(
            split("https://127.0.0.1:6443"),
            ("127.0.0.1".into(), 6443, "".into())
        );
        assert_eq!(
            split("https://[::1]:7443/"),
            ("::1".into(), 7443, "".into())
        );
        assert_eq!(
            split("https://example.com"),
            ("example.com".into(), 443, "".into())
        );
        assert_eq!(
            split("https://h:1/prefix/k8s/"),
            ("h".into(), 1, "/prefix/k8s".into())
        );
        assert!(split_server("https://h:x").is_err());
        assert!(split_server("http://h:1").is_err());
    }
}
