//! Lease-based leader election among ferrokube replicas, so the built-in
//! controllers run in exactly one of them.
//!
//! client-go's `tools/leaderelection` (`leaderelection.go`,
//! `resourcelock/leaselock.go`) as kube-controller-manager uses it: a
//! `coordination.k8s.io/v1` Lease in `kube-system` whose `holderIdentity` is
//! the leader; the leader renews it every `retry_period` and steps down when
//! it could not renew for `renew_deadline`; a candidate takes it over once
//! the record has not changed for `lease_duration` *by its own clock*
//! (client-go's `observedTime`: no clock comparison across machines). Every
//! change is an update with the read resourceVersion, so two candidates never
//! both win. The outcome is a `watch::Receiver<bool>` "leading".

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};
use tokio::sync::watch;

use crate::api::Api;
use crate::controllers::{Client, ClientError};

/// The Lease the controllers are elected through.
pub const LEASE_NAMESPACE: &str = "kube-system";
pub const LEASE_NAME: &str = "ferrokube-controllers";

#[derive(Debug, Clone)]
pub struct LeaderElectionConfig {
    /// `holderIdentity`: client-go's convention, `hostname_uuid`.
    pub identity: String,
    pub namespace: String,
    pub name: String,
    /// kube-controller-manager's `--leader-elect-lease-duration` (15s).
    pub lease_duration: Duration,
    /// `--leader-elect-renew-deadline` (10s).
    pub renew_deadline: Duration,
    /// `--leader-elect-retry-period` (2s).
    pub retry_period: Duration,
}

impl LeaderElectionConfig {
    /// kube-controller-manager's defaults, with a fresh `hostname_uuid` identity.
    pub fn new() -> Self {
        LeaderElectionConfig {
            identity: format!("{}_{}", hostname(), uuid::Uuid::new_v4()),
            namespace: LEASE_NAMESPACE.to_string(),
            name: LEASE_NAME.to_string(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        Self::new()
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "ferrokube".to_string())
}

/// "Always leading", for a server that is the only one on its store.
pub fn always_leading() -> watch::Receiver<bool> {
    let (sender, receiver) = watch::channel(true);
    // Keep the sender alive for the life of the process: a closed channel
    // would read as "stop" to the controllers.
    std::mem::forget(sender);
    receiver
}

/// Start campaigning; the receiver says whether this replica leads now.
/// Ends (releasing the Lease) when the server shuts down.
pub fn spawn(api: Arc<Api>, config: LeaderElectionConfig) -> watch::Receiver<bool> {
    let (leading, receiver) = watch::channel(false);
    tokio::spawn(async move {
        let mut elector = Elector {
            client: Client::apiserver(api.clone()),
            path: format!(
                "/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}",
                config.namespace, config.name
            ),
            collection: format!(
                "/apis/coordination.k8s.io/v1/namespaces/{}/leases",
                config.namespace
            ),
            config,
            observed: None,
            observed_at: Instant::now(),
        };
        let mut shutdown = api.shutdown_signal();
        let mut last_renew = Instant::now();
        loop {
            let now_leading = *leading.borrow();
            match elector.try_acquire_or_renew().await {
                Ok(true) => {
                    last_renew = Instant::now();
                    if !now_leading {
                        tracing::info!(identity = %elector.config.identity, "became leader");
                        leading.send_replace(true);
                    }
                }
                Ok(false) => {
                    if now_leading {
                        tracing::warn!("lost the lease to another replica");
                        leading.send_replace(false);
                    }
                }
                Err(error) => {
                    tracing::debug!(%error, "leader election round failed");
                    // client-go: the leader steps down once it could not renew
                    // for renew_deadline.
                    if now_leading && last_renew.elapsed() >= elector.config.renew_deadline {
                        tracing::warn!(%error, "could not renew the lease; stepping down");
                        leading.send_replace(false);
                    }
                }
            }
            let pause = jitter(elector.config.retry_period, *leading.borrow());
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                _ = shutdown.wait_for(|stop| *stop) => break,
            }
        }
        if *leading.borrow() {
            leading.send_replace(false);
            elector.release().await;
        }
    });
    receiver
}

/// client-go's `wait.JitterUntil(..., JitterFactor 1.2)` for candidates; the
/// leader renews on the plain period.
fn jitter(period: Duration, leading: bool) -> Duration {
    if leading {
        return period;
    }
    let random = f64::from(uuid::Uuid::new_v4().as_bytes()[0]) / 255.0;
    period + period.mul_f64(1.2 * random)
}

/// The parts of the record whose change restarts the expiry clock
/// (client-go compares the whole `LeaderElectionRecord`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    holder: String,
    renew_time: String,
    transitions: i64,
}

struct Elector {
    client: Client,
    path: String,
    collection: String,
    config: LeaderElectionConfig,
    observed: Option<Record>,
    observed_at: Instant,
}

impl Elector {
    /// client-go's `tryAcquireOrRenew`.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, ClientError> {
        let now = micro_time(SystemTime::now());
        let lease_seconds = self.config.lease_duration.as_secs().max(1);
        let current = match self.client.get(&self.path).await {
            Ok(lease) => lease,
            Err(error) if error.is_not_found() => {
                let lease = json!({
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": self.config.name, "namespace": self.config.namespace},
                    "spec": {
                        "holderIdentity": self.config.identity,
                        "leaseDurationSeconds": lease_seconds,
                        "acquireTime": now,
                        "renewTime": now,
                        "leaseTransitions": 0,
                    }
                });
                return match self.client.create(&self.collection, &lease).await {
                    Ok(created) => {
                        self.observe(&created);
                        Ok(true)
                    }
                    Err(error) if error.is_already_exists() => Ok(false),
                    Err(error) => Err(error),
                };
            }
            Err(error) => return Err(error),
        };
        let record = record_of(&current);
        if self.observed.as_ref() != Some(&record) {
            self.observed = Some(record.clone());
            self.observed_at = Instant::now();
        }
        let held_by_me = record.holder == self.config.identity;
        let duration = current
            .pointer("/spec/leaseDurationSeconds")
            .and_then(Value::as_u64)
            .map_or(self.config.lease_duration, Duration::from_secs);
        let expired = record.holder.is_empty() || self.observed_at.elapsed() >= duration;
        if !held_by_me && !expired {
            return Ok(false);
        }
        let mut lease = current.clone();
        let spec = lease
            .as_object_mut()
            .map(|object| object.entry("spec").or_insert_with(|| json!({})));
        let Some(Value::Object(spec)) = spec else {
            return Ok(false);
        };
        if !held_by_me {
            spec.insert("acquireTime".into(), json!(now));
            spec.insert("leaseTransitions".into(), json!(record.transitions + 1));
        }
        spec.insert("holderIdentity".into(), json!(self.config.identity));
        spec.insert("leaseDurationSeconds".into(), json!(lease_seconds));
        spec.insert("renewTime".into(), json!(now));
        // The read resourceVersion stays in metadata: a concurrent change
        // makes this a 409 Conflict, and the other candidate keeps it.
        match self.client.update(&self.path, &lease).await {
            Ok(updated) => {
                self.observe(&updated);
                Ok(true)
            }
            Err(error) if error.is_conflict() => Ok(false),
            Err(error) => Err(error),
        }
    }

    fn observe(&mut self, lease: &Value) {
        self.observed = Some(record_of(lease));
        self.observed_at = Instant::now();
    }

    /// client-go's `release`: an empty holder lets the next candidate in at once.
    async fn release(&mut self) {
        let Ok(mut lease) = self.client.get(&self.path).await else {
            return;
        };
        if record_of(&lease).holder != self.config.identity {
            return;
        }
        let now = micro_time(SystemTime::now());
        if let Some(Value::Object(spec)) = lease.get_mut("spec") {
            spec.insert("holderIdentity".into(), json!(""));
            spec.insert("leaseDurationSeconds".into(), json!(1));
            spec.insert("acquireTime".into(), json!(now));
            spec.insert("renewTime".into(), json!(now));
        }
        if let Err(error) = self.client.update(&self.path, &lease).await {
            tracing::debug!(%error, "releasing the lease");
        }
    }
}

fn record_of(lease: &Value) -> Record {
    let text = |pointer: &str| {
        lease
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Record {
        holder: text("/spec/holderIdentity"),
        renew_time: text("/spec/renewTime"),
        transitions: lease
            .pointer("/spec/leaseTransitions")
            .and_then(Value::as_i64)
            .unwrap_or(0),
    }
}

/// `metav1.MicroTime`: `2006-01-02T15:04:05.000000Z`.
fn micro_time(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = crate::go::time::rfc3339(time);
    let whole = seconds.trim_end_matches('Z');
    format!("{whole}.{:06}Z", since.subsec_micros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_time_has_six_fractional_digits() {
        let time = SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456);
        assert_eq!(micro_time(time), "2023-11-14T22:13:20.123456Z");
    }

    #[test]
    fn identity_is_hostname_underscore_uuid() {
        let config = LeaderElectionConfig::new();
        let (host, id) = config.identity.rsplit_once('_').unwrap();
        assert!(!host.is_empty());
        assert!(uuid::Uuid::parse_str(id).is_ok());
    }
}
