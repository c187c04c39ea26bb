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

pub async fn commit(api: &Api, txn: Txn) -> std::result::Result<Committed, StoreError> {
    api.store.commit(txn).await
}
