//! Three ferrokube processes on one etcd (`--storage-backend=etcd3`): a write
//! through one is seen through the others (get, list, watch) with the same
//! resourceVersion, a watch resumes on another replica without a gap,
//! optimistic concurrency holds across replicas, continue tokens are
//! accepted by every replica, one replica holds the controllers' Lease, and
//! a service-account token signed by one replica is accepted by another.
//! etcd is started by the test (Debian's etcd-server; `scripts/test.sh`
//! installs it).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;
use ferrokube_testkit::etcd;

use std::time::{Duration, Instant};

use common::TestServer;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube::{Client, ResourceExt};
use serde_json::json;

/// A generous bound for "eventually"; no timing is asserted below it.
const EVENTUALLY: Duration = Duration::from_secs(30);

struct Cluster {
    servers: Vec<TestServer>,
    clients: Vec<Client>,
    _etcd: etcd::Etcd,
}

async fn cluster(replicas: usize) -> Cluster {
    let etcd = etcd::Etcd::start();
    let servers_flag = etcd.servers_flag();
    let mut servers = Vec::new();
    let mut clients = Vec::new();
    for _ in 0..replicas {
        let server = TestServer::start_with(&[
            "--storage-backend=etcd3",
            &servers_flag,
            "--log-level=warn,ferrokube::leader_election=info",
        ]);
        clients.push(server.client().await);
        servers.push(server);
    }
    Cluster {
        servers,
        clients,
        _etcd: etcd,
    }
}

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": name, "annotations": {"count": "0"}},
        "data": {"v": "1"},
    }))
    .unwrap()
}

/// Poll `probe` until it yields, or panic after [`EVENTUALLY`].
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
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_through_one_replica_is_seen_through_the_others() {
    let cluster = cluster(3).await;
    let apis: Vec<Api<ConfigMap>> = cluster
        .clients
        .iter()
        .map(|client| Api::namespaced(client.clone(), "default"))
        .collect();
    // A watch on replica 2 from "now", opened before the write.
    let start = apis[2].list(&ListParams::default()).await.unwrap();
    let start_rv = start.metadata.resource_version.clone().unwrap();
    let mut stream = apis[2]
        .watch(&WatchParams::default().timeout(60), &start_rv)
        .await
        .unwrap()
        .boxed();

    let created = apis[0]
        .create(&PostParams::default(), &config_map("shared"))
        .await
        .unwrap();
    let rv = created.resource_version().unwrap();
    for (index, api) in apis.iter().enumerate() {
        // A get without resourceVersion is a consistent read: it waits for
        // the replica's cache to reach etcd's quorum revision.
        let seen = api.get("shared").await.unwrap();
        assert_eq!(seen.resource_version().unwrap(), rv, "replica {index}");
        let listed = api.list(&ListParams::default()).await.unwrap();
        assert!(
            listed.items.iter().any(|cm| cm.name_any() == "shared"),
            "replica {index} lists it"
        );
        let list_rv: i64 = listed.metadata.resource_version.unwrap().parse().unwrap();
        assert!(list_rv >= rv.parse::<i64>().unwrap(), "replica {index}");
    }
    loop {
        let event = tokio::time::timeout(EVENTUALLY, stream.try_next())
            .await
            .expect("replica 2 delivers the watch event")
            .unwrap()
            .unwrap();
        match event {
            WatchEvent::Added(cm) if cm.name_any() == "shared" => {
                assert_eq!(cm.resource_version().unwrap(), rv);
                break;
            }
            // What the leader's controllers write (kube-root-ca.crt).
            WatchEvent::Added(_) | WatchEvent::Modified(_) | WatchEvent::Bookmark(_) => {}
            other => panic!("expected ADDED, got {other:?}"),
        }
    }

    // A continue token from one replica is accepted by another.
    for name in ["page-a", "page-b", "page-c"] {
        apis[1]
            .create(&PostParams::default(), &config_map(name))
            .await
            .unwrap();
    }
    let first = apis[0].list(&ListParams::default().limit(2)).await.unwrap();
    let token = first.metadata.continue_.clone().unwrap();
    let rest = apis[2]
        .list(&ListParams::default().limit(10).continue_token(&token))
        .await
        .unwrap();
    // (Controllers on the leading replica add kube-root-ca.crt.)
    let mut names: Vec<String> = first
        .items
        .iter()
        .chain(&rest.items)
        .map(ResourceExt::name_any)
        .filter(|name| name.starts_with("page-") || name == "shared")
        .collect();
    names.sort();
    assert_eq!(names, ["page-a", "page-b", "page-c", "shared"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_watch_resumed_on_another_replica_misses_nothing() {
    let cluster = cluster(2).await;
    let one: Api<ConfigMap> = Api::namespaced(cluster.clients[0].clone(), "default");
    let two: Api<ConfigMap> = Api::namespaced(cluster.clients[1].clone(), "default");
    let start_rv = one
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut written = Vec::new();
    let mut seen = Vec::new();
    let mut last_rv = start_rv.clone();
    {
        let mut stream = one
            .watch(&WatchParams::default().timeout(60), &start_rv)
            .await
            .unwrap()
            .boxed();
        for index in 0..5 {
            let created = two
                .create(&PostParams::default(), &config_map(&format!("w{index}")))
                .await
                .unwrap();
            written.push(created.resource_version().unwrap());
        }
        while seen.len() < 5 {
            let event = tokio::time::timeout(EVENTUALLY, stream.try_next())
                .await
                .expect("events on replica one")
                .unwrap()
                .unwrap();
            if let WatchEvent::Added(cm) = event {
                last_rv = cm.resource_version().unwrap();
                if cm.name_any().starts_with('w') {
                    seen.push(last_rv.clone());
                }
            }
        }
        // The client goes away from replica one here.
    }
    // Writes while no watch is open, through both replicas.
    for index in 5..10 {
        let api = if index % 2 == 0 { &one } else { &two };
        let created = api
            .create(&PostParams::default(), &config_map(&format!("w{index}")))
            .await
            .unwrap();
        written.push(created.resource_version().unwrap());
    }
    let mut stream = two
        .watch(&WatchParams::default().timeout(60), &last_rv)
        .await
        .unwrap()
        .boxed();
    while seen.len() < 10 {
        let event = tokio::time::timeout(EVENTUALLY, stream.try_next())
            .await
            .expect("events on replica two")
            .unwrap()
            .unwrap();
        match event {
            WatchEvent::Added(cm) if cm.name_any().starts_with('w') => {
                seen.push(cm.resource_version().unwrap())
            }
            // What the leader's controllers write (kube-root-ca.crt).
            WatchEvent::Added(_) | WatchEvent::Modified(_) | WatchEvent::Bookmark(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(
        seen, written,
        "every write once, in order, across the hand-over"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn read_modify_write_through_different_replicas_loses_no_update() {
    let cluster = cluster(3).await;
    let first: Api<ConfigMap> = Api::namespaced(cluster.clients[0].clone(), "default");
    first
        .create(&PostParams::default(), &config_map("counter"))
        .await
        .unwrap();
    let mut workers = Vec::new();
    for worker in 0..6 {
        let api: Api<ConfigMap> = Api::namespaced(cluster.clients[worker % 3].clone(), "default");
        workers.push(tokio::spawn(async move {
            let mut succeeded = 0u64;
            let mut conflicts = 0u64;
            for _ in 0..15 {
                let mut cm = api.get("counter").await.unwrap();
                let count: u64 = cm.annotations()["count"].parse().unwrap();
                cm.annotations_mut()
                    .insert("count".into(), (count + 1).to_string());
                match api.replace("counter", &PostParams::default(), &cm).await {
                    Ok(_) => succeeded += 1,
                    Err(kube::Error::Api(status)) if status.code == 409 => conflicts += 1,
                    Err(error) => panic!("unexpected error: {error}"),
                }
            }
            (succeeded, conflicts)
        }));
    }
    let mut succeeded = 0;
    let mut conflicts = 0;
    for worker in workers {
        let (ok, conflict) = worker.await.unwrap();
        succeeded += ok;
        conflicts += conflict;
    }
    eprintln!("{succeeded} writes succeeded, {conflicts} conflicted");
    for (index, client) in cluster.clients.iter().enumerate() {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        let cm = api.get("counter").await.unwrap();
        assert_eq!(
            cm.annotations()["count"],
            succeeded.to_string(),
            "replica {index}: the count equals the successful writes"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_replica_leads_and_another_takes_over_when_it_dies() {
    let mut cluster = cluster(3).await;
    let leases: Api<Lease> = Api::namespaced(cluster.clients[1].clone(), "kube-system");
    let holder = eventually("a lease holder", || async {
        let lease = leases.get_opt("ferrokube-controllers").await.ok()??;
        lease
            .spec?
            .holder_identity
            .filter(|holder| !holder.is_empty())
    })
    .await;
    let leaders = || -> Vec<usize> {
        cluster
            .servers
            .iter()
            .enumerate()
            .filter(|(_, server)| server.stderr().contains("became leader"))
            .map(|(index, _)| index)
            .collect()
    };
    let leader = eventually("the holder says it leads", || async {
        let leaders = leaders();
        (leaders.len() == 1).then(|| leaders[0])
    })
    .await;
    assert!(
        cluster.servers[leader].stderr().contains(&holder),
        "replica {leader} logs the identity the Lease holds"
    );
    // Let a few renewals pass: still exactly one leader.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(leaders(), vec![leader]);

    // The leader dies without releasing: another takes over after the lease duration.
    cluster.servers[leader].stop_with("KILL");
    let survivor = (leader + 1) % 3;
    let leases: Api<Lease> = Api::namespaced(cluster.clients[survivor].clone(), "kube-system");
    let next = eventually("a new holder", || async {
        let lease = leases.get_opt("ferrokube-controllers").await.ok()??;
        lease
            .spec?
            .holder_identity
            .filter(|next| !next.is_empty() && *next != holder)
    })
    .await;
    // The new leader writes the Lease, then logs: its line may follow the
    // Lease we just read by a moment.
    let holders = || -> Vec<usize> {
        (0..3)
            .filter(|index| *index != leader)
            .filter(|index| cluster.servers[*index].stderr().contains(&next))
            .collect()
    };
    eventually("a survivor logs the new holder's identity", || async {
        (!holders().is_empty()).then_some(())
    })
    .await;
    assert_eq!(holders().len(), 1, "exactly one survivor holds {next}");
}

/// A CRD created through one replica becomes Established (by the leader's
/// controllers, wherever they run) and its kind is served by every replica:
/// each follows the stored CRDs, and a request that would 404 first waits
/// for its registry to reflect etcd's current revision.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crd_established_through_one_replica_is_served_by_every_replica() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{ApiResource, DynamicObject, GroupVersionKind};

    let cluster = cluster(3).await;
    let crds: Api<CustomResourceDefinition> = Api::all(cluster.clients[0].clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "things.replicas.example.com"},
        "spec": {
            "group": "replicas.example.com",
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    eventually("the CRD is Established", || async {
        let crd = crds.get("things.replicas.example.com").await.ok()?;
        crd.status?
            .conditions?
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
            .then_some(())
    })
    .await;
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("replicas.example.com", "v1", "Thing"),
        "things",
    );
    for (index, client) in cluster.clients.iter().enumerate() {
        // No retry: Established was read through replica 0, and every
        // replica must serve the kind from then on.
        let things: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
        let thing: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "replicas.example.com/v1",
            "kind": "Thing",
            "metadata": {"name": format!("thing-{index}")},
            "spec": {"through": index},
        }))
        .unwrap();
        let created = things.create(&PostParams::default(), &thing).await;
        assert!(created.is_ok(), "replica {index}: {created:?}");
    }
    let things: Api<DynamicObject> =
        Api::namespaced_with(cluster.clients[2].clone(), "default", &resource);
    assert_eq!(
        things
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_token_signed_by_one_replica_is_accepted_by_the_others() {
    if common::skip_if_external("starts its own etcd and replicas") {
        return;
    }
    let cluster = cluster(2).await;
    let (first, second) = (&cluster.clients[0], &cluster.clients[1]);
    let post = |client: &Client, path: &str, body: serde_json::Value| {
        let (client, path) = (client.clone(), path.to_string());
        async move {
            common::raw_request(
                &client,
                "POST",
                &path,
                Some("application/json"),
                serde_json::to_vec(&body).unwrap(),
            )
            .await
        }
    };
    let created = post(
        first,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"metadata": {"name": "roaming"}}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let answer = post(
        first,
        "/api/v1/namespaces/default/serviceaccounts/roaming/token",
        json!({"spec": {}}),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    let token = answer.json()["status"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    // The generated key is shared through etcd: both publish the same keys.
    let jwks = |client: &Client| {
        let client = client.clone();
        async move {
            common::raw_request(&client, "GET", "/openid/v1/jwks", None, Vec::new())
                .await
                .json()
        }
    };
    assert_eq!(jwks(first).await, jwks(second).await);
    let user = eventually("the second replica accepts the token", || {
        let token = token.clone();
        async move {
            let review = post(
                second,
                "/apis/authentication.k8s.io/v1/tokenreviews",
                json!({"spec": {"token": token}}),
            )
            .await
            .json();
            (review["status"]["authenticated"] == true)
                .then(|| review["status"]["user"]["username"].clone())
        }
    })
    .await;
    assert_eq!(user, "system:serviceaccount:default:roaming");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_starting_together_write_the_bootstrap_policy_once() {
    let etcd = etcd::Etcd::start();
    let servers_flag = etcd.servers_flag();
    // Three replicas start at the same time, each running the
    // rbac/bootstrap-roles hook against the same (empty) etcd.
    let servers: Vec<TestServer> = std::thread::scope(|scope| {
        let starting: Vec<_> = (0..3)
            .map(|_| {
                let flag = servers_flag.clone();
                scope.spawn(move || {
                    TestServer::start_with(&["--storage-backend=etcd3", &flag, "--log-level=warn"])
                })
            })
            .collect();
        starting.into_iter().map(|s| s.join().unwrap()).collect()
    });
    let policy = ferrokube::rbac_policy::BootstrapPolicy::get().unwrap();
    for server in &servers {
        let client = server.client().await;
        let roles: Api<k8s_openapi::api::rbac::v1::ClusterRole> = Api::all(client.clone());
        let defaults = roles
            .list(&ListParams::default().labels("kubernetes.io/bootstrapping=rbac-defaults"))
            .await
            .unwrap();
        assert_eq!(defaults.items.len(), policy.cluster_roles.len());
        let bindings: Api<k8s_openapi::api::rbac::v1::RoleBinding> = Api::all(client.clone());
        assert_eq!(
            bindings
                .list(&ListParams::default())
                .await
                .unwrap()
                .items
                .len(),
            policy.role_bindings.len()
        );
        // Conflicts between the replicas were retried, none gave up.
        assert!(
            server
                .stderr()
                .lines()
                .all(|l| !l.contains("unable to reconcile")),
            "{}",
            server.stderr()
        );
    }
    // The leader's aggregation controller fills admin.
    let admin: Api<k8s_openapi::api::rbac::v1::ClusterRole> = Api::all(servers[0].client().await);
    eventually("admin aggregated", || async {
        let role = admin.get("admin").await.ok()?;
        role.rules.filter(|rules| !rules.is_empty()).map(|_| ())
    })
    .await;
    drop(servers);
    drop(etcd);
}
