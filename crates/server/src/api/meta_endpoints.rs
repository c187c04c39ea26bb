//! Everything that is not a resource: `/`, `/version`, health checks,
//! OpenAPI documents and discovery.

use std::sync::Arc;

use serde_json::json;

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use crate::discovery;
use crate::negotiate::{negotiate, Representation};
use crate::openapi::v2_protobuf::{self, V2Format};
use crate::openapi::Document;
use crate::registry::Registry;
use crate::route::{Endpoint, HealthCheck, Method};
use crate::status::{Result, Status};

/// The Kubernetes version we serve, and ours.
pub const KUBE_MAJOR: &str = "1";
pub const KUBE_MINOR: &str = "34";
pub fn git_version() -> String {
    format!("v1.34.0-ferrokube.{}", env!("CARGO_PKG_VERSION"))
}

pub(super) async fn handle(
    api: &Api,
    request: &ApiRequest,
    endpoint: &Endpoint,
) -> Result<ApiResponse> {
    if !matches!(request.method, Method::Get | Method::Head) {
        return Err(Status::method_not_allowed());
    }
    match endpoint {
        Endpoint::Root => Ok(root(api, &*api.registry_now().await)),
        Endpoint::Version => Ok(ApiResponse::json(200, &version())),
        Endpoint::Health(check, single) => Ok(health(api, request, *check, single.as_deref())),
        // Custom resources are documented once their CRD is Established,
        // read-your-writes as discovery (`kubectl explain` right after `wait`).
        Endpoint::OpenApiV2 => openapi_v2(api, request, &api.registry_now().await),
        Endpoint::OpenApiV3Index => {
            let registry = api.registry_now().await;
            let document = api
                .openapi
                .v3_index_served(&registry)
                .map_err(Status::internal)?;
            openapi(request, &document, "application/json")
        }
        Endpoint::OpenApiV3(path) => {
            let registry = api.registry_now().await;
            match api
                .openapi
                .v3_group_version_served(&registry, path)
                .map_err(Status::internal)?
            {
                Some(document) => openapi(request, &document, "application/json"),
                None => Err(Status::no_such_resource()),
            }
        }
        Endpoint::Metrics => Ok(ApiResponse::bytes(
            200,
            "text/plain; version=0.0.4; charset=utf-8",
            bytes::Bytes::from(api.metrics.render() + &api.service_accounts.uses().render()),
        )),
        // Discovery reflects every CRD established before the request.
        Endpoint::CoreVersions => discovery_root(api, request, true).await,
        Endpoint::Groups => discovery_root(api, request, false).await,
        Endpoint::Group(name) => Ok(discovery::group(&*api.registry_now().await, name)
            .map(|body| ApiResponse::json(200, &body))
            .unwrap_or_else(|| ApiResponse::text(404, "404 page not found\n"))),
        Endpoint::Resources { group, version } => {
            Ok(
                discovery::resource_list(&*api.registry_now().await, group, version)
                    .map(|body| ApiResponse::json(200, &body))
                    .unwrap_or_else(|| ApiResponse::text(404, "404 page not found\n")),
            )
        }
        Endpoint::OpenIdConfiguration => Ok(openid_configuration(api)),
        Endpoint::OpenIdKeySet => Ok(openid_key_set(api)),
        Endpoint::NotFound | Endpoint::Resource(_) => {
            Ok(ApiResponse::text(404, "404 page not found\n"))
        }
    }
}

/// `/.well-known/openid-configuration` (`routes/openidmetadata.go`): a 404
/// when the issuer is not an https URL, as kube then installs no route.
fn openid_configuration(api: &Api) -> ApiResponse {
    use crate::serviceaccount::openid;
    match openid::openid_configuration(&api.service_accounts, &api.server_address) {
        Ok(document) => ApiResponse::bytes(
            200,
            "application/json",
            openid::openid_configuration_bytes(&document).into(),
        )
        .with_header(http::header::CACHE_CONTROL, openid::CACHE_CONTROL),
        Err(_) => ApiResponse::text(404, "404 page not found\n"),
    }
}

/// `/openid/v1/jwks`, served with the discovery document.
fn openid_key_set(api: &Api) -> ApiResponse {
    use crate::serviceaccount::openid;
    if openid::openid_configuration(&api.service_accounts, &api.server_address).is_err() {
        return ApiResponse::text(404, "404 page not found\n");
    }
    ApiResponse::bytes(
        200,
        openid::JWKS_CONTENT_TYPE,
        openid::jwks_bytes(&api.service_accounts).into(),
    )
    .with_header(http::header::CACHE_CONTROL, openid::CACHE_CONTROL)
}

pub fn version() -> serde_json::Value {
    json!({
        "major": KUBE_MAJOR,
        "minor": KUBE_MINOR,
        "emulationMajor": KUBE_MAJOR,
        "emulationMinor": KUBE_MINOR,
        "minCompatibilityMajor": KUBE_MAJOR,
        "minCompatibilityMinor": "33",
        "gitVersion": git_version(),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "n/a (ferrokube is written in Rust)",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        }),
    })
}

fn root(api: &Api, registry: &Registry) -> ApiResponse {
    let mut paths = vec![
        "/api".to_string(),
        "/api/v1".to_string(),
        "/apis".to_string(),
        "/healthz".to_string(),
        "/livez".to_string(),
        "/openapi/v2".to_string(),
        "/openapi/v3".to_string(),
        "/readyz".to_string(),
        "/version".to_string(),
    ];
    for group in registry
        .groups()
        .iter()
        .filter(|group| !group.name.is_empty())
    {
        paths.push(format!("/apis/{}", group.name));
        for version in &group.versions {
            paths.push(format!("/apis/{}/{version}", group.name));
        }
    }
    // The OIDC discovery paths, when they are served.
    let service_accounts = &api.service_accounts;
    if crate::serviceaccount::openid::openid_configuration(service_accounts, &api.server_address)
        .is_ok()
    {
        paths.push(crate::serviceaccount::openid::OPENID_CONFIG_PATH.to_string());
        paths.push(crate::serviceaccount::openid::JWKS_PATH.to_string());
    }
    paths.sort();
    ApiResponse::json(200, &json!({ "paths": paths }))
}

/// `/healthz`, `/livez`, `/readyz` as kube's `healthz` package prints them.
fn health(
    api: &Api,
    request: &ApiRequest,
    check: HealthCheck,
    single: Option<&str>,
) -> ApiResponse {
    let (name, base): (&str, &[&str]) = match check {
        HealthCheck::Healthz => ("healthz", &["ping", "log", "etcd"]),
        HealthCheck::Livez => ("livez", &["ping", "log", "etcd"]),
        // `informer-sync` is kube's readiness check of its shared informers;
        // ferrokube's readers follow the store directly, so it always passes.
        HealthCheck::Readyz => (
            "readyz",
            &["ping", "log", "etcd", "etcd-readiness", "informer-sync"],
        ),
    };
    let mut checks: Vec<(String, bool)> =
        base.iter().map(|check| (check.to_string(), true)).collect();
    // Every post-start hook is a check of all three, failing until it has run
    // (`hooks.go`, `postStartHookHealthz`); readyz ends with `shutdown`.
    checks.extend(api.post_start_hooks.checks());
    if check == HealthCheck::Readyz {
        checks.push(("shutdown".to_string(), !api.is_shutting_down()));
    }
    if let Some(single) = single {
        return match checks.iter().find(|(check, _)| check == single) {
            Some((_, true)) => ApiResponse::text(200, "ok"),
            Some((_, false)) => ApiResponse::text(500, "internal server error: check failed\n"),
            None => ApiResponse::text(404, "404 page not found\n"),
        };
    }
    let excluded = request.query.all("exclude");
    let healthy = checks
        .iter()
        .filter(|(check, _)| !excluded.contains(&check.as_str()))
        .all(|(_, ok)| *ok);
    let verbose = request.query.get("verbose").is_some() || !healthy;
    if !verbose {
        return ApiResponse::text(200, "ok");
    }
    let mut text = String::new();
    for (check, ok) in &checks {
        if excluded.contains(&check.as_str()) {
            text.push_str(&format!("[+]{check} excluded: ok\n"));
        } else if *ok {
            text.push_str(&format!("[+]{check} ok\n"));
        } else {
            text.push_str(&format!("[-]{check} failed: reason withheld\n"));
        }
    }
    if healthy {
        text.push_str(&format!("{name} check passed\n"));
        ApiResponse::text(200, text)
    } else {
        text.push_str(&format!("{name} check failed\n"));
        ApiResponse::text(500, text)
    }
}

/// `/openapi/v2`, JSON or the gnostic protobuf by `Accept` (kube-openapi
/// `RegisterOpenAPIVersionedService`): every answer varies on Accept, and one
/// that allows neither is a bare 406 (no body, as kube writes it).
fn openapi_v2(api: &Api, request: &ApiRequest, registry: &Arc<Registry>) -> Result<ApiResponse> {
    let response = match v2_protobuf::negotiate(request.header("accept")) {
        Some(V2Format::Json) => openapi(
            request,
            &api.openapi.v2_served(registry).map_err(Status::internal)?,
            V2Format::Json.content_type(),
        )?,
        Some(V2Format::Protobuf) => openapi(
            request,
            &api.openapi
                .v2_protobuf_served(registry)
                .map_err(Status::internal)?,
            V2Format::Protobuf.content_type(),
        )?,
        None => {
            let mut response = ApiResponse::bytes(406, "", bytes::Bytes::new());
            response.headers.clear();
            response
        }
    };
    if response.status == 200 {
        Ok(response)
    } else {
        Ok(response.with_header(http::header::VARY, "Accept"))
    }
}

/// An OpenAPI document with kube's caching headers; `If-None-Match` answers 304.
fn openapi(request: &ApiRequest, document: &Document, content_type: &str) -> Result<ApiResponse> {
    let matches = request.header("if-none-match").is_some_and(|tags| {
        tags.split(',')
            .any(|tag| tag.trim() == document.etag || tag.trim() == "*")
    });
    let cache_control = if request.query.get("hash").is_some() {
        "public, immutable"
    } else {
        "no-cache, private"
    };
    if matches {
        let mut response = ApiResponse::bytes(304, "application/json", bytes::Bytes::new());
        response.headers.clear();
        return Ok(response
            .with_header(http::header::ETAG, document.etag.clone())
            .with_header(http::header::CACHE_CONTROL, cache_control));
    }
    Ok(ApiResponse::bytes(200, content_type, document.json.clone())
        .with_header(http::header::ETAG, document.etag.clone())
        .with_header(http::header::CACHE_CONTROL, cache_control)
        .with_header(http::header::VARY, "Accept"))
}

async fn discovery_root(api: &Api, request: &ApiRequest, core: bool) -> Result<ApiResponse> {
    let offers = [
        Representation::Json,
        Representation::AggregatedDiscovery("v2"),
        Representation::AggregatedDiscovery("v2beta1"),
    ];
    let representation = negotiate(request.header("accept"), &offers)?;
    let registry = api.registry_now().await;
    let body = match representation {
        Representation::AggregatedDiscovery(version) => {
            discovery::aggregated(&registry, core, version)
        }
        _ if core => discovery::core_versions(&api.server_address),
        _ => discovery::group_list(&registry),
    };
    Ok(ApiResponse::represented(200, representation, &body)
        .with_header(http::header::VARY, "Accept"))
}
