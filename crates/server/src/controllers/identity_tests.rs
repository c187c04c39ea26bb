//! The controllers act under their own identities, authorized by the
//! bootstrap policy's roles as in kube, not as `system:masters`.

use std::sync::Arc;

use serde_json::json;

use super::Client;
use crate::api::{Api, ContinueKey};
use crate::object::ObjectCodec;
use crate::route::Method;
use ferrokube_store::{Backend, LocalBackend, MemoryDisk, Store};

async fn api_with_policy() -> Arc<Api> {
    let backend: Arc<dyn Backend> =
        Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    let store = Store::open(backend, ObjectCodec).await.expect("store");
    let api = Api::new(
        store,
        "127.0.0.1:6443".into(),
        ContinueKey::random().expect("os random source"),
    );
    crate::bootstrap::ensure_system_namespaces(&api)
        .await
        .expect("namespaces");
    crate::rbac_policy::ensure_rbac_policy(&api)
        .await
        .expect("bootstrap policy");
    api
}

#[tokio::test]
async fn controllers_may_do_what_their_bootstrap_role_allows_and_nothing_else() {
    let api = api_with_policy().await;
    let service_accounts = Client::controller(api.clone(), "service-account-controller");
    let created = service_accounts
        .request(
            Method::Post,
            "/api/v1/namespaces/default/serviceaccounts",
            "application/json",
            Some(&json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "made"}})),
        )
        .await;
    assert!(created.is_ok(), "{created:?}");
    let refused = service_accounts
        .request(
            Method::Get,
            "/api/v1/namespaces/default/secrets",
            "application/json",
            None,
        )
        .await
        .expect_err("system:controller:service-account-controller may not list secrets");
    assert_eq!(refused.code, 403);
    assert_eq!(
        refused.message,
        r#"secrets is forbidden: User "system:serviceaccount:kube-system:service-account-controller" cannot list resource "secrets" in API group "" in the namespace "default""#
    );

    // The legacy token controller is kube-controller-manager itself.
    let tokens = Client::controller_manager(api.clone(), "tokens-controller");
    let listed = tokens
        .request(
            Method::Get,
            "/api/v1/namespaces/default/secrets",
            "application/json",
            None,
        )
        .await;
    assert!(listed.is_ok(), "{listed:?}");
    let refused = tokens
        .request(
            Method::Delete,
            "/api/v1/namespaces/default/configmaps/x",
            "application/json",
            None,
        )
        .await
        .expect_err("system:kube-controller-manager may not delete configmaps");
    assert_eq!(refused.code, 403);
}
