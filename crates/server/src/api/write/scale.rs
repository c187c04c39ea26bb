//! The `scale` subresource's write: autoscaling/v1 `Scale` views of
//! deployments, replicasets, statefulsets and replicationcontrollers
//! (`pkg/registry/apps/deployment/storage/storage.go` `ScaleREST`), and a
//! Scale written back into its parent through the update pipeline.

use serde_json::{json, Value};

use super::ownership::Ownership;
use super::update::update_object;
use crate::admission::{Caller, Operation};
use crate::api::context::Api;
use crate::api::target::Target;
use crate::api::typed::TypedObject;
use crate::crd::ScalePaths;
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

/// `parseReplicasPath`: `.spec.replicas` → `["spec", "replicas"]`.
fn path_fields(path: &str) -> Vec<&str> {
    path.trim_start_matches('.').split('.').collect()
}

fn nested<'a>(value: &'a Value, fields: &[&str]) -> Option<&'a Value> {
    fields
        .iter()
        .try_fold(value, |current, field| current.get(*field))
}

/// A custom resource's Scale (`scaleFromCustomResource`): replicas and the
/// selector read from the CRD's paths, missing ones as zero and empty.
fn custom_scale(paths: &ScalePaths, parent: &Value, metadata: Value) -> Value {
    let replicas = |path: &str| {
        nested(parent, &path_fields(path))
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };
    let selector = paths
        .label_selector
        .as_deref()
        .and_then(|path| nested(parent, &path_fields(path)))
        .and_then(Value::as_str)
        .unwrap_or_default();
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": replicas(&paths.spec_replicas)},
        "status": {"replicas": replicas(&paths.status_replicas), "selector": selector},
    })
}

pub fn scale_of(target: &Target<'_>, parent: &Value) -> Value {
    let metadata = object::metadata(parent).cloned().unwrap_or_default();
    let pick = |field: &str| metadata.get(field).cloned().unwrap_or(Value::Null);
    if let Some(paths) = target
        .custom
        .as_ref()
        .and_then(|custom| custom.scale.as_ref())
    {
        let metadata = json!({
            "name": pick("name"),
            "namespace": pick("namespace"),
            "uid": pick("uid"),
            "resourceVersion": pick("resourceVersion"),
            "creationTimestamp": pick("creationTimestamp"),
        });
        return custom_scale(paths, parent, metadata);
    }
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

/// Sets `value` at `fields`, creating the maps on the way (a non-map on the
/// way is replaced, as `SetNestedField` does).
fn set_nested(object: &mut Value, fields: &[&str], value: Value) {
    let Some((last, parents)) = fields.split_last() else {
        return;
    };
    let mut current = object;
    for field in parents {
        if !current.is_object() {
            *current = json!({});
        }
        current = &mut current[*field];
    }
    if !current.is_object() {
        *current = json!({});
    }
    current[*last] = value;
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
    caller: &Caller,
) -> Result<Value> {
    let name = target.name.unwrap_or_default();
    // Admission sees the Scale (kind autoscaling/v1 Scale, subresource
    // `scale`), as kube's scale REST does; the parent's update is then not
    // admitted again.
    let old_scale = scale_of(target, &parent);
    let mut scale = scale.clone();
    super::admission::mutate(
        api,
        target,
        Operation::Update,
        Some(&mut scale),
        Some(&old_scale),
        caller,
    )
    .await?;
    super::admission::validate(
        api,
        target,
        Operation::Update,
        Some(&scale),
        Some(&old_scale),
        caller,
    )
    .await?;
    let scale = &scale;
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
    match target
        .custom
        .as_ref()
        .and_then(|custom| custom.scale.as_ref())
    {
        // `unstructured.SetNestedField` at the CRD's specReplicasPath.
        Some(paths) => set_nested(
            &mut parent,
            &path_fields(&paths.spec_replicas),
            json!(replicas),
        ),
        None => {
            if let Some(spec) = parent.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("replicas".into(), json!(replicas));
            }
        }
    }
    if let Some(metadata) = object::metadata_mut(&mut parent) {
        if precondition.is_empty() {
            metadata.remove("resourceVersion");
        } else {
            metadata.insert("resourceVersion".into(), Value::String(precondition));
        }
    }
    let parent_target = target.parent();
    // The parent as stored, with replicas from a Scale that decoded (int32).
    let parent = TypedObject::server_edit(parent);
    let admitted = caller.already_admitted();
    let (_, stored) = update_object(api, &parent_target, parent, dry_run, owner, &admitted).await?;
    for warning in admitted.take_warnings() {
        caller.warn(warning);
    }
    Ok(scale_of(target, &stored))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_resources_scale_at_their_crd_paths() {
        let paths = ScalePaths {
            spec_replicas: ".spec.size.wanted".into(),
            status_replicas: ".status.size".into(),
            label_selector: Some(".status.selector".into()),
        };
        let mut parent = json!({
            "spec": {"size": {"wanted": 2}},
            "status": {"size": 1, "selector": "app=demo"},
        });
        let scale = custom_scale(&paths, &parent, json!({"name": "w"}));
        assert_eq!(scale["spec"]["replicas"], 2);
        assert_eq!(
            scale["status"],
            json!({"replicas": 1, "selector": "app=demo"})
        );
        set_nested(&mut parent, &path_fields(&paths.spec_replicas), json!(5));
        assert_eq!(parent["spec"]["size"]["wanted"], 5);
        let mut empty = json!({"spec": "not a map"});
        set_nested(&mut empty, &["spec", "replicas"], json!(3));
        assert_eq!(empty, json!({"spec": {"replicas": 3}}));
        let missing = custom_scale(&paths, &json!({}), json!({}));
        assert_eq!(missing["spec"]["replicas"], 0);
        assert_eq!(missing["status"], json!({"replicas": 0, "selector": ""}));
    }
}
