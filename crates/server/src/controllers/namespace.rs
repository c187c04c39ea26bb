//! The namespace controller (`pkg/controller/namespace`,
//! `deletion/namespaced_resources_deleter.go`): a namespace with a
//! deletionTimestamp is emptied — every namespaced resource is deleted with
//! deletecollection (background propagation, finalizers respected) — and,
//! once nothing is left, `kubernetes` is removed from `spec.finalizers`
//! through `namespaces/{name}/finalize`; the namespace then goes. Progress
//! and trouble are reported in kube's status conditions.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::client::{resource_path, Client};
use super::queue::WorkQueue;
use super::resources::{namespace_prefix, LiveResources, Resources};
use crate::api::Api;
use crate::object::feed::{Feed, ObjectSnapshot, Update};

/// The token this controller owns in `spec.finalizers`.
const FINALIZER_TOKEN: &str = "kubernetes";
/// kube-controller-manager's `--concurrent-namespace-syncs` default.
const WORKERS: usize = 10;
/// `finalizerEstimateSeconds`: how long content with finalizers is given
/// before the namespace is looked at again (changes wake it sooner).
const FINALIZER_ESTIMATE: Duration = Duration::from_secs(15);

pub(super) async fn run(api: Arc<Api>) {
    let client = Client::controller(api.clone(), "namespace-controller");
    let resources = Arc::new(LiveResources::new(api.registry.clone()));
    let queue: Arc<WorkQueue<String>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    let mut terminating = HashSet::new();
    resync(&snapshot, &mut terminating, &queue);
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let (client, resources, queue) = (client.clone(), resources.clone(), queue.clone());
        workers.spawn(async move {
            loop {
                let namespace = queue.get().await;
                match sync(&client, &resources.current(), &namespace).await {
                    Ok(Outcome::Done) => {}
                    Ok(Outcome::ContentRemaining) => {
                        // Half the estimate, as `nm.queue.AddAfter(key, estimate/2+1)`.
                        queue.add_after(namespace.clone(), FINALIZER_ESTIMATE / 2)
                    }
                    Err(error) => {
                        tracing::debug!(%namespace, %error, "namespace deletion failed; retrying");
                        queue.add_after(namespace.clone(), super::RETRY_DELAY);
                    }
                }
                queue.done(&namespace);
            }
        });
    }
    loop {
        match feed.next().await {
            Update::Resync(snapshot) => resync(&snapshot, &mut terminating, &queue),
            Update::Changes(changes) => {
                for change in changes {
                    let Some(info) = resources.current().parse_key(&change.key) else {
                        continue;
                    };
                    if (info.resource.group, info.resource.plural) == ("", "namespaces") {
                        let deleting = !change.deleted
                            && change
                                .object
                                .index()
                                .is_some_and(|index| index.is_deleting());
                        if deleting {
                            terminating.insert(info.name.clone());
                            queue.add(info.name);
                        } else {
                            terminating.remove(&info.name);
                        }
                    } else if !info.namespace.is_empty() && terminating.contains(&info.namespace) {
                        // Content of a terminating namespace changed: maybe it is empty now.
                        queue.add(info.namespace);
                    }
                }
            }
        }
    }
}

fn resync(snapshot: &ObjectSnapshot, terminating: &mut HashSet<String>, queue: &WorkQueue<String>) {
    terminating.clear();
    for (_, entry) in snapshot.range("/registry/namespaces/", None) {
        if let Some(namespace) = entry.object.index().filter(|index| index.is_deleting()) {
            let name = namespace.name().to_string();
            terminating.insert(name.clone());
            queue.add(name);
        }
    }
}

fn is_deleting(object: &Value) -> bool {
    object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|stamp| !stamp.is_null())
}

enum Outcome {
    Done,
    ContentRemaining,
}

/// `namespacedResourcesDeleter.Delete`.
async fn sync(
    client: &Client,
    resources: &Resources,
    name: &str,
) -> Result<Outcome, super::ClientError> {
    let namespaces = client
        .api()
        .registry
        .lookup("", "v1", "namespaces")
        .ok_or_else(|| internal("namespaces are not served"))?;
    let path = resource_path(namespaces, None, Some(name));
    let mut namespace = match client.get(&path).await {
        Ok(namespace) => namespace,
        Err(error) if error.is_not_found() => return Ok(Outcome::Done),
        Err(error) => return Err(error),
    };
    if !is_deleting(&namespace) {
        return Ok(Outcome::Done);
    }
    // updateNamespaceStatusFunc: make sure the phase says Terminating.
    if namespace.pointer("/status/phase").and_then(Value::as_str) != Some("Terminating") {
        set_phase_terminating(&mut namespace);
        namespace = client.update(&format!("{path}/status"), &namespace).await?;
    }
    if !finalizers(&namespace).iter().any(|f| f == FINALIZER_TOKEN) {
        // Finalized by us already; other finalizers are someone else's.
        return Ok(Outcome::Done);
    }
    let remaining = delete_all_content(client, resources, name).await;
    let conditions = conditions_for(&remaining);
    if update_conditions(&mut namespace, &conditions) {
        match client.update(&format!("{path}/status"), &namespace).await {
            Ok(updated) => namespace = updated,
            Err(error) if error.is_not_found() => return Ok(Outcome::Done),
            Err(error) => return Err(error),
        }
    }
    if !remaining.errors.is_empty() {
        return Err(internal(&remaining.errors.join(", ")));
    }
    if remaining.items > 0 {
        return Ok(Outcome::ContentRemaining);
    }
    // finalizeNamespace: everything is gone; give up our token.
    let kept: Vec<String> = finalizers(&namespace)
        .into_iter()
        .filter(|f| f != FINALIZER_TOKEN)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if let Some(spec) = namespace
        .as_object_mut()
        .map(|map| map.entry("spec").or_insert_with(|| json!({})))
    {
        spec["finalizers"] = json!(kept);
    }
    match client.update(&format!("{path}/finalize"), &namespace).await {
        Ok(_) => Ok(Outcome::Done),
        Err(error) if error.is_not_found() => Ok(Outcome::Done),
        Err(error) => Err(error),
    }
}

fn internal(message: &str) -> super::ClientError {
    super::ClientError {
        code: 500,
        reason: "InternalError".into(),
        message: message.to_string(),
        causes: Vec::new(),
    }
}

fn set_phase_terminating(namespace: &mut Value) {
    if let Some(map) = namespace.as_object_mut() {
        let status = map.entry("status").or_insert_with(|| json!({}));
        if let Some(status) = status.as_object_mut() {
            status.insert("phase".into(), json!("Terminating"));
        }
    }
}

fn finalizers(namespace: &Value) -> Vec<String> {
    namespace
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// What is left after one round of deletion.
#[derive(Debug, Default)]
struct Remaining {
    items: usize,
    /// `resource.group` → count, as kube's condition message names them.
    by_resource: BTreeMap<String, usize>,
    by_finalizer: BTreeMap<String, usize>,
    /// Failed deletions, as the API answered them.
    errors: Vec<String>,
}

/// `deleteAllContent`: deletecollection for every namespaced resource that
/// holds something in the namespace, then count what is left.
async fn delete_all_content(client: &Client, resources: &Resources, namespace: &str) -> Remaining {
    let mut remaining = Remaining::default();
    let options = json!({
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Background",
    });
    let deletable: Vec<_> = resources
        .stored()
        .filter(|resource| resource.namespaced && resource.has_verb("delete"))
        .collect();
    let snapshot = client.api().store.snapshot();
    for resource in &deletable {
        let prefix = namespace_prefix(resource, namespace);
        // Only objects not yet being deleted need a request (the rest wait on
        // their finalizers); a resource without any is skipped.
        let pending = snapshot.range(&prefix, None).any(|(_, entry)| {
            entry
                .object
                .index()
                .is_none_or(|index| !index.is_deleting())
        });
        if !pending {
            continue;
        }
        let collection = resource_path(resource, Some(namespace), None);
        let result = if resource.has_verb("deletecollection") {
            client.delete(&collection, &options).await.map(|_| ())
        } else {
            delete_each(client, resource, namespace, &prefix, &options).await
        };
        if let Err(error) = result {
            remaining.errors.push(error.message);
        }
    }
    let snapshot = client.api().store.snapshot();
    for resource in &deletable {
        let prefix = namespace_prefix(resource, namespace);
        let mut count = 0;
        for (_, entry) in snapshot.range(&prefix, None) {
            count += 1;
            for finalizer in entry
                .object
                .index()
                .map(|index| index.finalizers())
                .unwrap_or_default()
            {
                *remaining
                    .by_finalizer
                    .entry(finalizer.to_string())
                    .or_default() += 1;
            }
        }
        if count > 0 {
            remaining.items += count;
            *remaining
                .by_resource
                .entry(format!("{}.{}", resource.plural, resource.group))
                .or_default() += count;
        }
    }
    remaining
}

/// `deleteEachItem`, for resources without deletecollection.
async fn delete_each(
    client: &Client,
    resource: &crate::registry::ResourceDef,
    namespace: &str,
    prefix: &str,
    options: &Value,
) -> Result<(), super::ClientError> {
    let snapshot = client.api().store.snapshot();
    for (_, entry) in snapshot.range(prefix, None) {
        let Some(index) = entry.object.index() else {
            continue;
        };
        let path = resource_path(resource, Some(namespace), Some(index.name()));
        match client.delete(&path, options).await {
            Ok(_) => {}
            Err(error) if error.is_not_found() => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// The condition types the deleter maintains, in kube's order, with their
/// "all is well" reason and message (`status_condition_utils.go`).
const CONDITION_TYPES: &[(&str, &str, &str)] = &[
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        "NamespaceContentRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        "NamespaceFinalizersRemaining",
        "ContentHasNoFinalizers",
        "All content-preserving finalizers finished",
    ),
];

/// (type, status, reason, message) of the failing conditions.
fn conditions_for(
    remaining: &Remaining,
) -> Vec<(&'static str, &'static str, &'static str, String)> {
    let mut failing = Vec::new();
    if !remaining.errors.is_empty() {
        let mut messages = remaining.errors.clone();
        messages.sort();
        failing.push((
            "NamespaceDeletionContentFailure",
            "True",
            "ContentDeletionFailed",
            format!(
                "Failed to delete all resource types, {} remaining: {}",
                messages.len(),
                messages.join(", ")
            ),
        ));
    }
    if !remaining.by_resource.is_empty() {
        let mut parts: Vec<String> = remaining
            .by_resource
            .iter()
            .map(|(resource, count)| format!("{resource} has {count} resource instances"))
            .collect();
        parts.sort();
        failing.push((
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            format!("Some resources are remaining: {}", parts.join(", ")),
        ));
    }
    if !remaining.by_finalizer.is_empty() {
        let mut parts: Vec<String> = remaining
            .by_finalizer
            .iter()
            .map(|(finalizer, count)| format!("{finalizer} in {count} resource instances"))
            .collect();
        parts.sort();
        failing.push((
            "NamespaceFinalizersRemaining",
            "True",
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                parts.join(", ")
            ),
        ));
    }
    failing
}

/// `updateConditions`: every maintained type is present, failing ones as
/// given, the others in their "ok" form; true when anything changed.
fn update_conditions(
    namespace: &mut Value,
    failing: &[(&'static str, &'static str, &'static str, String)],
) -> bool {
    let now = crate::go::time::now_rfc3339();
    let Some(map) = namespace.as_object_mut() else {
        return false;
    };
    let status = map.entry("status").or_insert_with(|| json!({}));
    let Some(status) = status.as_object_mut() else {
        return false;
    };
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return false;
    };
    let mut changed = false;
    for (kind, ok_reason, ok_message) in CONDITION_TYPES {
        let (status, reason, message) = match failing.iter().find(|(t, ..)| t == kind) {
            Some((_, status, reason, message)) => (*status, *reason, message.clone()),
            None => ("False", *ok_reason, ok_message.to_string()),
        };
        let existing = list
            .iter_mut()
            .find(|condition| condition.get("type").and_then(Value::as_str) == Some(kind));
        match existing {
            None => {
                list.push(json!({
                    "type": kind,
                    "status": status,
                    "lastTransitionTime": now,
                    "reason": reason,
                    "message": message,
                }));
                changed = true;
            }
            Some(condition) => {
                let same = condition.get("status").and_then(Value::as_str) == Some(status)
                    && condition.get("reason").and_then(Value::as_str) == Some(reason)
                    && condition.get("message").and_then(Value::as_str) == Some(message.as_str());
                if same {
                    continue;
                }
                if condition.get("status").and_then(Value::as_str) != Some(status) {
                    condition["lastTransitionTime"] = json!(now);
                }
                condition["status"] = json!(status);
                condition["reason"] = json!(reason);
                condition["message"] = json!(message);
                changed = true;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_follow_kube_wording() {
        let mut remaining = Remaining {
            items: 1,
            ..Default::default()
        };
        remaining.by_resource.insert("configmaps.".into(), 1);
        remaining.by_finalizer.insert("example.com/keep".into(), 1);
        let mut namespace = json!({"metadata": {"name": "x"}, "status": {"phase": "Terminating"}});
        assert!(update_conditions(
            &mut namespace,
            &conditions_for(&remaining)
        ));
        let conditions = namespace["status"]["conditions"].as_array().unwrap();
        let types: Vec<&str> = conditions
            .iter()
            .map(|c| c["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "NamespaceDeletionDiscoveryFailure",
                "NamespaceDeletionGroupVersionParsingFailure",
                "NamespaceDeletionContentFailure",
                "NamespaceContentRemaining",
                "NamespaceFinalizersRemaining"
            ]
        );
        assert_eq!(conditions[3]["reason"], "SomeResourcesRemain");
        assert_eq!(
            conditions[3]["message"],
            "Some resources are remaining: configmaps. has 1 resource instances"
        );
        assert_eq!(conditions[4]["status"], "True");
        assert_eq!(
            conditions[4]["message"],
            "Some content in the namespace has finalizers remaining: example.com/keep in 1 resource instances"
        );
        assert_eq!(conditions[2]["status"], "False");
        assert!(
            !update_conditions(&mut namespace, &conditions_for(&remaining)),
            "stable"
        );
        assert!(update_conditions(
            &mut namespace,
            &conditions_for(&Remaining::default())
        ));
        assert_eq!(
            namespace["status"]["conditions"][4]["reason"],
            "ContentHasNoFinalizers"
        );
    }
}
