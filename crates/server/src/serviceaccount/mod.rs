//! Service-account tokens: the keys that sign and verify them, the JWTs
//! themselves, their claims, the authenticator that accepts them and the
//! OIDC discovery documents that publish the keys.
//!
//! Upstream (kubernetes/kubernetes): `pkg/serviceaccount/{jwt.go,claims.go,
//! legacy.go,openidmetadata.go}`, the flags of
//! `pkg/kubeapiserver/options/authentication.go` (`ServiceAccountAuthenticationOptions`).

pub mod authenticator;
pub mod claims;
pub mod jwt;
pub mod keys;
pub mod metrics;
pub mod openid;
pub mod verified_cache;

use std::path::PathBuf;

pub use authenticator::ServiceAccountAuthenticator;
pub use keys::{Algorithm, PublicKey, Signer};

/// The issuer ferrokube uses when `--service-account-issuer` is not given
/// (kube-apiserver requires the flag; kubeadm and kind set this value).
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// Errors of this module.
#[derive(Debug, thiserror::Error)]
pub enum ServiceAccountError {
    #[error("data does not contain a valid RSA or ECDSA private key")]
    NoPrivateKey,
    #[error("data does not contain any valid RSA or ECDSA public keys")]
    NoPublicKey,
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("writing {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        source: Box<ServiceAccountError>,
    },
    #[error("generating a service-account signing key failed")]
    KeyGeneration,
    #[error("signing a service-account token failed")]
    Signing,
    #[error("--service-account-max-token-expiration must be at least 1h0m0s (3600 seconds)")]
    MaxExpirationTooShort,
}

/// Everything about service-account tokens the server was started with:
/// the signing key, the verification keys, issuers and audiences.
#[derive(Debug)]
pub struct ServiceAccountTokens {
    signer: Signer,
    /// Verification keys: the signer's public key first, then those of
    /// `--service-account-key-file` not already present.
    keys: Vec<PublicKey>,
    /// `--service-account-issuer`: the first one signs, all are accepted.
    issuers: Vec<String>,
    /// `--api-audiences` (defaults to the issuers).
    api_audiences: Vec<String>,
    /// `--service-account-max-token-expiration`, in seconds.
    max_expiration_seconds: Option<i64>,
    /// `--service-account-extend-token-expiration` (default true).
    extend_expiration: bool,
    /// `--service-account-jwks-uri`.
    jwks_uri: Option<String>,
    /// `--service-account-lookup` (default true): legacy tokens are checked
    /// against their Secret and ServiceAccount.
    lookup: bool,
    /// kube's token use counters (`/metrics`).
    uses: metrics::TokenUseMetrics,
}

/// The flags, read but not yet loaded.
#[derive(Debug, Clone, Default)]
pub struct ServiceAccountOptions {
    pub signing_key_file: Option<PathBuf>,
    pub key_files: Vec<PathBuf>,
    pub issuers: Vec<String>,
    pub api_audiences: Vec<String>,
    pub max_token_expiration_seconds: Option<i64>,
    pub jwks_uri: Option<String>,
    /// `--service-account-extend-token-expiration`; `None` is kube's default (true).
    pub extend_token_expiration: Option<bool>,
    /// `--service-account-lookup`; `None` is kube's default (true).
    pub lookup: Option<bool>,
}

fn read(path: &PathBuf) -> Result<Vec<u8>, ServiceAccountError> {
    std::fs::read(path).map_err(|source| ServiceAccountError::Read {
        path: path.clone(),
        source,
    })
}

fn in_file(path: &std::path::Path, error: ServiceAccountError) -> ServiceAccountError {
    ServiceAccountError::File {
        path: path.to_path_buf(),
        source: Box::new(error),
    }
}

impl ServiceAccountTokens {
    /// Loads the keys the options name. `signer` is used when no
    /// `--service-account-signing-key-file` is given (the server's generated key).
    pub fn load(
        options: &ServiceAccountOptions,
        signer: Option<Signer>,
    ) -> Result<ServiceAccountTokens, ServiceAccountError> {
        let signer = match (&options.signing_key_file, signer) {
            (Some(path), _) => {
                Signer::from_pem(&read(path)?).map_err(|error| in_file(path, error))?
            }
            (None, Some(signer)) => signer,
            (None, None) => Signer::generate()?.0,
        };
        let mut extra = Vec::new();
        for path in &options.key_files {
            let keys = keys::public_keys_from_pem(&read(path)?).map_err(|e| in_file(path, e))?;
            extra.extend(keys);
        }
        if let Some(max) = options.max_token_expiration_seconds {
            // `ServiceAccountAuthenticationOptions.Validate`.
            if max < 3600 {
                return Err(ServiceAccountError::MaxExpirationTooShort);
            }
        }
        let issuers = if options.issuers.is_empty() {
            vec![DEFAULT_ISSUER.to_string()]
        } else {
            options.issuers.clone()
        };
        let api_audiences = if options.api_audiences.is_empty() {
            issuers.clone()
        } else {
            options.api_audiences.clone()
        };
        let mut tokens = ServiceAccountTokens::new(
            signer,
            extra,
            issuers,
            api_audiences,
            options.max_token_expiration_seconds,
            options.extend_token_expiration.unwrap_or(true),
            options.jwks_uri.clone(),
        );
        tokens.lookup = options.lookup.unwrap_or(true);
        Ok(tokens)
    }

    /// A fresh ECDSA key with the default issuer (handler tests, `Api::new`).
    pub fn ephemeral() -> Result<ServiceAccountTokens, ServiceAccountError> {
        ServiceAccountTokens::load(&ServiceAccountOptions::default(), None)
    }

    fn new(
        signer: Signer,
        extra_keys: Vec<PublicKey>,
        issuers: Vec<String>,
        api_audiences: Vec<String>,
        max_expiration_seconds: Option<i64>,
        extend_expiration: bool,
        jwks_uri: Option<String>,
    ) -> ServiceAccountTokens {
        let mut keys = vec![signer.public_key().clone()];
        for key in extra_keys {
            if !keys.iter().any(|known| known.key_id() == key.key_id()) {
                keys.push(key);
            }
        }
        ServiceAccountTokens {
            signer,
            keys,
            issuers,
            api_audiences,
            max_expiration_seconds,
            extend_expiration,
            jwks_uri,
            lookup: true,
            uses: metrics::TokenUseMetrics::default(),
        }
    }

    pub fn signer(&self) -> &Signer {
        &self.signer
    }

    pub fn keys(&self) -> &[PublicKey] {
        &self.keys
    }

    /// The issuer new tokens carry (the first `--service-account-issuer`).
    pub fn issuer(&self) -> &str {
        self.issuers.first().map_or(DEFAULT_ISSUER, String::as_str)
    }

    pub fn issuers(&self) -> &[String] {
        &self.issuers
    }

    pub fn api_audiences(&self) -> &[String] {
        &self.api_audiences
    }

    pub fn max_expiration_seconds(&self) -> Option<i64> {
        self.max_expiration_seconds
    }

    pub fn extend_expiration(&self) -> bool {
        self.extend_expiration
    }

    /// How tokens were used (`pkg/serviceaccount/metrics.go`).
    pub fn uses(&self) -> &metrics::TokenUseMetrics {
        &self.uses
    }

    /// `--service-account-lookup`.
    pub fn lookup(&self) -> bool {
        self.lookup
    }

    pub fn jwks_uri(&self) -> Option<&str> {
        self.jwks_uri.as_deref()
    }

    /// Signs `claims` into a compact JWS.
    pub fn sign(&self, claims: &serde_json::Value) -> Result<String, ServiceAccountError> {
        jwt::sign(&self.signer, claims)
    }
}
