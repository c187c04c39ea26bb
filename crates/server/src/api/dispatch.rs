//! Resolve a routed resource path against the registry and hand it to its verb.
//! Scope and verb checks follow how kube-apiserver installs routes
//! (`endpoints/installer.go`): a path that is not installed is a 404, an
//! installed path without the method is a 405.

use std::sync::Arc;

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::patch_type::PatchType;
use super::target::Target;
use super::{apply, create, delete, get, list, patch, representation, scale, update, watch};
use crate::route::{ResourcePath, Verb};
use crate::status::{Result, Status};

pub(super) async fn handle(
    api: &Arc<Api>,
    request: &ApiRequest,
    path: &ResourcePath,
) -> Result<ApiResponse> {
    let Some(resource) = api
        .registry
        .lookup(&path.group, &path.version, &path.resource)
    else {
        if !api.registry.serves_version(&path.group, &path.version) {
            // No such group version: the mux's plain 404, as kube answers.
            return Ok(ApiResponse::text(404, "404 page not found\n"));
        }
        let status = Status::no_such_resource();
        return Ok(representation::represent_error(&status, request));
    };
    let target = Target {
        resource,
        namespace: path.namespace.as_deref(),
        name: path.name.as_deref(),
        subresource: path.subresource.as_deref(),
        verb: path.verb,
    };
    if let Err(status) = check_scope(&target) {
        return Ok(representation::represent_error(&status, request));
    }
    // The response's representation is settled before any work is done, so
    // that a write the client cannot read is refused (406) before it happens
    // (`handlers/create.go` et al. negotiate first).
    let capabilities = crate::negotiate::Capabilities {
        protobuf: crate::protobuf::message_for(&resource.api_version(), resource.kind).is_some(),
        table: !resource.storage.is_empty() && target.subresource != Some("scale"),
    };
    let negotiated = crate::negotiate::negotiate_output(request.header("accept"), capabilities);
    let outcome = match &negotiated {
        Ok(_) => dispatch(api, request, &target).await,
        Err(status) => Err(status.clone()),
    };
    Ok(representation::represent(
        outcome,
        request,
        resource,
        negotiated.ok(),
    ))
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
            ("scale", Verb::Get) => scale::get(api, request, target).await,
            ("scale", Verb::Update) => scale::update(api, request, target).await,
            (_, verb) => Err(Status::method_not_supported(
                &target.group_resource(),
                verb.as_str(),
            )),
        };
    }
    if !resource.has_verb(target.verb.as_str()) {
        return Err(Status::method_not_supported(
            &target.group_resource(),
            target.verb.as_str(),
        ));
    }
    if target.resource.storage.is_empty() {
        // Virtual create-only resources (reviews, bindings) are not served yet.
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

/// Server-side apply has its own handler; the other patch types share one.
async fn patch_or_apply(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
) -> Result<ApiResponse> {
    match PatchType::of_request(request)? {
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
