//! [`EncryptingBackend`]: a [`Backend`] whose values are transformed on
//! their way to and from the one it wraps (kube's etcd3 store calls its
//! transformer at the same places: `store.go` `Create`/`GuaranteedUpdate`
//! on write, `Get`/`GetList` and the watcher's `transform` on read).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::KeyTransformers;
use crate::backend::{
    Backend, BackendError, BoxFuture, Committed, EachKeyValue, Event, EventKind, EventSink,
    KeyValue, Loaded, Op, Txn,
};
use crate::Revision;

pub struct EncryptingBackend {
    inner: Arc<dyn Backend>,
    decryptor: Arc<Decryptor>,
}

impl EncryptingBackend {
    pub fn new(inner: Arc<dyn Backend>, transformers: KeyTransformers) -> EncryptingBackend {
        EncryptingBackend {
            inner,
            decryptor: Arc::new(Decryptor {
                transformers,
                stale: Mutex::new(HashSet::new()),
            }),
        }
    }
}

/// Makes stored values plaintext and remembers which keys hold a stale
/// one (see [`Backend::is_stale`]).
struct Decryptor {
    transformers: KeyTransformers,
    stale: Mutex<HashSet<String>>,
}

impl Decryptor {
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
        match (self.transformers)(&kv.key).read(&kv.value, &kv.key) {
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
                            .to_storage(&value, &key)
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
