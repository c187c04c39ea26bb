//! Request authentication: client certificates, a static token file and
//! bearer tokens, combined the way kube-apiserver combines them.
//!
//! Upstream files followed (kubernetes/kubernetes, under
//! `staging/src/k8s.io/apiserver/pkg/authentication/`):
//! - `request/x509/x509.go` (`CommonNameUserConversion`): [`user_from_peer_certificate`]
//! - `token/tokenfile/tokenfile.go` (`NewCSV`): [`TokenFile`]
//! - `request/bearertoken/bearertoken.go`: [`bearer_token`]
//! - `group/authenticated_group_adder.go`: [`add_authenticated_group`]
//! - `request/anonymous/anonymous.go`: [`UserInfo::anonymous`]
//! - `pkg/kubeapiserver/authenticator/config.go` (the union, the group adder
//!   and the fail-on-error anonymous fallback): [`Authenticator`]

mod bearer;
mod csv;
#[cfg(test)]
mod tests;
mod token_file;
mod x509;

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

pub use bearer::bearer_token;
pub use csv::{CsvError, CsvErrorKind};
pub use token_file::TokenFile;
pub use x509::user_from_peer_certificate;

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

/// Errors of this module. Token-file messages match upstream's wording.
#[derive(Debug, thiserror::Error)]
pub enum AuthnError {
    #[error("reading token file '{path}': {source}")]
    ReadTokenFile { path: PathBuf, source: io::Error },
    #[error("token file '{path}': {error}")]
    TokenFileSyntax { path: String, error: CsvError },
    #[error("token file '{path}' must have at least 3 columns (token, user name, user uid), found {found}")]
    TooFewColumns { path: String, found: usize },
    #[error("invalid bearer token")]
    InvalidBearerToken,
    #[error("client certificate: {0}")]
    Certificate(String),
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

/// kube-apiserver's request authenticator: client certificate first, then
/// the bearer token (only when some token authenticator is configured),
/// `system:authenticated` added to whoever succeeds, and then either the
/// anonymous user or a failure.
///
/// A request that presents credentials that fail (an unknown bearer token, a
/// certificate whose UID attribute is malformed) is refused even when
/// anonymous requests are allowed (`union.NewFailOnError`).
#[derive(Clone, Default)]
pub struct Authenticator {
    tokens: Vec<Arc<dyn TokenAuthenticator>>,
    anonymous: bool,
    /// `--api-audiences`: what requests to this server are for.
    api_audiences: Vec<String>,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authenticator")
            .field("token_authenticators", &self.tokens.len())
            .field("anonymous", &self.anonymous)
            .finish()
    }
}

impl Authenticator {
    /// `anonymous`: kube-apiserver's `--anonymous-auth` (default true).
    pub fn new(anonymous: bool) -> Authenticator {
        Authenticator {
            tokens: Vec::new(),
            anonymous,
            api_audiences: Vec::new(),
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

    /// Authenticates one request. `peer_certificate` is the verified client
    /// leaf certificate of the connection, `authorization` the value of the
    /// `Authorization` header. `Err` means 401 Unauthorized.
    pub fn authenticate(
        &self,
        peer_certificate: Option<&[u8]>,
        authorization: Option<&str>,
    ) -> Result<UserInfo, AuthnError> {
        let mut error = None;
        if let Some(der) = peer_certificate {
            match user_from_certificate(der) {
                Ok(Some(user)) => return Ok(add_authenticated_group(user)),
                Ok(None) => {}
                Err(e) => error = Some(e),
            }
        }
        if !self.tokens.is_empty() {
            if let Some(token) = authorization.and_then(bearer_token) {
                match self.authenticate_bearer(token, &self.api_audiences) {
                    Ok((user, _)) => return Ok(user),
                    Err(_) => {
                        error.get_or_insert(AuthnError::InvalidBearerToken);
                    }
                }
            }
        }
        if let Some(e) = error {
            return Err(e);
        }
        if self.anonymous {
            return Ok(UserInfo::anonymous());
        }
        Err(AuthnError::Unauthorized)
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
            match authenticator.authenticate_token(token, requested) {
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
