//! `POST /api/v1/namespaces/{ns}/pods/{name}/binding` and the legacy
//! `POST /api/v1/namespaces/{ns}/bindings`: what a scheduler sends to put a
//! pod on a node (`pkg/registry/core/pod/storage/storage.go` `BindingREST`,
//! `LegacyBindingREST`, `setPodNodeAndMetadata`, `assignPod`).
//!
//! Like kube's, the pod is changed by a storage-level guaranteed update,
//! not through the pod's update strategy: `spec.nodeName`, the binding's
//! annotations and the `PodScheduled=True` condition, nothing else
//! (no validation of the pod, no managedFields entry).

use std::sync::Arc;

use ferrokube_store::{BackendError, Expect, Op, StoreError, Txn};
use serde_json::{json, Map, Value};

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::options::WriteOptions;
use super::target::{check_type, Target};
use super::write::decode::{decode, Decoded};
use super::write::validate::settle_namespace;
use super::write::{self, commit};
use crate::admission::Operation;
use crate::object;
use crate::pod_condition::update_pod_condition;
use crate::status::{GroupResource, Result, Status};

/// Attempts of the guaranteed update before giving up on a busy pod.
const MAX_RETRIES: usize = 16;

/// Whether the request is the `pods/{name}/binding` subresource (else the
/// legacy `bindings` resource).
fn is_subresource(target: &Target<'_>) -> bool {
    target.subresource == Some("binding")
}

pub(super) async fn create(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let options = WriteOptions::parse(request, None)?;
    let Decoded {
        object: mut binding,
        warnings,
    } = decode(
        api,
        request,
        target,
        "Binding",
        "v1",
        options.field_validation,
    )?;
    check_type(&mut binding, "v1", "Binding")?;
    if !binding.get("metadata").is_some_and(Value::is_object) {
        binding["metadata"] = json!({});
    }
    let subresource = is_subresource(target);
    if let Some(metadata) = object::metadata_mut(&mut binding) {
        // `handlers/create.go`: system fields are wiped unless the storage
        // keeps them on a subresource create (BindingREST does, for its
        // uid and resourceVersion preconditions).
        if !subresource {
            for field in [
                "creationTimestamp",
                "uid",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "selfLink",
            ] {
                metadata.remove(field);
            }
        }
    }
    settle_namespace(target, &mut binding)?;
    let name = object::name(&binding).to_string();
    if subresource && target.name.unwrap_or_default() != name {
        return Err(Status::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    // The create handler's mutating admission, then `createValidation` in
    // `BindingREST.Create`, as for any create of the `pods/binding` or
    // `bindings` resource.
    let caller = options.caller(request);
    write::admission::mutate(
        api,
        target,
        Operation::Create,
        Some(&mut binding),
        None,
        &caller,
    )
    .await?;
    validate_binding(&binding)?;
    write::admission::validate(
        api,
        target,
        Operation::Create,
        Some(&binding),
        None,
        &caller,
    )
    .await?;
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let pods = api
        .registry
        .load()
        .lookup("", "v1", "pods")
        .ok_or_else(|| Status::internal("pods are not served"))?;
    let pod_target = Target {
        resource: pods,
        namespace: target.namespace,
        name: Some(&name),
        subresource: None,
        verb: target.verb,
        custom: None,
    };
    let assignment = Assignment {
        uid: object::meta_str(&binding, "uid").to_string(),
        resource_version: object::resource_version(&binding).to_string(),
        node,
        annotations: object::metadata(&binding)
            .and_then(|metadata| metadata.get("annotations"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    };
    assign_pod(api, &pod_target, &name, &assignment, options.dry_run).await?;
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    });
    let mut warnings = warnings;
    warnings.extend(caller.take_warnings());
    Ok(ApiResponse::json(201, &status).with_warnings(warnings))
}

/// `ValidatePodBinding`. kube returns these as a plain aggregate error, not
/// an API status, so they reach the client as `ErrorToAPIStatus` makes
/// them: 500 with no reason and the aggregate's text.
fn validate_binding(binding: &Value) -> Result<()> {
    let mut errors = Vec::new();
    let kind = binding
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        errors.push(crate::status::FieldError::not_supported(
            "target.kind",
            kind,
            &["Node", "<empty>"],
        ));
    }
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if node.is_empty() {
        errors.push(crate::status::FieldError::required("target.name", ""));
    }
    match errors.len() {
        0 => Ok(()),
        1 => Err(Status::unknown(errors[0].to_string())),
        _ => Err(Status::unknown(format!(
            "[{}]",
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// What a binding asks of its pod.
struct Assignment {
    /// Preconditions (only the subresource keeps them).
    uid: String,
    resource_version: String,
    node: String,
    annotations: Map<String, Value>,
}

/// `genericregistry.NamespaceKeyFunc`'s checks of the pod's name.
fn check_key_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Status::bad_request("Name parameter required."));
    }
    let problems = crate::names::path_segment(name);
    if !problems.is_empty() {
        return Err(Status::bad_request(format!(
            "Name parameter invalid: {}: {}",
            crate::go::strconv::quote(name),
            problems.join(";")
        )));
    }
    Ok(())
}

/// `assignPod`: the guaranteed update of `setPodNodeAndMetadata`, its
/// errors as `InterpretGetError`/`InterpretUpdateError` and the
/// `pods/binding` Conflict make them.
async fn assign_pod(
    api: &Api,
    pods: &Target<'_>,
    name: &str,
    assignment: &Assignment,
    dry_run: bool,
) -> Result<()> {
    check_key_name(name)?;
    let key = pods.key(name);
    let pods_resource = GroupResource::new("", "pods");
    let binding_resource = GroupResource::new("", "pods/binding");
    for _ in 0..MAX_RETRIES {
        let snapshot = api.store.snapshot();
        let Some((revision, mut pod)) = pods.read_current(&snapshot, &key)? else {
            return Err(Status::not_found(&pods_resource, name));
        };
        // `storage.Preconditions.Check`: uid, then resourceVersion; an
        // InvalidObj error that InterpretUpdateError makes a Conflict.
        let uid = object::meta_str(&pod, "uid");
        if !assignment.uid.is_empty() && assignment.uid != uid {
            let why = format!(
                "Precondition failed: UID in precondition: {}, UID in object meta: {uid}",
                assignment.uid
            );
            return Err(Status::conflict_because(&pods_resource, name, &why));
        }
        if !assignment.resource_version.is_empty()
            && assignment.resource_version != revision.to_string()
        {
            let why = format!(
                "Precondition failed: ResourceVersion in precondition: {}, ResourceVersion in object meta: {revision}",
                assignment.resource_version
            );
            return Err(Status::conflict_because(&pods_resource, name, &why));
        }
        let refuse = |why: String| Err(Status::conflict_because(&binding_resource, name, &why));
        if !object::meta_str(&pod, "deletionTimestamp").is_empty() {
            return refuse(format!(
                "pod {name} is being deleted, cannot be assigned to a host"
            ));
        }
        let current_node = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !current_node.is_empty() {
            return refuse(format!(
                "pod {name} is already assigned to node {}",
                crate::go::strconv::quote(current_node)
            ));
        }
        if pod
            .pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_some_and(|gates| !gates.is_empty())
        {
            return refuse(format!("pod {name} has non-empty .spec.schedulingGates"));
        }
        bind(&mut pod, assignment);
        if dry_run {
            return Ok(());
        }
        let txn = Txn::single(Op::Put {
            key: key.clone(),
            value: commit::stored_bytes(api, pods, &key, &pod).await?,
            expect: Expect::ModRevision(revision),
        });
        match commit::commit(api, txn).await {
            Ok(_) => return Ok(()),
            // GuaranteedUpdate re-reads and tries again after losing a race.
            Err(StoreError::Backend(BackendError::PreconditionFailed {
                actual: Some(_), ..
            })) => continue,
            Err(StoreError::Backend(BackendError::PreconditionFailed { actual: None, .. })) => {
                return Err(Status::not_found(&pods_resource, name))
            }
            Err(other) => return Err(commit::map_store_error(pods, name, other)),
        }
    }
    Err(Status::conflict(&pods_resource, name))
}

/// The pod as bound: node, the binding's annotations merged in, and
/// `PodScheduled=True` (`podutil.UpdatePodCondition`).
fn bind(pod: &mut Value, assignment: &Assignment) {
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("nodeName".into(), Value::String(assignment.node.clone()));
    } else {
        pod["spec"] = json!({"nodeName": assignment.node});
    }
    if !assignment.annotations.is_empty() {
        if let Some(metadata) = object::metadata_mut(pod) {
            let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
            if !annotations.is_object() {
                *annotations = json!({});
            }
            if let Some(annotations) = annotations.as_object_mut() {
                for (key, value) in &assignment.annotations {
                    annotations.insert(key.clone(), value.clone());
                }
            }
        }
    }
    let now = crate::go::time::now_rfc3339();
    update_pod_condition(pod, "PodScheduled", "True", None, &now);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_validation_is_kubes_aggregate() {
        let missing = validate_binding(&json!({"target": {}})).unwrap_err();
        assert_eq!((missing.code, missing.reason), (500, ""));
        assert_eq!(missing.message, "target.name: Required value");
        let both = validate_binding(&json!({"target": {"kind": "Pod"}})).unwrap_err();
        assert_eq!(
            both.message,
            "[target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\", target.name: Required value]"
        );
        assert!(validate_binding(&json!({"target": {"kind": "Node", "name": "n"}})).is_ok());
        assert!(validate_binding(&json!({"target": {"name": "n"}})).is_ok());
    }

    #[test]
    fn binding_sets_node_annotations_and_the_scheduled_condition() {
        let mut pod = json!({
            "metadata": {"name": "p", "annotations": {"a": "1"}},
            "spec": {"containers": []},
            "status": {"conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "lastProbeTime": null, "lastTransitionTime": "2020-01-01T00:00:00Z"},
            ]},
        });
        let assignment = Assignment {
            uid: String::new(),
            resource_version: String::new(),
            node: "n1".into(),
            annotations: json!({"b": "2"}).as_object().cloned().unwrap_or_default(),
        };
        bind(&mut pod, &assignment);
        assert_eq!(pod["spec"]["nodeName"], "n1");
        assert_eq!(pod["metadata"]["annotations"], json!({"a": "1", "b": "2"}));
        let condition = &pod["status"]["conditions"][0];
        assert_eq!(condition["status"], "True");
        assert!(condition.get("reason").is_none());
        assert_ne!(condition["lastTransitionTime"], "2020-01-01T00:00:00Z");
    }

    #[test]
    fn pod_names_are_checked_as_key_segments() {
        assert_eq!(
            check_key_name("").unwrap_err().message,
            "Name parameter required."
        );
        assert_eq!(
            check_key_name("a/b").unwrap_err().message,
            "Name parameter invalid: \"a/b\": may not contain '/'"
        );
        assert!(check_key_name("ok").is_ok());
    }
}
