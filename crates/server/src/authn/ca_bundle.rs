//! CA bundles that verify client certificates, as kube's
//! `dynamiccertificates.DynamicFileCAContent` holds them
//! (`staging/src/k8s.io/apiserver/pkg/server/dynamiccertificates/dynamic_cafile_content.go`):
//! the PEM certificates of one or more files (plus, for the client CA,
//! ferrokube's own CA), re-read when a file changes.
//!
//! Verification follows Go's `x509.Certificate.Verify` with
//! `DefaultVerifyOptions` (the client-auth key usage, the presented
//! intermediates), through rustls's webpki verifier, and reports failures
//! with Go's texts.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::ClientCertVerifier;
use rustls::server::WebPkiClientVerifier;
use rustls::{CertificateError, RootCertStore};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::ParsedExtension;
use x509_parser::prelude::FromDer;

use super::AuthnError;

/// Where a bundle's certificates come from.
#[derive(Clone, Debug)]
enum Source {
    /// A file named by a flag (`--client-ca-file`), re-read when it changes.
    File { flag: &'static str, path: PathBuf },
    /// PEM held in memory (ferrokube's own CA).
    Pem(String),
}

/// The certificates of a bundle at one moment and the verifier built on them.
struct Contents {
    /// What each file held when read (to notice a change).
    file_bytes: Vec<Vec<u8>>,
    certificates: Vec<CertificateDer<'static>>,
    verifier: Arc<dyn ClientCertVerifier>,
}

/// A set of trusted CAs for client certificates (`CAContentProvider`).
pub struct CaBundle {
    sources: Vec<Source>,
    contents: RwLock<Arc<Contents>>,
    /// Bumped on each reload, so verifications cached per connection are
    /// redone against the new roots.
    generation: AtomicU64,
}

impl std::fmt::Debug for CaBundle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaBundle")
            .field("sources", &self.sources)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

impl CaBundle {
    /// The bundle of the PEM files (`flag` names them in errors) and the
    /// in-memory PEM `extra` (ferrokube's own CA), in that order.
    pub fn load(
        flag: &'static str,
        files: &[PathBuf],
        extra: Option<&str>,
    ) -> Result<CaBundle, AuthnError> {
        let mut sources: Vec<Source> = files
            .iter()
            .map(|path| Source::File {
                flag,
                path: path.clone(),
            })
            .collect();
        if let Some(pem) = extra {
            sources.push(Source::Pem(pem.to_string()));
        }
        let contents = read_contents(&sources)?;
        Ok(CaBundle {
            sources,
            contents: RwLock::new(Arc::new(contents)),
            generation: AtomicU64::new(0),
        })
    }

    fn current(&self) -> Arc<Contents> {
        self.contents
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The reload count: a verification made at another generation is stale.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The trusted certificates, in DER.
    pub fn certificates(&self) -> Vec<CertificateDer<'static>> {
        self.current().certificates.clone()
    }

    /// The trusted certificates as one PEM bundle (what kube's
    /// `CurrentCABundleContent` hands the authentication ConfigMap).
    pub fn pem(&self) -> String {
        encode_pem(&self.current().certificates)
    }

    /// Re-reads the files; a changed and valid bundle replaces the current
    /// one (`DynamicFileCAContent.loadCABundle`); an unreadable or invalid
    /// one is logged and the last good bundle kept. Returns whether it changed.
    pub fn reload_if_changed(&self) -> bool {
        let current = self.current();
        let mut files = Vec::new();
        for source in &self.sources {
            if let Source::File { path, .. } = source {
                match std::fs::read(path) {
                    Ok(bytes) => files.push(bytes),
                    Err(error) => {
                        tracing::warn!(path = %path.display(), %error, "re-reading a ca bundle");
                        return false;
                    }
                }
            }
        }
        if files == current.file_bytes {
            return false;
        }
        match read_contents(&self.sources) {
            Ok(contents) => {
                *self
                    .contents
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(contents);
                self.generation.fetch_add(1, Ordering::AcqRel);
                tracing::info!(sources = ?self.sources, "loaded a new ca bundle");
                true
            }
            Err(error) => {
                tracing::warn!(%error, "keeping the last ca bundle");
                false
            }
        }
    }

    /// Verifies `chain` (leaf first, then the intermediates the client sent)
    /// for client authentication against this bundle at `now`: `Err` is Go's
    /// `x509.Verify` error text.
    pub fn verify(&self, chain: &[CertificateDer<'_>], now: SystemTime) -> Result<(), String> {
        let Some((leaf, intermediates)) = chain.split_first() else {
            return Err("x509: no certificate presented".to_string());
        };
        // Go checks the leaf's validity period before looking for its issuer.
        if let Some(expired) = leaf_validity_error(leaf, now) {
            return Err(expired);
        }
        let unix = UnixTime::since_unix_epoch(
            now.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default(),
        );
        match self
            .current()
            .verifier
            .verify_client_cert(leaf, intermediates, unix)
        {
            Ok(_) => Ok(()),
            Err(error) => Err(go_verify_error(&error, leaf, now)),
        }
    }
}

/// How often CA files are checked for changes (kube: fsnotify, plus a
/// re-read every minute).
const RELOAD_INTERVAL: std::time::Duration = std::time::Duration::from_secs(5);

/// Re-reads the files of `bundles` every few seconds until `shutdown`; the
/// receiver counts the reloads that changed a bundle.
pub fn spawn_reloader(
    bundles: Vec<Arc<CaBundle>>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> tokio::sync::watch::Receiver<u64> {
    let (sender, receiver) = tokio::sync::watch::channel(0u64);
    let bundles: Vec<Arc<CaBundle>> = bundles
        .into_iter()
        .filter(|bundle| {
            bundle
                .sources
                .iter()
                .any(|source| matches!(source, Source::File { .. }))
        })
        .collect();
    if bundles.is_empty() {
        return receiver;
    }
    tokio::spawn(async move {
        let mut reloads = 0u64;
        loop {
            tokio::select! {
                () = tokio::time::sleep(RELOAD_INTERVAL) => {}
                _ = shutdown.changed() => return,
            }
            let checked = bundles.clone();
            let changed = tokio::task::spawn_blocking(move || {
                checked
                    .iter()
                    .filter(|bundle| bundle.reload_if_changed())
                    .count()
            })
            .await
            .unwrap_or(0);
            if changed > 0 {
                reloads += 1;
                let _ = sender.send(reloads);
            }
        }
    });
    receiver
}

fn read_contents(sources: &[Source]) -> Result<Contents, AuthnError> {
    let mut file_bytes = Vec::new();
    let mut certificates = Vec::new();
    for source in sources {
        let (bytes, flag, path) = match source {
            Source::File { flag, path } => {
                let bytes = std::fs::read(path).map_err(|error| AuthnError::CaFile {
                    flag,
                    path: path.clone(),
                    reason: error.to_string(),
                })?;
                file_bytes.push(bytes.clone());
                (bytes, *flag, path.as_path())
            }
            Source::Pem(pem) => (pem.as_bytes().to_vec(), "ca", Path::new("")),
        };
        let parsed = parse_certificates(&bytes).map_err(|reason| AuthnError::CaFile {
            flag,
            path: path.to_path_buf(),
            reason,
        })?;
        certificates.extend(parsed);
    }
    let mut roots = RootCertStore::empty();
    for certificate in &certificates {
        roots
            .add(certificate.clone())
            .map_err(|error| AuthnError::CaFile {
                flag: "ca",
                path: PathBuf::new(),
                reason: error.to_string(),
            })?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        Arc::new(rustls::crypto::ring::default_provider()),
    )
    .build()
    .map_err(|error| AuthnError::CaFile {
        flag: "ca",
        path: PathBuf::new(),
        reason: error.to_string(),
    })?;
    Ok(Contents {
        file_bytes,
        certificates,
        verifier,
    })
}

/// `cert.ParseCertsPEM`: every `CERTIFICATE` block; none is an error.
fn parse_certificates(bytes: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let mut certificates = Vec::new();
    for item in CertificateDer::pem_slice_iter(bytes) {
        let der = item.map_err(|error| error.to_string())?;
        if X509Certificate::from_der(der.as_ref()).is_err() {
            return Err("data does not contain any valid RSA or ECDSA certificates".to_string());
        }
        certificates.push(der);
    }
    if certificates.is_empty() {
        return Err("data does not contain any valid RSA or ECDSA certificates".to_string());
    }
    Ok(certificates)
}

/// The certificates as `CERTIFICATE` PEM blocks, as Go's `pem.Encode` writes them.
pub fn encode_pem(certificates: &[CertificateDer<'_>]) -> String {
    use base64::Engine;
    let mut out = String::new();
    for certificate in certificates {
        out.push_str("-----BEGIN CERTIFICATE-----\n");
        let text = base64::engine::general_purpose::STANDARD.encode(certificate.as_ref());
        for line in text.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
    }
    out
}

/// The error of a leaf outside its validity period (`isValid`), if it is.
fn leaf_validity_error(leaf: &CertificateDer<'_>, now: SystemTime) -> Option<String> {
    let (_, cert) = X509Certificate::from_der(leaf.as_ref()).ok()?;
    let validity = cert.validity();
    let seconds = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        });
    let text = |seconds: i64| {
        crate::go::time::format_time(seconds, 0, false).unwrap_or_else(|| seconds.to_string())
    };
    let now_text = crate::go::time::rfc3339(now);
    if seconds < validity.not_before.timestamp() {
        return Some(format!(
            "x509: certificate has expired or is not yet valid: current time {now_text} is before {}",
            text(validity.not_before.timestamp())
        ));
    }
    if seconds > validity.not_after.timestamp() {
        return Some(format!(
            "x509: certificate has expired or is not yet valid: current time {now_text} is after {}",
            text(validity.not_after.timestamp())
        ));
    }
    None
}

/// Go's text for a failed `x509.Verify` (`crypto/x509/verify.go`).
fn go_verify_error(error: &rustls::Error, leaf: &CertificateDer<'_>, now: SystemTime) -> String {
    let rustls::Error::InvalidCertificate(error) = error else {
        return format!("x509: {error}");
    };
    let validity = || {
        X509Certificate::from_der(leaf.as_ref())
            .ok()
            .map(|(_, cert)| {
                let validity = cert.validity();
                (
                    validity.not_before.timestamp(),
                    validity.not_after.timestamp(),
                )
            })
    };
    let now_text = crate::go::time::rfc3339(now);
    let time_text = |seconds: i64| {
        crate::go::time::format_time(seconds, 0, false).unwrap_or_else(|| seconds.to_string())
    };
    match error {
        CertificateError::UnknownIssuer | CertificateError::BadSignature => {
            "x509: certificate signed by unknown authority".to_string()
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            match validity() {
                Some((_, not_after)) => format!(
                    "x509: certificate has expired or is not yet valid: current time {now_text} is after {}",
                    time_text(not_after)
                ),
                None => "x509: certificate has expired or is not yet valid".to_string(),
            }
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            match validity() {
                Some((not_before, _)) => format!(
                    "x509: certificate has expired or is not yet valid: current time {now_text} is before {}",
                    time_text(not_before)
                ),
                None => "x509: certificate has expired or is not yet valid".to_string(),
            }
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            "x509: certificate specifies an incompatible key usage".to_string()
        }
        other => format!("x509: {other:?}"),
    }
}

/// `certificateIdentifier` (`request/x509/x509.go`): serial, subject key id
/// and authority key id of the leaf, for log lines and errors.
pub fn certificate_identifier(der: &[u8]) -> String {
    let Ok((_, cert)) = X509Certificate::from_der(der) else {
        return "SN=0, SKID=, AKID=".to_string();
    };
    let mut subject_key_id: &[u8] = &[];
    let mut authority_key_id: &[u8] = &[];
    for extension in cert.extensions() {
        match extension.parsed_extension() {
            ParsedExtension::SubjectKeyIdentifier(id) => subject_key_id = id.0,
            ParsedExtension::AuthorityKeyIdentifier(aki) => {
                if let Some(id) = &aki.key_identifier {
                    authority_key_id = id.0;
                }
            }
            _ => {}
        }
    }
    format!(
        "SN={}, SKID={}, AKID={}",
        cert.tbs_certificate.serial,
        column_separated_hex(subject_key_id),
        column_separated_hex(authority_key_id)
    )
}

/// `columnSeparatedHex`: upper-case hex bytes joined by `:`.
fn column_separated_hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|byte| format!("{byte:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ca(name: &str) -> (String, rcgen::Issuer<'static, rcgen::KeyPair>) {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let pem = params.self_signed(&key).expect("ca").pem();
        (pem, rcgen::Issuer::new(params, key))
    }

    fn leaf(
        issuer: &rcgen::Issuer<'static, rcgen::KeyPair>,
        not_after_year: i32,
    ) -> CertificateDer<'static> {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "jane");
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(not_after_year, 1, 1);
        params.signed_by(&key, issuer).expect("leaf").der().clone()
    }

    #[test]
    fn a_changed_file_is_reloaded_and_a_broken_one_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ca.crt");
        let (first_pem, first) = ca("first");
        let (second_pem, second) = ca("second");
        std::fs::write(&path, &first_pem).expect("write");
        let bundle =
            CaBundle::load("--client-ca-file", std::slice::from_ref(&path), None).expect("load");
        let now = SystemTime::now();
        assert!(bundle.verify(&[leaf(&first, 2100)], now).is_ok());
        assert!(bundle.verify(&[leaf(&second, 2100)], now).is_err());
        assert!(!bundle.reload_if_changed());
        // A file that holds no certificate keeps the last good bundle.
        std::fs::write(&path, "not pem").expect("write");
        assert!(!bundle.reload_if_changed());
        assert_eq!(bundle.generation(), 0);
        std::fs::write(&path, &second_pem).expect("write");
        assert!(bundle.reload_if_changed());
        assert_eq!(bundle.generation(), 1);
        assert!(bundle.verify(&[leaf(&second, 2100)], now).is_ok());
        assert_eq!(
            bundle.verify(&[leaf(&first, 2100)], now),
            Err("x509: certificate signed by unknown authority".to_string())
        );
    }

    #[test]
    fn go_texts_for_expired_certificates_and_empty_files() {
        let (pem, issuer) = ca("ca");
        let bundle = CaBundle::load("test", &[], Some(&pem)).expect("load");
        let now = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000);
        assert_eq!(
            bundle.verify(&[leaf(&issuer, 2020)], now),
            Err("x509: certificate has expired or is not yet valid: current time 2027-01-15T08:00:00Z is after 2020-01-01T00:00:00Z".to_string())
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = dir.path().join("empty.crt");
        std::fs::write(&empty, "").expect("write");
        let error = CaBundle::load("--client-ca-file", &[empty], None).expect_err("empty");
        assert!(
            error
                .to_string()
                .ends_with(": data does not contain any valid RSA or ECDSA certificates"),
            "{error}"
        );
    }
}
