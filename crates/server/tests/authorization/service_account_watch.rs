//! A ServiceAccount's TokenRequest token (`kubectl create token`) driving a
//! kube-rs watch: refused until a RoleBinding names the ServiceAccount,
//! opened once it does, and — as in kube-apiserver, which authenticates and
//! authorizes a request once when it starts (`filters/authorization.go`
//! `WithAuthorization`) — an open watch keeps streaming after the binding
//! or the ServiceAccount is deleted, while every new request is refused
//! (403 without the binding, 401 without the ServiceAccount).

use super::*;

const WATCHER: &str = "system:serviceaccount:dev:watcher";

/// A ConfigMap `name` created by the admin in `dev`.
async fn admin_creates(admin: &Client, name: &str) {
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    Api::<ConfigMap>::namespaced(admin.clone(), "dev")
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
}

/// Reads `events` until ConfigMap `name` is added; the stream ending or
/// failing first fails the test.
async fn added<S>(events: &mut S, name: &str)
where
    S: futures::Stream<Item = Result<WatchEvent<ConfigMap>, kube::Error>> + Unpin,
{
    while let Some(event) = events.try_next().await.unwrap() {
        match event {
            WatchEvent::Added(object) if object.metadata.name.as_deref() == Some(name) => return,
            WatchEvent::Error(status) => panic!("the open watch failed: {status:?}"),
            _ => {}
        }
    }
    panic!("the watch ended before {name} was added");
}

#[tokio::test]
async fn a_service_account_watch_opens_after_its_binding_and_outlives_it_as_in_kube() {
    let cluster = Cluster::start(&[]);
    let admin = cluster.admin().await;
    cluster.kubectl_admin(&["create", "namespace", "dev"]);
    cluster.kubectl_admin(&["create", "serviceaccount", "watcher", "-n", "dev"]);
    // kubectl's TokenRequest (`serviceaccounts/watcher/token`).
    let token = cluster
        .kubectl_admin(&["create", "token", "watcher", "-n", "dev"])
        .trim()
        .to_string();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    let watcher = cluster.user(&token).await;
    let configmaps: Api<ConfigMap> = Api::namespaced(watcher.clone(), "dev");

    // No binding yet: the watch is refused with kube's 403.
    let refused = configmaps.watch(&WatchParams::default(), "0").await;
    let status = common::api_status(refused.err().expect("a refused watch"));
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message,
        format!(
            r#"configmaps is forbidden: User "{WATCHER}" cannot watch resource "configmaps" in API group "" in the namespace "dev""#
        )
    );

    // A Role and a RoleBinding naming the ServiceAccount (kubectl).
    cluster.kubectl_admin(&[
        "create",
        "role",
        "cm-watcher",
        "--verb=get,list,watch",
        "--resource=configmaps",
        "-n",
        "dev",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "rolebinding",
        "watcher-watches",
        "--role=cm-watcher",
        "--serviceaccount=dev:watcher",
        "-n",
        "dev",
    ]);
    let mut events = configmaps
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    admin_creates(&admin, "first").await;
    added(&mut events, "first").await;

    // The binding goes: new requests are refused at once, the open watch
    // streams on.
    cluster.kubectl_admin(&["delete", "rolebinding", "watcher-watches", "-n", "dev"]);
    let res = raw(
        &watcher,
        "GET",
        "/api/v1/namespaces/dev/configmaps?watch=true",
        None,
    )
    .await;
    forbidden(
        &res,
        &format!(
            r#"configmaps is forbidden: User "{WATCHER}" cannot watch resource "configmaps" in API group "" in the namespace "dev""#
        ),
        json!({"kind": "configmaps"}),
    );
    admin_creates(&admin, "second").await;
    added(&mut events, "second").await;

    // The ServiceAccount goes: its token no longer authenticates a new
    // request (401), and the open watch still streams.
    cluster.kubectl_admin(&["delete", "serviceaccount", "watcher", "-n", "dev"]);
    let res = raw(&watcher, "GET", "/api/v1/namespaces/dev/configmaps", None).await;
    assert_eq!(res.status, 401, "{res:?}");
    admin_creates(&admin, "third").await;
    added(&mut events, "third").await;
}
