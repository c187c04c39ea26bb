//! TestServer as a kube-rs user starts it: several in parallel in one
//! process (the tests of this binary run concurrently), each with its own
//! store, port and kubeconfig; controllers on by default or switched off.

use std::time::Duration;

use ferrokube_testing::{AuthorizationMode, TestServer};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, ServiceAccount};
use kube::api::{Api, ListParams, PostParams, WatchParams};
use kube::runtime::wait::await_condition;

fn config_map(name: &str, value: &str) -> ConfigMap {
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = Some(name.into());
    config_map.data = Some([("value".to_string(), value.to_string())].into());
    config_map
}

/// Each server keeps its own objects: a name created on one is absent on the others.
async fn own_state(label: &str) {
    let server = TestServer::start().await.expect("start");
    let config_maps: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    config_maps
        .create(&PostParams::default(), &config_map("shared-name", label))
        .await
        .expect("create");
    let read = config_maps.get("shared-name").await.expect("get");
    assert_eq!(
        read.data
            .and_then(|data| data.get("value").cloned())
            .as_deref(),
        Some(label)
    );
    assert!(server.kubeconfig_path().is_file());
    assert!(server.url().starts_with("https://127.0.0.1:"));
}

#[tokio::test]
async fn parallel_server_one() {
    own_state("one").await;
}

#[tokio::test]
async fn parallel_server_two() {
    own_state("two").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_server_three_on_a_multi_thread_runtime() {
    own_state("three").await;
}

#[tokio::test]
async fn two_servers_in_one_test_do_not_share_anything() {
    let (first, second) = tokio::join!(TestServer::start(), TestServer::start());
    let (first, second) = (first.expect("first"), second.expect("second"));
    assert_ne!(first.address(), second.address());
    let on_first: Api<ConfigMap> = Api::namespaced(first.client(), "default");
    let on_second: Api<ConfigMap> = Api::namespaced(second.client(), "default");
    on_first
        .create(&PostParams::default(), &config_map("only-on-first", "1"))
        .await
        .expect("create");
    assert!(on_second
        .get_opt("only-on-first")
        .await
        .expect("get")
        .is_none());
}

#[tokio::test]
async fn the_built_in_controllers_run_by_default() {
    let server = TestServer::start().await.expect("start");
    let namespaces: Api<Namespace> = Api::all(server.client());
    let mut namespace = Namespace::default();
    namespace.metadata.name = Some("team-a".into());
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .expect("create namespace");
    // The serviceaccount controller makes `default` in every namespace.
    let accounts: Api<ServiceAccount> = Api::namespaced(server.client(), "team-a");
    let made = tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(accounts, "default", |account: Option<&ServiceAccount>| {
            account.is_some()
        }),
    )
    .await
    .expect("the serviceaccount controller made the account in time")
    .expect("watch");
    assert_eq!(
        made.and_then(|account| account.metadata.name).as_deref(),
        Some("default")
    );
}

#[tokio::test]
async fn controllers_can_be_switched_off() {
    let server = TestServer::builder()
        .controllers(Vec::<String>::new())
        .authorization_modes([AuthorizationMode::AlwaysAllow])
        .start()
        .await
        .expect("start");
    let namespaces: Api<Namespace> = Api::all(server.client());
    let mut namespace = Namespace::default();
    namespace.metadata.name = Some("team-b".into());
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .expect("create namespace");
    // Without the serviceaccount controller no account is made: a watch
    // from the namespace's creation that the server ends after 2 s sees no
    // event (with the controller on, `default` appears within milliseconds:
    // the_built_in_controllers_run_by_default).
    let accounts: Api<ServiceAccount> = Api::namespaced(server.client(), "team-b");
    let listed = accounts.list(&ListParams::default()).await.expect("list");
    assert!(listed.items.is_empty());
    let version = listed
        .metadata
        .resource_version
        .expect("list resourceVersion");
    let events: Vec<_> = accounts
        .watch(&WatchParams::default().timeout(2), &version)
        .await
        .expect("watch")
        .collect()
        .await;
    assert!(events.is_empty(), "no account was made: {events:?}");
}

#[tokio::test]
async fn an_unknown_controller_is_refused() {
    let error = TestServer::builder()
        .controllers(["no-such-controller"])
        .start()
        .await
        .err()
        .expect("refused");
    assert!(error.to_string().contains("no-such-controller"), "{error}");
}

#[tokio::test]
async fn dropping_the_server_removes_its_directory_and_closes_its_port() {
    let server = TestServer::start().await.expect("start");
    let directory = server
        .kubeconfig_path()
        .parent()
        .expect("the kubeconfig is in the data directory")
        .to_path_buf();
    let address = server.address();
    assert!(directory.is_dir());
    drop(server);
    assert!(!directory.exists(), "{} is removed", directory.display());
    assert!(
        tokio::net::TcpStream::connect(address).await.is_err(),
        "nothing listens on {address} any more"
    );
}

/// `privileged: true` is allowed as envtest starts kube-apiserver
/// (`--allow-privileged=true`) unless the builder says otherwise; then the
/// pod gets kube's 422. Two servers side by side keep their own setting.
#[tokio::test]
async fn privileged_pods_are_allowed_as_under_envtest_unless_forbidden() {
    let (allowing, forbidding) = tokio::join!(
        TestServer::start(),
        TestServer::builder().allow_privileged(false).start()
    );
    let (allowing, forbidding) = (allowing.expect("start"), forbidding.expect("start"));
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "privileged"},
        "spec": {"containers": [{
            "name": "c", "image": "busybox",
            "securityContext": {"privileged": true}
        }]}
    }))
    .expect("pod");
    for _ in 0..2 {
        let on_forbidding: Api<Pod> = Api::namespaced(forbidding.client(), "default");
        match on_forbidding.create(&PostParams::default(), &pod).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 422);
                assert_eq!(
                    status.message,
                    "Pod \"privileged\" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy"
                );
            }
            other => panic!("a privileged pod was not refused: {other:?}"),
        }
        let on_allowing: Api<Pod> = Api::namespaced(allowing.client(), "default");
        on_allowing
            .create(&PostParams::default(), &pod)
            .await
            .expect("a privileged pod under the default");
        on_allowing
            .delete("privileged", &Default::default())
            .await
            .expect("delete");
    }
}
