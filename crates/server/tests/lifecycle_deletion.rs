//! Deletion as clients drive it: the kube-rs `finalizer` helper, watch
//! events of a finalized object, preconditions, pods' graceful deletion,
//! `kubectl delete` (by name, by label, `--force`), deletecollection, the
//! namespace's Terminating phase and its `finalize` subresource, and the
//! unsafe deletion of an object corrupted in the SQLite file.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use std::sync::Arc;
use std::time::Duration;

use common::{
    api_status, create_namespace, expect_api_error, skip_if_external, suffix, TestEnv, TestServer,
};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::api::{
    Api, DeleteParams, ListParams, PostParams, Preconditions, WatchEvent, WatchParams,
};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{finalizer, Event};
use kube::ResourceExt;
use serde_json::json;

const FINALIZER: &str = "lifecycle.ferrokube.dev/cleanup";

fn cm(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let labels: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": {"k": "v"},
    }))
    .unwrap()
}

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

/// One reconcile through kube-rs's finalizer helper; returns which event ran
/// ("apply", "cleanup", or "none" when the helper only patched finalizers).
async fn reconcile(api: &Api<ConfigMap>, name: &str) -> &'static str {
    let object = Arc::new(api.get(name).await.unwrap());
    let seen = Arc::new(std::sync::Mutex::new("none"));
    let record = seen.clone();
    finalizer(api, FINALIZER, object, |event| async move {
        *record.lock().unwrap() = match event {
            Event::Apply(_) => "apply",
            Event::Cleanup(_) => "cleanup",
        };
        Ok::<_, Never>(Action::await_change())
    })
    .await
    .unwrap();
    let ran = *seen.lock().unwrap();
    ran
}

#[tokio::test]
async fn kube_rs_finalizer_flow_and_its_watch_events() {
    let env = TestEnv::new("lc-fin").await;
    let api: Api<ConfigMap> = env.api();
    let created = api
        .create(&PostParams::default(), &cm("guarded", &[]))
        .await
        .unwrap();
    let from = created.resource_version().unwrap();
    let wp = WatchParams::default().fields("metadata.name=guarded");
    let mut events = api.watch(&wp, &from).await.unwrap().boxed();

    assert_eq!(
        reconcile(&api, "guarded").await,
        "none",
        "the helper adds its finalizer first"
    );
    assert_eq!(api.get("guarded").await.unwrap().finalizers(), [FINALIZER]);
    assert_eq!(reconcile(&api, "guarded").await, "apply");

    let deleted = api
        .delete("guarded", &DeleteParams::default())
        .await
        .unwrap();
    let kept = deleted
        .left()
        .expect("a finalized object is answered as itself");
    assert!(kept.metadata.deletion_timestamp.is_some(), "{kept:?}");
    assert_eq!(kept.metadata.deletion_grace_period_seconds, Some(0));
    assert!(
        api.get_opt("guarded").await.unwrap().is_some(),
        "kept while finalized"
    );

    // No new finalizers once deleting.
    let patch = json!([{"op": "add", "path": "/metadata/finalizers/-", "value": "other.dev/late"}]);
    let err = api
        .patch(
            "guarded",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Json::<()>(serde_json::from_value(patch).unwrap()),
        )
        .await
        .unwrap_err();
    let status = api_status(err);
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        r#"ConfigMap "guarded" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"other.dev/late"}"#
    );

    assert_eq!(reconcile(&api, "guarded").await, "cleanup");
    assert!(
        api.get_opt("guarded").await.unwrap().is_none(),
        "gone with its last finalizer"
    );

    // The watch saw: finalizer added, marked for deletion, deleted.
    let mut seen = Vec::new();
    while let Ok(Ok(Some(event))) =
        tokio::time::timeout(Duration::from_secs(10), events.try_next()).await
    {
        match event {
            WatchEvent::Modified(o) => {
                seen.push(("MODIFIED", o.metadata.deletion_timestamp.is_some()))
            }
            WatchEvent::Deleted(o) => {
                seen.push(("DELETED", o.metadata.deletion_timestamp.is_some()));
                break;
            }
            WatchEvent::Added(_) => seen.push(("ADDED", false)),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(
        seen,
        [("MODIFIED", false), ("MODIFIED", true), ("DELETED", true)],
        "finalizer added, deletion requested, last finalizer removed"
    );
}

#[tokio::test]
async fn preconditions_and_propagation_policies() {
    let env = TestEnv::new("lc-pre").await;
    let api: Api<ConfigMap> = env.api();
    let created = api
        .create(&PostParams::default(), &cm("p", &[]))
        .await
        .unwrap();
    let wrong = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("not-it".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let msg = format!(
        r#"Operation cannot be fulfilled on ConfigMap "p": the UID in the precondition (not-it) does not match the UID in record ({}). The object might have been deleted and then recreated"#,
        created.uid().unwrap()
    );
    expect_api_error(api.delete("p", &wrong).await, 409, "Conflict", &msg);
    let stale = DeleteParams {
        preconditions: Some(Preconditions {
            uid: None,
            resource_version: Some("1".into()),
        }),
        ..DeleteParams::default()
    };
    let err = api_status(api.delete("p", &stale).await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    // Foreground: kept with the garbage collector's finalizer.
    let deleted = api.delete("p", &DeleteParams::foreground()).await.unwrap();
    let kept = deleted.left().expect("kept for the garbage collector");
    assert_eq!(kept.finalizers(), ["foregroundDeletion"]);
    // Both options at once: kube's validation error.
    let body = br#"{"orphanDependents":true,"propagationPolicy":"Background"}"#.to_vec();
    let path = format!("/api/v1/namespaces/{}/configmaps/p", env.ns);
    let response = env
        .raw("DELETE", &path, Some("application/json"), body)
        .await;
    assert_eq!(response.status, 422);
    assert_eq!(
        response.json()["message"],
        r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set"#
    );
}

fn pod(name: &str, node: Option<&str>) -> Pod {
    let mut spec = json!({"containers": [{"name": "c", "image": "busybox"}]});
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}),
    )
    .unwrap()
}

#[tokio::test]
async fn pods_are_deleted_gracefully_and_by_kubectl() {
    let env = TestEnv::new("lc-pod").await;
    let api: Api<Pod> = env.api();
    let pp = PostParams::default();
    api.create(&pp, &pod("bound", Some("node-a")))
        .await
        .unwrap();
    api.create(&pp, &pod("pending", None)).await.unwrap();

    let deleted = api.delete("bound", &DeleteParams::default()).await.unwrap();
    let terminating = deleted.left().expect("the pod");
    assert_eq!(terminating.metadata.deletion_grace_period_seconds, Some(30));
    assert!(terminating.metadata.deletion_timestamp.is_some());
    let still = api.get("bound").await.unwrap();
    assert_eq!(
        still.metadata.deletion_grace_period_seconds,
        Some(30),
        "waits for its kubelet"
    );

    api.delete("pending", &DeleteParams::default())
        .await
        .unwrap();
    assert!(
        api.get_opt("pending").await.unwrap().is_none(),
        "an unscheduled pod goes at once"
    );

    let ns = env.ns.as_str();
    for v in ["1.33", "1.27"] {
        let out = env.kubectl_ok(
            v,
            &[
                "delete",
                "pod",
                "bound",
                "-n",
                ns,
                "--grace-period=0",
                "--force",
            ],
        );
        assert!(out.contains(r#"pod "bound" force deleted"#), "{out}");
        assert!(api.get_opt("bound").await.unwrap().is_none());
        api.create(&pp, &pod("bound", Some("node-a")))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn kubectl_deletes_by_label_and_waits_for_finalizers() {
    let env = TestEnv::new("lc-kubectl").await;
    let api: Api<ConfigMap> = env.api();
    let pp = PostParams::default();
    for name in ["a", "b"] {
        api.create(&pp, &cm(name, &[("tier", "web")]))
            .await
            .unwrap();
    }
    api.create(&pp, &cm("c", &[("tier", "db")])).await.unwrap();
    let ns = env.ns.as_str();
    let out = env.kubectl_ok("1.33", &["delete", "cm", "-l", "tier=web", "-n", ns]);
    assert_eq!(out, "configmap \"a\" deleted\nconfigmap \"b\" deleted\n");
    let left: Vec<String> = api
        .list(&ListParams::default().labels("tier"))
        .await
        .unwrap()
        .items
        .iter()
        .map(|c| c.name_any())
        .collect();
    assert_eq!(left, ["c"]);

    // A finalized object: `--wait=false` returns at once and leaves it Terminating.
    let mut held = cm("held", &[("tier", "web")]);
    held.metadata.finalizers = Some(vec![FINALIZER.into()]);
    api.create(&pp, &held).await.unwrap();
    let out = env.kubectl_ok("1.27", &["delete", "cm", "held", "-n", ns, "--wait=false"]);
    assert_eq!(out, "configmap \"held\" deleted\n");
    let kept = api.get("held").await.unwrap();
    assert!(kept.metadata.deletion_timestamp.is_some());

    // deletecollection through kube-rs: the list as it was, finalizers honoured.
    let deleted = api
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("tier"),
        )
        .await
        .unwrap()
        .left()
        .expect("a list");
    let mut names: Vec<String> = deleted.items.iter().map(|c| c.name_any()).collect();
    names.sort();
    assert_eq!(names, ["c", "held"]);
    assert!(api.get_opt("c").await.unwrap().is_none());
    assert!(
        api.get_opt("held").await.unwrap().is_some(),
        "held by its finalizer"
    );
    let patch = json!({"metadata": {"finalizers": null}});
    api.patch(
        "held",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(patch),
    )
    .await
    .unwrap();
    assert!(api.get_opt("held").await.unwrap().is_none());
}

#[tokio::test]
async fn namespaces_stay_terminating_until_finalized() {
    let env = TestEnv::new("lc-ns").await;
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    let name = format!("lc-doomed-{}", suffix());
    create_namespace(&env.client, &name).await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &name);
    let mut held = cm("held", &[]);
    held.metadata.finalizers = Some(vec![FINALIZER.into()]);
    cms.create(&PostParams::default(), &held).await.unwrap();

    let deleted = namespaces
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    let terminating = deleted.left().expect("the namespace");
    assert_eq!(
        terminating.status.unwrap().phase.as_deref(),
        Some("Terminating")
    );
    assert!(terminating.metadata.deletion_timestamp.is_some());

    let err = api_status(
        cms.create(&PostParams::default(), &cm("late", &[]))
            .await
            .unwrap_err(),
    );
    // Its content holds it (a finalized configmap): still Terminating, so 403.
    assert_eq!((err.code, err.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        err.message,
        format!(
            r#"configmaps "late" is forbidden: unable to create new content in namespace {name} because it is being terminated"#
        )
    );
    let causes = err.details.unwrap().causes;
    assert_eq!(causes[0].reason, "NamespaceTerminating");
    assert_eq!(causes[0].field, "metadata.namespace");
    let still = namespaces.get(&name).await.unwrap();
    assert_eq!(still.status.unwrap().phase.as_deref(), Some("Terminating"));
}

/// `kubectl delete ns` waits until the namespace is gone: the namespace
/// controller empties it and gives up `kubernetes` through `finalize`.
#[tokio::test]
async fn kubectl_delete_namespace_returns_once_it_is_gone() {
    let env = TestEnv::new("lc-kns").await;
    let name = format!("lc-gone-{}", suffix());
    create_namespace(&env.client, &name).await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &name);
    cms.create(&PostParams::default(), &cm("inside", &[]))
        .await
        .unwrap();
    let out = env.kubectl_ok("1.33", &["delete", "ns", &name, "--timeout=60s"]);
    assert_eq!(out, format!("namespace \"{name}\" deleted\n"));
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    assert!(namespaces.get_opt(&name).await.unwrap().is_none());
    assert!(cms.get_opt("inside").await.unwrap().is_none());
}

/// Stop the server, overwrite one stored object with bytes that do not
/// decode, restart: the server starts, reports the object as corrupt, and
/// removes it only for `ignoreStoreReadErrorWithClusterBreakingPotential`.
#[tokio::test]
async fn corrupt_object_is_deleted_unsafely() {
    if skip_if_external("corrupt_object_is_deleted_unsafely") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start_in(dir.path(), true);
    let client = server.client().await;
    create_namespace(&client, "corrupt").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "corrupt");
    let mut victim = cm("victim", &[]);
    victim.metadata.finalizers = Some(vec![FINALIZER.into()]);
    api.create(&PostParams::default(), &victim).await.unwrap();
    api.create(&PostParams::default(), &cm("fine", &[]))
        .await
        .unwrap();
    assert!(server.stop_with("TERM").success());

    let db = rusqlite::Connection::open(dir.path().join("store.db")).unwrap();
    let changed = db
        .execute(
            "UPDATE kv SET value = ?1 WHERE key = '/registry/configmaps/corrupt/victim'",
            [b"\x00\x01 not an object".to_vec()],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);

    let _server = TestServer::start_in(dir.path(), true);
    let client = _server.client().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "corrupt");
    let status = api_status(api.get("victim").await.unwrap_err());
    assert_eq!(
        (status.code, status.reason.as_str()),
        (500, "InternalError")
    );
    assert!(
        status.message.contains("corrupt object")
            && status
                .message
                .contains("/registry/configmaps/corrupt/victim"),
        "{status:?}"
    );
    assert_eq!(
        api.get("fine").await.unwrap().name_any(),
        "fine",
        "the rest still reads"
    );
    let listed = api_status(api.list(&ListParams::default()).await.unwrap_err());
    assert_eq!(listed.code, 500, "a list reports it: {listed:?}");

    let path = "/api/v1/namespaces/corrupt/configmaps/victim?ignoreStoreReadErrorWithClusterBreakingPotential=true";
    let combined = common::raw_request(
        &client,
        "DELETE",
        &format!("{path}&dryRun=All"),
        None,
        vec![],
    )
    .await;
    assert_eq!(combined.status, 422, "{}", combined.body);
    let fine = "/api/v1/namespaces/corrupt/configmaps/fine?ignoreStoreReadErrorWithClusterBreakingPotential=true";
    let readable = common::raw_request(&client, "DELETE", fine, None, vec![]).await;
    assert_eq!(readable.status, 422, "{}", readable.body);
    let done = common::raw_request(&client, "DELETE", path, None, vec![]).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.json()["status"], "Success");
    assert!(
        api.get_opt("victim").await.unwrap().is_none(),
        "removed despite its finalizer"
    );
    let names: Vec<String> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|c| c.name_any())
        .collect();
    assert!(names.contains(&"fine".to_string()), "{names:?}");
    assert!(!names.contains(&"victim".to_string()), "{names:?}");
}
