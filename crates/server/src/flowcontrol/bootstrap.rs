//! The FlowSchemas and PriorityLevelConfigurations kube-apiserver 1.34
//! starts with (`staging/src/k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go`):
//! the mandatory `exempt` and `catch-all` pairs, and the suggested set.
//! Every object carries `apf.kubernetes.io/autoupdate-spec: "true"`.

use serde_json::{json, Value};

/// `flowcontrol.AutoUpdateAnnotationKey`.
pub const AUTO_UPDATE_ANNOTATION: &str = "apf.kubernetes.io/autoupdate-spec";
/// `flowcontrol.PriorityLevelConfigurationNameExempt`.
pub const EXEMPT: &str = "exempt";
/// `flowcontrol.FlowSchemaNameCatchAll` and `PriorityLevelConfigurationNameCatchAll`.
pub const CATCH_ALL: &str = "catch-all";
pub const API_VERSION: &str = "flowcontrol.apiserver.k8s.io/v1";

fn metadata(name: &str) -> Value {
    json!({"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}})
}

fn limited(name: &str, shares: i64, lendable: i64, queuing: Option<(i64, i64, i64)>) -> Value {
    let limit_response = match queuing {
        Some((queues, hand_size, queue_length_limit)) => json!({
            "type": "Queue",
            "queuing": {"queues": queues, "handSize": hand_size, "queueLengthLimit": queue_length_limit},
        }),
        None => json!({"type": "Reject"}),
    };
    json!({
        "apiVersion": API_VERSION,
        "kind": "PriorityLevelConfiguration",
        "metadata": metadata(name),
        "spec": {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": shares,
                "lendablePercent": lendable,
                "limitResponse": limit_response,
            },
        },
    })
}

fn exempt_level() -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": "PriorityLevelConfiguration",
        "metadata": metadata(EXEMPT),
        "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
    })
}

fn group(name: &str) -> Value {
    json!({"kind": "Group", "group": {"name": name}})
}

fn user(name: &str) -> Value {
    json!({"kind": "User", "user": {"name": name}})
}

fn kube_system_service_account(name: &str) -> Value {
    json!({"kind": "ServiceAccount", "serviceAccount": {"name": name, "namespace": "kube-system"}})
}

fn resource_rule(
    verbs: &[&str],
    groups: &[&str],
    resources: &[&str],
    namespaces: &[&str],
    cluster_scope: bool,
) -> Value {
    let mut rule = json!({"verbs": verbs, "apiGroups": groups, "resources": resources, "namespaces": namespaces});
    if cluster_scope {
        rule["clusterScope"] = Value::Bool(true);
    }
    rule
}

fn every_resource() -> Value {
    resource_rule(&["*"], &["*"], &["*"], &["*"], true)
}

fn every_non_resource() -> Value {
    json!({"verbs": ["*"], "nonResourceURLs": ["*"]})
}

/// `newFlowSchema` with one `PolicyRulesWithSubjects`.
fn flow_schema(
    name: &str,
    level: &str,
    precedence: i64,
    distinguisher: Option<&str>,
    rule: Value,
) -> Value {
    let mut spec = json!({
        "priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence,
        "rules": [rule],
    });
    if let Some(method) = distinguisher {
        spec["distinguisherMethod"] = json!({"type": method});
    }
    json!({
        "apiVersion": API_VERSION,
        "kind": "FlowSchema",
        "metadata": metadata(name),
        "spec": spec,
    })
}

/// `NewFSAll`-style: the subjects, every resource and non-resource request.
fn flow_schema_all(
    name: &str,
    level: &str,
    precedence: i64,
    distinguisher: Option<&str>,
    subjects: Vec<Value>,
) -> Value {
    flow_schema(
        name,
        level,
        precedence,
        distinguisher,
        json!({"subjects": subjects, "resourceRules": [every_resource()], "nonResourceRules": [every_non_resource()]}),
    )
}

const BY_USER: Option<&str> = Some("ByUser");
const BY_NAMESPACE: Option<&str> = Some("ByNamespace");
const UNAUTHENTICATED: &str = "system:unauthenticated";
const AUTHENTICATED: &str = "system:authenticated";
const CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
const SCHEDULER: &str = "system:kube-scheduler";

/// `MandatoryPriorityLevelConfigurations`.
pub fn mandatory_priority_levels() -> Vec<Value> {
    vec![exempt_level(), limited(CATCH_ALL, 5, 0, None)]
}

/// `MandatoryFlowSchemas`.
pub fn mandatory_flow_schemas() -> Vec<Value> {
    vec![
        flow_schema_all(EXEMPT, EXEMPT, 1, None, vec![group("system:masters")]),
        flow_schema_all(
            CATCH_ALL,
            CATCH_ALL,
            10000,
            BY_USER,
            vec![group(UNAUTHENTICATED), group(AUTHENTICATED)],
        ),
    ]
}

/// `SuggestedPriorityLevelConfigurations`.
pub fn suggested_priority_levels() -> Vec<Value> {
    vec![
        limited("system", 30, 33, Some((64, 6, 50))),
        limited("node-high", 40, 25, Some((64, 6, 50))),
        limited("leader-election", 10, 0, Some((16, 4, 50))),
        limited("workload-high", 40, 50, Some((128, 6, 50))),
        limited("workload-low", 100, 90, Some((128, 6, 50))),
        limited("global-default", 20, 50, Some((128, 6, 50))),
    ]
}

/// `SuggestedFlowSchemas`.
pub fn suggested_flow_schemas() -> Vec<Value> {
    let leader_election_rules = |namespaces: &[&str]| {
        vec![
            resource_rule(
                &["get", "create", "update"],
                &[""],
                &["endpoints", "configmaps"],
                namespaces,
                false,
            ),
            resource_rule(
                &["get", "create", "update"],
                &["coordination.k8s.io"],
                &["leases"],
                &["*"],
                false,
            ),
        ]
    };
    let mut system_leader_election = vec![user(CONTROLLER_MANAGER), user(SCHEDULER)];
    system_leader_election.push(kube_system_service_account("*"));
    vec![
        flow_schema_all(
            "system-nodes",
            "system",
            500,
            BY_USER,
            vec![group("system:nodes")],
        ),
        flow_schema(
            "system-node-high",
            "node-high",
            400,
            BY_USER,
            json!({
                "subjects": [group("system:nodes")],
                "resourceRules": [
                    resource_rule(&["*"], &[""], &["nodes", "nodes/status"], &["*"], true),
                    resource_rule(&["*"], &["coordination.k8s.io"], &["leases"], &["*"], false),
                ],
            }),
        ),
        flow_schema(
            "probes",
            EXEMPT,
            2,
            None,
            json!({
                "subjects": [group(UNAUTHENTICATED), group(AUTHENTICATED)],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}],
            }),
        ),
        flow_schema(
            "system-leader-election",
            "leader-election",
            100,
            BY_USER,
            json!({"subjects": system_leader_election, "resourceRules": leader_election_rules(&["kube-system"])}),
        ),
        flow_schema(
            "workload-leader-election",
            "leader-election",
            200,
            BY_USER,
            json!({"subjects": [kube_system_service_account("*")], "resourceRules": leader_election_rules(&["*"])}),
        ),
        flow_schema(
            "endpoint-controller",
            "workload-high",
            150,
            BY_USER,
            json!({
                "subjects": [
                    user(CONTROLLER_MANAGER),
                    kube_system_service_account("endpoint-controller"),
                    kube_system_service_account("endpointslicemirroring-controller"),
                ],
                "resourceRules": [resource_rule(&["get", "create", "update"], &[""], &["endpoints"], &["*"], false)],
            }),
        ),
        flow_schema_all(
            "kube-controller-manager",
            "workload-high",
            800,
            BY_NAMESPACE,
            vec![user(CONTROLLER_MANAGER)],
        ),
        flow_schema_all(
            "kube-scheduler",
            "workload-high",
            800,
            BY_NAMESPACE,
            vec![user(SCHEDULER)],
        ),
        flow_schema_all(
            "kube-system-service-accounts",
            "workload-high",
            900,
            BY_NAMESPACE,
            vec![kube_system_service_account("*")],
        ),
        flow_schema_all(
            "service-accounts",
            "workload-low",
            9000,
            BY_USER,
            vec![group("system:serviceaccounts")],
        ),
        flow_schema_all(
            "global-default",
            "global-default",
            9900,
            BY_USER,
            vec![group(UNAUTHENTICATED), group(AUTHENTICATED)],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(objects: &[Value]) -> Vec<&str> {
        objects
            .iter()
            .filter_map(|object| object["metadata"]["name"].as_str())
            .collect()
    }

    #[test]
    fn every_flow_schema_names_a_bootstrap_priority_level() {
        let levels: Vec<Value> = mandatory_priority_levels()
            .into_iter()
            .chain(suggested_priority_levels())
            .collect();
        let level_names = names(&levels);
        let schemas: Vec<Value> = mandatory_flow_schemas()
            .into_iter()
            .chain(suggested_flow_schemas())
            .collect();
        assert_eq!(schemas.len(), 13);
        assert_eq!(levels.len(), 8);
        for schema in &schemas {
            let level = schema["spec"]["priorityLevelConfiguration"]["name"]
                .as_str()
                .unwrap_or_default();
            assert!(level_names.contains(&level), "{level}");
            assert_eq!(
                schema["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION],
                "true"
            );
        }
    }
}
