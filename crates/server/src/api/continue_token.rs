//! Continue tokens of chunked lists: kube's token, signed.
//!
//! The payload is exactly what `storage.EncodeContinue`
//! (`apiserver/pkg/storage/continue.go`) writes:
//! `{"v":"meta.k8s.io/v1","rv":N,"start":"<key after the prefix>\u0000"}`, where
//! `rv > 0` names the revision every page is read at and `rv == -1` (the token
//! kube hands out with a 410 for a compacted revision) means "continue at the
//! latest revision". Unlike kube, whose token is plain base64 JSON, ours carries
//! an HMAC-SHA256 (RFC 2104) of that JSON under a key only this server holds:
//! `base64url(json) "." base64url(mac)`, so a client can neither forge a
//! revision nor walk outside the listed prefix. Decoding mirrors
//! `storage.DecodeContinue` and its error texts, behind
//! `storage.ValidateListOptions`'s `invalid continue token: ` prefix.

use base64::Engine;
use sha2::{Digest, Sha256};

use crate::status::Status;

const TOKEN_VERSION: &str = "meta.k8s.io/v1";
/// `storage.ErrGenericInvalidKey`.
const INVALID: &str = "continue key is not valid";
const SHA256_BLOCK: usize = 64;

/// The secret that signs this server's continue tokens. Random per process:
/// tokens do not survive a restart (neither does the history they point into).
#[derive(Clone)]
pub struct ContinueKey([u8; 32]);

impl ContinueKey {
    /// A fresh key from the OS random source (through UUID v4: 4 × 122 random bits, hashed).
    pub fn random() -> Self {
        let mut hasher = Sha256::new();
        for _ in 0..4 {
            hasher.update(uuid::Uuid::new_v4().as_bytes());
        }
        ContinueKey(hasher.finalize().into())
    }

    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        ContinueKey(bytes)
    }

    /// The key kept in `path` (created on first use, mode 0600), so tokens
    /// issued before a restart still verify (and expire as kube's would).
    pub fn load_or_create(path: &std::path::Path) -> std::io::Result<Self> {
        if let Ok(bytes) = std::fs::read(path) {
            if let Ok(key) = <[u8; 32]>::try_from(bytes.as_slice()) {
                return Ok(ContinueKey(key));
            }
        }
        let key = Self::random();
        crate::pki::write_file(path, &key.0, 0o600)
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        Ok(key)
    }

    fn sign(&self, message: &[u8]) -> [u8; 32] {
        hmac_sha256(&self.0, message)
    }
}

impl std::fmt::Debug for ContinueKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("ContinueKey(..)")
    }
}

/// HMAC-SHA256 (RFC 2104): `H((K ^ opad) || H((K ^ ipad) || m))`, the key
/// hashed first when longer than the 64-byte block.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; SHA256_BLOCK];
    if key.len() > SHA256_BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|byte| byte ^ 0x36));
    inner.update(message);
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(block.map(|byte| byte ^ 0x5c));
    outer.update(inner);
    outer.finalize().into()
}

/// Equality that does not stop at the first differing byte.
fn constant_time_eq(left: &[u8], right: &[u8]) -> bool {
    left.len() == right.len()
        && left
            .iter()
            .zip(right)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Payload {
    v: String,
    rv: i64,
    start: String,
}

/// Where a continued list resumes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Continuation {
    /// `> 0`: read every page at exactly this revision; `< 0`: at the latest.
    pub revision: i64,
    /// The full key to start at (inclusive): the prefix plus the token's start.
    pub start: String,
}

/// The token continuing a list of `prefix` right after `last_key`, read at
/// `revision` (`-1`: latest), as `storage.PrepareContinueToken` builds it
/// (`EncodeContinue(lastKey+"\x00", keyPrefix, rv)`).
pub fn encode(key: &ContinueKey, revision: i64, prefix: &str, last_key: &str) -> String {
    let start = last_key.strip_prefix(prefix).unwrap_or(last_key);
    encode_start(key, revision, &format!("{start}\u{0}"))
}

/// The token whose payload starts at `start` (already relative to the prefix).
pub fn encode_start(key: &ContinueKey, revision: i64, start: &str) -> String {
    let payload = Payload {
        v: TOKEN_VERSION.into(),
        rv: revision,
        start: start.into(),
    };
    let json = serde_json::to_vec(&payload).unwrap_or_default();
    let engine = &base64::engine::general_purpose::URL_SAFE_NO_PAD;
    format!(
        "{}.{}",
        engine.encode(&json),
        engine.encode(key.sign(&json))
    )
}

/// The 400 `storage.ValidateListOptions` answers for a token `DecodeContinue` rejects.
fn invalid(detail: impl std::fmt::Display) -> Status {
    Status::bad_request(format!("invalid continue token: {detail}"))
}

/// Go's `base64.CorruptInputError` text for a decoding failure.
fn base64_error(error: base64::DecodeError, offset: usize) -> Status {
    let at = match error {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => {
            at
        }
        base64::DecodeError::InvalidLength(length) => length.saturating_sub(1),
        base64::DecodeError::InvalidPadding => 0,
    };
    invalid(format!(
        "{INVALID}: illegal base64 data at input byte {}",
        at + offset
    ))
}

/// Go's `path.Clean(key) == key` for a key starting with `/`.
fn is_clean(key: &str) -> bool {
    if key == "/" {
        return true;
    }
    key.strip_prefix('/').is_some_and(|rest| {
        rest.split('/')
            .all(|segment| !segment.is_empty() && segment != "." && segment != "..")
    })
}

/// Verify and decode a token for a list of `prefix` (`storage.DecodeContinue`).
pub fn decode(key: &ContinueKey, token: &str, prefix: &str) -> Result<Continuation, Status> {
    let engine = &base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (payload, mac) = match token.rsplit_once('.') {
        Some((payload, mac)) => (payload, Some(mac)),
        None => (token, None),
    };
    let json = engine
        .decode(payload)
        .map_err(|error| base64_error(error, 0))?;
    let mac = match mac {
        Some(mac) => engine
            .decode(mac)
            .map_err(|error| base64_error(error, payload.len() + 1))?,
        None => Vec::new(),
    };
    if !constant_time_eq(&mac, &key.sign(&json)) {
        return Err(invalid(format!(
            "{INVALID}: the token is not signed by this server"
        )));
    }
    let payload: Payload =
        serde_json::from_slice(&json).map_err(|error| invalid(format!("{INVALID}: {error}")))?;
    if payload.v != TOKEN_VERSION {
        return Err(invalid(format!(
            "{INVALID}: server does not recognize this encoded version {}",
            payload.v
        )));
    }
    if payload.rv == 0 {
        return Err(invalid(format!(
            "{INVALID}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        )));
    }
    if payload.start.is_empty() {
        return Err(invalid(format!(
            "{INVALID}: encoded start key empty (version meta.k8s.io/v1)"
        )));
    }
    let rooted = if payload.start.starts_with('/') {
        payload.start.clone()
    } else {
        format!("/{}", payload.start)
    };
    if !is_clean(&rooted) {
        return Err(invalid(format!("{INVALID}: {}", payload.start)));
    }
    Ok(Continuation {
        revision: payload.rv,
        start: format!("{prefix}{}", &rooted[1..]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|byte| format!("{byte:02x}")).collect()
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        let cases: Vec<(Vec<u8>, &[u8], &str)> = vec![
            (
                vec![0x0b; 20],
                b"Hi There",
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            ),
            (
                b"Jefe".to_vec(),
                b"what do ya want for nothing?",
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                vec![0xaa; 20],
                &[0xdd; 50],
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
            ),
            (
                vec![0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            ),
        ];
        for (key, message, expected) in cases {
            assert_eq!(hex(&hmac_sha256(&key, message)), expected);
        }
    }

    #[test]
    fn tokens_round_trip_with_kube_payload() {
        let key = ContinueKey::random();
        let prefix = "/registry/configmaps/default/";
        let token = encode(&key, 42, prefix, "/registry/configmaps/default/b");
        let (payload, _) = token.split_once('.').expect("signed");
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .expect("base64");
        assert_eq!(
            String::from_utf8(json).expect("utf-8"),
            r#"{"v":"meta.k8s.io/v1","rv":42,"start":"b\u0000"}"#
        );
        assert_eq!(
            decode(&key, &token, prefix),
            Ok(Continuation {
                revision: 42,
                start: "/registry/configmaps/default/b\u{0}".into()
            })
        );
        let latest = encode_start(&key, -1, "b\u{0}");
        assert_eq!(
            decode(&key, &latest, "/registry/configmaps/").map(|c| c.revision),
            Ok(-1)
        );
    }

    #[test]
    fn bad_tokens_are_kube_400s() {
        let key = ContinueKey::random();
        let other = ContinueKey::random();
        let prefix = "/registry/configmaps/";
        let good = encode(&key, 7, prefix, "/registry/configmaps/ns/a");
        let unsigned = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(br#"{"v":"meta.k8s.io/v1","rv":7,"start":"ns/a\u0000"}"#);
        let signed = |json: &[u8]| {
            let engine = &base64::engine::general_purpose::URL_SAFE_NO_PAD;
            format!("{}.{}", engine.encode(json), engine.encode(key.sign(json)))
        };
        let not_ours = "invalid continue token: continue key is not valid: the token is not signed by this server";
        let cases: Vec<(String, &str)> = vec![
            (
                "!!!".into(),
                "invalid continue token: continue key is not valid: illegal base64 data at input byte 0",
            ),
            (
                "abc$".into(),
                "invalid continue token: continue key is not valid: illegal base64 data at input byte 3",
            ),
            (unsigned, not_ours),
            (encode(&other, 7, prefix, "/registry/configmaps/ns/a"), not_ours),
            (good.replacen('e', "f", 1), not_ours),
            (format!("{good}A"), not_ours),
            (
                signed(br#"{"v":"x","rv":1,"start":"a"}"#),
                "invalid continue token: continue key is not valid: server does not recognize this encoded version x",
            ),
            (
                signed(br#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#),
                "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
            ),
            (
                signed(br#"{"v":"meta.k8s.io/v1","rv":3,"start":""}"#),
                "invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
            ),
            (
                signed(br#"{"v":"meta.k8s.io/v1","rv":3,"start":"../secrets/x"}"#),
                "invalid continue token: continue key is not valid: ../secrets/x",
            ),
        ];
        for (token, message) in cases {
            let status = decode(&key, &token, prefix).expect_err(&token);
            assert_eq!(
                (status.code, status.message.as_str()),
                (400, message),
                "{token}"
            );
        }
        assert!(decode(&key, &good, prefix).is_ok());
    }
}
