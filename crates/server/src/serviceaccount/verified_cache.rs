//! Service-account tokens whose signature was checked recently, so that a
//! client sending the same token on every request pays for the signature
//! check (an RSA or ECDSA verification, the bulk of authenticating a token)
//! once per [`TTL`], not per request.
//!
//! kube caches whole authentication results instead
//! (`staging/src/k8s.io/apiserver/pkg/authentication/token/cache`,
//! `cached_token_authenticator.go`, wrapped around the token union by
//! `pkg/kubeapiserver/authenticator/config.go` with a 10 s success TTL):
//! there a token keeps working up to 10 s after its ServiceAccount or bound
//! Pod is deleted. Here only the token's decoding, signature and audience
//! check are cached; the validators of `claims.go`/`legacy.go` (times, the
//! ServiceAccount, Secret, Pod and Node still there with their uids) run on
//! every request against the store's snapshot, so a deletion takes effect
//! at once.
//!
//! Entries are keyed by a SHA-256 of the token and the requested audiences
//! (as kube keys its cache by an HMAC of them: tokens are not kept in
//! memory), expire after [`TTL`], and there are at most [`CAPACITY`].

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::claims::{LegacyPrivateClaims, PrivateClaims, PublicClaims};

/// kube-apiserver's `--token-success-cache-ttl`-like default (10 s).
pub const TTL: Duration = Duration::from_secs(10);

/// At most this many tokens are remembered (kube: 32 stripes of 4096).
pub const CAPACITY: usize = 4096;

/// What a token says once its signature and audiences were checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub public: PublicClaims,
    pub private: VerifiedClaims,
    /// The requested audiences the token is valid for.
    pub audiences: Vec<String>,
}

/// The private claims of a bound token or of a legacy Secret token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifiedClaims {
    Bound(PrivateClaims),
    Legacy(LegacyPrivateClaims),
}

/// The cache key: SHA-256 over the token and each audience, each preceded
/// by its length so that no two inputs share a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl Key {
    pub fn of(token: &str, audiences: &[String]) -> Key {
        let mut hasher = Sha256::new();
        for part in std::iter::once(token).chain(audiences.iter().map(String::as_str)) {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        Key(hasher.finalize().into())
    }
}

/// The cache itself.
#[derive(Debug, Default)]
pub struct VerifiedCache {
    entries: RwLock<HashMap<Key, (Instant, Arc<Verified>)>>,
}

impl VerifiedCache {
    /// The entry for `key` if it was verified less than [`TTL`] before `now`.
    pub fn get(&self, key: &Key, now: Instant) -> Option<Arc<Verified>> {
        let entries = self
            .entries
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (at, verified) = entries.get(key)?;
        (now.saturating_duration_since(*at) < TTL).then(|| verified.clone())
    }

    /// Remembers `verified` for `key` from `now`. When the cache is full,
    /// expired entries go first, then an arbitrary one.
    pub fn insert(&self, key: Key, verified: Arc<Verified>, now: Instant) {
        let mut entries = self
            .entries
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if entries.len() >= CAPACITY && !entries.contains_key(&key) {
            entries.retain(|_, (at, _)| now.saturating_duration_since(*at) < TTL);
            if entries.len() >= CAPACITY {
                if let Some(victim) = entries.keys().next().copied() {
                    entries.remove(&victim);
                }
            }
        }
        entries.insert(key, (now, verified));
    }

    /// How many entries are held (tests).
    pub fn len(&self) -> usize {
        self.entries
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .len()
    }

    /// Whether no entry is held (tests).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verified(name: &str) -> Arc<Verified> {
        Arc::new(Verified {
            public: PublicClaims {
                subject: name.into(),
                ..PublicClaims::default()
            },
            private: VerifiedClaims::Bound(PrivateClaims::default()),
            audiences: Vec::new(),
        })
    }

    #[test]
    fn keys_differ_by_token_and_audiences() {
        let api = vec!["api".to_string()];
        assert_eq!(Key::of("t", &api), Key::of("t", &api));
        assert_ne!(Key::of("t", &api), Key::of("u", &api));
        assert_ne!(Key::of("t", &api), Key::of("t", &[]));
        // Length prefixes: moving bytes between token and audience changes the key.
        assert_ne!(
            Key::of("ab", &["c".to_string()]),
            Key::of("a", &["bc".to_string()])
        );
    }

    #[test]
    fn entries_expire_after_the_ttl() {
        let cache = VerifiedCache::default();
        let start = Instant::now();
        let key = Key::of("token", &[]);
        cache.insert(key, verified("a"), start);
        assert_eq!(cache.get(&key, start), Some(verified("a")));
        assert_eq!(
            cache.get(&key, start + TTL - Duration::from_millis(1)),
            Some(verified("a"))
        );
        assert_eq!(cache.get(&key, start + TTL), None);
        assert_eq!(cache.get(&Key::of("other", &[]), start), None);
    }

    #[test]
    fn the_cache_never_holds_more_than_its_capacity() {
        let cache = VerifiedCache::default();
        let start = Instant::now();
        for n in 0..CAPACITY + 10 {
            cache.insert(Key::of(&n.to_string(), &[]), verified("a"), start);
        }
        assert_eq!(cache.len(), CAPACITY);
        // Expired entries make room first: all of them go at once.
        let later = start + TTL;
        let fresh = Key::of("fresh", &[]);
        cache.insert(fresh, verified("b"), later);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.get(&fresh, later), Some(verified("b")));
    }
}
