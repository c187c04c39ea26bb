//! Admission in the write pipeline: the [`Attributes`] of a write built from
//! its target (kind, resource, subresource, name, namespace) and the
//! caller's user, options and dry-run, handed to the chain of
//! `crate::admission` — [`mutate`] between decoding and the strategy,
//! [`validate`] after validation, before the commit (kube's
//! `handlers/create.go`, `update.go`, `patch.go`, `delete.go` and
//! `rest.AdmissionToValidateObjectFunc`).

use serde_json::Value;

use crate::admission::{Attributes, Caller, GroupVersionName, Operation};
use crate::api::context::Api;
use crate::api::target::Target;
use crate::status::Result;

/// The attributes of a write of `name` under `target`.
pub fn attributes<'a>(
    target: &'a Target<'_>,
    operation: Operation,
    name: &'a str,
    old_object: Option<&'a Value>,
    caller: &'a Caller,
) -> Attributes<'a> {
    let resource = target.resource;
    let subresource = target.subresource.unwrap_or_default();
    // kube's `scope.Kind` (installer.go `GetResourceKind`): a subresource's
    // own kind where it has one (`GroupVersionKindProvider`, else its
    // storage's object): TokenRequest for `serviceaccounts/token`, Eviction
    // for `pods/eviction`, Binding for `pods/binding`, the parent's for
    // `status`.
    let kind = match resource.subresource(subresource) {
        _ if subresource == "scale" => GroupVersionName::new("autoscaling", "v1", "Scale"),
        Some(def) if !subresource.is_empty() => {
            GroupVersionName::new(def.group, def.version, def.kind)
        }
        _ => GroupVersionName::new(resource.group, resource.version, resource.kind),
    };
    let is_namespace = resource.group.is_empty() && resource.plural == "namespaces";
    // kube's RequestInfo: a Namespace's namespace is its own name.
    let namespace = if is_namespace {
        name
    } else if resource.namespaced {
        target.namespace.unwrap_or_default()
    } else {
        ""
    };
    Attributes {
        operation,
        kind,
        resource: GroupVersionName::new(resource.group, resource.version, resource.plural),
        subresource,
        name,
        namespace,
        old_object,
        options: caller.options_for(operation),
        dry_run: caller.dry_run,
        user: caller.user.as_ref(),
    }
}

/// The mutating stage for a write of `object` (`None`: a delete).
pub async fn mutate(
    api: &Api,
    target: &Target<'_>,
    operation: Operation,
    object: Option<&mut Value>,
    old_object: Option<&Value>,
    caller: &Caller,
) -> Result<()> {
    if caller.admitted {
        return Ok(());
    }
    let name = match (&object, old_object) {
        (Some(object), _) => crate::object::name(object).to_string(),
        (None, Some(old)) => crate::object::name(old).to_string(),
        (None, None) => target.name.unwrap_or_default().to_string(),
    };
    let attributes = attributes(target, operation, &name, old_object, caller);
    api.admission.mutate(&attributes, object, caller).await
}

/// The validating stage for a write of `object` (`None`: a delete).
pub async fn validate(
    api: &Api,
    target: &Target<'_>,
    operation: Operation,
    object: Option<&Value>,
    old_object: Option<&Value>,
    caller: &Caller,
) -> Result<()> {
    validate_encoded(api, target, operation, (object, None), old_object, caller).await
}

/// [`validate`] of an object whose JSON (`serde_json::to_vec`) the write
/// has already: validating webhooks are sent those bytes.
pub async fn validate_encoded(
    api: &Api,
    target: &Target<'_>,
    operation: Operation,
    (object, object_json): (Option<&Value>, Option<&[u8]>),
    old_object: Option<&Value>,
    caller: &Caller,
) -> Result<()> {
    if caller.admitted {
        return Ok(());
    }
    let name = object
        .or(old_object)
        .map(crate::object::name)
        .unwrap_or_else(|| target.name.unwrap_or_default())
        .to_string();
    let attributes = attributes(target, operation, &name, old_object, caller);
    api.admission
        .validate(&attributes, object, object_json, caller)
        .await
}

/// A write's answer with the warnings and audit annotations admission
/// added: kube sends them with errors too (a denial's `Warning` headers, its
/// audit event's annotations), so a refused write is answered here as its
/// `Status` with them (JSON: the media type every client accepts for
/// errors).
pub fn with_warnings(
    result: Result<crate::api::exchange::ApiResponse>,
    caller: &Caller,
) -> Result<crate::api::exchange::ApiResponse> {
    let warnings = caller.take_warnings();
    let audit_annotations = caller.take_audit_annotations();
    let mut response = match result {
        Ok(response) => response.with_warnings(warnings),
        Err(status) if warnings.is_empty() && audit_annotations.is_empty() => return Err(status),
        Err(status) => crate::api::exchange::ApiResponse::error(&status).with_warnings(warnings),
    };
    response.audit_annotations = audit_annotations;
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::Verb;

    fn kind_of(group: &str, plural: &str, subresource: Option<&str>) -> (String, String, String) {
        let resource = crate::registry::builtin_resources()
            .iter()
            .find(|r| r.group == group && r.plural == plural)
            .unwrap_or_else(|| panic!("{group} {plural}"));
        let target = Target {
            resource,
            namespace: Some("ns"),
            name: Some("x"),
            subresource,
            verb: Verb::Create,
            custom: None,
        };
        let caller = Caller::new(None, false, Value::Null);
        let attributes = attributes(&target, Operation::Create, "x", None, &caller);
        let kind = attributes.kind;
        (kind.group, kind.version, kind.name)
    }

    fn gvk(group: &str, version: &str, kind: &str) -> (String, String, String) {
        (group.into(), version.into(), kind.into())
    }

    /// installer.go `GetResourceKind`: the kind admission sees.
    #[test]
    fn subresources_are_admitted_with_their_own_kind() {
        assert_eq!(kind_of("", "pods", None), gvk("", "v1", "Pod"));
        assert_eq!(kind_of("", "pods", Some("status")), gvk("", "v1", "Pod"));
        assert_eq!(
            kind_of("", "pods", Some("eviction")),
            gvk("policy", "v1", "Eviction")
        );
        assert_eq!(
            kind_of("", "pods", Some("binding")),
            gvk("", "v1", "Binding")
        );
        assert_eq!(
            kind_of("", "serviceaccounts", Some("token")),
            gvk("authentication.k8s.io", "v1", "TokenRequest")
        );
        assert_eq!(
            kind_of("apps", "deployments", Some("scale")),
            gvk("autoscaling", "v1", "Scale")
        );
    }
}
