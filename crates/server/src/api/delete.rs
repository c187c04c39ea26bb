//! DELETE of one object and of a collection (`handlers/delete.go`,
//! `registry/generic/registry/store.go` `Store.Delete`,
//! `updateForGracefulDeletionAndFinalizers`, `DeleteCollection`; the namespace
//! registry's own `Delete`; the unsafe `corruptObjectDeleter`). The rules
//! that shape the object on its way out are in `deletion/`.

use std::sync::Arc;
use std::time::SystemTime;

use ferrokube_store::{BackendError, Expect, Op, StoreError, Txn};
use serde_json::{json, Value};

use super::context::Api;
use super::deletion::before_delete::{
    before_delete, deletion_timestamp, finalizers, gc_finalizers, mark_as_deleting, set_finalizers,
};
use super::deletion::crd;
use super::deletion::namespace::{self, is_namespace};
use super::deletion::options::IGNORE_STORE_READ_ERROR;
use super::deletion::DeleteOptions;
use super::exchange::{ApiRequest, ApiResponse};
use super::selection::Selection;
use super::target::Target;
use super::write::{self, commit};
use crate::admission::{Caller, Operation};
use crate::object;
use crate::status::{FieldError, FieldErrorKind, Result, Status};

const MAX_RETRIES: usize = 16;

/// Deletes a deletecollection keeps in flight at once.
const DELETE_COLLECTION_WORKERS: usize = 32;

/// How one DELETE ended.
#[derive(Debug)]
pub(super) enum Outcome {
    /// Removed from storage; the object as it last was.
    Deleted(Value),
    /// Kept, marked for deletion (finalizers pending or a grace period running).
    Kept(Value),
    /// A graceful deletion was already pending and this request changed nothing.
    AlreadyDeleting(Value),
}

pub(super) async fn delete(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let mut options = DeleteOptions::from_request(request)?;
    let name = target.name.unwrap_or_default();
    if options.unsafe_delete() {
        authorize_unsafe_delete(api, request, target, name)?;
        return unsafe_delete(api, target, name).await;
    }
    let caller = delete_caller(request, &options);
    let outcome = if is_namespace(target) {
        delete_marking_first(
            api,
            target,
            name,
            &mut options,
            MarksFirst::Namespace,
            &caller,
        )
        .await
    } else if crd::is_crd(target) {
        delete_marking_first(api, target, name, &mut options, MarksFirst::Crd, &caller).await
    } else {
        delete_object(api, target, name, &mut options, &caller).await
    };
    let response = outcome.map(|outcome| respond(target, &options, outcome));
    write::admission::with_warnings(response, &caller)
}

/// The admission caller of a delete: the user, dry-run and the
/// `DeleteOptions` object as kube passes it to admission.
fn delete_caller(request: &ApiRequest, options: &DeleteOptions) -> Caller {
    let mut object = json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"});
    if let Some(seconds) = options.grace_period_seconds {
        object["gracePeriodSeconds"] = json!(seconds);
    }
    if let Some(preconditions) = &options.preconditions {
        let mut given = serde_json::Map::new();
        if let Some(uid) = &preconditions.uid {
            given.insert("uid".into(), json!(uid));
        }
        if let Some(version) = &preconditions.resource_version {
            given.insert("resourceVersion".into(), json!(version));
        }
        object["preconditions"] = Value::Object(given);
    }
    if let Some(orphan) = options.orphan_dependents {
        object["orphanDependents"] = json!(orphan);
    }
    if let Some(policy) = &options.propagation_policy {
        object["propagationPolicy"] = json!(policy);
    }
    if !options.dry_run.is_empty() {
        object["dryRun"] = json!(options.dry_run);
    }
    Caller::new(request.user.clone(), options.is_dry_run(), object)
}

/// Both admission stages of a delete (`AdmissionToValidateObjectDeleteFunc`):
/// no object, the object being deleted as the old one.
async fn admit_delete(
    api: &Api,
    target: &Target<'_>,
    current: &Value,
    caller: &Caller,
) -> Result<()> {
    write::admission::mutate(api, target, Operation::Delete, None, Some(current), caller).await?;
    write::admission::validate(api, target, Operation::Delete, None, Some(current), caller).await
}

/// The verb an unsafe delete needs besides `delete`.
const UNSAFE_DELETE_VERB: &str = "unsafe-delete-ignore-read-errors";

/// `authorizeUnsafeDelete` (`handlers/delete.go`): a delete with
/// `ignoreStoreReadErrorWithClusterBreakingPotential` also needs
/// `unsafe-delete-ignore-read-errors` on the resource, asked of the same
/// authorizers as the request itself.
fn authorize_unsafe_delete(
    api: &Api,
    request: &ApiRequest,
    target: &Target<'_>,
    name: &str,
) -> Result<()> {
    let resource = target.group_resource();
    if target.subresource.is_some() {
        return Err(Status::forbidden(
            &resource,
            name,
            "ignoreStoreReadErrorWithClusterBreakingPotential delete option is not allowed on a subresource or non-resource request",
        ));
    }
    let anonymous = crate::authn::UserInfo::anonymous();
    let user = request.user.as_ref().unwrap_or(&anonymous);
    let version = target.resource.version;
    let attributes = crate::authz::Attributes {
        verb: UNSAFE_DELETE_VERB,
        resource_request: true,
        api_group: target.resource.group,
        api_version: version,
        resource: target.resource.plural,
        namespace: target.namespace.unwrap_or_default(),
        name: std::borrow::Cow::Borrowed(name),
        ..crate::authz::Attributes::non_resource(user, UNSAFE_DELETE_VERB, &request.path)
    };
    let decision = api.authorizer.authorize_request(&attributes);
    if decision.allowed() {
        return Ok(());
    }
    Err(Status::forbidden(
        &resource,
        name,
        &format!(
            "not permitted to do {}, reason: {}",
            crate::go::strconv::quote(UNSAFE_DELETE_VERB),
            decision.reason
        ),
    ))
}

/// `DeleteResource`'s answer: 202 only for an object kept after
/// `orphanDependents: false`; a kept object is answered as it now is; a
/// removed one as the kind's registry answers (`finalizeDelete`).
fn respond(target: &Target<'_>, options: &DeleteOptions, outcome: Outcome) -> ApiResponse {
    let accepted = options.orphan_dependents == Some(false);
    match outcome {
        Outcome::Kept(object) => ApiResponse::object(if accepted { 202 } else { 200 }, object),
        Outcome::AlreadyDeleting(object) => ApiResponse::object(
            if accepted { 202 } else { 200 },
            finalize_delete(target, object),
        ),
        Outcome::Deleted(object) => ApiResponse::object(200, finalize_delete(target, object)),
    }
}

/// `finalizeDelete`: the object for kinds that return it
/// (`ReturnDeletedObject`), otherwise a success `Status` naming it.
fn finalize_delete(target: &Target<'_>, object: Value) -> Value {
    if target.resource.returns_deleted_object {
        return object;
    }
    let mut details = serde_json::Map::new();
    details.insert("name".into(), json!(object::name(&object)));
    if !target.resource.group.is_empty() {
        details.insert("group".into(), json!(target.resource.group));
    }
    details.insert("kind".into(), json!(target.resource.plural));
    details.insert("uid".into(), json!(object::meta_str(&object, "uid")));
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}

/// Commit one op; `Ok(None)` when its precondition no longer holds (retry).
async fn commit(api: &Api, target: &Target<'_>, name: &str, op: Op) -> Result<Option<i64>> {
    match commit::commit(api, Txn::single(op)).await {
        Ok(committed) => Ok(Some(committed.revision)),
        Err(StoreError::Backend(BackendError::PreconditionFailed { .. })) => Ok(None),
        Err(other) => Err(commit::map_store_error(target, name, other)),
    }
}

/// Write `object` over `current` (at `revision`) unless nothing changed, as
/// `GuaranteedUpdate` skips no-op writes. `Ok(None)` means retry.
async fn put_if_changed(
    api: &Api,
    target: &Target<'_>,
    key: &str,
    revision: i64,
    current: &Value,
    mut object: Value,
    dry_run: bool,
) -> Result<Option<Value>> {
    if &object == current || dry_run {
        return Ok(Some(object));
    }
    let name = object::name(&object).to_string();
    let op = Op::Put {
        key: key.to_string(),
        value: commit::stored_bytes(api, target, key, &object).await?,
        expect: Expect::ModRevision(revision),
    };
    Ok(commit(api, target, &name, op).await?.map(|new_revision| {
        object::set_resource_version(&mut object, new_revision);
        object
    }))
}

/// `Store.Delete` for one object.
pub(super) async fn delete_object(
    api: &Api,
    target: &Target<'_>,
    name: &str,
    options: &mut DeleteOptions,
    caller: &Caller,
) -> Result<Outcome> {
    let key = target.key(name);
    let dry_run = options.is_dry_run();
    // What this request last wrote, in case a racing writer removes it before we do.
    let mut last_written: Option<Value> = None;
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let Some((revision, current)) =
            super::conversion::read_current(api, target, &snapshot, &key).await?
        else {
            return match last_written {
                Some(last) => Ok(Outcome::Deleted(last)),
                None => Err(Status::not_found(&target.group_resource(), name)),
            };
        };
        admit_delete(api, target, &current, caller).await?;
        let now = SystemTime::now();
        let mut attempt = options.clone();
        let mut object = current.clone();
        let decision = before_delete(target.resource, &mut object, &mut attempt, now)?;
        if decision.pending {
            *options = attempt;
            return Ok(Outcome::AlreadyDeleting(current));
        }
        let new_finalizers = gc_finalizers(target.resource, &object, &attempt);
        let mut delete_from = (revision, current.clone());
        if decision.graceful || !finalizers(&current).is_empty() || new_finalizers.is_some() {
            if let Some(wanted) = new_finalizers {
                set_finalizers(&mut object, wanted);
            }
            let pending_finalizers = !finalizers(&object).is_empty();
            if !decision.graceful && pending_finalizers {
                mark_as_deleting(&mut object, now);
            }
            if decision.graceful || pending_finalizers {
                let Some(stored) =
                    put_if_changed(api, target, &key, revision, &current, object, dry_run).await?
                else {
                    continue;
                };
                *options = attempt.clone();
                let grace = attempt.grace_period_seconds.unwrap_or(0);
                if pending_finalizers || grace > 0 {
                    return Ok(Outcome::Kept(stored));
                }
                // Graceful with nothing left to wait for: deleted right after the update.
                if dry_run {
                    return Ok(Outcome::Deleted(stored));
                }
                let stored_revision = object::resource_version(&stored)
                    .parse()
                    .unwrap_or(revision);
                last_written = Some(stored.clone());
                delete_from = (stored_revision, stored);
            }
        }
        let (expected, last) = delete_from;
        if dry_run {
            return Ok(Outcome::Deleted(last));
        }
        let op = Op::Delete {
            key: key.clone(),
            expect: Expect::ModRevision(expected),
        };
        match commit(api, target, name, op).await? {
            Some(_) => return Ok(Outcome::Deleted(last)),
            None => continue,
        }
    }
    Err(Status::conflict(&target.group_resource(), name))
}

/// The registries whose own `Delete` marks the object on the first request
/// and keeps it: namespaces (deletion timestamp, phase Terminating, the GC's
/// finalizers; gone once the namespace controller `finalize`s it) and CRDs
/// (deletion timestamp, the cleanup finalizer, `Terminating`; gone once the
/// CRD finalizer has removed its objects).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MarksFirst {
    Namespace,
    Crd,
}

/// `Delete` of a [`MarksFirst`] registry: the first request stores the mark
/// and answers with the object; later ones delete it as any object (which
/// waits for its finalizers), a namespace only once `spec.finalizers` are gone.
async fn delete_marking_first(
    api: &Api,
    target: &Target<'_>,
    name: &str,
    options: &mut DeleteOptions,
    registry: MarksFirst,
    caller: &Caller,
) -> Result<Outcome> {
    let key = target.key(name);
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let Some((revision, current)) =
            super::conversion::read_current(api, target, &snapshot, &key).await?
        else {
            return Err(Status::not_found(&target.group_resource(), name));
        };
        namespace::check_preconditions(&current, options, &target.group_resource())?;
        if deletion_timestamp(&current).is_none() {
            admit_delete(api, target, &current, caller).await?;
            let mut marked = current.clone();
            match registry {
                MarksFirst::Namespace => {
                    namespace::mark_terminating(&mut marked, options, SystemTime::now())
                }
                MarksFirst::Crd => crd::mark_terminating(&mut marked, SystemTime::now()),
            }
            let stored = put_if_changed(
                api,
                target,
                &key,
                revision,
                &current,
                marked,
                options.is_dry_run(),
            )
            .await?;
            match stored {
                Some(stored) => return Ok(Outcome::Kept(stored)),
                None => continue,
            }
        }
        if registry == MarksFirst::Namespace && !namespace::spec_finalizers(&current).is_empty() {
            return Ok(Outcome::Kept(current));
        }
        return delete_object(api, target, name, options, caller).await;
    }
    Err(Status::conflict(&target.group_resource(), name))
}

/// `corruptObjectDeleter.Delete`: only for an object whose stored bytes do
/// not decode; removes the key, ignoring finalizers and preconditions.
async fn unsafe_delete(api: &Api, target: &Target<'_>, name: &str) -> Result<ApiResponse> {
    let key = target.key(name);
    let snapshot = api.store.snapshot();
    let corrupt = snapshot
        .get(&key)
        .is_some_and(|entry| entry.object.corrupt_error().is_some());
    if !corrupt {
        let error = FieldError {
            kind: FieldErrorKind::Invalid("true".into()),
            field: IGNORE_STORE_READ_ERROR.into(),
            detail:
                "is exclusively used to delete corrupt object(s), try again by removing this option"
                    .into(),
        };
        // The Invalid error names the resource as its kind (upstream TODO #18526).
        return Err(Status::invalid(
            target.resource.group,
            target.resource.plural,
            name,
            &[error],
        ));
    }
    tracing::warn!(key = %key, "unsafe deletion of a corrupt object");
    let op = Op::Delete {
        key,
        expect: Expect::Any,
    };
    // Gone already: the deletion succeeded all the same.
    let _ = commit(api, target, name, op).await?;
    Ok(ApiResponse::json(
        200,
        &json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {"name": name, "kind": target.resource.kind},
            "code": 200,
        }),
    ))
}

/// `Store.DeleteCollection`: lists what matches, deletes each one as a
/// single DELETE would (finalizers and grace periods hold them), and answers
/// the list as it was read.
pub(super) async fn delete_collection(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let selection = Selection::from_request(request, target)?;
    let options = DeleteOptions::from_request(request)?;
    let caller = Arc::new(delete_caller(request, &options));
    let snapshot = api.store.snapshot();
    let mut listed = Vec::new();
    for (_, entry) in snapshot.range(&target.prefix(), None) {
        if !selection.matches_stored(target.resource, &entry.object) {
            continue;
        }
        if let Some(value) = entry.object.value() {
            listed.push(value);
        }
    }
    // Several deletes in flight share the store's group commit (kube runs
    // `DeleteCollectionWorkers` of them); each is still its own revision.
    let mut in_flight = tokio::task::JoinSet::new();
    let mut names = listed.iter().map(|item| object::name(item).to_string());
    loop {
        while in_flight.len() < DELETE_COLLECTION_WORKERS {
            let Some(name) = names.next() else { break };
            let api = api.clone();
            let resource = target.resource;
            let namespace = target.namespace.map(str::to_string);
            let verb = target.verb;
            let custom = target.custom.clone();
            let mut item_options = options.clone();
            let caller = caller.clone();
            in_flight.spawn(async move {
                let item_target = Target {
                    resource,
                    namespace: namespace.as_deref(),
                    name: Some(&name),
                    subresource: None,
                    verb,
                    custom,
                };
                delete_object(&api, &item_target, &name, &mut item_options, &caller)
                    .await
                    .map(|_| ())
            });
        }
        let Some(joined) = in_flight.join_next().await else {
            break;
        };
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(status)) if status.code == 404 => {}
            Ok(Err(status)) => return Err(status),
            Err(error) => return Err(Status::internal(error)),
        }
    }
    Ok(ApiResponse::json(
        200,
        &json!({
            "kind": target.resource.list_kind(),
            "apiVersion": target.resource.api_version(),
            "metadata": {"resourceVersion": snapshot.revision.to_string()},
            "items": listed,
        }),
    )
    .with_warnings(caller.take_warnings()))
}
