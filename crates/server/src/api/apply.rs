//! Server-side apply
//! (`Content-Type: application/apply-patch+yaml`, `handlers/patch.go`
//! `applyPatcher`).

use std::sync::Arc;

use serde_json::Value;

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::options::WriteOptions;
use super::target::Target;
use super::typed::TypedObject;
use super::write;
use super::write::create::create_object;
use super::write::escalation::confirm_no_escalation;
use super::write::ownership::{field_manager, Ownership};
use super::write::scale::scale_of;
use super::write::update::update_object;
use super::write::validate::settle_namespace;
use crate::admission::{Caller, Operation};
use crate::field_validation::{self, FieldValidation};
use crate::fieldmanager::{self, path::PathElement, schema::Schema};
use crate::object;
use crate::status::{Result, Status};

const MAX_RETRIES: usize = 16;

/// PATCH with `application/apply-patch+yaml`: create the object when it is
/// missing, else apply; conflicts are 409 unless `force=true`.
pub(super) async fn apply(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let options = WriteOptions::parse(request, Some(true))?;
    let (dry_run, level) = (options.dry_run, options.field_validation);
    let force = options.force()?;
    let manager = options.field_manager.as_str();
    let (config, duplicates) = decode_config(request, level)?;
    let caller = options.caller(request);
    if target.subresource == Some("scale") {
        let stored = apply_scale(api, manager, target, dry_run, force, &config, &caller).await?;
        let mut warnings = yaml_warnings(level, duplicates.as_deref())?;
        warnings.extend(caller.take_warnings());
        return Ok(ApiResponse::object(200, stored).with_warnings(warnings));
    }
    if !config.is_object() {
        return Err(Status::bad_request(
            "error decoding YAML: the applied configuration is not an object",
        ));
    }
    let resource = target.resource;
    let api_version = resource.api_version();
    let subresource = target.subresource.unwrap_or("");
    let mut fm = field_manager(api, target, subresource);
    if subresource == "status" {
        // Through /status only the status is this applier's (`GetResetFields`),
        // and of a built-in kind the metadata its status strategy keeps
        // (`field_manager` resets the rest of it).
        let keeps_metadata = target.custom.is_none() && !resource.custom;
        if let Some(map) = config.as_object() {
            for key in map.keys() {
                if key != "status" && !(keeps_metadata && key == "metadata") {
                    fm.reset.insert(&[PathElement::Field(key.clone())]);
                }
            }
        }
    }
    fieldmanager::check_applied(&fm.schema, &api_version, resource.kind, &config)
        .map_err(|error| error.to_status())?;
    // kube's conversion of the merged object gives `null` list items and
    // map values their zero values; done on the configuration, where they
    // come from (it declares no unknown field: the check above refused them).
    let mut config = config;
    field_validation::drop_unknown_fields(
        &api.openapi,
        resource.group,
        resource.version,
        resource.kind,
        &mut config,
    );
    let name = target.name.unwrap_or_default();
    let key = target.key(name);
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let (revision, live) =
            match super::conversion::read_current(api, target, &snapshot, &key).await? {
                Some((revision, live)) => (Some(revision), live),
                None if subresource.is_empty() => (None, Value::Object(Default::default())),
                None => return Err(Status::not_found(&target.group_resource(), name)),
            };
        let mut applied = fm
            .apply_with_last_applied(
                &live,
                &config,
                manager,
                force,
                &crate::go::time::now_rfc3339(),
            )
            .map_err(|error| error.to_status())?;
        let applied_name = object::name(&applied).to_string();
        if applied_name.is_empty() {
            if let Some(metadata) = object::metadata_mut(&mut applied) {
                metadata.insert("name".into(), Value::String(name.to_string()));
            }
        } else if applied_name != name {
            return Err(Status::bad_request(format!(
                "the name of the object ({applied_name}) does not match the name on the URL ({name})"
            )));
        }
        settle_namespace(target, &mut applied)?;
        let owner = Ownership::Applied;
        let mut applied = TypedObject::applied(target, &config, applied)?;
        confirm_no_escalation(api, request.user.as_ref(), target, applied.value())?;
        let result = match revision {
            None => create_object(api, target, applied, dry_run, &owner, &caller)
                .await
                .map(|created| (201, created)),
            Some(revision) => {
                // The live revision is the precondition; a lost race retries.
                object::set_resource_version(applied.value_mut(), revision);
                update_object(api, target, applied, dry_run, &owner, &caller).await
            }
        };
        match result {
            Err(status) if status.code == 409 && status.reason == "Conflict" => continue,
            Err(status) => return Err(status),
            Ok((code, stored)) => {
                let mut warnings = yaml_warnings(level, duplicates.as_deref())?;
                warnings.extend(caller.take_warnings());
                let mut response = ApiResponse::object(code, stored).with_warnings(warnings);
                response.audit_annotations = caller.take_audit_annotations();
                return Ok(response);
            }
        }
    }
    Err(Status::conflict(&target.group_resource(), name))
}

/// Apply to `/scale` (kube's `ScaleHandler`): the Scale's `spec.replicas` is
/// applied to the parent's `spec.replicas`, owned by an Apply entry with
/// subresource `scale`.
async fn apply_scale(
    api: &Api,
    manager: &str,
    target: &Target<'_>,
    dry_run: bool,
    force: bool,
    config: &Value,
    caller: &Caller,
) -> Result<Value> {
    let scale_schema = Schema::for_kind(&api.openapi, "autoscaling", "v1", "Scale");
    fieldmanager::check_applied(&scale_schema, "autoscaling/v1", "Scale", config)
        .map_err(|error| error.to_status())?;
    let resource = target.resource;
    let mut parent_config = serde_json::json!({
        "apiVersion": resource.api_version(),
        "kind": resource.kind,
        "metadata": {"name": target.name.unwrap_or_default()},
    });
    if let Some(replicas) = config.pointer("/spec/replicas") {
        parent_config["spec"] = serde_json::json!({"replicas": replicas});
    }
    let fm = field_manager(api, target, "scale");
    let name = target.name.unwrap_or_default();
    let parent_target = target.parent();
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let (revision, live) =
            super::conversion::read_current(api, target, &snapshot, &target.key(name))
                .await?
                .ok_or_else(|| Status::not_found(&target.group_resource(), name))?;
        let mut applied = fm
            .apply(
                &live,
                &parent_config,
                manager,
                force,
                &crate::go::time::now_rfc3339(),
            )
            .map_err(|error| error.to_status())?;
        object::set_resource_version(&mut applied, revision);
        let owner = Ownership::Applied;
        // Admission sees the Scale before and after (its mutations of the
        // Scale are not carried back into the applied parent).
        let (old_scale, mut new_scale) = (scale_of(target, &live), scale_of(target, &applied));
        write::admission::mutate(
            api,
            target,
            Operation::Update,
            Some(&mut new_scale),
            Some(&old_scale),
            caller,
        )
        .await?;
        write::admission::validate(
            api,
            target,
            Operation::Update,
            Some(&new_scale),
            Some(&old_scale),
            caller,
        )
        .await?;
        let applied = TypedObject::applied(&parent_target, &parent_config, applied)?;
        let admitted = caller.already_admitted();
        let result = update_object(api, &parent_target, applied, dry_run, &owner, &admitted).await;
        for warning in admitted.take_warnings() {
            caller.warn(warning);
        }
        match result {
            Err(status) if status.code == 409 && status.reason == "Conflict" => continue,
            Err(status) => return Err(status),
            Ok((_, stored)) => return Ok(scale_of(target, &stored)),
        }
    }
    Err(Status::conflict(&target.group_resource(), name))
}

/// The applied configuration, and when the level checks them, the
/// duplicate-key error of kube's strict decoding (reported after the apply
/// by [`yaml_warnings`]). The body is parsed once: the strict conversion
/// gives the same value as the normal one when no key repeats (the only
/// difference between the two), so the normal one runs only when it does
/// or when the body does not convert at all (for its exact error).
fn decode_config(request: &ApiRequest, level: FieldValidation) -> Result<(Value, Option<String>)> {
    let mut duplicates = None;
    if level.is_checked() {
        match crate::yaml::yaml_to_json_strict(&request.body) {
            Ok(config) => return Ok((config, None)),
            Err(error) if error.detail().starts_with("yaml: unmarshal errors:\n") => {
                duplicates = Some(error.message().to_string());
            }
            Err(_) => {}
        }
    }
    let config = crate::yaml::yaml_to_json(&request.body)
        .map_err(|error| Status::bad_request(format!("error decoding YAML: {error}")))?;
    Ok((config, duplicates))
}

/// After the apply, kube strict-decodes the YAML body for duplicate keys
/// (`yaml.UnmarshalStrict`): Strict → 400, Warn → warnings.
fn yaml_warnings(level: FieldValidation, duplicates: Option<&str>) -> Result<Vec<String>> {
    if !level.is_checked() {
        return Ok(Vec::new());
    }
    let Some(error) = duplicates else {
        return Ok(Vec::new());
    };
    if level == FieldValidation::Strict {
        return Err(Status::bad_request(format!(
            "error strict decoding YAML: {error}"
        )));
    }
    Ok(field_validation::warnings(&[error.to_string()])
        .iter()
        .filter_map(|text| field_validation::warning_header_value(text))
        .collect())
}
