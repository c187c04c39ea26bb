//! PATCH (`handlers/patch.go`): the patch type (JSON patch, merge patch,
//! strategic merge patch; server-side apply is `apply.rs`) comes from the
//! Content-Type (`patch_type.rs`);
//! the patch applies to the current object (or its Scale), and the result
//! goes through the update path. A patch that does not set a resourceVersion
//! is retried on conflict, as kube's patcher does.

use std::sync::Arc;

use serde_json::Value;

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::options::WriteOptions;
use super::patch_type::{PatchType, PATCH_TYPES};
use super::target::{check_type, Target};
use super::typed::{Footprint, PatchWording, TypedObject};
use super::write::admission::with_warnings;
use super::write::escalation::confirm_no_escalation;
use super::write::ownership::Ownership;
use super::write::scale::{apply_scale, scale_of};
use super::write::update::update_object;
use super::write::validate::settle_namespace;
use crate::field_validation::{self, FieldValidation};
use crate::object;
use crate::patch::{json_patch, merge, strategic};
use crate::status::{FieldError, Result, Status};

const MAX_RETRIES: usize = 16;

fn apply_patch(
    api: &Api,
    target: &Target<'_>,
    kind: PatchType,
    base: &Value,
    patch: &Value,
) -> Result<Value> {
    match kind {
        PatchType::Apply => Err(Status::internal("apply is not a patch engine")),
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
            strategic::apply(base, patch, &context).map_err(|error| error.to_status())
        }
    }
}

/// The patched object, checked as kube decodes it into the typed object
/// (`jsonPatcher.applyPatchToCurrentObject`, `applyPatchToObject`).
fn typed_result(
    target: &Target<'_>,
    kind: PatchType,
    patch: &Value,
    patched: Value,
) -> Result<TypedObject> {
    let wording = match kind {
        PatchType::Strategic => PatchWording::Strategic,
        _ => PatchWording::Json,
    };
    let footprint = match kind {
        PatchType::Json => Footprint::of_json_patch(patch),
        _ => Footprint::Tree(patch),
    };
    TypedObject::patched(patched_kind(target), patched, &footprint, wording, || {
        crate::go::fmt::value_v(Some(patch))
    })
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

/// The kind a patch of this target decodes into.
fn patched_kind<'t>(target: &'t Target<'_>) -> (&'t str, &'t str, &'t str) {
    if target.subresource == Some("scale") {
        ("autoscaling", "v1", "Scale")
    } else {
        (
            target.resource.group,
            target.resource.version,
            target.resource.kind,
        )
    }
}

/// The typed decode of the patched object (`applyPatchToObject`,
/// `jsonPatcher.applyPatchToCurrentObject`): unknown fields are dropped;
/// with `Warn`/`Strict` they and the patch's duplicate fields are strict
/// errors: Strict → 422 Invalid on field `patch`, Warn → warnings.
fn settle_unknown_fields(
    api: &Api,
    target: &Target<'_>,
    kind: PatchType,
    level: FieldValidation,
    patch: &Value,
    patch_errors: &[String],
    patched: &mut Value,
) -> Result<Vec<String>> {
    let (group, version, object_kind) = patched_kind(target);
    let unknown =
        field_validation::drop_unknown_fields(&api.openapi, group, version, object_kind, patched);
    if !level.is_checked() {
        return Ok(Vec::new());
    }
    let mut errors = patch_errors.to_vec();
    errors.extend(unknown);
    if errors.is_empty() {
        return Ok(Vec::new());
    }
    if level == FieldValidation::Warn {
        return Ok(field_validation::warnings(&errors)
            .iter()
            .filter_map(|text| field_validation::warning_header_value(text))
            .collect());
    }
    // The value shown: Go's `%+v` of the patch map (strategic), or the
    // patched object's JSON (JSON and merge patches).
    let shown = match kind {
        PatchType::Strategic => crate::go::fmt::value_v(Some(patch)),
        _ => serde_json::to_string(patched).unwrap_or_default(),
    };
    let error = FieldError::invalid(
        "patch",
        &shown,
        field_validation::strict_patch_detail(&errors),
    );
    Err(Status::invalid("", "", "", &[error]))
}

/// A JSON, merge or strategic merge patch (`kind`; apply goes to
/// `apply.rs`).
pub(super) async fn patch(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
    kind: PatchType,
) -> Result<ApiResponse> {
    let options = WriteOptions::parse(request, Some(false))?;
    let (dry_run, level) = (options.dry_run, options.field_validation);
    let patch: Value = serde_json::from_slice(&request.body)
        .map_err(|error| Status::bad_request(format!("error decoding patch: {error}")))?;
    // Duplicate keys in the patch itself (`kjson.UnmarshalStrict` of the body).
    let patch_errors: Vec<String> = if level.is_checked() {
        field_validation::duplicate_fields(&request.body)
            .into_iter()
            .map(|error| match kind {
                PatchType::Json => format!("json patch {error}"),
                _ => error,
            })
            .collect()
    } else {
        Vec::new()
    };
    let owner = Ownership::of_request(request, &options, target.subresource.unwrap_or_default());
    let name = target.name.unwrap_or_default();
    let key = target.key(name);
    let conditional = sets_resource_version(kind, &patch);
    let caller = options.caller(request);
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let (_, current) = super::conversion::read_current(api, target, &snapshot, &key)
            .await?
            .ok_or_else(|| Status::not_found(&target.group_resource(), name))?;
        let mut warnings = Vec::new();
        let result = if target.subresource == Some("scale") {
            let base = scale_of(target, &current);
            let patched = apply_patch(api, target, kind, &base, &patch)?;
            let mut patched = typed_result(target, kind, &patch, patched)?;
            warnings = settle_unknown_fields(
                api,
                target,
                kind,
                level,
                &patch,
                &patch_errors,
                patched.value_mut(),
            )?;
            apply_scale(
                api,
                target,
                current,
                patched.value(),
                dry_run,
                &owner,
                &caller,
            )
            .await
        } else {
            let mut patched = apply_patch(api, target, kind, &current, &patch)?;
            if !patched.is_object() {
                return Err(Status::bad_request(
                    "the patched object is not a JSON object",
                ));
            }
            check_type(
                &mut patched,
                &target.resource.api_version(),
                target.resource.kind,
            )?;
            let mut patched = typed_result(target, kind, &patch, patched)?;
            if object::name(patched.value()) != name {
                return Err(Status::bad_request(format!(
                    "the name of the object ({}) does not match the name on the URL ({name})",
                    object::name(patched.value())
                )));
            }
            warnings.extend(settle_unknown_fields(
                api,
                target,
                kind,
                level,
                &patch,
                &patch_errors,
                patched.value_mut(),
            )?);
            settle_namespace(target, patched.value_mut())?;
            confirm_no_escalation(api, request.user.as_ref(), target, patched.value())?;
            update_object(api, target, patched, dry_run, &owner, &caller)
                .await
                .map(|(_, stored)| stored)
        };
        match result {
            Err(status) if status.code == 409 && status.reason == "Conflict" && !conditional => {
                continue
            }
            Err(status) => return with_warnings(Err(status), &caller),
            Ok(stored) => {
                let response = ApiResponse::object(200, stored).with_warnings(warnings);
                return with_warnings(Ok(response), &caller);
            }
        }
    }
    Err(Status::conflict(&target.group_resource(), name))
}
