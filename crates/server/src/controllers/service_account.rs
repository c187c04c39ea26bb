//! The serviceaccount controller (`pkg/controller/serviceaccount/serviceaccounts_controller.go`):
//! every active namespace has a ServiceAccount `default`; deleted, it comes back.

use std::sync::Arc;

use serde_json::json;

use super::client::{resource_path, Client, ClientError};
use super::queue::WorkQueue;
use super::resources::{key_of, Resources};
use crate::api::Api;
use crate::object::feed::{Feed, ObjectSnapshot, Update};

const DEFAULT_SERVICE_ACCOUNT: &str = "default";
/// kube-controller-manager's `--concurrent-serviceaccount-syncs` default.
const WORKERS: usize = 5;

pub(super) async fn run(api: Arc<Api>) {
    let client = Client::controller(api.clone(), "service-account-controller");
    let resources = Resources::new(&api.registry.load());
    let queue: Arc<WorkQueue<String>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    enqueue_all(&snapshot, &queue);
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let (client, queue) = (client.clone(), queue.clone());
        workers.spawn(async move {
            loop {
                let namespace = queue.get().await;
                if let Err(error) = sync(&client, &namespace).await {
                    tracing::debug!(%namespace, %error, "creating the default service account failed");
                    queue.add_after(namespace.clone(), super::RETRY_DELAY);
                }
                queue.done(&namespace);
            }
        });
    }
    loop {
        match feed.next().await {
            Update::Resync(snapshot) => enqueue_all(&snapshot, &queue),
            Update::Changes(changes) => {
                for change in changes {
                    let Some(info) = resources.parse_key(&change.key) else {
                        continue;
                    };
                    match (info.resource.group, info.resource.plural) {
                        ("", "namespaces") if !change.deleted => queue.add(info.name),
                        ("", "serviceaccounts")
                            if change.deleted && info.name == DEFAULT_SERVICE_ACCOUNT =>
                        {
                            queue.add(info.namespace)
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

fn enqueue_all(snapshot: &ObjectSnapshot, queue: &WorkQueue<String>) {
    for (_, entry) in snapshot.range("/registry/namespaces/", None) {
        if let Some(namespace) = entry.object.index() {
            queue.add(namespace.name().to_string());
        }
    }
}

/// `syncNamespace`.
async fn sync(client: &Client, namespace: &str) -> Result<(), ClientError> {
    let api = client.api();
    let (Some(namespaces), Some(service_accounts)) = (
        api.registry.lookup("", "v1", "namespaces"),
        api.registry.lookup("", "v1", "serviceaccounts"),
    ) else {
        return Ok(());
    };
    let snapshot = api.store.snapshot();
    let Some(found) = snapshot
        .get(&key_of(namespaces, "", namespace))
        .and_then(|entry| entry.object.value())
    else {
        return Ok(());
    };
    // Nothing is created in a namespace that is not Active.
    if found.pointer("/status/phase").and_then(|p| p.as_str()) != Some("Active")
        || found.pointer("/metadata/deletionTimestamp").is_some()
    {
        return Ok(());
    }
    let key = key_of(service_accounts, namespace, DEFAULT_SERVICE_ACCOUNT);
    if snapshot.get(&key).is_some() {
        return Ok(());
    }
    let body = json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": DEFAULT_SERVICE_ACCOUNT},
    });
    match client
        .create(
            &resource_path(service_accounts, Some(namespace), None),
            &body,
        )
        .await
    {
        Ok(_) => Ok(()),
        // Created meanwhile, or the namespace went or is terminating.
        Err(error)
            if error.is_already_exists()
                || error.is_not_found()
                || error.has_cause("NamespaceTerminating") =>
        {
            Ok(())
        }
        Err(error) => Err(error),
    }
}
