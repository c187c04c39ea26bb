//! Resolve a routed resource path against the registry and hand it to its verb.
//! Scope and verb checks follow how kube-apiserver installs routes
//! (`endpoints/installer.go`): a path that is not installed is a 404, an
//! installed path without the method is a 405.

use std::sync::Arc;

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::patch_type::PatchType;
use super::target::Target;
use super::{
    apply, binding, component_status, connect, create, delete, eviction, get, kubelet_proxy, list,
    patch, representation, reviews, scale, token_request, update, watch,
};
use crate::authz::access_review::ReviewKind;
use crate::registry::{Registry, ResourceDef};
use crate::route::{ResourcePath, Verb};
use crate::status::{Result, Status};

pub(super) async fn handle(
    api: &Arc<Api>,
    request: &ApiRequest,
    path: &ResourcePath,
) -> Result<ApiResponse> {
    let (registry, resource) = match resolve(api, path).await {
        Ok(found) => found,
        Err(answer) => {
            if let Some(response) = beta_self_subject_review(api, request, path).await {
                return Ok(response);
            }
            return Ok(answer.into_response(request));
        }
    };
    let target = Target {
        resource,
        namespace: path.namespace.as_deref(),
        name: path.name.as_deref(),
        subresource: path.subresource.as_deref(),
        verb: path.verb,
        custom: if resource.custom {
            registry.custom(resource).cloned()
        } else {
            None
        },
    };
    if let Err(status) = check_scope(&target) {
        return Ok(representation::represent_error(&status, request));
    }
    // The response's representation is settled before any work is done, so
    // that a write the client cannot read is refused (406) before it happens
    // (`handlers/create.go` et al. negotiate first).
    let capabilities = crate::negotiate::Capabilities {
        protobuf: crate::protobuf::message_for(&resource.api_version(), resource.kind).is_some(),
        table: (!resource.storage.is_empty() || component_status::served(resource))
            && target.subresource != Some("scale"),
    };
    let negotiated = crate::negotiate::negotiate_output(request.header("accept"), capabilities);
    let outcome = match &negotiated {
        Ok(_) => dispatch(api, request, &target).await,
        Err(status) => Err(status.clone()),
    };
    // A custom resource converted by webhook reaches the request's version
    // here, before the synchronous representation reads it.
    let outcome = super::conversion::response(api, &target, outcome).await;
    let mut response = representation::represent(outcome, request, &target, negotiated.ok());
    if let Some(warning) =
        deprecation(resource).and_then(crate::field_validation::warning_header_value)
    {
        // The installer's warning for a deprecated API, before the handler's.
        response.headers.insert(0, (http::header::WARNING, warning));
    }
    if let Some(warning) = target
        .custom
        .as_ref()
        .and_then(|custom| custom.deprecation_warning.as_deref())
        .and_then(crate::field_validation::warning_header_value)
    {
        // `crdHandler` warns before anything else is done for the request.
        response.headers.insert(0, (http::header::WARNING, warning));
    }
    Ok(response)
}

/// The warning kube's installer adds to every request of a built-in
/// resource whose version its release deprecates (`deprecation.WarningMessage`
/// of the type's `APILifecycleDeprecated` and `APILifecycleReplacement`): of
/// the versions kube 1.34 serves by default, core v1 Endpoints and
/// ComponentStatus.
fn deprecation(resource: &ResourceDef) -> Option<&'static str> {
    match (
        resource.group,
        resource.version,
        resource.plural,
        resource.custom,
    ) {
        ("", "v1", "endpoints", false) => {
            Some("v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice")
        }
        ("", "v1", "componentstatuses", false) => {
            Some("v1 ComponentStatus is deprecated in v1.19+")
        }
        _ => None,
    }
}

/// Why a resource path is not served.
enum Unserved {
    /// No such group version: the mux's plain 404, as kube answers.
    GroupVersion,
    /// The group version is served, the resource is not.
    Resource,
}

impl Unserved {
    fn into_response(self, request: &ApiRequest) -> ApiResponse {
        match self {
            Unserved::GroupVersion => ApiResponse::text(404, "404 page not found\n"),
            Unserved::Resource => {
                representation::represent_error(&Status::no_such_resource(), request)
            }
        }
    }
}

/// The registry snapshot and the resource `path` names. A miss is answered
/// only once the registry reflects every CRD the store held when the request
/// came (`registry/live.rs`).
async fn resolve(
    api: &Api,
    path: &ResourcePath,
) -> std::result::Result<(Arc<Registry>, &'static ResourceDef), Unserved> {
    let lookup = |registry: &Registry| registry.lookup(&path.group, &path.version, &path.resource);
    let registry = api.registry.load();
    if let Some(resource) = lookup(&registry) {
        return Ok((registry, resource));
    }
    let registry = api.registry_now().await;
    match lookup(&registry) {
        Some(resource) => Ok((registry, resource)),
        None if registry.serves_version(&path.group, &path.version) => Err(Unserved::Resource),
        None => Err(Unserved::GroupVersion),
    }
}

async fn dispatch(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    let resource = target.resource;
    if let Some(subresource) = target.subresource {
        if resource.subresource(subresource).is_none() {
            return Err(Status::no_such_resource());
        }
        return match (subresource, target.verb) {
            ("status", Verb::Get) => get::get(api, request, target).await,
            ("status" | "finalize", Verb::Update) => update::update(api, request, target).await,
            ("status" | "scale", Verb::Patch) => patch_or_apply(api, request, target).await,
            // CertificateSigningRequest `/approval` (`ApprovalREST`).
            ("approval", Verb::Get) => get::get(api, request, target).await,
            ("approval", Verb::Update) => update::update(api, request, target).await,
            ("approval", Verb::Patch) => patch_or_apply(api, request, target).await,
            ("ephemeralcontainers" | "resize", verb) if resource.group.is_empty() => match verb {
                Verb::Get => get::get(api, request, target).await,
                Verb::Update => update::update(api, request, target).await,
                Verb::Patch => patch_or_apply(api, request, target).await,
                _ => Err(Status::method_not_supported(
                    &target.group_resource(),
                    verb.as_str(),
                )),
            },
            ("scale", Verb::Get) => scale::get(api, request, target).await,
            ("scale", Verb::Update) => scale::update(api, request, target).await,
            ("token", Verb::Create) if resource.group.is_empty() => {
                token_request::create(api, request, target).await
            }
            ("binding", Verb::Create) if resource.group.is_empty() => {
                binding::create(api, request, target).await
            }
            ("log", Verb::Get) if resource.plural == "pods" => {
                let container = request.query.get("container").unwrap_or_default();
                kubelet_proxy::connect(api, target, "log", container).await
            }
            ("exec" | "attach" | "portforward", Verb::Get | Verb::Create)
                if resource.plural == "pods" && resource.group.is_empty() =>
            {
                connect::connect(api, request, target, subresource).await
            }
            ("proxy", Verb::Get | Verb::Create | Verb::Update | Verb::Patch | Verb::Delete)
                if resource.group.is_empty() =>
            {
                connect::connect(api, request, target, subresource).await
            }
            ("eviction", Verb::Create) if resource.group.is_empty() => {
                eviction::create(api, request, target).await
            }
            (_, verb) => Err(Status::method_not_supported(
                &target.group_resource(),
                verb.as_str(),
            )),
        };
    }
    if let Some(custom) = &target.custom {
        // `crdHandler`: while the CRD terminates only create is refused
        // (discovery lists fewer verbs, but updates and patches still work,
        // so that finalizers can be removed).
        if custom.terminating && target.verb == Verb::Create {
            let mut status =
                Status::method_not_supported(&target.group_resource(), target.verb.as_str());
            status.message =
                "create not allowed while custom resource definition is terminating".to_string();
            return Err(status);
        }
    } else if !resource.has_verb(target.verb.as_str()) {
        return Err(Status::method_not_supported(
            &target.group_resource(),
            target.verb.as_str(),
        ));
    }
    match (resource.group, resource.plural, target.verb) {
        ("authentication.k8s.io", "tokenreviews", Verb::Create) => {
            return reviews::token_review(api, request, target).await;
        }
        ("authentication.k8s.io", "selfsubjectreviews", Verb::Create) => {
            let api_version = resource.api_version();
            return reviews::self_subject_review(api, request, target, &api_version).await;
        }
        ("authorization.k8s.io", "subjectaccessreviews", Verb::Create) => {
            return reviews::access_review(api, request, target, ReviewKind::SubjectAccessReview)
                .await;
        }
        ("authorization.k8s.io", "selfsubjectaccessreviews", Verb::Create) => {
            return reviews::access_review(
                api,
                request,
                target,
                ReviewKind::SelfSubjectAccessReview,
            )
            .await;
        }
        ("authorization.k8s.io", "localsubjectaccessreviews", Verb::Create) => {
            return reviews::access_review(
                api,
                request,
                target,
                ReviewKind::LocalSubjectAccessReview,
            )
            .await;
        }
        ("authorization.k8s.io", "selfsubjectrulesreviews", Verb::Create) => {
            return reviews::self_subject_rules_review(api, request, target).await;
        }
        ("", "bindings", Verb::Create) => {
            return binding::create(api, request, target).await;
        }
        ("", "componentstatuses", Verb::Get) => {
            return component_status::get(api, target).await;
        }
        ("", "componentstatuses", Verb::List) => {
            return component_status::list(api, request, target).await;
        }
        _ => {}
    }
    if target.resource.storage.is_empty() {
        // The other virtual create-only resources
        // are not served yet.
        return Err(Status::method_not_supported(
            &target.group_resource(),
            target.verb.as_str(),
        ));
    }
    match target.verb {
        Verb::Get => get::get(api, request, target).await,
        Verb::List => list::list(api, request, target).await,
        Verb::Create => create::create(api, request, target).await,
        Verb::Update => update::update(api, request, target).await,
        Verb::Delete => delete::delete(api, request, target).await,
        Verb::DeleteCollection => delete::delete_collection(api, request, target).await,
        Verb::Watch => watch::watch(api, request, target).await,
        Verb::Patch => patch_or_apply(api, request, target).await,
    }
}

/// `POST /apis/authentication.k8s.io/v1beta1/selfsubjectreviews`, which
/// kubectl before 1.28 sends for `kubectl auth whoami` (then v1alpha1).
/// kube 1.34 keeps the v1beta1 storage but serves it only when enabled by
/// `--runtime-config`; ferrokube answers it so those kubectl versions work,
/// without listing the version in discovery.
async fn beta_self_subject_review(
    api: &Arc<Api>,
    request: &ApiRequest,
    path: &ResourcePath,
) -> Option<ApiResponse> {
    const GROUP: &str = "authentication.k8s.io";
    if (
        path.group.as_str(),
        path.version.as_str(),
        path.resource.as_str(),
    ) != (GROUP, "v1beta1", "selfsubjectreviews")
        || path.verb != Verb::Create
        || path.name.is_some()
        || path.namespace.is_some()
    {
        return None;
    }
    let resource = api
        .registry
        .load()
        .lookup(GROUP, "v1", "selfsubjectreviews")?;
    let target = Target {
        resource,
        namespace: None,
        name: None,
        subresource: None,
        verb: path.verb,
        custom: None,
    };
    let capabilities = crate::negotiate::Capabilities {
        protobuf: crate::protobuf::message_for(&resource.api_version(), resource.kind).is_some(),
        table: false,
    };
    let negotiated = crate::negotiate::negotiate_output(request.header("accept"), capabilities);
    let outcome = match &negotiated {
        Ok(_) => {
            reviews::self_subject_review(api, request, &target, "authentication.k8s.io/v1beta1")
                .await
        }
        Err(status) => Err(status.clone()),
    };
    Some(representation::represent(
        outcome,
        request,
        &target,
        negotiated.ok(),
    ))
}

/// Server-side apply has its own handler; the other patch types share one.
async fn patch_or_apply(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    match PatchType::of_request_for(request, target.resource.custom)? {
        PatchType::Apply => apply::apply(api, request, target).await,
        kind => patch::patch(api, request, target, kind).await,
    }
}

/// Namespaced resources exist under `namespaces/NS/`, and only list/watch
/// across namespaces; cluster-scoped resources never under a namespace.
fn check_scope(target: &Target<'_>) -> Result<()> {
    match (target.resource.namespaced, target.namespace) {
        (false, Some(_)) => Err(Status::no_such_resource()),
        (true, None) => match target.verb {
            Verb::List | Verb::Watch => Ok(()),
            Verb::Create | Verb::DeleteCollection => Err(Status::method_not_allowed()),
            Verb::Get | Verb::Update | Verb::Patch | Verb::Delete => {
                Err(Status::no_such_resource())
            }
        },
        _ => Ok(()),
    }
}
