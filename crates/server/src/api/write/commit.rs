//! The commit step: the bytes an object is stored as (bounded as kube on
//! etcd bounds them), the store transaction, and store errors as kube
//! reports them.

use ferrokube_store::{BackendError, Committed, StoreError, Txn};
use serde_json::Value;

use crate::api::context::Api;
use crate::api::conversion;
use crate::api::target::Target;
use crate::object;
use crate::status::{Result, Status};

/// Store errors as kube reports them.
pub fn map_store_error(target: &Target<'_>, name: &str, error: StoreError) -> Status {
    match error {
        StoreError::Backend(BackendError::PreconditionFailed {
            actual: Some(_), ..
        }) => Status::conflict(&target.group_resource(), name),
        StoreError::Backend(BackendError::PreconditionFailed { actual: None, .. }) => {
            Status::not_found(&target.group_resource(), name)
        }
        StoreError::RevisionTimeout { .. } => Status::timeout(error.to_string(), 1),
        other => Status::internal(other),
    }
}

/// The bytes `object` is stored as under `key` (a custom resource at its
/// storage version: `crd/conversion.rs`, or its conversion webhook through
/// `api/conversion.rs`; a built-in kind at its storage version:
/// `versions`), or the Status kube-apiserver
/// on etcd answers when they exceed what one etcd request may carry
/// (`object::bounds`), on every backend alike.
pub async fn stored_bytes(
    api: &Api,
    target: &Target<'_>,
    key: &str,
    object: &Value,
) -> Result<bytes::Bytes> {
    let object = conversion::storage_form(api, target, object).await?;
    // Built-in kinds served in several versions: at their storage version
    // (kube decodes the body into the internal type, which the storage
    // codec encodes at the storage version).
    let object = crate::versions::storage_form(object.as_ref(), target.resource)
        .map_err(|error| Status::bad_request(error.to_string()))?;
    let object = object.as_ref();
    let storage_version = target
        .custom
        .as_deref()
        .and_then(|custom| custom.storage_api_version());
    let bytes = object::storage_bytes_as(object, storage_version);
    if !object::bounds::fits_one_request(key, bytes.len()) {
        return Err(object::bounds::too_large());
    }
    Ok(bytes)
}

/// The bytes `object` is stored as under `key` when they are its own JSON
/// (what `serde_json::to_vec` writes: no conversion, no other version, no
/// resourceVersion to drop), bounded as [`stored_bytes`] bounds them;
/// `None` when the stored form differs. A write computes them before
/// validating admission so that validating webhooks are sent the same
/// bytes: one encoding of the object for both.
pub fn own_json_bytes(
    target: &Target<'_>,
    key: &str,
    object: &Value,
) -> Option<Result<bytes::Bytes>> {
    if object::metadata(object).is_some_and(|metadata| metadata.contains_key("resourceVersion")) {
        return None;
    }
    // A custom resource at another version than its storage version is
    // converted (by its webhook, or only its apiVersion) before storing.
    if let Some(custom) = target.custom.as_deref() {
        let storage = custom.storage_api_version.as_str();
        if !storage.is_empty() && object.get("apiVersion").and_then(Value::as_str) != Some(storage)
        {
            return None;
        }
    }
    if !matches!(
        crate::versions::storage_form(object, target.resource),
        Ok(std::borrow::Cow::Borrowed(_))
    ) {
        return None;
    }
    let bytes = bytes::Bytes::from(serde_json::to_vec(object).ok()?);
    if !object::bounds::fits_one_request(key, bytes.len()) {
        return Some(Err(object::bounds::too_large()));
    }
    Some(Ok(bytes))
}

pub async fn commit(api: &Api, txn: Txn) -> std::result::Result<Committed, StoreError> {
    api.store.commit(txn).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::Verb;
    use serde_json::json;

    fn target(group: &str, plural: &str) -> Target<'static> {
        let resource = crate::registry::builtin_resources()
            .iter()
            .find(|r| r.group == group && r.plural == plural)
            .unwrap_or_else(|| panic!("{group} {plural}"));
        Target {
            resource,
            namespace: Some("ns"),
            name: Some("x"),
            subresource: None,
            verb: Verb::Create,
            custom: None,
        }
    }

    /// The bytes validating webhooks are sent are the stored ones exactly,
    /// and only where the stored form is the object itself.
    #[test]
    fn own_json_bytes_are_the_stored_bytes_or_none() {
        let configmaps = target("", "configmaps");
        let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "namespace": "ns"}, "data": {"k": "\"v\"\n"}});
        let own = own_json_bytes(&configmaps, "/registry/configmaps/ns/x", &configmap)
            .expect("stored as is")
            .expect("fits");
        assert_eq!(own, object::storage_bytes_as(&configmap, None));
        assert_eq!(own, serde_json::to_vec(&configmap).unwrap());
        // A resourceVersion is dropped when stored: not the object's own JSON.
        let mut versioned = configmap.clone();
        versioned["metadata"]["resourceVersion"] = json!("7");
        assert!(own_json_bytes(&configmaps, "/k", &versioned).is_none());
        // An HPA at autoscaling/v1 is stored at autoscaling/v2.
        let hpas = target("autoscaling", "horizontalpodautoscalers");
        let hpa = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "x", "namespace": "ns"}});
        assert!(own_json_bytes(&hpas, "/k", &hpa).is_none());
        // Too large for one request: kube's 413 as stored_bytes answers it.
        let mut big = configmap.clone();
        big["data"]["k"] = json!("x".repeat(4 * 1024 * 1024));
        let status = own_json_bytes(&configmaps, "/k", &big)
            .expect("stored as is")
            .expect_err("too large");
        assert_eq!(status.code, object::bounds::too_large().code);
    }
}
