//! PATCH (`handlers/patch.go`): the patch type (JSON patch, merge patch,
//! strategic merge patch) comes from the Content-Type;
//! the patch applies to the current object (or its Scale), and the result
//! goes through the update path. A patch that does not set a resourceVersion
//! is retried on conflict, as kube's patcher does.

use std::sync::Arc;

use serde_json::Value;

use super::resource::{read_current, Target};
use super::scale::{apply_scale, scale_of};
use super::update::update_object;
use super::{write, Api, ApiRequest, ApiResponse};
use crate::object;
use crate::patch::{json_patch, merge, strategic};
use crate::status::{Result, Status};

const MAX_RETRIES: usize = 16;

/// The patch types kube-apiserver names in its 415 answer.
const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
    "application/strategic-merge-patch+json",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatchType {
    Json,
    Merge,
    Strategic,
}

fn patch_type(request: &ApiRequest) -> Result<PatchType> {
    let content_type = request.header("content-type").unwrap_or("");
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match media.as_str() {
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
        _ => Err(Status::unsupported_media_type(&media, PATCH_TYPES)),
    }
}

fn apply_patch(
    api: &Api,
    target: &Target<'_>,
    kind: PatchType,
    base: &Value,
    patch: &Value,
) -> Result<Value> {
    match kind {
        PatchType::Merge => {
            merge::apply(base, patch).map_err(|error| Status::bad_request(error.to_string()))
        }
        PatchType::Json => {
            json_patch::apply(base, patch).map_err(|error| match error.http_code() {
                400 => Status::bad_request(error.to_string()),
                413 => Status {
                    code: 413,
                    reason: "RequestEntityTooLarge",
                    message: error.to_string(),
                    details: None,
                },
                _ => Status {
                    code: 422,
                    reason: "Invalid",
                    message: error.to_string(),
                    details: None,
                },
            })
        }
        PatchType::Strategic => {
            let (group, version, kind) = if target.subresource == Some("scale") {
                ("autoscaling", "v1", "Scale")
            } else {
                (
                    target.resource.group,
                    target.resource.version,
                    target.resource.kind,
                )
            };
            let context = strategic::SchemaContext::for_kind(&api.openapi, group, version, kind)
                .map_err(Status::internal)?
                .ok_or_else(|| {
                    Status::unsupported_media_type(
                        "application/strategic-merge-patch+json",
                        PATCH_TYPES,
                    )
                })?;
            let mut patched =
                strategic::apply(base, patch, &context).map_err(|error| error.to_status())?;
            // The typed decode after the merge drops fields the schema does not know.
            crate::field_validation::drop_unknown_fields(
                &api.openapi,
                group,
                version,
                kind,
                &mut patched,
            );
            Ok(patched)
        }
    }
}

/// Whether the patch itself names a resourceVersion (then it is a precondition, never retried).
fn sets_resource_version(kind: PatchType, patch: &Value) -> bool {
    match kind {
        PatchType::Json => patch.as_array().is_some_and(|operations| {
            operations.iter().any(|operation| {
                operation.get("path").and_then(Value::as_str) == Some("/metadata/resourceVersion")
            })
        }),
        _ => patch.pointer("/metadata/resourceVersion").is_some(),
    }
}

pub(super) async fn patch(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let kind = patch_type(request)?;
    let dry_run = write::dry_run(request)?;
    let patch: Value = serde_json::from_slice(&request.body)
        .map_err(|error| Status::bad_request(format!("error decoding patch: {error}")))?;
    let name = target.name.unwrap_or_default();
    let key = target.key(name);
    let conditional = sets_resource_version(kind, &patch);
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let (_, current) = read_current(&snapshot, &key)?
            .ok_or_else(|| Status::not_found(&target.group_resource(), name))?;
        let result = if target.subresource == Some("scale") {
            let base = scale_of(target, &current);
            let patched = apply_patch(api, target, kind, &base, &patch)?;
            apply_scale(api, target, current, &patched, dry_run).await
        } else {
            let patched = apply_patch(api, target, kind, &current, &patch)?;
            if !patched.is_object() {
                return Err(Status::bad_request(
                    "the patched object is not a JSON object",
                ));
            }
            let mut patched = patched;
            super::resource::check_type(
                &mut patched,
                &target.resource.api_version(),
                target.resource.kind,
            )?;
            if object::name(&patched) != name {
                return Err(Status::bad_request(format!(
                    "the name of the object ({}) does not match the name on the URL ({name})",
                    object::name(&patched)
                )));
            }
            write::settle_namespace(target, &mut patched)?;
            update_object(api, target, patched, dry_run)
                .await
                .map(|(_, stored)| stored)
        };
        match result {
            Err(status) if status.code == 409 && status.reason == "Conflict" && !conditional => {
                continue
            }
            Err(status) => return Err(status),
            Ok(stored) => return Ok(ApiResponse::json(200, &stored)),
        }
    }
    Err(Status::conflict(&target.group_resource(), name))
}
