//! Escalation prevention on RBAC writes, as kube's RBAC storages do it
//! (`pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased/storage.go`,
//! `pkg/registry/rbac/escalation_check.go`): a Role or ClusterRole may only
//! grant what its writer holds (or the writer may `escalate` it), a binding
//! only a role whose rules its writer holds (or the writer may `bind` it);
//! `system:masters` is never checked. Runs on create, update, patch and
//! apply before the write pipeline (kube checks before the store's own
//! preparation and validation).

use std::borrow::Cow;

use serde_json::Value;

use crate::api::context::Api;
use crate::api::target::Target;
use crate::authn::{UserInfo, SYSTEM_MASTERS};
use crate::authz::escalation::{escalation_error, full_authority};
use crate::authz::rbac::{PolicyRule, RoleRefError};
use crate::authz::Attributes;
use crate::object;
use crate::status::{GroupResource, Result, Status};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// Refuses the write of `object` through `target` by `user` when it would
/// grant more than `user` holds.
pub fn confirm_no_escalation(
    api: &Api,
    user: Option<&UserInfo>,
    target: &Target<'_>,
    object: &Value,
) -> Result<()> {
    if target.resource.group != RBAC_GROUP || target.subresource.is_some() {
        return Ok(());
    }
    // `EscalationAllowed`: no user (in-process callers) or system:masters.
    let Some(user) = user else {
        return Ok(());
    };
    if user.groups.iter().any(|group| group == SYSTEM_MASTERS) {
        return Ok(());
    }
    let name = object::name(object);
    let namespace = target.namespace.unwrap_or_default();
    let old = api
        .store
        .snapshot()
        .get(&target.key(name))
        .and_then(|entry| entry.object.value());
    let resource = target.group_resource();
    match target.resource.plural {
        "roles" | "clusterroles" => {
            if escalate_authorized(api, user, target) {
                return Ok(());
            }
            if old
                .as_ref()
                .is_some_and(|old| only_mutating_gc_fields(object, old))
            {
                return Ok(());
            }
            confirm(api, user, namespace, &resource, name, &rules_of(object))?;
            let aggregates =
                has_aggregation_rule(object) || old.as_ref().is_some_and(has_aggregation_rule);
            if target.resource.plural == "clusterroles" && aggregates {
                confirm(api, user, namespace, &resource, name, &full_authority()).map_err(
                    |_| {
                        Status::forbidden(
                            &resource,
                            name,
                            "must have cluster-admin privileges to use the aggregationRule",
                        )
                    },
                )?;
            }
            Ok(())
        }
        "rolebindings" | "clusterrolebindings" => {
            if old
                .as_ref()
                .is_some_and(|old| only_mutating_gc_fields(object, old))
            {
                return Ok(());
            }
            let text = |member: &str| {
                object
                    .pointer(&format!("/roleRef/{member}"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            };
            let (kind, role, role_group) = (text("kind"), text("name"), text("apiGroup"));
            let binding_namespace = if target.resource.plural == "rolebindings" {
                namespace
            } else {
                ""
            };
            if bind_authorized(api, user, kind, role, role_group, binding_namespace) {
                return Ok(());
            }
            let rules = api
                .authorizer
                .rbac()
                .role_rules(kind, role, binding_namespace)
                .map_err(role_ref_status)?;
            confirm(api, user, namespace, &resource, name, &rules)
        }
        _ => Ok(()),
    }
}

/// `ConfirmNoEscalation` as a 403 on the written object.
fn confirm(
    api: &Api,
    user: &UserInfo,
    namespace: &str,
    resource: &GroupResource,
    name: &str,
    rules: &[PolicyRule],
) -> Result<()> {
    let (owner_rules, errors) = api.authorizer.rbac().rules_for(user, namespace);
    let errors: Vec<String> = errors.iter().map(RoleRefError::registry_message).collect();
    match escalation_error(user, &owner_rules, &errors, rules) {
        None => Ok(()),
        Some(message) => Err(Status::forbidden(resource, name, &message)),
    }
}

/// A missing role as the registry's getter answers it.
fn role_ref_status(error: RoleRefError) -> Status {
    match error {
        RoleRefError::RoleNotFound(name) => {
            Status::not_found(&GroupResource::new(RBAC_GROUP, "roles"), &name)
        }
        RoleRefError::ClusterRoleNotFound(name) => {
            Status::not_found(&GroupResource::new(RBAC_GROUP, "clusterroles"), &name)
        }
        unsupported @ RoleRefError::UnsupportedKind(_) => Status::internal(unsupported),
    }
}

/// `RoleEscalationAuthorized`: the `escalate` verb on the written role.
fn escalate_authorized(api: &Api, user: &UserInfo, target: &Target<'_>) -> bool {
    let attributes = Attributes {
        verb: "escalate",
        resource_request: true,
        api_group: target.resource.group,
        api_version: "*",
        resource: target.resource.plural,
        namespace: target.namespace.unwrap_or_default(),
        name: Cow::Borrowed(target.name.unwrap_or_default()),
        ..Attributes::non_resource(user, "escalate", "")
    };
    api.authorizer.authorize_request(&attributes).allowed()
}

/// `BindingAuthorized`: the `bind` verb on the referenced role.
fn bind_authorized(
    api: &Api,
    user: &UserInfo,
    kind: &str,
    role: &str,
    role_group: &str,
    binding_namespace: &str,
) -> bool {
    let resource = match kind {
        "ClusterRole" => "clusterroles",
        "Role" => "roles",
        _ => return false,
    };
    let attributes = Attributes {
        verb: "bind",
        resource_request: true,
        api_group: role_group,
        resource,
        namespace: binding_namespace,
        name: Cow::Borrowed(role),
        ..Attributes::non_resource(user, "bind", "")
    };
    api.authorizer.authorize_request(&attributes).allowed()
}

fn rules_of(object: &Value) -> Vec<PolicyRule> {
    object
        .get("rules")
        .and_then(Value::as_array)
        .map(|rules| rules.iter().map(PolicyRule::from_json).collect())
        .unwrap_or_default()
}

/// `hasAggregationRule`: at least one cluster role selector.
fn has_aggregation_rule(object: &Value) -> bool {
    object
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
        .is_some_and(|selectors| !selectors.is_empty())
}

/// `IsOnlyMutatingGCFields`: the write changes nothing but owner
/// references, finalizers (and the fields the server keeps itself).
fn only_mutating_gc_fields(new: &Value, old: &Value) -> bool {
    let mut copied = new.clone();
    let Some(metadata) = copied.get_mut("metadata").and_then(Value::as_object_mut) else {
        return false;
    };
    for field in [
        "ownerReferences",
        "finalizers",
        "selfLink",
        "managedFields",
        "resourceVersion",
    ] {
        match old.pointer(&format!("/metadata/{field}")) {
            Some(value) => {
                metadata.insert(field.to_string(), value.clone());
            }
            None => {
                metadata.remove(field);
            }
        }
    }
    &copied == old
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn gc_only_updates_are_recognised() {
        let old = json!({"metadata": {"name": "r", "resourceVersion": "5", "finalizers": ["a"]}, "rules": []});
        let gc_only = json!({"metadata": {"name": "r", "finalizers": [], "ownerReferences": [{"uid": "x"}]}, "rules": []});
        assert!(only_mutating_gc_fields(&gc_only, &old));
        let widened =
            json!({"metadata": {"name": "r", "finalizers": ["a"]}, "rules": [{"verbs": ["*"]}]});
        assert!(!only_mutating_gc_fields(&widened, &old));
        let labelled = json!({"metadata": {"name": "r", "finalizers": ["a"], "labels": {"x": "y"}}, "rules": []});
        assert!(!only_mutating_gc_fields(&labelled, &old));
    }

    #[test]
    fn an_aggregation_rule_needs_a_selector() {
        assert!(has_aggregation_rule(
            &json!({"aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}})
        ));
        assert!(!has_aggregation_rule(
            &json!({"aggregationRule": {"clusterRoleSelectors": []}})
        ));
        assert!(!has_aggregation_rule(&json!({"rules": []})));
    }
}
