//! The built-in controllers and the objects kube-apiserver keeps, through
//! real clients: garbage collection (`kubectl delete --cascade=...` on a
//! Deployment → ReplicaSet → Pod chain whose ownerReferences the test sets),
//! namespace deletion (Terminating with kube's conditions while content with
//! finalizers remains), the default ServiceAccount and `kube-root-ca.crt`
//! in new namespaces, `default/kubernetes`, Service IP and NodePort
//! allocation, and `--controllers=-garbagecollector`.
//! Needs `kubectl.1.33` (see `common::kubectl_dir`).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use std::future::Future;
use std::time::{Duration, Instant};

use common::{
    create_namespace, expect_api_error, external_kubeconfig, suffix, TestEnv, TestServer,
};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{ConfigMap, Endpoints, Namespace, Pod, Service, ServiceAccount};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);

fn obj<K: serde::de::DeserializeOwned>(value: Value) -> K {
    serde_json::from_value(value).unwrap()
}

/// Polls `check` until it returns Some, or panics after a minute naming `what`.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn gone<K>(api: &Api<K>, name: &str)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    eventually(&format!("{name} to be gone"), || async {
        api.get_opt(name).await.unwrap().is_none().then_some(())
    })
    .await
}

fn owner(api_version: &str, kind: &str, name: &str, uid: &str, block: bool) -> Value {
    json!({
        "apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
        "controller": true, "blockOwnerDeletion": block,
    })
}

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

/// Deployment web → ReplicaSet web-1 → Pod web-1-a, ownerReferences set here.
async fn chain(
    client: &Client,
    ns: &str,
    pod_finalizer: Option<&str>,
) -> (Deployment, ReplicaSet, Pod) {
    let pp = PostParams::default();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let deployment = deployments
        .create(
            &pp,
            &obj(json!({
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
            })),
        )
        .await
        .unwrap();
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
    let replica_set = replica_sets
        .create(&pp, &obj(json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "ownerReferences": [owner("apps/v1", "Deployment", "web", &deployment.uid().unwrap(), true)]},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
        })))
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut metadata = json!({
        "name": "web-1-a",
        "ownerReferences": [owner("apps/v1", "ReplicaSet", "web-1", &replica_set.uid().unwrap(), true)],
    });
    if let Some(finalizer) = pod_finalizer {
        metadata["finalizers"] = json!([finalizer]);
    }
    let pod = pods
        .create(&pp, &obj(json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template()["spec"]})))
        .await
        .unwrap();
    (deployment, replica_set, pod)
}

#[tokio::test]
async fn cascade_background_deletes_the_chain() {
    let env = TestEnv::new("lc-bg").await;
    chain(&env.client, &env.ns, None).await;
    env.kubectl_ok(
        "1.33",
        &[
            "-n",
            &env.ns,
            "delete",
            "deployment",
            "web",
            "--cascade=background",
        ],
    );
    gone(
        &Api::<ReplicaSet>::namespaced(env.client.clone(), &env.ns),
        "web-1",
    )
    .await;
    gone(
        &Api::<Pod>::namespaced(env.client.clone(), &env.ns),
        "web-1-a",
    )
    .await;
}

#[tokio::test]
async fn cascade_foreground_waits_for_blocking_dependents() {
    let env = TestEnv::new("lc-fg").await;
    let hold = "example.com/hold";
    chain(&env.client, &env.ns, Some(hold)).await;
    env.kubectl_ok(
        "1.33",
        &[
            "-n",
            &env.ns,
            "delete",
            "deployment",
            "web",
            "--cascade=foreground",
            "--wait=false",
        ],
    );
    let deployments: Api<Deployment> = Api::namespaced(env.client.clone(), &env.ns);
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    // The pod is being deleted but its finalizer holds it: the ReplicaSet and
    // the Deployment wait in foregroundDeletion (blockOwnerDeletion).
    eventually("the pod to be marked for deletion", || async {
        let pod = pods.get("web-1-a").await.unwrap();
        pod.metadata.deletion_timestamp.is_some().then_some(())
    })
    .await;
    let deployment = deployments.get("web").await.unwrap();
    assert!(deployment.metadata.deletion_timestamp.is_some());
    assert_eq!(deployment.finalizers(), ["foregroundDeletion"]);
    let replica_sets: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    let replica_set = replica_sets.get("web-1").await.unwrap();
    assert_eq!(replica_set.finalizers(), ["foregroundDeletion"]);
    // Release the pod: the whole chain goes.
    let patch = json!({"metadata": {"finalizers": null}});
    pods.patch("web-1-a", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    gone(&pods, "web-1-a").await;
    gone(&replica_sets, "web-1").await;
    gone(&deployments, "web").await;
}

#[tokio::test]
async fn cascade_orphan_keeps_dependents_without_the_owner() {
    let env = TestEnv::new("lc-orphan").await;
    let (_, replica_set, _) = chain(&env.client, &env.ns, None).await;
    env.kubectl_ok(
        "1.33",
        &[
            "-n",
            &env.ns,
            "delete",
            "deployment",
            "web",
            "--cascade=orphan",
        ],
    );
    gone(
        &Api::<Deployment>::namespaced(env.client.clone(), &env.ns),
        "web",
    )
    .await;
    let replica_sets: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    let kept = replica_sets.get("web-1").await.unwrap();
    assert_eq!(kept.uid(), replica_set.uid());
    assert!(kept.owner_references().is_empty(), "{kept:?}");
    let pod = Api::<Pod>::namespaced(env.client.clone(), &env.ns)
        .get("web-1-a")
        .await
        .unwrap();
    assert_eq!(pod.owner_references()[0].uid, replica_set.uid().unwrap());
}

#[tokio::test]
async fn dependents_of_missing_or_replaced_owners_are_collected() {
    let env = TestEnv::new("lc-dangling").await;
    let pp = PostParams::default();
    let cms: Api<ConfigMap> = env.api();
    let owner_cm = cms
        .create(&pp, &obj(json!({"metadata": {"name": "owner"}})))
        .await
        .unwrap();
    let dependent = |name: &str, owner_name: &str, uid: &str| -> ConfigMap {
        obj(
            json!({"metadata": {"name": name, "ownerReferences": [owner("v1", "ConfigMap", owner_name, uid, false)]}}),
        )
    };
    cms.create(&pp, &dependent("kept", "owner", &owner_cm.uid().unwrap()))
        .await
        .unwrap();
    cms.create(
        &pp,
        &dependent("no-owner", "nobody", "8b1f5d0c-0000-4000-8000-000000000000"),
    )
    .await
    .unwrap();
    cms.create(
        &pp,
        &dependent("wrong-uid", "owner", "8b1f5d0c-0000-4000-8000-000000000001"),
    )
    .await
    .unwrap();
    gone(&cms, "no-owner").await;
    gone(&cms, "wrong-uid").await;
    assert!(cms.get_opt("kept").await.unwrap().is_some());

    // A namespaced dependent of a cluster-scoped owner goes with it.
    let roles: Api<ClusterRole> = Api::all(env.client.clone());
    let role_name = format!("lc-owner-{}", suffix());
    let role = roles
        .create(
            &pp,
            &obj(json!({"metadata": {"name": role_name}, "rules": []})),
        )
        .await
        .unwrap();
    cms.create(&pp, &obj(json!({"metadata": {"name": "of-role", "ownerReferences": [
        owner("rbac.authorization.k8s.io/v1", "ClusterRole", &role_name, &role.uid().unwrap(), false)
    ]}})))
    .await
    .unwrap();
    roles
        .delete(&role_name, &DeleteParams::default())
        .await
        .unwrap();
    gone(&cms, "of-role").await;
    // And the survivor goes when its owner does.
    cms.delete("owner", &DeleteParams::default()).await.unwrap();
    gone(&cms, "kept").await;
}

#[tokio::test]
async fn namespace_with_finalized_content_stays_terminating_until_released() {
    let env = TestEnv::new("lc-ns").await;
    let name = format!("lc-ns-held-{}", suffix());
    create_namespace(&env.client, &name).await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &name);
    let pp = PostParams::default();
    cms.create(
        &pp,
        &obj(json!({"metadata": {"name": "held", "finalizers": ["example.com/keep"]}})),
    )
    .await
    .unwrap();
    cms.create(&pp, &obj(json!({"metadata": {"name": "free"}})))
        .await
        .unwrap();
    env.kubectl_ok("1.33", &["delete", "namespace", &name, "--wait=false"]);
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    let condition = |ns: &Namespace, kind: &str| -> Option<(String, String, String)> {
        let conditions = ns.status.as_ref()?.conditions.as_ref()?;
        let c = conditions.iter().find(|c| c.type_ == kind)?;
        Some((c.status.clone(), c.reason.clone()?, c.message.clone()?))
    };
    let ns = eventually("kube's conditions on the terminating namespace", || async {
        let ns = namespaces.get(&name).await.unwrap();
        let remaining = condition(&ns, "NamespaceContentRemaining")?;
        (remaining.0 == "True").then_some(ns)
    })
    .await;
    assert_eq!(
        ns.status.as_ref().unwrap().phase.as_deref(),
        Some("Terminating")
    );
    assert_eq!(
        ns.spec.as_ref().unwrap().finalizers,
        Some(vec!["kubernetes".to_string()])
    );
    let expect = |kind: &str, status: &str, reason: &str, message: &str| {
        assert_eq!(
            condition(&ns, kind),
            Some((status.to_string(), reason.to_string(), message.to_string())),
            "{kind}"
        );
    };
    expect(
        "NamespaceDeletionDiscoveryFailure",
        "False",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    );
    expect(
        "NamespaceDeletionGroupVersionParsingFailure",
        "False",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    );
    expect(
        "NamespaceDeletionContentFailure",
        "False",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    );
    expect(
        "NamespaceContentRemaining",
        "True",
        "SomeResourcesRemain",
        "Some resources are remaining: configmaps. has 1 resource instances",
    );
    expect(
        "NamespaceFinalizersRemaining",
        "True",
        "SomeFinalizersRemain",
        "Some content in the namespace has finalizers remaining: example.com/keep in 1 resource instances",
    );
    // Everything without a finalizer is gone; the held object waits, marked.
    gone(&cms, "free").await;
    let held = cms.get("held").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some());
    // Creating in a terminating namespace is refused.
    expect_api_error(
        cms.create(&pp, &obj(json!({"metadata": {"name": "late"}}))).await,
        403,
        "Forbidden",
        &format!("configmaps \"late\" is forbidden: unable to create new content in namespace {name} because it is being terminated"),
    );
    let patch = json!({"metadata": {"finalizers": null}});
    cms.patch("held", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    gone(&namespaces, &name).await;
}

#[tokio::test]
async fn kubectl_delete_namespace_returns_and_the_namespace_goes() {
    let env = TestEnv::new("lc-nsdel").await;
    let name = format!("lc-nsdel-x-{}", suffix());
    create_namespace(&env.client, &name).await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &name);
    for n in ["a", "b", "c"] {
        cms.create(
            &PostParams::default(),
            &obj(json!({"metadata": {"name": n}})),
        )
        .await
        .unwrap();
    }
    chain(&env.client, &name, None).await;
    // kubectl waits for the namespace to be gone.
    let out = env.kubectl_ok("1.33", &["delete", "namespace", &name, "--timeout=60s"]);
    assert_eq!(out.trim(), format!("namespace \"{name}\" deleted"));
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    assert!(namespaces.get_opt(&name).await.unwrap().is_none());
}

#[tokio::test]
async fn new_namespaces_get_the_default_service_account_and_root_ca() {
    let env = TestEnv::new("lc-sa").await;
    let accounts: Api<ServiceAccount> = env.api();
    eventually("the default service account", || async {
        accounts.get_opt("default").await.unwrap()
    })
    .await;
    let cms: Api<ConfigMap> = env.api();
    let root_ca = eventually("kube-root-ca.crt", || async {
        cms.get_opt("kube-root-ca.crt").await.unwrap()
    })
    .await;
    let ca = root_ca.data.as_ref().unwrap()["ca.crt"].clone();
    assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"), "{ca}");
    assert!(root_ca.annotations()["kubernetes.io/description"].starts_with("Contains a CA bundle"));
    // Deleted or changed, both come back as they were.
    accounts
        .delete("default", &DeleteParams::default())
        .await
        .unwrap();
    cms.delete("kube-root-ca.crt", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the default service account again", || async {
        accounts.get_opt("default").await.unwrap()
    })
    .await;
    eventually("kube-root-ca.crt again", || async {
        cms.get_opt("kube-root-ca.crt").await.unwrap()
    })
    .await;
    let patch = json!({"data": {"ca.crt": "tampered"}});
    cms.patch(
        "kube-root-ca.crt",
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .unwrap();
    eventually("kube-root-ca.crt restored", || async {
        let now = cms.get("kube-root-ca.crt").await.unwrap();
        (now.data.as_ref().unwrap()["ca.crt"] == ca).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_kubernetes_service_endpoints_and_slice_exist() {
    let env = TestEnv::new("lc-kube").await;
    let services: Api<Service> = Api::namespaced(env.client.clone(), "default");
    let service = eventually("default/kubernetes", || async {
        services.get_opt("kubernetes").await.unwrap()
    })
    .await;
    let spec = service.spec.unwrap();
    let port = &spec.ports.as_ref().unwrap()[0];
    assert_eq!(
        (port.name.as_deref(), port.port, port.protocol.as_deref()),
        (Some("https"), 443, Some("TCP"))
    );
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    assert_eq!(
        service.metadata.labels.as_ref().unwrap()["component"],
        "apiserver"
    );
    if external_kubeconfig().is_none() {
        assert_eq!(spec.cluster_ip.as_deref(), Some("10.0.0.1"));
    }
    let endpoints: Api<Endpoints> = Api::namespaced(env.client.clone(), "default");
    let found = eventually("endpoints default/kubernetes", || async {
        endpoints.get_opt("kubernetes").await.unwrap()
    })
    .await;
    let subset = &found.subsets.as_ref().unwrap()[0];
    let target = match &port.target_port {
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n)) => *n,
        other => panic!("targetPort {other:?}"),
    };
    assert_eq!(subset.ports.as_ref().unwrap()[0].port, target);
    let ip = subset.addresses.as_ref().unwrap()[0].ip.clone();
    if external_kubeconfig().is_none() {
        assert_eq!(ip, "127.0.0.1", "bound to 127.0.0.1");
        let url = url_port(&env).await;
        assert_eq!(target, url, "targetPort is the secure port");
    }
    let slices: Api<EndpointSlice> = Api::namespaced(env.client.clone(), "default");
    let slice = eventually("endpointslice default/kubernetes", || async {
        slices.get_opt("kubernetes").await.unwrap()
    })
    .await;
    assert_eq!(slice.address_type, "IPv4");
    assert_eq!(slice.endpoints[0].addresses, vec![ip]);
    assert_eq!(slice.ports.as_ref().unwrap()[0].port, Some(target));
    assert_eq!(slice.labels()["kubernetes.io/service-name"], "kubernetes");
}

async fn url_port(env: &TestEnv) -> i32 {
    let config = common::config_from(&env.kubeconfig).await;
    i32::from(config.cluster_url.port_u16().unwrap())
}

fn service(name: &str, spec: Value) -> Service {
    obj(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}))
}

#[tokio::test]
async fn service_ips_and_node_ports_are_allocated_checked_and_released() {
    let env = TestEnv::new("lc-svc").await;
    let services: Api<Service> = env.api();
    let pp = PostParams::default();
    let ports = json!([{"port": 80}]);
    let np = services
        .create(
            &pp,
            &service(
                "np",
                json!({"type": "NodePort", "selector": {"a": "b"}, "ports": ports}),
            ),
        )
        .await
        .unwrap();
    let spec = np.spec.clone().unwrap();
    let ip = spec.cluster_ip.clone().unwrap();
    assert_eq!(spec.cluster_ips, Some(vec![ip.clone()]));
    assert_eq!(spec.ip_families, Some(vec!["IPv4".to_string()]));
    assert_eq!(spec.ip_family_policy.as_deref(), Some("SingleStack"));
    let node_port = spec.ports.as_ref().unwrap()[0].node_port.unwrap();
    assert!((30000..=32767).contains(&node_port), "{node_port}");
    if external_kubeconfig().is_none() {
        assert!(ip.starts_with("10.0.0."), "{ip}");
    }
    // Taken IP and port, foreign network, port out of range: 422 as kube words it.
    expect_api_error(
        services.create(&pp, &service("dup-ip", json!({"clusterIP": ip, "ports": ports}))).await,
        422,
        "Invalid",
        &format!("Service \"dup-ip\" is invalid: spec.clusterIPs: Invalid value: []string{{\"{ip}\"}}: failed to allocate IP {ip}: provided IP is already allocated"),
    );
    expect_api_error(
        services
            .create(&pp, &service("dup-port", json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": node_port}]})))
            .await,
        422,
        "Invalid",
        &format!("Service \"dup-port\" is invalid: spec.ports[0].nodePort: Invalid value: {node_port}: provided port is already allocated"),
    );
    if external_kubeconfig().is_none() {
        expect_api_error(
            services.create(&pp, &service("far", json!({"clusterIP": "10.9.0.5", "ports": ports}))).await,
            422,
            "Invalid",
            "Service \"far\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.9.0.5\"}: failed to allocate IP 10.9.0.5: the provided network does not match the current range",
        );
        expect_api_error(
            services
                .create(&pp, &service("low", json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]})))
                .await,
            422,
            "Invalid",
            "Service \"low\" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767",
        );
    }
    // Headless stays headless.
    let headless = services
        .create(
            &pp,
            &service(
                "headless",
                json!({"clusterIP": "None", "selector": {"a": "b"}, "ports": ports}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        headless.spec.unwrap().cluster_ips,
        Some(vec!["None".to_string()])
    );
    // Deleting frees both: the same IP and port can be asked for again.
    services
        .delete("np", &DeleteParams::default())
        .await
        .unwrap();
    gone(&services, "np").await;
    let again = services
        .create(&pp, &service("again", json!({"type": "NodePort", "clusterIP": ip, "ports": [{"port": 80, "nodePort": node_port}]})))
        .await
        .unwrap();
    let spec = again.spec.unwrap();
    assert_eq!(spec.cluster_ip, Some(ip));
    assert_eq!(spec.ports.unwrap()[0].node_port, Some(node_port));
    // A kubectl-made LoadBalancer gets node ports too.
    env.kubectl_ok(
        "1.33",
        &[
            "-n",
            &env.ns,
            "create",
            "service",
            "loadbalancer",
            "lb",
            "--tcp=443:8443",
        ],
    );
    let lb = services.get("lb").await.unwrap().spec.unwrap();
    assert!(lb.ports.unwrap()[0].node_port.is_some());
    assert!(lb.cluster_ip.is_some());
}

#[tokio::test]
async fn without_the_garbage_collector_dependents_stay() {
    if common::skip_if_external("without_the_garbage_collector_dependents_stay") {
        return;
    }
    let server = TestServer::start_with(&["--controllers=*,-garbagecollector"]);
    let client = server.client().await;
    let ns = format!("lc-nogc-{}", suffix());
    create_namespace(&client, &ns).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let pp = PostParams::default();
    let owner_cm = cms
        .create(&pp, &obj(json!({"metadata": {"name": "owner"}})))
        .await
        .unwrap();
    cms.create(
        &pp,
        &obj(
            json!({"metadata": {"name": "dependent", "ownerReferences": [
                owner("v1", "ConfigMap", "owner", &owner_cm.uid().unwrap(), false)
            ]}}),
        ),
    )
    .await
    .unwrap();
    cms.delete("owner", &DeleteParams::default()).await.unwrap();
    // The other controllers run: the namespace gets its root CA ...
    eventually("kube-root-ca.crt", || async {
        cms.get_opt("kube-root-ca.crt").await.unwrap()
    })
    .await;
    // ... and the orphaned dependent is left alone.
    let kept = cms.get("dependent").await.unwrap();
    assert_eq!(kept.owner_references().len(), 1);
}

/// kube-apiserver's `scheduling/bootstrap-system-priority-classes` hook:
/// the two system PriorityClasses exist with kube's values and descriptions
/// (and the default preemption policy).
#[tokio::test]
async fn system_priority_classes_exist() {
    let env = TestEnv::new("lc-pc").await;
    let classes: Api<PriorityClass> = Api::all(env.client.clone());
    let node = classes.get("system-node-critical").await.unwrap();
    assert_eq!(node.value, 2_000_001_000);
    assert_eq!(
        node.description.as_deref(),
        Some("Used for system critical pods that must not be moved from their current node.")
    );
    let cluster = classes.get("system-cluster-critical").await.unwrap();
    assert_eq!(cluster.value, 2_000_000_000);
    assert_eq!(
        cluster.description.as_deref(),
        Some("Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.")
    );
    assert_eq!(
        cluster.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );
    assert_ne!(cluster.global_default, Some(true));
}
