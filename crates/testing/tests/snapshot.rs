//! Snapshot and restore as clients see them: objects come back with their
//! resourceVersions and managedFields, the revision never goes back, stale
//! resourceVersions conflict, watches from before get 410 Expired and a
//! kube-rs watcher relists.

use std::collections::BTreeMap;

use ferrokube_testing::{Error, TestServer};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::watcher;

const LABEL: &str = "fixture=snapshot";

fn config_map(name: &str, value: &str) -> ConfigMap {
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = Some(name.into());
    config_map.metadata.labels = Some([("fixture".to_string(), "snapshot".to_string())].into());
    config_map.data = Some([("value".to_string(), value.to_string())].into());
    config_map
}

fn value(config_map: &ConfigMap) -> Option<String> {
    config_map.data.as_ref()?.get("value").cloned()
}

/// name → value of the fixture's config maps.
async fn listed(api: &Api<ConfigMap>) -> (BTreeMap<String, String>, i64) {
    let list = api
        .list(&ListParams::default().labels(LABEL))
        .await
        .expect("list");
    let revision = list
        .metadata
        .resource_version
        .and_then(|version| version.parse().ok())
        .expect("numeric list resourceVersion");
    let values = list
        .items
        .iter()
        .map(|item| {
            (
                item.metadata.name.clone().unwrap_or_default(),
                value(item).unwrap_or_default(),
            )
        })
        .collect();
    (values, revision)
}

#[tokio::test]
async fn restore_brings_back_objects_with_their_resource_versions_and_managed_fields() {
    let server = TestServer::start().await.expect("start");
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let apply = PatchParams::apply("fixture-builder");
    let kept = api
        .patch(
            "kept",
            &apply,
            &Patch::Apply(config_map("kept", "original")),
        )
        .await
        .expect("apply");
    let snapshot = server.snapshot().await.expect("snapshot");
    let (_, revision_at_snapshot) = listed(&api).await;

    let changed = api
        .patch(
            "kept",
            &PatchParams::apply("someone-else").force(),
            &Patch::Apply(config_map("kept", "changed")),
        )
        .await
        .expect("change");
    api.create(&PostParams::default(), &config_map("added", "later"))
        .await
        .expect("create");
    let (_, revision_before_restore) = listed(&api).await;

    server.restore(&snapshot).await.expect("restore");

    let restored = api.get("kept").await.expect("get");
    assert_eq!(value(&restored).as_deref(), Some("original"));
    assert_eq!(
        restored.metadata.resource_version,
        kept.metadata.resource_version
    );
    assert_eq!(restored.metadata.uid, kept.metadata.uid);
    assert_eq!(
        restored.metadata.managed_fields,
        kept.metadata.managed_fields
    );
    let managers: Vec<_> = restored
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|entry| entry.manager.clone())
        .collect();
    assert_eq!(managers, vec!["fixture-builder".to_string()]);
    assert!(api.get_opt("added").await.expect("get").is_none());
    let (values, revision_after_restore) = listed(&api).await;
    assert_eq!(
        values,
        BTreeMap::from([("kept".to_string(), "original".to_string())])
    );
    assert!(
        revision_after_restore > revision_before_restore && revision_before_restore > revision_at_snapshot,
        "the revision only moves forward: {revision_at_snapshot} < {revision_before_restore} < {revision_after_restore}"
    );

    // The resourceVersion of the change that the restore undid no longer
    // matches anything: an update with it is a conflict, not a silent write.
    let mut stale = changed.clone();
    stale.data = Some([("value".to_string(), "stale write".to_string())].into());
    let conflict = api
        .replace("kept", &PostParams::default(), &stale)
        .await
        .expect_err("a stale resourceVersion conflicts");
    match conflict {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 409);
            assert_eq!(status.reason, "Conflict");
        }
        other => panic!("unexpected error {other:?}"),
    }
    // The snapshot's own resourceVersion is the current one again.
    let mut current = restored.clone();
    current.data = Some([("value".to_string(), "next".to_string())].into());
    api.replace("kept", &PostParams::default(), &current)
        .await
        .expect("an update from the restored resourceVersion");
}

#[tokio::test]
async fn a_watch_opened_before_a_restore_ends_with_410_expired() {
    let server = TestServer::start().await.expect("start");
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    api.create(&PostParams::default(), &config_map("first", "1"))
        .await
        .expect("create");
    let snapshot = server.snapshot().await.expect("snapshot");
    let (_, revision) = listed(&api).await;
    let mut events = api
        .watch(&WatchParams::default().labels(LABEL), &revision.to_string())
        .await
        .expect("watch")
        .boxed();
    api.create(&PostParams::default(), &config_map("second", "2"))
        .await
        .expect("create");
    match events.try_next().await.expect("event") {
        Some(WatchEvent::Added(added)) => {
            assert_eq!(added.metadata.name.as_deref(), Some("second"))
        }
        other => panic!("expected the ADDED event of second, got {other:?}"),
    }

    server.restore(&snapshot).await.expect("restore");

    match events.try_next().await.expect("event") {
        Some(WatchEvent::Error(status)) => {
            assert_eq!(status.code, 410);
            assert_eq!(status.reason, "Expired");
            assert!(
                status.message.starts_with("too old resource version: "),
                "{}",
                status.message
            );
        }
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
    assert!(
        events.try_next().await.expect("end").is_none(),
        "the watch ends after the error"
    );
    // A watch from before the restore cannot start either (kube: 410 on start).
    let started = api
        .watch(&WatchParams::default(), &revision.to_string())
        .await
        .expect("watch request");
    let first = started.boxed().try_next().await.expect("event");
    assert!(
        matches!(&first, Some(WatchEvent::Error(status)) if status.code == 410),
        "{first:?}"
    );
}

#[tokio::test]
async fn a_kube_rs_watcher_relists_after_a_restore() {
    let server = TestServer::start().await.expect("start");
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    api.create(&PostParams::default(), &config_map("fixture", "1"))
        .await
        .expect("create");
    let snapshot = server.snapshot().await.expect("snapshot");
    let mut events = watcher(api.clone(), watcher::Config::default().labels(LABEL)).boxed();
    let mut initial = Vec::new();
    loop {
        match events.next().await.expect("stream").expect("event") {
            watcher::Event::Init => {}
            watcher::Event::InitApply(object) => {
                initial.push(object.metadata.name.unwrap_or_default())
            }
            watcher::Event::InitDone => break,
            other => panic!("unexpected {other:?} during the initial list"),
        }
    }
    assert_eq!(initial, vec!["fixture".to_string()]);
    api.create(&PostParams::default(), &config_map("later", "2"))
        .await
        .expect("create");
    match events.next().await.expect("stream").expect("event") {
        watcher::Event::Apply(object) => assert_eq!(object.metadata.name.as_deref(), Some("later")),
        other => panic!("expected the Apply of later, got {other:?}"),
    }

    server.restore(&snapshot).await.expect("restore");

    match events.next().await.expect("stream") {
        Err(watcher::Error::WatchError(status)) => assert_eq!(status.code, 410),
        other => panic!("expected the 410 of the ended watch, got {other:?}"),
    }
    let mut relisted = Vec::new();
    loop {
        match events.next().await.expect("stream").expect("event") {
            watcher::Event::Init => relisted.clear(),
            watcher::Event::InitApply(object) => {
                relisted.push(object.metadata.name.unwrap_or_default())
            }
            watcher::Event::InitDone => break,
            other => panic!("unexpected {other:?} during the relist"),
        }
    }
    assert_eq!(
        relisted,
        vec!["fixture".to_string()],
        "the relist shows the restored state"
    );
}

#[tokio::test]
async fn a_new_server_starts_from_another_servers_snapshot() {
    let (snapshot, original) = {
        let source = TestServer::start().await.expect("start");
        let api: Api<ConfigMap> = Api::namespaced(source.client(), "default");
        let created = api
            .patch(
                "seeded",
                &PatchParams::apply("fixture-builder"),
                &Patch::Apply(config_map("seeded", "v")),
            )
            .await
            .expect("apply");
        (source.snapshot().await.expect("snapshot"), created)
    }; // the source server is gone; its snapshot lives on
    assert!(snapshot.len() > 1);
    let first = TestServer::builder()
        .from_snapshot(&snapshot)
        .start()
        .await
        .expect("start");
    let second = TestServer::builder()
        .from_snapshot(&snapshot)
        .start()
        .await
        .expect("start");
    for server in [&first, &second] {
        let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
        let seeded = api.get("seeded").await.expect("get");
        assert_eq!(
            seeded.metadata.resource_version,
            original.metadata.resource_version
        );
        assert_eq!(
            seeded.metadata.managed_fields,
            original.metadata.managed_fields
        );
    }
    // Each went its own way from there.
    let on_first: Api<ConfigMap> = Api::namespaced(first.client(), "default");
    on_first
        .delete("seeded", &Default::default())
        .await
        .expect("delete");
    let on_second: Api<ConfigMap> = Api::namespaced(second.client(), "default");
    assert!(on_second.get_opt("seeded").await.expect("get").is_some());
    // A snapshot restores only into the server it was taken from.
    assert!(matches!(
        first.restore(&snapshot).await,
        Err(Error::ForeignSnapshot)
    ));
    let own = first.snapshot().await.expect("snapshot");
    first
        .restore(&own)
        .await
        .expect("its own snapshot restores");
}
