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

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, DnValue,
    ExtendedKeyUsagePurpose, IsCa, Issuer, KeyIdMethod, KeyPair, KeyUsagePurpose, SanType,
    SerialNumber,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::FromDer;

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
            write_file(&ca_cert_path, cert.as_bytes(), 0o644)?;
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
            write_file(&serving_cert_path, cert.as_bytes(), 0o644)?;
            generated.push("apiserver");
            (cert, key)
        }
    };

    let admin = match read_pair(&admin_cert_path, &admin_key_path)? {
        Some((cert, key)) if admin_is_usable(&ca, &cert, &key, now) => (cert, key),
        _ => {
            let (cert, key) = new_admin(&ca, now)?;
            write_file(&admin_key_path, key.as_bytes(), 0o600)?;
            write_file(&admin_cert_path, cert.as_bytes(), 0o644)?;
            generated.push("admin");
            (cert, key)
        }
    };

    if !generated.is_empty() {
        tracing::info!(dir = %pki_dir.display(), ?generated, "pki certificates written");
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

/// One name of a serving certificate.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum SanName {
    Ip(IpAddr),
    /// Lower case: DNS names compare case-insensitively.
    Dns(String),
}

impl SanName {
    fn parse(raw: &str) -> Result<Option<SanName>, PkiError> {
        let s = raw.trim();
        if s.is_empty() {
            return Ok(None);
        }
        let unbracketed = s
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
            .unwrap_or(s);
        if let Ok(ip) = unbracketed.parse::<IpAddr>() {
            return Ok(Some(SanName::Ip(ip)));
        }
        let invalid = |reason: &str| PkiError::InvalidSan {
            san: raw.to_string(),
            reason: reason.to_string(),
        };
        if !s.is_ascii() {
            return Err(invalid("dns names must be ascii"));
        }
        if s.contains(|c: char| c.is_ascii_whitespace() || c == '/' || c == ':' || c == '@') {
            return Err(invalid("not an ip address or a dns name"));
        }
        Ok(Some(SanName::Dns(s.to_ascii_lowercase())))
    }

    fn to_rcgen(&self) -> Result<SanType, PkiError> {
        Ok(match self {
            SanName::Ip(ip) => SanType::IpAddress(*ip),
            SanName::Dns(name) => {
                SanType::DnsName(name.as_str().try_into().map_err(|e: rcgen::Error| {
                    PkiError::InvalidSan {
                        san: name.clone(),
                        reason: e.to_string(),
                    }
                })?)
            }
        })
    }
}

/// The defaults followed by the requested names, without duplicates.
fn wanted_sans(extra: &[String]) -> Result<Vec<SanName>, PkiError> {
    let mut out: Vec<SanName> = Vec::new();
    let defaults = DEFAULT_SANS.iter().map(|s| s.to_string());
    for raw in defaults.chain(extra.iter().cloned()) {
        if let Some(name) = SanName::parse(&raw)? {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    Ok(out)
}

/// The CA certificate and key, ready to sign.
struct CaMaterial {
    key: KeyPair,
    /// Subject, key identifier and key usages of the CA, as rcgen needs them
    /// to write a child's issuer and authority key identifier.
    issuer_params: CertificateParams,
    /// Whether children get an authority key identifier (the CA has an SKID).
    has_skid: bool,
    roots: Arc<rustls::RootCertStore>,
}

impl CaMaterial {
    fn load(
        cert_path: &Path,
        cert_pem: &str,
        key_path: &Path,
        key_pem: &str,
    ) -> Result<CaMaterial, PkiError> {
        let der = first_cert(cert_path, cert_pem)?;
        let key_der = private_key(key_path, key_pem)?;
        let key = KeyPair::try_from(&key_der).map_err(|e| PkiError::ParseKey {
            path: key_path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let unusable = |reason: String| PkiError::UnusableCa {
            path: cert_path.to_path_buf(),
            reason,
        };
        let (_, x509) =
            X509Certificate::from_der(der.as_ref()).map_err(|e| PkiError::ParseCertificate {
                path: cert_path.to_path_buf(),
                reason: e.to_string(),
            })?;
        if x509.public_key().subject_public_key.data.as_ref() != key.public_key_raw() {
            return Err(PkiError::CaKeyMismatch {
                cert: cert_path.to_path_buf(),
                key: key_path.to_path_buf(),
            });
        }
        let mut issuer_params = CertificateParams::default();
        issuer_params.distinguished_name = distinguished_name(&x509).map_err(unusable)?;
        let skid = x509
            .iter_extensions()
            .find_map(|ext| match ext.parsed_extension() {
                ParsedExtension::SubjectKeyIdentifier(id) => Some(id.0.to_vec()),
                _ => None,
            });
        issuer_params.key_identifier_method = match &skid {
            Some(id) => KeyIdMethod::PreSpecified(id.clone()),
            None => KeyIdMethod::Sha256,
        };
        issuer_params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
        ];
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(der.clone())
            .map_err(|e| unusable(format!("not a trust anchor: {e}")))?;
        Ok(CaMaterial {
            key,
            issuer_params,
            has_skid: skid.is_some(),
            roots: Arc::new(roots),
        })
    }

    fn issuer(&self) -> Issuer<'_, &KeyPair> {
        Issuer::from_params(&self.issuer_params, &self.key)
    }

    fn provider() -> Arc<rustls::crypto::CryptoProvider> {
        Arc::new(rustls::crypto::ring::default_provider())
    }

    /// Whether `leaf` chains to this CA and is valid now for server auth.
    fn verifies_server(&self, leaf: &CertificateDer<'_>, now: u64) -> bool {
        use rustls::client::danger::ServerCertVerifier;
        let Ok(verifier) = rustls::client::WebPkiServerVerifier::builder_with_provider(
            self.roots.clone(),
            Self::provider(),
        )
        .build() else {
            return false;
        };
        let name = ServerName::DnsName(match "localhost".try_into() {
            Ok(n) => n,
            Err(_) => return false,
        });
        verifier
            .verify_server_cert(
                leaf,
                &[],
                &name,
                &[],
                UnixTime::since_unix_epoch(Duration::from_secs(now)),
            )
            .is_ok()
    }

    /// Whether `leaf` chains to this CA and is valid now for client auth.
    fn verifies_client(&self, leaf: &CertificateDer<'_>, now: u64) -> bool {
        let Ok(verifier) = rustls::server::WebPkiClientVerifier::builder_with_provider(
            self.roots.clone(),
            Self::provider(),
        )
        .build() else {
            return false;
        };
        verifier
            .verify_client_cert(
                leaf,
                &[],
                UnixTime::since_unix_epoch(Duration::from_secs(now)),
            )
            .is_ok()
    }
}

/// The subject of `x509` as rcgen writes it, so that a child's issuer field
/// matches the CA's subject byte for byte (same string types, same order).
fn distinguished_name(x509: &X509Certificate<'_>) -> Result<DistinguishedName, String> {
    use x509_parser::der_parser::asn1_rs::Tag;
    let mut dn = DistinguishedName::new();
    for rdn in x509.subject().iter() {
        let mut attrs = rdn.iter();
        let (Some(attr), None) = (attrs.next(), attrs.next()) else {
            return Err("multi-valued relative distinguished names are not supported".into());
        };
        let oid: Vec<u64> = attr
            .attr_type()
            .iter()
            .ok_or("subject attribute type too large")?
            .collect();
        let data = attr.attr_value().data;
        let text = || std::str::from_utf8(data).map_err(|e| e.to_string());
        let bad = |e: rcgen::Error| e.to_string();
        let value = match attr.attr_value().header.tag() {
            Tag::Utf8String => DnValue::Utf8String(text()?.to_string()),
            Tag::PrintableString => DnValue::PrintableString(text()?.try_into().map_err(bad)?),
            Tag::Ia5String => DnValue::Ia5String(text()?.try_into().map_err(bad)?),
            Tag::T61String => DnValue::TeletexString(text()?.try_into().map_err(bad)?),
            Tag::BmpString => DnValue::BmpString(
                rcgen::string::BmpString::from_utf16be(data.to_vec()).map_err(bad)?,
            ),
            Tag::UniversalString => DnValue::UniversalString(
                rcgen::string::UniversalString::from_utf32be(data.to_vec()).map_err(bad)?,
            ),
            other => return Err(format!("unsupported subject string type {other:?}")),
        };
        let ty = DnType::from_oid(&oid);
        if dn.get(&ty).is_some() {
            return Err("repeated subject attributes are not supported".into());
        }
        dn.push(ty, value);
    }
    Ok(dn)
}

/// Parses a leaf and checks what every reused leaf needs: `key_pem` matches
/// the certificate and the certificate does not expire soon.
fn leaf_basics<'a>(
    key_pem: &str,
    der: &'a CertificateDer<'static>,
    now: u64,
) -> Option<X509Certificate<'a>> {
    let (_, x509) = X509Certificate::from_der(der.as_ref()).ok()?;
    let key_der = rustls_pemfile::private_key(&mut key_pem.as_bytes()).ok()??;
    let key = KeyPair::try_from(&key_der).ok()?;
    if x509.public_key().subject_public_key.data.as_ref() != key.public_key_raw() {
        tracing::warn!("certificate and key do not match");
        return None;
    }
    let renew_at = now.saturating_add(RENEW_BEFORE.as_secs());
    let not_after = x509.validity().not_after.timestamp();
    if not_after < i64::try_from(renew_at).unwrap_or(i64::MAX) {
        tracing::info!(not_after, "certificate expires soon");
        return None;
    }
    Some(x509)
}

fn serving_is_usable(
    ca: &CaMaterial,
    cert_pem: &str,
    key_pem: &str,
    wanted: &[SanName],
    now: u64,
) -> bool {
    let Some(der) = first_cert_opt(cert_pem) else {
        tracing::warn!("unreadable serving certificate; reissuing");
        return false;
    };
    let Some(x509) = leaf_basics(key_pem, &der, now) else {
        tracing::info!("reissuing serving certificate");
        return false;
    };
    if !ca.verifies_server(&der, now) {
        tracing::info!("serving certificate is not valid under the ca; reissuing");
        return false;
    }
    let present = cert_sans(&x509);
    let missing: Vec<&SanName> = wanted.iter().filter(|n| !present.contains(n)).collect();
    if !missing.is_empty() {
        tracing::info!(
            ?missing,
            "serving certificate lacks requested names; reissuing"
        );
        return false;
    }
    true
}

fn admin_is_usable(ca: &CaMaterial, cert_pem: &str, key_pem: &str, now: u64) -> bool {
    let Some(der) = first_cert_opt(cert_pem) else {
        tracing::warn!("unreadable admin certificate; reissuing");
        return false;
    };
    if leaf_basics(key_pem, &der, now).is_none() {
        tracing::info!("reissuing admin certificate");
        return false;
    }
    if !ca.verifies_client(&der, now) {
        tracing::info!("admin certificate is not valid under the ca; reissuing");
        return false;
    }
    true
}

/// The DNS and IP names of a certificate's subjectAltName extension.
fn cert_sans(x509: &X509Certificate<'_>) -> BTreeSet<SanName> {
    let mut out = BTreeSet::new();
    let Ok(Some(ext)) = x509.subject_alternative_name() else {
        return out;
    };
    for name in &ext.value.general_names {
        match name {
            GeneralName::DNSName(dns) => {
                out.insert(SanName::Dns(dns.to_ascii_lowercase()));
            }
            GeneralName::IPAddress(bytes) => {
                let ip = match bytes.len() {
                    4 => <[u8; 4]>::try_from(*bytes).ok().map(IpAddr::from),
                    16 => <[u8; 16]>::try_from(*bytes).ok().map(IpAddr::from),
                    _ => None,
                };
                if let Some(ip) = ip {
                    out.insert(SanName::Ip(ip));
                }
            }
            _ => {}
        }
    }
    out
}

fn new_key(what: &'static str) -> Result<KeyPair, PkiError> {
    KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .map_err(|source| PkiError::Generate { what, source })
}

/// Common parameters: random positive serial, validity from `now - BACKDATE`.
fn base_params(common_name: &str, now: u64, validity: Duration) -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    params.distinguished_name = dn;
    let mut serial = *uuid::Uuid::new_v4().as_bytes();
    // Positive and without a leading zero octet, 16 bytes (RFC 5280 4.1.2.2).
    serial[0] = (serial[0] & 0x7f) | 0x40;
    params.serial_number = Some(SerialNumber::from_slice(&serial));
    let epoch = rcgen::date_time_ymd(1970, 1, 1);
    let start = now.saturating_sub(BACKDATE.as_secs());
    params.not_before = epoch + Duration::from_secs(start);
    params.not_after = epoch + Duration::from_secs(now.saturating_add(validity.as_secs()));
    params
}

/// A self-signed CA (client-go `cert.NewSelfSignedCACert` profile).
fn new_ca(now: u64) -> Result<(String, String), PkiError> {
    let key = new_key("ca key")?;
    let mut params = base_params(CA_COMMON_NAME, now, CA_VALIDITY);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
    ];
    let cert = params
        .self_signed(&key)
        .map_err(|source| PkiError::Generate {
            what: "ca certificate",
            source,
        })?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn leaf_params(ca: &CaMaterial, common_name: &str, now: u64) -> CertificateParams {
    let mut params = base_params(common_name, now, LEAF_VALIDITY);
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.use_authority_key_identifier_extension = ca.has_skid;
    params
}

fn new_serving(
    ca: &CaMaterial,
    wanted: &[SanName],
    now: u64,
) -> Result<(String, String), PkiError> {
    let key = new_key("serving key")?;
    let mut params = leaf_params(ca, SERVING_COMMON_NAME, now);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.subject_alt_names = wanted
        .iter()
        .map(SanName::to_rcgen)
        .collect::<Result<_, _>>()?;
    let cert = params
        .signed_by(&key, &ca.issuer())
        .map_err(|source| PkiError::Generate {
            what: "serving certificate",
            source,
        })?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn new_admin(ca: &CaMaterial, now: u64) -> Result<(String, String), PkiError> {
    let key = new_key("admin key")?;
    let mut params = leaf_params(ca, ADMIN_COMMON_NAME, now);
    params
        .distinguished_name
        .push(DnType::OrganizationName, ADMIN_ORGANIZATION);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let cert = params
        .signed_by(&key, &ca.issuer())
        .map_err(|source| PkiError::Generate {
            what: "admin certificate",
            source,
        })?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn create_dir(path: &Path) -> Result<(), PkiError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path).map_err(|source| PkiError::CreateDir {
        path: path.to_path_buf(),
        source,
    })
}

fn read_optional(path: &Path) -> Result<Option<String>, PkiError> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PkiError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Both files of a leaf pair, or `None` when either is absent.
fn read_pair(cert: &Path, key: &Path) -> Result<Option<(String, String)>, PkiError> {
    Ok(match (read_optional(cert)?, read_optional(key)?) {
        (Some(c), Some(k)) => Some((c, k)),
        _ => None,
    })
}

/// Writes `data` to `path` through a temporary file and a rename, so readers
/// never see half a file; `mode` applies on Unix.
pub(crate) fn write_file(path: &Path, data: &[u8], mode: u32) -> Result<(), PkiError> {
    write_file_io(path, data, mode).map_err(|source| PkiError::Write {
        path: path.to_path_buf(),
        source,
    })
}

pub(crate) fn write_file_io(path: &Path, data: &[u8], mode: u32) -> io::Result<()> {
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    // A stale temporary file would keep its old mode.
    match fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(&tmp)?;
    file.write_all(data)?;
    drop(file);
    fs::rename(&tmp, path)
}

fn all_certs(path: &Path, pem: &str) -> Result<Vec<CertificateDer<'static>>, PkiError> {
    let certs = rustls_pemfile::certs(&mut pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PkiError::ParseCertificate {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    if certs.is_empty() {
        return Err(PkiError::ParseCertificate {
            path: path.to_path_buf(),
            reason: "no certificate found".into(),
        });
    }
    Ok(certs)
}

fn first_cert(path: &Path, pem: &str) -> Result<CertificateDer<'static>, PkiError> {
    let mut certs = all_certs(path, pem)?;
    Ok(certs.swap_remove(0))
}

fn first_cert_opt(pem: &str) -> Option<CertificateDer<'static>> {
    rustls_pemfile::certs(&mut pem.as_bytes()).next()?.ok()
}

fn private_key(path: &Path, pem: &str) -> Result<PrivateKeyDer<'static>, PkiError> {
    rustls_pemfile::private_key(&mut pem.as_bytes())
        .map_err(|e| PkiError::ParseKey {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?
        .ok_or_else(|| PkiError::ParseKey {
            path: path.to_path_buf(),
            reason: "no private key found".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(dir: &Path, name: &str) -> Vec<u8> {
        fs::read(dir.join(name)).expect("read pki file")
    }

    const ALL: [&str; 6] = [
        CA_CERT_FILE,
        CA_KEY_FILE,
        SERVING_CERT_FILE,
        SERVING_KEY_FILE,
        ADMIN_CERT_FILE,
        ADMIN_KEY_FILE,
    ];

    #[test]
    fn first_run_creates_everything_and_second_run_reuses_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("pki");
        let started = std::time::Instant::now();
        let pki = ensure(&dir, &[]).expect("first ensure");
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(500),
            "pki creation took {took:?}"
        );
        assert_eq!(pki.generated, vec!["ca", "apiserver", "admin"]);
        let before: Vec<Vec<u8>> = ALL.iter().map(|n| read(&dir, n)).collect();
        for (name, bytes) in ALL.iter().zip(&before) {
            assert!(!bytes.is_empty(), "{name} is empty");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for name in [CA_KEY_FILE, SERVING_KEY_FILE, ADMIN_KEY_FILE] {
                let mode = fs::metadata(dir.join(name))
                    .expect("stat")
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o777, 0o600, "{name}");
            }
        }
        assert_eq!(pki.ca_cert_pem.as_bytes(), &before[0][..]);

        let again = ensure(&dir, &[]).expect("second ensure");
        assert!(again.generated.is_empty(), "{:?}", again.generated);
        let after: Vec<Vec<u8>> = ALL.iter().map(|n| read(&dir, n)).collect();
        assert_eq!(before, after);
        assert_eq!(again.serving_key_pem, pki.serving_key_pem);
    }

    #[test]
    fn new_san_reissues_only_the_serving_certificate() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        ensure(dir, &["10.1.2.3".to_string()]).expect("first ensure");
        let before: Vec<Vec<u8>> = ALL.iter().map(|n| read(dir, n)).collect();

        let sans = vec![
            "10.1.2.3".to_string(),
            "Api.Example.COM".to_string(),
            "[fd00::1]".to_string(),
        ];
        let pki = ensure(dir, &sans).expect("ensure with new sans");
        assert_eq!(pki.generated, vec!["apiserver"]);
        let after: Vec<Vec<u8>> = ALL.iter().map(|n| read(dir, n)).collect();
        for (i, name) in ALL.iter().enumerate() {
            let changed = before[i] != after[i];
            let expect_change = *name == SERVING_CERT_FILE || *name == SERVING_KEY_FILE;
            assert_eq!(changed, expect_change, "{name}");
        }

        let der = pki.serving_cert_chain().expect("chain").remove(0);
        let (_, x509) = X509Certificate::from_der(der.as_ref()).expect("parse");
        let names = cert_sans(&x509);
        for want in DEFAULT_SANS
            .iter()
            .copied()
            .chain(["10.1.2.3", "api.example.com", "fd00::1"])
        {
            let name = SanName::parse(want).expect("parse").expect("some");
            assert!(names.contains(&name), "missing {want}");
        }
        // A subset of what is already there changes nothing.
        let same = ensure(dir, &["api.example.com".to_string()]).expect("third ensure");
        assert!(same.generated.is_empty());
    }

    #[test]
    fn missing_ca_key_is_an_error_and_missing_leaf_is_recreated() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        ensure(dir, &[]).expect("first ensure");
        fs::remove_file(dir.join(ADMIN_KEY_FILE)).expect("rm");
        let pki = ensure(dir, &[]).expect("second ensure");
        assert_eq!(pki.generated, vec!["admin"]);
        fs::remove_file(dir.join(CA_KEY_FILE)).expect("rm");
        assert!(matches!(
            ensure(dir, &[]),
            Err(PkiError::MissingCaKey { .. })
        ));
    }

    #[test]
    fn certificates_verify_against_the_ca() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let pki = ensure(tmp.path(), &[]).expect("ensure");
        let ca = CaMaterial::load(
            &pki.ca_cert_path,
            &pki.ca_cert_pem,
            &pki.ca_key_path,
            &pki.ca_key_pem,
        )
        .expect("load ca");
        let now = now_unix();
        let admin = pki.admin_cert_chain().expect("admin").remove(0);
        let serving = pki.serving_cert_chain().expect("serving").remove(0);
        assert!(ca.verifies_client(&admin, now));
        assert!(ca.verifies_server(&serving, now));
        // The EKUs keep the two apart.
        assert!(!ca.verifies_client(&serving, now));
        assert!(!ca.verifies_server(&admin, now));

        let (_, x509) = X509Certificate::from_der(admin.as_ref()).expect("parse");
        let cn: Vec<&str> = x509
            .subject()
            .iter_common_name()
            .filter_map(|a| a.as_str().ok())
            .collect();
        let orgs: Vec<&str> = x509
            .subject()
            .iter_organization()
            .filter_map(|a| a.as_str().ok())
            .collect();
        assert_eq!(cn, vec![ADMIN_COMMON_NAME]);
        assert_eq!(orgs, vec![ADMIN_ORGANIZATION]);
        // The issuer field is the CA subject byte for byte.
        let ca_der = pki.ca_cert_der().expect("ca der");
        let (_, ca_x509) = X509Certificate::from_der(ca_der.as_ref()).expect("parse ca");
        assert_eq!(x509.issuer().as_raw(), ca_x509.subject().as_raw());
        assert!(ca_x509.is_ca());
    }

    #[test]
    fn sans_are_classified() {
        let parse = |s: &str| SanName::parse(s).expect("parse");
        assert_eq!(
            parse("1.2.3.4"),
            Some(SanName::Ip("1.2.3.4".parse().expect("ip")))
        );
        assert_eq!(
            parse("[::1]"),
            Some(SanName::Ip("::1".parse().expect("ip")))
        );
        assert_eq!(
            parse("Host.Example"),
            Some(SanName::Dns("host.example".into()))
        );
        assert_eq!(
            parse("*.example.com"),
            Some(SanName::Dns("*.example.com".into()))
        );
        assert_eq!(parse("  "), None);
        assert!(SanName::parse("exämple.com").is_err());
        assert!(SanName::parse("http://x").is_err());
    }
}
