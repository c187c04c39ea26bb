//! POST: create (`handlers/create.go`, `registry/generic/registry/store.go` `Create`).

use std::sync::Arc;

use serde_json::Value;

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::options::WriteOptions;
use super::target::{check_type, Target};
use super::typed::TypedObject;
use super::write::admission::with_warnings;
use super::write::create::create_object;
use super::write::decode::{decode, Decoded};
use super::write::escalation::confirm_no_escalation;
use super::write::ownership::Ownership;
use super::write::validate::settle_namespace;
use crate::object;
use crate::status::Result;

pub(super) async fn create(
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
        target.resource.kind,
        &target.resource.api_version(),
        options.field_validation,
    )?;
    check_type(
        &mut body,
        &target.resource.api_version(),
        target.resource.kind,
    )?;
    settle_namespace(target, &mut body)?;
    confirm_no_escalation(api, request.user.as_ref(), target, &body)?;
    let owner = Ownership::of_request(request, &options, "");
    let caller = options.caller(request);
    let created = create_object(
        api,
        target,
        TypedObject::decoded_body(body),
        options.dry_run,
        &owner,
        &caller,
    )
    .await
    .map(|created| created_response(api, target, created, options.dry_run).with_warnings(warnings));
    with_warnings(created, &caller)
}

/// The 201 for a created object: the version the cache holds (its served
/// JSON and encodings, which every later read shares) when it is still the
/// current one, so the object is not serialized a second time; a dry run,
/// or a version already replaced by the time we look, answers from the
/// object itself. The two are the same bytes: the cache's JSON is the
/// stored bytes with `resourceVersion` spliced in.
fn created_response(api: &Api, target: &Target<'_>, created: Value, dry_run: bool) -> ApiResponse {
    if !dry_run {
        if let Ok(revision) = object::resource_version(&created).parse::<i64>() {
            let key = target.key(object::name(&created));
            if let Some(entry) = api.store.snapshot().get(&key) {
                if entry.mod_revision == revision && entry.object.corrupt_error().is_none() {
                    return ApiResponse::stored(201, entry.object.clone(), revision);
                }
            }
        }
    }
    ApiResponse::object(201, created)
}
