//! API Priority and Fairness as kube-apiserver 1.34 runs it by default,
//! seen by real clients: kubectl lists the bootstrap FlowSchemas and
//! PriorityLevelConfigurations (`apis/flowcontrol/bootstrap/default.go`,
//! kept by the `priority-and-fairness-config-producer` hook) with their
//! `Dangling` conditions, and every classified response carries the
//! `X-Kubernetes-PF-FlowSchema-UID` / `X-Kubernetes-PF-PriorityLevel-UID`
//! headers of the objects that classified it. Queuing and the 429 are in
//! `serving_limits.rs`.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use ferrokube_testkit::{raw_request, TestEnv};
use serde_json::Value;

/// Far beyond anything the server needs; only there so a failure does not hang.
const EVENTUALLY: Duration = Duration::from_secs(60);

const FLOW_SCHEMAS: [&str; 13] = [
    "catch-all",
    "endpoint-controller",
    "exempt",
    "global-default",
    "kube-controller-manager",
    "kube-scheduler",
    "kube-system-service-accounts",
    "probes",
    "service-accounts",
    "system-leader-election",
    "system-node-high",
    "system-nodes",
    "workload-leader-election",
];

const PRIORITY_LEVELS: [&str; 8] = [
    "catch-all",
    "exempt",
    "global-default",
    "leader-election",
    "node-high",
    "system",
    "workload-high",
    "workload-low",
];

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

/// The names in `list`, but those other tests on the shared server create
/// (`apf-…`).
fn names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["metadata"]["name"].as_str().unwrap().to_string())
        .filter(|name| !name.starts_with("apf-"))
        .collect();
    names.sort();
    names
}

fn item<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

#[tokio::test]
async fn kubectl_lists_the_bootstrap_configuration() {
    let env = TestEnv::new("apf-boot").await;
    let levels = json(&env.kubectl_ok(
        "1.33",
        &["get", "prioritylevelconfigurations", "-o", "json"],
    ));
    assert_eq!(names(&levels), PRIORITY_LEVELS);
    let catch_all = item(&levels, "catch-all");
    assert_eq!(catch_all["spec"]["type"], "Limited");
    assert_eq!(catch_all["spec"]["limited"]["nominalConcurrencyShares"], 5);
    assert_eq!(
        catch_all["spec"]["limited"]["limitResponse"]["type"],
        "Reject"
    );
    let global = item(&levels, "global-default");
    assert_eq!(global["spec"]["limited"]["lendablePercent"], 50);
    assert_eq!(
        global["spec"]["limited"]["limitResponse"]["queuing"]["queues"],
        128
    );
    assert_eq!(item(&levels, "exempt")["spec"]["type"], "Exempt");
    assert_eq!(
        global["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"],
        "true"
    );

    // Every schema names an existing level: Dangling False, as kube's
    // controller writes it (asynchronously after the objects were created).
    let schemas = tokio::time::timeout(EVENTUALLY, async {
        loop {
            let schemas = json(&env.kubectl_ok("1.33", &["get", "flowschemas", "-o", "json"]));
            let all_found = FLOW_SCHEMAS.iter().all(|name| {
                let schema = item(&schemas, name);
                schema["status"]["conditions"][0]["type"] == "Dangling"
                    && schema["status"]["conditions"][0]["reason"] == "Found"
            });
            if all_found {
                return schemas;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("every FlowSchema's Dangling condition is written");
    assert_eq!(names(&schemas), FLOW_SCHEMAS);
    let exempt = item(&schemas, "exempt");
    assert_eq!(exempt["spec"]["matchingPrecedence"], 1);
    assert_eq!(exempt["status"]["conditions"][0]["status"], "False");
    assert_eq!(
        exempt["status"]["conditions"][0]["message"],
        "This FlowSchema references the PriorityLevelConfiguration object named \"exempt\" and it exists"
    );
    assert_eq!(
        item(&schemas, "kube-scheduler")["spec"]["distinguisherMethod"]["type"],
        "ByNamespace"
    );

    // The default table, as kubectl prints it.
    let table = env.kubectl_ok("1.33", &["get", "flowschemas"]);
    let exempt_row = table
        .lines()
        .find(|line| line.starts_with("exempt "))
        .unwrap_or_else(|| panic!("{table}"));
    let words: Vec<&str> = exempt_row.split_whitespace().collect();
    assert_eq!(&words[..4], ["exempt", "exempt", "1", "<none>"], "{table}");
}

/// The UID of the named object of `resource`.
async fn uid(env: &TestEnv, resource: &str, name: &str) -> String {
    let path = format!("/apis/flowcontrol.apiserver.k8s.io/v1/{resource}/{name}");
    let object = env.raw("GET", &path, None, vec![]).await.json();
    object["metadata"]["uid"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn responses_carry_the_classifying_objects_uids() {
    let env = TestEnv::new("apf-headers").await;
    let exempt_schema = uid(&env, "flowschemas", "exempt").await;
    let exempt_level = uid(&env, "prioritylevelconfigurations", "exempt").await;
    let global_schema = uid(&env, "flowschemas", "global-default").await;
    let global_level = uid(&env, "prioritylevelconfigurations", "global-default").await;
    let anonymous = env.client_with_token(None).await;
    // The configuration follows the store: once it has read the objects,
    // the admin (system:masters) is exempt and an anonymous request is
    // global-default's.
    tokio::time::timeout(EVENTUALLY, async {
        loop {
            let admin = env.raw("GET", "/api/v1/namespaces", None, vec![]).await;
            assert_eq!(admin.status, 200);
            let version = raw_request(&anonymous, "GET", "/version", None, vec![]).await;
            assert_eq!(version.status, 200, "{}", version.body);
            if admin.header("x-kubernetes-pf-flowschema-uid") == exempt_schema
                && admin.header("x-kubernetes-pf-prioritylevel-uid") == exempt_level
                && version.header("x-kubernetes-pf-flowschema-uid") == global_schema
                && version.header("x-kubernetes-pf-prioritylevel-uid") == global_level
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the PF headers name the classifying objects");
    // A forbidden request was classified too.
    let forbidden = raw_request(&anonymous, "GET", "/api/v1/secrets", None, vec![]).await;
    assert_eq!(forbidden.status, 403);
    assert_eq!(
        forbidden.header("x-kubernetes-pf-flowschema-uid"),
        global_schema
    );
}

/// The `Dangling` condition of `flowschemas/<name>` once it reads `reason`.
async fn dangling_condition(env: &TestEnv, name: &str, reason: &str) -> Value {
    let path = format!("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/{name}");
    tokio::time::timeout(EVENTUALLY, async {
        loop {
            let schema = env.raw("GET", &path, None, vec![]).await.json();
            let condition = &schema["status"]["conditions"][0];
            if condition["type"] == "Dangling" && condition["reason"] == reason {
                return condition.clone();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{name}: Dangling {reason}"))
}

/// User-created objects are followed: a FlowSchema naming a missing level
/// is `Dangling` (`NotFound`) until the level is created, and then
/// classifies the requests it matches (the PF headers name it).
#[tokio::test]
async fn user_created_flow_schemas_are_followed() {
    let env = TestEnv::new("apf-user").await;
    let suffix = ferrokube_testkit::suffix();
    let level_name = format!("apf-level-{suffix}");
    let schema_name = format!("apf-schema-{suffix}");
    let url = format!("/apf-test-{suffix}");
    let schema = serde_json::json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": {"name": schema_name},
        "spec": {
            "priorityLevelConfiguration": {"name": level_name},
            "matchingPrecedence": 50,
            "rules": [{
                "subjects": [{"kind": "Group", "group": {"name": "system:unauthenticated"}}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": [url]}],
            }],
        },
    });
    let created = env
        .raw(
            "POST",
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
            Some("application/json"),
            serde_json::to_vec(&schema).unwrap(),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let schema_uid = created.json()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    let dangling = dangling_condition(&env, &schema_name, "NotFound").await;
    assert_eq!(dangling["status"], "True");
    assert_eq!(
        dangling["message"],
        format!("This FlowSchema references the PriorityLevelConfiguration object named \"{level_name}\" but there is no such object")
    );

    let level = serde_json::json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": level_name},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1, "limitResponse": {"type": "Reject"}}},
    });
    let created = env
        .raw(
            "POST",
            "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
            Some("application/json"),
            serde_json::to_vec(&level).unwrap(),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let level_uid = created.json()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    let found = dangling_condition(&env, &schema_name, "Found").await;
    assert_eq!(found["status"], "False");

    let anonymous = env.client_with_token(None).await;
    tokio::time::timeout(EVENTUALLY, async {
        loop {
            let answer = raw_request(&anonymous, "GET", &url, None, vec![]).await;
            if answer.header("x-kubernetes-pf-flowschema-uid") == schema_uid {
                assert_eq!(
                    answer.header("x-kubernetes-pf-prioritylevel-uid"),
                    level_uid
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the new schema classifies the requests it matches");
    for path in [
        format!("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/{schema_name}"),
        format!("/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/{level_name}"),
    ] {
        let deleted = env.raw("DELETE", &path, None, vec![]).await;
        assert_eq!(deleted.status, 200, "{}", deleted.body);
    }
}
