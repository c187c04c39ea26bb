//! kube-controller-manager's ValidatingAdmissionPolicy status controller
//! (`pkg/controller/validatingadmissionpolicystatus/controller.go`): a
//! policy whose `metadata.generation` is past `status.observedGeneration`
//! is type-checked (`admission/policy/typecheck.rs`) and its status applied
//! as the controller's field manager, forced: `observedGeneration` and
//! `typeChecking.expressionWarnings` (an empty `typeChecking` when every
//! expression checks). kube writes no conditions here.

use std::sync::Arc;

use serde_json::{json, Value};

use super::client::{resource_path, Client, ClientError};
use super::queue::WorkQueue;
use crate::admission::policy::typecheck;
use crate::api::Api;
use crate::object::feed::{Feed, ObjectSnapshot, Update};

/// The controller's name, its field manager and service account.
pub(super) const NAME: &str = "validatingadmissionpolicy-status-controller";
const POLICY_PREFIX: &str = "/registry/validatingadmissionpolicies/";

pub(super) async fn run(api: Arc<Api>) {
    let client = Client::controller(api.clone(), NAME);
    let queue: Arc<WorkQueue<String>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    enqueue_all(&snapshot, &queue);
    let worker = {
        let queue = queue.clone();
        tokio::spawn(async move {
            loop {
                let name = queue.get().await;
                if let Err(error) = sync(&client, &name).await {
                    tracing::debug!(%name, %error, "writing a policy's status failed");
                    queue.add_after(name.clone(), super::RETRY_DELAY);
                }
                queue.done(&name);
            }
        })
    };
    let _abort_worker = AbortOnDrop(worker);
    loop {
        match feed.next().await {
            Update::Resync(snapshot) => enqueue_all(&snapshot, &queue),
            Update::Changes(changes) => {
                for change in changes {
                    if let Some(name) = change.key.strip_prefix(POLICY_PREFIX) {
                        queue.add(name.to_string());
                    }
                }
            }
        }
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn enqueue_all(snapshot: &ObjectSnapshot, queue: &WorkQueue<String>) {
    for (key, _) in snapshot.range(POLICY_PREFIX, None) {
        if let Some(name) = key.strip_prefix(POLICY_PREFIX) {
            queue.add(name.to_string());
        }
    }
}

/// `reconcile`.
async fn sync(client: &Client, name: &str) -> Result<(), ClientError> {
    let api = client.api();
    let Some(policy) = api
        .store
        .snapshot()
        .get(&format!("{POLICY_PREFIX}{name}"))
        .and_then(|entry| entry.object.value())
    else {
        return Ok(());
    };
    let Some(body) = status_apply(&policy, &api.registry.load()) else {
        return Ok(());
    };
    let Some(policies) = api.registry.lookup(
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicies",
    ) else {
        return Ok(());
    };
    let path = format!("{}/status", resource_path(policies, None, Some(name)));
    client.apply(&path, NAME, true, &body).await.map(|_| ())
}

/// The status to apply, `None` when the generation was observed already.
fn status_apply(policy: &Value, registry: &crate::registry::Registry) -> Option<Value> {
    let generation = policy
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let observed = policy
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if generation <= observed {
        return None;
    }
    let name = policy
        .pointer("/metadata/name")
        .cloned()
        .unwrap_or(Value::Null);
    let warnings: Vec<Value> = typecheck::check(policy, registry)
        .into_iter()
        .map(|warning| json!({"fieldRef": warning.field_ref, "warning": warning.warning}))
        .collect();
    let mut type_checking = json!({});
    if !warnings.is_empty() {
        type_checking["expressionWarnings"] = Value::Array(warnings);
    }
    Some(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "status": {"observedGeneration": generation, "typeChecking": type_checking},
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::registry::{builtin_resources, Registry};

    #[test]
    fn an_unobserved_generation_gets_its_warnings_and_an_observed_one_nothing() {
        let registry = Registry::new(builtin_resources());
        let mut policy = json!({
            "metadata": {"name": "p", "generation": 2},
            "spec": {
                "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["configmaps"]}]},
                "validations": [{"expression": "object.datax.size() < 3"}, {"expression": "has(object.data)"}],
            },
            "status": {"observedGeneration": 1},
        });
        assert_eq!(
            super::status_apply(&policy, &registry),
            Some(json!({
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingAdmissionPolicy",
                "metadata": {"name": "p"},
                "status": {"observedGeneration": 2, "typeChecking": {"expressionWarnings": [{
                    "fieldRef": "spec.validations[0].expression",
                    "warning": "/v1, Kind=ConfigMap: ERROR: <input>:1:7: undefined field 'datax'\n | object.datax.size() < 3\n | ......^\n",
                }]}},
            }))
        );
        policy["spec"]["validations"] = json!([{"expression": "has(object.data)"}]);
        assert_eq!(
            super::status_apply(&policy, &registry).unwrap()["status"],
            json!({"observedGeneration": 2, "typeChecking": {}})
        );
        policy["status"]["observedGeneration"] = json!(2);
        assert_eq!(super::status_apply(&policy, &registry), None);
    }
}
