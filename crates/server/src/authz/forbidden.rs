//! The 403 a refused request gets: `endpoints/handlers/responsewriters/errors.go`
//! (`Forbidden`, `forbiddenMessage`, the HTML sanitizer) wrapped by
//! apimachinery's `NewForbidden`.

use super::Attributes;
use crate::go::strconv::quote;
use crate::status::{GroupResource, Status};

/// `forbiddenMessage`: who cannot do what, where.
pub fn forbidden_message(attributes: &Attributes<'_>) -> String {
    let user = quote(&attributes.user.name);
    if !attributes.resource_request {
        return format!(
            "User {user} cannot {} path {}",
            attributes.verb,
            quote(attributes.path)
        );
    }
    let resource = if attributes.subresource.is_empty() {
        attributes.resource.to_string()
    } else {
        format!("{}/{}", attributes.resource, attributes.subresource)
    };
    let what = format!(
        "User {user} cannot {} resource {} in API group {}",
        attributes.verb,
        quote(&resource),
        quote(attributes.api_group)
    );
    if attributes.namespace.is_empty() {
        format!("{what} at the cluster scope")
    } else {
        format!("{what} in the namespace {}", quote(attributes.namespace))
    }
}

/// Avoid emitting errors that look like valid HTML (`sanitizer`).
fn sanitize(message: &str) -> String {
    message
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `responsewriters.Forbidden`: the `Status` of a request the authorizers
/// did not allow; `reason` (the authorizers' reason, not sanitized, as
/// upstream) is appended after a colon when there is one.
pub fn forbidden(attributes: &Attributes<'_>, reason: &str) -> Status {
    let message = sanitize(&forbidden_message(attributes));
    let why = if reason.is_empty() {
        message
    } else {
        format!("{message}: {reason}")
    };
    let resource = GroupResource::new(attributes.api_group, attributes.resource);
    Status::forbidden(&resource, &attributes.name, &why)
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::authn::UserInfo;

    fn jane() -> UserInfo {
        UserInfo {
            name: "jane".into(),
            uid: String::new(),
            groups: vec!["system:authenticated".into()],
            extra: Default::default(),
        }
    }

    fn resource<'a>(
        user: &'a UserInfo,
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        subresource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> Attributes<'a> {
        Attributes {
            verb,
            resource_request: true,
            api_group: group,
            api_version: "v1",
            resource,
            subresource,
            namespace,
            name: Cow::Borrowed(name),
            ..Attributes::non_resource(user, verb, "/")
        }
    }

    #[test]
    fn forbidden_statuses_are_worded_as_kube() {
        let user = jane();
        let cases = [
            (
                resource(&user, "list", "", "configmaps", "", "dev", ""),
                "",
                r#"configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "dev""#,
            ),
            (
                resource(&user, "get", "apps", "deployments", "scale", "dev", "web"),
                "",
                r#"deployments.apps "web" is forbidden: User "jane" cannot get resource "deployments/scale" in API group "apps" in the namespace "dev""#,
            ),
            (
                resource(&user, "list", "", "nodes", "", "", ""),
                "",
                r#"nodes is forbidden: User "jane" cannot list resource "nodes" in API group "" at the cluster scope"#,
            ),
            (
                Attributes::non_resource(&user, "get", "/foo"),
                "",
                r#"forbidden: User "jane" cannot get path "/foo""#,
            ),
            (
                resource(&user, "list", "", "pods", "", "dev", ""),
                r#"RBAC: role.rbac.authorization.k8s.io "gone" not found"#,
                r#"pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "dev": RBAC: role.rbac.authorization.k8s.io "gone" not found"#,
            ),
            (
                Attributes::non_resource(&user, "get", "/<b>"),
                "Everything is forbidden.",
                r#"forbidden: User "jane" cannot get path "/&lt;b&gt;": Everything is forbidden."#,
            ),
        ];
        for (attributes, reason, message) in cases {
            let status = forbidden(&attributes, reason);
            assert_eq!(status.code, 403);
            assert_eq!(status.reason, "Forbidden");
            assert_eq!(status.message, message);
            let details = status.details.expect("details");
            assert_eq!(details.kind, attributes.resource);
            assert_eq!(details.group, attributes.api_group);
            assert_eq!(details.name, attributes.name);
        }
    }
}
