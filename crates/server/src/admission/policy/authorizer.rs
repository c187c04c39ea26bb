//! The `authorizer` of a policy's CEL expressions
//! (`apiserver/pkg/cel/library/authz.go`, bound by
//! `admission/plugin/cel/activation.go`): each `check(verb)` asks the
//! server's authorizer about the request's user, or the service account
//! named by `authorizer.serviceAccount(ns, name)`, with kube's attributes
//! (`APIVersion: "*"` for resource checks).

use std::borrow::Cow;
use std::sync::Arc;

use crate::admission::Attributes;
use crate::authn::UserInfo;
use crate::authz::Authorizer;
use crate::cel_env::authz::{CheckRequest, Checker, Decision, ResourceCheck};

/// Answers checks for one request.
#[derive(Debug)]
pub struct RequestChecker {
    authorizer: Authorizer,
    user: UserInfo,
}

impl RequestChecker {
    pub fn shared(authorizer: &Authorizer, attributes: &Attributes<'_>) -> Arc<dyn Checker> {
        Arc::new(RequestChecker {
            authorizer: authorizer.clone(),
            user: attributes.user.cloned().unwrap_or_default(),
        })
    }
}

/// `authorizer.requestResource`: what the request is for.
pub fn request_resource(attributes: &Attributes<'_>) -> ResourceCheck {
    ResourceCheck {
        group: attributes.resource.group.clone(),
        resource: attributes.resource.name.clone(),
        subresource: attributes.subresource.to_string(),
        namespace: attributes.namespace.to_string(),
        name: attributes.name.to_string(),
        ..ResourceCheck::default()
    }
}

/// `serviceaccount.UserInfo(ns, name, "")`.
fn service_account_user(namespace: &str, name: &str) -> UserInfo {
    UserInfo {
        name: format!("system:serviceaccount:{namespace}:{name}"),
        groups: vec![
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{namespace}"),
        ],
        ..UserInfo::default()
    }
}

impl Checker for RequestChecker {
    fn check(&self, request: &CheckRequest) -> Decision {
        let account;
        let user = match &request.service_account {
            Some((namespace, name)) => {
                account = service_account_user(namespace, name);
                &account
            }
            None => &self.user,
        };
        let attributes = match &request.resource {
            Some(resource) => crate::authz::Attributes {
                user,
                verb: &request.verb,
                resource_request: true,
                path: "",
                api_group: &resource.group,
                api_version: "*",
                resource: &resource.resource,
                subresource: &resource.subresource,
                namespace: &resource.namespace,
                name: Cow::Borrowed(&resource.name),
            },
            None => crate::authz::Attributes::non_resource(user, &request.verb, &request.path),
        };
        let decision = self.authorizer.authorize(&attributes);
        Decision {
            allowed: decision.allowed(),
            reason: decision.reason,
            error: None,
        }
    }
}
