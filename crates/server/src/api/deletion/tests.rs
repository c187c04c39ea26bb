//! Handler tests for deletion through `Api::handle`, on the memory backend:
//! every DeleteOptions case and its error body, finalizers, graceful pod
//! deletion, deletecollection, namespaces and corrupt objects.

use std::sync::Arc;

use ferrokube_store::{Backend, Expect, LocalBackend, MemoryDisk, Op, Store, Txn};
use serde_json::{json, Value};

use crate::api::{Api, ApiRequest, ApiResponse};
use crate::authn::UserInfo;
use crate::object::ObjectCodec;
use crate::route::Method;

async fn api() -> Arc<Api> {
    let backend: Arc<dyn Backend> =
        Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    let store = Store::open(backend, ObjectCodec).await.expect("store");
    let api = Api::new(
        store,
        "127.0.0.1:6443".into(),
        crate::api::ContinueKey::random().expect("os random source"),
    );
    crate::bootstrap::ensure_system_namespaces(&api)
        .await
        .expect("namespaces");
    // The serviceaccount controller's `default` account, which the
    // ServiceAccount admission plugin requires of pods.
    let account =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
    let created = call_with(
        &api,
        Method::Post,
        "/api/v1/namespaces/default/serviceaccounts",
        Some(account),
        "application/json",
    )
    .await;
    assert_eq!(created.status, 201, "the default service account");
    api
}

async fn call_with(
    api: &Arc<Api>,
    method: Method,
    path: &str,
    body: Option<Value>,
    content_type: &'static str,
) -> ApiResponse {
    let mut request = ApiRequest::new(method, path);
    request.user = Some(UserInfo {
        name: "ferrokube-admin".into(),
        uid: String::new(),
        groups: vec!["system:masters".into()],
        extra: Default::default(),
    });
    if let Some(body) = body {
        request.body = bytes::Bytes::from(serde_json::to_vec(&body).expect("json"));
        request.headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static(content_type),
        );
    }
    api.handle(request).await
}

async fn call(api: &Arc<Api>, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let response = call_with(api, method, path, body, "application/json").await;
    (response.status, response.body_json())
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";

async fn create(api: &Arc<Api>, path: &str, body: Value) -> Value {
    let (code, created) = call(api, Method::Post, path, Some(body)).await;
    assert_eq!(code, 201, "{created}");
    created
}

fn configmap(name: &str, finalizers: &[&str]) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "x"}, "finalizers": finalizers}, "data": {"k": "v"}})
}

/// (kind, deleted) of every change of `key` after `revision`.
fn changes(api: &Api, key: &str, revision: &Value) -> Vec<&'static str> {
    let from: i64 = revision.as_str().unwrap().parse().unwrap();
    api.store
        .changes_since(from, usize::MAX)
        .unwrap()
        .iter()
        .filter(|change| change.key == key)
        .map(|change| {
            if change.deleted {
                "DELETED"
            } else {
                "MODIFIED"
            }
        })
        .collect()
}

#[tokio::test]
async fn finalizers_hold_an_object_until_the_last_one_is_removed() {
    let api = api().await;
    let created = create(&api, CMS, configmap("held", &["example.com/hold"])).await;
    let rv = created["metadata"]["resourceVersion"].clone();
    let path = format!("{CMS}/held");

    let (code, kept) = call(&api, Method::Delete, &path, None).await;
    assert_eq!(code, 200, "the object itself, not a Status: {kept}");
    assert_eq!(kept["kind"], "ConfigMap");
    assert!(kept["metadata"]["deletionTimestamp"].is_string(), "{kept}");
    assert_eq!(kept["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_ne!(kept["metadata"]["resourceVersion"], rv);
    let (code, got) = call(&api, Method::Get, &path, None).await;
    assert_eq!((code, &got), (200, &kept));

    // A second DELETE changes nothing.
    let (code, again) = call(&api, Method::Delete, &path, None).await;
    assert_eq!((code, &again), (200, &kept));

    // No new finalizers while deleting; deletion fields are immutable.
    let mut added = kept.clone();
    added["metadata"]["finalizers"] = json!(["example.com/hold", "example.com/more"]);
    let (code, status) = call(&api, Method::Put, &path, Some(added)).await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        r#"ConfigMap "held" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/more"}"#
    );
    let mut regrace = kept.clone();
    regrace["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    let (code, status) = call(&api, Method::Put, &path, Some(regrace)).await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        r#"ConfigMap "held" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable"#
    );
    // Creating it again: AlreadyExists, saying it is on its way out.
    let (code, status) = call(&api, Method::Post, CMS, Some(configmap("held", &[]))).await;
    assert_eq!(code, 409);
    assert_eq!(
        status["message"],
        r#"object is being deleted: configmaps "held" already exists"#
    );
    // Other updates still go through.
    let mut relabel = kept.clone();
    relabel["data"] = json!({"k": "w"});
    let (code, relabeled) = call(&api, Method::Put, &path, Some(relabel)).await;
    assert_eq!(code, 200, "{relabeled}");
    assert_eq!(
        relabeled["metadata"]["deletionTimestamp"],
        kept["metadata"]["deletionTimestamp"]
    );

    // The update that removes the last finalizer deletes it.
    let response = call_with(
        &api,
        Method::Patch,
        &path,
        Some(json!({"metadata": {"finalizers": null}})),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(response.status, 200);
    let (code, _) = call(&api, Method::Get, &path, None).await;
    assert_eq!(code, 404);
    assert_eq!(
        changes(&api, "/registry/configmaps/default/held", &rv),
        ["MODIFIED", "MODIFIED", "DELETED"],
        "marked, data changed, deleted"
    );
}

#[tokio::test]
async fn propagation_policies_add_the_garbage_collector_finalizers() {
    let api = api().await;
    for (name, query, code, finalizer) in [
        (
            "fg",
            "propagationPolicy=Foreground",
            200,
            "foregroundDeletion",
        ),
        ("or", "propagationPolicy=Orphan", 200, "orphan"),
        ("ot", "orphanDependents=true", 200, "orphan"),
    ] {
        create(&api, CMS, configmap(name, &[])).await;
        let (got, kept) = call(&api, Method::Delete, &format!("{CMS}/{name}?{query}"), None).await;
        assert_eq!(got, code, "{query}: {kept}");
        assert_eq!(
            kept["metadata"]["finalizers"],
            json!([finalizer]),
            "{query}"
        );
        assert!(kept["metadata"]["deletionTimestamp"].is_string());
    }
    // orphanDependents=false adds nothing (only the policy does), but an
    // object kept by its own finalizers is then answered 202 Accepted.
    create(&api, CMS, configmap("od", &["example.com/hold"])).await;
    let (code, kept) = call(
        &api,
        Method::Delete,
        &format!("{CMS}/od?orphanDependents=false"),
        None,
    )
    .await;
    assert_eq!(code, 202, "{kept}");
    assert_eq!(kept["metadata"]["finalizers"], json!(["example.com/hold"]));
    create(&api, CMS, configmap("od2", &[])).await;
    let (code, status) = call(
        &api,
        Method::Delete,
        &format!("{CMS}/od2?orphanDependents=false"),
        None,
    )
    .await;
    assert_eq!((code, status["kind"].as_str()), (200, Some("Status")));
    // Background (the default) deletes at once, answering a Status.
    create(&api, CMS, configmap("bg", &[])).await;
    let (code, status) = call(
        &api,
        Method::Delete,
        &format!("{CMS}/bg?propagationPolicy=Background"),
        None,
    )
    .await;
    assert_eq!((code, status["kind"].as_str()), (200, Some("Status")));
    assert_eq!(status["details"]["name"], "bg");
    // Options in the body, as clients send `DeleteOptions`.
    create(&api, CMS, configmap("body", &[])).await;
    let body =
        json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"});
    let (code, kept) = call(&api, Method::Delete, &format!("{CMS}/body"), Some(body)).await;
    assert_eq!(code, 200);
    assert_eq!(
        kept["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
}

#[tokio::test]
async fn delete_options_are_validated_as_kube() {
    let api = api().await;
    create(&api, CMS, configmap("v", &[])).await;
    let cases = [
        (
            "orphanDependents=true&propagationPolicy=Foreground",
            422,
            r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Foreground": orphanDependents and deletionPropagation cannot be both set"#,
        ),
        (
            "propagationPolicy=Later",
            422,
            r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil""#,
        ),
        (
            "dryRun=Yes",
            422,
            r#"DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Yes"}: supported values: "All""#,
        ),
        (
            "gracePeriodSeconds=x",
            400,
            r#"strconv.ParseInt: parsing "x": invalid syntax"#,
        ),
    ];
    for (query, code, message) in cases {
        let (got, status) = call(&api, Method::Delete, &format!("{CMS}/v?{query}"), None).await;
        assert_eq!(
            (got, status["message"].as_str()),
            (code, Some(message)),
            "{query}"
        );
        if code == 422 {
            assert_eq!(status["reason"], "Invalid");
            assert_eq!(status["details"]["group"], "meta.k8s.io");
            assert_eq!(status["details"]["kind"], "DeleteOptions");
        }
    }
    let (code, _) = call(&api, Method::Get, &format!("{CMS}/v"), None).await;
    assert_eq!(code, 200, "nothing was deleted");
    // dryRun: answered as deleted, still stored.
    let (code, status) = call(&api, Method::Delete, &format!("{CMS}/v?dryRun=All"), None).await;
    assert_eq!((code, status["status"].as_str()), (200, Some("Success")));
    let (code, _) = call(&api, Method::Get, &format!("{CMS}/v"), None).await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn preconditions_conflict_with_kube_messages() {
    let api = api().await;
    let created = create(&api, CMS, configmap("p", &[])).await;
    let uid = created["metadata"]["uid"].as_str().unwrap().to_string();
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let delete = |pre: Value| {
        let api = api.clone();
        async move {
            call(
                &api,
                Method::Delete,
                &format!("{CMS}/p"),
                Some(json!({"preconditions": pre})),
            )
            .await
        }
    };
    let (code, status) = delete(json!({"uid": "other"})).await;
    assert_eq!(code, 409);
    assert_eq!(
        status["message"],
        format!("Operation cannot be fulfilled on ConfigMap \"p\": the UID in the precondition (other) does not match the UID in record ({uid}). The object might have been deleted and then recreated")
    );
    assert_eq!(status["reason"], "Conflict");
    let (code, status) = delete(json!({"resourceVersion": "1"})).await;
    assert_eq!(code, 409);
    assert_eq!(
        status["message"],
        format!("Operation cannot be fulfilled on ConfigMap \"p\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({rv}). The object might have been modified")
    );
    let (code, status) = delete(json!({"uid": uid, "resourceVersion": rv})).await;
    assert_eq!((code, status["status"].as_str()), (200, Some("Success")));
}

fn pod(name: &str, node: Option<&str>) -> Value {
    let mut spec = json!({"containers": [{"name": "c", "image": "busybox"}]});
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn pods_bound_to_a_node_are_deleted_gracefully() {
    let api = api().await;
    let pods = "/api/v1/namespaces/default/pods";
    let created = create(&api, pods, pod("bound", Some("node-1"))).await;
    let rv = created["metadata"]["resourceVersion"].clone();
    let (code, kept) = call(&api, Method::Delete, &format!("{pods}/bound"), None).await;
    assert_eq!(code, 200);
    assert_eq!(kept["metadata"]["deletionGracePeriodSeconds"], 30, "{kept}");
    assert!(kept["metadata"]["deletionTimestamp"].is_string());
    let (code, _) = call(&api, Method::Get, &format!("{pods}/bound"), None).await;
    assert_eq!(code, 200, "still there while the kubelet stops it");
    // Again: nothing changes; a shorter period shortens it.
    let (code, again) = call(&api, Method::Delete, &format!("{pods}/bound"), None).await;
    assert_eq!((code, &again), (200, &kept));
    let (code, shorter) = call(
        &api,
        Method::Delete,
        &format!("{pods}/bound?gracePeriodSeconds=5"),
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(shorter["metadata"]["deletionGracePeriodSeconds"], 5);
    // Grace 0 (the kubelet's final delete, or --force) removes it.
    let (code, gone) = call(
        &api,
        Method::Delete,
        &format!("{pods}/bound?gracePeriodSeconds=0"),
        None,
    )
    .await;
    assert_eq!((code, gone["kind"].as_str()), (200, Some("Pod")));
    let (code, _) = call(&api, Method::Get, &format!("{pods}/bound"), None).await;
    assert_eq!(code, 404);
    assert_eq!(
        changes(&api, "/registry/pods/default/bound", &rv),
        ["MODIFIED", "MODIFIED", "MODIFIED", "DELETED"]
    );

    // An unscheduled pod goes at once (marked with grace 0, then removed).
    let created = create(&api, pods, pod("pending", None)).await;
    let rv = created["metadata"]["resourceVersion"].clone();
    let (code, gone) = call(&api, Method::Delete, &format!("{pods}/pending"), None).await;
    assert_eq!(code, 200);
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    let (code, _) = call(&api, Method::Get, &format!("{pods}/pending"), None).await;
    assert_eq!(code, 404);
    assert_eq!(
        changes(&api, "/registry/pods/default/pending", &rv),
        ["MODIFIED", "DELETED"]
    );
}

#[tokio::test]
async fn deletecollection_selects_and_honours_finalizers() {
    let api = api().await;
    create(&api, CMS, configmap("a", &[])).await;
    create(&api, CMS, configmap("b", &["example.com/hold"])).await;
    let mut other = configmap("c", &[]);
    other["metadata"]["labels"] = json!({"app": "y"});
    create(&api, CMS, other).await;
    let (code, list) = call(
        &api,
        Method::Delete,
        &format!("{CMS}?labelSelector=app%3Dx"),
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(list["kind"], "ConfigMapList");
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let (code, _) = call(&api, Method::Get, &format!("{CMS}/a"), None).await;
    assert_eq!(code, 404);
    let (code, held) = call(&api, Method::Get, &format!("{CMS}/b"), None).await;
    assert_eq!(code, 200);
    assert!(held["metadata"]["deletionTimestamp"].is_string());
    let (code, _) = call(&api, Method::Get, &format!("{CMS}/c"), None).await;
    assert_eq!(code, 200);
    let (code, list) = call(
        &api,
        Method::Delete,
        &format!("{CMS}?fieldSelector=metadata.name%3Dc"),
        None,
    )
    .await;
    assert_eq!(
        (code, list["items"].as_array().map(Vec::len)),
        (200, Some(1))
    );
}

#[tokio::test]
async fn namespaces_terminate_until_finalized() {
    let api = api().await;
    create(
        &api,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "doomed"}}),
    )
    .await;
    let path = "/api/v1/namespaces/doomed";
    let (code, terminating) = call(&api, Method::Delete, path, None).await;
    assert_eq!(code, 200);
    assert_eq!(terminating["status"]["phase"], "Terminating");
    assert!(terminating["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(terminating["spec"]["finalizers"], json!(["kubernetes"]));
    let (code, still) = call(&api, Method::Get, path, None).await;
    assert_eq!((code, &still), (200, &terminating));
    // Deleting again changes nothing while `kubernetes` is pending.
    let (code, again) = call(&api, Method::Delete, path, None).await;
    assert_eq!((code, &again), (200, &terminating));

    let (code, status) = call(
        &api,
        Method::Post,
        "/api/v1/namespaces/doomed/configmaps",
        Some(configmap("late", &[])),
    )
    .await;
    assert_eq!(code, 403);
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        r#"configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated"#
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "NamespaceTerminating", "message": "namespace doomed is being terminated", "field": "metadata.namespace"}])
    );

    // Create-on-update is a create too.
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"}});
    let (code, status) = call(
        &api,
        Method::Put,
        "/api/v1/namespaces/doomed/endpoints/e",
        Some(endpoints),
    )
    .await;
    assert_eq!(code, 403, "{status}");
    // spec.finalizers only change through finalize, with kube's name rules.
    let mut update = terminating.clone();
    update["spec"]["finalizers"] = json!([]);
    let (code, unchanged) = call(&api, Method::Put, path, Some(update.clone())).await;
    assert_eq!(code, 200);
    assert_eq!(unchanged["spec"]["finalizers"], json!(["kubernetes"]));
    let mut bad = terminating.clone();
    bad["spec"]["finalizers"] = json!(["kubernetes", "custom"]);
    let (code, status) = call(&api, Method::Put, &format!("{path}/finalize"), Some(bad)).await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        r#"Namespace "doomed" is invalid: spec.finalizers[1]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified"#
    );
    // Removing the last finalizer through finalize removes the namespace.
    let (code, finalized) =
        call(&api, Method::Put, &format!("{path}/finalize"), Some(update)).await;
    assert_eq!(code, 200, "{finalized}");
    let (code, _) = call(&api, Method::Get, path, None).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn corrupt_objects_are_reported_and_deleted_only_unsafely() {
    let api = api().await;
    let key = "/registry/configmaps/default/broken";
    api.store
        .commit(Txn::single(Op::Put {
            key: key.into(),
            value: bytes::Bytes::from_static(b"{not json"),
            expect: Expect::Absent,
        }))
        .await
        .unwrap();
    let path = format!("{CMS}/broken");
    let (code, status) = call(&api, Method::Get, &path, None).await;
    assert_eq!(code, 500);
    assert_eq!(status["reason"], "InternalError");
    let message = status["message"].as_str().unwrap();
    assert!(message.starts_with("Internal error occurred: StorageError: corrupt object, Code: 7, Key: /registry/configmaps/default/broken"), "{message}");
    let (code, _) = call(&api, Method::Delete, &path, None).await;
    assert_eq!(code, 500, "a normal delete cannot read it either");
    let (code, status) = call(&api, Method::Get, CMS, None).await;
    assert_eq!(code, 500, "a list names the corrupt object: {status}");
    assert_eq!(status["message"].as_str(), Some(message));
    let unsafe_query = "ignoreStoreReadErrorWithClusterBreakingPotential=true";
    for extra in [
        "dryRun=All",
        "gracePeriodSeconds=0",
        "orphanDependents=true",
        "propagationPolicy=Orphan",
    ] {
        let (code, status) = call(
            &api,
            Method::Delete,
            &format!("{path}?{unsafe_query}&{extra}"),
            None,
        )
        .await;
        assert_eq!(code, 422, "{extra}");
        let field = extra.split('=').next().unwrap();
        assert!(
            status["message"]
                .as_str()
                .unwrap()
                .contains(&format!("{field}: Invalid value: ")),
            "{status}"
        );
    }
    let (code, status) = call(
        &api,
        Method::Delete,
        &format!("{path}?{unsafe_query}"),
        None,
    )
    .await;
    assert_eq!(code, 200, "{status}");
    assert_eq!(
        status,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {"name": "broken", "kind": "ConfigMap"}, "code": 200})
    );
    let (code, _) = call(&api, Method::Get, &path, None).await;
    assert_eq!(code, 404);
    let (code, status) = call(
        &api,
        Method::Delete,
        &path,
        Some(json!({"gracePeriodSeconds": "soon"})),
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(status["message"], "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64");
    let (code, _) = call(&api, Method::Get, CMS, None).await;
    assert_eq!(code, 200, "lists work again");
    // A readable object is not for unsafe deletion.
    create(&api, CMS, configmap("fine", &["example.com/hold"])).await;
    let (code, status) = call(
        &api,
        Method::Delete,
        &format!("{CMS}/fine?{unsafe_query}"),
        None,
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        r#"configmaps "fine" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option"#
    );
}

#[tokio::test]
async fn finalizer_names_are_validated() {
    let api = api().await;
    let (code, status) = call(
        &api,
        Method::Post,
        CMS,
        Some(configmap("bad", &["Not A Name"])),
    )
    .await;
    assert_eq!(code, 422);
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with(r#"ConfigMap "bad" is invalid: [metadata.finalizers: Invalid value: "Not A Name": name part must consist of"#),
        "{status}"
    );
    // core's ValidateObjectMeta adds validateKubeFinalizerName after the generic rules.
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .ends_with(r#", metadata.finalizers[0]: Invalid value: "Not A Name": name is neither a standard finalizer name nor is it fully qualified]"#),
        "{status}"
    );
    let (code, status) = call(
        &api,
        Method::Post,
        CMS,
        Some(configmap("both", &["orphan", "foregroundDeletion"])),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        r#"ConfigMap "both" is invalid: metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set"#
    );
}
