//! The CA as loaded from disk: signing material and verification of the
//! leaves it issued.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    CertificateParams, DistinguishedName, DnType, DnValue, Issuer, KeyIdMethod, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::ParsedExtension;
use x509_parser::prelude::FromDer;

use super::files::{first_cert, private_key};
use super::PkiError;

/// The CA certificate and key, ready to sign.
pub(super) struct CaMaterial {
    key: KeyPair,
    /// Subject, key identifier and key usages of the CA, as rcgen needs them
    /// to write a child's issuer and authority key identifier.
    issuer_params: CertificateParams,
    /// Whether children get an authority key identifier (the CA has an SKID).
    pub(super) has_skid: bool,
    roots: Arc<rustls::RootCertStore>,
}

impl CaMaterial {
    pub(super) fn load(
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

    pub(super) fn issuer(&self) -> Issuer<'_, &KeyPair> {
        Issuer::from_params(&self.issuer_params, &self.key)
    }

    fn provider() -> Arc<rustls::crypto::CryptoProvider> {
        Arc::new(rustls::crypto::ring::default_provider())
    }

    /// Whether `leaf` chains to this CA and is valid now for server auth.
    pub(super) fn verifies_server(&self, leaf: &CertificateDer<'_>, now: u64) -> bool {
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
    pub(super) fn verifies_client(&self, leaf: &CertificateDer<'_>, now: u64) -> bool {
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
