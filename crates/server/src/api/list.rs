//! LIST of a collection: selectors, `limit` and `continue`.
//!
//! Every page of a chunked list is served from the same snapshot: the first
//! page pins its snapshot under its revision for the history window, and the
//! continue token names that revision (`storage/etcd3` continue semantics:
//! `{"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"}`, base64).

use std::sync::Arc;

use base64::Engine;
use bytes::{BufMut, BytesMut};
use serde_json::{json, Value};

use super::get::OBJECT_REPRESENTATIONS;
use super::resource::Target;
use super::{Api, ApiRequest, ApiResponse};
use crate::negotiate::{negotiate, Representation};
use crate::object;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::{Result, Status};
use crate::table;

/// Filters of a list or delete-collection request.
pub struct Selection {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Selection {
    pub fn from_request(request: &ApiRequest, target: &Target<'_>) -> Result<Self> {
        let labels = LabelSelector::parse(request.query.get("labelSelector").unwrap_or(""))
            .map_err(|error| Status::bad_request(error.to_string()))?;
        let fields = FieldSelector::parse(request.query.get("fieldSelector").unwrap_or(""))
            .map_err(|error| Status::bad_request(error.to_string()))?;
        fields
            .validate_for(target.resource.group, target.resource.kind)
            .map_err(|error| Status::bad_request(error.to_string()))?;
        Ok(Selection { labels, fields })
    }

    pub fn is_everything(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    pub fn matches(&self, target: &Target<'_>, value: &Value) -> bool {
        self.matches_resource(target.resource, value)
    }

    pub fn matches_resource(&self, resource: &crate::registry::ResourceDef, value: &Value) -> bool {
        self.labels.matches(object::labels(value))
            && self.fields.matches(resource.group, resource.kind, value)
    }
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct ContinueToken {
    v: String,
    rv: i64,
    start: String,
}

pub fn encode_continue(revision: i64, start_after_key: &str) -> String {
    let token = ContinueToken {
        v: "meta.k8s.io/v1".into(),
        rv: revision,
        start: format!("{start_after_key}\u{0}"),
    };
    base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&token).unwrap_or_default())
}

/// (revision, key to start after) from a token; 400 as kube for a malformed one.
pub fn decode_continue(token: &str) -> Result<(i64, String)> {
    let malformed = || Status::bad_request(format!("continue key is not valid: {token}"));
    let raw = base64::engine::general_purpose::STANDARD
        .decode(token)
        .map_err(|_| malformed())?;
    let token: ContinueToken = serde_json::from_slice(&raw).map_err(|_| malformed())?;
    if token.v != "meta.k8s.io/v1" || token.rv <= 0 {
        return Err(malformed());
    }
    let start = token
        .start
        .strip_suffix('\u{0}')
        .unwrap_or(&token.start)
        .to_string();
    Ok((token.rv, start))
}

pub(super) async fn list(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let representation = negotiate(request.header("accept"), OBJECT_REPRESENTATIONS)?;
    let selection = Selection::from_request(request, target)?;
    let limit = request
        .query
        .int("limit")?
        .filter(|limit| *limit > 0)
        .map(|limit| limit as usize);
    let prefix = target.prefix();
    let (snapshot, after) = match request
        .query
        .get("continue")
        .filter(|token| !token.is_empty())
    {
        Some(token) => {
            let (revision, start) = decode_continue(token)?;
            let snapshot = api.pinned_snapshot(revision).ok_or_else(|| {
                Status::gone("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
            })?;
            (snapshot, Some(start))
        }
        None => (api.store.snapshot(), None),
    };
    let mut items: Vec<&object::StoredObject> = Vec::new();
    let mut last_key: Option<&str> = None;
    let mut more = false;
    let mut remaining = 0usize;
    for (key, entry) in snapshot.range(&prefix, after.as_deref()) {
        let Some(value) = entry.object.value() else {
            continue;
        };
        if !selection.matches(target, value) {
            continue;
        }
        if limit.is_some_and(|limit| items.len() >= limit) {
            more = true;
            if !selection.is_everything() {
                break;
            }
            remaining += 1;
            continue;
        }
        items.push(&entry.object);
        last_key = Some(key.as_str());
    }
    let continue_token = match (more, last_key) {
        (true, Some(key)) => {
            api.pin_snapshot(snapshot.clone());
            Some(encode_continue(snapshot.revision, key))
        }
        _ => None,
    };
    let remaining = (more && selection.is_everything()).then_some(remaining);
    match representation {
        Representation::Table(version) => {
            let values: Vec<Value> = items
                .iter()
                .filter_map(|item| item.value().cloned())
                .collect();
            let mut body = table::table(
                target.resource,
                version,
                &values,
                snapshot.revision,
                continue_token.as_deref(),
                request,
            );
            if let (Some(remaining), Some(metadata)) = (
                remaining,
                body.get_mut("metadata").and_then(Value::as_object_mut),
            ) {
                metadata.insert("remainingItemCount".into(), json!(remaining));
            }
            Ok(ApiResponse::represented(200, representation, &body))
        }
        _ => Ok(ApiResponse::bytes(
            200,
            "application/json",
            list_json(
                target,
                snapshot.revision,
                continue_token.as_deref(),
                remaining,
                &items,
            ),
        )),
    }
}

/// `{"kind":"XList","apiVersion":..,"metadata":{..},"items":[..]}` by concatenating
/// each item's cached JSON: no item is re-encoded.
pub fn list_json(
    target: &Target<'_>,
    revision: i64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    items: &[&object::StoredObject],
) -> bytes::Bytes {
    let mut metadata = serde_json::Map::new();
    metadata.insert("resourceVersion".into(), json!(revision.to_string()));
    if let Some(token) = continue_token {
        metadata.insert("continue".into(), json!(token));
    }
    if let Some(remaining) = remaining {
        metadata.insert("remainingItemCount".into(), json!(remaining));
    }
    let head = json!({
        "kind": target.resource.list_kind(),
        "apiVersion": target.resource.api_version(),
        "metadata": metadata,
    });
    let head = serde_json::to_vec(&head).unwrap_or_default();
    let bodies: Vec<bytes::Bytes> = items.iter().filter_map(|item| item.item_body()).collect();
    let size: usize = bodies.iter().map(|body| body.len() + 2).sum();
    let mut out = BytesMut::with_capacity(head.len() + size + 16);
    out.put_slice(&head[..head.len().saturating_sub(1)]);
    out.put_slice(b",\"items\":[");
    for (index, body) in bodies.iter().enumerate() {
        if index > 0 {
            out.put_u8(b',');
        }
        out.put_u8(b'{');
        out.put_slice(body);
    }
    out.put_slice(b"]}");
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let token = encode_continue(42, "/registry/configmaps/default/b");
        assert_eq!(
            decode_continue(&token).ok(),
            Some((42, "/registry/configmaps/default/b".to_string()))
        );
        for bad in [
            "",
            "!!!",
            "e30=",
            &base64::engine::general_purpose::STANDARD
                .encode(b"{\"v\":\"x\",\"rv\":1,\"start\":\"\"}"),
        ] {
            assert_eq!(
                decode_continue(bad).map_err(|status| status.code).err(),
                Some(400),
                "{bad}"
            );
        }
    }
}
