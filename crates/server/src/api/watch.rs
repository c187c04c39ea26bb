//! WATCH: a stream of `{"type":…,"object":…}` events over one response
//! (`endpoints/handlers/watch.go`, `storage/cacher/cache_watcher.go`).
//!
//! Each watcher reads the store's shared change log at its own pace: an
//! event's object is encoded once per object version (its cached JSON) and
//! shared by every watcher; a slow watcher only delays itself, and one that
//! falls behind the history window gets a 410 Expired ERROR event and is
//! closed, as kube's watch cache does.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use ferrokube_store::{Change, HistoryError};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse, ResponseBody};
use super::representation::Reading;
use super::selection::Selection;
use super::target::Target;
use crate::negotiate::{Media, Representation};
use crate::object::{self, StoredObject};
use crate::registry::ResourceDef;
use crate::status::{FieldError, Result, Status};
use crate::table;

/// Events buffered per watcher before the watcher waits for its client.
const WATCHER_BUFFER: usize = 128;
/// Changes read from the log per step.
const READ_BATCH: usize = 512;
/// Bookmarks are sent about once a minute (kube: `bookmarkFrequency`).
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
/// The last bookmark goes this long before a watch's deadline.
const BOOKMARK_BEFORE_TIMEOUT: Duration = Duration::from_secs(2);

async fn sleep_until_some(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A response body fed by a channel.
struct ChannelBody {
    receiver: mpsc::Receiver<Bytes>,
}

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.receiver
            .poll_recv(context)
            .map(|chunk| chunk.map(|bytes| Ok(http_body::Frame::data(bytes))))
    }
}

/// Where the stream starts.
enum Start {
    /// Synthetic ADDED events for the state at this snapshot, then changes after it.
    WithState { initial_events_end: bool },
    /// Only changes after this revision.
    After(i64),
    /// One ERROR event, then the end (`cacher.go` `newErrWatcher`).
    Failed(Status),
}

impl Start {
    fn with_bookmarks(self, bookmarks: bool) -> Start {
        match self {
            Start::WithState { .. } => Start::WithState {
                initial_events_end: bookmarks,
            },
            other => other,
        }
    }
}

/// A streaming list (`sendInitialEvents=true`) from a resourceVersion waits
/// up to 3 s for the store to reach it (`cacher.go`
/// `waitUntilWatchCacheFreshAndForceAllEvents` →
/// `watch_cache.go` `waitUntilFreshAndBlock`); past that the watch is still
/// a 200 whose only event is the ERROR 504 `Too large resource version`
/// (kube: "once we have passed authn/authz/admission, and successfully parsed
/// a resource version, other errors must fail with a watch event of type
/// ERROR"). A plain watch from a future revision is not waited for: kube
/// starts it at once and it stays silent until the revision passes.
async fn wait_for_streaming_list(api: &Api, wanted: i64) -> Start {
    match api
        .store
        .wait_for(wanted, super::list_options::FRESHNESS_WAIT)
        .await
    {
        Ok(()) => Start::WithState {
            initial_events_end: false,
        },
        Err(ferrokube_store::StoreError::RevisionTimeout { current, .. }) => Start::Failed(
            super::list_options::too_large_resource_version(wanted as u64, current),
        ),
        Err(other) => Start::Failed(Status::internal(other)),
    }
}

struct Watcher {
    api: Arc<Api>,
    resource: &'static ResourceDef,
    /// A custom resource's facts: the version events are served at, its
    /// printer columns for Tables.
    custom: Option<Arc<crate::crd::CustomVersion>>,
    prefix: String,
    selection: Selection,
    representation: Representation,
    /// The media type of the events (JSON lines, protobuf frames, CBOR sequence).
    media: Media,
    bookmarks: bool,
    sender: mpsc::Sender<Bytes>,
    /// The watch request's query (Table `includeObject`).
    /// The request's `includeObject`, for Table events.
    include_object: String,
    /// kube sends Table column definitions with the first event only.
    columns_sent: std::sync::atomic::AtomicBool,
}

/// `ValidateListOptions` for watches (`apimachinery/pkg/apis/meta/internalversion/validation`).
fn validate_watch_options(request: &ApiRequest) -> Result<()> {
    let send_initial_events = request.query.get("sendInitialEvents");
    let resource_version_match = request.query.get("resourceVersionMatch").unwrap_or("");
    let mut errors = Vec::new();
    if send_initial_events.is_some() && resource_version_match != "NotOlderThan" {
        errors.push(FieldError::forbidden(
            "resourceVersionMatch",
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if !resource_version_match.is_empty() {
        if send_initial_events.is_none() {
            errors.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if resource_version_match != "NotOlderThan" {
            errors.push(FieldError::not_supported(
                "resourceVersionMatch",
                resource_version_match,
                &["NotOlderThan"],
            ));
        }
        if request
            .query
            .get("continue")
            .is_some_and(|token| !token.is_empty())
        {
            errors.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Status::invalid("meta.k8s.io", "ListOptions", "", &errors))
    }
}

fn parse_revision(value: &str) -> Result<i64> {
    value
        .parse::<i64>()
        .ok()
        .filter(|revision| *revision >= 0)
        .ok_or_else(|| Status::bad_request(format!("invalid resource version: {value:?}")))
}

pub(super) async fn watch(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    validate_watch_options(request)?;
    let negotiated = super::representation::negotiate_watch(request, target.resource)?;
    let representation = negotiated.representation;
    let mut selection = Selection::from_request(request, target)?;
    if let Some(name) = target.name {
        // `/watch/.../NAME` is a watch of one object: metadata.name=NAME.
        let single = crate::selector::FieldSelector::parse(&format!("metadata.name={name}"))
            .map_err(|error| Status::bad_request(error.to_string()))?;
        selection.fields = single;
    }
    let resource_version = request.query.get("resourceVersion").unwrap_or("");
    let send_initial_events = request.query.flag("sendInitialEvents");
    let bookmarks = request.query.flag("allowWatchBookmarks");
    let start = if send_initial_events {
        let wanted = match resource_version {
            "" | "0" => None,
            value => Some(parse_revision(value)?),
        };
        match wanted {
            Some(wanted) => wait_for_streaming_list(api, wanted).await,
            None => Start::WithState {
                initial_events_end: bookmarks,
            },
        }
        .with_bookmarks(bookmarks)
    } else if resource_version.is_empty() || resource_version == "0" {
        Start::WithState {
            initial_events_end: false,
        }
    } else {
        Start::After(parse_revision(resource_version)?)
    };
    let timeout = match request.query.int("timeoutSeconds")? {
        Some(seconds) if seconds > 0 => Duration::from_secs(seconds as u64),
        _ => {
            let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0])
                * api.min_request_timeout.as_secs()
                / 256;
            api.min_request_timeout + Duration::from_secs(jitter)
        }
    };
    let (sender, receiver) = mpsc::channel(WATCHER_BUFFER);
    let watcher = Watcher {
        api: api.clone(),
        resource: target.resource,
        custom: target.custom.clone(),
        prefix: target.prefix(),
        selection,
        representation,
        media: negotiated.media,
        bookmarks,
        sender,
        include_object: super::representation::include_object(request).to_string(),
        columns_sent: std::sync::atomic::AtomicBool::new(false),
    };
    tokio::spawn(async move { watcher.run(start, timeout).await });
    let body = http_body_util::BodyExt::boxed(ChannelBody { receiver });
    let content_type = super::representation::watch_content_type(&negotiated);
    let mut response = ApiResponse::bytes(200, &content_type, Bytes::new());
    response.body = ResponseBody::Stream(body);
    Ok(response)
}

enum Kind {
    Added,
    Modified,
    Deleted,
    Bookmark,
}

impl Kind {
    fn as_str(&self) -> &'static str {
        match self {
            Kind::Added => "ADDED",
            Kind::Modified => "MODIFIED",
            Kind::Deleted => "DELETED",
            Kind::Bookmark => "BOOKMARK",
        }
    }
}

impl Watcher {
    async fn run(self, start: Start, timeout: Duration) {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut revisions = self.api.store.subscribe();
        // Watches end when the server stops, so a graceful shutdown does not wait for them.
        let mut shutdown = self.api.shutdown_signal();
        if *shutdown.borrow_and_update() {
            return;
        }
        let mut last = match start {
            Start::Failed(status) => {
                let _ = self.send_encoded("ERROR", &status.to_json()).await;
                return;
            }
            Start::After(revision) => revision,
            Start::WithState { initial_events_end } => {
                let snapshot = self.api.store.snapshot();
                for (_, entry) in snapshot.range(&self.prefix, None) {
                    if self.selection.matches_stored(self.resource, &entry.object)
                        && !self.send_object(Kind::Added, &entry.object).await
                    {
                        return;
                    }
                }
                if initial_events_end && !self.send_bookmark(snapshot.revision, true).await {
                    return;
                }
                snapshot.revision
            }
        };
        // cache_watcher.go nextBookmarkTime: about once a minute, and 2 s before
        // the deadline; none once that moment has passed.
        let next_bookmark = |now: tokio::time::Instant| {
            let heartbeat = now + BOOKMARK_INTERVAL;
            let pre_timeout = deadline.checked_sub(BOOKMARK_BEFORE_TIMEOUT).unwrap_or(now);
            let at = heartbeat.min(pre_timeout);
            (at >= now).then_some(at)
        };
        let mut bookmark_at = next_bookmark(tokio::time::Instant::now());
        loop {
            let head = *revisions.borrow_and_update();
            match self.api.store.changes_since(last, READ_BATCH) {
                Err(HistoryError::Expired { requested, oldest }) => {
                    let status =
                        Status::gone(format!("too old resource version: {requested} ({oldest})"));
                    let _ = self.send_encoded("ERROR", &status.to_json()).await;
                    return;
                }
                Ok(changes) if !changes.is_empty() => {
                    for change in &changes {
                        last = change.revision;
                        if !self.send_change(change).await {
                            return;
                        }
                    }
                    continue;
                }
                Ok(_) => last = last.max(head),
            }
            tokio::select! {
                changed = revisions.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                () = sleep_until_some(bookmark_at), if self.bookmarks && bookmark_at.is_some() => {
                    bookmark_at = next_bookmark(tokio::time::Instant::now() + Duration::from_millis(1));
                    if !self.send_bookmark(last, false).await {
                        return;
                    }
                }
                () = tokio::time::sleep_until(deadline) => return,
                () = self.sender.closed() => return,
                _ = shutdown.changed() => return,
            }
        }
    }

    /// Turn one change into at most one event for this watcher's selection
    /// (kube turns MODIFIED into ADDED/DELETED when an object starts/stops matching).
    async fn send_change(&self, change: &Change<StoredObject>) -> bool {
        if !change.key.starts_with(&self.prefix) {
            return true;
        }
        let matches = |object: &StoredObject| self.selection.matches_stored(self.resource, object);
        let was = change.previous.as_deref().is_some_and(matches);
        if change.deleted {
            return !was || self.send_object(Kind::Deleted, &change.object).await;
        }
        let is = matches(&change.object);
        match (change.previous.is_some() && was, is) {
            (true, true) => self.send_object(Kind::Modified, &change.object).await,
            (false, true) => self.send_object(Kind::Added, &change.object).await,
            (true, false) => {
                // The last state that matched, at the revision it stopped matching.
                let previous = match change.previous.as_deref() {
                    Some(previous) => self.read_value(previous).await,
                    None => Ok(None),
                };
                let mut value = match previous {
                    Ok(Some(value)) => value,
                    Ok(None) => return true,
                    Err(()) => return false,
                };
                object::set_resource_version(&mut value, change.revision);
                self.send_value(Kind::Deleted, &value).await
            }
            (false, false) => true,
        }
    }

    /// How this watch reads stored objects (custom resources at the
    /// request's version).
    fn reading(&self) -> Reading<'_> {
        Reading::of(self.custom.as_deref())
    }

    /// A stored object as this watch serves it; `Err` when its conversion
    /// webhook failed, which ends the watch (kube's watch server stops at
    /// an encoding error).
    async fn read_value(&self, object: &StoredObject) -> std::result::Result<Option<Value>, ()> {
        if !super::conversion::converts_by_webhook(self.custom.as_ref()) {
            let Some(mut value) = self.reading().value(object) else {
                return Ok(None);
            };
            return match crate::versions::to_version(&mut value, self.resource) {
                Ok(()) => Ok(Some(value)),
                Err(error) => {
                    tracing::warn!(%error, "watch ended: conversion failed");
                    Err(())
                }
            };
        }
        super::conversion::stored_value(&self.api, self.custom.as_ref(), object)
            .await
            .map_err(|status| {
                tracing::warn!(message = %status.message, "watch ended: conversion failed");
            })
    }

    async fn send_object(&self, kind: Kind, object: &StoredObject) -> bool {
        // A built-in kind served in several versions, stored at another
        // version than the watch's: converted once for this event (its own
        // cached encodings then serve every representation below).
        let converted = match crate::versions::converted(object, self.resource) {
            Ok(converted) => converted,
            Err(error) => {
                tracing::warn!(%error, "watch ended: conversion failed");
                return false;
            }
        };
        let object = converted.as_ref().unwrap_or(object);
        if super::conversion::converts_by_webhook(self.custom.as_ref()) {
            return match self.read_value(object).await {
                Ok(Some(value)) => self.send_value(kind, &value).await,
                Ok(None) => true,
                Err(()) => false,
            };
        }
        match (self.media, self.representation, object.json()) {
            (Media::Json, Representation::Json, Some(_)) => match self.reading().json(object) {
                Some(json) => self.send_raw(kind.as_str(), &json).await,
                None => true,
            },
            // Protobuf from the object's cached message (never a custom
            // resource: they have no protobuf form).
            (Media::Protobuf, Representation::Json, Some(_)) => {
                match super::representation::protobuf_watch_event(kind.as_str(), object) {
                    Some(frame) => self.sender.send(frame).await.is_ok(),
                    None => match self.reading().value(object) {
                        Some(value) => self.send_value(kind, &value).await,
                        None => true,
                    },
                }
            }
            // Other representations are built from the parsed tree.
            _ => match self.reading().value(object) {
                Some(value) => self.send_value(kind, &value).await,
                None => true,
            },
        }
    }

    async fn send_value(&self, kind: Kind, value: &Value) -> bool {
        let encoded = match self.representation {
            Representation::Table(version) => {
                let revision = object::resource_version(value).parse().unwrap_or(0);
                let headers = !self
                    .columns_sent
                    .swap(true, std::sync::atomic::Ordering::Relaxed);
                table::render(
                    table::TableOf {
                        resource: self.resource,
                        custom: self
                            .custom
                            .as_ref()
                            .map(|custom| custom.printer_columns.as_slice()),
                    },
                    version,
                    std::slice::from_ref(value),
                    revision,
                    None,
                    &self.include_object,
                    headers,
                )
            }
            Representation::PartialObjectMetadata(version) => json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": format!("meta.k8s.io/{version}"),
                "metadata": object::metadata(value).cloned().unwrap_or_default(),
            }),
            _ => value.clone(),
        };
        self.send_encoded(kind.as_str(), &encoded).await
    }

    /// One event in the watch's media type; false when the client is gone.
    async fn send_encoded(&self, kind: &str, object: &Value) -> bool {
        let event = super::representation::watch_event(self.media, kind, object);
        self.sender.send(event).await.is_ok()
    }

    /// A BOOKMARK: the watched kind with only `metadata.resourceVersion`
    /// (and the initial-events-end annotation), transformed like every other
    /// event of this watch (`handlers/response.go` `watchEmbeddedEncoder`
    /// runs `doTransformObject` on bookmarks too), so a PartialObjectMetadata
    /// watch gets a `meta.k8s.io` PartialObjectMetadata and a Table watch a Table.
    async fn send_bookmark(&self, revision: i64, initial_events_end: bool) -> bool {
        let mut metadata = json!({"resourceVersion": revision.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let bookmark = json!({
            "kind": self.resource.kind,
            "apiVersion": self.resource.api_version(),
            "metadata": metadata,
        });
        self.send_value(Kind::Bookmark, &bookmark).await
    }

    /// `{"type":TYPE,"object":OBJECT}\n`; false when the client is gone.
    async fn send_raw(&self, kind: &str, object: &[u8]) -> bool {
        let mut line = BytesMut::with_capacity(object.len() + 32);
        line.put_slice(b"{\"type\":\"");
        line.put_slice(kind.as_bytes());
        line.put_slice(b"\",\"object\":");
        line.put_slice(object);
        line.put_slice(b"}\n");
        self.sender.send(line.freeze()).await.is_ok()
    }
}
