//! PUT: update, of the main resource or its `status` (`handlers/update.go`,
//! `Store.Update` with `GuaranteedUpdate`'s optimistic retry).

use std::sync::Arc;

use ferrokube_store::{BackendError, Expect, Op, StoreError, Txn};
use serde_json::Value;

use super::create::create_object;
use super::resource::{check_type, read_current, require_namespace, Target};
use super::typed::TypedObject;
use super::{strategy, write, Api, ApiRequest, ApiResponse};
use crate::object;
use crate::status::{FieldError, Result, Status};

/// How often an unconditional update retries after losing a race.
const MAX_RETRIES: usize = 16;

pub(super) async fn update(
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
        "UpdateOptions",
    )?;
    check_type(
        &mut body,
        &target.resource.api_version(),
        target.resource.kind,
    )?;
    let dry_run = write::dry_run(request)?;
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
    write::settle_namespace(target, &mut body)?;
    let owner =
        super::apply::Ownership::of_request(request, target.subresource.unwrap_or_default());
    let (code, object) = update_object(
        api,
        target,
        TypedObject::decoded_body(body),
        dry_run,
        &owner,
    )
    .await?;
    Ok(ApiResponse::object(code, object).with_warnings(warnings))
}

/// Returns the HTTP code (200, or 201 for create-on-update) and the stored object.
pub(super) async fn update_object(
    api: &Api,
    target: &Target<'_>,
    body: TypedObject,
    dry_run: bool,
    owner: &super::apply::Ownership,
) -> Result<(u16, Value)> {
    let name = object::name(body.value()).to_string();
    let key = target.key(&name);
    let precondition = object::resource_version(body.value()).to_string();
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let Some((current_revision, old)) = read_current(&snapshot, &key)? else {
            if target.resource.create_on_update && target.subresource.is_none() {
                require_namespace(api, target)?;
                if !precondition.is_empty() {
                    // A resourceVersion on a missing object cannot be met.
                    return Err(Status::not_found(&target.group_resource(), &name));
                }
                return create_object(api, target, body, dry_run, owner)
                    .await
                    .map(|created| (201, created));
            }
            return Err(Status::not_found(&target.group_resource(), &name));
        };
        if !precondition.is_empty() && precondition != current_revision.to_string() {
            return Err(Status::conflict(&target.group_resource(), &name));
        }
        let mut new = body.value().clone();
        strategy::fold_secret_string_data(target.resource, &mut new);
        let spec_changed =
            strategy::prepare_for_update(target.resource, target.subresource, &old, &mut new);
        keep_system_metadata(target, &old, &mut new, spec_changed)?;
        strategy::namespace_name_label(target.resource, &mut new);
        if target.subresource.is_none() {
            crate::defaults::apply(target.resource, &mut new);
        }
        write::normalize(api, target, &mut new)?;
        let _allocation = crate::allocator::on_update(
            &api.services,
            &api.store,
            target.resource,
            target.subresource,
            &old,
            &mut new,
        )?;
        let mut errors = write::validate_meta(target, &new, false);
        if target.subresource == Some("finalize") {
            errors.extend(super::deletion::namespace::finalize_errors(&new));
        }
        if !errors.is_empty() {
            return Err(write::invalid(target, &new, &errors));
        }
        if super::deletion::update_rules::should_delete_during_update(target.resource, &old, &new) {
            // Store.Update's deleteWithoutFinalizers: the update that removes the
            // last finalizer deletes instead; the answer is the updated object.
            object::set_resource_version(&mut new, current_revision);
            if dry_run {
                return Ok((200, new));
            }
            let txn = Txn::single(Op::Delete {
                key: key.clone(),
                expect: Expect::ModRevision(current_revision),
            });
            match write::commit(api, txn).await {
                Ok(_) => return Ok((200, new)),
                Err(StoreError::Backend(BackendError::PreconditionFailed { .. }))
                    if precondition.is_empty() =>
                {
                    continue
                }
                Err(StoreError::Backend(BackendError::PreconditionFailed { .. })) => {
                    return Err(Status::conflict(&target.group_resource(), &name))
                }
                Err(other) => return Err(write::map_store_error(target, &name, other)),
            }
        }
        super::apply::record_update(api, target, &old, &mut new, owner);
        // `new` at the live revision equal to `old`? (Compared in place: a
        // clone of the whole object per write showed in profiles.)
        let revision = Value::String(current_revision.to_string());
        if super::apply::equal_with_metadata(&new, &old, &[("resourceVersion", Some(&revision))]) {
            // GuaranteedUpdate skips a write that changes nothing.
            return Ok((200, old));
        }
        if dry_run {
            object::set_resource_version(&mut new, current_revision);
            return Ok((200, new));
        }
        let txn = Txn::single(Op::Put {
            key: key.clone(),
            value: write::stored_bytes(&key, &new)?,
            expect: Expect::ModRevision(current_revision),
        });
        match write::commit(api, txn).await {
            Ok(committed) => {
                object::set_resource_version(&mut new, committed.revision);
                return Ok((200, new));
            }
            Err(StoreError::Backend(BackendError::PreconditionFailed { .. }))
                if precondition.is_empty() =>
            {
                continue
            }
            Err(StoreError::Backend(BackendError::PreconditionFailed { .. })) => {
                return Err(Status::conflict(&target.group_resource(), &name))
            }
            Err(other) => return Err(write::map_store_error(target, &name, other)),
        }
    }
    Err(Status::conflict(&target.group_resource(), &name))
}

/// `rest.BeforeUpdate` and `ValidateObjectMetaUpdate`: uid and creationTimestamp
/// are the old ones (a different uid is 422), generation moves with the spec.
fn keep_system_metadata(
    target: &Target<'_>,
    old: &Value,
    new: &mut Value,
    spec_changed: bool,
) -> Result<()> {
    let old_uid = object::meta_str(old, "uid").to_string();
    let new_uid = object::meta_str(new, "uid").to_string();
    if !new_uid.is_empty() && new_uid != old_uid {
        let error = FieldError::invalid("metadata.uid", &new_uid, "field is immutable");
        return Err(write::invalid(target, new, &[error]));
    }
    // Deletion fields: kept from the old object; finalizers only removed while deleting.
    let deletion_errors = super::deletion::update_rules::settle_deletion_fields(old, new);
    if !deletion_errors.is_empty() {
        return Err(write::invalid(target, new, &deletion_errors));
    }
    let old_metadata = object::metadata(old).cloned().unwrap_or_default();
    let Some(metadata) = object::metadata_mut(new) else {
        return Ok(());
    };
    for field in ["uid", "creationTimestamp"] {
        match old_metadata.get(field) {
            Some(value) => metadata.insert(field.into(), value.clone()),
            None => metadata.remove(field),
        };
    }
    metadata.remove("resourceVersion");
    metadata.remove("selfLink");
    if target.resource.has_generation {
        let old_generation = old_metadata
            .get("generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let generation = if spec_changed {
            old_generation + 1
        } else {
            old_generation
        };
        metadata.insert("generation".into(), Value::from(generation));
    } else if let Some(generation) = old_metadata.get("generation") {
        metadata.insert("generation".into(), generation.clone());
    }
    Ok(())
}
