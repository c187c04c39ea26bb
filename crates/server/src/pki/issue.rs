//! New keys and certificates, with kubeadm's profiles.

use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SerialNumber,
};

use super::ca::CaMaterial;
use super::san::SanName;
use super::{
    PkiError, ADMIN_COMMON_NAME, ADMIN_ORGANIZATION, BACKDATE, CA_COMMON_NAME, CA_VALIDITY,
    LEAF_VALIDITY, SERVING_COMMON_NAME,
};

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
pub(super) fn new_ca(now: u64) -> Result<(String, String), PkiError> {
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

pub(super) fn new_serving(
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

pub(super) fn new_admin(ca: &CaMaterial, now: u64) -> Result<(String, String), PkiError> {
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
