//! GET of one object (and of its `status` subresource), at the
//! `resourceVersion` semantics of kube's cache delegator: unset is the most
//! recent state (a consistent read), "0" is any (the cache as it is), any
//! other revision is "not older than" it (wait up to 3 s, then 504).

use std::sync::Arc;

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::list_options::{self, parse_resource_version};
use super::target::Target;
use crate::status::{Result, Status};

pub(super) async fn get(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let name = target.name.unwrap_or_default();
    let snapshot = match request.query.get("resourceVersion").unwrap_or("") {
        "" => list_options::consistent_snapshot(api).await?,
        resource_version => match parse_resource_version(resource_version) {
            Err(detail) => return Ok(list_options::invalid_resource_version_on_get(&detail)),
            Ok(0) => api.store.snapshot(),
            Ok(revision) => {
                list_options::wait_not_older_than(api, revision).await?;
                api.store.snapshot()
            }
        },
    };
    let key = target.key(name);
    let entry = snapshot
        .get(&key)
        .ok_or_else(|| Status::not_found(&target.group_resource(), name))?;
    if let Some(error) = entry.object.corrupt_error() {
        return Err(super::target::corrupt_object(&key, error));
    }
    // The representation (Table, PartialObjectMetadata, media type) is
    // applied by `representation::represent` from the cached encodings.
    Ok(ApiResponse::stored(
        200,
        entry.object.clone(),
        snapshot.revision,
    ))
}
