//! The request path after TLS and HTTP: authentication check, routing,
//! negotiation, and the verb handlers.

mod body;
mod create;
mod delete;
mod exchange;
mod get;
mod list;
mod meta_endpoints;
mod patch;
mod resource;
mod scale;
mod strategy;
mod update;
mod watch;
mod write;

#[cfg(test)]
mod handler_tests;
#[cfg(test)]
mod watch_tests;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub use exchange::{ApiRequest, ApiResponse, ResponseBody, StreamBody};
use ferrokube_store::{Snapshot, Store};

use crate::object::{ObjectCodec, StoredObject};
use crate::openapi::OpenApi;
use crate::registry::{Registry, RESOURCES};
use crate::route::{route, Endpoint};
use crate::status::Status;

pub type ObjectStore = Store<ObjectCodec>;

/// Largest request body kube-apiserver accepts (`MaxRequestBodyBytes`, 3 MiB).
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Everything the handlers share.
pub struct Api {
    pub store: ObjectStore,
    pub registry: Registry,
    pub openapi: OpenApi,
    /// `host:port` clients reach us at, for `/api`'s serverAddressByClientCIDRs.
    pub server_address: String,
    pub started: Instant,
    shutting_down: AtomicBool,
    pinned: Mutex<VecDeque<(Instant, Arc<Snapshot<StoredObject>>)>>,
}

/// How long a list snapshot stays available to continue tokens.
pub const HISTORY_WINDOW: std::time::Duration = std::time::Duration::from_secs(300);
/// At most this many pinned list snapshots are kept (oldest dropped first).
const MAX_PINNED_SNAPSHOTS: usize = 256;

impl Api {
    pub fn new(store: ObjectStore, server_address: String) -> Arc<Self> {
        Arc::new(Api {
            store,
            registry: Registry::new(RESOURCES),
            openapi: OpenApi::new(RESOURCES),
            server_address,
            started: Instant::now(),
            shutting_down: AtomicBool::new(false),
            pinned: Mutex::new(VecDeque::new()),
        })
    }

    /// Keep `snapshot` for continue tokens issued against it (history window).
    pub fn pin_snapshot(&self, snapshot: Arc<Snapshot<StoredObject>>) {
        let Ok(mut pinned) = self.pinned.lock() else {
            return;
        };
        let now = Instant::now();
        pinned.retain(|(pinned_at, _)| now.duration_since(*pinned_at) < HISTORY_WINDOW);
        if pinned
            .iter()
            .any(|(_, existing)| existing.revision == snapshot.revision)
        {
            return;
        }
        if pinned.len() >= MAX_PINNED_SNAPSHOTS {
            pinned.pop_front();
        }
        pinned.push_back((now, snapshot));
    }

    /// The snapshot at exactly `revision`, if a continue token pinned it and it has not expired.
    pub fn pinned_snapshot(&self, revision: i64) -> Option<Arc<Snapshot<StoredObject>>> {
        let current = self.store.snapshot();
        if current.revision == revision {
            return Some(current);
        }
        let pinned = self.pinned.lock().ok()?;
        pinned
            .iter()
            .find(|(pinned_at, snapshot)| {
                snapshot.revision == revision && pinned_at.elapsed() < HISTORY_WINDOW
            })
            .map(|(_, snapshot)| snapshot.clone())
    }

    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::Release);
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }

    /// Answer one request. Never panics on client input; every failure is a `Status`.
    pub async fn handle(self: &Arc<Self>, request: ApiRequest) -> ApiResponse {
        let endpoint = route(request.method, &request.path, &request.query);
        let public = matches!(endpoint, Endpoint::Health(..) | Endpoint::Version);
        if request.user.is_none() && !public {
            return Status::unauthorized().into();
        }
        let result = match endpoint {
            Endpoint::Resource(path) => resource::handle(self, &request, path).await,
            other => meta_endpoints::handle(self, &request, other),
        };
        result.unwrap_or_else(ApiResponse::from)
    }
}
