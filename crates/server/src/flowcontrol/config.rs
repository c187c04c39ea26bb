//! The configuration requests are classified against: the FlowSchemas and
//! PriorityLevelConfigurations the store holds, digested as kube's
//! `apf_controller.go` (`digestConfigObjects`) does: schemas sorted by
//! matching precedence then name, dangling ones (naming a level that does
//! not exist) left out, the mandatory objects imagined while missing, and
//! each limited level's nominal concurrency limit
//! `ceil(server limit × nominalConcurrencyShares / Σ shares)`.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::bootstrap;
use super::flow_schema::CompiledFlowSchema;
use super::queue_set::{QueueSet, QueuingConfig};
use super::retry_after::RetryAfter;

/// One priority level as requests see it.
#[derive(Debug)]
pub struct PriorityLevel {
    pub name: String,
    pub uid: String,
    /// `None`: the exempt level (never queued).
    pub queues: Option<Arc<QueueSet>>,
    /// What `queues` was configured with (read without its lock).
    pub queuing: QueuingConfig,
    pub retry_after: Arc<RetryAfter>,
}

/// A schema and the level it names.
#[derive(Debug)]
pub struct Schema {
    pub schema: Arc<CompiledFlowSchema>,
    pub level: Arc<PriorityLevel>,
}

/// An immutable digest of the configuration, swapped whole on a change.
#[derive(Debug, Default)]
pub struct Config {
    /// In matching order.
    pub schemas: Vec<Schema>,
    /// The schemas that name no existing level (`Dangling`), by name.
    pub dangling: Vec<String>,
}

/// The per-level state that outlives configurations: queued and running
/// requests stay where they are when the configuration changes.
#[derive(Debug, Default)]
pub struct LevelStates {
    levels: HashMap<String, (Arc<QueueSet>, Arc<RetryAfter>)>,
}

/// `spec.limited`'s shares and queuing (`None` for the exempt type).
fn limited_spec(level: &Value) -> Option<(u64, usize, usize, usize)> {
    let limited = level["spec"]["limited"].as_object()?;
    let shares = limited
        .get("nominalConcurrencyShares")
        .and_then(Value::as_u64)
        .unwrap_or(30);
    let queuing = &limited
        .get("limitResponse")
        .map(|response| &response["queuing"]);
    let is_queue = limited
        .get("limitResponse")
        .and_then(|response| response["type"].as_str())
        == Some("Queue");
    let number = |field: &str, default: u64| {
        queuing
            .and_then(|queuing| queuing[field].as_u64())
            .unwrap_or(default) as usize
    };
    if !is_queue {
        return Some((shares, 0, 0, 0));
    }
    Some((
        shares,
        number("queues", 64),
        number("handSize", 8),
        number("queueLengthLimit", 50),
    ))
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

/// The nominal concurrency limit of a level with `shares` of `total`
/// (`ceil`, at least 1 for a limited level, as kube's `computeNominalConcurrencyLimit`).
pub fn nominal_concurrency_limit(server_limit: usize, shares: u64, total: u64) -> usize {
    if total == 0 {
        return server_limit.max(1);
    }
    let limit = (server_limit as u64 * shares).div_ceil(total);
    (limit as usize).max(1)
}

impl Config {
    /// Digests `flow_schemas` and `priority_levels` for a server limit of
    /// `server_limit` seats, reusing (and reconfiguring) `states`' queues.
    pub fn digest(
        flow_schemas: &[Value],
        priority_levels: &[Value],
        server_limit: usize,
        states: &mut LevelStates,
    ) -> Config {
        let mut levels: Vec<Value> = priority_levels.to_vec();
        for mandatory in bootstrap::mandatory_priority_levels() {
            if !levels
                .iter()
                .any(|level| name_of(level) == name_of(&mandatory))
            {
                levels.push(mandatory);
            }
        }
        let mut schemas_objects: Vec<Value> = flow_schemas.to_vec();
        for mandatory in bootstrap::mandatory_flow_schemas() {
            if !schemas_objects
                .iter()
                .any(|schema| name_of(schema) == name_of(&mandatory))
            {
                schemas_objects.push(mandatory);
            }
        }
        let total_shares: u64 = levels
            .iter()
            .filter_map(limited_spec)
            .map(|(shares, ..)| shares)
            .sum();
        let mut by_name: HashMap<String, Arc<PriorityLevel>> = HashMap::new();
        let mut kept = HashMap::new();
        for level in &levels {
            let name = name_of(level).to_string();
            let uid = level["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let exempt =
                level["spec"]["type"].as_str() == Some("Exempt") || name == bootstrap::EXEMPT;
            let mut queuing = QueuingConfig {
                concurrency_limit: 0,
                queues: 0,
                hand_size: 0,
                queue_length_limit: 0,
            };
            let (queues, retry_after) = match (exempt, limited_spec(level)) {
                (false, Some((shares, queues, hand_size, queue_length_limit))) => {
                    let config = QueuingConfig {
                        concurrency_limit: nominal_concurrency_limit(
                            server_limit,
                            shares,
                            total_shares,
                        ),
                        queues,
                        hand_size,
                        queue_length_limit,
                    };
                    let (set, retry_after) = match states.levels.remove(&name) {
                        Some((set, retry_after)) => {
                            set.reconfigure(config);
                            (set, retry_after)
                        }
                        None => (QueueSet::new(config), Arc::new(RetryAfter::default())),
                    };
                    kept.insert(name.clone(), (set.clone(), retry_after.clone()));
                    queuing = config;
                    (Some(set), retry_after)
                }
                _ => (None, Arc::new(RetryAfter::default())),
            };
            by_name.insert(
                name.clone(),
                Arc::new(PriorityLevel {
                    name,
                    uid,
                    queues,
                    queuing,
                    retry_after,
                }),
            );
        }
        // Levels that are gone: their requests finish on the seats they hold.
        states.levels = kept;
        let mut compiled: Vec<CompiledFlowSchema> = schemas_objects
            .iter()
            .map(CompiledFlowSchema::compile)
            .collect();
        compiled.sort_by(|a, b| {
            (a.matching_precedence, &a.name).cmp(&(b.matching_precedence, &b.name))
        });
        let mut config = Config::default();
        for schema in compiled {
            match by_name.get(&schema.priority_level) {
                Some(level) => config.schemas.push(Schema {
                    level: level.clone(),
                    schema: Arc::new(schema),
                }),
                None => config.dangling.push(schema.name),
            }
        }
        config
    }

    /// The first schema matching the request, else `catch-all` (kube's
    /// fallback for a user in neither `system:authenticated` nor
    /// `system:unauthenticated`).
    pub fn classify(&self, request: &crate::authz::Attributes<'_>) -> Option<&Schema> {
        self.schemas
            .iter()
            .find(|schema| schema.schema.matches(request))
            .or_else(|| {
                self.schemas
                    .iter()
                    .find(|schema| schema.schema.name == bootstrap::CATCH_ALL)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bootstrap_config(server_limit: usize) -> Config {
        let schemas: Vec<Value> = bootstrap::mandatory_flow_schemas()
            .into_iter()
            .chain(bootstrap::suggested_flow_schemas())
            .collect();
        let levels: Vec<Value> = bootstrap::mandatory_priority_levels()
            .into_iter()
            .chain(bootstrap::suggested_priority_levels())
            .collect();
        Config::digest(&schemas, &levels, server_limit, &mut LevelStates::default())
    }

    fn limit_of(config: &Config, level: &str) -> Option<usize> {
        config
            .schemas
            .iter()
            .find(|schema| schema.level.name == level)
            .and_then(|schema| schema.level.queues.as_ref())
            .map(|queues| queues.config().concurrency_limit)
    }

    /// kube's defaults (600 seats, 245 shares): the limits `kubectl get
    /// --raw /debug/api_priority_and_fairness/dump_priority_levels` shows.
    #[test]
    fn nominal_limits_follow_the_shares() {
        let config = bootstrap_config(600);
        assert_eq!(limit_of(&config, "catch-all"), Some(13));
        assert_eq!(limit_of(&config, "global-default"), Some(49));
        assert_eq!(limit_of(&config, "leader-election"), Some(25));
        assert_eq!(limit_of(&config, "node-high"), Some(98));
        assert_eq!(limit_of(&config, "system"), Some(74));
        assert_eq!(limit_of(&config, "workload-high"), Some(98));
        assert_eq!(limit_of(&config, "workload-low"), Some(245));
        assert_eq!(limit_of(&config, "exempt"), None);
        // Two seats: every limited level still gets one.
        let tiny = bootstrap_config(2);
        assert_eq!(limit_of(&tiny, "global-default"), Some(1));
        assert_eq!(limit_of(&tiny, "workload-low"), Some(1));
    }

    #[test]
    fn schemas_in_precedence_order_and_dangling_ones_left_out() {
        let config = bootstrap_config(600);
        let names: Vec<&str> = config
            .schemas
            .iter()
            .map(|schema| schema.schema.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "exempt",
                "probes",
                "system-leader-election",
                "endpoint-controller",
                "workload-leader-election",
                "system-node-high",
                "system-nodes",
                "kube-controller-manager",
                "kube-scheduler",
                "kube-system-service-accounts",
                "service-accounts",
                "global-default",
                "catch-all",
            ]
        );
        let orphan = serde_json::json!({"metadata": {"name": "orphan"}, "spec": {"priorityLevelConfiguration": {"name": "nope"}, "matchingPrecedence": 3}});
        let config = Config::digest(&[orphan], &[], 600, &mut LevelStates::default());
        assert_eq!(config.dangling, ["orphan"]);
        // The mandatory objects are imagined while missing.
        let names: Vec<&str> = config
            .schemas
            .iter()
            .map(|schema| schema.schema.name.as_str())
            .collect();
        assert_eq!(names, ["exempt", "catch-all"]);
    }
}
