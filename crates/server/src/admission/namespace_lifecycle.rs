//! NamespaceLifecycle (`apiserver/pkg/admission/plugin/namespace/lifecycle`
//! `Lifecycle.Admit`): the immortal namespaces cannot be deleted, writes
//! into a namespace that does not exist are 404, creates in a namespace
//! being terminated are 403 (cause `NamespaceTerminating`); deletes of other
//! objects and writes of Namespaces themselves are always allowed.

use serde_json::Value;

use super::attributes::{Attributes, Operation};
use crate::object::ObjectStore;
use crate::status::{Cause, GroupResource, Result, Status};

/// The namespaces kube-apiserver never lets go (`immortalNamespaces`).
const IMMORTAL: &[&str] = &["default", "kube-system", "kube-public"];

/// `localsubjectaccessreviews` is never refused (that would leak whether a
/// namespace exists).
fn is_access_review(attributes: &Attributes<'_>) -> bool {
    attributes.resource.group == "authorization.k8s.io"
        && attributes.resource.name == "localsubjectaccessreviews"
}

/// `admission.NewForbidden`: the name from the attributes, else the object's
/// name or generateName, else `Unknown` (`extractResourceName`).
pub fn forbidden(attributes: &Attributes<'_>, object: Option<&Value>, why: &str) -> Status {
    let resource = GroupResource::new(&attributes.resource.group, &attributes.resource.name);
    let name = if !attributes.name.is_empty() {
        attributes.name.to_string()
    } else {
        let meta = |field: &str| {
            object
                .and_then(|object| object.pointer(&format!("/metadata/{field}")))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (name, generate_name) = (meta("name"), meta("generateName"));
        if !name.is_empty() {
            name
        } else if !generate_name.is_empty() {
            generate_name
        } else {
            "Unknown".to_string()
        }
    };
    Status::forbidden(&resource, &name, why)
}

/// `Lifecycle.Admit`.
pub fn admit(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<()> {
    let operation = attributes.operation;
    if operation == Operation::Delete
        && attributes.is_namespace()
        && IMMORTAL.contains(&attributes.name)
    {
        return Err(forbidden(
            attributes,
            object,
            "this namespace may not be deleted",
        ));
    }
    let namespace = attributes.namespace;
    if namespace.is_empty() || attributes.is_namespace() {
        return Ok(());
    }
    if operation == Operation::Delete || is_access_review(attributes) {
        return Ok(());
    }
    let snapshot = store.snapshot();
    let Some(entry) = snapshot.get(&format!("/registry/namespaces/{namespace}")) else {
        return Err(Status::not_found(
            &GroupResource::new("", "namespaces"),
            namespace,
        ));
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
    let mut status = forbidden(
        attributes,
        object,
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
