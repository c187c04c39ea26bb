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
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

use crate::status::Status;

const TOKEN_VERSION: &str = "meta.k8s.io/v1";
/// `storage.ErrGenericInvalidKey`.
const INVALID: &str = "continue key is not valid";

/// The OS random source failed while making a key.
#[derive(Debug, thiserror::Error)]
#[error("the system random source failed")]
pub struct RandomUnavailable;

/// The secret that signs this server's continue tokens. It outlives the
/// process: kept in the data directory (`load_or_create`) or, on etcd, shared
/// by every replica through etcd (`server.rs`, `continue_key`), so a token
/// stays valid across restarts and replicas, as kube's unsigned tokens do.
#[derive(Clone)]
pub struct ContinueKey {
    bytes: [u8; 32],
    key: hmac::Key,
}

impl ContinueKey {
    /// A fresh key from the OS random source.
    pub fn random() -> Result<Self, RandomUnavailable> {
        let mut bytes = [0u8; 32];
        SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| RandomUnavailable)?;
        Ok(Self::from_bytes(bytes))
    }

    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        ContinueKey {
            bytes,
            key: hmac::Key::new(hmac::HMAC_SHA256, &bytes),
        }
    }

    /// The secret itself, to persist or share it.
    pub fn bytes(&self) -> &[u8; 32] {
        &self.bytes
    }

    /// The key kept in `path` (created on first use, mode 0600), so tokens
    /// issued before a restart still verify (and expire as kube's would).
    pub fn load_or_create(path: &std::path::Path) -> std::io::Result<Self> {
        if let Ok(bytes) = std::fs::read(path) {
            if let Ok(key) = <[u8; 32]>::try_from(bytes.as_slice()) {
                return Ok(Self::from_bytes(key));
            }
        }
        let key = Self::random().map_err(std::io::Error::other)?;
        crate::pki::write_file(path, &key.bytes, 0o600)
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        Ok(key)
    }

    /// HMAC-SHA256 (RFC 2104) of `message`.
    fn sign(&self, message: &[u8]) -> hmac::Tag {
        hmac::sign(&self.key, message)
    }

    /// Whether `mac` is `message`'s HMAC-SHA256, compared in constant time.
    fn verify(&self, message: &[u8], mac: &[u8]) -> bool {
        hmac::verify(&self.key, message, mac).is_ok()
    }
}

impl std::fmt::Debug for ContinueKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("ContinueKey(..)")
    }
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
        engine.encode(key.sign(&json).as_ref())
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
    if !key.verify(&json, &mac) {
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

    fn random_key() -> ContinueKey {
        ContinueKey::random().expect("os random source")
    }

    /// A token from a known key, signed by an independent HMAC-SHA256
    /// (Python's `hmac`): the format, and tokens issued before a restart or
    /// an upgrade under a persisted key, stay valid.
    #[test]
    fn token_is_base64_json_and_hmac_sha256() {
        let mut bytes = [0u8; 32];
        for (index, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::try_from(index).expect("small");
        }
        let key = ContinueKey::from_bytes(bytes);
        let expected = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDIsInN0YXJ0IjoiYlx1MDAwMCJ9\
                        .nczwoa0etR-xf8bXDZCGCNnS12whc8sWbxVPb2KgxhQ";
        assert_eq!(encode(&key, 42, "/p/", "/p/b"), expected);
        assert_eq!(decode(&key, expected, "/p/").map(|c| c.revision), Ok(42));
    }

    #[test]
    fn random_keys_differ() {
        assert_ne!(random_key().bytes(), random_key().bytes());
    }

    #[test]
    fn tokens_round_trip_with_kube_payload() {
        let key = random_key();
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
        let key = random_key();
        let other = random_key();
        let prefix = "/registry/configmaps/";
        let good = encode(&key, 7, prefix, "/registry/configmaps/ns/a");
        let unsigned = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(br#"{"v":"meta.k8s.io/v1","rv":7,"start":"ns/a\u0000"}"#);
        let signed = |json: &[u8]| {
            let engine = &base64::engine::general_purpose::URL_SAFE_NO_PAD;
            format!(
                "{}.{}",
                engine.encode(json),
                engine.encode(key.sign(json).as_ref())
            )
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
