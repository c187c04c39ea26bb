//! The complete example: a kube-rs `Controller` for a custom resource,
//! tested against `TestServer` from a snapshot fixture.
//!
//! A `Greeting` (example.ferrokube.dev/v1) asks for a ConfigMap holding its
//! message; the controller applies one, owned by the Greeting, and records
//! its name in the Greeting's status. The built-in garbage collector
//! removes the ConfigMap when its Greeting goes.
//!
//! The fixture (the CRD installed and served, a namespace and one Greeting)
//! is built once per test binary and snapshotted; every test starts a
//! server of its own from the snapshot, so the tests run in parallel.

use std::sync::Arc;
use std::time::Duration;

use ferrokube_testing::{Snapshot, TestServer};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, CustomResource, CustomResourceExt, Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::OnceCell;

// ---- The operator under test (what would live in the operator's crate) ----

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "example.ferrokube.dev",
    version = "v1",
    kind = "Greeting",
    namespaced,
    status = "GreetingStatus"
)]
pub struct GreetingSpec {
    pub message: String,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreetingStatus {
    pub config_map: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error("the Greeting has no namespace")]
    NoNamespace,
    #[error(transparent)]
    Kube(#[from] kube::Error),
}

const MANAGER: &str = "greeting-controller";

fn config_map_name(greeting: &Greeting) -> String {
    format!("{}-greeting", greeting.name_any())
}

async fn reconcile(greeting: Arc<Greeting>, client: Arc<Client>) -> Result<Action, ReconcileError> {
    let namespace = greeting.namespace().ok_or(ReconcileError::NoNamespace)?;
    let name = config_map_name(&greeting);
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = Some(name.clone());
    config_map.metadata.owner_references =
        greeting.controller_owner_ref(&()).map(|owner| vec![owner]);
    config_map.data = Some([("message".to_string(), greeting.spec.message.clone())].into());
    let config_maps: Api<ConfigMap> = Api::namespaced(client.as_ref().clone(), &namespace);
    config_maps
        .patch(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&config_map),
        )
        .await?;
    let greetings: Api<Greeting> = Api::namespaced(client.as_ref().clone(), &namespace);
    let status = serde_json::json!({ "status": { "configMap": name } });
    greetings
        .patch_status(
            &greeting.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&status),
        )
        .await?;
    Ok(Action::await_change())
}

fn error_policy(_: Arc<Greeting>, _: &ReconcileError, _: Arc<Client>) -> Action {
    Action::requeue(Duration::from_millis(100))
}

/// Run the controller until the returned task is aborted.
fn run_controller(client: Client) -> tokio::task::JoinHandle<()> {
    let greetings: Api<Greeting> = Api::all(client.clone());
    let config_maps: Api<ConfigMap> = Api::all(client.clone());
    tokio::spawn(
        Controller::new(greetings, Default::default())
            .owns(config_maps, Default::default())
            .run(reconcile, error_policy, Arc::new(client))
            .for_each(|_| async {}),
    )
}

// ---- The tests ----

const FIXTURE_YAML: &str = "
apiVersion: v1
kind: Namespace
metadata:
  name: demo
---
apiVersion: example.ferrokube.dev/v1
kind: Greeting
metadata:
  name: hello
  namespace: demo
spec:
  message: hello, world
";

/// Built once per test binary; each test starts its own server from it.
async fn fixture() -> &'static Snapshot {
    static FIXTURE: OnceCell<Snapshot> = OnceCell::const_new();
    FIXTURE
        .get_or_init(|| async {
            let server = TestServer::start().await.expect("start");
            server
                .install_crds(&[Greeting::crd()])
                .await
                .expect("install the CRD");
            server.apply_yaml(FIXTURE_YAML).await.expect("seed");
            server.snapshot().await.expect("snapshot")
        })
        .await
}

/// Waits (at most 30 s, a hang guard) until `name` in `api` satisfies `condition`.
async fn wait_for<K, C>(api: Api<K>, name: &str, condition: C) -> Option<K>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
    C: kube::runtime::wait::Condition<K>,
{
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(api, name, condition),
    )
    .await
    .expect("the condition held in time")
    .expect("watch")
}

fn has_message(message: &'static str) -> impl Fn(Option<&ConfigMap>) -> bool {
    move |config_map: Option<&ConfigMap>| {
        config_map
            .and_then(|config_map| config_map.data.as_ref())
            .and_then(|data| data.get("message"))
            .is_some_and(|value| value == message)
    }
}

#[tokio::test]
async fn the_controller_makes_a_config_map_for_the_seeded_greeting() {
    let server = TestServer::builder()
        .from_snapshot(fixture().await)
        .start()
        .await
        .expect("start");
    let controller = run_controller(server.client());
    let config_maps: Api<ConfigMap> = Api::namespaced(server.client(), "demo");
    let made = wait_for(config_maps, "hello-greeting", has_message("hello, world")).await;
    let owners = made
        .expect("made")
        .metadata
        .owner_references
        .unwrap_or_default();
    assert_eq!(owners.len(), 1);
    assert_eq!(
        (owners[0].kind.as_str(), owners[0].name.as_str()),
        ("Greeting", "hello")
    );
    let greetings: Api<Greeting> = Api::namespaced(server.client(), "demo");
    let recorded = wait_for(greetings, "hello", |greeting: Option<&Greeting>| {
        greeting
            .and_then(|greeting| greeting.status.as_ref())
            .and_then(|status| status.config_map.as_deref())
            == Some("hello-greeting")
    })
    .await;
    assert!(recorded.is_some());
    controller.abort();
}

#[tokio::test]
async fn the_garbage_collector_removes_the_config_map_of_a_deleted_greeting() {
    let server = TestServer::builder()
        .from_snapshot(fixture().await)
        .start()
        .await
        .expect("start");
    let controller = run_controller(server.client());
    let greetings: Api<Greeting> = Api::namespaced(server.client(), "demo");
    let greeting = Greeting::new(
        "bye",
        GreetingSpec {
            message: "goodbye".into(),
        },
    );
    greetings
        .create(&PostParams::default(), &greeting)
        .await
        .expect("create");
    let config_maps: Api<ConfigMap> = Api::namespaced(server.client(), "demo");
    let made = wait_for(config_maps.clone(), "bye-greeting", has_message("goodbye"))
        .await
        .expect("made");
    greetings
        .delete("bye", &DeleteParams::default())
        .await
        .expect("delete");
    let uid = made.metadata.uid.expect("uid");
    wait_for(config_maps, "bye-greeting", conditions::is_deleted(&uid)).await;
    controller.abort();
}

#[tokio::test]
async fn after_a_restore_the_controller_relists_and_reconciles_again() {
    let server = TestServer::builder()
        .from_snapshot(fixture().await)
        .start()
        .await
        .expect("start");
    // Snapshots restore into the server they were taken from.
    let clean = server.snapshot().await.expect("snapshot");
    let controller = run_controller(server.client());
    let config_maps: Api<ConfigMap> = Api::namespaced(server.client(), "demo");
    let first = wait_for(
        config_maps.clone(),
        "hello-greeting",
        has_message("hello, world"),
    )
    .await
    .expect("made");

    // Back to the fixture: no ConfigMap. The controller's watches end with
    // 410, it relists, sees `hello` again and makes a new ConfigMap.
    server.restore(&clean).await.expect("restore");
    let second = wait_for(
        config_maps,
        "hello-greeting",
        |config_map: Option<&ConfigMap>| {
            config_map.is_some_and(|config_map| config_map.metadata.uid != first.metadata.uid)
        },
    )
    .await
    .expect("made again");
    assert_eq!(
        second
            .data
            .and_then(|data| data.get("message").cloned())
            .as_deref(),
        Some("hello, world")
    );
    controller.abort();
}
