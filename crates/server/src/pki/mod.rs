//! First-run PKI: a self-signed CA, the API server's serving certificate and
//! an admin client certificate, kept under `<data-dir>/pki`.
//!
//! The layout and the certificate profiles follow what kubeadm sets up for a
//! control plane (`cmd/kubeadm/app/phases/certs/certlist.go`,
//! `cmd/kubeadm/app/util/pkiutil/pki_helpers.go`): a CA valid for ten years,
//! leaf certificates valid for one year, back-dated a few minutes against
//! clock skew, and the default service names of the `kubernetes` Service
//! (`pkg/controlplane/apiserver/options`) in the serving certificate.
//!
//! Keys are ECDSA P-256 so that a cold start stays within a few milliseconds.

mod ca;
mod files;
mod issue;
mod reuse;
mod san;
#[cfg(test)]
mod tests;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls::pki_types::{CertificateDer, PrivateKeyDer};

pub(crate) use files::write_file;

use ca::CaMaterial;
use files::{all_certs, create_dir, first_cert, private_key, read_optional, read_pair};
use issue::{new_admin, new_ca, new_serving};
use reuse::{admin_is_usable, serving_is_usable};
use san::wanted_sans;

/// File names inside the PKI directory.
pub const CA_CERT_FILE: &str = "ca.crt";
pub const CA_KEY_FILE: &str = "ca.key";
pub const SERVING_CERT_FILE: &str = "apiserver.crt";
pub const SERVING_KEY_FILE: &str = "apiserver.key";
pub const ADMIN_CERT_FILE: &str = "admin.crt";
pub const ADMIN_KEY_FILE: &str = "admin.key";

/// Subject common name of the CA.
pub const CA_COMMON_NAME: &str = "ferrokube-ca";
/// Subject common name of the serving certificate.
pub const SERVING_COMMON_NAME: &str = "ferrokube-apiserver";
/// User name carried by the admin client certificate.
pub const ADMIN_COMMON_NAME: &str = "ferrokube-admin";
/// Group carried by the admin client certificate (`user.SystemPrivilegedGroup`).
pub const ADMIN_ORGANIZATION: &str = "system:masters";

/// Names every serving certificate carries, whatever was asked for: the
/// loopback names and the in-cluster names of the `kubernetes` Service.
pub const DEFAULT_SANS: [&str; 7] = [
    "localhost",
    "127.0.0.1",
    "::1",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
];

const DAY: u64 = 24 * 60 * 60;
/// kubeadm: `CACertAndKeyBaseName` validity, ten years (`duration365d * 10`).
const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * DAY);
/// kubeadm: leaf certificates, one year.
const LEAF_VALIDITY: Duration = Duration::from_secs(365 * DAY);
/// kubeadm `CertificateBackdate`: tolerate clocks a little behind ours.
const BACKDATE: Duration = Duration::from_secs(5 * 60);
/// A leaf certificate that expires sooner than this is reissued at start.
const RENEW_BEFORE: Duration = Duration::from_secs(30 * DAY);

/// Errors of [`ensure`].
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    #[error("creating pki directory {path}: {source}")]
    CreateDir { path: PathBuf, source: io::Error },
    #[error("reading {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("writing {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("{cert} exists but its key {key} is missing; refusing to replace the ca")]
    MissingCaKey { cert: PathBuf, key: PathBuf },
    #[error("parsing certificate {path}: {reason}")]
    ParseCertificate { path: PathBuf, reason: String },
    #[error("parsing private key {path}: {reason}")]
    ParseKey { path: PathBuf, reason: String },
    #[error("ca key {key} does not match ca certificate {cert}")]
    CaKeyMismatch { cert: PathBuf, key: PathBuf },
    #[error("ca certificate {path} cannot be used as an issuer: {reason}")]
    UnusableCa { path: PathBuf, reason: String },
    #[error("invalid subject alternative name {san:?}: {reason}")]
    InvalidSan { san: String, reason: String },
    #[error("generating {what}: {source}")]
    Generate {
        what: &'static str,
        source: rcgen::Error,
    },
}

/// The PKI material the server, the kubeconfig writer and the TLS setup need.
#[derive(Clone)]
pub struct Pki {
    pub dir: PathBuf,
    pub ca_cert_path: PathBuf,
    pub ca_key_path: PathBuf,
    pub serving_cert_path: PathBuf,
    pub serving_key_path: PathBuf,
    pub admin_cert_path: PathBuf,
    pub admin_key_path: PathBuf,
    pub ca_cert_pem: String,
    pub ca_key_pem: String,
    pub serving_cert_pem: String,
    pub serving_key_pem: String,
    pub admin_cert_pem: String,
    pub admin_key_pem: String,
    /// Which of `"ca"`, `"apiserver"`, `"admin"` this call (re)created.
    pub generated: Vec<&'static str>,
}

impl fmt::Debug for Pki {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keys stay out of logs.
        f.debug_struct("Pki")
            .field("dir", &self.dir)
            .field("generated", &self.generated)
            .finish_non_exhaustive()
    }
}

impl Pki {
    /// The CA certificate in DER.
    pub fn ca_cert_der(&self) -> Result<CertificateDer<'static>, PkiError> {
        first_cert(&self.ca_cert_path, &self.ca_cert_pem)
    }

    /// The serving certificate chain in DER, leaf first.
    pub fn serving_cert_chain(&self) -> Result<Vec<CertificateDer<'static>>, PkiError> {
        all_certs(&self.serving_cert_path, &self.serving_cert_pem)
    }

    /// The serving private key in DER.
    pub fn serving_key_der(&self) -> Result<PrivateKeyDer<'static>, PkiError> {
        private_key(&self.serving_key_path, &self.serving_key_pem)
    }

    /// Serves the PEM certificate chain and key of these files (kube's
    /// `--tls-cert-file`, `--tls-private-key-file`) instead of the
    /// certificate issued from the CA.
    pub fn use_serving_certificate(&mut self, cert: &Path, key: &Path) -> Result<(), PkiError> {
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|source| PkiError::Read {
                path: path.to_path_buf(),
                source,
            })
        };
        let (cert_pem, key_pem) = (read(cert)?, read(key)?);
        // Parsed now, so a bad file stops the start with its name.
        all_certs(cert, &cert_pem)?;
        private_key(key, &key_pem)?;
        self.serving_cert_path = cert.to_path_buf();
        self.serving_key_path = key.to_path_buf();
        self.serving_cert_pem = cert_pem;
        self.serving_key_pem = key_pem;
        Ok(())
    }

    /// The admin client certificate chain in DER, leaf first.
    pub fn admin_cert_chain(&self) -> Result<Vec<CertificateDer<'static>>, PkiError> {
        all_certs(&self.admin_cert_path, &self.admin_cert_pem)
    }

    /// The admin client private key in DER.
    pub fn admin_key_der(&self) -> Result<PrivateKeyDer<'static>, PkiError> {
        private_key(&self.admin_key_path, &self.admin_key_pem)
    }
}

/// Creates the PKI under `pki_dir` on first start and reuses it afterwards.
///
/// `sans` are extra names for the serving certificate (IP addresses, IPv6
/// ones optionally in brackets, or DNS names). A serving certificate missing
/// one of them, expiring within 30 days, or not issued by the CA is reissued
/// with a new key; the CA and the admin certificate are left alone. The CA is
/// created only when `ca.crt` is absent.
pub fn ensure(pki_dir: &Path, sans: &[String]) -> Result<Pki, PkiError> {
    create_dir(pki_dir)?;
    let wanted = wanted_sans(sans)?;
    let path = |name: &str| pki_dir.join(name);
    let (ca_cert_path, ca_key_path) = (path(CA_CERT_FILE), path(CA_KEY_FILE));
    let (serving_cert_path, serving_key_path) = (path(SERVING_CERT_FILE), path(SERVING_KEY_FILE));
    let (admin_cert_path, admin_key_path) = (path(ADMIN_CERT_FILE), path(ADMIN_KEY_FILE));
    let now = now_unix();
    let mut generated = Vec::new();

    // The CA: created once, never replaced behind the operator's back.
    let (ca_cert_pem, ca_key_pem) = match read_optional(&ca_cert_path)? {
        Some(cert) => match read_optional(&ca_key_path)? {
            Some(key) => (cert, key),
            None => {
                return Err(PkiError::MissingCaKey {
                    cert: ca_cert_path,
                    key: ca_key_path,
                })
            }
        },
        None => {
            let (cert, key) = new_ca(now)?;
            // Key first: a crash in between leaves no certificate, so the
            // next start creates the pair again.
            write_file(&ca_key_path, key.as_bytes(), 0o600)?;
            write_file(&ca_cert_path, cert.as_bytes(), 0o600)?;
            generated.push("ca");
            (cert, key)
        }
    };
    let ca = CaMaterial::load(&ca_cert_path, &ca_cert_pem, &ca_key_path, &ca_key_pem)?;

    let serving = match read_pair(&serving_cert_path, &serving_key_path)? {
        Some((cert, key)) if serving_is_usable(&ca, &cert, &key, &wanted, now) => (cert, key),
        _ => {
            let (cert, key) = new_serving(&ca, &wanted, now)?;
            write_file(&serving_key_path, key.as_bytes(), 0o600)?;
            write_file(&serving_cert_path, cert.as_bytes(), 0o600)?;
            generated.push("apiserver");
            (cert, key)
        }
    };

    let admin = match read_pair(&admin_cert_path, &admin_key_path)? {
        Some((cert, key)) if admin_is_usable(&ca, &cert, &key, now) => (cert, key),
        _ => {
            let (cert, key) = new_admin(&ca, now)?;
            write_file(&admin_key_path, key.as_bytes(), 0o600)?;
            write_file(&admin_cert_path, cert.as_bytes(), 0o600)?;
            generated.push("admin");
            (cert, key)
        }
    };

    if !generated.is_empty() {
        tracing::info!(dir = %pki_dir.display(), ?generated, "pki certificates written");
    }
    // Files an older ferrokube wrote (certificates were 0644) become 0600 too.
    for file in [
        &ca_cert_path,
        &ca_key_path,
        &serving_cert_path,
        &serving_key_path,
        &admin_cert_path,
        &admin_key_path,
    ] {
        files::restrict_mode(file)?;
    }
    Ok(Pki {
        dir: pki_dir.to_path_buf(),
        ca_cert_path,
        ca_key_path,
        serving_cert_path,
        serving_key_path,
        admin_cert_path,
        admin_key_path,
        ca_cert_pem,
        ca_key_pem,
        serving_cert_pem: serving.0,
        serving_key_pem: serving.1,
        admin_cert_pem: admin.0,
        admin_key_pem: admin.1,
        generated,
    })
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
