//! Servers start from the process's template of a fresh start's bootstrap
//! state: what a templated server holds is what a server that ran the
//! bootstrap post-start hooks itself holds (uids, resourceVersions and
//! timestamps aside, which differ between kube-apiservers too), and what
//! depends on the server itself (the `kubernetes` Service's endpoints) is
//! its own.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::Duration;

use ferrokube_testing::TestServer;
use k8s_openapi::api::core::v1::{Endpoints, Namespace};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{Api, ListParams};
use kube::runtime::wait::await_condition;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Every object of `K`, by namespace/name, without the values that differ
/// between servers writing the same thing.
async fn normalized<K>(client: kube::Client) -> BTreeMap<String, Value>
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
{
    let list = Api::<K>::all(client)
        .list(&ListParams::default())
        .await
        .expect("list");
    list.items
        .iter()
        .map(|item| {
            let mut value = serde_json::to_value(item).expect("to JSON");
            let metadata = value["metadata"].as_object_mut().expect("metadata");
            for varying in ["uid", "resourceVersion", "creationTimestamp"] {
                metadata.remove(varying);
            }
            if let Some(Value::Array(entries)) = metadata.get_mut("managedFields") {
                for entry in entries {
                    if let Some(entry) = entry.as_object_mut() {
                        entry.remove("time");
                    }
                }
            }
            let name = format!(
                "{}/{}",
                item.meta().namespace.clone().unwrap_or_default(),
                item.meta().name.clone().unwrap_or_default()
            );
            (name, value)
        })
        .collect()
}

async fn bootstrap_state(client: kube::Client) -> Vec<BTreeMap<String, Value>> {
    vec![
        normalized::<Namespace>(client.clone()).await,
        normalized::<ClusterRole>(client.clone()).await,
        normalized::<ClusterRoleBinding>(client.clone()).await,
        normalized::<Role>(client.clone()).await,
        normalized::<RoleBinding>(client.clone()).await,
        normalized::<PriorityClass>(client).await,
    ]
}

#[tokio::test]
async fn a_templated_server_holds_what_a_fresh_start_writes() {
    let fresh = TestServer::builder()
        .controllers(Vec::<String>::new())
        .without_template()
        .start()
        .await
        .expect("fresh start");
    let templated = TestServer::builder()
        .controllers(Vec::<String>::new())
        .start()
        .await
        .expect("start from the template");
    let fresh_state = bootstrap_state(fresh.client()).await;
    let templated_state = bootstrap_state(templated.client()).await;
    // Not vacuous: the policy is there (kube 1.34's has over 60 cluster roles).
    assert!(fresh_state[1].len() > 60, "{}", fresh_state[1].len());
    assert!(fresh_state[0].contains_key("/kube-system"));
    for (fresh_kind, templated_kind) in fresh_state.iter().zip(&templated_state) {
        assert_eq!(
            fresh_kind.keys().collect::<Vec<_>>(),
            templated_kind.keys().collect::<Vec<_>>()
        );
        for (name, value) in fresh_kind {
            assert_eq!(Some(value), templated_kind.get(name), "{name}");
        }
    }
}

#[tokio::test]
async fn a_templated_servers_kubernetes_endpoints_name_its_own_port() {
    // Two servers from the template: each repairs the endpoints it
    // inherited to its own port.
    for _ in 0..2 {
        let server = TestServer::start().await.expect("start");
        let port = i32::from(server.address().port());
        let endpoints: Api<Endpoints> = Api::namespaced(server.client(), "default");
        let own_port = move |endpoints: Option<&Endpoints>| {
            endpoints
                .and_then(|endpoints| endpoints.subsets.as_ref())
                .and_then(|subsets| subsets.first())
                .and_then(|subset| subset.ports.as_ref())
                .and_then(|ports| ports.first())
                .is_some_and(|endpoint_port| endpoint_port.port == port)
        };
        tokio::time::timeout(
            Duration::from_secs(30),
            await_condition(endpoints, "kubernetes", own_port),
        )
        .await
        .expect("the endpoints name the server's port in time")
        .expect("watch");
    }
}
