//! Webhook conversion on the request path: every place a custom resource
//! whose CRD converts by `Webhook` changes version calls the webhook here,
//! asynchronously, before the synchronous readers (`representation.rs`
//! `Reading`, `crd::conversion`) see it, which then serve it as it is.
//! CRDs with strategy `None` pass through untouched (their byte fast path
//! stays in `crd/conversion.rs`).
//!
//! - [`response`]: a handler's object, stored object or list page at the
//!   request's version (a list's items that need it in one review, as
//!   kube's `webhookConverter.Convert` converts an `UnstructuredList`);
//! - [`read_current`]: the base of a read-modify-write at the request's version;
//! - [`storage_form`]: what a write stores, at the storage version;
//! - [`stored_value`]: one watch event's object.
//!
//! Failures answer as kube's: the converter's plain error, which
//! `ErrorToAPIStatus` turns into a 500 without a reason.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use super::context::Api;
use super::exchange::{ApiResponse, Payload};
use super::target::Target;
use crate::crd::conversion::default_as_stored;
use crate::crd::webhook::{self, Batch, WebhookConversion};
use crate::crd::{webhook_client, CustomVersion};
use crate::object::{self, StoredObject};
use crate::status::{Result, Status};

/// The CRD facts and webhook of a request whose objects the webhook converts.
fn webhook_of(custom: Option<&Arc<CustomVersion>>) -> Option<(&CustomVersion, &WebhookConversion)> {
    let custom = custom?;
    let webhook = custom.webhook.as_deref()?;
    Some((custom, webhook))
}

fn api_version(value: &Value) -> &str {
    value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `objects` at `desired`: those at another version are sent to the webhook
/// in one ConversionReview (none sent when all are there already); `gvk`
/// names the converted object or list in errors.
async fn convert(
    api: &Api,
    webhook: &WebhookConversion,
    mut objects: Vec<Value>,
    desired: &str,
    gvk: &str,
    batch: Batch,
) -> Result<Vec<Value>> {
    let pending: Vec<usize> = (0..objects.len())
        .filter(|&index| api_version(&objects[index]) != desired)
        .collect();
    if pending.is_empty() {
        return Ok(objects);
    }
    let failed =
        |error: String| Status::unknown(format!("conversion webhook for {gvk} failed: {error}"));
    let version = webhook.review_version().map_err(Status::unknown)?;
    let sent: Vec<Value> = pending
        .iter()
        .map(|&index| objects[index].clone())
        .collect();
    let uid = crate::uid::new_v4().to_string();
    let review = webhook::review_request(version, &uid, desired, &sent);
    let resolved = {
        let snapshot = api.store.snapshot();
        webhook_client::resolve(webhook.endpoint.as_ref(), |key| {
            snapshot.get(key).and_then(|entry| entry.object.value())
        })
    }
    .map_err(failed)?;
    let answer = webhook_client::post(&resolved, &webhook.ca_bundle, &review)
        .await
        .map_err(|error| {
            tracing::debug!(gvk, %error, "conversion webhook call failed");
            failed(error)
        })?;
    let converted = webhook::converted_objects(version, &uid, &answer).map_err(failed)?;
    let accepted = webhook::accept_converted(&sent, converted, desired, gvk, batch)
        .map_err(Status::unknown)?;
    for (index, object) in pending.into_iter().zip(accepted) {
        objects[index] = object;
    }
    Ok(objects)
}

/// One object (read from storage, defaults applied) at `desired`.
async fn convert_one(
    api: &Api,
    webhook: &WebhookConversion,
    value: Value,
    desired: &str,
) -> Result<Value> {
    let gvk = webhook::gvk_text(
        api_version(&value),
        value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    );
    let mut converted = convert(api, webhook, vec![value], desired, &gvk, Batch::Object).await?;
    converted.pop().ok_or_else(|| {
        Status::unknown(format!(
            "conversion webhook for {gvk} failed, no objects returned"
        ))
    })
}

/// The current object of `key` at the request's version: `Target::read_current`,
/// then the webhook for an object stored at another version.
pub async fn read_current(
    api: &Api,
    target: &Target<'_>,
    snapshot: &ferrokube_store::Snapshot<StoredObject>,
    key: &str,
) -> Result<Option<(i64, Value)>> {
    let current = target.read_current(snapshot, key)?;
    let Some((custom, webhook)) = webhook_of(target.custom.as_ref()) else {
        return Ok(current);
    };
    match current {
        Some((revision, mut value)) => {
            default_as_stored(&mut value, custom);
            let value = convert_one(api, webhook, value, &custom.api_version).await?;
            Ok(Some((revision, value)))
        }
        None => Ok(None),
    }
}

/// `object` as a write stores it: at the storage version, through the
/// webhook when it is at another (kube's storage codec encodes to the
/// storage version). `write/commit.rs` `stored_bytes` then stores it as is.
pub async fn storage_form<'v>(
    api: &Api,
    target: &Target<'_>,
    object: &'v Value,
) -> Result<Cow<'v, Value>> {
    let Some((custom, webhook)) = webhook_of(target.custom.as_ref()) else {
        return Ok(Cow::Borrowed(object));
    };
    let storage = custom.storage_api_version.as_str();
    if storage.is_empty() || api_version(object) == storage {
        return Ok(Cow::Borrowed(object));
    }
    convert_one(api, webhook, object.clone(), storage)
        .await
        .map(Cow::Owned)
}

/// A stored object (a watch event's) at `custom`'s version; `None` for a
/// corrupt object, which is not sent.
pub async fn stored_value(
    api: &Api,
    custom: Option<&Arc<CustomVersion>>,
    object: &StoredObject,
) -> Result<Option<Value>> {
    let Some((custom, webhook)) = webhook_of(custom) else {
        return Ok(None);
    };
    let Some(mut value) = object.value() else {
        return Ok(None);
    };
    default_as_stored(&mut value, custom);
    convert_one(api, webhook, value, &custom.api_version)
        .await
        .map(Some)
}

/// Whether watch events of this request go through [`stored_value`].
pub fn converts_by_webhook(custom: Option<&Arc<CustomVersion>>) -> bool {
    webhook_of(custom).is_some()
}

/// A handler's outcome at the request's version: a stored object, the items
/// of a list page, or an object (or deletecollection's list) of the kind.
pub async fn response(
    api: &Api,
    target: &Target<'_>,
    outcome: Result<ApiResponse>,
) -> Result<ApiResponse> {
    let Some((custom, webhook)) = webhook_of(target.custom.as_ref()) else {
        return outcome;
    };
    let mut response = outcome?;
    let Some(payload) = response.payload.take() else {
        return Ok(response);
    };
    let desired = custom.api_version.as_str();
    let list_gvk = webhook::gvk_text(desired, &target.resource.list_kind());
    let payload = match payload {
        Payload::Stored { object, revision } => match object.value() {
            Some(mut value) => {
                default_as_stored(&mut value, custom);
                let value = convert_one(api, webhook, value, desired).await?;
                Payload::Stored {
                    object: Arc::new(object::stored_from_value(&value)),
                    revision,
                }
            }
            None => Payload::Stored { object, revision },
        },
        Payload::List(mut list) => {
            list.items = convert_items(api, custom, webhook, list.items, &list_gvk).await?;
            Payload::List(list)
        }
        Payload::Value(mut value) => {
            let kind = value
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let group = target.resource.group;
            let of_group = api_version(&value)
                .rsplit_once('/')
                .is_some_and(|(found, _)| found == group);
            if of_group && kind == target.resource.kind {
                default_as_stored(&mut value, custom);
                value = convert_one(api, webhook, value, desired).await?;
            } else if of_group && kind == target.resource.list_kind() {
                if let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) {
                    let mut taken = std::mem::take(items);
                    for item in &mut taken {
                        default_as_stored(item, custom);
                    }
                    *items =
                        convert(api, webhook, taken, desired, &list_gvk, Batch::ListItems).await?;
                }
            }
            Payload::Value(value)
        }
    };
    response.payload = Some(payload);
    Ok(response)
}

/// A list page's items at the request's version, in one review; items the
/// read leaves unchanged keep their cached encodings.
async fn convert_items(
    api: &Api,
    custom: &CustomVersion,
    webhook: &WebhookConversion,
    items: Vec<Arc<StoredObject>>,
    list_gvk: &str,
) -> Result<Vec<Arc<StoredObject>>> {
    // Corrupt items stay as they are (the readers leave them out).
    let read: Vec<Option<Value>> = items
        .iter()
        .map(|item| {
            item.value().map(|mut value| {
                default_as_stored(&mut value, custom);
                value
            })
        })
        .collect();
    let readable: Vec<Value> = read.iter().flatten().cloned().collect();
    let mut converted = convert(
        api,
        webhook,
        readable,
        &custom.api_version,
        list_gvk,
        Batch::ListItems,
    )
    .await?
    .into_iter();
    let mut out = Vec::with_capacity(items.len());
    for (item, read) in items.into_iter().zip(read) {
        let Some(value) = read.and_then(|_| converted.next()) else {
            out.push(item);
            continue;
        };
        if item.value().as_ref() == Some(&value) {
            out.push(item);
        } else {
            out.push(Arc::new(object::stored_from_value(&value)));
        }
    }
    Ok(out)
}
