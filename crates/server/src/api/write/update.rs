//! The update pipeline (`Store.Update` with `GuaranteedUpdate`'s optimistic
//! retry): read the current object, decoding's defaults, ownership,
//! mutating admission, strategy and defaults, system metadata kept,
//! validation, validating admission, and a commit conditional on the
//! revision read; a missing object is created where the kind allows it.

use ferrokube_store::{BackendError, Expect, Op, StoreError, Txn};
use serde_json::Value;

use super::admission;
use super::create::create_object;
use super::ownership::{
    equal_with_metadata, keep_valid_managed_fields, managed_fields, record_update, settle_update,
    Ownership,
};
use super::{commit, validate};
use crate::admission::{Caller, Operation};
use crate::api::context::Api;
use crate::api::csr_strategy;
use crate::api::deletion;
use crate::api::strategy;
use crate::api::target::Target;
use crate::api::typed::TypedObject;
use crate::object;
use crate::status::{FieldError, Result, Status};

/// How often an unconditional update retries after losing a race.
const MAX_RETRIES: usize = 16;

/// Returns the HTTP code (200, or 201 for create-on-update) and the stored object.
pub async fn update_object(
    api: &Api,
    target: &Target<'_>,
    body: TypedObject,
    dry_run: bool,
    owner: &Ownership,
    caller: &Caller,
) -> Result<(u16, Value)> {
    let name = object::name(body.value()).to_string();
    let key = target.key(&name);
    let precondition = object::resource_version(body.value()).to_string();
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let Some((current_revision, old)) =
            crate::api::conversion::read_current(api, target, &snapshot, &key).await?
        else {
            if target.resource.create_on_update && target.subresource.is_none() {
                if !precondition.is_empty() {
                    // A resourceVersion on a missing object cannot be met.
                    return Err(Status::not_found(&target.group_resource(), &name));
                }
                // Admitted as a create (`updateToCreateOptions`) by create_object.
                return create_object(api, target, body, dry_run, owner, caller)
                    .await
                    .map(|created| (201, created));
            }
            return Err(Status::not_found(&target.group_resource(), &name));
        };
        if !precondition.is_empty() && precondition != current_revision.to_string() {
            return Err(Status::conflict(&target.group_resource(), &name));
        }
        let mut new = body.value().clone();
        // kube defaults at decoding: what `pods/ephemeralcontainers` adds
        // and `pods/resize` changes is defaulted as the main resource's
        // writes are. Admission sees the defaulted object (and defaults
        // again below, as kube's mutating webhook dispatcher does).
        let defaulted = matches!(
            target.subresource,
            None | Some("ephemeralcontainers" | "resize")
        );
        if defaulted {
            crate::defaults::apply(target.resource, &mut new);
        }
        // Decoding: quantities in their canonical form (a bad one is the
        // decoder's 400, before admission), a Secret's `stringData` folded
        // into `data`, a Namespace's name label defaulted.
        validate::normalize(api, target, &mut new)?;
        strategy::fold_secret_string_data(target.resource, &mut new);
        strategy::namespace_name_label(target.resource, &mut new);
        let now = crate::go::time::now_rfc3339();
        record_update(api, target, &old, &mut new, owner, |prepared| {
            prepare_for_update(target, &old, prepared, &now);
        });
        let recorded = managed_fields(&new).cloned();
        // Mutating admission, inside the retry as kube's `UpdatedObject`
        // transformers run on each attempt.
        admission::mutate(
            api,
            target,
            Operation::Update,
            Some(&mut new),
            Some(&old),
            caller,
        )
        .await?;
        if !new.is_object() {
            return Err(Status::internal("admission left no object to update"));
        }
        let entries = keep_valid_managed_fields(&mut new, recorded, caller);
        // Decoding defaults and prunes a custom resource before the strategy
        // compares it with the stored one.
        crate::crd::default_and_prune(target.custom.as_deref(), &mut new);
        strategy::fold_secret_string_data(target.resource, &mut new);
        let spec_changed = prepare_for_update(target, &old, &mut new, &now);
        keep_system_metadata(target, &old, &mut new, spec_changed)?;
        strategy::namespace_name_label(target.resource, &mut new);
        if defaulted {
            crate::defaults::apply(target.resource, &mut new);
        }
        validate::normalize(api, target, &mut new)?;
        if target.subresource.is_none() {
            // Quantities are canonical now, as the stored object's are.
            strategy::settle_template_generation(target.resource, &old, &mut new);
        }
        if spec_changed && !strategy::generation_changes(target.resource, &old, &new) {
            // Only the undefaulted or non-canonical spelling differed.
            keep_generation(target, &old, &mut new);
        }
        let _allocation = crate::allocator::on_update(
            &api.services,
            &api.store,
            target.resource,
            target.subresource,
            &old,
            &mut new,
        )?;
        let mut errors = validate::stored_rules(api, target, &new, Some(&old));
        errors.extend(validate::validate_meta(target, &new, false));
        // A namespace's `/finalize` is validated there too
        // (`ValidateNamespaceFinalizeUpdate`).
        errors.extend(validate::kind_rules(target, &new, Some(&old)));
        if !errors.is_empty() {
            return Err(validate::invalid(target, &new, &errors));
        }
        // rest.BeforeUpdate: the strategy's warnings, after validation.
        if target.subresource.is_none() {
            super::create::warn(
                caller,
                strategy::warnings_on_update(target.resource, &old, &new),
            );
        }
        if deletion::update_rules::should_delete_during_update(target.resource, &old, &new) {
            // Store.Update's deleteWithoutFinalizers: the update that removes the
            // last finalizer deletes instead; the answer is the updated object.
            admission::validate(
                api,
                target,
                Operation::Update,
                Some(&new),
                Some(&old),
                caller,
            )
            .await?;
            object::set_resource_version(&mut new, current_revision);
            if dry_run {
                return Ok((200, new));
            }
            let txn = Txn::single(Op::Delete {
                key: key.clone(),
                expect: Expect::ModRevision(current_revision),
            });
            match commit::commit(api, txn).await {
                Ok(_) => return Ok((200, new)),
                Err(StoreError::Backend(BackendError::PreconditionFailed { .. }))
                    if precondition.is_empty() =>
                {
                    continue
                }
                Err(StoreError::Backend(BackendError::PreconditionFailed { .. })) => {
                    return Err(Status::conflict(&target.group_resource(), &name))
                }
                Err(other) => return Err(commit::map_store_error(target, &name, other)),
            }
        }
        settle_update(&old, &mut new, entries);
        // `new` at the live revision equal to `old`? (Compared in place: a
        // clone of the whole object per write showed in profiles.)
        let revision = Value::String(current_revision.to_string());
        let unchanged = equal_with_metadata(&new, &old, &[("resourceVersion", Some(&revision))])
            && !api.store.backend().is_stale(&key);
        // The stored bytes of a write, when they are the object's own JSON,
        // are encoded now: validating webhooks are sent the same bytes.
        let own_json = if dry_run || unchanged {
            None
        } else {
            commit::own_json_bytes(target, &key, &new)
        };
        let object_json = own_json.as_ref().and_then(|bytes| bytes.as_deref().ok());
        // Validating admission (`updateValidation` in `Store.Update`), also
        // for an update that turns out to change nothing.
        admission::validate_encoded(
            api,
            target,
            Operation::Update,
            (Some(&new), object_json),
            Some(&old),
            caller,
        )
        .await?;
        if unchanged {
            // GuaranteedUpdate skips a write that changes nothing, unless
            // the stored value is stale (encrypted with an older key).
            return Ok((200, old));
        }
        if dry_run {
            object::set_resource_version(&mut new, current_revision);
            return Ok((200, new));
        }
        let value = match own_json {
            Some(bytes) => bytes?,
            None => commit::stored_bytes(api, target, &key, &new).await?,
        };
        let txn = Txn::single(Op::Put {
            key: key.clone(),
            value,
            expect: Expect::ModRevision(current_revision),
        });
        match commit::commit(api, txn).await {
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
            Err(other) => return Err(commit::map_store_error(target, &name, other)),
        }
    }
    Err(Status::conflict(&target.group_resource(), &name))
}

/// The strategy's `PrepareForUpdate` (a CertificateSigningRequest's own);
/// whether the spec changed (the generation moves).
fn prepare_for_update(target: &Target<'_>, old: &Value, new: &mut Value, now: &str) -> bool {
    if csr_strategy::is_certificate_signing_request(target.resource) {
        csr_strategy::prepare_for_update(target.subresource, old, new, now);
        false
    } else {
        strategy::prepare_for_update(target.resource, target.subresource, old, new)
    }
}

/// The old object's generation (as [`keep_system_metadata`] reads it), for
/// an update that changed nothing kube would see once decoded.
fn keep_generation(target: &Target<'_>, old: &Value, new: &mut Value) {
    if !target.resource.has_generation {
        return;
    }
    let generation = object::metadata(old)
        .and_then(|metadata| metadata.get("generation"))
        .and_then(Value::as_i64)
        .unwrap_or(1);
    if let Some(metadata) = object::metadata_mut(new) {
        metadata.insert("generation".into(), Value::from(generation));
    }
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
        return Err(validate::invalid(target, new, &[error]));
    }
    // Deletion fields: kept from the old object; finalizers only removed while deleting.
    let deletion_errors = deletion::update_rules::settle_deletion_fields(old, new);
    if !deletion_errors.is_empty() {
        return Err(validate::invalid(target, new, &deletion_errors));
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
