//! `CertificateRequest.CheckSignature` of Go's `crypto/x509`, which kube's
//! `validateCSR` calls: the request's signature verified with its own
//! public key (ring). Algorithms ring cannot check as Go does (RSA-PSS,
//! SHA-1, RSA keys under 2048 bits with SHA-384, other curves) are left
//! unchecked rather than refused.

use ring::signature::{self, VerificationAlgorithm};
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::public_key::PublicKey;

const SHA256_WITH_RSA: &str = "1.2.840.113549.1.1.11";
const SHA384_WITH_RSA: &str = "1.2.840.113549.1.1.12";
const SHA512_WITH_RSA: &str = "1.2.840.113549.1.1.13";
const ECDSA_WITH_SHA256: &str = "1.2.840.10045.4.3.2";
const ECDSA_WITH_SHA384: &str = "1.2.840.10045.4.3.3";
const ED25519: &str = "1.3.101.112";
const P256: &str = "1.2.840.10045.3.1.7";
const P384: &str = "1.3.132.0.34";

/// Go's error text when the signature does not verify, `None` when it does
/// or when its algorithm is not checked here.
pub fn check(request: &X509CertificationRequest<'_>) -> Option<String> {
    let (algorithm, failure) = verifier(request)?;
    let info = request.certification_request_info.raw;
    let key = &request
        .certification_request_info
        .subject_pki
        .subject_public_key
        .data;
    let signature = &request.signature_value.data;
    algorithm
        .verify(key.as_ref().into(), info.into(), signature.as_ref().into())
        .err()
        .map(|_| failure.to_string())
}

type Verifier = (&'static dyn VerificationAlgorithm, &'static str);

fn verifier(request: &X509CertificationRequest<'_>) -> Option<Verifier> {
    let signature_oid = request.signature_algorithm.algorithm.to_id_string();
    let pki = &request.certification_request_info.subject_pki;
    let key = pki.parsed().ok()?;
    // Go's rsa.VerifyPKCS1v15 and ecdsa.VerifyASN1 failures as checkSignature wraps them.
    const RSA_FAILURE: &str = "crypto/rsa: verification error";
    const ECDSA_FAILURE: &str = "x509: ECDSA verification failure";
    match (signature_oid.as_str(), &key) {
        (SHA256_WITH_RSA, PublicKey::RSA(_)) => Some((
            &signature::RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY,
            RSA_FAILURE,
        )),
        (SHA384_WITH_RSA, PublicKey::RSA(rsa)) if rsa.key_size() >= 2048 => {
            Some((&signature::RSA_PKCS1_2048_8192_SHA384, RSA_FAILURE))
        }
        (SHA512_WITH_RSA, PublicKey::RSA(_)) => Some((
            &signature::RSA_PKCS1_1024_8192_SHA512_FOR_LEGACY_USE_ONLY,
            RSA_FAILURE,
        )),
        (ECDSA_WITH_SHA256 | ECDSA_WITH_SHA384, PublicKey::EC(_)) => {
            let curve = pki
                .algorithm
                .parameters
                .as_ref()
                .and_then(|parameters| parameters.as_oid().ok())
                .map(|oid| oid.to_id_string())?;
            let algorithm: &'static dyn VerificationAlgorithm =
                match (signature_oid.as_str(), curve.as_str()) {
                    (ECDSA_WITH_SHA256, P256) => &signature::ECDSA_P256_SHA256_ASN1,
                    (ECDSA_WITH_SHA384, P256) => &signature::ECDSA_P256_SHA384_ASN1,
                    (ECDSA_WITH_SHA256, P384) => &signature::ECDSA_P384_SHA256_ASN1,
                    (ECDSA_WITH_SHA384, P384) => &signature::ECDSA_P384_SHA384_ASN1,
                    _ => return None,
                };
            Some((algorithm, ECDSA_FAILURE))
        }
        (ED25519, _) if pki.algorithm.algorithm.to_id_string() == ED25519 => {
            Some((&signature::ED25519, "x509: Ed25519 verification failure"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use x509_parser::prelude::FromDer;

    use super::*;

    fn request_der(algorithm: &'static rcgen::SignatureAlgorithm) -> Vec<u8> {
        let key = rcgen::KeyPair::generate_for(algorithm).unwrap();
        let params = rcgen::CertificateParams::new(vec!["node.example.com".to_string()]).unwrap();
        params.serialize_request(&key).unwrap().der().to_vec()
    }

    /// Valid signatures pass; a flipped signature bit gets Go's error.
    #[test]
    fn signatures_are_verified() {
        for (algorithm, failure) in [
            (
                &rcgen::PKCS_ECDSA_P256_SHA256,
                "x509: ECDSA verification failure",
            ),
            (
                &rcgen::PKCS_ECDSA_P384_SHA384,
                "x509: ECDSA verification failure",
            ),
            (&rcgen::PKCS_ED25519, "x509: Ed25519 verification failure"),
        ] {
            let der = request_der(algorithm);
            let (_, request) = X509CertificationRequest::from_der(&der).unwrap();
            assert_eq!(check(&request), None, "{algorithm:?}");
            let mut tampered = der.clone();
            let last = tampered.len() - 1;
            tampered[last] ^= 1;
            let (_, request) = X509CertificationRequest::from_der(&tampered).unwrap();
            assert_eq!(check(&request).as_deref(), Some(failure), "{algorithm:?}");
        }
    }
}
