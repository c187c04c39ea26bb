//! Handler tests through `Api::handle`, without sockets: the request path
//! from routing to the store and back, on the memory backend.

use std::sync::Arc;

use ferrokube_store::{Backend, LocalBackend, MemoryDisk, Store};
use serde_json::{json, Value};

use super::{Api, ApiRequest, ApiResponse};
use crate::authn::UserInfo;
use crate::object::ObjectCodec;
use crate::route::Method;

pub(super) async fn api() -> Arc<Api> {
    let backend: Arc<dyn Backend> =
        Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    let store = Store::open(backend, ObjectCodec).await.expect("store");
    let api = Api::new(
        store,
        "127.0.0.1:6443".into(),
        super::ContinueKey::random().expect("os random source"),
    );
    crate::bootstrap::ensure_system_namespaces(&api)
        .await
        .expect("namespaces");
    // The serviceaccount controller's `default` account, which the
    // ServiceAccount admission plugin requires of pods.
    let account =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
    let created = call(
        &api,
        Method::Post,
        "/api/v1/namespaces/default/serviceaccounts",
        Some(account),
    )
    .await;
    assert_eq!(created.status, 201, "the default service account");
    api
}

pub(super) fn admin() -> Option<UserInfo> {
    Some(UserInfo {
        name: "ferrokube-admin".into(),
        uid: String::new(),
        groups: vec!["system:masters".into()],
        extra: Default::default(),
    })
}

async fn call(api: &Arc<Api>, method: Method, path: &str, body: Option<Value>) -> ApiResponse {
    let mut request = ApiRequest::new(method, path);
    request.user = admin();
    if let Some(body) = body {
        request.body = bytes::Bytes::from(serde_json::to_vec(&body).expect("json"));
        request.headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
    }
    api.handle(request).await
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"app": name}}, "data": {"k": "v"}})
}

#[tokio::test]
async fn create_get_update_delete_round_trip() {
    let api = api().await;
    let created = call(
        &api,
        Method::Post,
        "/api/v1/namespaces/default/configmaps",
        Some(configmap("a")),
    )
    .await;
    assert_eq!(created.status, 201);
    let created = created.body_json();
    assert_eq!(created["metadata"]["namespace"], "default");
    assert!(created["metadata"]["uid"]
        .as_str()
        .is_some_and(|uid| uid.len() == 36));
    let revision = created["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();

    let got = call(
        &api,
        Method::Get,
        "/api/v1/namespaces/default/configmaps/a",
        None,
    )
    .await;
    assert_eq!((got.status, got.body_json()), (200, created.clone()));

    let mut changed = created.clone();
    changed["data"]["k"] = json!("w");
    let updated = call(
        &api,
        Method::Put,
        "/api/v1/namespaces/default/configmaps/a",
        Some(changed.clone()),
    )
    .await;
    assert_eq!(updated.status, 200);
    assert_ne!(
        updated.body_json()["metadata"]["resourceVersion"],
        json!(revision)
    );

    // The same stale resourceVersion again: 409 Conflict.
    let stale = call(
        &api,
        Method::Put,
        "/api/v1/namespaces/default/configmaps/a",
        Some(changed),
    )
    .await;
    assert_eq!(
        (stale.status, stale.body_json()["reason"].clone()),
        (409, json!("Conflict"))
    );

    let deleted = call(
        &api,
        Method::Delete,
        "/api/v1/namespaces/default/configmaps/a",
        None,
    )
    .await;
    assert_eq!(deleted.status, 200);
    assert_eq!(deleted.body_json()["status"], "Success");
    assert_eq!(
        deleted.body_json()["details"]["uid"],
        created["metadata"]["uid"]
    );
    let gone = call(
        &api,
        Method::Get,
        "/api/v1/namespaces/default/configmaps/a",
        None,
    )
    .await;
    assert_eq!(gone.status, 404);
    assert_eq!(gone.body_json()["message"], "configmaps \"a\" not found");
}

#[tokio::test]
async fn errors_are_kube_statuses() {
    let api = api().await;
    let cases: Vec<(Method, &str, Option<Value>, u16, &str)> = vec![
        (
            Method::Post,
            "/api/v1/namespaces/nope/configmaps",
            Some(configmap("a")),
            404,
            "NotFound",
        ),
        (
            Method::Post,
            "/api/v1/namespaces/default/configmaps",
            Some(configmap("Bad_Name")),
            422,
            "Invalid",
        ),
        (
            Method::Post,
            "/api/v1/configmaps",
            Some(configmap("a")),
            405,
            "MethodNotAllowed",
        ),
        (
            Method::Get,
            "/api/v1/namespaces/default/nodes",
            None,
            404,
            "NotFound",
        ),
        (
            Method::Get,
            "/api/v1/namespaces/default/widgets",
            None,
            404,
            "NotFound",
        ),
        (
            Method::Post,
            "/api/v1/namespaces/default/configmaps",
            Some(json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}})),
            400,
            "BadRequest",
        ),
        (
            Method::Post,
            "/api/v1/namespaces/default/configmaps",
            Some(json!({"metadata": {"name": "x", "namespace": "other"}})),
            400,
            "BadRequest",
        ),
        (
            Method::Put,
            "/api/v1/namespaces/default/configmaps/missing",
            Some(configmap("missing")),
            404,
            "NotFound",
        ),
        (
            Method::Post,
            "/api/v1/namespaces/default/configmaps",
            Some(json!({"metadata": {"name": "x", "labels": {"bad key": "v"}}})),
            422,
            "Invalid",
        ),
        (
            Method::Post,
            "/api/v1/namespaces/default/configmaps",
            Some(json!({"metadata": {"name": "x", "labels": {"k": "bad value!"}}})),
            422,
            "Invalid",
        ),
        (
            Method::Get,
            "/api/v1/namespaces/default/configmaps?labelSelector=a%20in%20",
            None,
            400,
            "BadRequest",
        ),
        (
            Method::Get,
            "/api/v1/namespaces/default/configmaps?fieldSelector=spec.foo%3Dx",
            None,
            400,
            "BadRequest",
        ),
        (
            Method::Delete,
            "/api/v1/namespaces/kube-system/configmaps/none",
            None,
            404,
            "NotFound",
        ),
    ];
    for (method, path, body, code, reason) in cases {
        let response = call(&api, method, path, body).await;
        let status = response.body_json();
        assert_eq!(
            (response.status, status["reason"].as_str()),
            (code, Some(reason)),
            "{method:?} {path}: {status}"
        );
        assert_eq!(status["kind"], "Status");
        assert_eq!(status["code"], json!(code));
    }
    let invalid = call(
        &api,
        Method::Post,
        "/api/v1/namespaces/default/configmaps",
        Some(configmap("Bad_Name")),
    )
    .await;
    let causes = invalid.body_json()["details"]["causes"].clone();
    assert_eq!(causes[0]["field"], "metadata.name");
    assert_eq!(causes[0]["reason"], "FieldValueInvalid");

    let mut malformed = ApiRequest::new(Method::Post, "/api/v1/namespaces/default/configmaps");
    malformed.user = admin();
    malformed.body = bytes::Bytes::from_static(b"{\"metadata\": ");
    let response = api.handle(malformed).await;
    assert_eq!(
        (response.status, response.body_json()["reason"].clone()),
        (400, json!("BadRequest"))
    );

    // Without credentials: `system:anonymous`, judged by the authorizer.
    let mut anonymous = ApiRequest::new(Method::Get, "/api/v1/namespaces");
    anonymous.user = None;
    let refused = api.handle(anonymous).await;
    assert_eq!(
        (refused.status, refused.body_json()["message"].clone()),
        (
            403,
            json!(
                r#"namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope"#
            )
        )
    );
    // The bootstrap policy's system:public-info-viewer opens the health checks.
    crate::rbac_policy::ensure_rbac_policy(&api)
        .await
        .expect("bootstrap policy");
    let mut health = ApiRequest::new(Method::Get, "/readyz");
    health.user = None;
    assert_eq!(api.handle(health).await.status, 200);
}

#[tokio::test]
async fn list_selects_and_pages_from_one_snapshot() {
    let api = api().await;
    for name in ["a", "b", "c", "d", "e"] {
        assert_eq!(
            call(
                &api,
                Method::Post,
                "/api/v1/namespaces/default/configmaps",
                Some(configmap(name))
            )
            .await
            .status,
            201
        );
    }
    let selected = call(
        &api,
        Method::Get,
        "/api/v1/namespaces/default/configmaps?labelSelector=app%20in%20(a,c)",
        None,
    )
    .await;
    let names: Vec<String> = selected.body_json()["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| item["metadata"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, ["a", "c"]);
    assert_eq!(selected.body_json()["kind"], "ConfigMapList");

    let first = call(
        &api,
        Method::Get,
        "/api/v1/namespaces/default/configmaps?limit=2",
        None,
    )
    .await
    .body_json();
    assert_eq!(first["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(first["metadata"]["remainingItemCount"], json!(3));
    let revision = first["metadata"]["resourceVersion"].clone();
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("continue token")
        .to_string();
    // A write between pages must not show up in later pages.
    call(
        &api,
        Method::Post,
        "/api/v1/namespaces/default/configmaps",
        Some(configmap("bb")),
    )
    .await;
    let second = call(
        &api,
        Method::Get,
        &format!("/api/v1/namespaces/default/configmaps?limit=10&continue={token}"),
        None,
    )
    .await
    .body_json();
    assert_eq!(second["metadata"]["resourceVersion"], revision);
    let rest: Vec<&str> = second["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item["metadata"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(rest, ["c", "d", "e"]);
    assert!(second["metadata"].get("continue").is_none());
    assert!(second["metadata"].get("remainingItemCount").is_none());

    let all = call(
        &api,
        Method::Get,
        "/api/v1/configmaps?fieldSelector=metadata.namespace%3Ddefault",
        None,
    )
    .await;
    assert_eq!(all.body_json()["items"].as_array().map(Vec::len), Some(6));
}

#[tokio::test]
async fn status_and_scale_subresources_split_spec_and_status() {
    let api = api().await;
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        "status": {"replicas": 99}
    });
    let created = call(
        &api,
        Method::Post,
        "/apis/apps/v1/namespaces/default/deployments",
        Some(deployment),
    )
    .await;
    assert_eq!(created.status, 201);
    let created = created.body_json();
    assert_eq!(
        created["status"],
        json!({}),
        "status is not settable on create"
    );
    assert_eq!(created["metadata"]["generation"], json!(1));

    let mut status_update = created.clone();
    status_update["status"] = json!({"replicas": 2});
    status_update["spec"]["replicas"] = json!(7);
    let after_status = call(
        &api,
        Method::Put,
        "/apis/apps/v1/namespaces/default/deployments/web/status",
        Some(status_update),
    )
    .await;
    assert_eq!(after_status.status, 200);
    let after_status = after_status.body_json();
    assert_eq!(
        after_status["spec"]["replicas"],
        json!(2),
        "/status keeps the spec"
    );
    assert_eq!(after_status["status"]["replicas"], json!(2));
    assert_eq!(after_status["metadata"]["generation"], json!(1));

    let scale = call(
        &api,
        Method::Get,
        "/apis/apps/v1/namespaces/default/deployments/web/scale",
        None,
    )
    .await
    .body_json();
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["status"]["selector"], "app=web");
    let mut new_scale = scale.clone();
    new_scale["spec"]["replicas"] = json!(5);
    let scaled = call(
        &api,
        Method::Put,
        "/apis/apps/v1/namespaces/default/deployments/web/scale",
        Some(new_scale),
    )
    .await;
    assert_eq!(
        (
            scaled.status,
            scaled.body_json()["spec"]["replicas"].clone()
        ),
        (200, json!(5))
    );
    let after = call(
        &api,
        Method::Get,
        "/apis/apps/v1/namespaces/default/deployments/web",
        None,
    )
    .await
    .body_json();
    assert_eq!(
        after["metadata"]["generation"],
        json!(2),
        "a spec change bumps the generation"
    );
    assert_eq!(
        after["status"]["replicas"],
        json!(2),
        "the main resource keeps status"
    );
    // The old Scale's resourceVersion is stale now.
    let stale = call(
        &api,
        Method::Put,
        "/apis/apps/v1/namespaces/default/deployments/web/scale",
        Some(scale),
    )
    .await;
    assert_eq!(stale.status, 409);
}

#[tokio::test]
async fn discovery_and_openapi_answer() {
    let api = api().await;
    let mut aggregated = ApiRequest::new(Method::Get, "/apis");
    aggregated.user = admin();
    aggregated.headers.insert(
        http::header::ACCEPT,
        http::HeaderValue::from_static(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
        ),
    );
    let response = api.handle(aggregated).await;
    assert_eq!(response.body_json()["kind"], "APIGroupDiscoveryList");
    let content_type = response
        .headers
        .iter()
        .find(|(name, _)| name == http::header::CONTENT_TYPE)
        .map(|(_, v)| v.clone());
    assert_eq!(
        content_type.as_deref(),
        Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    );

    let openapi = call(&api, Method::Get, "/openapi/v2", None).await;
    assert_eq!(openapi.status, 200);
    let etag = openapi
        .headers
        .iter()
        .find(|(name, _)| name == http::header::ETAG)
        .map(|(_, v)| v.clone())
        .expect("etag");
    let mut again = ApiRequest::new(Method::Get, "/openapi/v2");
    again.user = admin();
    again.headers.insert(
        http::header::IF_NONE_MATCH,
        http::HeaderValue::from_str(&etag).expect("header"),
    );
    assert_eq!(api.handle(again).await.status, 304);
    let version = call(&api, Method::Get, "/version", None).await.body_json();
    assert!(version["gitVersion"]
        .as_str()
        .is_some_and(|v| v.starts_with("v1.34.")));
}

async fn call_typed(
    api: &Arc<Api>,
    method: Method,
    path: &str,
    content_type: &'static str,
    body: Value,
) -> ApiResponse {
    let mut request = ApiRequest::new(method, path);
    request.user = admin();
    request.body = bytes::Bytes::from(serde_json::to_vec(&body).expect("json"));
    request.headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    api.handle(request).await
}

#[tokio::test]
async fn merge_and_json_patches_update_objects_and_subresources() {
    let api = api().await;
    call(
        &api,
        Method::Post,
        "/api/v1/namespaces/default/configmaps",
        Some(configmap("p")),
    )
    .await;
    let merged = call_typed(
        &api,
        Method::Patch,
        "/api/v1/namespaces/default/configmaps/p",
        "application/merge-patch+json",
        json!({"metadata": {"labels": {"extra": "1"}}, "data": {"k": null, "n": "v"}}),
    )
    .await;
    assert_eq!(merged.status, 200);
    let merged = merged.body_json();
    assert_eq!(merged["data"], json!({"n": "v"}));
    assert_eq!(
        merged["metadata"]["labels"],
        json!({"app": "p", "extra": "1"})
    );

    let failed_test = call_typed(
        &api,
        Method::Patch,
        "/api/v1/namespaces/default/configmaps/p",
        "application/json-patch+json",
        json!([{"op": "test", "path": "/data/n", "value": "other"}, {"op": "remove", "path": "/data/n"}]),
    )
    .await;
    assert_eq!(failed_test.status, 422);
    let patched = call_typed(
        &api,
        Method::Patch,
        "/api/v1/namespaces/default/configmaps/p",
        "application/json-patch+json",
        json!([{"op": "test", "path": "/data/n", "value": "v"}, {"op": "add", "path": "/data/m", "value": "w"}]),
    )
    .await;
    assert_eq!(patched.body_json()["data"], json!({"m": "w", "n": "v"}));

    let stale = call_typed(
        &api,
        Method::Patch,
        "/api/v1/namespaces/default/configmaps/p",
        "application/merge-patch+json",
        json!({"metadata": {"resourceVersion": "1"}, "data": {"x": "y"}}),
    )
    .await;
    assert_eq!(
        stale.status, 409,
        "a resourceVersion in the patch is a precondition"
    );
    let unsupported = call_typed(
        &api,
        Method::Patch,
        "/api/v1/namespaces/default/configmaps/p",
        "text/plain",
        json!({}),
    )
    .await;
    assert_eq!(unsupported.status, 415);
    let missing = call_typed(
        &api,
        Method::Patch,
        "/api/v1/namespaces/default/configmaps/none",
        "application/merge-patch+json",
        json!({}),
    )
    .await;
    assert_eq!(missing.status, 404);

    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    });
    call(
        &api,
        Method::Post,
        "/apis/apps/v1/namespaces/default/deployments",
        Some(deployment),
    )
    .await;
    let scaled = call_typed(
        &api,
        Method::Patch,
        "/apis/apps/v1/namespaces/default/deployments/web/scale",
        "application/merge-patch+json",
        json!({"spec": {"replicas": 4}}),
    )
    .await;
    assert_eq!(
        (
            scaled.status,
            scaled.body_json()["spec"]["replicas"].clone()
        ),
        (200, json!(4))
    );
    let status = call_typed(
        &api,
        Method::Patch,
        "/apis/apps/v1/namespaces/default/deployments/web/status",
        "application/merge-patch+json",
        json!({"status": {"replicas": 4}, "spec": {"replicas": 9}}),
    )
    .await
    .body_json();
    assert_eq!(
        (
            status["status"]["replicas"].clone(),
            status["spec"]["replicas"].clone()
        ),
        (json!(4), json!(4))
    );
}

/// A create answers with the version the cache holds (no second
/// serialization): the same bytes a GET returns, and the same bytes the
/// object would serialize to; a dry run answers from the object itself.
#[tokio::test]
async fn a_create_answers_with_the_bytes_a_get_returns() {
    let api = api().await;
    let pod = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "x"},
            "annotations": {"note": "é \"quoted\" <tag>"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
            "env": [{"name": "A", "value": "1"}]}]}})
    };
    let created = call(
        &api,
        Method::Post,
        "/api/v1/namespaces/default/pods",
        Some(pod("p")),
    )
    .await;
    assert_eq!(created.status, 201);
    let created_bytes = created.body_whole().expect("a body");
    let got = call(&api, Method::Get, "/api/v1/namespaces/default/pods/p", None).await;
    assert_eq!(got.status, 200);
    assert_eq!(created_bytes, got.body_whole().expect("a body"));
    let value = created.body_json();
    assert!(value["metadata"]["managedFields"].is_array());
    assert_eq!(
        serde_json::to_vec(&value).expect("json"),
        created_bytes.to_vec(),
        "the cached JSON is what the object serializes to"
    );

    let dry = call(
        &api,
        Method::Post,
        "/api/v1/namespaces/default/pods?dryRun=All",
        Some(pod("q")),
    )
    .await;
    assert_eq!(dry.status, 201);
    assert_eq!(dry.body_json()["metadata"]["name"], "q");
    let missing = call(&api, Method::Get, "/api/v1/namespaces/default/pods/q", None).await;
    assert_eq!(missing.status, 404);
}

/// An update is recorded before the strategy, as kube's update handler
/// records it: a `/status` write by a stale copy whose spec differs owns
/// only what it changed in status (the status strategy keeps the stored
/// spec, kube's reset fields), a main-resource write that changes status
/// owns none of it, and a Namespace's `spec.finalizers` (changed only
/// through `/finalize`) count for nobody, so that write is a no-op.
#[tokio::test]
async fn updates_own_only_what_their_strategy_keeps() {
    let api = api().await;
    let path = "/apis/apps/v1/namespaces/default/deployments/d";
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
    let created = call(
        &api,
        Method::Post,
        "/apis/apps/v1/namespaces/default/deployments",
        Some(deployment),
    )
    .await;
    assert_eq!(created.status, 201);
    let mut stale = created.body_json();
    stale["spec"]["replicas"] = json!(5);
    stale["status"] = json!({"replicas": 1});
    stale["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    let updated = call(&api, Method::Put, &format!("{path}/status"), Some(stale)).await;
    assert_eq!(updated.status, 200, "{}", updated.body_json());
    let object = updated.body_json();
    assert_eq!(object["spec"]["replicas"], 1);
    let status_entry = object["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["subresource"] == "status")
        .cloned()
        .expect("a status entry");
    assert_eq!(
        status_entry["fieldsV1"],
        json!({"f:status": {"f:replicas": {}}})
    );
    // Through the main resource, status is the strategy's to keep.
    let mut main = object.clone();
    main["status"] = json!({"replicas": 9});
    main["metadata"]["labels"] = json!({"x": "y"});
    let updated = call(&api, Method::Put, path, Some(main)).await;
    assert_eq!(updated.status, 200);
    let object = updated.body_json();
    assert_eq!(object["status"]["replicas"], 1);
    let entries = object["metadata"]["managedFields"].as_array().unwrap();
    let main_entry = entries
        .iter()
        .find(|entry| {
            entry.get("subresource").is_none() && entry["fieldsV1"]["f:metadata"].is_object()
        })
        .expect("the update's entry");
    assert_eq!(
        main_entry["fieldsV1"]["f:metadata"],
        json!({"f:labels": {".": {}, "f:x": {}}})
    );
    assert!(entries
        .iter()
        .all(|entry| entry.get("subresource").is_some()
            || entry["fieldsV1"].get("f:status").is_none()));

    let namespace = call(
        &api,
        Method::Post,
        "/api/v1/namespaces",
        Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fin"}})),
    )
    .await;
    assert_eq!(namespace.status, 201);
    let mut cleared = namespace.body_json();
    cleared["spec"]["finalizers"] = json!([]);
    let updated = call(&api, Method::Put, "/api/v1/namespaces/fin", Some(cleared)).await;
    assert_eq!(updated.status, 200);
    assert_eq!(updated.body_json(), namespace.body_json());
}

/// A create's managedFields leave status out where status is a subresource
/// (compared with the zero value's status), keep it for nodes, and leave
/// the object's own status as it was. A named namespace's name label is a
/// default (`SetDefaults_Namespace`), recorded as the creator's as real
/// clusters show it; a generated name's is set by the strategy: nobody's.
#[tokio::test]
async fn create_managed_fields_leave_status_out_and_own_the_defaulted_name_label() {
    let api = api().await;
    let fields = |response: &ApiResponse| {
        let object = response.body_json();
        let entries = object["metadata"]["managedFields"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(entries.len(), 1, "{object}");
        (object, entries[0]["fieldsV1"].clone())
    };
    let node = call(
        &api,
        Method::Post,
        "/api/v1/nodes",
        Some(
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"capacity": {"cpu": "2"}}}),
        ),
    )
    .await;
    assert_eq!(node.status, 201);
    let (object, set) = fields(&node);
    assert_eq!(object["status"]["capacity"]["cpu"], "2");
    assert!(set["f:status"]["f:capacity"]["f:cpu"].is_object(), "{set}");

    let service = call(
        &api,
        Method::Post,
        "/api/v1/namespaces/default/services",
        Some(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
            "spec": {"ports": [{"port": 80}]}, "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}})),
    )
    .await;
    assert_eq!(service.status, 201);
    let (_, set) = fields(&service);
    assert!(set.get("f:status").is_none(), "{set}");
    assert!(set["f:spec"]["f:ports"].is_object(), "{set}");

    let namespace = call(
        &api,
        Method::Post,
        "/api/v1/namespaces",
        Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}})),
    )
    .await;
    assert_eq!(namespace.status, 201);
    let (object, set) = fields(&namespace);
    assert_eq!(
        object["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "ns1"
    );
    assert_eq!(object["status"]["phase"], "Active");
    assert_eq!(
        set,
        json!({"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}})
    );
    let generated = call(
        &api,
        Method::Post,
        "/api/v1/namespaces",
        Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "ns-"}})),
    )
    .await;
    assert_eq!(generated.status, 201);
    let (object, set) = fields(&generated);
    let name = object["metadata"]["name"].as_str().unwrap();
    assert_eq!(
        object["metadata"]["labels"]["kubernetes.io/metadata.name"],
        name
    );
    assert_eq!(set, json!({"f:metadata": {"f:generateName": {}}}));
}
