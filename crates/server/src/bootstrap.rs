//! Objects that exist from the first start: the system namespaces
//! (kube-apiserver's `SystemNamespaces`: default, kube-system, kube-public,
//! kube-node-lease).

use serde_json::json;

use crate::api::Api;
use crate::object;

pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error("creating namespace {name}: {message}")]
    Namespace { name: String, message: String },
}

pub async fn ensure_system_namespaces(api: &Api) -> Result<(), BootstrapError> {
    for name in SYSTEM_NAMESPACES {
        let key = format!("/registry/namespaces/{name}");
        if api.store.snapshot().get(&key).is_some() {
            continue;
        }
        let namespace = json!({
            "kind": "Namespace",
            "apiVersion": "v1",
            "metadata": {
                "name": name,
                "uid": uuid::Uuid::new_v4().to_string(),
                "creationTimestamp": object::now_rfc3339(),
                "labels": {"kubernetes.io/metadata.name": name},
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        });
        let txn = ferrokube_store::Txn::single(ferrokube_store::Op::Put {
            key,
            value: object::storage_bytes(&namespace),
            expect: ferrokube_store::Expect::Absent,
        });
        match api.store.commit(txn).await {
            Ok(_) => {}
            // Another replica created it first.
            Err(ferrokube_store::StoreError::Backend(
                ferrokube_store::BackendError::PreconditionFailed { .. },
            )) => {}
            Err(error) => {
                return Err(BootstrapError::Namespace {
                    name: name.to_string(),
                    message: error.to_string(),
                })
            }
        }
    }
    Ok(())
}
