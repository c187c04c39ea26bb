//! [`EncryptingBackend`]: a [`Backend`] whose values are transformed on
//! their way to and from the one it wraps (kube's etcd3 store calls its
//! transformer at the same places: `store.go` `Create`/`GuaranteedUpdate`
//! on write, `Get`/`GetList` and the watcher's `transform` on read).

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::KeyTransformers;
use crate::backend::{
    Backend, BackendError, BoxFuture, Committed, EachKeyValue, Event, EventKind, EventSink,
    KeyValue, Loaded, Op, Txn,
};
use crate::etcd::KeyMapper;
use crate::Revision;

pub struct EncryptingBackend {
    inner: Arc<dyn Backend>,
    decryptor: Arc<Decryptor>,
}

impl EncryptingBackend {
    /// `etcd_keys`: on etcd, how store keys map to etcd keys, so the
    /// authenticated data is the etcd key as kube-apiserver passes it (under
    /// any `--etcd-prefix`); elsewhere the store key (`/registry/...`, the
    /// etcd key of the default prefix).
    pub fn new(
        inner: Arc<dyn Backend>,
        transformers: KeyTransformers,
        etcd_keys: Option<KeyMapper>,
    ) -> EncryptingBackend {
        EncryptingBackend {
            inner,
            decryptor: Arc::new(Decryptor {
                transformers,
                etcd_keys,
                stale: Mutex::new(HashSet::new()),
            }),
        }
    }
}

/// Makes stored values plaintext and remembers which keys hold a stale
/// one (see [`Backend::is_stale`]).
struct Decryptor {
    transformers: KeyTransformers,
    etcd_keys: Option<KeyMapper>,
    stale: Mutex<HashSet<String>>,
}

impl Decryptor {
    /// The authenticated data of `key`'s value: its etcd key.
    fn authenticated_data<'a>(&self, key: &'a str) -> Cow<'a, [u8]> {
        match &self.etcd_keys {
            Some(keys) => Cow::Owned(keys.to_etcd(key)),
            None => Cow::Borrowed(key.as_bytes()),
        }
    }

    fn stale_keys(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.stale
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A stored value made plaintext. One that no provider can read is
    /// handed on as stored (the object decoder reports it as corrupt, so
    /// reads of it fail while the rest of the store serves), and logged.
    fn decrypt(&self, kv: &mut KeyValue) {
        if kv.value.is_empty() {
            return;
        }
        let authenticated = self.authenticated_data(&kv.key);
        match (self.transformers)(&kv.key).read(&kv.value, &authenticated) {
            Ok((plaintext, stale)) => {
                kv.value = Bytes::from(plaintext);
                if stale {
                    self.stale_keys().insert(kv.key.clone());
                } else if self.stale_keys().contains(&kv.key) {
                    self.stale_keys().remove(&kv.key);
                }
            }
            Err(error) => {
                tracing::error!(key = %kv.key, %error, "failed to decrypt data");
            }
        }
    }

    fn forget(&self, key: &str) {
        if self.stale_keys().contains(key) {
            self.stale_keys().remove(key);
        }
    }
}

/// Hands the wrapped backend's events on in plaintext.
struct DecryptingSink {
    sink: Arc<dyn EventSink>,
    decryptor: Arc<Decryptor>,
}

impl EventSink for DecryptingSink {
    fn apply(&self, revision: Revision, events: &[Event]) {
        let events: Vec<Event> = events
            .iter()
            .map(|event| {
                let mut event = event.clone();
                match event.kind {
                    EventKind::Put => self.decryptor.decrypt(&mut event.kv),
                    EventKind::Delete => self.decryptor.forget(&event.kv.key),
                }
                event
            })
            .collect();
        self.sink.apply(revision, &events);
    }
}

impl Backend for EncryptingBackend {
    fn commit(&self, txn: Txn) -> BoxFuture<'_, Result<Committed, BackendError>> {
        Box::pin(async move {
            let mut plaintexts = Vec::new();
            let mut ops = Vec::with_capacity(txn.ops.len());
            for op in txn.ops {
                match op {
                    Op::Put { key, value, expect } => {
                        let sealed = (self.decryptor.transformers)(&key)
                            .to_storage(&value, &self.decryptor.authenticated_data(&key))
                            .map_err(|error| {
                                BackendError::Io(format!("encrypting {key}: {error}"))
                            })?;
                        plaintexts.push((key.clone(), value));
                        ops.push(Op::Put {
                            key,
                            value: Bytes::from(sealed),
                            expect,
                        });
                    }
                    delete @ Op::Delete { .. } => ops.push(delete),
                }
            }
            let mut committed = self.inner.commit(Txn { ops }).await?;
            // The caller gets its own values back, not their ciphertext.
            for event in &mut committed.events {
                if event.kind != EventKind::Put {
                    continue;
                }
                if let Some((_, plaintext)) =
                    plaintexts.iter().find(|(key, _)| *key == event.kv.key)
                {
                    event.kv.value = plaintext.clone();
                }
            }
            Ok(committed)
        })
    }

    fn load(&self) -> BoxFuture<'_, Result<Loaded, BackendError>> {
        Box::pin(async move {
            let mut loaded = self.inner.load().await?;
            for kv in &mut loaded.kvs {
                self.decryptor.decrypt(kv);
            }
            Ok(loaded)
        })
    }

    fn load_each(&self, mut each: EachKeyValue) -> BoxFuture<'_, Result<Revision, BackendError>> {
        let decryptor = self.decryptor.clone();
        self.inner.load_each(Box::new(move |mut kv| {
            decryptor.decrypt(&mut kv);
            each(kv);
        }))
    }

    fn watch(
        &self,
        from: Revision,
        sink: Arc<dyn EventSink>,
    ) -> BoxFuture<'_, Result<(), BackendError>> {
        let sink = Arc::new(DecryptingSink {
            sink,
            decryptor: self.decryptor.clone(),
        });
        self.inner.watch(from, sink)
    }

    fn current_revision(&self) -> BoxFuture<'_, Result<Revision, BackendError>> {
        self.inner.current_revision()
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, Result<(), BackendError>> {
        self.inner.compact(revision)
    }

    fn close(&self) -> BoxFuture<'_, Result<(), BackendError>> {
        self.inner.close()
    }

    fn is_stale(&self, key: &str) -> bool {
        self.decryptor.stale_keys().contains(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encryption::{Cipher, Transformer};
    use crate::{Expect, LocalBackend, MemoryDisk};

    const SECRET: &str = "/registry/secrets/default/s1";
    const CONFIGMAP: &str = "/registry/configmaps/default/c1";

    fn key(byte: u8) -> Transformer {
        let mut transformer = Transformer::new();
        transformer.push(
            "aesgcm",
            &format!("key{byte}"),
            Cipher::aes_gcm(&[byte; 32]).unwrap(),
        );
        transformer
    }

    /// Secrets with `first` (then `older`), everything else as it is.
    fn secrets_with(first: Transformer) -> KeyTransformers {
        let first = Arc::new(first);
        let identity = Arc::new(Transformer::identity());
        Arc::new(move |key: &str| {
            if key.starts_with("/registry/secrets/") {
                first.clone()
            } else {
                identity.clone()
            }
        })
    }

    fn put(key: &str, value: &str) -> Txn {
        Txn::single(Op::Put {
            key: key.into(),
            value: Bytes::from(value.to_string()),
            expect: Expect::Any,
        })
    }

    #[tokio::test]
    async fn the_inner_backend_holds_ciphertext_and_callers_see_plaintext() {
        let inner: Arc<dyn Backend> = Arc::new(LocalBackend::open(MemoryDisk::new()).unwrap());
        let keys = KeyMapper::new("/custom", "/registry");
        let backend = EncryptingBackend::new(inner.clone(), secrets_with(key(1)), Some(keys));
        let committed = backend.commit(put(SECRET, "{\"a\":1}")).await.unwrap();
        assert_eq!(committed.events[0].kv.value, "{\"a\":1}");
        backend.commit(put(CONFIGMAP, "{\"b\":2}")).await.unwrap();

        let raw = inner.load().await.unwrap();
        let stored = |key: &str| {
            raw.kvs
                .iter()
                .find(|kv| kv.key == key)
                .unwrap()
                .value
                .clone()
        };
        let secret = stored(SECRET);
        assert!(secret.starts_with(b"k8s:enc:aesgcm:v1:key1:"));
        // Authenticated with the etcd key, as kube-apiserver does.
        assert_eq!(
            key(1)
                .from_storage(&secret, b"/custom/secrets/default/s1")
                .unwrap(),
            b"{\"a\":1}"
        );
        assert!(key(1).from_storage(&secret, SECRET.as_bytes()).is_err());
        assert_eq!(stored(CONFIGMAP), "{\"b\":2}");

        let loaded = backend.load().await.unwrap();
        let plain = loaded.kvs.iter().find(|kv| kv.key == SECRET).unwrap();
        assert_eq!(plain.value, "{\"a\":1}");
        assert!(!backend.is_stale(SECRET));
    }

    #[tokio::test]
    async fn values_of_an_older_key_are_stale_until_rewritten() {
        let inner: Arc<dyn Backend> = Arc::new(LocalBackend::open(MemoryDisk::new()).unwrap());
        let old = EncryptingBackend::new(inner.clone(), secrets_with(key(1)), None);
        old.commit(put(SECRET, "{}")).await.unwrap();

        let mut rotated = key(2);
        rotated.push("aesgcm", "key1", Cipher::aes_gcm(&[1; 32]).unwrap());
        let backend = EncryptingBackend::new(inner.clone(), secrets_with(rotated), None);
        let loaded = backend.load().await.unwrap();
        assert_eq!(loaded.kvs[0].value, "{}");
        assert!(backend.is_stale(SECRET));

        struct Nothing;
        impl EventSink for Nothing {
            fn apply(&self, _revision: Revision, _events: &[Event]) {}
        }
        backend
            .watch(loaded.revision + 1, Arc::new(Nothing))
            .await
            .unwrap();
        backend.commit(put(SECRET, "{}")).await.unwrap();
        assert!(!backend.is_stale(SECRET));
        let raw = inner.load().await.unwrap();
        assert!(raw.kvs[0].value.starts_with(b"k8s:enc:aesgcm:v1:key2:"));
    }
}
