//! What a DELETE does to the object before (or instead of) removing it:
//! `rest.BeforeDelete` (`registry/rest/delete.go`: preconditions, graceful
//! deletion, shortening a pending grace period), the pod strategy's
//! `CheckGracefulDelete` (`pkg/registry/core/pod/strategy.go`), and the
//! store's garbage-collection finalizers and `markAsDeleting`
//! (`registry/generic/registry/store.go`).

use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use super::options::{DeleteOptions, BACKGROUND, FOREGROUND, ORPHAN};
use crate::object;
use crate::registry::ResourceDef;
use crate::status::{GroupResource, Result, Status};

/// `metav1.FinalizerOrphanDependents`.
pub const FINALIZER_ORPHAN: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub const FINALIZER_FOREGROUND: &str = "foregroundDeletion";

/// `rest.GarbageCollectionPolicy` of a kind's delete strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcPolicy {
    DeleteDependents,
    OrphanDependents,
}

/// `DefaultGarbageCollectionPolicy`: replication controllers orphan in v1
/// (`replicationcontroller/strategy.go`, for backwards compatibility); every
/// other served kind deletes dependents (the orphaning defaults of
/// extensions/v1beta1 and apps/v1beta1/v1beta2 are not served).
pub fn default_gc_policy(resource: &ResourceDef) -> GcPolicy {
    match (resource.group, resource.plural) {
        ("", "replicationcontrollers") => GcPolicy::OrphanDependents,
        _ => GcPolicy::DeleteDependents,
    }
}

/// `metadata.finalizers`.
pub fn finalizers(object: &Value) -> Vec<String> {
    object::metadata(object)
        .and_then(|metadata| metadata.get("finalizers"))
        .and_then(Value::as_array)
        .map(|values| {
            values
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

pub fn set_finalizers(object: &mut Value, finalizers: Vec<String>) {
    if let Some(metadata) = object::metadata_mut(object) {
        if finalizers.is_empty() {
            metadata.remove("finalizers");
        } else {
            metadata.insert("finalizers".into(), json!(finalizers));
        }
    }
}

pub fn deletion_timestamp(object: &Value) -> Option<&str> {
    object::metadata(object)
        .and_then(|metadata| metadata.get("deletionTimestamp"))
        .and_then(Value::as_str)
}

pub fn deletion_grace_period(object: &Value) -> Option<i64> {
    object::metadata(object)
        .and_then(|metadata| metadata.get("deletionGracePeriodSeconds"))
        .and_then(Value::as_i64)
}

/// `shouldOrphanDependents`: options first, then the object's finalizers, then the default.
fn should_orphan(policy: GcPolicy, options: &DeleteOptions, finalizers: &[String]) -> bool {
    if let Some(orphan) = options.orphan_dependents {
        return orphan;
    }
    match options.propagation_policy.as_deref() {
        Some(ORPHAN) => return true,
        Some(BACKGROUND | FOREGROUND) => return false,
        _ => {}
    }
    for finalizer in finalizers {
        match finalizer.as_str() {
            FINALIZER_ORPHAN => return true,
            FINALIZER_FOREGROUND => return false,
            _ => {}
        }
    }
    policy == GcPolicy::OrphanDependents
}

/// `shouldDeleteDependents`.
fn should_delete_dependents(options: &DeleteOptions, finalizers: &[String]) -> bool {
    if options.orphan_dependents.is_some() {
        return false;
    }
    match options.propagation_policy.as_deref() {
        Some(FOREGROUND) => return true,
        Some(BACKGROUND | ORPHAN) => return false,
        _ => {}
    }
    for finalizer in finalizers {
        match finalizer.as_str() {
            FINALIZER_FOREGROUND => return true,
            FINALIZER_ORPHAN => return false,
            _ => {}
        }
    }
    false
}

/// `deletionFinalizersForGarbageCollection`: the finalizers the object should
/// carry for the garbage collector, when they differ (as a set) from its own.
pub fn gc_finalizers(
    resource: &ResourceDef,
    object: &Value,
    options: &DeleteOptions,
) -> Option<Vec<String>> {
    let current = finalizers(object);
    let policy = default_gc_policy(resource);
    let orphan = should_orphan(policy, options, &current);
    let foreground = should_delete_dependents(options, &current);
    let mut wanted: Vec<String> = current
        .iter()
        .filter(|finalizer| *finalizer != FINALIZER_ORPHAN && *finalizer != FINALIZER_FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        wanted.push(FINALIZER_ORPHAN.into());
    }
    if foreground {
        wanted.push(FINALIZER_FOREGROUND.into());
    }
    let as_set = |list: &[String]| {
        list.iter()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
    };
    (as_set(&current) != as_set(&wanted)).then_some(wanted)
}

/// What `BeforeDelete` decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The object is to be updated with a deletion timestamp and grace period.
    pub graceful: bool,
    /// A graceful deletion is already under way and this request changes nothing.
    pub pending: bool,
}

/// Kinds whose strategy is a `RESTGracefulDeleteStrategy`: pods only.
fn is_pod(resource: &ResourceDef) -> bool {
    (resource.group, resource.plural) == ("", "pods")
}

/// `podStrategy.CheckGracefulDelete`: always graceful, with the period taken
/// from the options or `spec.terminationGracePeriodSeconds`, and zero for a
/// pod that is unscheduled or already terminated.
fn check_pod_graceful_delete(pod: &Value, options: &mut DeleteOptions) {
    let mut period = options.grace_period_seconds.unwrap_or_else(|| {
        pod.pointer("/spec/terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    });
    let node = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if node.is_empty() {
        period = 0;
    }
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    if phase == "Failed" || phase == "Succeeded" {
        period = 0;
    }
    if period < 0 {
        period = 1;
    }
    options.grace_period_seconds = Some(period);
}

/// `rest.BeforeDelete`. Mutates `object` (deletion timestamp, grace period,
/// generation) and `options` (the grace period in effect), as upstream does.
pub fn before_delete(
    resource: &ResourceDef,
    object: &mut Value,
    options: &mut DeleteOptions,
    now: SystemTime,
) -> Result<Decision> {
    let name = object::name(object).to_string();
    if let Some(preconditions) = &options.preconditions {
        // The conflict names the kind, not the resource (`schema.GroupResource{Resource: gvk.Kind}`).
        let kind = GroupResource::new(resource.group, resource.kind);
        let uid = object::meta_str(object, "uid");
        if let Some(expected) = preconditions
            .uid
            .as_deref()
            .filter(|expected| *expected != uid)
        {
            return Err(Status::conflict_because(
                &kind,
                &name,
                &format!(
                    "the UID in the precondition ({expected}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
                ),
            ));
        }
        let revision = object::resource_version(object);
        if let Some(expected) = preconditions
            .resource_version
            .as_deref()
            .filter(|expected| *expected != revision)
        {
            return Err(Status::conflict_because(
                &kind,
                &name,
                &format!(
                    "the ResourceVersion in the precondition ({expected}) does not match the ResourceVersion in record ({revision}). The object might have been modified"
                ),
            ));
        }
    }
    // Negative values are treated as one second on the delete path.
    if options
        .grace_period_seconds
        .is_some_and(|seconds| seconds < 0)
    {
        options.grace_period_seconds = Some(1);
    }
    if deletion_grace_period(object).is_some_and(|seconds| seconds < 0) {
        set_meta(object, "deletionGracePeriodSeconds", json!(1));
    }
    if !is_pod(resource) {
        return Ok(Decision {
            graceful: false,
            pending: false,
        });
    }
    if let Some(timestamp) = deletion_timestamp(object).map(str::to_string) {
        // Already being deleted: the grace period may only be shortened.
        let current = match deletion_grace_period(object) {
            None | Some(0) => {
                return Ok(Decision {
                    graceful: false,
                    pending: false,
                })
            }
            Some(current) => current,
        };
        if let Some(period) = options.grace_period_seconds {
            if period >= current {
                return Ok(Decision {
                    graceful: false,
                    pending: true,
                });
            }
            let deadline = crate::go::time::parse_system_time(&timestamp).unwrap_or(now)
                - Duration::from_secs(current.unsigned_abs())
                + Duration::from_secs(period.unsigned_abs());
            set_meta(
                object,
                "deletionTimestamp",
                json!(crate::go::time::rfc3339(deadline)),
            );
            set_meta(object, "deletionGracePeriodSeconds", json!(period));
            return Ok(Decision {
                graceful: true,
                pending: false,
            });
        }
        options.grace_period_seconds = Some(current);
        return Ok(Decision {
            graceful: false,
            pending: true,
        });
    }
    check_pod_graceful_delete(object, options);
    let period = options.grace_period_seconds.unwrap_or(0);
    let deadline = now + Duration::from_secs(period.unsigned_abs());
    set_meta(
        object,
        "deletionTimestamp",
        json!(crate::go::time::rfc3339(deadline)),
    );
    set_meta(object, "deletionGracePeriodSeconds", json!(period));
    bump_generation(object);
    Ok(Decision {
        graceful: true,
        pending: false,
    })
}

/// `markAsDeleting`: a deletion timestamp (now, unless an earlier one is set)
/// and a zero grace period, for kinds without graceful deletion held by finalizers.
pub fn mark_as_deleting(object: &mut Value, now: SystemTime) {
    let existing = deletion_timestamp(object).map(str::to_string);
    if existing.is_none() {
        bump_generation(object);
    }
    let now_text = crate::go::time::rfc3339(now);
    let later = existing
        .as_deref()
        .and_then(crate::go::time::parse_system_time)
        .is_some_and(|existing| existing > now);
    if existing.is_none() || later {
        set_meta(object, "deletionTimestamp", json!(now_text));
    }
    set_meta(object, "deletionGracePeriodSeconds", json!(0));
}

fn bump_generation(object: &mut Value) {
    let generation = object::metadata(object)
        .and_then(|metadata| metadata.get("generation"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if generation > 0 {
        set_meta(object, "generation", json!(generation + 1));
    }
}

fn set_meta(object: &mut Value, field: &str, value: Value) {
    if let Some(metadata) = object::metadata_mut(object) {
        metadata.insert(field.into(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn def(group: &str, plural: &str) -> &'static ResourceDef {
        let registry = Registry::new(crate::registry::builtin_resources());
        registry.lookup(group, "v1", plural).expect("served")
    }

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn gc_finalizers_follow_options_then_object_then_default() {
        let configmaps = def("", "configmaps");
        let plain = json!({"metadata": {"name": "a", "finalizers": ["x"]}});
        let with = |query: &str| {
            let options = DeleteOptions::from_query(&crate::query::Query::parse(query)).unwrap();
            gc_finalizers(configmaps, &plain, &options)
        };
        assert_eq!(with(""), None, "background by default: nothing to add");
        assert_eq!(
            with("propagationPolicy=Orphan"),
            Some(vec!["x".into(), "orphan".into()])
        );
        assert_eq!(
            with("propagationPolicy=Foreground"),
            Some(vec!["x".into(), "foregroundDeletion".into()])
        );
        assert_eq!(with("orphanDependents=false"), None);
        let orphaned = json!({"metadata": {"finalizers": ["orphan"]}});
        let background =
            DeleteOptions::from_query(&crate::query::Query::parse("propagationPolicy=Background"))
                .unwrap();
        assert_eq!(
            gc_finalizers(configmaps, &orphaned, &background),
            Some(vec![])
        );
        let rcs = def("", "replicationcontrollers");
        assert_eq!(
            gc_finalizers(rcs, &json!({"metadata": {}}), &DeleteOptions::default()),
            Some(vec!["orphan".into()]),
            "replication controllers orphan by default in v1"
        );
    }

    #[test]
    fn pods_delete_gracefully_when_bound() {
        let pods = def("", "pods");
        let now = at(1_000_000);
        let mut bound = json!({"metadata": {"name": "p", "generation": 1},
            "spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 30}});
        let mut options = DeleteOptions::default();
        let decision = before_delete(pods, &mut bound, &mut options, now).unwrap();
        assert_eq!(
            decision,
            Decision {
                graceful: true,
                pending: false
            }
        );
        assert_eq!(options.grace_period_seconds, Some(30));
        assert_eq!(deletion_grace_period(&bound), Some(30));
        assert_eq!(
            deletion_timestamp(&bound),
            Some(crate::go::time::rfc3339(at(1_000_030)).as_str())
        );
        assert_eq!(bound["metadata"]["generation"], json!(2));
        // Again without a grace period: pending, nothing changes.
        let mut again = DeleteOptions::default();
        let decision = before_delete(pods, &mut bound.clone(), &mut again, now).unwrap();
        assert_eq!(
            decision,
            Decision {
                graceful: false,
                pending: true
            }
        );
        // A shorter one moves the deadline.
        let mut shorter = DeleteOptions {
            grace_period_seconds: Some(10),
            ..Default::default()
        };
        let decision = before_delete(pods, &mut bound, &mut shorter, now).unwrap();
        assert_eq!(
            decision,
            Decision {
                graceful: true,
                pending: false
            }
        );
        assert_eq!(
            deletion_timestamp(&bound),
            Some(crate::go::time::rfc3339(at(1_000_010)).as_str())
        );
        // Unscheduled: graceful with zero.
        let mut unscheduled =
            json!({"metadata": {"name": "q"}, "spec": {"terminationGracePeriodSeconds": 30}});
        let mut options = DeleteOptions::default();
        before_delete(pods, &mut unscheduled, &mut options, now).unwrap();
        assert_eq!(options.grace_period_seconds, Some(0));
    }

    #[test]
    fn preconditions_conflict_with_kube_messages() {
        let deployments = def("apps", "deployments");
        let mut object = json!({"metadata": {"name": "d", "uid": "u1", "resourceVersion": "5"}});
        let mut options = DeleteOptions {
            preconditions: Some(super::super::options::Preconditions {
                uid: Some("u2".into()),
                resource_version: None,
            }),
            ..Default::default()
        };
        let status = before_delete(deployments, &mut object, &mut options, at(0)).unwrap_err();
        assert_eq!(status.code, 409);
        assert_eq!(
            status.message,
            "Operation cannot be fulfilled on Deployment.apps \"d\": the UID in the precondition (u2) does not match the UID in record (u1). The object might have been deleted and then recreated"
        );
    }

    #[test]
    fn mark_as_deleting_keeps_an_earlier_timestamp() {
        let mut object = json!({"metadata": {"generation": 3}});
        mark_as_deleting(&mut object, at(100));
        assert_eq!(object["metadata"]["generation"], json!(4));
        assert_eq!(deletion_grace_period(&object), Some(0));
        mark_as_deleting(&mut object, at(200));
        assert_eq!(
            deletion_timestamp(&object),
            Some(crate::go::time::rfc3339(at(100)).as_str())
        );
        assert_eq!(object["metadata"]["generation"], json!(4));
    }
}
