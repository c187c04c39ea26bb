//! Routing as a pure function: method, path and query in, a typed [`Endpoint`] out.
//!
//! Mirrors kube-apiserver's `RequestInfoFactory.NewRequestInfo`
//! (`staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`):
//! `/api/v1/...` and `/apis/GROUP/VERSION/...`, the legacy `watch/` prefix,
//! `namespaces/NS/...`, and the namespace's own `status`/`finalize` subresources.

use crate::query::Query;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Other,
}

impl Method {
    pub fn parse(method: &str) -> Method {
        match method {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "DELETE" => Method::Delete,
            _ => Method::Other,
        }
    }
}

/// The API verbs, as kube names them in discovery and authorization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

/// A request for a resource, before the resource is looked up in the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// `""` for the core group.
    pub group: String,
    pub version: String,
    pub resource: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
    pub verb: Verb,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthCheck {
    Healthz,
    Livez,
    Readyz,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// `/`: the list of served paths.
    Root,
    Version,
    /// `/healthz`, `/livez`, `/readyz`, and `/readyz/<check>`.
    Health(HealthCheck, Option<String>),
    OpenApiV2,
    OpenApiV3Index,
    /// `/openapi/v3/api/v1` → `api/v1`; `/openapi/v3/apis/apps/v1` → `apis/apps/v1`.
    OpenApiV3(String),
    /// `/metrics`: kube-apiserver's request metrics (Prometheus text).
    Metrics,
    /// `/.well-known/openid-configuration`: the service-account issuer's
    /// OIDC discovery document.
    OpenIdConfiguration,
    /// `/openid/v1/jwks`: the service-account verification keys.
    OpenIdKeySet,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/GROUP`
    Group(String),
    /// `/api/v1`, `/apis/GROUP/VERSION`
    Resources {
        group: String,
        version: String,
    },
    Resource(ResourcePath),
    /// Anything else: a plain 404.
    NotFound,
}

impl Endpoint {}

/// Subresources of a namespace itself (`namespaceSubresources` upstream).
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

/// Route one request. Never fails: unknown paths are [`Endpoint::NotFound`].
pub fn route(method: Method, path: &str, query: &Query) -> Endpoint {
    // kube's RequestInfo splits the decoded path (`req.URL.Path`): clients
    // escape `:` in names such as `system:basic-user` as `%3A`.
    let decoded;
    let path = if path.contains('%') {
        decoded = crate::query::percent_decode_path(path);
        decoded.as_str()
    } else {
        path
    };
    let trimmed = path.trim_start_matches('/');
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    let parts: Vec<&str> = if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed.split('/').collect()
    };
    match parts.as_slice() {
        [] => Endpoint::Root,
        ["version"] => Endpoint::Version,
        ["healthz"] => Endpoint::Health(HealthCheck::Healthz, None),
        ["livez"] => Endpoint::Health(HealthCheck::Livez, None),
        ["readyz"] => Endpoint::Health(HealthCheck::Readyz, None),
        // One check, whose name may hold slashes (`poststarthook/rbac/bootstrap-roles`).
        ["healthz", check @ ..] => Endpoint::Health(HealthCheck::Healthz, Some(check.join("/"))),
        ["livez", check @ ..] => Endpoint::Health(HealthCheck::Livez, Some(check.join("/"))),
        ["readyz", check @ ..] => Endpoint::Health(HealthCheck::Readyz, Some(check.join("/"))),
        ["openapi", "v2"] => Endpoint::OpenApiV2,
        ["metrics"] => Endpoint::Metrics,
        [".well-known", "openid-configuration"] => Endpoint::OpenIdConfiguration,
        ["openid", "v1", "jwks"] => Endpoint::OpenIdKeySet,
        ["openapi", "v3"] => Endpoint::OpenApiV3Index,
        ["openapi", "v3", rest @ ..] => Endpoint::OpenApiV3(rest.join("/")),
        ["api"] => Endpoint::CoreVersions,
        ["api", version] => Endpoint::Resources {
            group: String::new(),
            version: version.to_string(),
        },
        ["api", version, rest @ ..] => resource(method, "", version, rest, query),
        ["apis"] => Endpoint::Groups,
        ["apis", group] => Endpoint::Group(group.to_string()),
        ["apis", group, version] => Endpoint::Resources {
            group: group.to_string(),
            version: version.to_string(),
        },
        ["apis", group, version, rest @ ..] => resource(method, group, version, rest, query),
        _ => Endpoint::NotFound,
    }
}

fn resource(method: Method, group: &str, version: &str, parts: &[&str], query: &Query) -> Endpoint {
    // A proxy subresource's trailing path is the backend's: it may hold
    // empty segments (`.../proxy/`); everything before it may not.
    let checked = match parts.iter().position(|part| *part == "proxy") {
        Some(at) if at >= 2 => &parts[..at],
        _ => parts,
    };
    if checked.iter().any(|part| part.is_empty()) {
        return Endpoint::NotFound;
    }
    let (legacy_watch, mut parts) = match parts {
        ["watch", rest @ ..] => (true, rest),
        _ => (false, parts),
    };
    let mut namespace = None;
    if let ["namespaces", ns, rest @ ..] = parts {
        namespace = Some(ns.to_string());
        if !rest.is_empty() && !NAMESPACE_SUBRESOURCES.contains(&rest[0]) {
            parts = rest;
        }
    }
    // A namespace addressed as an object: /api/v1/namespaces/NAME[/status|/finalize].
    let namespace = if parts.first() == Some(&"namespaces") {
        None
    } else {
        namespace
    };
    let (resource, name, subresource) = match parts {
        [resource] => (resource, None, None),
        [resource, name] => (resource, Some(name.to_string()), None),
        [resource, name, subresource] => (
            resource,
            Some(name.to_string()),
            Some(subresource.to_string()),
        ),
        // Deeper paths only exist for proxy subresources: the rest is the
        // path on the backend (`RequestInfoFactory` keeps it out of the
        // request's name and subresource).
        [resource, name, "proxy", _, ..] => {
            (resource, Some(name.to_string()), Some("proxy".to_string()))
        }
        _ => return Endpoint::NotFound,
    };
    let watch_param = query.flag("watch");
    let verb = match method {
        Method::Get | Method::Head if legacy_watch || watch_param => Verb::Watch,
        Method::Get | Method::Head if name.is_some() => Verb::Get,
        Method::Get | Method::Head => Verb::List,
        Method::Post => Verb::Create,
        Method::Put => Verb::Update,
        Method::Patch => Verb::Patch,
        Method::Delete if name.is_some() => Verb::Delete,
        Method::Delete => Verb::DeleteCollection,
        Method::Other => return Endpoint::NotFound,
    };
    Endpoint::Resource(ResourcePath {
        group: group.to_string(),
        version: version.to_string(),
        resource: resource.to_string(),
        namespace,
        name,
        subresource,
        verb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource_path(
        group: &str,
        version: &str,
        resource: &str,
        namespace: Option<&str>,
        name: Option<&str>,
        subresource: Option<&str>,
        verb: Verb,
    ) -> Endpoint {
        Endpoint::Resource(ResourcePath {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
            namespace: namespace.map(Into::into),
            name: name.map(Into::into),
            subresource: subresource.map(Into::into),
            verb,
        })
    }

    #[test]
    fn routes_match_kube_request_info() {
        let cases: Vec<(Method, &str, &str, Endpoint)> = vec![
            (Method::Get, "/", "", Endpoint::Root),
            (Method::Get, "/version", "", Endpoint::Version),
            (Method::Get, "/version/", "", Endpoint::Version),
            (
                Method::Get,
                "/healthz",
                "",
                Endpoint::Health(HealthCheck::Healthz, None),
            ),
            (
                Method::Get,
                "/readyz",
                "verbose",
                Endpoint::Health(HealthCheck::Readyz, None),
            ),
            (
                Method::Get,
                "/livez/ping",
                "",
                Endpoint::Health(HealthCheck::Livez, Some("ping".into())),
            ),
            (Method::Get, "/openapi/v2", "", Endpoint::OpenApiV2),
            (Method::Get, "/openapi/v3", "", Endpoint::OpenApiV3Index),
            (
                Method::Get,
                "/openapi/v3/apis/apps/v1",
                "hash=X",
                Endpoint::OpenApiV3("apis/apps/v1".into()),
            ),
            (
                Method::Get,
                "/openapi/v3/api/v1",
                "",
                Endpoint::OpenApiV3("api/v1".into()),
            ),
            (
                Method::Get,
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Abasic-user",
                "",
                resource_path(
                    "rbac.authorization.k8s.io",
                    "v1",
                    "clusterroles",
                    None,
                    Some("system:basic-user"),
                    None,
                    Verb::Get,
                ),
            ),
            (
                Method::Get,
                "/readyz/poststarthook/rbac/bootstrap-roles",
                "",
                Endpoint::Health(
                    HealthCheck::Readyz,
                    Some("poststarthook/rbac/bootstrap-roles".into()),
                ),
            ),
            (Method::Get, "/api", "", Endpoint::CoreVersions),
            (Method::Get, "/apis", "", Endpoint::Groups),
            (
                Method::Get,
                "/apis/apps",
                "",
                Endpoint::Group("apps".into()),
            ),
            (
                Method::Get,
                "/api/v1",
                "",
                Endpoint::Resources {
                    group: "".into(),
                    version: "v1".into(),
                },
            ),
            (
                Method::Get,
                "/apis/apps/v1",
                "",
                Endpoint::Resources {
                    group: "apps".into(),
                    version: "v1".into(),
                },
            ),
            (
                Method::Get,
                "/api/v1/pods",
                "",
                resource_path("", "v1", "pods", None, None, None, Verb::List),
            ),
            (
                Method::Get,
                "/api/v1/pods",
                "watch=true",
                resource_path("", "v1", "pods", None, None, None, Verb::Watch),
            ),
            (
                Method::Get,
                "/api/v1/pods",
                "watch=1",
                resource_path("", "v1", "pods", None, None, None, Verb::Watch),
            ),
            (
                Method::Get,
                "/api/v1/pods",
                "watch=false",
                resource_path("", "v1", "pods", None, None, None, Verb::List),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/default/pods",
                "",
                resource_path("", "v1", "pods", Some("default"), None, None, Verb::List),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/default/pods/p",
                "",
                resource_path(
                    "",
                    "v1",
                    "pods",
                    Some("default"),
                    Some("p"),
                    None,
                    Verb::Get,
                ),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/default/pods/p/status",
                "",
                resource_path(
                    "",
                    "v1",
                    "pods",
                    Some("default"),
                    Some("p"),
                    Some("status"),
                    Verb::Get,
                ),
            ),
            (
                Method::Put,
                "/api/v1/namespaces/default/pods/p/status",
                "",
                resource_path(
                    "",
                    "v1",
                    "pods",
                    Some("default"),
                    Some("p"),
                    Some("status"),
                    Verb::Update,
                ),
            ),
            (
                Method::Post,
                "/api/v1/namespaces/default/pods",
                "",
                resource_path("", "v1", "pods", Some("default"), None, None, Verb::Create),
            ),
            (
                Method::Patch,
                "/api/v1/namespaces/default/pods/p",
                "",
                resource_path(
                    "",
                    "v1",
                    "pods",
                    Some("default"),
                    Some("p"),
                    None,
                    Verb::Patch,
                ),
            ),
            (
                Method::Delete,
                "/api/v1/namespaces/default/pods/p",
                "",
                resource_path(
                    "",
                    "v1",
                    "pods",
                    Some("default"),
                    Some("p"),
                    None,
                    Verb::Delete,
                ),
            ),
            (
                Method::Delete,
                "/api/v1/namespaces/default/pods",
                "",
                resource_path(
                    "",
                    "v1",
                    "pods",
                    Some("default"),
                    None,
                    None,
                    Verb::DeleteCollection,
                ),
            ),
            (
                Method::Get,
                "/api/v1/watch/namespaces/default/pods",
                "",
                resource_path("", "v1", "pods", Some("default"), None, None, Verb::Watch),
            ),
            (
                Method::Get,
                "/api/v1/watch/pods",
                "",
                resource_path("", "v1", "pods", None, None, None, Verb::Watch),
            ),
            (
                Method::Get,
                "/apis/apps/v1/watch/namespaces/ns/deployments/d",
                "",
                resource_path(
                    "apps",
                    "v1",
                    "deployments",
                    Some("ns"),
                    Some("d"),
                    None,
                    Verb::Watch,
                ),
            ),
            (
                Method::Get,
                "/api/v1/namespaces",
                "",
                resource_path("", "v1", "namespaces", None, None, None, Verb::List),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/kube-system",
                "",
                resource_path(
                    "",
                    "v1",
                    "namespaces",
                    None,
                    Some("kube-system"),
                    None,
                    Verb::Get,
                ),
            ),
            (
                Method::Put,
                "/api/v1/namespaces/x/status",
                "",
                resource_path(
                    "",
                    "v1",
                    "namespaces",
                    None,
                    Some("x"),
                    Some("status"),
                    Verb::Update,
                ),
            ),
            (
                Method::Put,
                "/api/v1/namespaces/x/finalize",
                "",
                resource_path(
                    "",
                    "v1",
                    "namespaces",
                    None,
                    Some("x"),
                    Some("finalize"),
                    Verb::Update,
                ),
            ),
            (
                Method::Get,
                "/apis/apps/v1/namespaces/ns/deployments/d/scale",
                "",
                resource_path(
                    "apps",
                    "v1",
                    "deployments",
                    Some("ns"),
                    Some("d"),
                    Some("scale"),
                    Verb::Get,
                ),
            ),
            (
                Method::Get,
                "/api/v1/nodes/n1",
                "",
                resource_path("", "v1", "nodes", None, Some("n1"), None, Verb::Get),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/default/pods/p/proxy/extra",
                "",
                resource_path(
                    "",
                    "v1",
                    "pods",
                    Some("default"),
                    Some("p"),
                    Some("proxy"),
                    Verb::Get,
                ),
            ),
            (
                Method::Delete,
                "/api/v1/nodes/n:10250/proxy/a//b/",
                "",
                resource_path(
                    "",
                    "v1",
                    "nodes",
                    None,
                    Some("n:10250"),
                    Some("proxy"),
                    Verb::Delete,
                ),
            ),
            (
                Method::Get,
                "/api/v1/namespaces/default/pods//proxy/x",
                "",
                Endpoint::NotFound,
            ),
            (
                Method::Get,
                "/api/v1/namespaces/default/pods/p/log/extra",
                "",
                Endpoint::NotFound,
            ),
            (
                Method::Get,
                "/api/v1/namespaces//pods",
                "",
                Endpoint::NotFound,
            ),
            (Method::Get, "/nope", "", Endpoint::NotFound),
            (Method::Other, "/api/v1/pods", "", Endpoint::NotFound),
        ];
        for (method, path, query, expected) in cases {
            let query = Query::parse(query);
            assert_eq!(
                route(method, path, &query),
                expected,
                "{method:?} {path}?{query:?}"
            );
        }
    }
}
