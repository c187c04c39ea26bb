//! Store keys ⇄ etcd keys.
//!
//! The store's keys already follow kube-apiserver's storage layout
//! (`/registry/<resource>/<namespace>/<name>`, `/registry/<group>/<resource>/…`
//! for custom resources). kube-apiserver puts the same paths under
//! `--etcd-prefix` (default `/registry`); so the store's root is replaced by
//! the prefix and, with the defaults, a key is stored exactly where
//! kube-apiserver would store it.

use bytes::Bytes;

use crate::backend::{BackendError, KeyValue};

#[derive(Debug, Clone)]
pub struct KeyMapper {
    /// `--etcd-prefix` without a trailing slash.
    prefix: String,
    /// What every store key starts with (`/registry`), without a trailing slash.
    store_root: String,
}

impl KeyMapper {
    pub fn new(prefix: &str, store_root: &str) -> Self {
        let trim = |text: &str| text.trim_end_matches('/').to_string();
        let mut prefix = trim(prefix);
        if !prefix.starts_with('/') {
            // kube-apiserver: `path.Join("/", prefix)`.
            prefix.insert(0, '/');
        }
        KeyMapper {
            prefix,
            store_root: trim(store_root),
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The etcd key of a store key.
    pub fn to_etcd(&self, key: &str) -> Vec<u8> {
        let relative = key.strip_prefix(&self.store_root).unwrap_or(key);
        let mut etcd = String::with_capacity(self.prefix.len() + relative.len());
        etcd.push_str(&self.prefix);
        etcd.push_str(relative);
        etcd.into_bytes()
    }

    /// The store key of an etcd key under the prefix.
    pub fn from_etcd(&self, key: &[u8]) -> Result<String, BackendError> {
        let text = std::str::from_utf8(key)
            .map_err(|_| BackendError::Io(format!("etcd key {key:?} is not UTF-8")))?;
        let relative = text.strip_prefix(&self.prefix).ok_or_else(|| {
            BackendError::Io(format!("etcd key {text} is outside {}", self.prefix))
        })?;
        Ok(format!("{}{relative}", self.store_root))
    }

    pub fn from_etcd_kv(&self, kv: &etcd_client::KeyValue) -> Result<KeyValue, BackendError> {
        Ok(KeyValue {
            key: self.from_etcd(kv.key())?,
            value: Bytes::copy_from_slice(kv.value()),
            create_revision: kv.create_revision(),
            mod_revision: kv.mod_revision(),
        })
    }

    /// `[prefix/, prefix0)`: every key under the prefix and nothing beside it
    /// (`/registry-other/...` stays out, as kube's trailing-slash prefixes do).
    pub fn watched_range(&self) -> (Vec<u8>, Vec<u8>) {
        let start = format!("{}/", self.prefix).into_bytes();
        let end = format!("{}0", self.prefix).into_bytes();
        (start, end)
    }

    /// The key of sync writes (see `watch.rs`): inside the watched range,
    /// named so that no resource's range holds it (`~` is not in any
    /// resource or namespace name), and skipped by the feeder and the load.
    pub fn sync_key(&self) -> Vec<u8> {
        format!("{}/~ferrokube-sync", self.prefix).into_bytes()
    }

    /// A key beside the prefix, outside the watched range, for ferrokube's
    /// own bookkeeping (`/registry` → `/registry.ferrokube/<name>`).
    pub fn sibling(&self, name: &str) -> Vec<u8> {
        format!("{}.ferrokube/{name}", self.prefix).into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_both_ways() {
        let cases = [
            // (prefix, store key, etcd key)
            (
                "/registry",
                "/registry/pods/default/a",
                "/registry/pods/default/a",
            ),
            (
                "/registry/",
                "/registry/namespaces/x",
                "/registry/namespaces/x",
            ),
            (
                "/custom",
                "/registry/pods/default/a",
                "/custom/pods/default/a",
            ),
            (
                "tenant1",
                "/registry/stable.example.com/crontabs/ns/c",
                "/tenant1/stable.example.com/crontabs/ns/c",
            ),
        ];
        for (prefix, store, etcd) in cases {
            let keys = KeyMapper::new(prefix, "/registry");
            assert_eq!(keys.to_etcd(store), etcd.as_bytes(), "{prefix} {store}");
            assert_eq!(
                keys.from_etcd(etcd.as_bytes()).unwrap(),
                store,
                "{prefix} {etcd}"
            );
        }
    }

    #[test]
    fn the_watched_range_holds_only_the_prefix() {
        let keys = KeyMapper::new("/registry", "/registry");
        let (start, end) = keys.watched_range();
        let inside =
            |key: &str| key.as_bytes() >= start.as_slice() && key.as_bytes() < end.as_slice();
        assert!(inside("/registry/pods/a/b"));
        assert!(!inside("/registry-other/pods/a/b"));
        assert!(!inside("/registry.ferrokube/continue-token-key"));
        assert!(!inside(std::str::from_utf8(&keys.sibling("x")).unwrap()));
        assert!(!inside("compact_rev_key"));
    }
}
