//! JWS compact serialization of service-account tokens, as go-jose writes
//! and reads them for `pkg/serviceaccount/jwt.go` (`jwtTokenGenerator.GenerateToken`,
//! `jwtTokenAuthenticator.AuthenticateToken`, `hasCorrectIssuer`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};

use super::keys::{PublicKey, Signer};
use super::ServiceAccountError;

/// go-jose's error for a signature no key verifies (`ErrCryptoFailure`).
pub const CRYPTO_FAILURE: &str = "go-jose/go-jose: error in cryptographic primitive";

/// Signs `claims` (a JSON object; serde_json writes its members sorted, as
/// go-jose's normalised claims are) with the protected header
/// `{"alg":…,"kid":…}`.
pub fn sign(signer: &Signer, claims: &Value) -> Result<String, ServiceAccountError> {
    let public = signer.public_key();
    let header = json!({"alg": public.algorithm().name(), "kid": public.key_id()});
    let mut token = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).unwrap_or_default());
    token.push('.');
    token.push_str(&URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap_or_default()));
    let signature = signer.sign(token.as_bytes())?;
    token.push('.');
    token.push_str(&URL_SAFE_NO_PAD.encode(signature));
    Ok(token)
}

/// A token split and decoded, its signature not yet checked.
#[derive(Debug)]
pub struct Parsed<'a> {
    pub algorithm: String,
    pub key_id: Option<String>,
    pub claims: Value,
    signing_input: &'a str,
    signature: Vec<u8>,
}

/// The `iss` claim of a three-part token, read before any verification
/// (`hasCorrectIssuer`): which authenticator the token is for.
pub fn unverified_issuer(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _, None) = (parts.next()?, parts.next()?, parts.next()?, parts.next()) else {
        return None;
    };
    let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let claims: Value = serde_json::from_slice(&payload).ok()?;
    claims.get("iss")?.as_str().map(str::to_string)
}

/// Splits and decodes a compact JWS (`jwt.ParseSigned`); `None` when it is
/// not one.
pub fn parse(token: &str) -> Option<Parsed<'_>> {
    let (signing_input, signature) = token.rsplit_once('.')?;
    let (header, payload) = signing_input.split_once('.')?;
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    if !claims.is_object() {
        return None;
    }
    Some(Parsed {
        algorithm: header.get("alg")?.as_str()?.to_string(),
        key_id: header
            .get("kid")
            .and_then(Value::as_str)
            .map(str::to_string),
        claims,
        signing_input,
        signature: URL_SAFE_NO_PAD.decode(signature).ok()?,
    })
}

impl Parsed<'_> {
    /// Whether one of `keys` verifies the signature. Keys whose id matches
    /// the header's are tried first; the header's algorithm must be the key's
    /// (no `none`, no algorithm confusion).
    pub fn verify_with(&self, keys: &[PublicKey]) -> Result<(), String> {
        let mut ordered: Vec<&PublicKey> = keys.iter().collect();
        ordered.sort_by_key(|key| Some(key.key_id()) != self.key_id.as_deref());
        let verified = ordered.iter().any(|key| {
            key.algorithm().name() == self.algorithm
                && key.verify(self.signing_input.as_bytes(), &self.signature)
        });
        if verified {
            Ok(())
        } else {
            Err(CRYPTO_FAILURE.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_tokens_verify_and_tampered_ones_do_not() {
        let (signer, _) = Signer::generate().unwrap();
        let claims = json!({"iss": "https://issuer", "sub": "system:serviceaccount:a:b"});
        let token = sign(&signer, &claims).unwrap();
        let keys = vec![signer.public_key().clone()];
        let parsed = parse(&token).unwrap();
        assert_eq!(parsed.algorithm, "ES256");
        assert_eq!(parsed.key_id.as_deref(), Some(signer.public_key().key_id()));
        assert_eq!(parsed.claims, claims);
        assert_eq!(parsed.verify_with(&keys), Ok(()));
        assert_eq!(unverified_issuer(&token).as_deref(), Some("https://issuer"));

        // Header: {"alg":"ES256","kid":"..."} exactly.
        let header = URL_SAFE_NO_PAD
            .decode(token.split('.').next().unwrap())
            .unwrap();
        assert_eq!(
            String::from_utf8(header).unwrap(),
            format!(
                r#"{{"alg":"ES256","kid":"{}"}}"#,
                signer.public_key().key_id()
            )
        );

        // Another payload under the same signature.
        let mut parts: Vec<&str> = token.split('.').collect();
        let forged = URL_SAFE_NO_PAD
            .encode(br#"{"iss":"https://issuer","sub":"system:serviceaccount:a:admin"}"#);
        parts[1] = &forged;
        let tampered = parts.join(".");
        assert_eq!(
            parse(&tampered).unwrap().verify_with(&keys),
            Err(CRYPTO_FAILURE.to_string())
        );

        // Another key does not verify it.
        let (other, _) = Signer::generate().unwrap();
        assert!(parsed.verify_with(&[other.public_key().clone()]).is_err());
        // Any of several keys does.
        assert!(parsed
            .verify_with(&[other.public_key().clone(), signer.public_key().clone()])
            .is_ok());

        // `alg: none` with no signature is refused.
        let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#);
        let unsigned = format!("{none_header}.{}.", token.split('.').nth(1).unwrap());
        assert!(parse(&unsigned).unwrap().verify_with(&keys).is_err());
    }

    #[test]
    fn things_that_are_not_tokens() {
        for text in ["", "abc", "a.b", "a.b.c", "a.b.c.d", "..", "e30.e30.e30"] {
            assert!(
                parse(text).is_none_or(|p| p.verify_with(&[]).is_err()),
                "{text}"
            );
        }
        assert_eq!(unverified_issuer("a.b.c.d"), None);
    }
}
