//! The create pipeline (`registry/generic/registry/store.go` `Create`):
//! admission, system metadata, strategy and defaults, validation,
//! ownership, commit.

use ferrokube_store::{BackendError, Expect, Op, StoreError, Txn};
use serde_json::Value;

use super::admission;
use super::ownership::{keep_valid_managed_fields, managed_fields, record_create, Ownership};
use super::{commit, validate};
use crate::admission::{Caller, Operation};
use crate::api::context::Api;
use crate::api::csr_strategy;
use crate::api::strategy;
use crate::api::target::Target;
use crate::api::typed::TypedObject;
use crate::object;
use crate::status::{Result, Status};

/// Fill system metadata, validate and store a new object; returns it as stored.
pub async fn create_object(
    api: &Api,
    target: &Target<'_>,
    body: TypedObject,
    dry_run: bool,
    owner: &Ownership,
    caller: &Caller,
) -> Result<Value> {
    let mut body = body.into_value();
    // kube defaults at decoding (`versioning.NewDefaultingCodecForScheme`):
    // admission plugins and webhooks see the defaulted object, and a
    // webhook's JSON patch may `replace` a defaulted field. A named
    // Namespace's name label is a default too (`SetDefaults_Namespace`),
    // and a Secret's `stringData` is gone once converted to the internal
    // version.
    crate::defaults::apply(target.resource, &mut body);
    if !object::name(&body).is_empty() {
        strategy::namespace_name_label(target.resource, &mut body);
    }
    strategy::fold_secret_string_data(target.resource, &mut body);
    // The field manager records the request's fields now, before mutating
    // admission (`handlers/create.go`): what admission plugins, webhooks,
    // the strategy and the allocators add is nobody's.
    record_create(api, target, &mut body, owner);
    let recorded = managed_fields(&body).cloned();
    // Mutating admission: before validation and name generation.
    admission::mutate(
        api,
        target,
        Operation::Create,
        Some(&mut body),
        None,
        caller,
    )
    .await?;
    keep_valid_managed_fields(&mut body, recorded, caller);
    if !body.is_object() {
        return Err(Status::internal("admission left no object to create"));
    }
    let errors = validate::validate_meta(target, &body, true);
    if !errors.is_empty() {
        return Err(validate::invalid(target, &body, &errors));
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
            Value::String(crate::uid::new_v4().to_string()),
        );
        metadata.insert(
            "creationTimestamp".into(),
            Value::String(crate::go::time::now_rfc3339()),
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
    // `applyAppArmorVersionSkew` adds its warnings as it syncs (`warning.AddWarning`).
    warn(
        caller,
        strategy::prepare_for_create(target.resource, &mut body),
    );
    if csr_strategy::is_certificate_signing_request(target.resource) {
        csr_strategy::prepare_for_create(&mut body, caller.user.as_ref());
    }
    strategy::namespace_name_label(target.resource, &mut body);
    // Again after admission, as kube's mutating webhook dispatcher defaults
    // each patched object (and what the plugins added is defaulted).
    crate::defaults::apply(target.resource, &mut body);
    crate::crd::default_and_prune(target.custom.as_deref(), &mut body);
    let _allocation =
        crate::allocator::on_create(&api.services, &api.store, target.resource, &mut body)?;
    validate::normalize(api, target, &mut body)?;
    let mut errors = validate::stored_rules(api, target, &body, None);
    errors.extend(validate::kind_rules(target, &body, None));
    if !errors.is_empty() {
        return Err(validate::invalid(target, &body, &errors));
    }
    // rest.BeforeCreate: the strategy's warnings, after validation.
    warn(caller, strategy::warnings_on_create(target.resource, &body));
    let key = target.key(&name);
    // The stored bytes, when they are the object's own JSON, are encoded
    // now: validating webhooks are sent the same bytes.
    let own_json = if dry_run {
        None
    } else {
        commit::own_json_bytes(target, &key, &body)
    };
    let object_json = own_json.as_ref().and_then(|bytes| bytes.as_deref().ok());
    // Validating admission (`rest.AdmissionToValidateObjectFunc` in `Store.Create`).
    admission::validate_encoded(
        api,
        target,
        Operation::Create,
        (Some(&body), object_json),
        None,
        caller,
    )
    .await?;
    if dry_run {
        return Ok(body);
    }
    let value = match own_json {
        Some(bytes) => bytes?,
        None => commit::stored_bytes(api, target, &key, &body).await?,
    };
    let txn = Txn::single(Op::Put {
        key,
        value,
        expect: Expect::Absent,
    });
    match commit::commit(api, txn).await {
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
        Err(other) => Err(commit::map_store_error(target, &name, other)),
    }
}

/// Adds a strategy's warnings as `Warning` headers (`warning.AddWarning`).
pub(super) fn warn(caller: &Caller, warnings: Vec<String>) {
    for warning in warnings {
        if let Some(header) = crate::field_validation::warning_header_value(&warning) {
            caller.warn(header);
        }
    }
}
