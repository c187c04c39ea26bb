//! POST: create (`handlers/create.go`, `registry/generic/registry/store.go` `Create`).

use std::sync::Arc;

use ferrokube_store::{BackendError, Expect, Op, StoreError, Txn};
use serde_json::Value;

use super::resource::{check_type, require_namespace, Target};
use super::typed::TypedObject;
use super::{strategy, write, Api, ApiRequest, ApiResponse};
use crate::object;
use crate::status::{Result, Status};

pub(super) async fn create(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    write::validate_options(request, None)?;
    let super::body::Decoded {
        object: mut body,
        warnings,
    } = super::body::decode(
        api,
        request,
        target,
        target.resource.kind,
        &target.resource.api_version(),
        "CreateOptions",
    )?;
    check_type(
        &mut body,
        &target.resource.api_version(),
        target.resource.kind,
    )?;
    let dry_run = write::dry_run(request)?;
    write::settle_namespace(target, &mut body)?;
    require_namespace(api, target)?;
    let owner = super::apply::Ownership::of_request(request, "");
    let created = create_object(
        api,
        target,
        TypedObject::decoded_body(body),
        dry_run,
        &owner,
    )
    .await?;
    Ok(created_response(api, target, created, dry_run).with_warnings(warnings))
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

/// Fill system metadata, validate and store a new object; returns it as stored.
pub(super) async fn create_object(
    api: &Api,
    target: &Target<'_>,
    body: TypedObject,
    dry_run: bool,
    owner: &super::apply::Ownership,
) -> Result<Value> {
    let mut body = body.into_value();
    // NamespaceLifecycle admission: before validation and name generation.
    super::deletion::namespace::refuse_new_content(api, target, object::name(&body))?;
    let errors = write::validate_meta(target, &body, true);
    if !errors.is_empty() {
        return Err(write::invalid(target, &body, &errors));
    }
    if object::name(&body).is_empty() {
        let generated = crate::names::generate(object::meta_str(&body, "generateName"));
        if let Some(metadata) = object::metadata_mut(&mut body) {
            metadata.insert("name".into(), Value::String(generated));
        }
    }
    let name = object::name(&body).to_string();
    if let Some(metadata) = object::metadata_mut(&mut body) {
        // rest.BeforeCreate / FillObjectMetaSystemFields.
        metadata.insert(
            "uid".into(),
            Value::String(uuid::Uuid::new_v4().to_string()),
        );
        metadata.insert(
            "creationTimestamp".into(),
            Value::String(object::now_rfc3339()),
        );
        for system in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            metadata.remove(system);
        }
    }
    strategy::fold_secret_string_data(target.resource, &mut body);
    strategy::prepare_for_create(target.resource, &mut body);
    strategy::namespace_name_label(target.resource, &mut body);
    crate::defaults::apply(target.resource, &mut body);
    let _allocation =
        crate::allocator::on_create(&api.services, &api.store, target.resource, &mut body)?;
    write::normalize(api, target, &mut body)?;
    super::apply::record_create(api, target, &mut body, owner);
    if dry_run {
        return Ok(body);
    }
    let key = target.key(&name);
    let value = write::stored_bytes(&key, &body)?;
    let txn = Txn::single(Op::Put {
        key,
        value,
        expect: Expect::Absent,
    });
    match write::commit(api, txn).await {
        Ok(committed) => {
            object::set_resource_version(&mut body, committed.revision);
            Ok(body)
        }
        Err(StoreError::Backend(BackendError::PreconditionFailed { .. })) => {
            let mut status = Status::already_exists(&target.group_resource(), &name);
            // Store.create: say so when the existing object is on its way out.
            let snapshot = api.store.snapshot();
            let deleting = snapshot
                .get(&target.key(&name))
                .and_then(|entry| entry.object.value())
                .is_some_and(|existing| {
                    object::metadata(&existing)
                        .is_some_and(|meta| meta.contains_key("deletionTimestamp"))
                });
            if deleting {
                status.message = format!("object is being deleted: {}", status.message);
            }
            Err(status)
        }
        Err(other) => Err(write::map_store_error(target, &name, other)),
    }
}
