//! What an authorizer decides on: kube's `authorizer.AttributesRecord`
//! filled as `endpoints/filters/authorization.go` (`GetAuthorizerAttributes`)
//! fills it from `endpoints/request/requestinfo.go` (`NewRequestInfo`).
//!
//! Served requests take their attributes from the routed [`Endpoint`] (what
//! the handler will do), with RequestInfo's rules on top: a namespace object
//! is authorized in its own namespace, and a list or watch whose
//! `fieldSelector` pins `metadata.name` carries that name (so
//! `resourceNames` rules can allow single-object list/watch). Paths the
//! router does not serve are read with RequestInfo's parser itself, so an
//! unserved resource-shaped path is authorized as kube authorizes it.

use std::borrow::Cow;

use crate::authn::UserInfo;
use crate::query::Query;
use crate::route::{Endpoint, Method, ResourcePath, Verb};
use crate::selector::FieldSelector;

/// `authorizer.AttributesRecord` (without selectors, which RBAC ignores).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributes<'a> {
    pub user: &'a UserInfo,
    /// A kube verb (`get`, `list`, `watch`, `create`, …) for resource
    /// requests; the lowercase HTTP method for the others.
    pub verb: &'a str,
    pub resource_request: bool,
    /// The URL path (non-resource requests are authorized on it).
    pub path: &'a str,
    pub api_group: &'a str,
    pub api_version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    /// Empty for cluster-scoped resources and cluster-wide lists.
    pub namespace: &'a str,
    pub name: Cow<'a, str>,
}

impl<'a> Attributes<'a> {
    /// A non-resource request (`/healthz`, `/version`, `/apis`, …).
    pub fn non_resource(user: &'a UserInfo, verb: &'a str, path: &'a str) -> Attributes<'a> {
        Attributes {
            user,
            verb,
            resource_request: false,
            path,
            api_group: "",
            api_version: "",
            resource: "",
            subresource: "",
            namespace: "",
            name: Cow::Borrowed(""),
        }
    }

    /// The attributes of one request by `user`.
    pub fn of_request(
        user: &'a UserInfo,
        method: Method,
        path: &'a str,
        query: &'a Query,
        endpoint: &'a Endpoint,
    ) -> Attributes<'a> {
        match endpoint {
            Endpoint::Resource(resource) => Self::of_resource(user, path, query, resource),
            Endpoint::NotFound => request_info(user, method, path, query),
            _ => Self::non_resource(user, method_verb(method), path),
        }
    }

    fn of_resource(
        user: &'a UserInfo,
        path: &'a str,
        query: &'a Query,
        resource: &'a ResourcePath,
    ) -> Attributes<'a> {
        let mut name = Cow::Borrowed(resource.name.as_deref().unwrap_or_default());
        let namespace = match (&resource.namespace, resource.resource.as_str()) {
            (Some(namespace), _) => namespace.as_str(),
            // `/api/v1/namespaces/NAME[/status|/finalize]`: RequestInfo reads
            // NAME as the namespace too.
            (None, "namespaces") => resource.name.as_deref().unwrap_or_default(),
            (None, _) => "",
        };
        let collection_read = matches!(resource.verb, Verb::List | Verb::Watch);
        if collection_read && name.is_empty() && !watch_via_path(path) {
            if let Some(pinned) = pinned_name(query) {
                name = Cow::Owned(pinned);
            }
        }
        Attributes {
            user,
            verb: resource.verb.as_str(),
            resource_request: true,
            path,
            api_group: &resource.group,
            api_version: &resource.version,
            resource: &resource.resource,
            subresource: resource.subresource.as_deref().unwrap_or_default(),
            namespace,
            name,
        }
    }
}

/// A non-resource request's verb: the lowercase method.
fn method_verb(method: Method) -> &'static str {
    match method {
        Method::Get => "get",
        Method::Head => "head",
        Method::Post => "post",
        Method::Put => "put",
        Method::Patch => "patch",
        Method::Delete => "delete",
        // ferrokube does not keep other methods' names; they are served nowhere.
        Method::Other => "",
    }
}

/// Whether the verb came from the deprecated `/watch/` path prefix, whose
/// requests never take a name from a field selector.
fn watch_via_path(path: &str) -> bool {
    let mut parts = path.trim_matches('/').split('/');
    match parts.next() {
        Some("api") => parts.nth(1) == Some("watch"),
        Some("apis") => parts.nth(2) == Some("watch"),
        _ => false,
    }
}

/// The `metadata.name` a list's field selector requires, when it is a valid
/// path segment name (`requestinfo.go`; an unparsable selector gives none).
fn pinned_name(query: &Query) -> Option<String> {
    let selector = FieldSelector::parse(query.get("fieldSelector")?).ok()?;
    let name = selector.requires_exact_match("metadata.name")?;
    is_valid_path_segment_name(name).then(|| name.to_string())
}

/// `path.IsValidPathSegmentName`: not `.` or `..`, no `/` or `%`.
fn is_valid_path_segment_name(name: &str) -> bool {
    name != "." && name != ".." && !name.contains(['/', '%'])
}

/// `RequestInfoFactory.NewRequestInfo` for a path the router does not
/// serve: resource-shaped paths under `/api/VERSION/` and
/// `/apis/GROUP/VERSION/` are resource requests, the rest non-resource.
fn request_info<'a>(
    user: &'a UserInfo,
    method: Method,
    path: &'a str,
    query: &'a Query,
) -> Attributes<'a> {
    let non_resource = Attributes::non_resource(user, method_verb(method), path);
    let trimmed = path.trim_matches('/');
    let parts: Vec<&'a str> = if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed.split('/').collect()
    };
    if parts.len() < 3 {
        return non_resource;
    }
    let (api_group, rest) = match parts[0] {
        "api" => ("", &parts[1..]),
        "apis" if parts.len() >= 4 => (parts[1], &parts[2..]),
        _ => return non_resource,
    };
    let api_version = rest[0];
    let mut rest = &rest[1..];
    let verb = match rest.first() {
        Some(&special @ ("proxy" | "watch")) if rest.len() >= 2 => {
            rest = &rest[1..];
            special
        }
        // `/api/v1/watch` alone: RequestInfo fails and the request is
        // handled as the resource request it has parsed so far.
        Some(&("proxy" | "watch")) => "",
        _ => match method {
            Method::Post => "create",
            Method::Get | Method::Head => "get",
            Method::Put => "update",
            Method::Patch => "patch",
            Method::Delete => "delete",
            Method::Other => "",
        },
    };
    let mut namespace = "";
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        namespace = rest[1];
        if rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
            rest = &rest[2..];
        }
    }
    let mut attributes = Attributes {
        verb,
        resource_request: true,
        api_group,
        api_version,
        namespace,
        ..non_resource
    };
    if let Some(resource) = rest.first() {
        attributes.resource = resource;
    }
    if let Some(name) = rest.get(1) {
        attributes.name = Cow::Borrowed(name);
    }
    if verb != "proxy" {
        if let Some(subresource) = rest.get(2) {
            attributes.subresource = subresource;
        }
    }
    if attributes.name.is_empty() && attributes.verb == "get" {
        attributes.verb = if query.flag("watch") { "watch" } else { "list" };
        if let Some(pinned) = pinned_name(query) {
            attributes.name = Cow::Owned(pinned);
        }
    }
    if attributes.name.is_empty() && attributes.verb == "delete" {
        attributes.verb = "deletecollection";
    }
    attributes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::route;

    fn user() -> UserInfo {
        UserInfo {
            name: "jane".into(),
            uid: String::new(),
            groups: vec![],
            extra: Default::default(),
        }
    }

    /// (method, path?query) → (resource request, verb, group, version,
    /// resource, subresource, namespace, name).
    type Expected = (
        bool,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    );

    #[test]
    fn attributes_follow_kube_request_info() {
        let cases: Vec<(Method, &str, Expected)> = vec![
            (
                Method::Get,
                "/healthz",
                (false, "get", "", "", "", "", "", ""),
            ),
            (
                Method::Head,
                "/version",
                (false, "head", "", "", "", "", "", ""),
            ),
            (Method::Get, "/api", (false, "get", "", "", "", "", "", "")),
            (
                Method::Get,
                "/api/v1",
                (false, "get", "", "", "", "", "", ""),
            ),
            (
                Method::Get,
                "/apis/apps",
                (false, "get", "", "", "", "", "", ""),
            ),
            (
                Method::Get,
                "/apis/apps/v1",
                (false, "get", "", "", "", "", "", ""),
            ),
            (
                Method::Get,
                "/openapi/v3/apis/apps/v1",
                (false, "get", "", "", "", "", "", ""),
            ),
            (
                Method::Post,
                "/foo",
                (false, "post", "", "", "", "", "", ""),
            ),
            (
                Method::Get,
                "/api/v1/pods",
                (true, "list", "", "v1", "pods", "", "", ""),
            ),
            (
                Method::Get,
                "/api/v1/pods?watch=true",
                (true, "watch", "", "v1", "pods", "", "", ""),
            ),
            (
                Method::Get,
                "/api/v1/pods?watch=false",
                (true, "list", "", "v1", "pods", "", "", ""),
            ),
            (
                Method::Get,
                "/api/v1/watch/namespaces/dev/pods",
                (true, "watch", "", "v1", "pods", "", "dev", ""),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/dev/configmaps",
                (true, "list", "", "v1", "configmaps", "", "dev", ""),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/dev/configmaps?fieldSelector=metadata.name%3Dcm",
                (true, "list", "", "v1", "configmaps", "", "dev", "cm"),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/dev/configmaps?watch=1&fieldSelector=metadata.name%3D%3Dcm",
                (true, "watch", "", "v1", "configmaps", "", "dev", "cm"),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/dev/configmaps?fieldSelector=metadata.name!%3Dcm",
                (true, "list", "", "v1", "configmaps", "", "dev", ""),
            ),
            (
                Method::Get,
                "/api/v1/watch/namespaces/dev/configmaps?fieldSelector=metadata.name%3Dcm",
                (true, "watch", "", "v1", "configmaps", "", "dev", ""),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/dev/configmaps/cm",
                (true, "get", "", "v1", "configmaps", "", "dev", "cm"),
            ),
            (
                Method::Post,
                "/api/v1/namespaces/dev/configmaps",
                (true, "create", "", "v1", "configmaps", "", "dev", ""),
            ),
            (
                Method::Put,
                "/api/v1/namespaces/dev/configmaps/cm",
                (true, "update", "", "v1", "configmaps", "", "dev", "cm"),
            ),
            (
                Method::Patch,
                "/api/v1/namespaces/dev/configmaps/cm",
                (true, "patch", "", "v1", "configmaps", "", "dev", "cm"),
            ),
            (
                Method::Delete,
                "/api/v1/namespaces/dev/configmaps/cm",
                (true, "delete", "", "v1", "configmaps", "", "dev", "cm"),
            ),
            (
                Method::Delete,
                "/api/v1/namespaces/dev/configmaps",
                (
                    true,
                    "deletecollection",
                    "",
                    "v1",
                    "configmaps",
                    "",
                    "dev",
                    "",
                ),
            ),
            (
                Method::Get,
                "/apis/apps/v1/namespaces/dev/deployments/d/scale",
                (
                    true,
                    "get",
                    "apps",
                    "v1",
                    "deployments",
                    "scale",
                    "dev",
                    "d",
                ),
            ),
            (
                Method::Get,
                "/api/v1/namespaces",
                (true, "list", "", "v1", "namespaces", "", "", ""),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/dev",
                (true, "get", "", "v1", "namespaces", "", "dev", "dev"),
            ),
            (
                Method::Put,
                "/api/v1/namespaces/dev/finalize",
                (
                    true,
                    "update",
                    "",
                    "v1",
                    "namespaces",
                    "finalize",
                    "dev",
                    "dev",
                ),
            ),
            (
                Method::Get,
                "/api/v1/nodes/n1",
                (true, "get", "", "v1", "nodes", "", "", "n1"),
            ),
            // Not served by ferrokube, authorized as kube parses them.
            (
                Method::Get,
                "/api/v1/namespaces/dev/pods/p/proxy/x",
                (true, "get", "", "v1", "pods", "proxy", "dev", "p"),
            ),
            (
                Method::Get,
                "/api/v1/proxy/namespaces/dev/pods/p/x",
                (true, "proxy", "", "v1", "pods", "", "dev", "p"),
            ),
            (
                Method::Other,
                "/api/v1/namespaces/dev/pods",
                (true, "", "", "v1", "pods", "", "dev", ""),
            ),
        ];
        for (method, target, expected) in cases {
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            let query = Query::parse(query);
            let endpoint = route(method, path, &query);
            let user = user();
            let got = Attributes::of_request(&user, method, path, &query, &endpoint);
            let got = (
                got.resource_request,
                got.verb,
                got.api_group,
                got.api_version,
                got.resource,
                got.subresource,
                got.namespace,
                got.name.as_ref(),
            );
            assert_eq!(got, expected, "{method:?} {target}");
        }
    }

    /// Every path the router serves gets the attributes kube's parser gives.
    #[test]
    fn served_resource_paths_agree_with_kube_parser() {
        let paths = [
            (Method::Get, "/api/v1/namespaces/dev/pods"),
            (Method::Get, "/api/v1/pods"),
            (Method::Get, "/api/v1/namespaces/dev"),
            (Method::Put, "/api/v1/namespaces/dev/status"),
            (
                Method::Get,
                "/apis/apps/v1/namespaces/dev/deployments/d/scale",
            ),
            (
                Method::Delete,
                "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            ),
            (Method::Get, "/api/v1/watch/pods"),
            (Method::Patch, "/api/v1/nodes/n/status"),
        ];
        for (method, path) in paths {
            let query = Query::parse("");
            let endpoint = route(method, path, &query);
            assert!(matches!(endpoint, Endpoint::Resource(_)), "{path}");
            let user = user();
            assert_eq!(
                Attributes::of_request(&user, method, path, &query, &endpoint),
                request_info(&user, method, path, &query),
                "{method:?} {path}"
            );
        }
    }
}
