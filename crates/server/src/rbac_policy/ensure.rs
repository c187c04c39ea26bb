//! The `rbac/bootstrap-roles` post-start hook (`pkg/registry/rbac/rest/storage_rbac.go`,
//! `EnsureRBACPolicy`): at every start, on every replica, each default object
//! is created when missing and reconciled when present (`ReconcileRoleOptions`
//! and `ReconcileRoleBindingOptions` with `Confirm: true`, each run inside
//! `retry.RetryOnConflict`). Writes go through the API as kube-apiserver's
//! loopback client (manager `kube-apiserver`), so they are validated and
//! watched like any other.
//!
//! Objects are independent, so they are reconciled concurrently: on the first
//! start the store's group commit makes their creates a few durable steps
//! instead of one per object.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::reconcile::{reconcile_binding, reconcile_role, Operation};
use super::{
    cluster_role_bindings_to_split, cluster_roles_to_aggregate, BootstrapPolicy, RbacPolicyError,
};
use crate::api::Api;
use crate::controllers::{key_of, resource_path, Client, ClientError};
use crate::registry::ResourceDef;

/// kube's name for the hook, shown as `poststarthook/rbac/bootstrap-roles`
/// by `/healthz`, `/livez` and `/readyz`.
pub const POST_START_HOOK: &str = "rbac/bootstrap-roles";

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// `retry.DefaultBackoff`: 4 tries, 10 ms growing fivefold.
const CONFLICT_RETRIES: u32 = 4;
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(10);

#[derive(Debug, Clone, Copy)]
enum Kind {
    ClusterRole,
    ClusterRoleBinding,
    Role,
    RoleBinding,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::ClusterRole => "clusterrole",
            Kind::ClusterRoleBinding => "clusterrolebinding",
            Kind::Role => "role",
            Kind::RoleBinding => "rolebinding",
        }
    }

    fn plural(self) -> &'static str {
        match self {
            Kind::ClusterRole => "clusterroles",
            Kind::ClusterRoleBinding => "clusterrolebindings",
            Kind::Role => "roles",
            Kind::RoleBinding => "rolebindings",
        }
    }

    fn is_binding(self) -> bool {
        matches!(self, Kind::ClusterRoleBinding | Kind::RoleBinding)
    }
}

/// One object's target: where it lives and how to read it.
struct Target {
    client: Client,
    kind: Kind,
    resource: &'static ResourceDef,
    namespace: String,
    name: String,
}

impl Target {
    fn new(client: &Client, kind: Kind, object: &Value) -> Option<Target> {
        let resource = client
            .api()
            .registry
            .lookup(RBAC_GROUP, "v1", kind.plural())?;
        Some(Target {
            client: client.clone(),
            kind,
            resource,
            namespace: crate::object::namespace(object).to_string(),
            name: crate::object::name(object).to_string(),
        })
    }

    fn label(&self) -> String {
        if self.namespace.is_empty() {
            format!("{}.{RBAC_GROUP}/{}", self.kind.name(), self.name)
        } else {
            format!(
                "{}.{RBAC_GROUP}/{} in {}",
                self.kind.name(),
                self.name,
                self.namespace
            )
        }
    }

    fn path(&self) -> String {
        resource_path(self.resource, Some(&self.namespace), Some(&self.name))
    }

    fn collection(&self) -> String {
        resource_path(self.resource, Some(&self.namespace), None)
    }

    /// The stored object. The first look is the local snapshot (cheap, and
    /// current on a single server); a retry after a conflict reads through
    /// the API, which is a consistent read on etcd.
    async fn read(&self, consistent: bool) -> Result<Option<Value>, ClientError> {
        if !consistent {
            let key = key_of(self.resource, &self.namespace, &self.name);
            let snapshot = self.client.api().store.snapshot();
            return Ok(snapshot.get(&key).and_then(|entry| entry.object.value()));
        }
        match self.client.get(&self.path()).await {
            Ok(object) => Ok(Some(object)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn failed(&self, operation: &'static str, error: ClientError) -> RbacPolicyError {
        RbacPolicyError::Write {
            operation,
            kind: self.kind.name(),
            name: self.name.clone(),
            message: error.to_string(),
        }
    }

    /// `RoleModifier.Create` / `RoleBindingClientAdapter.Create`: a namespaced
    /// object's namespace is created first when it is missing (`tryEnsureNamespace`).
    async fn create(&self, object: &Value) -> Result<(), ClientError> {
        match self.client.create(&self.collection(), object).await {
            Err(error) if error.is_not_found() && !self.namespace.is_empty() => {
                let namespace = json!({
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": self.namespace},
                });
                match self.client.create("/api/v1/namespaces", &namespace).await {
                    Ok(_) => {}
                    Err(error) if error.is_already_exists() => {}
                    Err(error) => return Err(error),
                }
                self.client
                    .create(&self.collection(), object)
                    .await
                    .map(drop)
            }
            result => result.map(drop),
        }
    }

    /// `Run` (`run(attempts)`): one reconcile, re-run when the object
    /// appeared or vanished meanwhile. A conflict is returned for the caller
    /// to retry.
    async fn run(&self, expected: &Value, consistent: bool) -> Result<(), Reconcile> {
        let mut consistent = consistent;
        // Roles give up after 3 runs, bindings after 4 (`attempts > 2` / `> 3`).
        let attempts = if self.kind.is_binding() { 4 } else { 3 };
        for _ in 0..attempts {
            let existing = self.read(consistent).await.map_err(Reconcile::Failed)?;
            consistent = true;
            let (operation, protected, object, missing) = if self.kind.is_binding() {
                let outcome = reconcile_binding(existing.as_ref(), expected);
                let missing = outcome.missing_subjects.len();
                (
                    outcome.operation,
                    outcome.protected,
                    outcome.binding,
                    missing,
                )
            } else {
                let outcome = reconcile_role(existing.as_ref(), expected);
                let missing = outcome.missing_rules.len();
                (outcome.operation, outcome.protected, outcome.role, missing)
            };
            if protected {
                if operation != Operation::None {
                    tracing::warn!(object = %self.label(), missing, "skipped reconcile-protected object");
                }
                return Ok(());
            }
            match operation {
                Operation::None => return Ok(()),
                Operation::Create => match self.create(&object).await {
                    Ok(()) => {
                        tracing::debug!(object = %self.label(), "created");
                        return Ok(());
                    }
                    // Created since we looked: run again.
                    Err(error) if error.is_already_exists() => continue,
                    Err(error) => return Err(Reconcile::from_write(self, "create", error)),
                },
                Operation::Update => match self.client.update(&self.path(), &object).await {
                    Ok(_) => {
                        tracing::info!(object = %self.label(), missing, "updated with what the default policy adds");
                        return Ok(());
                    }
                    // Deleted since we looked: run again.
                    Err(error) if error.is_not_found() => continue,
                    Err(error) => return Err(Reconcile::from_write(self, "update", error)),
                },
                Operation::Recreate => {
                    let uid = existing
                        .as_ref()
                        .map(|existing| crate::object::meta_str(existing, "uid").to_string())
                        .unwrap_or_default();
                    let options = json!({
                        "apiVersion": "v1",
                        "kind": "DeleteOptions",
                        "preconditions": {"uid": uid},
                    });
                    match self.client.delete(&self.path(), &options).await {
                        Ok(_) => {}
                        Err(error) if error.is_not_found() => {}
                        // Another object with another uid: run again.
                        Err(error) if error.code == 409 => continue,
                        Err(error) => return Err(Reconcile::from_write(self, "delete", error)),
                    }
                    match self.create(&object).await {
                        Ok(()) => {
                            tracing::info!(object = %self.label(), "recreated for its new roleRef");
                            return Ok(());
                        }
                        Err(error) if error.is_already_exists() => continue,
                        Err(error) => return Err(Reconcile::from_write(self, "create", error)),
                    }
                }
            }
        }
        Err(Reconcile::Failed(ClientError {
            code: 0,
            reason: String::new(),
            message: "exceeded maximum attempts".into(),
            causes: Vec::new(),
        }))
    }

    /// `retry.RetryOnConflict(retry.DefaultBackoff, ...)` around `run`.
    async fn reconcile(&self, expected: &Value) -> Result<(), RbacPolicyError> {
        let mut delay = FIRST_RETRY_DELAY;
        for attempt in 1..=CONFLICT_RETRIES {
            match self.run(expected, attempt > 1).await {
                Ok(()) => return Ok(()),
                Err(Reconcile::Conflict(error)) if attempt < CONFLICT_RETRIES => {
                    tracing::debug!(object = %self.label(), %error, "conflict; retrying");
                    tokio::time::sleep(delay).await;
                    delay *= 5;
                }
                Err(Reconcile::Conflict(error)) | Err(Reconcile::Failed(error)) => {
                    return Err(self.failed("reconcile", error))
                }
            }
        }
        Err(RbacPolicyError::Attempts {
            kind: self.kind.name(),
            name: self.name.clone(),
        })
    }
}

enum Reconcile {
    Conflict(ClientError),
    Failed(ClientError),
}

impl Reconcile {
    fn from_write(target: &Target, operation: &str, error: ClientError) -> Reconcile {
        if error.is_conflict() {
            return Reconcile::Conflict(error);
        }
        tracing::debug!(object = %target.label(), operation, %error, "write refused");
        Reconcile::Failed(error)
    }
}

/// `primeAggregatedClusterRoles`: a role that became aggregated keeps the
/// custom rules a cluster had given it, copied under its new name, when that
/// one does not exist yet.
async fn prime_aggregated_cluster_roles(client: &Client) -> Result<(), ClientError> {
    let Some(resource) = client
        .api()
        .registry
        .lookup(RBAC_GROUP, "v1", "clusterroles")
    else {
        return Ok(());
    };
    for (old_name, new_name) in cluster_roles_to_aggregate() {
        let snapshot = client.api().store.snapshot();
        if snapshot.get(&key_of(resource, "", new_name)).is_some() {
            continue;
        }
        let Some(mut existing) = snapshot
            .get(&key_of(resource, "", old_name))
            .and_then(|entry| entry.object.value())
        else {
            continue;
        };
        if existing
            .get("aggregationRule")
            .is_some_and(|rule| !rule.is_null())
        {
            // Already moved to an aggregated role: no custom rules to migrate.
            return Ok(());
        }
        tracing::info!(
            from = old_name,
            to = new_name,
            "migrating the rules of a role that became aggregated"
        );
        if let Some(metadata) = crate::object::metadata_mut(&mut existing) {
            metadata.insert("name".into(), json!(new_name));
            for field in [
                "resourceVersion",
                "uid",
                "creationTimestamp",
                "managedFields",
            ] {
                metadata.remove(field);
            }
        }
        match client
            .create(&resource_path(resource, None, None), &existing)
            .await
        {
            Ok(_) => {}
            Err(error) if error.is_already_exists() => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// `primeSplitClusterRoleBindings`: a binding split off an older one starts
/// with the older one's subjects, labels and annotations.
async fn prime_split_cluster_role_bindings(
    client: &Client,
    policy: &BootstrapPolicy,
) -> Result<(), ClientError> {
    let Some(resource) = client
        .api()
        .registry
        .lookup(RBAC_GROUP, "v1", "clusterrolebindings")
    else {
        return Ok(());
    };
    for (existing_name, new_name) in cluster_role_bindings_to_split() {
        let snapshot = client.api().store.snapshot();
        let Some(existing) = snapshot
            .get(&key_of(resource, "", existing_name))
            .and_then(|entry| entry.object.value())
        else {
            continue;
        };
        if snapshot.get(&key_of(resource, "", new_name)).is_some() {
            continue;
        }
        let Some(template) = policy
            .cluster_role_bindings
            .iter()
            .find(|binding| crate::object::name(binding) == new_name)
        else {
            continue;
        };
        tracing::info!(
            from = existing_name,
            to = new_name,
            "copying subjects, labels and annotations"
        );
        let mut binding = template.clone();
        binding["subjects"] = existing.get("subjects").cloned().unwrap_or(Value::Null);
        for field in ["labels", "annotations"] {
            binding["metadata"][field] = existing
                .pointer(&format!("/metadata/{field}"))
                .cloned()
                .unwrap_or(Value::Null);
        }
        match client
            .create(&resource_path(resource, None, None), &binding)
            .await
        {
            Ok(_) => {}
            Err(error) if error.is_already_exists() => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// The hook: reconciles every default object once. A failure on one object
/// is logged and the others still go ("try to create as many as you can");
/// only an unreadable vendored policy fails the hook.
pub async fn ensure_rbac_policy(api: &Arc<Api>) -> Result<(), RbacPolicyError> {
    let policy = BootstrapPolicy::get().map_err(|error| RbacPolicyError::Vendored {
        file: "bootstrap policy",
        message: error.to_string(),
    })?;
    let started = std::time::Instant::now();
    let client = Client::apiserver(api.clone());
    if let Err(error) = prime_aggregated_cluster_roles(&client).await {
        tracing::warn!(%error, "unable to prime aggregated clusterroles");
    }
    if let Err(error) = prime_split_cluster_role_bindings(&client, policy).await {
        tracing::warn!(%error, "unable to prime split ClusterRoleBindings");
    }
    let mut running = tokio::task::JoinSet::new();
    let groups = [
        (Kind::ClusterRole, &policy.cluster_roles),
        (Kind::ClusterRoleBinding, &policy.cluster_role_bindings),
        (Kind::Role, &policy.roles),
        (Kind::RoleBinding, &policy.role_bindings),
    ];
    for (kind, objects) in groups {
        for object in objects {
            let Some(target) = Target::new(&client, kind, object) else {
                continue;
            };
            running.spawn(async move {
                if let Err(error) = target.reconcile(object).await {
                    tracing::error!(object = %target.label(), %error, "unable to reconcile");
                }
            });
        }
    }
    while running.join_next().await.is_some() {}
    tracing::info!(elapsed = ?started.elapsed(), "bootstrap RBAC policy reconciled");
    Ok(())
}
