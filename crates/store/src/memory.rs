//! A [`Disk`] that keeps everything in process memory: for tests and throwaway servers.
//!
//! The keys live in a persistent map, so the whole state is an O(1)
//! [`Image`] (checkpoints of in-process test servers).

use crate::backend::{BackendError, Event, EventKind, Image, Loaded};
use crate::local::Disk;
use crate::Revision;

#[derive(Debug, Default)]
pub struct MemoryDisk {
    state: Image,
}

impl MemoryDisk {
    pub fn new() -> Self {
        Self::default()
    }

    /// A disk holding `image` (a store started from a checkpoint).
    pub fn from_image(image: Image) -> Self {
        MemoryDisk { state: image }
    }
}

impl Disk for MemoryDisk {
    fn load(&mut self) -> Result<Loaded, BackendError> {
        Ok(Loaded {
            revision: self.state.revision,
            kvs: self.state.kvs.values().cloned().collect(),
        })
    }

    fn write(&mut self, revision: Revision, events: &[Event]) -> Result<(), BackendError> {
        for event in events {
            match event.kind {
                EventKind::Put => {
                    self.state
                        .kvs
                        .insert(event.kv.key.clone(), event.kv.clone());
                }
                EventKind::Delete => {
                    self.state.kvs.remove(&event.kv.key);
                }
            }
        }
        self.state.revision = revision;
        Ok(())
    }

    fn close(&mut self) -> Result<(), BackendError> {
        Ok(())
    }

    fn image(&self) -> Result<Image, BackendError> {
        Ok(self.state.clone())
    }

    fn restore(&mut self, image: &Image, revision: Revision) -> Result<(), BackendError> {
        self.state = Image {
            revision,
            kvs: image.kvs.clone(),
            ..Image::default()
        };
        Ok(())
    }
}
