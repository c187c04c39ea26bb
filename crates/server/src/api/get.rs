//! GET of one object (and of its `status` subresource), at the
//! `resourceVersion` semantics of kube's cache delegator: unset is the most
//! recent state (a consistent read), "0" is any (the cache as it is), any
//! other revision is "not older than" it (wait up to 3 s, then 504).

use std::sync::Arc;

use super::list_options::{self, parse_resource_version};
use super::resource::Target;
use super::{Api, ApiRequest, ApiResponse};
use crate::negotiate::{negotiate, Representation};
use crate::status::{Result, Status};
use crate::table;

pub const OBJECT_REPRESENTATIONS: &[Representation] = &[
    Representation::Json,
    Representation::Table("v1"),
    Representation::Table("v1beta1"),
];

pub(super) async fn get(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let representation = negotiate(request.header("accept"), OBJECT_REPRESENTATIONS)?;
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
    let entry = snapshot
        .get(&target.key(name))
        .ok_or_else(|| Status::not_found(&target.group_resource(), name))?;
    match representation {
        Representation::Table(version) => {
            let value = entry
                .object
                .value()
                .ok_or_else(|| Status::internal("stored object cannot be decoded"))?;
            let body = table::table(
                target.resource,
                version,
                std::slice::from_ref(value),
                snapshot.revision,
                None,
                request,
            );
            Ok(ApiResponse::represented(200, representation, &body))
        }
        _ => {
            let json = entry
                .object
                .json()
                .ok_or_else(|| Status::internal("stored object cannot be decoded"))?;
            Ok(ApiResponse::bytes(200, "application/json", json.clone()))
        }
    }
}
