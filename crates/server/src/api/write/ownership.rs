//! The ownership step of every write: managedFields recorded as kube's
//! field manager records them (`Update` entries for create, update and
//! non-apply patches; server-side apply settles its own `Apply` entries).

use serde_json::Value;

use crate::admission::Caller;
use crate::api::context::Api;
use crate::api::exchange::ApiRequest;
use crate::api::options::WriteOptions;
use crate::api::target::Target;
use crate::fieldmanager::versioned::OtherVersions;
use crate::fieldmanager::{self, path::PathElement, schema::Schema, set::Set, FieldManager};
use crate::object;
use crate::registry::ResourceDef;

/// How a write records field ownership.
#[derive(Debug, Clone)]
pub enum Ownership {
    /// A create, update or non-apply patch by this manager (`Update` entry),
    /// through this subresource (`""`, `status`, `scale`).
    Update {
        manager: String,
        subresource: String,
    },
    /// Server-side apply already settled the managedFields the object carries.
    Applied,
}

impl Ownership {
    /// A request's ownership: its options' manager, else one derived from
    /// the User-Agent.
    pub fn of_request(request: &ApiRequest, options: &WriteOptions, subresource: &str) -> Self {
        Ownership::Update {
            manager: options.manager(request),
            subresource: subresource.to_string(),
        }
    }
}

/// The field manager of the target's resource through `subresource`, with
/// the fields its strategy resets; a custom resource's schema is its CRD's.
pub fn field_manager<'a>(
    api: &'a Api,
    target: &'a Target<'_>,
    subresource: &str,
) -> FieldManager<'a> {
    let resource = target.resource;
    let mut reset = Set::new();
    if subresource.is_empty() && resource.subresource("status").is_some() {
        // The main resource's strategy keeps the old status (`GetResetFields`;
        // Nodes' too, though their create may carry one).
        reset.insert(&[PathElement::field("status")]);
    }
    if subresource == "status" && target.custom.is_none() && !resource.custom {
        // A status strategy's reset fields: the spec, and the metadata it
        // does not take from the request (apply resets the rest of a
        // configuration but its status and metadata).
        reset.insert(&[PathElement::field("spec")]);
        for field in crate::api::strategy::status_metadata_reset(resource) {
            reset.insert(&[PathElement::field("metadata"), PathElement::field(field)]);
        }
    }
    if subresource.is_empty() && (resource.group, resource.kind) == ("", "Namespace") {
        // `spec.finalizers` change only through `/finalize`.
        reset.insert(&[PathElement::field("spec"), PathElement::field("finalizers")]);
    }
    let schema = match target.custom.as_deref() {
        Some(custom) => match custom.ssa_model() {
            Some(model) => Schema::of_model(model),
            None => Schema::deduced_throughout(),
        },
        None => Schema::for_kind(
            &api.openapi,
            resource.group,
            resource.version,
            resource.kind,
        ),
    };
    FieldManager {
        schema,
        api_version: resource.api_version(),
        subresource: subresource.to_string(),
        reset,
        other_versions: other_versions(api, resource),
    }
}

/// The other served versions of a built-in kind served in several
/// (`versions`), for managers recorded at them; `None` for the rest.
fn other_versions(api: &Api, resource: &ResourceDef) -> Option<OtherVersions<'static>> {
    let served = crate::versions::served_api_versions(resource)?;
    let own = resource.api_version();
    let schemas = served
        .iter()
        .filter(|api_version| **api_version != own)
        .map(|api_version| {
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            (
                (*api_version).to_string(),
                Schema::for_kind(&api.openapi, group, version, resource.kind),
            )
        })
        .collect();
    Some(OtherVersions {
        schemas,
        convert: |object, api_version| crate::versions::convert(object, api_version).is_ok(),
    })
}

/// A create: the new object compared with the kind's typed zero value, as
/// kube's create handler does after decoding and before mutating admission
/// and the strategy (so what admission and the strategy add, and status,
/// are nobody's; a named Namespace's name label, a default, is the creator's).
pub fn record_create(api: &Api, target: &Target<'_>, object: &mut Value, owner: &Ownership) {
    let Ownership::Update {
        manager,
        subresource,
    } = owner
    else {
        return;
    };
    let resource = target.resource;
    let mut fm = field_manager(api, target, subresource);
    // Status is settled by the swap below (a Node's create owns its status).
    fm.reset = Set::new();
    let zero = fieldmanager::zero_object(&resource.api_version(), resource.kind);
    let now = crate::go::time::now_rfc3339();
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

/// An update (PUT, non-apply PATCH, status, scale), recorded as kube's
/// update and patch handlers record it: on the decoded object, before
/// mutating admission and the strategy (`FieldManager.UpdateNoErrors` is
/// their first transformer), so what admission plugins, webhooks, the
/// strategy and the allocators change is nobody's. The main resource's
/// status counts for nobody (the strategy's reset fields); a subresource's
/// write is compared as `prepare` (its strategy) will leave it, which
/// stands in for that strategy's reset fields (a `/status` write owns only
/// what it changes in status). Server-side apply settled its entries already.
pub fn record_update(
    api: &Api,
    target: &Target<'_>,
    old: &Value,
    new: &mut Value,
    owner: &Ownership,
    prepare: impl FnOnce(&mut Value),
) {
    let Ownership::Update {
        manager,
        subresource,
    } = owner
    else {
        return;
    };
    let fm = field_manager(api, target, subresource);
    let now = crate::go::time::now_rfc3339();
    if target.subresource.is_none() {
        fm.update(old, new, manager, &now);
        return;
    }
    let mut prepared = new.clone();
    prepare(&mut prepared);
    fm.update(old, &mut prepared, manager, &now);
    set_entries(new, managed_fields(&prepared).cloned());
}

/// After the strategy: the object's managedFields are `entries`, the ones
/// admission left (a `/status` strategy restores the old metadata), and an
/// update that changes nothing but their timestamps keeps the old ones.
pub fn settle_update(old: &Value, new: &mut Value, entries: Option<Value>) {
    // Usually still there: compared rather than set again.
    if managed_fields(new) != entries.as_ref() {
        set_entries(new, entries);
    }
    keep_old_timestamps(old, new);
}

/// The object's `metadata.managedFields`, if any.
pub fn managed_fields(object: &Value) -> Option<&Value> {
    object::metadata(object).and_then(|metadata| metadata.get("managedFields"))
}

/// `NewManagedFieldsValidatingAdmissionController`: managedFields that
/// mutating admission left invalid are reset to `before`, what they were
/// before it, with kube's warning. Returns the managedFields kept.
pub fn keep_valid_managed_fields(
    object: &mut Value,
    before: Option<Value>,
    caller: &Caller,
) -> Option<Value> {
    let after = managed_fields(object);
    if after == before.as_ref() {
        return before;
    }
    let Err(error) = crate::fieldmanager::managed::decode(after) else {
        return after.cloned();
    };
    set_entries(object, before.clone());
    super::create::warn(
        caller,
        vec![format!(
            ".metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: {error}"
        )],
    );
    before
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
pub fn equal_with_metadata(new: &Value, old: &Value, replaced: &[(&str, Option<&Value>)]) -> bool {
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
