//! API Priority and Fairness, as kube-apiserver 1.34's
//! `staging/src/k8s.io/apiserver/pkg/util/flowcontrol` (`apf_controller.go`,
//! `apf_filter.go`, `fairqueuing/queueset`) and the filter
//! `server/filters/priority-and-fairness.go`: each request is classified by
//! the FlowSchemas (`flow_schema.rs`) into a priority level; the exempt
//! level runs at once, a limited one waits for one of its seats in a
//! shuffle-sharded fair queue (`queue_set.rs`) or is refused with 429.
//! The configuration is the store's FlowSchemas and
//! PriorityLevelConfigurations, digested into an immutable [`Config`]
//! (`config.rs`) swapped when they change (`crate::flowcontrol_consumer`);
//! the bootstrap objects (`bootstrap.rs`) are kept by the
//! `priority-and-fairness-config-producer` post-start hook
//! (`crate::flowcontrol_producer`).

pub mod bootstrap;
mod config;
mod flow_schema;
mod queue_set;
mod retry_after;
mod shuffle_shard;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use config::{nominal_concurrency_limit, Config, LevelStates};
pub use queue_set::Seat;

use crate::authz::Attributes;
use crate::snapshot_cell::SnapshotCell;
use queue_set::Arrival;

/// `X-Kubernetes-PF-FlowSchema-UID`.
pub const FLOW_SCHEMA_UID_HEADER: &str = "x-kubernetes-pf-flowschema-uid";
/// `X-Kubernetes-PF-PriorityLevel-UID`.
pub const PRIORITY_LEVEL_UID_HEADER: &str = "x-kubernetes-pf-prioritylevel-uid";

/// `maxRequestWaitLimit`: no request waits in a queue longer.
const MAX_REQUEST_WAIT: Duration = Duration::from_secs(15);

/// Which schema and level a request was classified into, for the
/// response headers (`setResponseHeaders`). Owned copies, not shares of
/// the configuration: a reference count that every request on both cores
/// bumps costs more than copying the four short strings (issue #18's APF
/// cost goal).
#[derive(Debug, Clone)]
pub struct Classification {
    flow_schema_uid: String,
    priority_level_uid: String,
    /// The schema's name, a newline, the level's name.
    names: String,
}

impl Classification {
    fn of(schema: &config::Schema) -> Classification {
        let mut names =
            String::with_capacity(schema.schema.name.len() + 1 + schema.level.name.len());
        names.push_str(&schema.schema.name);
        names.push('\n');
        names.push_str(&schema.level.name);
        Classification {
            flow_schema_uid: schema.schema.uid.clone(),
            priority_level_uid: schema.level.uid.clone(),
            names,
        }
    }
    pub fn flow_schema(&self) -> &str {
        self.names.split('\n').next().unwrap_or_default()
    }
    pub fn flow_schema_uid(&self) -> &str {
        &self.flow_schema_uid
    }
    pub fn priority_level(&self) -> &str {
        self.names.split('\n').nth(1).unwrap_or_default()
    }
    pub fn priority_level_uid(&self) -> &str {
        &self.priority_level_uid
    }
    /// The two UIDs, moved into the response headers.
    pub fn into_uids(self) -> (String, String) {
        (self.flow_schema_uid, self.priority_level_uid)
    }
}

/// The outcome of [`FlowControl::admit`].
#[derive(Debug)]
pub enum Decision {
    /// The exempt level: no seat.
    Exempt(Classification),
    /// A seat of the request's level, held while it is served.
    Admitted(Classification, Seat),
    /// No seat before the queue-wait limit, or no room in its queue:
    /// 429 with this `Retry-After`.
    Rejected(Classification, i64),
}

/// The server's priority and fairness state.
#[derive(Debug)]
pub struct FlowControl {
    /// `--max-requests-inflight` + `--max-mutating-requests-inflight`.
    server_limit: usize,
    /// `--request-timeout` / 4 (`WithPriorityAndFairness`'s default wait).
    default_wait: Duration,
    /// Read by each request through its thread's share (`snapshot_cell.rs`).
    config: SnapshotCell<Config>,
    states: Mutex<LevelStates>,
}

impl FlowControl {
    /// Starts with the mandatory objects imagined, until the store's are read.
    pub fn new(server_limit: usize, request_timeout: Duration) -> FlowControl {
        let mut states = LevelStates::default();
        let config = Config::digest(&[], &[], server_limit.max(1), &mut states);
        FlowControl {
            server_limit: server_limit.max(1),
            default_wait: request_timeout / 4,
            config: SnapshotCell::new(Arc::new(config)),
            states: Mutex::new(states),
        }
    }

    pub fn server_limit(&self) -> usize {
        self.server_limit
    }

    /// The configuration requests are classified against now.
    pub fn config(&self) -> Arc<Config> {
        self.config.load()
    }

    /// Digests these objects and makes them the configuration.
    pub fn configure(
        &self,
        flow_schemas: &[serde_json::Value],
        priority_levels: &[serde_json::Value],
    ) -> Arc<Config> {
        let mut states = self
            .states
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let config = Arc::new(Config::digest(
            flow_schemas,
            priority_levels,
            self.server_limit,
            &mut states,
        ));
        self.config.replace(config.clone());
        config
    }

    /// How long a request received at `received` with `deadline` may wait
    /// in a queue (`getRequestWaitContext`): a quarter of its time, at most
    /// 15 seconds.
    pub fn wait_until(&self, received: Instant, deadline: Option<Instant>) -> Instant {
        let wait = match deadline {
            Some(deadline) => deadline.saturating_duration_since(received) / 4,
            None => self.default_wait,
        };
        received + wait.min(MAX_REQUEST_WAIT)
    }

    /// Classifies the request and takes a seat for it, waiting in its
    /// queue until `wait_until` at most (`Handle` of `apf_filter.go`).
    pub async fn admit(&self, request: &Attributes<'_>, wait_until: Instant) -> Option<Decision> {
        let (classification, arrival) = self.config.with(|config| {
            let schema = config.classify(request)?;
            let classification = Classification::of(schema);
            let level = &schema.level;
            let Some(queues) = &level.queues else {
                return Some((classification, None));
            };
            // The flow's hash, only where there is more than one queue.
            let hash = if level.queuing.queues > 1 {
                shuffle_shard::flow_hash(
                    &schema.schema.name,
                    schema.schema.flow_distinguisher(request),
                )
            } else {
                0
            };
            let arrival = match queues.arrive(hash) {
                Arrival::Dispatched(seat) => Ok(seat),
                Arrival::Queued(waiting) => Err(Some((waiting, level.retry_after.clone()))),
                Arrival::Rejected => Err(None),
            };
            let arrival = arrival.map_err(|queued| {
                queued.ok_or_else(|| rejected(&classification, &level.retry_after))
            });
            Some((classification, Some(arrival)))
        })?;
        let Some(arrival) = arrival else {
            return Some(Decision::Exempt(classification));
        };
        Some(match arrival {
            Ok(seat) => Decision::Admitted(classification, seat),
            Err(Ok((waiting, retry_after))) => match waiting.wait(wait_until).await {
                Some(seat) => Decision::Admitted(classification, seat),
                None => {
                    let retry_after = rejected(&classification, &retry_after);
                    Decision::Rejected(classification, retry_after)
                }
            },
            Err(Err(retry_after)) => Decision::Rejected(classification, retry_after),
        })
    }
}

/// A request its level refused: logged, counted for `Retry-After`.
fn rejected(classification: &Classification, retry_after: &retry_after::RetryAfter) -> i64 {
    tracing::debug!(
        priority_level = classification.priority_level(),
        flow_schema = classification.flow_schema(),
        "request rejected by priority and fairness"
    );
    retry_after.dropped()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authn::UserInfo;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|group| (*group).to_string()).collect(),
            ..UserInfo::default()
        }
    }

    fn bootstrap(flow_control: &FlowControl) {
        let schemas: Vec<_> = bootstrap::mandatory_flow_schemas()
            .into_iter()
            .chain(bootstrap::suggested_flow_schemas())
            .collect();
        let levels: Vec<_> = bootstrap::mandatory_priority_levels()
            .into_iter()
            .chain(bootstrap::suggested_priority_levels())
            .collect();
        flow_control.configure(&schemas, &levels);
    }

    #[tokio::test]
    async fn exempt_requests_never_wait_and_limited_ones_are_refused_when_full() {
        let flow_control = FlowControl::new(2, Duration::from_secs(60));
        bootstrap(&flow_control);
        let admin = user("admin", &["system:masters"]);
        let jane = user("jane", &["system:authenticated"]);
        let now = Instant::now();
        let mut held = Vec::new();
        for _ in 0..3 {
            let decision = flow_control
                .admit(&Attributes::non_resource(&admin, "get", "/version"), now)
                .await;
            assert!(
                matches!(decision, Some(Decision::Exempt(ref c)) if c.flow_schema() == "exempt")
            );
        }
        // global-default has one of the two seats.
        let first = flow_control
            .admit(&Attributes::non_resource(&jane, "get", "/version"), now)
            .await;
        let Some(Decision::Admitted(classification, seat)) = first else {
            panic!("{first:?}");
        };
        assert_eq!(classification.priority_level(), "global-default");
        held.push(seat);
        // The second waits until its (past) limit and is refused.
        let second = flow_control
            .admit(&Attributes::non_resource(&jane, "get", "/version"), now)
            .await;
        assert!(
            matches!(second, Some(Decision::Rejected(_, 1))),
            "{second:?}"
        );
        drop(held);
        let third = flow_control
            .admit(&Attributes::non_resource(&jane, "get", "/version"), now)
            .await;
        assert!(matches!(third, Some(Decision::Admitted(..))), "{third:?}");
    }

    #[test]
    fn a_request_waits_a_quarter_of_its_time_at_most_fifteen_seconds() {
        let flow_control = FlowControl::new(600, Duration::from_secs(60));
        let received = Instant::now();
        assert_eq!(
            flow_control.wait_until(received, None),
            received + Duration::from_secs(15)
        );
        assert_eq!(
            flow_control.wait_until(received, Some(received + Duration::from_secs(4))),
            received + Duration::from_secs(1)
        );
        assert_eq!(
            flow_control.wait_until(received, Some(received + Duration::from_secs(600))),
            received + Duration::from_secs(15)
        );
    }
}
