//! kube's prefix transformer (`value/transformer.go`
//! `NewPrefixTransformers`): an ordered list of (prefix, cipher); the first
//! writes, every one reads the values that carry its prefix.

use std::sync::Arc;

use super::{Cipher, EncryptionError};

/// What every encrypted value starts with (`k8s:enc:`).
pub const ENCRYPTED_PREFIX: &[u8] = b"k8s:enc:";

/// The transformers of one resource, in the configuration's order: each
/// key of each provider is one entry with its own prefix
/// (`k8s:enc:aescbc:v1:<key name>:`), identity has the empty prefix.
#[derive(Debug)]
pub struct Transformer {
    entries: Vec<(Vec<u8>, Cipher)>,
}

impl Transformer {
    /// The transformer of a resource no configuration names
    /// (`identity.NewEncryptCheckTransformer`).
    pub fn identity() -> Transformer {
        Transformer {
            entries: vec![(Vec::new(), Cipher::Identity)],
        }
    }

    pub fn new() -> Transformer {
        Transformer {
            entries: Vec::new(),
        }
    }

    /// Adds a key: `provider` is `aescbc`, `aesgcm` or `secretbox` (its
    /// prefix `k8s:enc:<provider>:v1:<name>:`), or `identity` (no prefix).
    pub fn push(&mut self, provider: &str, key_name: &str, cipher: Cipher) {
        let prefix = match cipher {
            Cipher::Identity => Vec::new(),
            _ => format!("k8s:enc:{provider}:v1:{key_name}:").into_bytes(),
        };
        self.entries.push((prefix, cipher));
    }

    /// The prefix new values are written with (empty for identity).
    pub fn write_prefix(&self) -> &[u8] {
        self.entries
            .first()
            .map(|(prefix, _)| prefix.as_slice())
            .unwrap_or_default()
    }

    /// `TransformToStorage`: the first entry writes. `authenticated` is
    /// the value's etcd key (aesgcm authenticates it; kube's
    /// `authenticatedDataString`).
    pub fn to_storage(
        &self,
        plaintext: &[u8],
        authenticated: &[u8],
    ) -> Result<Vec<u8>, EncryptionError> {
        let Some((prefix, cipher)) = self.entries.first() else {
            return Ok(plaintext.to_vec());
        };
        let sealed = cipher.seal(plaintext, authenticated)?;
        if prefix.is_empty() {
            return Ok(sealed);
        }
        let mut out = Vec::with_capacity(prefix.len() + sealed.len());
        out.extend_from_slice(prefix);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// `TransformFromStorage`: the first entry whose prefix the value
    /// carries reads it; an identity entry that finds encrypted data lets
    /// the next ones try (kube's migration away from encryption).
    pub fn from_storage(
        &self,
        data: &[u8],
        authenticated: &[u8],
    ) -> Result<Vec<u8>, EncryptionError> {
        self.read(data, authenticated)
            .map(|(plaintext, _)| plaintext)
    }

    /// [`from_storage`](Self::from_storage), and whether the value is
    /// stale: read by an entry other than the first, so a rewrite changes
    /// its bytes (kube's `stale || i != 0`).
    pub fn read(
        &self,
        data: &[u8],
        authenticated: &[u8],
    ) -> Result<(Vec<u8>, bool), EncryptionError> {
        for (index, (prefix, cipher)) in self.entries.iter().enumerate() {
            let Some(rest) = data.strip_prefix(prefix.as_slice()) else {
                continue;
            };
            match cipher.open(rest, authenticated) {
                Err(_) if prefix.is_empty() => continue,
                result => return result.map(|plaintext| (plaintext, index != 0)),
            }
        }
        if self.entries.len() == 1 && self.entries[0].0.is_empty() {
            return Err(EncryptionError::EncryptedDataForIdentity);
        }
        Err(EncryptionError::NoMatchingPrefix)
    }
}

impl Default for Transformer {
    fn default() -> Self {
        Transformer::new()
    }
}

/// Chooses the transformer of a stored key (`/registry/secrets/ns/name`):
/// the server knows which group/resource a key holds.
pub type KeyTransformers = Arc<dyn Fn(&str) -> Arc<Transformer> + Send + Sync>;

#[cfg(test)]
#[path = "transformer_tests.rs"]
mod tests;
