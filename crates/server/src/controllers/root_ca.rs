//! The root-ca-cert-publisher (`pkg/controller/certificates/rootcacertpublisher/publisher.go`):
//! every active namespace has a ConfigMap `kube-root-ca.crt` holding the
//! cluster CA under `ca.crt`; deleted or changed, it is put back.

use std::sync::Arc;

use serde_json::{json, Value};

use super::client::{resource_path, Client, ClientError};
use super::queue::WorkQueue;
use super::resources::{key_of, Resources};
use crate::api::Api;
use crate::object;
use crate::object::feed::{Feed, ObjectSnapshot, Update};

pub const ROOT_CA_CONFIG_MAP: &str = "kube-root-ca.crt";
const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";
/// Workers; each namespace is independent.
const WORKERS: usize = 4;

pub(super) async fn run(api: Arc<Api>, root_ca_pem: String) {
    let client = Client::controller(api.clone(), "root-ca-cert-publisher");
    let resources = Resources::new(&api.registry.load());
    let root_ca = Arc::new(root_ca_pem);
    let queue: Arc<WorkQueue<String>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    enqueue_all(&snapshot, &queue);
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let (client, queue, root_ca) = (client.clone(), queue.clone(), root_ca.clone());
        workers.spawn(async move {
            loop {
                let namespace = queue.get().await;
                if let Err(error) = sync(&client, &namespace, &root_ca).await {
                    tracing::debug!(%namespace, %error, "publishing the root CA failed");
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
                        ("", "configmaps") if info.name == ROOT_CA_CONFIG_MAP => {
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
async fn sync(client: &Client, namespace: &str, root_ca: &str) -> Result<(), ClientError> {
    let api = client.api();
    let (Some(namespaces), Some(config_maps)) = (
        api.registry.lookup("", "v1", "namespaces"),
        api.registry.lookup("", "v1", "configmaps"),
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
    let active = found.pointer("/status/phase").and_then(Value::as_str) == Some("Active")
        && found.pointer("/metadata/deletionTimestamp").is_none();
    let data = json!({"ca.crt": root_ca});
    let existing = snapshot
        .get(&key_of(config_maps, namespace, ROOT_CA_CONFIG_MAP))
        .and_then(|entry| entry.object.value());
    let Some(mut existing) = existing else {
        if !active {
            return Ok(());
        }
        let body = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": ROOT_CA_CONFIG_MAP,
                "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION},
            },
            "data": data,
        });
        return match client
            .create(&resource_path(config_maps, Some(namespace), None), &body)
            .await
        {
            Ok(_) => Ok(()),
            // Don't retry a create if the namespace doesn't exist or is terminating.
            Err(error)
                if error.is_already_exists()
                    || error.is_not_found()
                    || error.has_cause("NamespaceTerminating") =>
            {
                Ok(())
            }
            Err(error) => Err(error),
        };
    };
    let described = existing
        .pointer(&format!(
            "/metadata/annotations/{}",
            DESCRIPTION_ANNOTATION.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        .is_some_and(|text| !text.is_empty());
    if existing.get("data") == Some(&data) && described {
        return Ok(());
    }
    existing["data"] = data;
    if let Some(metadata) = object::metadata_mut(&mut existing) {
        let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
        if !annotations.is_object() {
            *annotations = json!({});
        }
        annotations[DESCRIPTION_ANNOTATION] = json!(DESCRIPTION);
    }
    let path = resource_path(config_maps, Some(namespace), Some(ROOT_CA_CONFIG_MAP));
    match client.update(&path, &existing).await {
        Ok(_) => Ok(()),
        Err(error) if error.is_not_found() || error.is_conflict() => {
            // Gone or changed meanwhile: its change event brings us back.
            Ok(())
        }
        Err(error) => Err(error),
    }
}
