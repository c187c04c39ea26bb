//! The legacy token controller (`pkg/controller/serviceaccount/tokens_controller.go`,
//! kube-controller-manager's `serviceaccount-token`): a Secret of type
//! `kubernetes.io/service-account-token` naming a ServiceAccount in its
//! `kubernetes.io/service-account.name` annotation gets a signed token,
//! `ca.crt` and `namespace`; one whose ServiceAccount is gone (or has
//! another uid) is deleted, as is every such Secret when its ServiceAccount is.

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};

use super::client::{resource_path, Client, ClientError};
use super::queue::WorkQueue;
use super::resources::Resources;
use crate::api::Api;
use crate::object::feed::{Feed, ObjectSnapshot, Update};
use crate::serviceaccount::claims::{legacy_claims, ObjectRef};

/// `v1.SecretTypeServiceAccountToken`.
pub const SERVICE_ACCOUNT_TOKEN_TYPE: &str = "kubernetes.io/service-account-token";
/// `v1.ServiceAccountNameKey`, `v1.ServiceAccountUIDKey`.
pub const SERVICE_ACCOUNT_NAME_KEY: &str = "kubernetes.io/service-account.name";
pub const SERVICE_ACCOUNT_UID_KEY: &str = "kubernetes.io/service-account.uid";
/// kube-controller-manager's `--concurrent-serviceaccount-token-syncs` default.
const WORKERS: usize = 5;

/// A Secret to sync, by namespace and name.
type SecretKey = (String, String);

pub(super) async fn run(api: Arc<Api>, root_ca_pem: String) {
    let client = Client::controller_manager(api.clone(), "tokens-controller");
    let resources = Resources::new(&api.registry.load());
    let queue: Arc<WorkQueue<SecretKey>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    enqueue_all(&snapshot, &queue, None);
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let (client, queue, root_ca_pem) = (client.clone(), queue.clone(), root_ca_pem.clone());
        workers.spawn(async move {
            loop {
                let key = queue.get().await;
                if let Err(error) = sync_secret(&client, &key.0, &key.1, &root_ca_pem).await {
                    tracing::debug!(namespace = %key.0, name = %key.1, %error, "syncing a service-account token secret failed");
                    queue.add_after(key.clone(), super::RETRY_DELAY);
                }
                queue.done(&key);
            }
        });
    }
    loop {
        match feed.next().await {
            Update::Resync(snapshot) => enqueue_all(&snapshot, &queue, None),
            Update::Changes(changes) => {
                let mut service_accounts = Vec::new();
                for change in changes {
                    let Some(info) = resources.parse_key(&change.key) else {
                        continue;
                    };
                    match (info.resource.group, info.resource.plural) {
                        ("", "secrets") if !change.deleted => {
                            queue.add((info.namespace, info.name));
                        }
                        ("", "serviceaccounts") => {
                            service_accounts.push((info.namespace, info.name));
                        }
                        _ => {}
                    }
                }
                if !service_accounts.is_empty() {
                    let snapshot = api.store.snapshot();
                    for (namespace, name) in service_accounts {
                        enqueue_all(&snapshot, &queue, Some((&namespace, &name)));
                    }
                }
            }
        }
    }
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Queues the token Secrets of the snapshot, or only those of one
/// ServiceAccount (`namespace`, `name`).
fn enqueue_all(
    snapshot: &ObjectSnapshot,
    queue: &WorkQueue<SecretKey>,
    service_account: Option<(&str, &str)>,
) {
    let prefix = match service_account {
        Some((namespace, _)) => format!("/registry/secrets/{namespace}/"),
        None => "/registry/secrets/".to_string(),
    };
    for (_, entry) in snapshot.range(&prefix, None) {
        let Some(json) = entry.object.json() else {
            continue;
        };
        // Only token Secrets are parsed.
        if memchr::memmem::find(json, SERVICE_ACCOUNT_TOKEN_TYPE.as_bytes()).is_none() {
            continue;
        }
        let Some(secret) = entry.object.value() else {
            continue;
        };
        if text(&secret, "/type") != SERVICE_ACCOUNT_TOKEN_TYPE {
            continue;
        }
        if let Some((_, name)) = service_account {
            if text(
                &secret,
                &format!(
                    "/metadata/annotations/{}",
                    pointer_escape(SERVICE_ACCOUNT_NAME_KEY)
                ),
            ) != name
            {
                continue;
            }
        }
        queue.add((
            text(&secret, "/metadata/namespace").to_string(),
            text(&secret, "/metadata/name").to_string(),
        ));
    }
}

/// A JSON pointer segment (`/` is `~1`).
fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `syncSecret`: delete the Secret when its ServiceAccount is gone, else
/// fill what it lacks (`generateTokenIfNeeded`).
async fn sync_secret(
    client: &Client,
    namespace: &str,
    name: &str,
    root_ca_pem: &str,
) -> Result<(), ClientError> {
    let api = client.api();
    let (Some(secrets), Some(service_accounts)) = (
        api.registry.lookup("", "v1", "secrets"),
        api.registry.lookup("", "v1", "serviceaccounts"),
    ) else {
        return Ok(());
    };
    let snapshot = api.store.snapshot();
    let Some(mut secret) = snapshot
        .get(&super::key_of(secrets, namespace, name))
        .and_then(|entry| entry.object.value())
    else {
        return Ok(());
    };
    if text(&secret, "/type") != SERVICE_ACCOUNT_TOKEN_TYPE
        || secret.pointer("/metadata/deletionTimestamp").is_some()
    {
        return Ok(());
    }
    let annotation = |key: &str| {
        text(
            &secret,
            &format!("/metadata/annotations/{}", pointer_escape(key)),
        )
        .to_string()
    };
    let sa_name = annotation(SERVICE_ACCOUNT_NAME_KEY);
    let sa_uid = annotation(SERVICE_ACCOUNT_UID_KEY);
    let service_account = snapshot
        .get(&super::key_of(service_accounts, namespace, &sa_name))
        .and_then(|entry| entry.object.index().map(|index| index.uid().to_string()))
        .filter(|uid| sa_uid.is_empty() || *uid == sa_uid);
    let path = resource_path(secrets, Some(namespace), Some(name));
    let Some(service_account_uid) = service_account else {
        // "Service account does not exist, deleting token".
        let uid = text(&secret, "/metadata/uid").to_string();
        return match client
            .delete(&path, &json!({"preconditions": {"uid": uid}}))
            .await
        {
            Ok(_) => Ok(()),
            Err(error) if error.is_not_found() || error.is_conflict() => Ok(()),
            Err(error) => Err(error),
        };
    };
    let data = |key: &str| {
        secret
            .pointer(&format!("/data/{key}"))
            .and_then(Value::as_str)
            .and_then(|encoded| STANDARD.decode(encoded).ok())
            .unwrap_or_default()
    };
    let needs_ca = !root_ca_pem.is_empty() && data("ca.crt") != root_ca_pem.as_bytes();
    let needs_namespace = data("namespace").is_empty();
    let needs_token = data("token").is_empty();
    if !needs_ca && !needs_namespace && !needs_token {
        return Ok(());
    }
    let token = if needs_token {
        let claims = legacy_claims(
            namespace,
            &ObjectRef {
                name: sa_name.clone(),
                uid: service_account_uid.clone(),
            },
            name,
        );
        Some(
            api.service_accounts
                .sign(&claims)
                .map_err(|error| ClientError {
                    code: 500,
                    reason: "InternalError".into(),
                    message: error.to_string(),
                    causes: Vec::new(),
                })?,
        )
    } else {
        None
    };
    let Some(object) = secret.as_object_mut() else {
        return Ok(());
    };
    let data = object.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    if let Some(data) = data.as_object_mut() {
        if needs_ca {
            data.insert("ca.crt".into(), json!(STANDARD.encode(root_ca_pem)));
        }
        if needs_namespace {
            data.insert("namespace".into(), json!(STANDARD.encode(namespace)));
        }
        if let Some(token) = token {
            data.insert("token".into(), json!(STANDARD.encode(token)));
        }
    }
    if let Some(annotations) = secret
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.insert(SERVICE_ACCOUNT_NAME_KEY.into(), json!(sa_name));
        annotations.insert(SERVICE_ACCOUNT_UID_KEY.into(), json!(service_account_uid));
    }
    match client.update(&path, &secret).await {
        Ok(_) => Ok(()),
        // Gone meanwhile; a conflict is retried with the newer version.
        Err(error) if error.is_not_found() => Ok(()),
        Err(error) => Err(error),
    }
}
