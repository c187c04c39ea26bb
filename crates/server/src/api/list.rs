//! LIST of a collection: selectors, `resourceVersion`(`Match`), `limit` and
//! `continue` (see `list_options.rs` for which state each combination reads).
//!
//! Every page of a chunked list is read at the revision of the first page:
//! the signed continue token (`continue_token.rs`) names that revision, and
//! the next page is `Store::snapshot_at` it, within the history window.

use std::ops::Bound;
use std::sync::Arc;

use bytes::{BufMut, BytesMut};
use ferrokube_store::Snapshot;
use serde_json::{json, Value};

use super::continue_token;
use super::get::OBJECT_REPRESENTATIONS;
use super::list_options::{ListOptions, ReadError};
use super::resource::Target;
use super::{Api, ApiRequest, ApiResponse};
use crate::negotiate::{negotiate, Representation};
use crate::object;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::{Result, Status};
use crate::table;

/// Filters of a list or delete-collection request.
pub struct Selection {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Selection {
    pub fn from_request(request: &ApiRequest, target: &Target<'_>) -> Result<Self> {
        let labels = LabelSelector::parse(request.query.get("labelSelector").unwrap_or(""))
            .map_err(|error| Status::bad_request(error.to_string()))?;
        let fields = FieldSelector::parse(request.query.get("fieldSelector").unwrap_or(""))
            .map_err(|error| Status::bad_request(error.to_string()))?;
        fields
            .validate_for(target.resource.group, target.resource.kind)
            .map_err(|error| Status::bad_request(error.to_string()))?;
        Ok(Selection { labels, fields })
    }

    pub fn is_everything(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    pub fn matches(&self, target: &Target<'_>, value: &Value) -> bool {
        self.matches_resource(target.resource, value)
    }

    pub fn matches_resource(&self, resource: &crate::registry::ResourceDef, value: &Value) -> bool {
        self.labels.matches(object::labels(value))
            && self.fields.matches(resource.group, resource.kind, value)
    }
}

pub(super) async fn list(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let representation = negotiate(request.header("accept"), OBJECT_REPRESENTATIONS)?;
    // The order kube's `ListResource` checks in: decoding the parameters (400),
    // `ValidateListOptions` (422), the field selector's labels (400), then storage.
    let labels = LabelSelector::parse(request.query.get("labelSelector").unwrap_or(""))
        .map_err(|error| Status::bad_request(error.to_string()))?;
    let fields = FieldSelector::parse(request.query.get("fieldSelector").unwrap_or(""))
        .map_err(|error| Status::bad_request(error.to_string()))?;
    let limit = request
        .query
        .int("limit")?
        .filter(|limit| *limit > 0)
        .map(|limit| usize::try_from(limit).unwrap_or(usize::MAX));
    let options = ListOptions::from_query(&request.query);
    options.validate()?;
    fields
        .validate_for(target.resource.group, target.resource.kind)
        .map_err(|error| Status::bad_request(error.to_string()))?;
    let selection = Selection { labels, fields };
    let prefix = target.prefix();
    let read = options.plan(api, &prefix)?;
    let state = match read.read(api, &prefix, limit.is_some()).await {
        Ok(state) => state,
        Err(ReadError::Status(status)) => return Err(status),
        Err(ReadError::Response(response)) => return Ok(response),
    };
    let page = Page::collect(
        &state.snapshot,
        &prefix,
        state.start.as_deref(),
        limit.filter(|_| state.paged),
        &selection,
        target,
    );
    let snapshot = &state.snapshot;
    let continue_token = page
        .continue_after
        .map(|key| continue_token::encode(&api.continue_key, snapshot.revision, &prefix, key));
    let remaining = page.remaining;
    let items = page.items;
    match representation {
        Representation::Table(version) => {
            let values: Vec<Value> = items
                .iter()
                .filter_map(|item| item.value().cloned())
                .collect();
            let mut body = table::table(
                target.resource,
                version,
                &values,
                snapshot.revision,
                continue_token.as_deref(),
                request,
            );
            if let (Some(remaining), Some(metadata)) = (
                remaining,
                body.get_mut("metadata").and_then(Value::as_object_mut),
            ) {
                metadata.insert("remainingItemCount".into(), json!(remaining));
            }
            Ok(ApiResponse::represented(200, representation, &body))
        }
        _ => Ok(ApiResponse::bytes(
            200,
            "application/json",
            list_json(
                target,
                snapshot.revision,
                continue_token.as_deref(),
                remaining,
                &items,
            ),
        )),
    }
}

/// One page of a list, as kube's watch cache cuts it (`cacher.GetList`).
struct Page<'a> {
    items: Vec<&'a object::StoredObject>,
    /// The last key of the page when more keys follow it.
    continue_after: Option<&'a str>,
    /// `remainingItemCount`: only for a page with more after it and no selector.
    remaining: Option<usize>,
}

impl<'a> Page<'a> {
    /// The items of `snapshot` under `prefix` from `start` (inclusive), at most
    /// `limit`. More follow when any key is left after a full page, whether
    /// or not it matches the selection (so a filtered list may end with an
    /// empty page); the count of what is left is only given without selectors.
    fn collect(
        snapshot: &'a Snapshot<object::StoredObject>,
        prefix: &str,
        start: Option<&str>,
        limit: Option<usize>,
        selection: &Selection,
        target: &Target<'_>,
    ) -> Page<'a> {
        let from = match start {
            Some(start) if start > prefix => start.to_string(),
            _ => prefix.to_string(),
        };
        let everything = selection.is_everything();
        let mut items = Vec::new();
        let mut last_key: Option<&'a str> = None;
        let mut more = false;
        let mut remaining = 0usize;
        let range = snapshot
            .objects
            .range((Bound::Included(from), Bound::Unbounded))
            .take_while(|(key, _)| key.starts_with(prefix));
        for (key, entry) in range {
            if limit.is_some_and(|limit| items.len() >= limit) {
                more = true;
                if !everything {
                    break;
                }
                remaining += 1;
                continue;
            }
            let Some(value) = entry.object.value() else {
                continue;
            };
            if !selection.matches(target, value) {
                continue;
            }
            items.push(entry.object.as_ref());
            last_key = Some(key.as_str());
        }
        let continue_after = last_key.filter(|_| more);
        Page {
            items,
            continue_after,
            remaining: (continue_after.is_some() && everything).then_some(remaining),
        }
    }
}

/// `{"kind":"XList","apiVersion":..,"metadata":{..},"items":[..]}` by concatenating
/// each item's cached JSON: no item is re-encoded.
pub fn list_json(
    target: &Target<'_>,
    revision: i64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    items: &[&object::StoredObject],
) -> bytes::Bytes {
    let mut metadata = serde_json::Map::new();
    metadata.insert("resourceVersion".into(), json!(revision.to_string()));
    if let Some(token) = continue_token {
        metadata.insert("continue".into(), json!(token));
    }
    if let Some(remaining) = remaining {
        metadata.insert("remainingItemCount".into(), json!(remaining));
    }
    let head = json!({
        "kind": target.resource.list_kind(),
        "apiVersion": target.resource.api_version(),
        "metadata": metadata,
    });
    let head = serde_json::to_vec(&head).unwrap_or_default();
    let bodies: Vec<bytes::Bytes> = items.iter().filter_map(|item| item.item_body()).collect();
    let size: usize = bodies.iter().map(|body| body.len() + 2).sum();
    let mut out = BytesMut::with_capacity(head.len() + size + 16);
    out.put_slice(&head[..head.len().saturating_sub(1)]);
    out.put_slice(b",\"items\":[");
    for (index, body) in bodies.iter().enumerate() {
        if index > 0 {
            out.put_u8(b',');
        }
        out.put_u8(b'{');
        out.put_slice(body);
    }
    out.put_slice(b"]}");
    out.freeze()
}
