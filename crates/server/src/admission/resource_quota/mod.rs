//! ResourceQuota admission (`plugin/pkg/admission/resourcequota`
//! `admission.go` `Validate`, `controller.go` `checkQuotas`): a write into a
//! namespace with quotas is measured by its resource's evaluator; one that
//! would exceed a matching quota's hard limit, or leaves out a resource the
//! quota constrains, is refused with kube's 403; otherwise each matching
//! quota's `status.used` is raised in the same admission, with
//! optimistic-concurrency retries as kube's quota accessor does. Dry-run
//! writes are checked and charge nothing.
//!
//! kube batches a namespace's waiting writes in a work queue; here the
//! check and the status write run under a lock per namespace, which
//! serializes them in the same way. Usage is recalculated from the store by the
//! `resourcequota` controller (`controllers/resource_quota.rs`).

pub mod check;
pub mod configuration;
pub mod evaluator;
pub mod pods;
pub mod resource_list;
pub mod scopes;
pub mod usage;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::SystemTime;

use ferrokube_store::{BackendError, Expect, Op, StoreError, Txn};
use serde_json::Value;

use super::attributes::Attributes;
use crate::object::ObjectStore;
use crate::status::{GroupResource, Result, Status};
use check::{check_request, Refusal, Request};
use configuration::QuotaConfiguration;
use evaluator::Evaluator;

/// `checkQuotas`' retries after a conflicting status update.
const RETRIES: usize = 3;

/// The prefix of a namespace's ResourceQuotas in the store.
pub fn quotas_prefix(namespace: &str) -> String {
    format!("/registry/resourcequotas/{namespace}/")
}

/// The plugin's state: one lock per namespace that serializes its quota
/// checks and charges (kube's evaluator works a namespace's waiting writes
/// one batch at a time), present while someone holds or waits for it.
#[derive(Default)]
pub struct QuotaAdmission {
    locks: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// The plugin configuration (`--admission-control-config-file`).
    configuration: QuotaConfiguration,
}

impl QuotaAdmission {
    /// The plugin with its configuration.
    pub fn new(configuration: QuotaConfiguration) -> QuotaAdmission {
        QuotaAdmission {
            configuration,
            ..QuotaAdmission::default()
        }
    }

    fn namespace_lock(&self, namespace: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self
            .locks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        locks.entry(namespace.to_string()).or_default().clone()
    }

    /// Forgets `namespace`'s lock once nobody else holds a handle to it
    /// (handles are only taken under the map's lock, so the count is exact).
    fn release(&self, namespace: &str, lock: Arc<tokio::sync::Mutex<()>>) {
        drop(lock);
        let mut locks = self
            .locks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if locks
            .get(namespace)
            .is_some_and(|lock| Arc::strong_count(lock) == 1)
        {
            locks.remove(namespace);
        }
    }

    /// `QuotaAdmission.Validate` then `quotaEvaluator.Evaluate`.
    pub async fn validate(
        &self,
        store: &ObjectStore,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> Result<()> {
        // Subresources are not counted but a pod's resize (which the pod
        // evaluator handles); nor is anything cluster-scoped, nor the
        // creation of a namespace.
        let resize = attributes.subresource == "resize"
            && attributes.resource.group.is_empty()
            && attributes.resource.name == "pods";
        if (!attributes.subresource.is_empty() && !resize)
            || attributes.namespace.is_empty()
            || attributes.is_namespace()
        {
            return Ok(());
        }
        let Some(evaluator) =
            Evaluator::for_resource(&attributes.resource.group, &attributes.resource.name)
        else {
            return Ok(());
        };
        let Some(object) = object else {
            return Ok(());
        };
        if !evaluator.handles(attributes.operation, attributes.subresource) {
            return Ok(());
        }
        let prefix = quotas_prefix(attributes.namespace);
        // Without limited resources, a namespace without quotas has
        // nothing to check (`checkAttributes`).
        if self.configuration.limited_resources.is_empty()
            && store.snapshot().range(&prefix, None).next().is_none()
        {
            return Ok(());
        }
        let lock = self.namespace_lock(attributes.namespace);
        let serialized = lock.lock().await;
        let result = self
            .charge(store, attributes, object, &evaluator, &prefix)
            .await;
        drop(serialized);
        self.release(attributes.namespace, lock);
        result
    }

    /// `checkQuotas` for one write, its namespace's lock held.
    async fn charge(
        &self,
        store: &ObjectStore,
        attributes: &Attributes<'_>,
        object: &Value,
        evaluator: &Evaluator,
        prefix: &str,
    ) -> Result<()> {
        let request = Request {
            group: &attributes.resource.group,
            resource: &attributes.resource.name,
            subresource: attributes.subresource,
            operation: attributes.operation,
            object,
            old_object: attributes.old_object,
            now: SystemTime::now(),
        };
        // Quotas already charged for this write: a retry after a conflict
        // checks only the others again (kube's `quotasToCheck`).
        let mut charged: BTreeSet<String> = BTreeSet::new();
        let mut last_conflict = None;
        for _ in 0..=RETRIES {
            let snapshot = store.snapshot();
            let mut quotas = Vec::new();
            for (key, entry) in snapshot.range(prefix, None) {
                if charged.contains(key.as_str()) {
                    continue;
                }
                if let Some(quota) = entry.object.value() {
                    quotas.push((key.clone(), entry.mod_revision, quota));
                }
            }
            let values: Vec<Value> = quotas.iter().map(|(_, _, quota)| quota.clone()).collect();
            let changes = check_request(
                evaluator,
                &values,
                &self.configuration.limited_resources,
                &request,
            )
            .map_err(|refusal| match refusal {
                Refusal::Forbidden(why) => {
                    super::namespace_lifecycle::forbidden(attributes, Some(object), &why)
                }
                Refusal::Error(why) => Status::unknown(why),
            })?;
            // Don't update quota for dry-run requests.
            if attributes.dry_run {
                return Ok(());
            }
            let mut conflicted = false;
            for ((key, revision, mut quota), used) in quotas.into_iter().zip(changes) {
                let Some(used) = used else { continue };
                if !quota.get("status").is_some_and(Value::is_object) {
                    quota["status"] = serde_json::json!({});
                }
                quota["status"]["used"] = resource_list::to_value(&used);
                let txn = Txn::single(Op::Put {
                    key: key.clone(),
                    value: crate::object::storage_bytes(&quota),
                    expect: Expect::ModRevision(revision),
                });
                match store.commit(txn).await {
                    Ok(_) => {
                        charged.insert(key);
                    }
                    Err(StoreError::Backend(BackendError::PreconditionFailed { .. })) => {
                        last_conflict = Some(crate::object::name(&quota).to_string());
                        conflicted = true;
                    }
                    Err(other) => return Err(Status::internal(other)),
                }
            }
            if !conflicted {
                return Ok(());
            }
        }
        Err(Status::conflict(
            &GroupResource::new("", "resourcequotas"),
            last_conflict.as_deref().unwrap_or_default(),
        ))
    }
}

#[cfg(test)]
mod tests;
