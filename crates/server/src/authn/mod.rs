//! Request authentication: front-proxy headers, client certificates, a
//! static token file and bearer tokens, combined the way kube-apiserver
//! combines them.
//!
//! Upstream files followed (kubernetes/kubernetes, under
//! `staging/src/k8s.io/apiserver/pkg/authentication/`):
//! - `request/headerrequest/requestheader.go`: [`RequestHeaderConfig`]
//! - `request/x509/x509.go` (`Authenticator`, `Verifier`,
//!   `CommonNameUserConversion`): [`Authenticator::peer_certificate`],
//!   [`user_from_peer_certificate`]
//! - `server/dynamiccertificates/dynamic_cafile_content.go`: [`CaBundle`]
//! - `token/tokenfile/tokenfile.go` (`NewCSV`): [`TokenFile`]
//! - `request/bearertoken/bearertoken.go`: [`bearer_token`]
//! - `group/authenticated_group_adder.go`: [`add_authenticated_group`]
//! - `request/anonymous/anonymous.go`: [`UserInfo::anonymous`]
//! - `pkg/kubeapiserver/authenticator/config.go` (the union, the group adder
//!   and the fail-on-error anonymous fallback): [`Authenticator`]

mod bearer;
mod ca_bundle;
mod csv;
mod request_header;
#[cfg(test)]
mod tests;
mod token_file;
mod x509;

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

pub use bearer::bearer_token;
pub use ca_bundle::{encode_pem, spawn_reloader, CaBundle};
pub use csv::{CsvError, CsvErrorKind};
pub use request_header::{RequestHeaderConfig, RequestHeaderFlags};
pub use token_file::TokenFile;
pub use x509::user_from_peer_certificate;

use rustls::pki_types::CertificateDer;

#[cfg(test)]
use x509::user_from_certificate;

/// `user.Anonymous`.
pub const ANONYMOUS_USER: &str = "system:anonymous";
/// `user.AllAuthenticated`.
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// `user.AllUnauthenticated`.
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// `user.SystemPrivilegedGroup`.
pub const SYSTEM_MASTERS: &str = "system:masters";
/// Subject attribute read as the user UID (`AllowParsingUserUIDFromCertAuth`,
/// beta and on by default in 1.34).
pub const CERT_UID_OID: &str = "1.3.6.1.4.1.57683.2";

/// Who made a request (`user.DefaultInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    /// `GetExtra()`: e.g. a service account's pod
    /// (`authentication.kubernetes.io/pod-name`) and credential id.
    pub extra: BTreeMap<String, Vec<String>>,
}

/// What a bearer-token authenticator says of a token (`authenticator.Token`'s
/// `(*Response, bool, error)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenOutcome {
    /// Not this authenticator's token: the next one is asked.
    NotMine,
    /// The token's user and the audiences it is valid for (empty for
    /// audience-agnostic authenticators such as the token file).
    Authenticated {
        user: UserInfo,
        audiences: Vec<String>,
    },
    /// This authenticator's token, and it is refused (expired, its
    /// ServiceAccount gone …): the message `TokenReview` reports.
    Failed(String),
}

/// Something that maps a bearer token to a user (`authenticator.Token`),
/// given the audiences the request is for (`authenticator.WithAudiences`).
pub trait TokenAuthenticator: Send + Sync {
    fn authenticate_token(&self, token: &str, audiences: &[String]) -> TokenOutcome;

    /// The same, noting what kube's authenticators add to the request's
    /// context besides the user (warnings, audit annotations) and the
    /// writes they make (the legacy token validator's Secret label).
    fn authenticate_token_noting(
        &self,
        token: &str,
        audiences: &[String],
        _notes: &mut AuthnNotes,
    ) -> TokenOutcome {
        self.authenticate_token(token, audiences)
    }
}

/// What authenticating a request added besides its user, whatever the
/// outcome: kube's authenticators write these into the request's context
/// (`warning.AddWarning`, `audit.AddAuditAnnotation`) or through the
/// loopback client (`legacy.go` `patchSecretWithLastUsedDate`); the server
/// answers with the warnings, audits the annotations and makes the writes
/// before the request goes on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthnNotes {
    /// Warning texts (not yet in `299 - "…"` form).
    pub warnings: Vec<String>,
    pub audit_annotations: Vec<(String, String)>,
    /// Labels to set on Secrets.
    pub secret_labels: Vec<SecretLabel>,
}

/// A label to set on a Secret (a merge patch naming its uid).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretLabel {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub key: String,
    pub value: String,
}

impl SecretLabel {
    /// The merge patch kube's legacy token validator sends
    /// (`applyv1.Secret(name, namespace).WithUID(uid).WithLabels(...)`).
    pub fn merge_patch(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "uid": self.uid,
                "labels": {self.key.as_str(): self.value},
            },
        })
    }

    /// Where the patch goes.
    pub fn path(&self) -> String {
        format!(
            "/api/v1/namespaces/{}/secrets/{}",
            self.namespace, self.name
        )
    }
}

impl AuthnNotes {
    /// `warning.AddWarning`: a text already added is not repeated.
    pub fn warn(&mut self, text: &str) {
        if !self.warnings.iter().any(|known| known == text) {
            self.warnings.push(text.to_string());
        }
    }

    /// `audit.AddAuditAnnotation`: a key already set keeps its first value.
    pub fn annotate_audit(&mut self, key: &str, value: &str) {
        if !self.audit_annotations.iter().any(|(known, _)| known == key) {
            self.audit_annotations
                .push((key.to_string(), value.to_string()));
        }
    }
}

impl UserInfo {
    /// The user of requests without credentials (`anonymous.go`).
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: ANONYMOUS_USER.to_string(),
            uid: String::new(),
            groups: vec![ALL_UNAUTHENTICATED.to_string()],
            extra: BTreeMap::new(),
        }
    }
}

/// Errors of this module. Token-file messages match upstream's wording, and
/// so do the certificate ones (kube logs them; the client gets a 401).
#[derive(Debug, Clone, thiserror::Error)]
pub enum AuthnError {
    #[error("reading token file '{path}': {source}")]
    ReadTokenFile {
        path: PathBuf,
        source: Arc<io::Error>,
    },
    #[error("token file '{path}': {error}")]
    TokenFileSyntax { path: String, error: CsvError },
    #[error("token file '{path}' must have at least 3 columns (token, user name, user uid), found {found}")]
    TooFewColumns { path: String, found: usize },
    #[error("invalid bearer token")]
    InvalidBearerToken,
    /// The bearer token chain's failure (`TokenReview`'s wording).
    #[error("{0}")]
    Token(String),
    #[error("{0}")]
    Certificate(String),
    /// The client certificate does not verify against the client CA
    /// (`x509.Authenticator`): `verifying certificate SN=…, SKID=…, AKID=…
    /// failed: x509: certificate signed by unknown authority`.
    #[error("{0}")]
    CertificateVerification(String),
    /// The certificate does not verify against the request-header CA
    /// (`x509.Verifier`, Go's error unwrapped).
    #[error("{0}")]
    ProxyVerification(String),
    /// A request-header CA certificate whose common name is not in
    /// `--requestheader-allowed-names`.
    #[error("x509: subject with cn={0} is not in the allowed list")]
    ProxyNotAllowed(String),
    /// Every authenticator that had an opinion failed
    /// (`utilerrors.NewAggregate`).
    #[error("[{}]", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    Aggregate(Vec<AuthnError>),
    #[error("{flag} {path}: {reason}")]
    CaFile {
        flag: &'static str,
        path: PathBuf,
        reason: String,
    },
    /// A flag value kube's option validation refuses.
    #[error("{0}")]
    Flag(String),
    /// No credential was presented and anonymous requests are disabled.
    #[error("unauthorized")]
    Unauthorized,
}

// ---------------------------------------------------------------------------
// The chain: group/authenticated_group_adder.go, authenticator/config.go

/// Adds `system:authenticated` to an authenticated user unless it is
/// `system:anonymous` or already has `system:authenticated` or
/// `system:unauthenticated` (`AuthenticatedGroupAdder`).
pub fn add_authenticated_group(mut user: UserInfo) -> UserInfo {
    if user.name == ANONYMOUS_USER {
        return user;
    }
    if user
        .groups
        .iter()
        .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
    {
        return user;
    }
    user.groups.push(ALL_AUTHENTICATED.to_string());
    user
}

/// kube-apiserver's request authenticator (`authenticator/config.go`):
/// the front proxy's headers first (`--requestheader-*`), then the client
/// certificate (`--client-ca-file` and ferrokube's own CA), then the bearer
/// token, `system:authenticated` added to whoever succeeds, and then either
/// the anonymous user or a failure.
///
/// The union asks each authenticator in turn; a failure is remembered and
/// the next one asked, so a certificate without a common name, or one the
/// request-header CA did not sign, leaves the request to the bearer token.
/// A request whose presented credentials all fail (an unknown bearer token, a
/// certificate no trusted CA signed) is refused even when anonymous requests
/// are allowed (`union.NewFailOnError`).
#[derive(Clone, Default)]
pub struct Authenticator {
    tokens: Vec<Arc<dyn TokenAuthenticator>>,
    anonymous: bool,
    /// `--api-audiences`: what requests to this server are for.
    api_audiences: Vec<String>,
    /// `--client-ca-file` plus ferrokube's CA; no certificate authenticates without it.
    client_ca: Option<Arc<CaBundle>>,
    /// `--requestheader-client-ca-file` and its header flags.
    request_header: Option<RequestHeaderConfig>,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authenticator")
            .field("token_authenticators", &self.tokens.len())
            .field("anonymous", &self.anonymous)
            .field("client_ca", &self.client_ca)
            .field("request_header", &self.request_header.is_some())
            .finish()
    }
}

/// What a connection's client certificate chain proves, worked out once per
/// connection by [`Authenticator::peer_certificate`] (the chain is fixed for
/// the connection) and redone by a request once it is stale: the leaf
/// expired since, or a CA bundle was reloaded.
#[derive(Debug, Clone)]
pub struct PeerCertificate {
    chain: Vec<CertificateDer<'static>>,
    /// The x509 authenticator's answer.
    x509: Result<Option<UserInfo>, AuthnError>,
    /// The request-header verifier's answer (`None`: not configured).
    front_proxy: Option<Result<(), AuthnError>>,
    /// The CA bundles' generations the answers were made at.
    generations: (u64, u64),
    not_after: Option<SystemTime>,
}

impl Authenticator {
    /// `anonymous`: kube-apiserver's `--anonymous-auth` (default true).
    pub fn new(anonymous: bool) -> Authenticator {
        Authenticator {
            anonymous,
            ..Authenticator::default()
        }
    }

    /// The audiences of requests to this server (`--api-audiences`).
    pub fn with_api_audiences(mut self, audiences: Vec<String>) -> Authenticator {
        self.api_audiences = audiences;
        self
    }

    pub fn api_audiences(&self) -> &[String] {
        &self.api_audiences
    }

    /// Adds a bearer token authenticator; they are tried in order.
    pub fn with_token_authenticator(mut self, auth: Arc<dyn TokenAuthenticator>) -> Authenticator {
        self.tokens.push(auth);
        self
    }

    /// The CAs client certificates must chain to (`--client-ca-file`).
    pub fn with_client_ca(mut self, client_ca: Arc<CaBundle>) -> Authenticator {
        self.client_ca = Some(client_ca);
        self
    }

    /// Front-proxy authentication (`--requestheader-*`).
    pub fn with_request_header(mut self, config: Option<RequestHeaderConfig>) -> Authenticator {
        self.request_header = config;
        self
    }

    pub fn client_ca(&self) -> Option<&Arc<CaBundle>> {
        self.client_ca.as_ref()
    }

    pub fn request_header(&self) -> Option<&RequestHeaderConfig> {
        self.request_header.as_ref()
    }

    fn generations(&self) -> (u64, u64) {
        (
            self.client_ca.as_ref().map_or(0, |ca| ca.generation()),
            self.request_header
                .as_ref()
                .map_or(0, |config| config.client_ca.generation()),
        )
    }

    /// Verifies a connection's client certificate chain (leaf first) for
    /// both certificate authenticators.
    pub fn peer_certificate(&self, chain: &[CertificateDer<'_>]) -> PeerCertificate {
        let now = SystemTime::now();
        let x509 = match &self.client_ca {
            Some(client_ca) => x509::authenticate_chain(client_ca, chain, now),
            // No client CA bundle: the x509 authenticator has no opinion.
            None => Ok(None),
        };
        let front_proxy = self
            .request_header
            .as_ref()
            .map(|config| config.verify_proxy(chain, now));
        PeerCertificate {
            chain: chain.iter().map(|c| c.clone().into_owned()).collect(),
            x509,
            front_proxy,
            generations: self.generations(),
            not_after: chain
                .first()
                .and_then(|leaf| x509::not_after(leaf.as_ref())),
        }
    }

    /// Authenticates one request: `peer` is what the connection's client
    /// certificate proved ([`peer_certificate`](Self::peer_certificate)),
    /// `headers` the request's (the `Authorization` header and the
    /// front-proxy ones). On success, or without any credential, the
    /// credential headers are removed as kube's `WithAuthentication` removes
    /// them. `Err(Unauthorized)`: no credential and anonymous requests are
    /// off; any other `Err` is a credential that failed (a 401 always).
    pub fn authenticate(
        &self,
        peer: Option<&PeerCertificate>,
        headers: &mut http::HeaderMap,
    ) -> Result<UserInfo, AuthnError> {
        self.authenticate_noting(peer, headers, &mut AuthnNotes::default())
    }

    /// [`authenticate`](Self::authenticate), with what the authenticators
    /// noted besides the user in `notes`.
    pub fn authenticate_noting(
        &self,
        peer: Option<&PeerCertificate>,
        headers: &mut http::HeaderMap,
        notes: &mut AuthnNotes,
    ) -> Result<UserInfo, AuthnError> {
        let fresh;
        let peer = match peer {
            Some(peer)
                if peer.generations != self.generations()
                    || peer.not_after.is_some_and(|end| SystemTime::now() > end) =>
            {
                fresh = self.peer_certificate(&peer.chain);
                Some(&fresh)
            }
            other => other,
        };
        let result = self.authenticate_with(peer, headers, notes);
        if !matches!(result, Err(ref error) if !matches!(error, AuthnError::Unauthorized)) {
            headers.remove(http::header::AUTHORIZATION);
            request_header::clear_standard_headers(headers);
            if let Some(config) = &self.request_header {
                config.clear(headers);
            }
        }
        result
    }

    fn authenticate_with(
        &self,
        peer: Option<&PeerCertificate>,
        headers: &http::HeaderMap,
        notes: &mut AuthnNotes,
    ) -> Result<UserInfo, AuthnError> {
        let mut errors = Vec::new();
        if let Some(peer) = peer {
            match (&self.request_header, &peer.front_proxy) {
                (Some(config), Some(Ok(()))) => {
                    if let Some(user) = config.user_from_headers(headers) {
                        return Ok(add_authenticated_group(user));
                    }
                }
                (_, Some(Err(error))) => errors.push(error.clone()),
                _ => {}
            }
            match &peer.x509 {
                Ok(Some(user)) => return Ok(add_authenticated_group(user.clone())),
                Ok(None) => {}
                Err(error) => errors.push(error.clone()),
            }
        }
        if !self.tokens.is_empty() {
            let authorization = headers
                .get(http::header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok());
            if let Some(token) = authorization.and_then(bearer_token) {
                match self.authenticate_bearer_noting(token, &self.api_audiences, notes) {
                    Ok((user, _)) => return Ok(user),
                    Err(message) => errors.push(AuthnError::Token(message)),
                }
            }
        }
        match errors.len() {
            0 if self.anonymous => Ok(UserInfo::anonymous()),
            0 => Err(AuthnError::Unauthorized),
            1 => Err(errors.remove(0)),
            _ => Err(AuthnError::Aggregate(errors)),
        }
    }

    /// The bearer-token part of the chain for `token`, for `audiences` (the
    /// API audiences when empty): the user with `system:authenticated` and
    /// the audiences the token is valid for, or the error kube reports
    /// (`TokenReview`'s `status.error`): the failures aggregated as
    /// `utilerrors.NewAggregate` prints them, else `invalid bearer token`.
    ///
    /// Audience-agnostic authenticators (the token file) are asked only when
    /// the requested audiences include an API audience, and answer with
    /// those (`authenticator.WrapAudienceAgnosticToken`).
    pub fn authenticate_bearer(
        &self,
        token: &str,
        audiences: &[String],
    ) -> Result<(UserInfo, Vec<String>), String> {
        self.authenticate_bearer_noting(token, audiences, &mut AuthnNotes::default())
    }

    /// [`authenticate_bearer`](Self::authenticate_bearer), with what the
    /// authenticators noted besides the user in `notes`.
    pub fn authenticate_bearer_noting(
        &self,
        token: &str,
        audiences: &[String],
        notes: &mut AuthnNotes,
    ) -> Result<(UserInfo, Vec<String>), String> {
        let requested = if audiences.is_empty() {
            &self.api_audiences
        } else {
            audiences
        };
        let implicit: Vec<String> = self
            .api_audiences
            .iter()
            .filter(|audience| requested.contains(audience))
            .cloned()
            .collect();
        let mut failures: Vec<String> = Vec::new();
        for authenticator in &self.tokens {
            match authenticator.authenticate_token_noting(token, requested, notes) {
                TokenOutcome::NotMine => {}
                TokenOutcome::Authenticated { user, audiences } if audiences.is_empty() => {
                    // Audience agnostic: valid for the API audiences asked for.
                    if implicit.is_empty() && !self.api_audiences.is_empty() {
                        continue;
                    }
                    return Ok((add_authenticated_group(user), implicit));
                }
                TokenOutcome::Authenticated { user, audiences } => {
                    return Ok((add_authenticated_group(user), audiences));
                }
                TokenOutcome::Failed(message) => {
                    if !failures.contains(&message) {
                        failures.push(message);
                    }
                }
            }
        }
        Err(match failures.len() {
            0 => AuthnError::InvalidBearerToken.to_string(),
            1 => failures.remove(0),
            _ => format!("[{}]", failures.join(", ")),
        })
    }
}
