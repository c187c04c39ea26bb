//! PUT: update, of the main resource or its `status` (`handlers/update.go`,
//! `Store.Update` with `GuaranteedUpdate`'s optimistic retry).

use std::sync::Arc;

use serde_json::Value;

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::options::WriteOptions;
use super::target::{check_type, Target};
use super::typed::TypedObject;
use super::write::admission::with_warnings;
use super::write::decode::{decode, Decoded};
use super::write::escalation::confirm_no_escalation;
use super::write::ownership::Ownership;
use super::write::update::update_object;
use super::write::validate::settle_namespace;
use crate::object;
use crate::status::{Result, Status};

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
        target.resource.kind,
        &target.resource.api_version(),
        options.field_validation,
    )?;
    check_type(
        &mut body,
        &target.resource.api_version(),
        target.resource.kind,
    )?;
    let name = target.name.unwrap_or_default();
    let body_name = object::name(&body);
    if body_name.is_empty() {
        if let Some(metadata) = object::metadata_mut(&mut body) {
            metadata.insert("name".into(), Value::String(name.to_string()));
        }
    } else if body_name != name {
        return Err(Status::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    settle_namespace(target, &mut body)?;
    confirm_no_escalation(api, request.user.as_ref(), target, &body)?;
    let owner = Ownership::of_request(request, &options, target.subresource.unwrap_or_default());
    let caller = options.caller(request);
    let updated = update_object(
        api,
        target,
        TypedObject::decoded_body(body),
        options.dry_run,
        &owner,
        &caller,
    )
    .await
    .map(|(code, object)| ApiResponse::object(code, object).with_warnings(warnings));
    with_warnings(updated, &caller)
}
