//! The built-in controllers: the few kube-controller-manager loops that make
//! the API behave like a cluster (namespaces empty and go, dependents are
//! collected, every namespace has its default ServiceAccount and root CA,
//! aggregated ClusterRoles hold the rules they select, PodDisruptionBudgets
//! say how many disruptions evictions may cause, deleted claims and volumes
//! lose their protection finalizers once unused, ResourceQuotas show their
//! usage).
//!
//! Each works in-process through [`crate::api::Api::handle`], as its own
//! system user, and learns about changes from the store's change log
//! ([`crate::object::feed`]). `--controllers` selects them in kube-controller-manager's
//! syntax, so they can be turned off when a real kube-controller-manager runs.

mod client;
mod clusterrole_aggregation;
mod crd_finalizer;
mod crd_naming;
mod disruption;
mod garbage_collector;
mod gc_graph;
mod namespace;
mod policy_status;
mod queue;
mod resource_quota;
mod resources;
mod root_ca;
mod service_account;
mod service_account_token;
mod storage_protection;

use std::collections::BTreeSet;
use std::sync::Arc;

pub use crate::object::feed::{Feed, Update};
pub use client::{resource_path, Client, ClientError};
pub use queue::WorkQueue;
pub use resources::{key_of, KeyInfo, Resources};

use crate::api::Api;

/// kube-controller-manager's names for the controllers ferrokube runs, and
/// whether `*` enables them (all of these are on by default upstream too).
pub const KNOWN_CONTROLLERS: &[(&str, bool)] = &[
    (CLUSTERROLE_AGGREGATION, true),
    (CRD_FINALIZER, true),
    (CRD_NAMING, true),
    (DISRUPTION, true),
    (GARBAGE_COLLECTOR, true),
    (NAMESPACE, true),
    (PV_PROTECTION, true),
    (PVC_PROTECTION, true),
    (RESOURCE_QUOTA, true),
    (ROOT_CA_CERT_PUBLISHER, true),
    (SERVICE_ACCOUNT, true),
    (SERVICE_ACCOUNT_TOKEN, true),
    (VALIDATING_ADMISSION_POLICY_STATUS, true),
];

/// Fills aggregated ClusterRoles (`admin`, `edit`, `view`, …) with the rules
/// of the roles their selectors match.
pub const CLUSTERROLE_AGGREGATION: &str = "clusterrole-aggregation";
/// apiextensions-apiserver's naming and establishing controllers (they run
/// inside kube-apiserver upstream, so kube-controller-manager has no name for
/// them; this one is ferrokube's).
pub const CRD_NAMING: &str = "crd-naming";
/// apiextensions-apiserver's CRD finalizer (deletes a CRD's custom resources).
pub const CRD_FINALIZER: &str = "crd-finalizer";
/// Keeps PodDisruptionBudgets' status, which evictions are judged by.
pub const DISRUPTION: &str = "disruption";
pub const GARBAGE_COLLECTOR: &str = "garbagecollector";
pub const NAMESPACE: &str = "namespace";
/// Lets deleted PersistentVolumes go once they are not bound.
pub const PV_PROTECTION: &str = "pv-protection";
/// Lets deleted PersistentVolumeClaims go once no scheduled pod uses them.
pub const PVC_PROTECTION: &str = "pvc-protection";
/// Keeps ResourceQuotas' `status.hard` and `status.used` (what ResourceQuota
/// admission enforces).
pub const RESOURCE_QUOTA: &str = "resourcequota";
pub const SERVICE_ACCOUNT: &str = "serviceaccount";
/// The legacy token controller (fills `kubernetes.io/service-account-token` Secrets).
pub const SERVICE_ACCOUNT_TOKEN: &str = "serviceaccount-token";
pub const ROOT_CA_CERT_PUBLISHER: &str = "root-ca-cert-publisher";
/// Writes ValidatingAdmissionPolicies' `status.typeChecking`.
pub const VALIDATING_ADMISSION_POLICY_STATUS: &str = policy_status::NAME;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControllersError {
    /// kube-controller-manager's wording (`options.Validate`).
    #[error("{0:?} is not in the list of known controllers")]
    Unknown(String),
}

/// Which controllers run, and what they need from the server.
#[derive(Debug, Clone)]
pub struct ControllersConfig {
    pub enabled: BTreeSet<&'static str>,
    /// The cluster CA in PEM, published as `kube-root-ca.crt`.
    pub root_ca_pem: String,
}

impl ControllersConfig {
    /// Every default-on controller (`--controllers=*`).
    pub fn all(root_ca_pem: String) -> ControllersConfig {
        ControllersConfig {
            enabled: parse_controllers(&["*".to_string()]).unwrap_or_default(),
            root_ca_pem,
        }
    }

    pub fn is_enabled(&self, name: &str) -> bool {
        self.enabled.contains(name)
    }
}

/// `--controllers`: `*` turns on every default-on controller, `name` turns
/// one on, `-name` turns one off (kube-controller-manager's `IsControllerEnabled`).
pub fn parse_controllers(values: &[String]) -> Result<BTreeSet<&'static str>, ControllersError> {
    let items: Vec<&str> = values
        .iter()
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect();
    for item in &items {
        let name = item.strip_prefix('-').unwrap_or(item);
        if name != "*" && !KNOWN_CONTROLLERS.iter().any(|(known, _)| *known == name) {
            return Err(ControllersError::Unknown(name.to_string()));
        }
    }
    let star = items.contains(&"*");
    Ok(KNOWN_CONTROLLERS
        .iter()
        .filter(|(name, default_on)| {
            if items.contains(name) {
                return true;
            }
            if items
                .iter()
                .any(|item| item.strip_prefix('-') == Some(name))
            {
                return false;
            }
            star && *default_on
        })
        .map(|(name, _)| *name)
        .collect())
}

/// Runs the enabled controllers while `leading` is true; stops them when it
/// turns false (another replica leads) and starts them again when it turns
/// back. A single process passes a receiver that is always true. Ends when
/// the server shuts down.
pub fn spawn(
    api: Arc<Api>,
    config: ControllersConfig,
    mut leading: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut shutdown = api.shutdown_signal();
        loop {
            // Wait to lead.
            loop {
                if *leading.borrow_and_update() {
                    break;
                }
                tokio::select! {
                    changed = leading.changed() => if changed.is_err() { return },
                    _ = shutdown.wait_for(|stop| *stop) => return,
                }
            }
            tracing::info!(controllers = ?config.enabled, "starting controllers");
            let mut running = start(&api, &config);
            // Lead until told otherwise.
            let stop = loop {
                tokio::select! {
                    changed = leading.changed() => {
                        if changed.is_err() { break true }
                        if !*leading.borrow_and_update() { break false }
                    }
                    _ = shutdown.wait_for(|stop| *stop) => break true,
                }
            };
            running.abort_all();
            while running.join_next().await.is_some() {}
            tracing::info!("controllers stopped");
            if stop {
                return;
            }
        }
    })
}

fn start(api: &Arc<Api>, config: &ControllersConfig) -> tokio::task::JoinSet<()> {
    let mut set = tokio::task::JoinSet::new();
    if config.is_enabled(CLUSTERROLE_AGGREGATION) {
        set.spawn(clusterrole_aggregation::run(api.clone()));
    }
    if config.is_enabled(CRD_FINALIZER) {
        set.spawn(crd_finalizer::run(api.clone()));
    }
    if config.is_enabled(CRD_NAMING) {
        set.spawn(crd_naming::run(api.clone()));
    }
    if config.is_enabled(DISRUPTION) {
        set.spawn(disruption::run(api.clone()));
    }
    if config.is_enabled(GARBAGE_COLLECTOR) {
        set.spawn(garbage_collector::run(api.clone()));
    }
    if config.is_enabled(NAMESPACE) {
        set.spawn(namespace::run(api.clone()));
    }
    if config.is_enabled(PV_PROTECTION) {
        set.spawn(storage_protection::run(
            api.clone(),
            storage_protection::Protected::Volumes,
        ));
    }
    if config.is_enabled(PVC_PROTECTION) {
        set.spawn(storage_protection::run(
            api.clone(),
            storage_protection::Protected::Claims,
        ));
    }
    if config.is_enabled(RESOURCE_QUOTA) {
        set.spawn(resource_quota::run(api.clone()));
    }
    if config.is_enabled(SERVICE_ACCOUNT) {
        set.spawn(service_account::run(api.clone()));
    }
    if config.is_enabled(SERVICE_ACCOUNT_TOKEN) {
        set.spawn(service_account_token::run(
            api.clone(),
            config.root_ca_pem.clone(),
        ));
    }
    if config.is_enabled(ROOT_CA_CERT_PUBLISHER) {
        set.spawn(root_ca::run(api.clone(), config.root_ca_pem.clone()));
    }
    if config.is_enabled(VALIDATING_ADMISSION_POLICY_STATUS) {
        set.spawn(policy_status::run(api.clone()));
    }
    set
}

/// How long a failed item waits before it is retried (client-go's rate
/// limiter starts at 5 ms and doubles; a flat short delay is enough here).
pub(crate) const RETRY_DELAY: std::time::Duration = std::time::Duration::from_millis(200);

#[cfg(test)]
mod identity_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(values: &[&str]) -> Result<Vec<&'static str>, ControllersError> {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        parse_controllers(&values).map(|set| set.into_iter().collect())
    }

    #[test]
    fn controllers_flag_follows_kube_controller_manager() {
        let all = vec![
            CLUSTERROLE_AGGREGATION,
            CRD_FINALIZER,
            CRD_NAMING,
            DISRUPTION,
            GARBAGE_COLLECTOR,
            NAMESPACE,
            PV_PROTECTION,
            PVC_PROTECTION,
            RESOURCE_QUOTA,
            ROOT_CA_CERT_PUBLISHER,
            SERVICE_ACCOUNT,
            SERVICE_ACCOUNT_TOKEN,
            VALIDATING_ADMISSION_POLICY_STATUS,
        ];
        assert_eq!(parse(&["*"]).unwrap(), all);
        assert_eq!(
            parse(&["*,-garbagecollector,-crd-naming"]).unwrap(),
            vec![
                CLUSTERROLE_AGGREGATION,
                CRD_FINALIZER,
                DISRUPTION,
                NAMESPACE,
                PV_PROTECTION,
                PVC_PROTECTION,
                RESOURCE_QUOTA,
                ROOT_CA_CERT_PUBLISHER,
                SERVICE_ACCOUNT,
                SERVICE_ACCOUNT_TOKEN,
                VALIDATING_ADMISSION_POLICY_STATUS
            ]
        );
        assert_eq!(
            parse(&["*", "-garbagecollector", "-namespace", "-crd-finalizer"]).unwrap(),
            vec![
                CLUSTERROLE_AGGREGATION,
                CRD_NAMING,
                DISRUPTION,
                PV_PROTECTION,
                PVC_PROTECTION,
                RESOURCE_QUOTA,
                ROOT_CA_CERT_PUBLISHER,
                SERVICE_ACCOUNT,
                SERVICE_ACCOUNT_TOKEN,
                VALIDATING_ADMISSION_POLICY_STATUS
            ]
        );
        assert_eq!(parse(&["namespace"]).unwrap(), vec![NAMESPACE]);
        assert_eq!(parse(&["-namespace"]).unwrap(), Vec::<&str>::new());
        assert_eq!(parse(&[]).unwrap(), Vec::<&str>::new());
        assert_eq!(
            parse(&["*,nope"]).unwrap_err().to_string(),
            "\"nope\" is not in the list of known controllers"
        );
    }
}
