//! `POST /api/v1/namespaces/{ns}/pods/{name}/eviction`: a policy/v1 (or
//! v1beta1) `Eviction` deletes its pod unless a PodDisruptionBudget forbids
//! it (`pkg/registry/core/pod/storage/eviction.go` `EvictionREST.Create`,
//! `checkAndDecrement`, `addConditionAndDeletePod`).
//!
//! The budget is read from the store and its status written at storage
//! level, as kube's loopback client's `UpdateStatus` would, without a
//! managedFields entry; the pod's `DisruptionTarget` condition likewise.

use std::sync::Arc;

use ferrokube_store::{BackendError, Expect, Op, StoreError, Txn};
use serde_json::{json, Value};

use super::context::Api;
use super::delete::delete_object;
use super::deletion::DeleteOptions;
use super::exchange::{ApiRequest, ApiResponse};
use super::options::WriteOptions;
use super::target::{check_type, Target};
use super::write::decode::{decode, Decoded};
use super::write::{self, commit};
use crate::admission::{Caller, Operation};
use crate::label_selector::Selector;
use crate::object;
use crate::pod_condition::{is_pod_ready, update_pod_condition};
use crate::status::{Cause, Details, GroupResource, Result, Status};

/// `MaxDisruptedPodSize`.
const MAX_DISRUPTED_POD_SIZE: usize = 2000;
/// Attempts on conflicts (kube's `EvictionsRetry` has 20 steps).
const RETRIES: usize = 20;
/// The message of every refusal a budget causes.
const VIOLATION: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// `errors.NewTooManyRequests(VIOLATION, 0)` with a `DisruptionBudget` cause.
fn too_many_requests(cause: String) -> Status {
    Status {
        code: 429,
        reason: "TooManyRequests",
        message: VIOLATION.to_string(),
        details: Some(Box::new(Details {
            causes: vec![Cause {
                reason: "DisruptionBudget".to_string(),
                message: cause,
                field: String::new(),
            }],
            ..Details::default()
        })),
    }
}

/// `createTooManyRequestsError`.
fn still_processing(pdb_name: &str) -> Status {
    too_many_requests(format!(
        "The disruption budget {pdb_name} is still being processed by the server."
    ))
}

fn created_success() -> ApiResponse {
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    });
    ApiResponse::json(201, &status)
}

/// `propagateDryRun`: the request's dryRun goes into the eviction's
/// DeleteOptions; both set and different is a plain (500) error.
fn propagate_dry_run(options: &mut DeleteOptions, request_dry_run: Vec<String>) -> Result<()> {
    if options.dry_run.is_empty() {
        options.dry_run = request_dry_run;
        return Ok(());
    }
    if request_dry_run.is_empty() || request_dry_run == options.dry_run {
        return Ok(());
    }
    Err(Status::unknown(format!(
        "Non-matching dry-run options in request and content: [{}] and [{}]",
        request_dry_run.join(" "),
        options.dry_run.join(" ")
    )))
}

pub(super) async fn create(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let write_options = WriteOptions::parse(request, None)?;
    // Both policy versions decode into the same internal Eviction.
    let group_version = if body_api_version(request).as_deref() == Some("policy/v1beta1") {
        "policy/v1beta1"
    } else {
        "policy/v1"
    };
    let Decoded {
        object: mut eviction,
        warnings,
    } = decode(
        api,
        request,
        target,
        "Eviction",
        group_version,
        write_options.field_validation,
    )?;
    check_type(&mut eviction, group_version, "Eviction")?;
    let name = target.name.unwrap_or_default();
    if object::name(&eviction) != name {
        return Err(Status::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let mut options = match eviction.get("deleteOptions").filter(|v| !v.is_null()) {
        Some(body) => DeleteOptions::from_body(&serde_json::to_vec(body).unwrap_or_default())?,
        None => DeleteOptions::default(),
    };
    let request_dry_run = request
        .query
        .all("dryRun")
        .into_iter()
        .map(str::to_string)
        .collect();
    propagate_dry_run(&mut options, request_dry_run)?;
    // The handler's admission of the Eviction create, then `createValidation`
    // in `EvictionREST.Create`; the pod's delete is not admitted again
    // (`rest.ValidateAllObjectFunc`).
    let caller = write_options.caller(request);
    write::admission::mutate(
        api,
        target,
        Operation::Create,
        Some(&mut eviction),
        None,
        &caller,
    )
    .await?;
    write::admission::validate(
        api,
        target,
        Operation::Create,
        Some(&eviction),
        None,
        &caller,
    )
    .await?;
    let pods = target.parent();
    let response = evict(api, &pods, name, options, &caller.already_admitted()).await?;
    let mut warnings = warnings;
    warnings.extend(caller.take_warnings());
    Ok(response.with_warnings(warnings))
}

/// The `apiVersion` of a JSON or YAML body, to decode a policy/v1beta1
/// Eviction as such.
fn body_api_version(request: &ApiRequest) -> Option<String> {
    let value: Value = serde_json::from_slice(&request.body)
        .ok()
        .or_else(|| crate::yaml::yaml_to_json(&request.body).ok())?;
    value.get("apiVersion")?.as_str().map(str::to_string)
}

fn pod_not_found(name: &str) -> Status {
    Status::not_found(&GroupResource::new("", "pods"), name)
}

/// `canIgnorePDB`: terminal, pending or deleting pods are deleted without
/// asking their budgets.
fn can_ignore_budgets(pod: &Value) -> bool {
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default();
    matches!(phase, "Succeeded" | "Failed" | "Pending")
        || !object::meta_str(pod, "deletionTimestamp").is_empty()
}

/// `shouldEnforceResourceVersion`: not for terminal or deleting pods.
fn should_enforce_resource_version(pod: &Value) -> bool {
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default();
    !matches!(phase, "Succeeded" | "Failed")
        && object::meta_str(pod, "deletionTimestamp").is_empty()
}

fn resource_version_is_unset(options: &DeleteOptions) -> bool {
    options
        .preconditions
        .as_ref()
        .is_none_or(|preconditions| preconditions.resource_version.is_none())
}

fn with_resource_version(options: &DeleteOptions, resource_version: String) -> DeleteOptions {
    let mut options = options.clone();
    options
        .preconditions
        .get_or_insert_with(Default::default)
        .resource_version = Some(resource_version);
    options
}

async fn read_pod(api: &Api, pods: &Target<'_>, name: &str) -> Result<Value> {
    let snapshot = api.store.snapshot();
    let (revision, mut pod) = pods
        .read_current(&snapshot, &pods.key(name))?
        .ok_or_else(|| pod_not_found(name))?;
    object::set_resource_version(&mut pod, revision);
    Ok(pod)
}

/// `EvictionREST.Create` after decoding.
async fn evict(
    api: &Api,
    pods: &Target<'_>,
    name: &str,
    options: DeleteOptions,
    caller: &Caller,
) -> Result<ApiResponse> {
    // Pods that need no budget check are deleted at once; a conflict (the
    // resourceVersion we pinned moved) is retried unless the client pinned it.
    let mut attempts = 0;
    let pod = loop {
        let pod = read_pod(api, pods, name).await?;
        if !can_ignore_budgets(&pod) {
            break pod;
        }
        let mut delete_options = options.clone();
        if should_enforce_resource_version(&pod) && resource_version_is_unset(&options) {
            delete_options =
                with_resource_version(&options, object::resource_version(&pod).to_string());
        }
        match add_condition_and_delete(api, pods, name, delete_options, caller).await {
            Ok(()) => return Ok(created_success()),
            Err(status)
                if status.code == 409
                    && resource_version_is_unset(&options)
                    && attempts < RETRIES =>
            {
                attempts += 1;
            }
            Err(status) => return Err(status),
        }
    };
    let budgets = matching_budgets(api, &pod)?;
    if budgets.len() > 1 {
        // Returned as the result, not as an error: a 500 Failure Status
        // without a reason.
        let status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            "code": 500,
        });
        return Ok(ApiResponse::json(500, &status));
    }
    let mut pin_resource_version = false;
    let mut budget_name = String::new();
    if let Some((key, _, budget)) = budgets.into_iter().next() {
        budget_name = object::name(&budget).to_string();
        let unhealthy_may_go = !is_pod_ready(&pod) && {
            let always_allow = budget
                .pointer("/spec/unhealthyPodEvictionPolicy")
                .and_then(Value::as_str)
                == Some("AlwaysAllow");
            let current = status_int(&budget, "currentHealthy");
            let desired = status_int(&budget, "desiredHealthy");
            always_allow || (current >= desired && desired > 0)
        };
        if unhealthy_may_go {
            // An unready pod does not count towards the budget: deleted
            // without a decrement, pinned to the version judged unready.
            pin_resource_version = true;
        } else {
            check_and_decrement(api, &key, name, options.is_dry_run()).await?;
        }
    }
    let delete_options = if pin_resource_version {
        with_resource_version(&options, object::resource_version(&pod).to_string())
    } else {
        options.clone()
    };
    match add_condition_and_delete(api, pods, name, delete_options, caller).await {
        Ok(()) => Ok(created_success()),
        Err(status)
            if status.code == 409
                && pin_resource_version
                && resource_version_is_unset(&options) =>
        {
            Err(still_processing(&budget_name))
        }
        Err(status) => Err(status),
    }
}

fn status_int(budget: &Value, field: &str) -> i64 {
    budget
        .get("status")
        .and_then(|status| status.get(field))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// `getPodDisruptionBudgets`: the budgets of the pod's namespace whose
/// selector matches its labels (a missing selector matches nothing, an
/// invalid one is skipped), with their keys and revisions.
fn matching_budgets(api: &Api, pod: &Value) -> Result<Vec<(String, i64, Value)>> {
    let prefix = format!("/registry/poddisruptionbudgets/{}/", object::namespace(pod));
    let labels = object::labels(pod);
    let snapshot = api.store.snapshot();
    let mut budgets = Vec::new();
    for (key, entry) in snapshot.range(&prefix, None) {
        let Some(budget) = entry.object.value() else {
            continue;
        };
        let Some(selector) = budget.pointer("/spec/selector").filter(|s| !s.is_null()) else {
            continue;
        };
        let Ok(selector) = Selector::parse(selector) else {
            continue;
        };
        if selector.matches_labels(labels) {
            budgets.push((key.to_string(), entry.mod_revision, budget));
        }
    }
    Ok(budgets)
}

/// `checkAndDecrement` in kube's `RetryOnConflict`: refused (429/403) when
/// the budget allows no disruption, else one fewer allowed and the pod
/// recorded in `disruptedPods` (not on a dry run).
async fn check_and_decrement(api: &Api, key: &str, pod_name: &str, dry_run: bool) -> Result<()> {
    let budget_resource = GroupResource::new("policy", "poddisruptionbudget");
    for _ in 0..RETRIES {
        let snapshot = api.store.snapshot();
        let Some(entry) = snapshot.get(key) else {
            let name = key.rsplit('/').next().unwrap_or_default();
            return Err(Status::not_found(
                &GroupResource::new("policy", "poddisruptionbudgets"),
                name,
            ));
        };
        let revision = entry.mod_revision;
        let Some(mut budget) = entry.object.value() else {
            return Err(Status::internal("unreadable PodDisruptionBudget"));
        };
        let name = object::name(&budget).to_string();
        let generation = object::metadata(&budget)
            .and_then(|metadata| metadata.get("generation"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if status_int(&budget, "observedGeneration") < generation {
            return Err(still_processing(&name));
        }
        let allowed = status_int(&budget, "disruptionsAllowed");
        if allowed < 0 {
            return Err(Status::forbidden(
                &budget_resource,
                &name,
                "pdb disruptions allowed is negative",
            ));
        }
        let disrupted = budget
            .pointer("/status/disruptedPods")
            .and_then(Value::as_object)
            .map_or(0, |pods| pods.len());
        if disrupted > MAX_DISRUPTED_POD_SIZE {
            return Err(Status::forbidden(
                &budget_resource,
                &name,
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            ));
        }
        if allowed == 0 {
            return Err(too_many_requests(format!(
                "The disruption budget {name} needs {} healthy pods and has {} currently",
                status_int(&budget, "desiredHealthy"),
                status_int(&budget, "currentHealthy"),
            )));
        }
        if dry_run {
            return Ok(());
        }
        let now = crate::go::time::now_rfc3339();
        if !budget.get("status").is_some_and(Value::is_object) {
            budget["status"] = json!({});
        }
        budget["status"]["disruptionsAllowed"] = json!(allowed - 1);
        if allowed - 1 == 0 {
            crate::disruption_budget::update_disruption_allowed_condition(&mut budget, &now);
        }
        let disrupted_pods = &mut budget["status"]["disruptedPods"];
        if !disrupted_pods.is_object() {
            *disrupted_pods = json!({});
        }
        disrupted_pods[pod_name] = json!(now);
        let txn = Txn::single(Op::Put {
            key: key.to_string(),
            value: object::storage_bytes(&budget),
            expect: Expect::ModRevision(revision),
        });
        match commit::commit(api, txn).await {
            Ok(_) => return Ok(()),
            Err(StoreError::Backend(BackendError::PreconditionFailed { .. })) => continue,
            Err(other) => return Err(Status::internal(other)),
        }
    }
    Err(Status::timeout(
        "couldn't update PodDisruptionBudget due to conflicts",
        10,
    ))
}

/// `addConditionAndDeletePod`: the pod gets `DisruptionTarget=True`
/// (`EvictionByEvictionAPI`) unless this is a dry run, then is deleted
/// with the eviction's options (a pinned resourceVersion follows the
/// condition's write).
async fn add_condition_and_delete(
    api: &Api,
    pods: &Target<'_>,
    name: &str,
    mut options: DeleteOptions,
    caller: &Caller,
) -> Result<()> {
    if !options.is_dry_run() {
        let key = pods.key(name);
        let snapshot = api.store.snapshot();
        let (revision, mut pod) = pods
            .read_current(&snapshot, &key)?
            .ok_or_else(|| pod_not_found(name))?;
        let conflict =
            |why: String| Status::conflict_because(&GroupResource::new("", "Pod"), name, &why);
        if let Some(preconditions) = &options.preconditions {
            let uid = object::meta_str(&pod, "uid");
            if let Some(wanted) = preconditions.uid.as_deref().filter(|uid| !uid.is_empty()) {
                if wanted != uid {
                    return Err(conflict(format!("the UID in the precondition ({wanted}) does not match the UID in record ({uid}). The object might have been deleted and then recreated")));
                }
            }
            if let Some(wanted) = preconditions
                .resource_version
                .as_deref()
                .filter(|rv| !rv.is_empty())
            {
                if wanted != revision.to_string() {
                    return Err(conflict(format!("the ResourceVersion in the precondition ({wanted}) does not match the ResourceVersion in record ({revision}). The object might have been modified")));
                }
            }
        }
        let now = crate::go::time::now_rfc3339();
        let reason = Some(("EvictionByEvictionAPI", "Eviction API: evicting"));
        if update_pod_condition(&mut pod, "DisruptionTarget", "True", reason, &now) {
            let txn = Txn::single(Op::Put {
                key: key.clone(),
                value: commit::stored_bytes(api, pods, &key, &pod).await?,
                expect: Expect::ModRevision(revision),
            });
            let committed = match commit::commit(api, txn).await {
                Ok(committed) => committed,
                Err(StoreError::Backend(BackendError::PreconditionFailed { .. })) => {
                    return Err(Status::conflict(&GroupResource::new("", "pods"), name))
                }
                Err(other) => return Err(commit::map_store_error(pods, name, other)),
            };
            if !resource_version_is_unset(&options) {
                options = with_resource_version(&options, committed.revision.to_string());
            }
        }
    }
    delete_object(api, pods, name, &mut options, caller)
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dry_run_is_propagated_as_kube_does() {
        let mut options = DeleteOptions::default();
        propagate_dry_run(&mut options, vec!["All".into()]).unwrap();
        assert_eq!(options.dry_run, ["All"]);
        propagate_dry_run(&mut options, Vec::new()).unwrap();
        let mut body_only = DeleteOptions {
            dry_run: vec!["All".into()],
            ..DeleteOptions::default()
        };
        propagate_dry_run(&mut body_only, vec!["Other".into()]).unwrap_err();
    }

    #[test]
    fn terminal_pending_and_deleting_pods_skip_budgets() {
        for phase in ["Succeeded", "Failed", "Pending"] {
            assert!(can_ignore_budgets(&json!({"status": {"phase": phase}})));
        }
        assert!(!can_ignore_budgets(
            &json!({"status": {"phase": "Running"}})
        ));
        let deleting = json!({"metadata": {"deletionTimestamp": "2020-01-01T00:00:00Z"}, "status": {"phase": "Running"}});
        assert!(can_ignore_budgets(&deleting));
        assert!(!should_enforce_resource_version(&deleting));
        assert!(should_enforce_resource_version(
            &json!({"status": {"phase": "Pending"}})
        ));
    }

    #[test]
    fn refusals_carry_the_disruption_budget_cause() {
        let status = still_processing("pdb");
        assert_eq!((status.code, status.reason), (429, "TooManyRequests"));
        let json = status.to_json();
        assert_eq!(json["details"]["causes"][0]["reason"], "DisruptionBudget");
        assert_eq!(
            json["details"]["causes"][0]["message"],
            "The disruption budget pdb is still being processed by the server."
        );
    }
}
