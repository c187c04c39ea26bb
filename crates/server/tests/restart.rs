//! Durability across restarts: a clean stop (SIGTERM) and a crash (SIGKILL
//! with `--fsync=true`) must both keep every acknowledged write. These tests
//! own their servers, so they are skipped when FERROKUBE_TEST_KUBECONFIG
//! points the suite at an external cluster.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use std::collections::BTreeMap;

use common::{create_namespace, expect_api_error, skip_if_external, TestServer};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::json;

fn cm(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": name, "labels": { "set": "restart" } },
        "data": { "value": value },
    }))
    .unwrap()
}

fn deployment(name: &str) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": { "name": name },
        "spec": {
            "replicas": 2,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": [ { "name": "c", "image": "nginx:1.27" } ] }
            }
        }
    }))
    .unwrap()
}

fn rv<K: ResourceExt>(o: &K) -> u64 {
    o.resource_version()
        .unwrap()
        .parse()
        .expect("numeric resourceVersion")
}

/// name -> (uid, resourceVersion, data.value) of the configmaps in `ns`.
async fn snapshot(client: &Client, ns: &str) -> BTreeMap<String, (String, String, String)> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let list = api
        .list(&ListParams::default().labels("set=restart"))
        .await
        .unwrap();
    list.items
        .iter()
        .map(|c| {
            let value = c.data.as_ref().unwrap()["value"].clone();
            (
                c.name_any(),
                (c.uid().unwrap(), c.resource_version().unwrap(), value),
            )
        })
        .collect()
}

#[tokio::test]
async fn sigterm_restart_keeps_everything() {
    if skip_if_external("sigterm_restart_keeps_everything") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start_in(dir.path(), false);
    let client = server.client().await;
    let ns = create_namespace(&client, "durable").await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "durable");
    let deps: Api<Deployment> = Api::namespaced(client.clone(), "durable");
    for i in 0..5 {
        cms.create(&pp(), &cm(&format!("cm-{i}"), &format!("v{i}")))
            .await
            .unwrap();
    }
    let mut c2 = cms.get("cm-2").await.unwrap();
    c2.data = Some([("value".to_string(), "updated".to_string())].into());
    cms.replace("cm-2", &pp(), &c2).await.unwrap();
    cms.delete("cm-4", &DeleteParams::default()).await.unwrap();
    let dep = deps.create(&pp(), &deployment("web")).await.unwrap();
    let mut status_body = dep.clone();
    status_body.status = Some(serde_json::from_value(json!({"replicas": 2})).unwrap());
    let dep = deps
        .replace_status("web", &pp(), &status_body)
        .await
        .unwrap();

    let before = snapshot(&client, "durable").await;
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        ["cm-0", "cm-1", "cm-2", "cm-3"]
    );
    let list_rv: u64 = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap()
        .parse()
        .unwrap();
    let highest = before
        .values()
        .map(|(_, rv, _)| rv.parse::<u64>().unwrap())
        .chain([rv(&dep), rv(&ns)])
        .max()
        .unwrap();

    let status = server.stop_with("TERM");
    assert!(
        status.success(),
        "SIGTERM must end ferrokube cleanly, got {status}\nstderr:\n{}",
        server.stderr()
    );
    drop(client);

    let server = TestServer::start_in(dir.path(), false);
    let client = server.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "durable");
    let deps: Api<Deployment> = Api::namespaced(client.clone(), "durable");

    assert_eq!(
        snapshot(&client, "durable").await,
        before,
        "same objects, uids, resourceVersions, data"
    );
    assert_eq!(before["cm-2"].2, "updated");
    expect_api_error(
        cms.get("cm-4").await,
        404,
        "NotFound",
        r#"configmaps "cm-4" not found"#,
    );

    let ns_after = Api::<Namespace>::all(client.clone())
        .get("durable")
        .await
        .unwrap();
    assert_eq!(
        (ns_after.uid(), ns_after.resource_version()),
        (ns.uid(), ns.resource_version())
    );
    let dep_after = deps.get("web").await.unwrap();
    assert_eq!(
        dep_after, dep,
        "deployment, status included, survives unchanged"
    );

    // The resourceVersion sequence continues past everything from before.
    let after_rv: u64 = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        after_rv >= list_rv,
        "list RV went back: {after_rv} < {list_rv}"
    );
    let fresh = cms.create(&pp(), &cm("after", "x")).await.unwrap();
    assert!(
        rv(&fresh) > highest,
        "new write RV {} <= pre-restart max {highest}",
        rv(&fresh)
    );
    let mut c0 = cms.get("cm-0").await.unwrap();
    c0.data = Some([("value".to_string(), "again".to_string())].into());
    let c0 = cms.replace("cm-0", &pp(), &c0).await.unwrap();
    assert!(rv(&c0) > rv(&fresh));

    // The old objects' resourceVersions still work as preconditions.
    let mut stale = cms.get("cm-1").await.unwrap();
    stale.metadata.resource_version = Some("1".into());
    let st = expect_api_error(
        cms.replace("cm-1", &pp(), &stale).await,
        409,
        "Conflict",
        r#"Operation cannot be fulfilled on configmaps "cm-1": the object has been modified; please apply your changes to the latest version and try again"#,
    );
    assert_eq!(st.details.unwrap().name, "cm-1");
}

fn pp() -> PostParams {
    PostParams::default()
}

#[tokio::test]
async fn sigkill_with_fsync_loses_nothing_acknowledged() {
    if skip_if_external("sigkill_with_fsync_loses_nothing_acknowledged") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start_in(dir.path(), true);
    let client = server.client().await;
    create_namespace(&client, "crash").await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "crash");

    // Acknowledged writes: creates, updates and deletes, the last one right
    // before the kill.
    for i in 0..30 {
        cms.create(&pp(), &cm(&format!("cm-{i:02}"), "created"))
            .await
            .unwrap();
    }
    for i in (0..30).step_by(3) {
        let name = format!("cm-{i:02}");
        let mut c = cms.get(&name).await.unwrap();
        c.data = Some([("value".to_string(), "updated".to_string())].into());
        cms.replace(&name, &pp(), &c).await.unwrap();
    }
    for i in (1..30).step_by(5) {
        cms.delete(&format!("cm-{i:02}"), &DeleteParams::default())
            .await
            .unwrap();
    }
    let last = cms
        .create(&pp(), &cm("last", "just before the kill"))
        .await
        .unwrap();
    let before = snapshot(&client, "crash").await;
    assert_eq!(before.len(), 30 - 6 + 1);

    let status = server.stop_with("KILL");
    assert!(!status.success(), "SIGKILL cannot exit cleanly: {status}");
    drop(client);

    let server = TestServer::start_in(dir.path(), true);
    let client = server.client().await;
    let after = snapshot(&client, "crash").await;
    assert_eq!(after, before, "every acknowledged write survives SIGKILL");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "crash");
    assert_eq!(cms.get("last").await.unwrap(), last);
    let next = cms.create(&pp(), &cm("after-crash", "x")).await.unwrap();
    assert!(
        rv(&next) > rv(&last),
        "RV after crash {} <= {}",
        rv(&next),
        rv(&last)
    );
}

/// One process per data directory: a second server on the same directory
/// stops at once with a clear message, and the first goes on serving.
#[tokio::test]
async fn a_second_server_on_one_data_dir_is_refused() {
    if skip_if_external("a_second_server_on_one_data_dir_is_refused") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let first = TestServer::start_in(dir.path(), false);
    let second = std::process::Command::new(env!("CARGO_BIN_EXE_ferrokube"))
        .args(["serve", "--secure-port", "0", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("another process is using the data directory"),
        "{stderr}"
    );
    let client = first.client().await;
    let namespaces: Api<Namespace> = Api::all(client);
    assert!(namespaces.get("default").await.is_ok());
}
