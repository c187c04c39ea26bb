//! The registry the server serves from: one immutable [`Registry`] snapshot,
//! replaced whole when the established CRDs change (`crd/serving.rs`), and
//! the store revision whose CRDs it reflects.
//!
//! Requests take a snapshot once ([`LiveRegistry::load`]: a share of it) and
//! use it to the end; a look-up that needs no share reads it in place
//! ([`LiveRegistry::with`], `snapshot_cell.rs`). A request that would answer "not
//! found" first waits until the snapshot reflects every CRD the store held
//! when the request arrived ([`LiveRegistry::caught_up`]), so a client that saw
//! its CRD Established is never told its resource does not exist.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ferrokube_store::Revision;

use super::index::Registry;
use super::resource::ResourceDef;
use crate::snapshot_cell::SnapshotCell;

/// How long a request waits for the registry to reflect the store before it
/// answers from what it has.
pub const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(2);

pub struct LiveRegistry {
    current: SnapshotCell<Registry>,
    /// The store revision up to which CRD changes are reflected in `current`.
    seen: tokio::sync::watch::Sender<Revision>,
    /// A task keeps this registry current (without one, nothing is awaited).
    followed: AtomicBool,
}

impl LiveRegistry {
    pub fn new(registry: Registry) -> Self {
        LiveRegistry {
            current: SnapshotCell::new(Arc::new(registry)),
            seen: tokio::sync::watch::channel(0).0,
            followed: AtomicBool::new(false),
        }
    }

    /// The current snapshot.
    pub fn load(&self) -> Arc<Registry> {
        self.current.load()
    }

    /// Runs `read` on the current snapshot without taking a share of it.
    pub fn with<R>(&self, read: impl Fn(&Registry) -> R) -> R {
        self.current.with(read)
    }

    /// Serves `registry` from now on.
    pub fn replace(&self, registry: Registry) {
        self.current.replace(Arc::new(registry));
    }

    /// A task now keeps this registry current.
    pub fn set_followed(&self) {
        self.followed.store(true, Ordering::Release);
    }

    /// Every CRD change up to `revision` is reflected.
    pub fn mark_seen(&self, revision: Revision) {
        self.seen.send_if_modified(|seen| {
            let advanced = revision > *seen;
            if advanced {
                *seen = revision;
            }
            advanced
        });
    }

    /// The snapshot once it reflects the store at `revision` (or after
    /// [`CATCH_UP_TIMEOUT`], the snapshot there is).
    pub async fn caught_up(&self, revision: Revision) -> Arc<Registry> {
        if !self.followed.load(Ordering::Acquire) {
            return self.load();
        }
        let mut seen = self.seen.subscribe();
        let _ =
            tokio::time::timeout(CATCH_UP_TIMEOUT, seen.wait_for(|seen| *seen >= revision)).await;
        self.load()
    }

    /// [`Registry::lookup`] on the current snapshot.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<&'static ResourceDef> {
        self.load().lookup(group, version, plural)
    }
}
