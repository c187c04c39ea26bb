//! Service-account signing and verification keys: PEM files read as
//! kube-apiserver reads them (`client-go/util/keyutil/key.go`
//! `ParsePrivateKeyPEM`, `ParsePublicKeysPEM`; `pkg/serviceaccount/jwt.go`
//! `signerFromRSAPrivateKey`, `signerFromECDSAPrivateKey`, `keyIDFromPublicKey`),
//! and the JSON Web Keys of the JWKS document (go-jose's `JSONWebKey`).

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use x509_parser::prelude::FromDer;

use super::ServiceAccountError;

/// The JWS algorithms ferrokube signs and verifies with (kube's RS256 for
/// RSA keys, ES256/ES384 for P-256/P-384 keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Algorithm {
    Rs256,
    Es256,
    Es384,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Rs256 => "RS256",
            Algorithm::Es256 => "ES256",
            Algorithm::Es384 => "ES384",
        }
    }
}

const OID_RSA_ENCRYPTION: &[u8] = &[
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01,
];
const OID_EC_PUBLIC_KEY: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_P256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const OID_P384: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];

/// One DER TLV.
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|byte| *byte == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend_from_slice(&bytes);
    }
    out.extend_from_slice(content);
    out
}

/// A big-endian unsigned integer without its leading zero bytes.
fn trimmed(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|byte| *byte != 0)
        .unwrap_or(bytes.len());
    &bytes[start..]
}

/// A DER INTEGER holding the unsigned big-endian `bytes`.
fn der_unsigned(bytes: &[u8]) -> Vec<u8> {
    let bytes = trimmed(bytes);
    let mut content = Vec::with_capacity(bytes.len() + 1);
    if bytes.first().is_none_or(|first| first & 0x80 != 0) {
        content.push(0);
    }
    content.extend_from_slice(bytes);
    der(0x02, &content)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Material {
    Rsa {
        modulus: Vec<u8>,
        exponent: Vec<u8>,
    },
    /// The uncompressed point (`04 || x || y`).
    Ec {
        point: Vec<u8>,
    },
}

/// A key tokens are verified with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    algorithm: Algorithm,
    material: Material,
    key_id: String,
}

impl PublicKey {
    fn rsa(modulus: &[u8], exponent: &[u8]) -> PublicKey {
        PublicKey::new(
            Algorithm::Rs256,
            Material::Rsa {
                modulus: trimmed(modulus).to_vec(),
                exponent: trimmed(exponent).to_vec(),
            },
        )
    }

    fn ec(algorithm: Algorithm, point: &[u8]) -> PublicKey {
        PublicKey::new(
            algorithm,
            Material::Ec {
                point: point.to_vec(),
            },
        )
    }

    fn new(algorithm: Algorithm, material: Material) -> PublicKey {
        let mut key = PublicKey {
            algorithm,
            material,
            key_id: String::new(),
        };
        key.key_id = URL_SAFE_NO_PAD.encode(Sha256::digest(key.spki_der()));
        key
    }

    /// `x509.MarshalPKIXPublicKey`: the SubjectPublicKeyInfo in DER.
    pub fn spki_der(&self) -> Vec<u8> {
        let (algorithm, key) = match &self.material {
            Material::Rsa { modulus, exponent } => {
                let mut id = OID_RSA_ENCRYPTION.to_vec();
                id.extend_from_slice(&[0x05, 0x00]);
                let mut fields = der_unsigned(modulus);
                fields.extend(der_unsigned(exponent));
                (id, der(0x30, &fields))
            }
            Material::Ec { point } => {
                let mut id = OID_EC_PUBLIC_KEY.to_vec();
                id.extend_from_slice(match self.algorithm {
                    Algorithm::Es384 => OID_P384,
                    _ => OID_P256,
                });
                (id, point.clone())
            }
        };
        let mut bits = vec![0u8];
        bits.extend(key);
        let mut content = der(0x30, &algorithm);
        content.extend(der(0x03, &bits));
        der(0x30, &content)
    }

    /// kube's key id (`keyIDFromPublicKey`): base64url of the SHA-256 of the
    /// DER SubjectPublicKeyInfo, unpadded.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Whether `signature` signs `message` under this key (JWS encodings:
    /// PKCS#1 v1.5 for RSA, fixed-width `r || s` for ECDSA).
    pub fn verify(&self, message: &[u8], signature_bytes: &[u8]) -> bool {
        match &self.material {
            Material::Rsa { modulus, exponent } => signature::RsaPublicKeyComponents {
                n: modulus,
                e: exponent,
            }
            .verify(
                &signature::RSA_PKCS1_2048_8192_SHA256,
                message,
                signature_bytes,
            )
            .is_ok(),
            Material::Ec { point } => {
                let algorithm = match self.algorithm {
                    Algorithm::Es384 => &signature::ECDSA_P384_SHA384_FIXED,
                    _ => &signature::ECDSA_P256_SHA256_FIXED,
                };
                signature::UnparsedPublicKey::new(algorithm, point)
                    .verify(message, signature_bytes)
                    .is_ok()
            }
        }
    }

    /// The key as go-jose marshals a public `JSONWebKey` with `Use: "sig"`
    /// (`openidmetadata.go` `publicJWKSFromKeys`); members in go-jose's order.
    pub fn jwk(&self) -> Value {
        let mut jwk = serde_json::Map::new();
        jwk.insert("use".into(), json!("sig"));
        match &self.material {
            Material::Rsa { modulus, exponent } => {
                jwk.insert("kty".into(), json!("RSA"));
                jwk.insert("kid".into(), json!(self.key_id));
                jwk.insert("alg".into(), json!(self.algorithm.name()));
                jwk.insert("n".into(), json!(URL_SAFE_NO_PAD.encode(modulus)));
                jwk.insert("e".into(), json!(URL_SAFE_NO_PAD.encode(exponent)));
            }
            Material::Ec { point } => {
                let (curve, size) = match self.algorithm {
                    Algorithm::Es384 => ("P-384", 48),
                    _ => ("P-256", 32),
                };
                let coordinates = point.get(1..).unwrap_or_default();
                let (x, y) = coordinates.split_at(size.min(coordinates.len()));
                jwk.insert("kty".into(), json!("EC"));
                jwk.insert("kid".into(), json!(self.key_id));
                jwk.insert("crv".into(), json!(curve));
                jwk.insert("alg".into(), json!(self.algorithm.name()));
                jwk.insert("x".into(), json!(URL_SAFE_NO_PAD.encode(x)));
                jwk.insert("y".into(), json!(URL_SAFE_NO_PAD.encode(y)));
            }
        }
        Value::Object(jwk)
    }
}

enum PrivateKey {
    Rsa(RsaKeyPair),
    Ec(EcdsaKeyPair),
}

/// The key TokenRequest and the legacy token controller sign with.
pub struct Signer {
    key: PrivateKey,
    public: PublicKey,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Private keys are secrets.
        f.debug_struct("Signer")
            .field("public", &self.public)
            .finish()
    }
}

impl Signer {
    /// The first private key in `pem` (`keyutil.ParsePrivateKeyPEM`):
    /// `RSA PRIVATE KEY` (PKCS#1), `PRIVATE KEY` (PKCS#8, RSA or ECDSA) or
    /// `EC PRIVATE KEY` (SEC 1), on P-256 or P-384.
    pub fn from_pem(pem: &[u8]) -> Result<Signer, ServiceAccountError> {
        for block in x509_parser::pem::Pem::iter_from_buffer(pem) {
            let Ok(block) = block else { break };
            if let Some(signer) = signer_from_block(&block.label, &block.contents) {
                return Ok(signer);
            }
        }
        Err(ServiceAccountError::NoPrivateKey)
    }

    /// A new ECDSA P-256 key and its PEM (`PRIVATE KEY`, PKCS#8).
    pub fn generate() -> Result<(Signer, String), ServiceAccountError> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| ServiceAccountError::KeyGeneration)?;
        let pem = pem_encode("PRIVATE KEY", pkcs8.as_ref());
        let signer = signer_from_block("PRIVATE KEY", pkcs8.as_ref())
            .ok_or(ServiceAccountError::KeyGeneration)?;
        Ok((signer, pem))
    }

    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// The JWS signature of `message`.
    pub fn sign(&self, message: &[u8]) -> Result<Vec<u8>, ServiceAccountError> {
        let rng = SystemRandom::new();
        match &self.key {
            PrivateKey::Rsa(pair) => {
                let mut out = vec![0; pair.public().modulus_len()];
                pair.sign(&signature::RSA_PKCS1_SHA256, &rng, message, &mut out)
                    .map_err(|_| ServiceAccountError::Signing)?;
                Ok(out)
            }
            PrivateKey::Ec(pair) => pair
                .sign(&rng, message)
                .map(|signed| signed.as_ref().to_vec())
                .map_err(|_| ServiceAccountError::Signing),
        }
    }
}

fn rsa_signer(pair: RsaKeyPair) -> Option<Signer> {
    let (_, public) =
        x509_parser::public_key::RSAPublicKey::from_der(pair.public_key().as_ref()).ok()?;
    let public = PublicKey::rsa(public.modulus, public.exponent);
    Some(Signer {
        key: PrivateKey::Rsa(pair),
        public,
    })
}

fn ec_signer_from_pkcs8(pkcs8: &[u8]) -> Option<Signer> {
    let rng = SystemRandom::new();
    for (signing, algorithm) in [
        (
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            Algorithm::Es256,
        ),
        (
            &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
            Algorithm::Es384,
        ),
    ] {
        if let Ok(pair) = EcdsaKeyPair::from_pkcs8(signing, pkcs8, &rng) {
            let public = PublicKey::ec(algorithm, pair.public_key().as_ref());
            return Some(Signer {
                key: PrivateKey::Ec(pair),
                public,
            });
        }
    }
    None
}

/// A SEC 1 `ECPrivateKey` wrapped as PKCS#8 for `curve` (ring reads only PKCS#8).
fn sec1_as_pkcs8(sec1: &[u8], curve: &[u8]) -> Vec<u8> {
    let mut algorithm = OID_EC_PUBLIC_KEY.to_vec();
    algorithm.extend_from_slice(curve);
    let mut content = der(0x02, &[0]);
    content.extend(der(0x30, &algorithm));
    content.extend(der(0x04, sec1));
    der(0x30, &content)
}

fn signer_from_block(label: &str, contents: &[u8]) -> Option<Signer> {
    match label {
        "RSA PRIVATE KEY" => RsaKeyPair::from_der(contents).ok().and_then(rsa_signer),
        "PRIVATE KEY" => match RsaKeyPair::from_pkcs8(contents) {
            Ok(pair) => rsa_signer(pair),
            Err(_) => ec_signer_from_pkcs8(contents),
        },
        "EC PRIVATE KEY" => [OID_P256, OID_P384]
            .into_iter()
            .find_map(|curve| ec_signer_from_pkcs8(&sec1_as_pkcs8(contents, curve))),
        _ => None,
    }
}

fn public_key_from_spki(der_bytes: &[u8]) -> Option<PublicKey> {
    let (_, spki) = x509_parser::x509::SubjectPublicKeyInfo::from_der(der_bytes).ok()?;
    public_key_of(&spki)
}

fn public_key_of(spki: &x509_parser::x509::SubjectPublicKeyInfo<'_>) -> Option<PublicKey> {
    match spki.parsed().ok()? {
        x509_parser::public_key::PublicKey::RSA(rsa) => {
            Some(PublicKey::rsa(rsa.modulus, rsa.exponent))
        }
        x509_parser::public_key::PublicKey::EC(point) => {
            let curve = spki
                .algorithm
                .parameters
                .as_ref()
                .map(|parameters| parameters.as_bytes().to_vec())
                .unwrap_or_default();
            let algorithm = if OID_P384.ends_with(&curve) && !curve.is_empty() {
                Algorithm::Es384
            } else if OID_P256.ends_with(&curve) && !curve.is_empty() {
                Algorithm::Es256
            } else {
                return None;
            };
            Some(PublicKey::ec(algorithm, point.data()))
        }
        _ => None,
    }
}

/// Every verification key in `pem` (`serviceaccount.ReadPublicKeys`): the
/// public half of private keys, `PUBLIC KEY` (PKIX), `RSA PUBLIC KEY`
/// (PKCS#1) and certificates; other blocks are skipped, as upstream.
pub fn public_keys_from_pem(pem: &[u8]) -> Result<Vec<PublicKey>, ServiceAccountError> {
    let mut keys = Vec::new();
    for block in x509_parser::pem::Pem::iter_from_buffer(pem) {
        let Ok(block) = block else { break };
        let key = match block.label.as_str() {
            "RSA PRIVATE KEY" | "PRIVATE KEY" | "EC PRIVATE KEY" => {
                signer_from_block(&block.label, &block.contents).map(|signer| signer.public)
            }
            "RSA PUBLIC KEY" => x509_parser::public_key::RSAPublicKey::from_der(&block.contents)
                .ok()
                .map(|(_, rsa)| PublicKey::rsa(rsa.modulus, rsa.exponent)),
            "CERTIFICATE" => x509_parser::parse_x509_certificate(&block.contents)
                .ok()
                .and_then(|(_, certificate)| public_key_of(certificate.public_key())),
            _ => public_key_from_spki(&block.contents),
        };
        keys.extend(key);
    }
    if keys.is_empty() {
        return Err(ServiceAccountError::NoPublicKey);
    }
    Ok(keys)
}

/// PEM text of one block, 64 columns as Go's `pem.Encode`.
pub fn pem_encode(label: &str, der_bytes: &[u8]) -> String {
    let encoded = STANDARD.encode(der_bytes);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in encoded.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_sign_and_verify_and_round_trip_through_pem() {
        let (signer, pem) = Signer::generate().unwrap();
        assert_eq!(signer.public_key().algorithm(), Algorithm::Es256);
        let again = Signer::from_pem(pem.as_bytes()).unwrap();
        assert_eq!(again.public_key(), signer.public_key());
        let signature = signer.sign(b"message").unwrap();
        assert!(again.public_key().verify(b"message", &signature));
        assert!(!again.public_key().verify(b"massage", &signature));
        // The public key read from the private key file is the same key.
        let public = public_keys_from_pem(pem.as_bytes()).unwrap();
        assert_eq!(public, vec![signer.public_key().clone()]);
        // The key id is the unpadded base64url SHA-256 of the SPKI.
        assert_eq!(signer.public_key().key_id().len(), 43);
        assert_eq!(
            public_key_from_spki(&signer.public_key().spki_der()).as_ref(),
            Some(signer.public_key())
        );
    }

    const RSA_PKCS1: &str = include_str!("testdata/rsa-pkcs1.pem");
    const RSA_PKCS8: &str = include_str!("testdata/rsa-pkcs8.pem");
    const RSA_PUBLIC: &str = include_str!("testdata/rsa-public.pem");
    const RSA_PUBLIC_PKCS1: &str = include_str!("testdata/rsa-public-pkcs1.pem");
    /// `openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary`, base64url.
    const RSA_KID: &str = include_str!("testdata/rsa-kid.txt");
    const EC_SEC1: &str = include_str!("testdata/ec-sec1.pem");

    #[test]
    fn rsa_keys_in_every_form_are_one_rs256_key() {
        let pkcs1 = Signer::from_pem(RSA_PKCS1.as_bytes()).unwrap();
        let pkcs8 = Signer::from_pem(RSA_PKCS8.as_bytes()).unwrap();
        assert_eq!(pkcs1.public_key(), pkcs8.public_key());
        assert_eq!(pkcs1.public_key().algorithm(), Algorithm::Rs256);
        assert_eq!(pkcs1.public_key().key_id(), RSA_KID.trim());
        for pem in [RSA_PUBLIC, RSA_PUBLIC_PKCS1, RSA_PKCS8] {
            assert_eq!(
                public_keys_from_pem(pem.as_bytes()).unwrap(),
                vec![pkcs1.public_key().clone()]
            );
        }
        let signature = pkcs8.sign(b"payload").unwrap();
        assert!(pkcs1.public_key().verify(b"payload", &signature));
        assert!(!pkcs1.public_key().verify(b"payload!", &signature));
        let jwk = pkcs1.public_key().jwk();
        assert_eq!(
            (&jwk["kty"], &jwk["alg"], &jwk["e"]),
            (&json!("RSA"), &json!("RS256"), &json!("AQAB"))
        );
    }

    #[test]
    fn sec1_ec_keys_are_read() {
        let signer = Signer::from_pem(EC_SEC1.as_bytes()).unwrap();
        assert_eq!(signer.public_key().algorithm(), Algorithm::Es256);
        let signature = signer.sign(b"m").unwrap();
        assert!(signer.public_key().verify(b"m", &signature));
    }

    #[test]
    fn spki_and_certificates_give_the_same_key_and_id() {
        let pair = rcgen::KeyPair::generate().unwrap();
        let signer = Signer::from_pem(pair.serialize_pem().as_bytes()).unwrap();
        let public_pem = pair.public_key_pem();
        let from_public = public_keys_from_pem(public_pem.as_bytes()).unwrap();
        assert_eq!(from_public, vec![signer.public_key().clone()]);
        let certificate = rcgen::CertificateParams::new(vec!["x".into()])
            .unwrap()
            .self_signed(&pair)
            .unwrap();
        let from_certificate = public_keys_from_pem(certificate.pem().as_bytes()).unwrap();
        assert_eq!(from_certificate, vec![signer.public_key().clone()]);
        // The id Go computes over the same SPKI bytes rcgen wrote.
        let spki = x509_parser::pem::Pem::iter_from_buffer(public_pem.as_bytes())
            .next()
            .unwrap()
            .unwrap()
            .contents;
        assert_eq!(
            signer.public_key().key_id(),
            URL_SAFE_NO_PAD.encode(Sha256::digest(&spki))
        );
    }

    #[test]
    fn files_without_keys_are_refused() {
        assert!(matches!(
            Signer::from_pem(b"not a key"),
            Err(ServiceAccountError::NoPrivateKey)
        ));
        assert!(matches!(
            public_keys_from_pem(b"-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n"),
            Err(ServiceAccountError::NoPublicKey)
        ));
    }

    #[test]
    fn jwk_of_an_ec_key() {
        let (signer, _) = Signer::generate().unwrap();
        let jwk = signer.public_key().jwk();
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert_eq!(jwk["alg"], "ES256");
        assert_eq!(jwk["use"], "sig");
        assert_eq!(jwk["kid"], signer.public_key().key_id());
        assert_eq!(jwk["x"].as_str().unwrap().len(), 43);
        assert_eq!(jwk["y"].as_str().unwrap().len(), 43);
    }
}
