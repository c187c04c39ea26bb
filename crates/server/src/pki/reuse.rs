//! Whether an existing leaf certificate can be kept.

use rcgen::KeyPair;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

use super::ca::CaMaterial;
use super::files::first_cert_opt;
use super::san::{cert_sans, SanName};
use super::RENEW_BEFORE;

/// Parses a leaf and checks what every reused leaf needs: `key_pem` matches
/// the certificate and the certificate does not expire soon.
fn leaf_basics<'a>(
    key_pem: &str,
    der: &'a CertificateDer<'static>,
    now: u64,
) -> Option<X509Certificate<'a>> {
    let (_, x509) = X509Certificate::from_der(der.as_ref()).ok()?;
    let key_der = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).ok()?;
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

pub(super) fn serving_is_usable(
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

pub(super) fn admin_is_usable(ca: &CaMaterial, cert_pem: &str, key_pem: &str, now: u64) -> bool {
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
