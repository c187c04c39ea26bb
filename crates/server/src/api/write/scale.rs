//! The `scale` subresource's write: autoscaling/v1 `Scale` views of
//! deployments, replicasets, statefulsets and replicationcontrollers
//! (`pkg/registry/apps/deployment/storage/storage.go` `ScaleREST`), and a
//! Scale written back into its parent through the update pipeline.

use serde_json::{json, Value};

use super::ownership::Ownership;
use super::update::update_object;
use crate::api::context::Api;
use crate::api::target::Target;
use crate::api::typed::TypedObject;
use crate::object;
use crate::status::{FieldError, Result, Status};

/// `metav1.FormatLabelSelector` of a LabelSelector, or of a plain map (replication controllers).
fn selector_string(selector: Option<&Value>, plain_map: bool) -> String {
    let Some(selector) = selector else {
        return String::new();
    };
    let mut parts = Vec::new();
    let labels = if plain_map {
        selector.as_object()
    } else {
        selector.get("matchLabels").and_then(Value::as_object)
    };
    if let Some(labels) = labels {
        let mut pairs: Vec<(&String, &Value)> = labels.iter().collect();
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        for (key, value) in pairs {
            parts.push(format!("{key}={}", value.as_str().unwrap_or("")));
        }
    }
    if !plain_map {
        for expression in selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = expression.get("key").and_then(Value::as_str).unwrap_or("");
            let values: Vec<&str> = expression
                .get("values")
                .and_then(Value::as_array)
                .map(|values| values.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match expression
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or("")
            {
                "In" => parts.push(format!("{key} in ({})", values.join(","))),
                "NotIn" => parts.push(format!("{key} notin ({})", values.join(","))),
                "Exists" => parts.push(key.to_string()),
                "DoesNotExist" => parts.push(format!("!{key}")),
                _ => {}
            }
        }
    }
    parts.join(",")
}

pub fn scale_of(target: &Target<'_>, parent: &Value) -> Value {
    let metadata = object::metadata(parent).cloned().unwrap_or_default();
    let pick = |field: &str| metadata.get(field).cloned().unwrap_or(Value::Null);
    let plain_map = target.resource.kind == "ReplicationController";
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": pick("name"),
            "namespace": pick("namespace"),
            "uid": pick("uid"),
            "resourceVersion": pick("resourceVersion"),
            "creationTimestamp": pick("creationTimestamp"),
        },
        "spec": {"replicas": parent.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(1)},
        "status": {
            "replicas": parent.pointer("/status/replicas").and_then(Value::as_i64).unwrap_or(0),
            "selector": selector_string(parent.pointer("/spec/selector"), plain_map),
        },
    })
}

/// Write a Scale's `spec.replicas` into its parent; the Scale's resourceVersion
/// (the parent's) is the precondition. Returns the new Scale.
pub async fn apply_scale(
    api: &Api,
    target: &Target<'_>,
    mut parent: Value,
    scale: &Value,
    dry_run: bool,
    owner: &Ownership,
) -> Result<Value> {
    let name = target.name.unwrap_or_default();
    let replicas = match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(value) => value
            .as_i64()
            .filter(|replicas| *replicas >= 0)
            .ok_or_else(|| {
                let error = FieldError::invalid(
                    "spec.replicas",
                    &value.to_string(),
                    "must be greater than or equal to 0",
                );
                Status::invalid("autoscaling", "Scale", name, &[error])
            })?,
    };
    let precondition = object::resource_version(scale).to_string();
    if let Some(spec) = parent.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("replicas".into(), json!(replicas));
    }
    if let Some(metadata) = object::metadata_mut(&mut parent) {
        if precondition.is_empty() {
            metadata.remove("resourceVersion");
        } else {
            metadata.insert("resourceVersion".into(), Value::String(precondition));
        }
    }
    let parent_target = Target {
        subresource: None,
        ..*target
    };
    // The parent as stored, with replicas from a Scale that decoded (int32).
    let parent = TypedObject::server_edit(parent);
    let (_, stored) = update_object(api, &parent_target, parent, dry_run, owner).await?;
    Ok(scale_of(target, &stored))
}
