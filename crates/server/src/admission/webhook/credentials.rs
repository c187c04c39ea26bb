//! What the API server presents to admission webhooks: the
//! ValidatingAdmissionWebhook and MutatingAdmissionWebhook plugin
//! configurations (`plugin/webhook/config`: `WebhookAdmissionConfiguration`
//! of apiserver.config.k8s.io/v1 or v1alpha1, whose `kubeConfigFile` must
//! be an absolute path) and kube's `defaultAuthenticationInfoResolver`
//! (`apiserver/pkg/util/webhook/authentication.go`): the kubeconfig's user
//! named after the webhook's `host:port` (a service's
//! `<name>.<namespace>.svc:<port>`), else a `*.`-prefixed suffix of it, the
//! same two without the port when it is 443, the user `*`, the current
//! context's user, or nobody. A user's bearer token (from `tokenFile`, read
//! again once a minute as client-go's cached token source does, else
//! `token`), its
//! `username`/`password`, its client certificate and key, and its
//! impersonation (`as`, `as-groups`, `as-user-extra`) go with every call;
//! a token file that cannot be read fails the calls, as kube's client
//! construction does (`could not get REST client: open …`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use http::{HeaderName, HeaderValue};
use serde_json::Value;

use crate::audit::webhook_config::{context_name, named, pem};
use crate::crd::webhook_client::ClientPool;

/// The configuration kinds kube decodes.
const KINDS: &[(&str, &str)] = &[
    (
        "apiserver.config.k8s.io/v1",
        "WebhookAdmissionConfiguration",
    ),
    (
        "apiserver.config.k8s.io/v1alpha1",
        "WebhookAdmissionConfiguration",
    ),
    ("apiserver.config.k8s.io/v1alpha1", "WebhookAdmission"),
];

/// How long a token read from a `tokenFile` is used before the file is
/// read again (client-go's `cachingTokenSource` period).
const TOKEN_FILE_PERIOD: Duration = Duration::from_secs(60);

/// `setGlobalDefaults`: the user agent of admission webhook calls.
const USER_AGENT: &str = "kube-apiserver-admission";

/// The kubeconfig path of a `WebhookAdmissionConfiguration` (`LoadConfig`).
pub fn kubeconfig_path(value: &Value) -> Result<PathBuf, String> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if kind.is_empty() {
        return Err(format!("Object 'Kind' is missing in '{value}'"));
    }
    if !KINDS.contains(&(api_version, kind)) {
        return Err(format!(
            "no kind {} is registered for version {}",
            crate::go::strconv::quote(kind),
            crate::go::strconv::quote(api_version)
        ));
    }
    let file = text("kubeConfigFile");
    if !file.starts_with('/') {
        return Err(format!(
            "kubeConfigFile: Invalid value: {}: must be an absolute file path",
            crate::go::strconv::quote(file)
        ));
    }
    Ok(PathBuf::from(file))
}

/// A bearer token read from a file, and when.
/// client-go's `NewBearerAuthWithRefreshRoundTripper` with its
/// `cachedFileTokenSource`: the file's token, read again after
/// [`TOKEN_FILE_PERIOD`]; when a read fails, the last token read, else the
/// user's static `token`, else the failure.
struct TokenFile {
    path: PathBuf,
    /// The user's `token`, when it has one besides the file.
    fallback: Option<String>,
    read: Mutex<Option<(Instant, String)>>,
}

impl TokenFile {
    fn token(&self) -> Result<String, String> {
        let mut read = self
            .read
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, token)) = read.as_ref() {
            if at.elapsed() < TOKEN_FILE_PERIOD {
                return Ok(token.clone());
            }
        }
        match std::fs::read_to_string(&self.path) {
            Ok(text) => {
                let token = text.trim().to_string();
                *read = Some((Instant::now(), token.clone()));
                Ok(token)
            }
            Err(error) => match (read.as_ref(), &self.fallback) {
                (Some((_, last)), _) => Ok(last.clone()),
                (None, Some(token)) => Ok(token.clone()),
                (None, None) => Err(format!(
                    "open {}: {}",
                    self.path.display(),
                    go_io_error(&error)
                )),
            },
        }
    }
}

/// Go's text of a failed `os.Open` (`no such file or directory`), else
/// the system's.
fn go_io_error(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => error.to_string(),
    }
}

/// The connections of one kubeconfig user: the process's pool, or one of
/// its own presenting the user's client certificate.
enum Pool {
    Shared,
    Own(ClientPool),
}

/// One kubeconfig user (`restConfigFromKubeconfig`).
pub struct Credentials {
    pool: Pool,
    /// Headers of every call: the user agent, basic auth or a static
    /// token, impersonation.
    headers: Vec<(HeaderName, HeaderValue)>,
    token_file: Option<TokenFile>,
    /// Why kube cannot build a client for this user (`auth provider not
    /// supported`): every call fails with it.
    unusable: Option<String>,
}

impl std::fmt::Debug for Credentials {
    /// Names only what kind of credentials these are, never their secrets.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Credentials")
            .field("client_certificate", &matches!(self.pool, Pool::Own(_)))
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>(),
            )
            .field(
                "token_file",
                &self.token_file.as_ref().map(|file| &file.path),
            )
            .field("unusable", &self.unusable)
            .finish()
    }
}

impl Credentials {
    fn anonymous() -> Credentials {
        Credentials {
            pool: Pool::Shared,
            headers: vec![user_agent()],
            token_file: None,
            unusable: None,
        }
    }

    /// The pool that connects as this user.
    pub fn pool(&self) -> &ClientPool {
        match &self.pool {
            Pool::Shared => ClientPool::shared(),
            Pool::Own(pool) => pool,
        }
    }

    /// The headers of one call, or why no client could be made (kube's
    /// `could not get REST client: …`).
    pub fn headers(&self) -> Result<Cow<'_, [(HeaderName, HeaderValue)]>, String> {
        if let Some(why) = &self.unusable {
            return Err(why.clone());
        }
        let Some(file) = &self.token_file else {
            return Ok(Cow::Borrowed(&self.headers));
        };
        let mut headers = self.headers.clone();
        headers.push(bearer(&file.token()?)?);
        Ok(Cow::Owned(headers))
    }
}

fn user_agent() -> (HeaderName, HeaderValue) {
    (
        http::header::USER_AGENT,
        HeaderValue::from_static(USER_AGENT),
    )
}

fn bearer(token: &str) -> Result<(HeaderName, HeaderValue), String> {
    let value = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| "the bearer token is no valid header value".to_string())?;
    Ok((http::header::AUTHORIZATION, value))
}

/// The users of a webhook plugin's kubeconfig; the default has none (every
/// call is anonymous).
pub struct WebhookCredentials {
    users: HashMap<String, Arc<Credentials>>,
    current_user: Option<String>,
    anonymous: Arc<Credentials>,
}

impl Default for WebhookCredentials {
    fn default() -> Self {
        WebhookCredentials {
            users: HashMap::new(),
            current_user: None,
            anonymous: Arc::new(Credentials::anonymous()),
        }
    }
}

impl std::fmt::Debug for WebhookCredentials {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut users: Vec<&String> = self.users.keys().collect();
        users.sort();
        formatter
            .debug_struct("WebhookCredentials")
            .field("users", &users)
            .field("current_user", &self.current_user)
            .finish()
    }
}

impl WebhookCredentials {
    /// Reads the kubeconfig at `path` (`NewDefaultAuthenticationInfoResolver`).
    pub fn load(path: &Path) -> Result<WebhookCredentials, String> {
        let failed = |why: String| format!("invalid kubeconfig {}: {why}", path.display());
        let bytes = std::fs::read(path).map_err(|error| failed(error.to_string()))?;
        let config = crate::yaml::yaml_to_json(&bytes)
            .map_err(|error| failed(error.message().to_string()))?;
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        WebhookCredentials::from_kubeconfig(&config, base).map_err(failed)
    }

    fn from_kubeconfig(config: &Value, base: &Path) -> Result<WebhookCredentials, String> {
        let mut users = HashMap::new();
        for entry in config
            .get("users")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = entry
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let user = entry.get("user").cloned().unwrap_or(Value::Null);
            let credentials =
                credentials(&user, base).map_err(|why| format!("user {name:?}: {why}"))?;
            users.insert(name.to_string(), Arc::new(credentials));
        }
        let context = context_name(config);
        let current_user = named(config, "contexts", "context", &context)
            .and_then(|context| context.get("user"))
            .and_then(Value::as_str)
            .filter(|user| !user.is_empty())
            .map(str::to_string);
        Ok(WebhookCredentials {
            users,
            current_user,
            ..WebhookCredentials::default()
        })
    }

    /// The user a webhook at `target` (`host:port`) is called as
    /// (`defaultAuthenticationInfoResolver.clientConfig`).
    pub fn resolve(&self, target: &str) -> Arc<Credentials> {
        self.find(target).clone()
    }

    fn find(&self, target: &str) -> &Arc<Credentials> {
        if self.users.is_empty() {
            return &self.anonymous;
        }
        let by_name_or_suffix = |target: &str| -> Option<&Arc<Credentials>> {
            if let Some(found) = self.users.get(target) {
                return Some(found);
            }
            let steps: Vec<&str> = target.split('.').collect();
            (1..steps.len()).find_map(|at| self.users.get(&format!("*.{}", steps[at..].join("."))))
        };
        if let Some(found) = by_name_or_suffix(target) {
            return found;
        }
        if let Some((host, "443")) = split_host_port(target) {
            if let Some(found) = by_name_or_suffix(host) {
                return found;
            }
        }
        if let Some(found) = self.users.get("*") {
            return found;
        }
        if let Some(found) = self
            .current_user
            .as_ref()
            .and_then(|user| self.users.get(user))
        {
            return found;
        }
        &self.anonymous
    }
}

/// Go's `net.SplitHostPort` for what a webhook target can be: `host:port`
/// or `[v6]:port`.
fn split_host_port(target: &str) -> Option<(&str, &str)> {
    let (host, port) = target.rsplit_once(':')?;
    let host = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.strip_suffix(']')?,
        None if host.contains(':') => return None,
        None => host,
    };
    Some((host, port))
}

/// `restConfigFromKubeconfig` for one `user` entry.
fn credentials(user: &Value, base: &Path) -> Result<Credentials, String> {
    let text = |key: &str| user.get(key).and_then(Value::as_str).unwrap_or_default();
    if user.get("exec").is_some_and(|exec| !exec.is_null()) {
        return Err("ferrokube does not run exec credential plugins".into());
    }
    let mut credentials = Credentials::anonymous();
    if user
        .get("auth-provider")
        .is_some_and(|provider| !provider.is_null())
    {
        credentials.unusable = Some("auth provider not supported".into());
    }
    if !text("tokenFile").is_empty() {
        // Read when a call needs it: kube reads it when it builds a
        // webhook's client, so a missing file fails the calls, not the start.
        credentials.token_file = Some(TokenFile {
            path: base.join(text("tokenFile")),
            fallback: Some(text("token").to_string()).filter(|token| !token.is_empty()),
            read: Mutex::new(None),
        });
    } else if !text("token").is_empty() {
        credentials.headers.push(bearer(text("token"))?);
    } else if !text("username").is_empty() || !text("password").is_empty() {
        let pair = format!("{}:{}", text("username"), text("password"));
        let value = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        );
        let value = HeaderValue::from_str(&value)
            .map_err(|_| "username and password make no valid header".to_string())?;
        credentials
            .headers
            .push((http::header::AUTHORIZATION, value));
    }
    if !text("as").is_empty() {
        let header = |name: &str, value: &str| -> Result<(HeaderName, HeaderValue), String> {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("{name} is no valid header name"))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| format!("{value:?} is no valid header value"))?;
            Ok((name, value))
        };
        credentials
            .headers
            .push(header("Impersonate-User", text("as"))?);
        for group in user
            .get("as-groups")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            credentials
                .headers
                .push(header("Impersonate-Group", group)?);
        }
        if let Some(extra) = user.get("as-user-extra").and_then(Value::as_object) {
            for (key, values) in extra {
                for value in values
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    credentials
                        .headers
                        .push(header(&format!("Impersonate-Extra-{key}"), value)?);
                }
            }
        }
    }
    match (
        pem(user, "client-certificate", base)?,
        pem(user, "client-key", base)?,
    ) {
        (Some(chain), Some(key)) => {
            credentials.pool = Pool::Own(ClientPool::with_client_identity(chain, key));
        }
        (None, None) => {}
        _ => return Err("client-certificate and client-key go together".into()),
    }
    Ok(credentials)
}

/// The `host:port` a webhook is resolved under: a URL's host with its port
/// (443 when it has none), a service's `<name>.<namespace>.svc:<port>`.
pub fn target_of(endpoint: &crate::crd::webhook::WebhookEndpoint) -> String {
    use crate::crd::webhook::WebhookEndpoint;
    match endpoint {
        WebhookEndpoint::Url(url) => {
            let authority = url
                .split_once("://")
                .map_or(url.as_str(), |(_, rest)| rest)
                .split(['/', '?', '#'])
                .next()
                .unwrap_or_default();
            let authority = authority
                .rsplit_once('@')
                .map_or(authority, |(_, host)| host);
            match split_host_port(authority) {
                Some((_, port)) if !port.is_empty() => authority.to_string(),
                _ => format!("{authority}:443"),
            }
        }
        WebhookEndpoint::Service(service) => {
            format!(
                "{}.{}.svc:{}",
                service.name, service.namespace, service.port
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn names(credentials: &WebhookCredentials) -> HashMap<*const Credentials, String> {
        credentials
            .users
            .iter()
            .map(|(name, user)| (Arc::as_ptr(user), name.clone()))
            .collect()
    }

    /// kube's `TestAuthenticationDetection` order: exact, `*.` suffixes,
    /// the same without port 443, `*`, the current context's user.
    #[test]
    fn users_are_found_as_kube_finds_them() {
        let user = |token: &str| json!({"token": token});
        let config = json!({
            "users": [
                {"name": "hook.example.com:8443", "user": user("exact")},
                {"name": "*.example.com", "user": user("suffix")},
                {"name": "plain.test", "user": user("no-port")},
                {"name": "*", "user": user("star")},
            ],
        });
        let credentials =
            WebhookCredentials::from_kubeconfig(&config, Path::new("/")).expect("loads");
        let found = names(&credentials);
        let resolve = |target: &str| found[&Arc::as_ptr(&credentials.resolve(target))].clone();
        assert_eq!(resolve("hook.example.com:8443"), "hook.example.com:8443");
        // The port is part of the last step: a suffix without one matches
        // only through the port-443 fallback.
        assert_eq!(resolve("other.example.com:443"), "*.example.com");
        assert_eq!(resolve("a.b.example.com:443"), "*.example.com");
        assert_eq!(resolve("other.example.com:8443"), "*");
        assert_eq!(resolve("plain.test:443"), "plain.test");
        assert_eq!(resolve("plain.test:8443"), "*");
        assert_eq!(resolve("hook.svc:443"), "*");
        let with_context = json!({
            "users": [{"name": "me", "user": user("mine")}],
            "contexts": [{"name": "c", "context": {"user": "me"}}],
            "current-context": "c",
        });
        let credentials =
            WebhookCredentials::from_kubeconfig(&with_context, Path::new("/")).expect("loads");
        let found = names(&credentials);
        assert_eq!(
            found[&Arc::as_ptr(&credentials.resolve("x.y.svc:443"))],
            "me"
        );
        let none = WebhookCredentials::from_kubeconfig(
            &json!({"users": [{"name": "other:1", "user": user("x")}]}),
            Path::new("/"),
        )
        .expect("loads");
        let anonymous = none.resolve("x.y.svc:443");
        assert_eq!(
            anonymous.headers().map(|headers| headers.to_vec()),
            Ok(vec![user_agent()])
        );
    }

    #[test]
    fn a_user_becomes_headers_as_rest_config_sends_them() {
        let directory = tempfile::tempdir().expect("temp dir");
        std::fs::write(directory.path().join("token"), "from-file\n").expect("write");
        let load = |user: Value| {
            credentials(&user, directory.path())
                .and_then(|credentials| credentials.headers().map(|headers| headers.to_vec()))
                .map(|headers| {
                    headers
                        .into_iter()
                        .map(|(name, value)| format!("{name}: {}", value.to_str().unwrap_or("?")))
                        .collect::<Vec<_>>()
                })
        };
        // With both, the file's token while it can be read (client-go's
        // refreshing round tripper), else the static one.
        assert_eq!(
            load(json!({"token": "t", "tokenFile": "token"})),
            Ok(vec![
                "user-agent: kube-apiserver-admission".to_string(),
                "authorization: Bearer from-file".into()
            ])
        );
        assert_eq!(
            load(json!({"token": "t", "tokenFile": "missing"})),
            Ok(vec![
                "user-agent: kube-apiserver-admission".to_string(),
                "authorization: Bearer t".into()
            ])
        );
        assert_eq!(
            load(
                json!({"tokenFile": "token", "as": "bob", "as-groups": ["g1", "g2"], "as-user-extra": {"scopes": ["s"]}})
            ),
            Ok(vec![
                "user-agent: kube-apiserver-admission".to_string(),
                "impersonate-user: bob".into(),
                "impersonate-group: g1".into(),
                "impersonate-group: g2".into(),
                "impersonate-extra-scopes: s".into(),
                "authorization: Bearer from-file".into(),
            ])
        );
        assert_eq!(
            load(json!({"username": "u", "password": "p"})),
            Ok(vec![
                "user-agent: kube-apiserver-admission".to_string(),
                "authorization: Basic dTpw".into()
            ])
        );
        assert_eq!(
            load(json!({"auth-provider": {"name": "oidc"}})),
            Err("auth provider not supported".to_string())
        );
        let missing = directory.path().join("missing");
        assert_eq!(
            load(json!({"tokenFile": "missing"})),
            Err(format!(
                "open {}: no such file or directory",
                missing.display()
            ))
        );
        assert!(credentials(
            &json!({"client-certificate-data": "AA=="}),
            directory.path()
        )
        .is_err());
    }

    #[test]
    fn the_configuration_names_an_absolute_kubeconfig() {
        assert_eq!(
            kubeconfig_path(
                &json!({"apiVersion": "apiserver.config.k8s.io/v1", "kind": "WebhookAdmissionConfiguration", "kubeConfigFile": "/etc/k.yaml"})
            ),
            Ok(PathBuf::from("/etc/k.yaml"))
        );
        assert_eq!(
            kubeconfig_path(
                &json!({"apiVersion": "apiserver.config.k8s.io/v1alpha1", "kind": "WebhookAdmission", "kubeConfigFile": "k.yaml"})
            ),
            Err(
                "kubeConfigFile: Invalid value: \"k.yaml\": must be an absolute file path"
                    .to_string()
            )
        );
        assert_eq!(
            kubeconfig_path(&json!({"apiVersion": "apiserver.config.k8s.io/v1", "kind": "WebhookAdmission"})),
            Err("no kind \"WebhookAdmission\" is registered for version \"apiserver.config.k8s.io/v1\"".to_string())
        );
    }

    #[test]
    fn targets_are_host_and_port() {
        use crate::crd::webhook::{ServiceReference, WebhookEndpoint};
        let url = |url: &str| target_of(&WebhookEndpoint::Url(url.to_string()));
        assert_eq!(
            url("https://hook.example.com/validate"),
            "hook.example.com:443"
        );
        assert_eq!(url("https://127.0.0.1:8443/x?y"), "127.0.0.1:8443");
        assert_eq!(url("https://[::1]:9443/"), "[::1]:9443");
        let service = WebhookEndpoint::Service(ServiceReference {
            namespace: "ns".into(),
            name: "hook".into(),
            path: String::new(),
            port: 443,
        });
        assert_eq!(target_of(&service), "hook.ns.svc:443");
    }
}
