//! LIST of a collection: selectors, `resourceVersion`(`Match`), `limit` and
//! `continue` (see `list_options.rs` for which state each combination reads).
//!
//! Every page of a chunked list is read at the revision of the first page:
//! the signed continue token (`continue_token.rs`) names that revision, and
//! the next page is `Store::snapshot_at` it, within the history window.

use std::ops::Bound;
use std::sync::Arc;

use ferrokube_store::Snapshot;

use super::context::Api;
use super::continue_token;
use super::exchange::{ApiRequest, ApiResponse, ListPayload};
use super::list_options::{ListOptions, ReadError};
use super::selection::Selection;
use super::target::Target;
use crate::object;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::{Result, Status};

pub(super) async fn list(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
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
    super::selection::validate_fields(&fields, target)?;
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
    if let Some((key, error)) = page.corrupt {
        return Err(super::target::corrupt_object(key, error));
    }
    let snapshot = &state.snapshot;
    let continue_token = page
        .continue_after
        .map(|key| continue_token::encode(&api.continue_key, snapshot.revision, &prefix, key));
    // The representation (Table, PartialObjectMetadataList, media type) is
    // applied by `representation::represent` from the items' cached encodings.
    Ok(ApiResponse::list(
        200,
        ListPayload {
            api_version: target.resource.api_version(),
            kind: target.resource.list_kind(),
            revision: snapshot.revision,
            continue_token,
            remaining: page.remaining,
            items: page.items.into_iter().cloned().collect(),
        },
    ))
}

/// One page of a list, as kube's watch cache cuts it (`cacher.GetList`).
struct Page<'a> {
    items: Vec<&'a Arc<object::StoredObject>>,
    /// The last key of the page when more keys follow it.
    continue_after: Option<&'a str>,
    /// `remainingItemCount`: only for a page with more after it and no selector.
    remaining: Option<usize>,
    /// The first stored object in the range that does not decode (key, error):
    /// kube's list fails on it rather than leaving it out.
    corrupt: Option<(&'a str, &'a str)>,
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
        let mut corrupt = None;
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
            if let Some(error) = entry.object.corrupt_error() {
                corrupt.get_or_insert((key.as_str(), error));
                continue;
            }
            if !selection.matches_stored(target.resource, &entry.object) {
                continue;
            }
            items.push(&entry.object);
            last_key = Some(key.as_str());
        }
        let continue_after = last_key.filter(|_| more);
        Page {
            items,
            continue_after,
            remaining: (continue_after.is_some() && everything).then_some(remaining),
            corrupt,
        }
    }
}
