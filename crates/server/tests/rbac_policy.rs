//! The bootstrap RBAC policy and the clusterrole-aggregation controller, seen
//! by real clients: every default object exists as the vendored 1.34 golden
//! files say (this test also runs against a real kube-apiserver through
//! FERROKUBE_TEST_KUBECONFIG), a restart reconciles what a user changed as
//! kube does, and aggregated roles follow the roles they select.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use ferrokube::rbac_policy::{BootstrapPolicy, PolicyRule, AUTOUPDATE_ANNOTATION};
use ferrokube_testkit::{kubectl_path, raw_request, skip_if_external, TestEnv, TestServer};
use kube::Client;
use serde_json::{json, Value};

/// A generous bound for "eventually"; no timing is asserted below it.
const EVENTUALLY: Duration = Duration::from_secs(30);

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

async fn get_json(client: &Client, path: &str) -> Value {
    let response = raw_request(client, "GET", path, None, Vec::new()).await;
    assert_eq!(response.status, 200, "GET {path}: {}", response.body);
    response.json()
}

async fn send_json(client: &Client, method: &str, path: &str, body: &Value) -> Value {
    let response = raw_request(
        client,
        method,
        path,
        Some("application/json"),
        serde_json::to_vec(body).unwrap(),
    )
    .await;
    assert!(
        (200..300).contains(&response.status),
        "{method} {path}: {} {}",
        response.status,
        response.body
    );
    response.json()
}

/// Every object of a kind, by `namespace/name`.
async fn objects(client: &Client, plural: &str) -> BTreeMap<String, Value> {
    let list = get_json(client, &format!("{RBAC}/{plural}")).await;
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (key(item), item.clone()))
        .collect()
}

fn key(object: &Value) -> String {
    format!(
        "{}/{}",
        object["metadata"]["namespace"].as_str().unwrap_or(""),
        object["metadata"]["name"].as_str().unwrap()
    )
}

fn rules(object: &Value) -> Vec<PolicyRule> {
    PolicyRule::rules_of(object)
}

fn plural(kind: &str) -> &'static str {
    match kind {
        "ClusterRole" => "clusterroles",
        "ClusterRoleBinding" => "clusterrolebindings",
        "Role" => "roles",
        _ => "rolebindings",
    }
}

fn policy() -> &'static BootstrapPolicy {
    BootstrapPolicy::get().unwrap_or_else(|error| panic!("{error}"))
}

/// A string map with absent and `{}` alike.
fn map(object: &Value, field: &str) -> Value {
    object["metadata"]
        .get(field)
        .cloned()
        .filter(|v| !v.is_null())
        .unwrap_or(json!({}))
}

#[tokio::test]
async fn every_bootstrap_object_matches_the_vendored_policy() {
    let env = TestEnv::new("rbac-golden").await;
    let mut stored = BTreeMap::new();
    for kind in ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"] {
        stored.insert(kind, objects(&env.client, plural(kind)).await);
    }
    let mut problems = Vec::new();
    let mut expected_keys: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (kind, expected) in policy().objects() {
        let name = key(expected);
        expected_keys.entry(kind).or_default().push(name.clone());
        let Some(found) = stored[kind].get(&name) else {
            problems.push(format!("{kind} {name} is missing"));
            continue;
        };
        for field in ["labels", "annotations"] {
            if map(found, field) != map(expected, field) {
                problems.push(format!(
                    "{kind} {name} {field}: {} (expected {})",
                    map(found, field),
                    map(expected, field)
                ));
            }
        }
        let same = |field: &str| {
            found.get(field).filter(|v| !v.is_null())
                == expected.get(field).filter(|v| !v.is_null())
        };
        if kind.ends_with("Binding") {
            for field in ["roleRef", "subjects"] {
                if !same(field) {
                    problems.push(format!("{kind} {name} {field}: {}", found[field]));
                }
            }
        } else if !same("aggregationRule") {
            problems.push(format!(
                "{kind} {name} aggregationRule: {}",
                found["aggregationRule"]
            ));
        } else if expected.get("aggregationRule").is_none_or(Value::is_null)
            && rules(found) != rules(expected)
        {
            // Aggregated roles get their rules from the controller (checked below).
            problems.push(format!("{kind} {name} rules: {}", found["rules"]));
        }
    }
    // Nothing else carries the bootstrap label.
    for (kind, found) in &stored {
        for (name, object) in found {
            let bootstrap =
                object["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults";
            if bootstrap && !expected_keys[kind].contains(name) {
                problems.push(format!("{kind} {name} is not in the vendored policy"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The default objects are written by kube-apiserver's loopback client.
    let discovery = &stored["ClusterRole"]["/system:discovery"];
    let managers: Vec<&str> = discovery["metadata"]["managedFields"]
        .as_array()
        .map(|fields| {
            fields
                .iter()
                .filter_map(|f| f["manager"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert!(managers.contains(&"kube-apiserver"), "{managers:?}");
}

/// Polls `probe` until it yields, or panics after [`EVENTUALLY`].
async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + EVENTUALLY;
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within {EVENTUALLY:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn has_resource(role: &Value, resource: &str) -> bool {
    rules(role)
        .iter()
        .any(|rule| rule.resources.iter().any(|r| r == resource))
}

#[tokio::test]
async fn kubectl_shows_aggregated_rules_and_new_roles_join_view_edit_admin() {
    let env = TestEnv::new("rbac-aggregate").await;
    // kubectl 1.33 sees admin's aggregated rules: its own (via
    // system:aggregate-to-admin), edit's and view's.
    let admin = env.kubectl_ok("1.33", &["get", "clusterrole", "admin", "-o", "yaml"]);
    for line in [
        "- localsubjectaccessreviews",
        "- pods/attach",
        "- pods/log",
        "      rbac.authorization.k8s.io/aggregate-to-admin: \"true\"",
    ] {
        assert!(
            admin.lines().any(|l| l.ends_with(line.trim_start())),
            "{line:?} not in:\n{admin}"
        );
    }
    let view = get_json(&env.client, &format!("{RBAC}/clusterroles/view")).await;
    let expected: Vec<PolicyRule> = policy()
        .cluster_roles
        .iter()
        .find(|role| role["metadata"]["name"] == "system:aggregate-to-view")
        .map(rules)
        .unwrap();
    assert_eq!(
        rules(&view),
        expected,
        "view holds exactly system:aggregate-to-view's rules"
    );

    // A new ClusterRole labelled aggregate-to-view reaches view, edit and admin.
    let resource = format!("widgets-{}", env.ns);
    let role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": format!("widget-viewer-{}", env.ns),
            "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"},
        },
        "rules": [{"apiGroups": ["example.com"], "resources": [resource], "verbs": ["get", "list", "watch"]}],
    });
    env.kubectl_stdin("1.33", &["create", "-f", "-"], Some(&role.to_string()));
    for aggregated in ["view", "edit", "admin"] {
        let client = env.client.clone();
        let resource = resource.clone();
        eventually(&format!("{resource} in {aggregated}"), || {
            let client = client.clone();
            let resource = resource.clone();
            async move {
                let role = get_json(&client, &format!("{RBAC}/clusterroles/{aggregated}")).await;
                has_resource(&role, &resource).then_some(())
            }
        })
        .await;
    }
    let view = get_json(&env.client, &format!("{RBAC}/clusterroles/view")).await;
    let manager = view["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["manager"] == "clusterrole-aggregation-controller")
        .cloned()
        .unwrap_or_else(|| panic!("no aggregation manager in {view}"));
    assert_eq!(manager["operation"], "Apply");

    // Deleted, its rules leave the aggregated roles again.
    let name = format!("widget-viewer-{}", env.ns);
    env.kubectl_ok("1.33", &["delete", "clusterrole", &name]);
    let client = env.client.clone();
    eventually(&format!("{resource} gone from admin"), || {
        let client = client.clone();
        let resource = resource.clone();
        async move {
            let role = get_json(&client, &format!("{RBAC}/clusterroles/admin")).await;
            (!has_resource(&role, &resource)).then_some(())
        }
    })
    .await;
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let out = Command::new(kubectl_path("1.33"))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn without_the_controller_nothing_aggregates() {
    if skip_if_external("without_the_controller_nothing_aggregates") {
        return;
    }
    let server = TestServer::start_with(&["--controllers=*,-clusterrole-aggregation"]);
    let client = server.client().await;
    // The hook has run (the server is ready), and nothing fills the aggregated roles.
    for aggregated in ["admin", "edit", "view"] {
        let role = get_json(&client, &format!("{RBAC}/clusterroles/{aggregated}")).await;
        assert!(role["aggregationRule"].is_object(), "{role}");
        assert_eq!(
            rules(&role),
            Vec::<PolicyRule>::new(),
            "{aggregated}: {role}"
        );
    }
    let text = kubectl(
        &server.kubeconfig,
        &["get", "clusterrole", "view", "-o", "jsonpath={.rules}"],
    );
    // kube writes the field of a role without rules as `"rules": null`.
    assert_eq!(text, "null");
}

#[tokio::test]
async fn a_restart_restores_missing_defaults_but_keeps_autoupdate_false() {
    if skip_if_external("a_restart_restores_missing_defaults_but_keeps_autoupdate_false") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start_in(dir.path(), false);
    let client = server.client().await;
    let path = |plural: &str, name: &str| format!("{RBAC}/{plural}/{name}");

    // A user trims system:basic-user (autoupdate stays "true") and adds a rule of their own.
    let mut basic = get_json(&client, &path("clusterroles", "system:basic-user")).await;
    basic["rules"] = json!([
        {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews"], "verbs": ["create"]},
        {"apiGroups": ["example.com"], "resources": ["things"], "verbs": ["get"]},
    ]);
    basic["metadata"]["labels"] = json!({"mine": "yes"});
    send_json(
        &client,
        "PUT",
        &path("clusterroles", "system:basic-user"),
        &basic,
    )
    .await;
    // system:discovery is opted out and trimmed.
    let mut discovery = get_json(&client, &path("clusterroles", "system:discovery")).await;
    discovery["metadata"]["annotations"][AUTOUPDATE_ANNOTATION] = json!("false");
    discovery["rules"] = json!([{"nonResourceURLs": ["/version"], "verbs": ["get"]}]);
    let discovery = send_json(
        &client,
        "PUT",
        &path("clusterroles", "system:discovery"),
        &discovery,
    )
    .await;
    // A default binding loses a subject, another default role is deleted.
    let mut public = get_json(
        &client,
        &path("clusterrolebindings", "system:public-info-viewer"),
    )
    .await;
    public["subjects"] = json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}]);
    send_json(
        &client,
        "PUT",
        &path("clusterrolebindings", "system:public-info-viewer"),
        &public,
    )
    .await;
    let deleted = raw_request(
        &client,
        "DELETE",
        &path("clusterroles", "system:heapster"),
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);

    let status = server.stop_with("TERM");
    assert!(status.success(), "{status}");
    let server = TestServer::start_in(dir.path(), false);
    let client = server.client().await;

    let basic = get_json(&client, &path("clusterroles", "system:basic-user")).await;
    assert_eq!(
        basic["rules"],
        json!([
            {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews"], "verbs": ["create"]},
            {"apiGroups": ["example.com"], "resources": ["things"], "verbs": ["get"]},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectrulesreviews"], "verbs": ["create"]},
            {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
        ]),
        "missing rules come back broken down, extras stay"
    );
    assert_eq!(
        basic["metadata"]["labels"],
        json!({"mine": "yes", "kubernetes.io/bootstrapping": "rbac-defaults"})
    );
    let kept = get_json(&client, &path("clusterroles", "system:discovery")).await;
    assert_eq!(kept["rules"], discovery["rules"]);
    assert_eq!(
        kept["metadata"]["resourceVersion"],
        discovery["metadata"]["resourceVersion"]
    );
    let public = get_json(
        &client,
        &path("clusterrolebindings", "system:public-info-viewer"),
    )
    .await;
    assert_eq!(
        public["subjects"],
        json!([
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"},
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:unauthenticated"},
        ])
    );
    get_json(&client, &path("clusterroles", "system:heapster")).await;
    let readyz = raw_request(
        &client,
        "GET",
        "/readyz/poststarthook/rbac/bootstrap-roles",
        None,
        Vec::new(),
    )
    .await;
    assert_eq!((readyz.status, readyz.body.as_str()), (200, "ok"));
}
