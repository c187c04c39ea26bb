//! ServiceAccount (`plugin/pkg/admission/serviceaccount` `Plugin.Admit` /
//! `Validate`), on pod creates: `serviceAccountName` defaults to `default`,
//! the ServiceAccount must exist (kube's `getServiceAccount` looks
//! `default` up ten times, 100-200 ms apart, as the serviceaccount
//! controller may not have made it yet), the API token is mounted as the
//! projected `kube-api-access-<random>` volume in every container and init
//! container unless `automountServiceAccountToken` (the pod's, else the
//! ServiceAccount's) is false, and the ServiceAccount's imagePullSecrets are
//! copied to a pod without any. Mirror pods are not changed and may
//! reference neither service accounts nor secrets; a ServiceAccount
//! annotated `kubernetes.io/enforce-mountable-secrets: "true"` limits the
//! secrets its pods (and the ephemeral containers added to them) reference
//! to its own.

use std::time::Duration;

use serde_json::{json, Value};

use super::attributes::{Attributes, Operation};
use super::namespace_lifecycle::forbidden;
use crate::object::ObjectStore;
use crate::status::{Result, Status};

/// `DefaultServiceAccountName`.
const DEFAULT_NAME: &str = "default";
/// `EnforceMountableSecretsAnnotation`.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";
/// `ServiceAccountVolumeName`, the generated volume's prefix.
const VOLUME_PREFIX: &str = "kube-api-access-";
/// `DefaultAPITokenMountPath`.
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// `MirrorPodAnnotationKey`.
const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// `serviceaccount.WarnOnlyBoundTokenExpirationSeconds`.
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;

/// `shouldIgnore`: pods and their `ephemeralcontainers`, with an object.
fn applies(attributes: &Attributes<'_>) -> bool {
    attributes.resource.group.is_empty()
        && attributes.resource.name == "pods"
        && matches!(attributes.subresource, "" | "ephemeralcontainers")
}

fn is_mirror_pod(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|annotations| annotations.contains_key(MIRROR_POD_ANNOTATION))
}

/// The pod's service account: `serviceAccountName`, else the deprecated
/// `serviceAccount` (what decoding v1 into the internal pod keeps).
fn service_account_name(pod: &Value) -> &str {
    let field = |name: &str| {
        pod.pointer(&format!("/spec/{name}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match field("serviceAccountName") {
        "" => field("serviceAccount"),
        name => name,
    }
}

/// `getServiceAccount`, with kube's retries for `default`.
async fn lookup(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    pod: &Value,
    name: &str,
) -> Result<Value> {
    let namespace = attributes.namespace;
    let key = format!("/registry/serviceaccounts/{namespace}/{name}");
    let attempts = if name == DEFAULT_NAME { 10 } else { 1 };
    for attempt in 0..attempts {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        if let Some(account) = store
            .snapshot()
            .get(&key)
            .and_then(|entry| entry.object.value())
        {
            return Ok(account);
        }
    }
    Err(forbidden(
        attributes,
        Some(pod),
        &format!(
            "error looking up service account {namespace}/{name}: serviceaccount {} not found",
            crate::go::strconv::quote(name)
        ),
    ))
}

/// `Plugin.Admit`.
pub async fn admit(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&mut Value>,
) -> Result<()> {
    let Some(pod) = object else {
        return Ok(());
    };
    if !applies(attributes) || attributes.operation != Operation::Create || !pod.is_object() {
        return Ok(());
    }
    if is_mirror_pod(pod) {
        return validate(store, attributes, Some(pod)).await;
    }
    if !pod.get("spec").is_some_and(Value::is_object) {
        pod["spec"] = json!({});
    }
    let name = match service_account_name(pod) {
        "" => DEFAULT_NAME.to_string(),
        name => name.to_string(),
    };
    pod["spec"]["serviceAccountName"] = json!(name);
    let account = lookup(store, attributes, pod, &name).await?;
    if should_automount(&account, pod) {
        mount_token(pod);
    }
    let has_pull_secrets = pod
        .pointer("/spec/imagePullSecrets")
        .and_then(Value::as_array)
        .is_some_and(|secrets| !secrets.is_empty());
    let account_pull_secrets: Vec<Value> = account
        .get("imagePullSecrets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|secret| json!({"name": secret.get("name").cloned().unwrap_or(json!(""))}))
        .collect();
    if !has_pull_secrets && !account_pull_secrets.is_empty() {
        pod["spec"]["imagePullSecrets"] = Value::Array(account_pull_secrets);
    }
    validate(store, attributes, Some(pod)).await
}

/// `Plugin.Validate`.
pub async fn validate(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<()> {
    let Some(pod) = object else {
        return Ok(());
    };
    if !applies(attributes) {
        return Ok(());
    }
    let ephemeral = attributes.subresource == "ephemeralcontainers";
    if attributes.operation == Operation::Update && ephemeral {
        return limit_ephemeral_container_secrets(store, attributes, pod).await;
    }
    if attributes.operation != Operation::Create || ephemeral {
        return Ok(());
    }
    if is_mirror_pod(pod) {
        return mirror_pod_rules(attributes, pod);
    }
    let name = service_account_name(pod);
    if name.is_empty() {
        return Err(no_service_account(attributes, pod));
    }
    let account = lookup(store, attributes, pod, name).await?;
    if enforces_mountable_secrets(&account) {
        if let Err(why) = limit_secret_references(&account, pod) {
            return Err(forbidden(attributes, Some(pod), &why));
        }
    }
    Ok(())
}

fn no_service_account(attributes: &Attributes<'_>, pod: &Value) -> Status {
    forbidden(
        attributes,
        Some(pod),
        &format!(
            "no service account specified for pod {}/{}",
            attributes.namespace,
            crate::object::name(pod)
        ),
    )
}

fn mirror_pod_rules(attributes: &Attributes<'_>, pod: &Value) -> Result<()> {
    if !service_account_name(pod).is_empty() {
        return Err(forbidden(
            attributes,
            Some(pod),
            "a mirror pod may not reference service accounts",
        ));
    }
    if !secret_names(pod, true).is_empty() {
        return Err(forbidden(
            attributes,
            Some(pod),
            "a mirror pod may not reference secrets",
        ));
    }
    let projects_token = volumes(pod).any(|volume| {
        volume
            .pointer("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|source| {
                source
                    .get("serviceAccountToken")
                    .is_some_and(|v| !v.is_null())
            })
    });
    if projects_token {
        return Err(forbidden(
            attributes,
            Some(pod),
            "a mirror pod may not use ServiceAccountToken volume projections",
        ));
    }
    Ok(())
}

/// `shouldAutomount`: the pod's preference, else the account's, else true.
fn should_automount(account: &Value, pod: &Value) -> bool {
    pod.pointer("/spec/automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| {
            account
                .get("automountServiceAccountToken")
                .and_then(Value::as_bool)
        })
        .unwrap_or(true)
}

fn enforces_mountable_secrets(account: &Value) -> bool {
    account
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(ENFORCE_MOUNTABLE_SECRETS))
        .and_then(Value::as_str)
        .is_some_and(|value| crate::go::strconv::parse_bool(value).unwrap_or(false))
}

fn volumes(pod: &Value) -> impl Iterator<Item = &Value> {
    pod.pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn containers<'a>(pod: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    pod.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// `TokenVolumeSource`, as v1 encodes it.
pub fn token_volume(name: &str) -> Value {
    json!({
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ],
        },
    })
}

/// `mountServiceAccountToken`: the volume named `kube-api-access-…` the pod
/// has, else a new one; a read-only mount of it in every init container and
/// container without a mount at the token path; the volume added when one
/// of them needs it.
fn mount_token(pod: &mut Value) {
    let existing = volumes(pod)
        .filter_map(|volume| volume.get("name").and_then(Value::as_str))
        .find(|name| name.starts_with(VOLUME_PREFIX))
        .map(str::to_string);
    let has_volume = existing.is_some();
    let volume_name = existing.unwrap_or_else(|| crate::names::generate(VOLUME_PREFIX));
    let mount = json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    let mut needs_volume = false;
    for field in ["initContainers", "containers"] {
        let Some(list) = pod
            .pointer_mut(&format!("/spec/{field}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for container in list.iter_mut().filter_map(Value::as_object_mut) {
            let mounted = container
                .get("volumeMounts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|mount| {
                    mount.get("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT_PATH)
                });
            if mounted {
                continue;
            }
            if !container.get("volumeMounts").is_some_and(Value::is_array) {
                container.insert("volumeMounts".into(), json!([]));
            }
            if let Some(mounts) = container
                .get_mut("volumeMounts")
                .and_then(Value::as_array_mut)
            {
                mounts.push(mount.clone());
                needs_volume = true;
            }
        }
    }
    if has_volume || !needs_volume {
        return;
    }
    if !pod.pointer("/spec/volumes").is_some_and(Value::is_array) {
        pod["spec"]["volumes"] = json!([]);
    }
    if let Some(list) = pod
        .pointer_mut("/spec/volumes")
        .and_then(Value::as_array_mut)
    {
        list.push(token_volume(&volume_name));
    }
}

/// The secret names a pod references (`podutil.VisitPodSecretNames`):
/// image pull secrets, the containers' env and envFrom (ephemeral ones
/// when `with_ephemeral`), and volumes.
fn secret_names(pod: &Value, with_ephemeral: bool) -> Vec<String> {
    let mut names = Vec::new();
    let mut push = |value: Option<&Value>| {
        if let Some(name) = value
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty())
        {
            names.push(name.to_string());
        }
    };
    for secret in containers(pod, "imagePullSecrets") {
        push(secret.get("name"));
    }
    let mut fields = vec!["initContainers", "containers"];
    if with_ephemeral {
        fields.push("ephemeralContainers");
    }
    for field in fields {
        for container in containers(pod, field) {
            for from in container
                .get("envFrom")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                push(from.pointer("/secretRef/name"));
            }
            for env in container
                .get("env")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                push(env.pointer("/valueFrom/secretKeyRef/name"));
            }
        }
    }
    for volume in volumes(pod) {
        push(volume.pointer("/secret/secretName"));
        push(volume.pointer("/azureFile/secretName"));
        for source in [
            "cephfs",
            "cinder",
            "flexVolume",
            "iscsi",
            "rbd",
            "scaleIO",
            "storageos",
        ] {
            push(volume.pointer(&format!("/{source}/secretRef/name")));
        }
        push(volume.pointer("/csi/nodePublishSecretRef/name"));
        for source in volume
            .pointer("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            push(source.pointer("/secret/name"));
        }
    }
    names
}

fn account_secret_names<'a>(account: &'a Value, field: &str) -> Vec<&'a str> {
    account
        .get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|reference| reference.get("name").and_then(Value::as_str))
        .collect()
}

/// The env and envFrom secret references of `field`'s containers that
/// `mountable` does not hold, as `limitSecretReferences` words them.
fn unmountable_env(
    pod: &Value,
    field: &str,
    label: &str,
    mountable: &[&str],
    account: &str,
) -> Option<String> {
    for container in containers(pod, field) {
        let container_name = container.get("name").and_then(Value::as_str).unwrap_or("");
        for env in container
            .get("env")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(secret) = env
                .pointer("/valueFrom/secretKeyRef/name")
                .and_then(Value::as_str)
            {
                if !mountable.contains(&secret) {
                    let env_name = env.get("name").and_then(Value::as_str).unwrap_or("");
                    return Some(format!(
                        "{label} {container_name} with envVar {env_name} referencing secret.secretName=\"{secret}\" is not allowed because service account {account} does not reference that secret"
                    ));
                }
            }
        }
        for from in container
            .get("envFrom")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(secret) = from.pointer("/secretRef/name").and_then(Value::as_str) {
                if !mountable.contains(&secret) {
                    return Some(format!(
                        "{label} {container_name} with envFrom referencing secret.secretName=\"{secret}\" is not allowed because service account {account} does not reference that secret"
                    ));
                }
            }
        }
    }
    None
}

/// `limitSecretReferences`.
fn limit_secret_references(account: &Value, pod: &Value) -> std::result::Result<(), String> {
    let account_name = crate::object::name(account);
    let mountable = account_secret_names(account, "secrets");
    for volume in volumes(pod) {
        if let Some(secret) = volume.pointer("/secret/secretName").and_then(Value::as_str) {
            if !mountable.contains(&secret) {
                return Err(format!(
                    "volume with secret.secretName=\"{secret}\" is not allowed because service account {account_name} does not reference that secret"
                ));
            }
        }
    }
    for (field, label) in [
        ("initContainers", "init container"),
        ("containers", "container"),
    ] {
        if let Some(why) = unmountable_env(pod, field, label, &mountable, account_name) {
            return Err(why);
        }
    }
    let pull_secrets = account_secret_names(account, "imagePullSecrets");
    for (index, reference) in containers(pod, "imagePullSecrets").enumerate() {
        let name = reference.get("name").and_then(Value::as_str).unwrap_or("");
        if !pull_secrets.contains(&name) {
            return Err(format!(
                "imagePullSecrets[{index}].name=\"{name}\" is not allowed because service account {account_name} does not reference that imagePullSecret"
            ));
        }
    }
    Ok(())
}

/// `limitEphemeralContainerSecretReferences`.
async fn limit_ephemeral_container_secrets(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    pod: &Value,
) -> Result<()> {
    let name = service_account_name(pod);
    if name.is_empty() {
        return Err(no_service_account(attributes, pod));
    }
    let account = lookup(store, attributes, pod, name).await?;
    if !enforces_mountable_secrets(&account) {
        return Ok(());
    }
    let mountable = account_secret_names(&account, "secrets");
    match unmountable_env(
        pod,
        "ephemeralContainers",
        "ephemeral container",
        &mountable,
        crate::object::name(&account),
    ) {
        Some(why) => Err(forbidden(attributes, Some(pod), &why)),
        None => Ok(()),
    }
}

#[cfg(test)]
#[path = "service_account_tests.rs"]
mod tests;
