//! Field ownership on every write, and server-side apply
//! (`Content-Type: application/apply-patch+yaml`, `handlers/patch.go`
//! `applyPatcher`): the glue between the handlers and `crate::fieldmanager`.

use std::sync::Arc;

use serde_json::Value;

use super::create::create_object;
use super::resource::{read_current, require_namespace, Target};
use super::typed::TypedObject;
use super::update::update_object;
use super::{write, Api, ApiRequest, ApiResponse};
use crate::field_validation::{self, FieldValidation};
use crate::fieldmanager::{self, path::PathElement, schema::Schema, set::Set, FieldManager};
use crate::object;
use crate::registry::ResourceDef;
use crate::status::{Result, Status};

/// How a write records field ownership.
#[derive(Debug, Clone)]
pub enum Ownership {
    /// A create, update or non-apply patch by this manager (`Update` entry),
    /// through this subresource (`""`, `status`, `scale`).
    Update {
        manager: String,
        subresource: String,
    },
    /// Server-side apply already settled the managedFields: these (kept
    /// through the strategy, which restores the old metadata for `/status`).
    Applied(Option<Value>),
}

impl Ownership {
    /// The manager of a request: `fieldManager`, else from the User-Agent.
    pub fn of_request(request: &ApiRequest, subresource: &str) -> Self {
        Ownership::Update {
            manager: fieldmanager::manager_name(
                request.query.get("fieldManager"),
                request.header("user-agent"),
            ),
            subresource: subresource.to_string(),
        }
    }
}

fn field_manager<'a>(api: &'a Api, resource: &ResourceDef, subresource: &str) -> FieldManager<'a> {
    let mut reset = Set::new();
    if subresource.is_empty()
        && resource.subresource("status").is_some()
        && (resource.group, resource.kind) != ("", "Node")
    {
        // The main resource's strategy keeps the old status (`GetResetFields`).
        reset.insert(&[PathElement::field("status")]);
    }
    FieldManager {
        schema: Schema::for_kind(
            &api.openapi,
            resource.group,
            resource.version,
            resource.kind,
        ),
        api_version: resource.api_version(),
        subresource: subresource.to_string(),
        reset,
    }
}

/// A create: the new object compared with the kind's typed zero value, as
/// kube's create handler does before the strategy runs (so status the
/// strategy sets and the namespace name label are nobody's).
pub fn record_create(api: &Api, target: &Target<'_>, object: &mut Value, owner: &Ownership) {
    let Ownership::Update {
        manager,
        subresource,
    } = owner
    else {
        return;
    };
    let resource = target.resource;
    let fm = field_manager(api, resource, subresource);
    let zero = fieldmanager::zero_object(&resource.api_version(), resource.kind);
    let now = object::now_rfc3339();
    let swap_status =
        resource.subresource("status").is_some() && (resource.group, resource.kind) != ("", "Node");
    // Status swapped for the zero value's where status is a subresource;
    // returns what was there.
    let swap = |object: &mut Value| match object.as_object_mut() {
        Some(map) if swap_status => Some(match zero.get("status") {
            Some(status) => map.insert("status".into(), status.clone()),
            None => map.remove("status"),
        }),
        _ => None,
    };
    if (resource.group, resource.kind) == ("", "Namespace") {
        // The name label comes out of what is compared too: on a copy.
        let mut probe = object.clone();
        swap(&mut probe);
        if let Some(labels) = probe
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            labels.remove("kubernetes.io/metadata.name");
            if labels.is_empty() {
                if let Some(metadata) = object::metadata_mut(&mut probe) {
                    metadata.remove("labels");
                }
            }
        }
        fm.update(&zero, &mut probe, manager, &now);
        let entries = probe.pointer("/metadata/managedFields").cloned();
        if let Some(metadata) = object::metadata_mut(object) {
            match entries {
                Some(entries) => metadata.insert("managedFields".into(), entries),
                None => metadata.remove("managedFields"),
            };
        }
        return;
    }
    // The update changes only metadata.managedFields, so it runs on the
    // object itself (no copy of it), status swapped back afterwards.
    let saved_status = swap(object);
    fm.update(&zero, object, manager, &now);
    if let (Some(saved), Some(map)) = (saved_status, object.as_object_mut()) {
        match saved {
            Some(status) => map.insert("status".into(), status),
            None => map.remove("status"),
        };
    }
}

/// An update (PUT, non-apply PATCH, status, scale): `new` is the object
/// about to be stored, after the strategy, `old` the live one.
pub fn record_update(
    api: &Api,
    target: &Target<'_>,
    old: &Value,
    new: &mut Value,
    owner: &Ownership,
) {
    let (manager, subresource) = match owner {
        Ownership::Update {
            manager,
            subresource,
        } => (manager, subresource),
        Ownership::Applied(entries) => {
            // Usually still there (only `/status` restores the old metadata):
            // compared rather than cloned again.
            let kept = object::metadata(new)
                .is_some_and(|metadata| metadata.get("managedFields") == entries.as_ref());
            if !kept {
                set_entries(new, entries.clone());
            }
            keep_old_timestamps(old, new);
            return;
        }
    };
    let fm = field_manager(api, target.resource, subresource);
    fm.update(old, new, manager, &object::now_rfc3339());
    keep_old_timestamps(old, new);
}

/// `IgnoreManagedFieldsTimestampsTransformer`: when an update changes
/// nothing but managedFields timestamps, the old entries stay, so the write
/// is a no-op.
fn keep_old_timestamps(old: &Value, new: &mut Value) {
    fn entries(object: &Value) -> Option<&Value> {
        object.pointer("/metadata/managedFields")
    }
    let old_entries = entries(old);
    // Is the rest of the object the same (`new` with the old entries and
    // resourceVersion equal to `old`)? Asked first, without cloning: on a
    // real change it fails fast and the entries (every manager's FieldsV1)
    // are never compared.
    let old_version = Value::String(object::resource_version(old).to_string());
    let probe_version = old_version.as_str().is_some_and(|v| !v.is_empty());
    let replaced = [
        ("managedFields", old_entries),
        ("resourceVersion", probe_version.then_some(&old_version)),
    ];
    if !equal_with_metadata(new, old, &replaced) {
        return;
    }
    // Same object; restore the old entries when they differ only in times.
    match entries_sameness(old_entries, entries(new)) {
        Sameness::TimesOnly => set_entries(new, old_entries.cloned()),
        Sameness::Identical | Sameness::Different => {}
    }
}

/// Whether `new`, with the metadata fields `replaced` set (`Some`) or
/// removed (`None`) as `object::metadata_mut` would (a missing or non-map
/// metadata becomes a map), equals `old`; without cloning `new`.
pub(super) fn equal_with_metadata(
    new: &Value,
    old: &Value,
    replaced: &[(&str, Option<&Value>)],
) -> bool {
    let Some(new_map) = new.as_object() else {
        return new == old;
    };
    let Some(old_map) = old.as_object() else {
        return false;
    };
    if old_map.len() != new_map.len() + usize::from(!new_map.contains_key("metadata")) {
        return false;
    }
    let others_equal = new_map
        .iter()
        .filter(|(key, _)| *key != "metadata")
        .all(|(key, value)| old_map.get(key) == Some(value));
    if !others_equal {
        return false;
    }
    let Some(old_meta) = old_map.get("metadata").and_then(Value::as_object) else {
        return false;
    };
    let empty = serde_json::Map::new();
    let new_meta = new_map
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut count = 0;
    for (key, value) in new_meta {
        if replaced.iter().any(|(name, _)| name == key) {
            continue;
        }
        count += 1;
        if old_meta.get(key) != Some(value) {
            return false;
        }
    }
    for (name, value) in replaced {
        if let Some(value) = value {
            count += 1;
            if old_meta.get(*name) != Some(*value) {
                return false;
            }
        }
    }
    old_meta.len() == count
}

enum Sameness {
    Identical,
    TimesOnly,
    Different,
}

/// Whether two managedFields lists are equal, equal once every entry's
/// `time` is ignored, or different (one pass over the entries).
fn entries_sameness(old: Option<&Value>, new: Option<&Value>) -> Sameness {
    if !same_but_times(old, new) {
        return Sameness::Different;
    }
    let times_equal = match (old, new) {
        (Some(Value::Array(old)), Some(Value::Array(new))) => old
            .iter()
            .zip(new)
            .all(|(a, b)| a.get("time") == b.get("time")),
        _ => true,
    };
    if times_equal {
        Sameness::Identical
    } else {
        Sameness::TimesOnly
    }
}

/// The managedFields lists equal once every entry's `time` is ignored.
fn same_but_times(old: Option<&Value>, new: Option<&Value>) -> bool {
    let (Some(Value::Array(old)), Some(Value::Array(new))) = (old, new) else {
        return old == new;
    };
    let untimed = |entry: &'_ serde_json::Map<String, Value>| {
        entry.len() - usize::from(entry.contains_key("time"))
    };
    old.len() == new.len()
        && old.iter().zip(new).all(|pair| match pair {
            (Value::Object(a), Value::Object(b)) => {
                untimed(a) == untimed(b)
                    && a.iter()
                        .filter(|(key, _)| *key != "time")
                        .all(|(key, value)| b.get(key) == Some(value))
            }
            (a, b) => a == b,
        })
}

fn set_entries(object: &mut Value, entries: Option<Value>) {
    if let Some(metadata) = object::metadata_mut(object) {
        match entries {
            Some(entries) => metadata.insert("managedFields".into(), entries),
            None => metadata.remove("managedFields"),
        };
    }
}

/// Go's `strconv.ParseBool`.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// The `force` query parameter: `None` when absent.
pub fn force_param(request: &ApiRequest) -> Result<Option<bool>> {
    match request.query.get("force") {
        None => Ok(None),
        Some(text) => parse_bool(text).map(Some).ok_or_else(|| {
            Status::bad_request(format!(
                "strconv.ParseBool: parsing {}: invalid syntax",
                crate::status::go_quote(text)
            ))
        }),
    }
}

const MAX_RETRIES: usize = 16;

/// PATCH with `application/apply-patch+yaml`: create the object when it is
/// missing, else apply; conflicts are 409 unless `force=true`.
pub(super) async fn apply(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
    dry_run: bool,
) -> Result<ApiResponse> {
    let level = FieldValidation::parse(request.query.get("fieldValidation")).unwrap_or_default();
    let force = force_param(request)?.unwrap_or(false);
    let (config, duplicates) = decode_config(request, level)?;
    if target.subresource == Some("scale") {
        let stored = apply_scale(api, request, target, dry_run, force, &config).await?;
        let warnings = yaml_warnings(level, duplicates.as_deref())?;
        return Ok(ApiResponse::object(200, stored).with_warnings(warnings));
    }
    let manager = request
        .query
        .get("fieldManager")
        .unwrap_or_default()
        .to_string();
    if !config.is_object() {
        return Err(Status::bad_request(
            "error decoding YAML: the applied configuration is not an object",
        ));
    }
    let resource = target.resource;
    let api_version = resource.api_version();
    let subresource = target.subresource.unwrap_or("");
    let mut fm = field_manager(api, resource, subresource);
    if subresource == "status" {
        // Through /status only the status is this applier's (`GetResetFields`).
        if let Some(map) = config.as_object() {
            for key in map.keys().filter(|key| *key != "status") {
                fm.reset.insert(&[PathElement::Field(key.clone())]);
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
        let (revision, live) = match read_current(&snapshot, &key)? {
            Some((revision, live)) => (Some(revision), live),
            None if subresource.is_empty() => (None, Value::Object(Default::default())),
            None => return Err(Status::not_found(&target.group_resource(), name)),
        };
        let mut applied = fm
            .apply_with_last_applied(&live, &config, &manager, force, &object::now_rfc3339())
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
        write::settle_namespace(target, &mut applied)?;
        let owner = Ownership::Applied(applied.pointer("/metadata/managedFields").cloned());
        let mut applied = TypedObject::applied(target, &config, applied)?;
        let result = match revision {
            None => {
                require_namespace(api, target)?;
                create_object(api, target, applied, dry_run, &owner)
                    .await
                    .map(|created| (201, created))
            }
            Some(revision) => {
                // The live revision is the precondition; a lost race retries.
                object::set_resource_version(applied.value_mut(), revision);
                update_object(api, target, applied, dry_run, &owner).await
            }
        };
        match result {
            Err(status) if status.code == 409 && status.reason == "Conflict" => continue,
            Err(status) => return Err(status),
            Ok((code, stored)) => {
                let warnings = yaml_warnings(level, duplicates.as_deref())?;
                return Ok(ApiResponse::object(code, stored).with_warnings(warnings));
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
    request: &ApiRequest,
    target: &Target<'_>,
    dry_run: bool,
    force: bool,
    config: &Value,
) -> Result<Value> {
    let manager = request.query.get("fieldManager").unwrap_or_default();
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
    let fm = field_manager(api, resource, "scale");
    let name = target.name.unwrap_or_default();
    let parent_target = Target {
        subresource: None,
        ..*target
    };
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let (revision, live) = read_current(&snapshot, &target.key(name))?
            .ok_or_else(|| Status::not_found(&target.group_resource(), name))?;
        let mut applied = fm
            .apply(
                &live,
                &parent_config,
                manager,
                force,
                &object::now_rfc3339(),
            )
            .map_err(|error| error.to_status())?;
        object::set_resource_version(&mut applied, revision);
        let owner = Ownership::Applied(applied.pointer("/metadata/managedFields").cloned());
        let applied = TypedObject::applied(&parent_target, &parent_config, applied)?;
        match update_object(api, &parent_target, applied, dry_run, &owner).await {
            Err(status) if status.code == 409 && status.reason == "Conflict" => continue,
            Err(status) => return Err(status),
            Ok((_, stored)) => return Ok(super::scale::scale_of(target, &stored)),
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
