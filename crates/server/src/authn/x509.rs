//! x509: `request/x509/x509.go`.

use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;
use x509_parser::x509::AttributeTypeAndValue;

use std::time::SystemTime;

use rustls::pki_types::CertificateDer;

use super::ca_bundle::{certificate_identifier, CaBundle};
use super::{AuthnError, UserInfo, CERT_UID_OID};

/// The user a verified client certificate names: the subject's common name
/// (the last one, as Go's `pkix.Name` keeps it), each organization as a group
/// and the `1.3.6.1.4.1.57683.2` attribute as UID. `None` when the
/// certificate has no common name or cannot be read. The certificate must
/// already be verified (the TLS layer does it against the client CA).
///
/// Like upstream's converter this does not add `system:authenticated`; the
/// [`Authenticator`](super::Authenticator) does, as kube's `AuthenticatedGroupAdder` does.
pub fn user_from_peer_certificate(der: &[u8]) -> Option<UserInfo> {
    match user_from_certificate(der) {
        Ok(user) => user,
        Err(e) => {
            tracing::debug!(error = %e, "client certificate rejected");
            None
        }
    }
}

/// `x509.Authenticator.AuthenticateRequest`: the chain verified against the
/// client CA bundle (an unverifiable one fails with kube's
/// `verifying certificate SN=…, SKID=…, AKID=… failed: x509: …`), then
/// [`user_from_certificate`] (`CommonNameUserConversion`): `Ok(None)` for a
/// certificate without a common name, which the next authenticator gets.
pub(super) fn authenticate_chain(
    client_ca: &CaBundle,
    chain: &[CertificateDer<'_>],
    now: SystemTime,
) -> Result<Option<UserInfo>, AuthnError> {
    let Some(leaf) = chain.first() else {
        return Ok(None);
    };
    if let Err(error) = client_ca.verify(chain, now) {
        return Err(AuthnError::CertificateVerification(format!(
            "verifying certificate {} failed: {error}",
            certificate_identifier(leaf.as_ref())
        )));
    }
    user_from_certificate(leaf.as_ref())
}

/// The end of the certificate's validity period.
pub(super) fn not_after(der: &[u8]) -> Option<SystemTime> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    let seconds = u64::try_from(cert.validity().not_after.timestamp()).ok()?;
    Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(seconds))
}

/// The subject's common name as Go's `pkix.Name.CommonName` holds it (the
/// last one), empty when there is none or the certificate cannot be read.
pub(super) fn common_name(der: &[u8]) -> String {
    X509Certificate::from_der(der)
        .ok()
        .and_then(|(_, cert)| {
            cert.subject()
                .iter_common_name()
                .filter_map(attribute_string)
                .last()
        })
        .unwrap_or_default()
}

/// `CommonNameUserConversion`: `Ok(None)` is "not this authenticator's
/// business", `Err` is a failed authentication.
pub(super) fn user_from_certificate(der: &[u8]) -> Result<Option<UserInfo>, AuthnError> {
    let (_, cert) =
        X509Certificate::from_der(der).map_err(|e| AuthnError::Certificate(e.to_string()))?;
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .filter_map(attribute_string)
        .last()
        .unwrap_or_default();
    if name.is_empty() {
        return Ok(None);
    }
    let groups = subject
        .iter_organization()
        .filter_map(attribute_string)
        .collect();
    // parseUIDFromCert
    let mut uids = Vec::new();
    for attr in subject.iter_attributes() {
        if attr.attr_type().to_id_string() != CERT_UID_OID {
            continue;
        }
        let uid = attribute_string(attr).ok_or_else(|| {
            AuthnError::Certificate("unable to parse UID into a string".to_string())
        })?;
        uids.push(uid);
    }
    let uid = match uids.as_slice() {
        [] => String::new(),
        [one] if one.is_empty() => {
            return Err(AuthnError::Certificate(
                "UID cannot be an empty string".to_string(),
            ))
        }
        [one] => one.clone(),
        _ => {
            return Err(AuthnError::Certificate(format!(
                "expected 1 UID, but found multiple: {uids:?}"
            )))
        }
    };
    Ok(Some(UserInfo {
        name,
        uid,
        groups,
        extra: Default::default(),
    }))
}

/// The attribute value when it is one of the string types Go's
/// `encoding/asn1` decodes into a `string`.
fn attribute_string(attr: &AttributeTypeAndValue<'_>) -> Option<String> {
    use x509_parser::der_parser::asn1_rs::Tag;
    let value = attr.attr_value();
    let data = value.data;
    match value.header.tag() {
        Tag::Utf8String
        | Tag::PrintableString
        | Tag::Ia5String
        | Tag::NumericString
        | Tag::T61String => std::str::from_utf8(data).ok().map(str::to_string),
        Tag::BmpString => {
            if data.len() % 2 != 0 {
                return None;
            }
            let units: Vec<u16> = data
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16(&units).ok()
        }
        _ => None,
    }
}
