//! The `scale` subresource: autoscaling/v1 `Scale` views of
//! deployments, replicasets, statefulsets and replicationcontrollers
//! (`pkg/registry/apps/deployment/storage/storage.go` `ScaleREST`).

use std::sync::Arc;

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::options::WriteOptions;
use super::target::{check_type, Target};
use super::write::decode::{decode, Decoded};
use super::write::ownership::Ownership;
use super::write::scale::{apply_scale, scale_of};
use crate::status::{Result, Status};

pub(super) async fn get(
    api: &Arc<Api>,
    _request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let name = target.name.unwrap_or_default();
    let snapshot = api.store.snapshot();
    let (_, parent) = super::conversion::read_current(api, target, &snapshot, &target.key(name))
        .await?
        .ok_or_else(|| Status::not_found(&target.group_resource(), name))?;
    Ok(ApiResponse::json(200, &scale_of(target, &parent)))
}

pub(super) async fn update(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let options = WriteOptions::parse(request, None)?;
    let Decoded {
        object: mut body,
        warnings,
    } = decode(
        api,
        request,
        target,
        "Scale",
        "autoscaling/v1",
        options.field_validation,
    )?;
    check_type(&mut body, "autoscaling/v1", "Scale")?;
    let name = target.name.unwrap_or_default();
    let snapshot = api.store.snapshot();
    let (_, parent) = super::conversion::read_current(api, target, &snapshot, &target.key(name))
        .await?
        .ok_or_else(|| Status::not_found(&target.group_resource(), name))?;
    let owner = Ownership::of_request(request, &options, "scale");
    let caller = options.caller(request);
    let stored = apply_scale(api, target, parent, &body, options.dry_run, &owner, &caller).await?;
    let mut warnings = warnings;
    warnings.extend(caller.take_warnings());
    Ok(ApiResponse::object(200, stored).with_warnings(warnings))
}
