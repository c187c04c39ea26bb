//! DELETE of one object and of a collection (`handlers/delete.go`,
//! `Store.Delete` / `Store.DeleteCollection`). Removal is immediate; the
//! finalizer and graceful-deletion machinery builds on this.

use std::sync::Arc;

use ferrokube_store::{BackendError, Expect, Op, StoreError, Txn};
use serde_json::{json, Value};

use super::list::Selection;
use super::resource::{read_current, Target};
use super::{write, Api, ApiRequest, ApiResponse};
use crate::object;
use crate::status::{GroupResource, Result, Status};

const MAX_RETRIES: usize = 16;

/// `metav1.DeleteOptions` preconditions, from the body or the query.
#[derive(Debug, Default)]
struct Preconditions {
    uid: Option<String>,
    resource_version: Option<String>,
}

fn preconditions(request: &ApiRequest) -> Result<Preconditions> {
    let mut found = Preconditions::default();
    if !request.body.is_empty() {
        let options: Value = serde_json::from_slice(&request.body).map_err(|error| {
            Status::bad_request(format!(
                "couldn't get version/kind; json parse error: {error}"
            ))
        })?;
        if let Some(pre) = options.get("preconditions") {
            found.uid = pre.get("uid").and_then(Value::as_str).map(str::to_string);
            found.resource_version = pre
                .get("resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
    }
    Ok(found)
}

/// Kinds whose registry returns the deleted object rather than a `Status`
/// (`ReturnDeletedObject` upstream; see `ResourceDef::returns_deleted_object`).
fn returns_deleted_object(target: &Target<'_>) -> bool {
    target.resource.returns_deleted_object
}

pub(super) async fn delete(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let dry_run = write::dry_run(request)?;
    let preconditions = preconditions(request)?;
    let name = target.name.unwrap_or_default();
    let key = target.key(name);
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let Some((revision, current)) = read_current(&snapshot, &key)? else {
            return Err(Status::not_found(&target.group_resource(), name));
        };
        let uid = object::meta_str(&current, "uid");
        // rest.BeforeDelete: the conflict names the kind, not the resource.
        let kind = GroupResource::new(target.resource.group, target.resource.kind);
        if let Some(expected) = preconditions
            .uid
            .as_deref()
            .filter(|expected| *expected != uid)
        {
            return Err(Status::conflict_because(
                &kind,
                name,
                &format!(
                    "the UID in the precondition ({expected}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
                ),
            ));
        }
        if let Some(expected) = preconditions
            .resource_version
            .as_deref()
            .filter(|expected| *expected != revision.to_string())
        {
            return Err(Status::conflict_because(
                &kind,
                name,
                &format!(
                    "the ResourceVersion in the precondition ({expected}) does not match the ResourceVersion in record ({revision}). The object might have been modified"
                ),
            ));
        }
        if !dry_run {
            let mut txn = Txn::single(Op::Delete {
                key: key.clone(),
                expect: Expect::ModRevision(revision),
            });
            if is_namespace(target) {
                txn.ops.extend(namespace_contents(api, name));
            }
            match write::commit(api, txn).await {
                Ok(_) => {}
                Err(StoreError::Backend(BackendError::PreconditionFailed { .. })) => continue,
                Err(other) => return Err(write::map_store_error(target, name, other)),
            }
        }
        if is_namespace(target) {
            return Ok(ApiResponse::json(200, &terminating(current)));
        }
        if returns_deleted_object(target) {
            return Ok(ApiResponse::json(200, &current));
        }
        let mut details = serde_json::Map::new();
        details.insert("name".into(), json!(name));
        if !target.resource.group.is_empty() {
            details.insert("group".into(), json!(target.resource.group));
        }
        details.insert("kind".into(), json!(target.resource.plural));
        details.insert("uid".into(), json!(uid));
        return Ok(ApiResponse::json(
            200,
            &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}),
        ));
    }
    Err(Status::conflict(&target.group_resource(), name))
}

fn is_namespace(target: &Target<'_>) -> bool {
    (target.resource.group, target.resource.plural) == ("", "namespaces")
}

/// Every object stored in namespace `namespace`, as delete operations.
///
/// kube-apiserver marks the namespace Terminating and its namespace
/// controller empties it; until ferrokube runs that controller, deleting a
/// namespace removes it and everything in it in one transaction: the state
/// the controller reaches, reached at once.
fn namespace_contents(api: &Api, namespace: &str) -> Vec<Op> {
    let snapshot = api.store.snapshot();
    let mut ops = Vec::new();
    let mut seen_storage = std::collections::HashSet::new();
    for resource in api
        .registry
        .resources()
        .iter()
        .filter(|resource| resource.namespaced && !resource.storage.is_empty())
    {
        if !seen_storage.insert(resource.storage) {
            continue;
        }
        let prefix = format!("/registry/{}/{namespace}/", resource.storage);
        for (key, entry) in snapshot.range(&prefix, None) {
            ops.push(Op::Delete {
                key: key.clone(),
                expect: Expect::ModRevision(entry.mod_revision),
            });
        }
    }
    ops
}

/// The namespace as kube's DELETE answers it: marked for deletion, Terminating.
fn terminating(mut namespace: Value) -> Value {
    if let Some(metadata) = object::metadata_mut(&mut namespace) {
        metadata.insert("deletionTimestamp".into(), json!(object::now_rfc3339()));
        metadata.insert("deletionGracePeriodSeconds".into(), json!(0));
    }
    if let Some(map) = namespace.as_object_mut() {
        map.insert("status".into(), json!({"phase": "Terminating"}));
    }
    namespace
}

/// Deletes every matching object; answers the list of what was deleted.
pub(super) async fn delete_collection(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let dry_run = write::dry_run(request)?;
    let selection = Selection::from_request(request, target)?;
    let snapshot = api.store.snapshot();
    let mut deleted = Vec::new();
    for (key, entry) in snapshot.range(&target.prefix(), None) {
        let Some(value) = entry.object.value() else {
            continue;
        };
        if !selection.matches(target, value) {
            continue;
        }
        if !dry_run {
            let txn = Txn::single(Op::Delete {
                key: key.clone(),
                expect: Expect::ModRevision(entry.mod_revision),
            });
            match write::commit(api, txn).await {
                Ok(_) => {}
                // Changed or gone since the snapshot: someone else owns its fate now.
                Err(StoreError::Backend(BackendError::PreconditionFailed { .. })) => continue,
                Err(other) => {
                    return Err(write::map_store_error(target, object::name(value), other))
                }
            }
        }
        deleted.push(value.clone());
    }
    let revision = api.store.snapshot().revision;
    Ok(ApiResponse::json(
        200,
        &json!({
            "kind": target.resource.list_kind(),
            "apiVersion": target.resource.api_version(),
            "metadata": {"resourceVersion": revision.to_string()},
            "items": deleted,
        }),
    ))
}
