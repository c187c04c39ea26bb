//! Admission: the step of the write pipeline between decoding and
//! validation where kube runs its admission plugins. Today that is
//! NamespaceLifecycle (`plugin/pkg/admission/namespace/lifecycle`): writes
//! into a namespace that does not exist are 404, creates in a namespace
//! being terminated are 403. Deletes are not admitted here (kube always
//! allows them).

use serde_json::Value;

use crate::api::context::Api;
use crate::api::target::{key_for, Target};
use crate::status::{Cause, GroupResource, Result, Status};

/// The operation being admitted, as kube's `admission.Operation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
}

/// NamespaceLifecycle's `Admit` for a write of `name` under `target`.
pub fn namespace_lifecycle(
    api: &Api,
    target: &Target<'_>,
    operation: Operation,
    name: &str,
) -> Result<()> {
    let Some(namespace) = target.namespace.filter(|_| target.resource.namespaced) else {
        return Ok(());
    };
    let namespaces = GroupResource::new("", "namespaces");
    let key = api
        .registry
        .lookup("", "v1", "namespaces")
        .map(|resource| key_for(resource, None, namespace))
        .unwrap_or_else(|| format!("/registry/namespaces/{namespace}"));
    let snapshot = api.store.snapshot();
    let Some(entry) = snapshot.get(&key) else {
        return Err(Status::not_found(&namespaces, namespace));
    };
    if operation != Operation::Create {
        return Ok(());
    }
    // Most namespaces are not terminating: a byte search of the served JSON
    // rules that out without parsing the namespace on every create.
    let may_terminate = entry
        .object
        .json()
        .is_none_or(|json| memchr::memmem::find(json, b"\"Terminating\"").is_some());
    let terminating = may_terminate
        && entry
            .object
            .value()
            .as_ref()
            .and_then(|value| value.pointer("/status/phase"))
            .and_then(Value::as_str)
            == Some("Terminating");
    if !terminating {
        return Ok(());
    }
    let mut status = Status::forbidden(
        &target.group_resource(),
        name,
        &format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        ),
    );
    if let Some(details) = status.details.as_mut() {
        details.causes.push(Cause {
            reason: "NamespaceTerminating".into(),
            message: format!("namespace {namespace} is being terminated"),
            field: "metadata.namespace".into(),
        });
    }
    Err(status)
}
