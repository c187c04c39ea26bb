//! The REST routes kube-apiserver documents, as a format-neutral model that
//! `v2.rs` and `v3.rs` render.
//!
//! Mirrors `k8s.io/apiserver/pkg/endpoints/installer.go` (`registerResourceHandlers`:
//! paths, operation names, descriptions, actions) and
//! `k8s.io/apiserver/pkg/endpoints/openapi/openapi.go` (`GetOperationIDAndTags`:
//! `listAppsV1NamespacedDeployment`, tag `apps_v1`). Per-resource paths are in
//! `resources.rs`.

use std::collections::BTreeMap;

use super::definitions::{Definitions, Gvk};
use super::params::{self, Param, Spec};
use super::resources::resource_paths;
use crate::registry::ResourceDef;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Method {
    Delete,
    Get,
    Head,
    Options,
    Patch,
    Post,
    Put,
}

impl Method {
    pub(crate) fn key(self) -> &'static str {
        match self {
            Method::Delete => "delete",
            Method::Get => "get",
            Method::Head => "head",
            Method::Options => "options",
            Method::Patch => "patch",
            Method::Post => "post",
            Method::Put => "put",
        }
    }

    /// `Get`, `Post`... as in `connectCoreV1GetNamespacedPodExec`.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Method::Delete => "Delete",
            Method::Get => "Get",
            Method::Head => "Head",
            Method::Options => "Options",
            Method::Patch => "Patch",
            Method::Post => "Post",
            Method::Put => "Put",
        }
    }
}

/// Request body of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    /// The object itself (POST/PUT); `None` when its schema is not vendored.
    Object(Option<String>),
    /// `meta/v1 DeleteOptions`, optional.
    DeleteOptions,
    /// `meta/v1 Patch` in one of the patch content types.
    Patch,
}

/// Response schema of one status code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Schema {
    Ref(String),
    String,
    None,
}

/// Which media types an operation produces (and, in v2, consumes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Media {
    /// Single objects, Status, APIResourceList.
    Object,
    /// Lists and watches (adds the streaming types).
    Stream,
    /// /api, /apis, /apis/<group>: json, yaml, protobuf.
    Discovery,
    /// pods/log.
    Log,
    /// Connect subresources: `*/*`.
    Connect,
    /// /version: consumes and produces application/json.
    Version,
    /// /.well-known/openid-configuration: produces application/json.
    Oidc,
    /// /openid/v1/jwks.
    JwkSet,
    /// /logs: nothing declared.
    Nothing,
    /// Custom resources (apiextensions' `buildRoute`): JSON and YAML only,
    /// and the patch types custom resources take.
    Custom,
}

#[derive(Debug, Clone)]
pub(crate) struct Operation {
    pub method: Method,
    pub id: String,
    pub description: Option<String>,
    pub tag: String,
    pub action: Option<&'static str>,
    pub gvk: Option<Gvk>,
    pub params: Vec<Param>,
    pub body: Option<Body>,
    pub responses: Vec<(u16, Schema)>,
    pub media: Media,
}

/// One path with its operations; `params` are those shared by every operation
/// (kube-openapi lifts them to the path item).
#[derive(Debug, Clone)]
pub(crate) struct PathItem {
    pub path: String,
    pub params: Vec<Param>,
    pub ops: Vec<Operation>,
}

/// Every documented path, grouped by the `/openapi/v3` document holding it
/// (`api`, `api/v1`, `apis`, `apis/apps`, `apis/apps/v1`, `version`, ...).
pub(crate) type Routes = BTreeMap<String, Vec<PathItem>>;

/// Builds the routes of every resource in `resources` plus the discovery,
/// version, OIDC and logs endpoints kube-apiserver documents.
pub(crate) fn build(resources: &[ResourceDef], defs: &Definitions) -> Routes {
    let mut routes = Routes::new();
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for res in resources {
        let versions = groups.entry(res.group).or_default();
        if !versions.contains(&res.version) {
            versions.push(res.version);
        }
    }

    add_root_docs(&mut routes, &groups);
    for (group, versions) in &groups {
        for version in versions {
            let key = gv_path(group, version);
            let gv = GroupVersion::new(group, version);
            let mut items = vec![simple(
                format!("/{key}/"),
                Method::Get,
                format!("get{}APIResources", gv.camel),
                "get available resources",
                &gv.tag,
                Schema::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList".into()),
                Media::Object,
            )];
            for res in resources
                .iter()
                .filter(|r| r.group == *group && r.version == *version)
            {
                items.extend(resource_paths(res, &gv, defs));
            }
            routes.insert(key, merge_paths(items));
        }
    }
    routes
}

/// `api/v1` or `apis/apps/v1`: the v3 document key and URL prefix of a group version.
pub(crate) fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// Upstream `ToValidOperationID`: drops non-identifier runes, capitalizing the rune after each.
fn to_operation_id(s: &str, capitalize_first: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

/// The group part of operation ids and tags: `Core`, `Apps`, `RbacAuthorization`.
fn group_ids(group: &str) -> (String, String) {
    let trimmed = if group.is_empty() {
        "core"
    } else {
        group.trim_end_matches(".k8s.io")
    };
    (
        to_operation_id(trimmed, true),
        to_operation_id(trimmed, false),
    )
}

pub(crate) struct GroupVersion {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) prefix: String,
    /// `AppsV1`
    pub(crate) camel: String,
    /// `apps_v1`
    pub(crate) tag: String,
}

impl GroupVersion {
    pub(crate) fn new(group: &str, version: &str) -> Self {
        let (camel, tag) = group_ids(group);
        GroupVersion {
            group: group.to_string(),
            version: version.to_string(),
            prefix: format!("/{}", gv_path(group, version)),
            camel: format!("{camel}{}", to_operation_id(version, true)),
            tag: format!("{tag}_{}", to_operation_id(version, false)),
        }
    }
}

/// Upstream `GetArticleForNoun(noun, " ")`.
pub(crate) fn article(noun: &str) -> &'static str {
    if !noun.ends_with("ss") && noun.ends_with('s') {
        return " ";
    }
    match noun.chars().next() {
        Some(c) if "aeiouAEIOU".contains(c) => " an ",
        _ => " a ",
    }
}

/// `strings.Title` of a subresource name: first letter upper-cased.
pub(crate) fn title(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub(crate) fn specs(list: &[Spec]) -> Vec<Param> {
    list.iter().map(Spec::param).collect()
}

fn simple(
    path: String,
    method: Method,
    id: String,
    desc: &str,
    tag: &str,
    schema: Schema,
    media: Media,
) -> PathItem {
    PathItem {
        path,
        params: Vec::new(),
        ops: vec![Operation {
            method,
            id,
            description: Some(desc.to_string()),
            tag: tag.to_string(),
            action: None,
            gvk: None,
            params: Vec::new(),
            body: None,
            responses: vec![(200, schema), (401, Schema::None)],
            media,
        }],
    }
}

/// `/api/`, `/apis/`, `/apis/<group>/`, `/version/`, OIDC discovery and `/logs`.
fn add_root_docs(routes: &mut Routes, groups: &BTreeMap<&str, Vec<&str>>) {
    let meta = "io.k8s.apimachinery.pkg.apis.meta.v1.";
    let api = simple(
        "/api/".into(),
        Method::Get,
        "getCoreAPIVersions".into(),
        "get available API versions",
        "core",
        Schema::Ref(format!("{meta}APIVersions")),
        Media::Discovery,
    );
    routes.insert("api".into(), vec![api]);
    let apis = simple(
        "/apis/".into(),
        Method::Get,
        "getAPIVersions".into(),
        "get available API versions",
        "apis",
        Schema::Ref(format!("{meta}APIGroupList")),
        Media::Discovery,
    );
    routes.insert("apis".into(), vec![apis]);
    for group in groups.keys().filter(|g| !g.is_empty()) {
        let (camel, tag) = group_ids(group);
        let item = simple(
            format!("/apis/{group}/"),
            Method::Get,
            format!("get{camel}APIGroup"),
            "get information of a group",
            &tag,
            Schema::Ref(format!("{meta}APIGroup")),
            Media::Discovery,
        );
        routes.insert(format!("apis/{group}"), vec![item]);
    }
    let version = simple(
        "/version/".into(),
        Method::Get,
        "getCodeVersion".into(),
        "get the version information for this server",
        "version",
        Schema::Ref("io.k8s.apimachinery.pkg.version.Info".into()),
        Media::Version,
    );
    routes.insert("version".into(), vec![version]);

    let mut oidc = simple(
        "/.well-known/openid-configuration/".into(),
        Method::Get,
        "getServiceAccountIssuerOpenIDConfiguration".into(),
        "get service account issuer OpenID configuration, also known as the 'OIDC discovery doc'",
        "WellKnown",
        Schema::String,
        Media::Oidc,
    );
    oidc.ops[0].responses.truncate(1);
    routes.insert(".well-known/openid-configuration".into(), vec![oidc]);
    let mut jwks = simple("/openid/v1/jwks/".into(), Method::Get, "getServiceAccountIssuerOpenIDKeyset".into(), "get service account issuer OpenID JSON Web Key Set (contains public token verification keys)", "openid", Schema::String, Media::JwkSet);
    jwks.ops[0].responses.truncate(1);
    routes.insert("openid/v1/jwks".into(), vec![jwks]);

    let mut list = simple(
        "/logs/".into(),
        Method::Get,
        "logFileListHandler".into(),
        "",
        "logs",
        Schema::None,
        Media::Nothing,
    );
    let mut file = simple(
        "/logs/{logpath}".into(),
        Method::Get,
        "logFileHandler".into(),
        "",
        "logs",
        Schema::None,
        Media::Nothing,
    );
    for item in [&mut list, &mut file] {
        item.ops[0].description = None;
        item.ops[0].responses = vec![(401, Schema::None)];
    }
    file.ops[0].params.push(params::LOG_PATH.param());
    routes.insert("logs".into(), merge_paths(vec![list, file]));
}

/// Merges items of the same path, then lifts the parameters every operation of
/// a path shares to the path item (body parameters stay with the operation).
pub(crate) fn merge_paths(items: Vec<PathItem>) -> Vec<PathItem> {
    let mut merged: BTreeMap<String, PathItem> = BTreeMap::new();
    for item in items {
        match merged.get_mut(&item.path) {
            Some(existing) => existing.ops.extend(item.ops),
            None => {
                merged.insert(item.path.clone(), item);
            }
        }
    }
    let mut out: Vec<PathItem> = merged.into_values().collect();
    for item in &mut out {
        item.ops.sort_by_key(|op| op.method);
        item.ops.dedup_by_key(|op| op.method);
        let Some(first) = item.ops.first() else {
            continue;
        };
        let mut common: Vec<Param> = first
            .params
            .iter()
            .filter(|p| item.ops.iter().all(|op| op.params.contains(p)))
            .cloned()
            .collect();
        common.dedup();
        for op in &mut item.ops {
            op.params.retain(|p| !common.contains(p));
            params::sort(&mut op.params);
        }
        item.params.extend(common);
        params::sort(&mut item.params);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_ids_and_tags_like_kube() {
        assert_eq!(GroupVersion::new("", "v1").camel, "CoreV1");
        assert_eq!(GroupVersion::new("", "v1").tag, "core_v1");
        assert_eq!(GroupVersion::new("apps", "v1").camel, "AppsV1");
        assert_eq!(
            GroupVersion::new("rbac.authorization.k8s.io", "v1").camel,
            "RbacAuthorizationV1"
        );
        assert_eq!(
            GroupVersion::new("rbac.authorization.k8s.io", "v1").tag,
            "rbacAuthorization_v1"
        );
        assert_eq!(
            GroupVersion::new("flowcontrol.apiserver.k8s.io", "v1beta3").camel,
            "FlowcontrolApiserverV1beta3"
        );
        assert_eq!(GroupVersion::new("autoscaling", "v2").tag, "autoscaling_v2");
        assert_eq!(article("Pod"), " a ");
        assert_eq!(article("Ingress"), " an ");
        assert_eq!(article("Endpoints"), " ");
        assert_eq!(title("portforward"), "Portforward");
    }
}
