//! The service-account token authenticator: `pkg/serviceaccount/jwt.go`
//! (`jwtTokenAuthenticator.AuthenticateToken`: issuer, signature,
//! audiences) with the validators of `claims.go` (bound tokens: time, the
//! ServiceAccount and the bound object still there with their uids) and
//! `legacy.go` (Secret-based tokens: the Secret still holds the token).
//!
//! A token's signature is checked once per 10 s (`verified_cache.rs`); its
//! claims are validated on every request.
//!
//! Objects are read from the store's current snapshot, as kube reads its
//! informer caches (`serviceaccountcontroller.NewGetterFromClient`): one map
//! lookup per object, no request.

use std::sync::Arc;
use std::time::Instant;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use super::claims::{
    credential_id_for_jti, split_username, LegacyPrivateClaims, PrivateClaims, PublicClaims,
    ServiceAccountInfo, LEGACY_ISSUER,
};
use super::jwt;
use super::verified_cache::{Key, Verified, VerifiedCache, VerifiedClaims};
use super::ServiceAccountTokens;
use crate::authn::{TokenAuthenticator, TokenOutcome};
use crate::object::{ObjectStore, StoredObject};

/// `serviceaccount.InvalidSinceLabelKey` (legacy.go).
pub const INVALID_SINCE_LABEL: &str = "kubernetes.io/legacy-token-invalid-since";

/// `jwt.DefaultLeeway`: one minute, for times and for deletions.
const LEEWAY_SECONDS: i64 = 60;

/// Accepts the tokens `tokens` describes: bound tokens of its issuers and
/// legacy Secret tokens (`kubernetes/serviceaccount`).
pub struct ServiceAccountAuthenticator {
    tokens: Arc<ServiceAccountTokens>,
    store: ObjectStore,
    /// Tokens whose signature was checked in the last 10 s.
    verified: VerifiedCache,
}

/// An object read for validation.
struct Found {
    uid: String,
    /// `metadata.deletionTimestamp`, in Unix seconds.
    deleted_at: Option<i64>,
    object: Arc<StoredObject>,
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|item| crate::go::strconv::quote(item))
        .collect();
    format!("[{}]", quoted.join(" "))
}

/// `Audiences.Intersect`: the token's audiences the target accepts, in the token's order.
fn intersect(token: &[String], target: &[String]) -> Vec<String> {
    token
        .iter()
        .filter(|audience| target.contains(audience))
        .cloned()
        .collect()
}

/// `subtle.ConstantTimeCompare`: equal contents, compared in time that
/// depends only on the lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        })
}

impl ServiceAccountAuthenticator {
    pub fn new(tokens: Arc<ServiceAccountTokens>, store: ObjectStore) -> Self {
        ServiceAccountAuthenticator {
            tokens,
            store,
            verified: VerifiedCache::default(),
        }
    }

    /// Authenticates `token` for `requested` audiences (the API audiences
    /// when empty) at Unix time `now`. The signature check is skipped for a
    /// token verified in the last 10 s (`verified_cache.rs`); the claims'
    /// validation, which reads the objects the token names, never is.
    pub fn authenticate_at(&self, token: &str, requested: &[String], now: i64) -> TokenOutcome {
        let key = Key::of(token, requested);
        let checked_at = Instant::now();
        let verified = match self.verified.get(&key, checked_at) {
            Some(verified) => verified,
            None => match self.verify(token, requested) {
                Ok(verified) => {
                    let verified = Arc::new(verified);
                    self.verified.insert(key, verified.clone(), checked_at);
                    verified
                }
                Err(outcome) => return outcome,
            },
        };
        let validated = match &verified.private {
            VerifiedClaims::Legacy(private) => {
                self.validate_legacy(token, &verified.public, private)
            }
            VerifiedClaims::Bound(private) => self.validate_bound(&verified.public, private, now),
        };
        match validated {
            Ok(info) => TokenOutcome::Authenticated {
                user: info.user_info(),
                audiences: verified.audiences.clone(),
            },
            Err(error) => TokenOutcome::Failed(error),
        }
    }

    /// `jwtTokenAuthenticator.AuthenticateToken` up to its validator: the
    /// issuer, the signature, the registered claims and the audiences;
    /// `Err` with the outcome when the token is not ours or fails.
    fn verify(&self, token: &str, requested: &[String]) -> Result<Verified, TokenOutcome> {
        let Some(issuer) = jwt::unverified_issuer(token) else {
            return Err(TokenOutcome::NotMine);
        };
        let legacy = issuer == LEGACY_ISSUER;
        if !legacy && !self.tokens.issuers().contains(&issuer) {
            return Err(TokenOutcome::NotMine);
        }
        let Some(parsed) = jwt::parse(token) else {
            return Err(TokenOutcome::NotMine);
        };
        parsed
            .verify_with(self.tokens.keys())
            .map_err(TokenOutcome::Failed)?;
        let public = PublicClaims::read(&parsed.claims).map_err(TokenOutcome::Failed)?;
        let implicit = self.tokens.api_audiences();
        // Only API audiences are allowed for tokens without one (legacy tokens).
        let token_audiences = if public.audiences.is_empty() {
            implicit.to_vec()
        } else {
            public.audiences.clone()
        };
        let requested = if requested.is_empty() {
            implicit
        } else {
            requested
        };
        let audiences = intersect(&token_audiences, requested);
        if audiences.is_empty() && !implicit.is_empty() {
            return Err(TokenOutcome::Failed(format!(
                "token audiences {} is invalid for the target audiences {}",
                quoted_list(&token_audiences),
                quoted_list(requested)
            )));
        }
        let private = if legacy {
            VerifiedClaims::Legacy(LegacyPrivateClaims::read(&parsed.claims))
        } else {
            VerifiedClaims::Bound(PrivateClaims::read(&parsed.claims))
        };
        Ok(Verified {
            public,
            private,
            audiences,
        })
    }

    fn get(&self, key: &str) -> Option<Found> {
        let snapshot = self.store.snapshot();
        let entry = snapshot.get(key)?;
        let index = entry.object.index()?;
        let deleted_at = if index.is_deleting() {
            entry
                .object
                .value()
                .and_then(|value| {
                    value
                        .pointer("/metadata/deletionTimestamp")
                        .and_then(|time| time.as_str())
                        .and_then(crate::go::time::parse_system_time)
                })
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|since| i64::try_from(since.as_secs()).unwrap_or(i64::MAX))
                .or(Some(0))
        } else {
            None
        };
        Some(Found {
            uid: index.uid().to_string(),
            deleted_at,
            object: entry.object.clone(),
        })
    }

    fn service_account(&self, namespace: &str, name: &str) -> Result<Found, String> {
        self.get(&format!("/registry/serviceaccounts/{namespace}/{name}"))
            .ok_or_else(|| format!("serviceaccounts \"{name}\" not found"))
    }

    /// `validator.Validate` (claims.go).
    fn validate_bound(
        &self,
        public: &PublicClaims,
        private: &PrivateClaims,
        now: i64,
    ) -> Result<ServiceAccountInfo, String> {
        // go-jose's `Claims.ValidateWithLeeway` order: nbf, exp, iat.
        if public
            .not_before
            .is_some_and(|nbf| now + LEEWAY_SECONDS < nbf)
        {
            return Err("service account token is not valid yet".into());
        }
        if public.expiry.is_some_and(|exp| now - LEEWAY_SECONDS > exp) {
            return Err("service account token has expired".into());
        }
        if public
            .issued_at
            .is_some_and(|iat| now + LEEWAY_SECONDS < iat)
        {
            return Err("service account token is issued in the future".into());
        }
        let invalid_if_deleted_before = now - LEEWAY_SECONDS;
        let deleted_long_ago = |found: &Found| {
            found
                .deleted_at
                .is_some_and(|at| at < invalid_if_deleted_before)
        };
        let namespace = &private.namespace;
        let sa_ref = &private.service_account;
        let service_account = self.service_account(namespace, &sa_ref.name)?;
        if service_account.uid != sa_ref.uid {
            return Err(format!(
                "service account UID ({}) does not match claim ({})",
                service_account.uid, sa_ref.uid
            ));
        }
        if deleted_long_ago(&service_account) {
            return Err(format!(
                "service account {namespace}/{} has been deleted",
                sa_ref.name
            ));
        }
        const INVALIDATED: &str = "service account token has been invalidated";
        if let Some(secret_ref) = &private.binding.secret {
            let secret = self
                .get(&format!(
                    "/registry/secrets/{namespace}/{}",
                    secret_ref.name
                ))
                .ok_or(INVALIDATED)?;
            if secret.uid != secret_ref.uid {
                return Err(format!(
                    "secret UID ({}) does not match service account secret ref claim ({})",
                    secret.uid, secret_ref.uid
                ));
            }
            if deleted_long_ago(&secret) {
                return Err(INVALIDATED.into());
            }
        }
        let mut info = ServiceAccountInfo {
            namespace: namespace.clone(),
            name: sa_ref.name.clone(),
            uid: sa_ref.uid.clone(),
            credential_id: credential_id_for_jti(&public.id),
            ..ServiceAccountInfo::default()
        };
        if let Some(pod_ref) = &private.binding.pod {
            let pod = self
                .get(&format!("/registry/pods/{namespace}/{}", pod_ref.name))
                .ok_or(INVALIDATED)?;
            if pod.uid != pod_ref.uid {
                return Err(format!(
                    "pod UID ({}) does not match service account pod ref claim ({})",
                    pod.uid, pod_ref.uid
                ));
            }
            if deleted_long_ago(&pod) {
                return Err(INVALIDATED.into());
            }
            info.pod_name = pod_ref.name.clone();
            info.pod_uid = pod_ref.uid.clone();
        }
        if let Some(node_ref) = &private.binding.node {
            if private.binding.pod.is_none() {
                let node = self
                    .get(&format!("/registry/minions/{}", node_ref.name))
                    .ok_or(INVALIDATED)?;
                if node.uid != node_ref.uid {
                    return Err(format!(
                        "node UID ({}) does not match service account node ref claim ({})",
                        node.uid, node_ref.uid
                    ));
                }
                if deleted_long_ago(&node) {
                    return Err(INVALIDATED.into());
                }
            }
            info.node_name = node_ref.name.clone();
            info.node_uid = node_ref.uid.clone();
        }
        Ok(info)
    }

    /// `legacyValidator.Validate` (legacy.go), with lookup on (the
    /// `legacy-token-last-used` label is not written).
    fn validate_legacy(
        &self,
        token: &str,
        public: &PublicClaims,
        private: &LegacyPrivateClaims,
    ) -> Result<ServiceAccountInfo, String> {
        if public.subject.is_empty() {
            return Err("sub claim is missing".into());
        }
        let namespace = &private.namespace;
        if namespace.is_empty() {
            return Err("namespace claim is missing".into());
        }
        if private.secret_name.is_empty() {
            return Err("secretName claim is missing".into());
        }
        if private.service_account_name.is_empty() {
            return Err("serviceAccountName claim is missing".into());
        }
        if private.service_account_uid.is_empty() {
            return Err("serviceAccountUID claim is missing".into());
        }
        if split_username(&public.subject)
            != Some((namespace.as_str(), private.service_account_name.as_str()))
        {
            return Err("sub claim is invalid".into());
        }
        const INVALIDATED: &str = "Token has been invalidated";
        let secret = self
            .get(&format!(
                "/registry/secrets/{namespace}/{}",
                private.secret_name
            ))
            .ok_or(INVALIDATED)?;
        if secret.deleted_at.is_some() {
            return Err(INVALIDATED.into());
        }
        let stored_token = secret
            .object
            .value()
            .and_then(|value| {
                value
                    .pointer("/data/token")
                    .and_then(|data| data.as_str())
                    .and_then(|data| STANDARD.decode(data).ok())
            })
            .unwrap_or_default();
        if !constant_time_eq(&stored_token, token.as_bytes()) {
            return Err("Token does not match server's copy".into());
        }
        let name = &private.service_account_name;
        let service_account = self.service_account(namespace, name)?;
        if service_account.deleted_at.is_some() {
            return Err(format!(
                "ServiceAccount {namespace}/{name} has been deleted"
            ));
        }
        if service_account.uid != private.service_account_uid {
            return Err(format!(
                "ServiceAccount UID ({}) does not match claim ({})",
                service_account.uid, private.service_account_uid
            ));
        }
        // The legacy token cleaner's mark (`InvalidSinceLabelKey`).
        let invalid_since = secret
            .object
            .index()
            .and_then(|index| index.label(INVALID_SINCE_LABEL))
            .is_some_and(|since| !since.is_empty());
        if invalid_since {
            return Err(format!(
                "the token in secret {namespace}/{secret_name} for service account {namespace}/{name} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '{INVALID_SINCE_LABEL}' label from the secret to temporarily allow use of this token",
                secret_name = private.secret_name
            ));
        }
        Ok(ServiceAccountInfo {
            namespace: namespace.clone(),
            name: name.clone(),
            uid: private.service_account_uid.clone(),
            ..ServiceAccountInfo::default()
        })
    }
}

impl TokenAuthenticator for ServiceAccountAuthenticator {
    fn authenticate_token(&self, token: &str, audiences: &[String]) -> TokenOutcome {
        self.authenticate_at(token, audiences, now_seconds())
    }
}
