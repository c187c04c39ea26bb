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

fn names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["metadata"]["name"].as_str().unwrap().to_string())
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
            let all_found = schemas["items"].as_array().unwrap().iter().all(|schema| {
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
