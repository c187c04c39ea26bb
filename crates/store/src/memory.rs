//! A [`Disk`] that keeps everything in process memory: for tests and throwaway servers.

use std::collections::BTreeMap;

use crate::backend::{BackendError, Event, EventKind, KeyValue, Loaded};
use crate::local::Disk;
use crate::Revision;

#[derive(Debug, Default)]
pub struct MemoryDisk {
    revision: Revision,
    kvs: BTreeMap<String, KeyValue>,
}

impl MemoryDisk {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Disk for MemoryDisk {
    fn load(&mut self) -> Result<Loaded, BackendError> {
        Ok(Loaded {
            revision: self.revision,
            kvs: self.kvs.values().cloned().collect(),
        })
    }

    fn write(&mut self, revision: Revision, events: &[Event]) -> Result<(), BackendError> {
        for event in events {
            match event.kind {
                EventKind::Put => {
                    self.kvs.insert(event.kv.key.clone(), event.kv.clone());
                }
                EventKind::Delete => {
                    self.kvs.remove(&event.kv.key);
                }
            }
        }
        self.revision = revision;
        Ok(())
    }

    fn close(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
}
