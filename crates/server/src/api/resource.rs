//! Resolve a routed resource path against the registry and hand it to its verb.
//! Scope and verb checks follow how kube-apiserver installs routes
//! (`endpoints/installer.go`): a path that is not installed is a 404, an
//! installed path without the method is a 405.

use std::sync::Arc;

use super::{create, delete, get, list, patch, scale, update, watch, Api, ApiRequest, ApiResponse};
use crate::object;
use crate::registry::ResourceDef;
use crate::route::{ResourcePath, Verb};
use crate::status::{GroupResource, Result, Status};

/// A request for one served resource, resolved.
pub struct Target<'a> {
    pub resource: &'static ResourceDef,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
    pub subresource: Option<&'a str>,
    pub verb: Verb,
}

impl Target<'_> {
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(self.resource.group, self.resource.plural)
    }

    /// The etcd key of one object (`/registry/<storage>/<ns>/<name>`).
    pub fn key(&self, name: &str) -> String {
        key_for(self.resource, self.namespace, name)
    }

    /// The key prefix of a collection: one namespace, or all of them.
    pub fn prefix(&self) -> String {
        match self.namespace {
            Some(namespace) if self.resource.namespaced => {
                format!("/registry/{}/{namespace}/", self.resource.storage)
            }
            _ => format!("/registry/{}/", self.resource.storage),
        }
    }
}

pub fn key_for(resource: &ResourceDef, namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(namespace) if resource.namespaced => {
            format!("/registry/{}/{namespace}/{name}", resource.storage)
        }
        _ => format!("/registry/{}/{name}", resource.storage),
    }
}

pub(super) async fn handle(
    api: &Arc<Api>,
    request: &ApiRequest,
    path: ResourcePath,
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
        return Ok(super::representation::represent_error(&status, request));
    };
    let target = Target {
        resource,
        namespace: path.namespace.as_deref(),
        name: path.name.as_deref(),
        subresource: path.subresource.as_deref(),
        verb: path.verb,
    };
    if let Err(status) = check_scope(&target) {
        return Ok(super::representation::represent_error(&status, request));
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
    Ok(super::representation::represent(
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
            ("status" | "scale", Verb::Patch) => patch::patch(api, request, target).await,
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
        Verb::Patch => patch::patch(api, request, target).await,
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

/// 404 `namespaces "x" not found` when a namespaced request names a missing namespace
/// (kube's NamespaceLifecycle admission for writes).
pub fn require_namespace(api: &Api, target: &Target<'_>) -> Result<()> {
    let Some(namespace) = target.namespace.filter(|_| target.resource.namespaced) else {
        return Ok(());
    };
    let key = format!("/registry/namespaces/{namespace}");
    if api.store.snapshot().get(&key).is_some() {
        Ok(())
    } else {
        Err(Status::not_found(
            &GroupResource::new("", "namespaces"),
            namespace,
        ))
    }
}

/// Fill or check apiVersion and kind of a body against the endpoint's kind
/// (`handlers/create.go`: the decoder defaults them from the endpoint; a
/// mismatching group version is a 400).
pub fn check_type(body: &mut serde_json::Value, api_version: &str, kind: &str) -> Result<()> {
    let body_api_version = body
        .get("apiVersion")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    let body_kind = body
        .get("kind")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    if !body_api_version.is_empty() && body_api_version != api_version {
        return Err(Status::bad_request(format!(
            "the API version in the data ({body_api_version}) does not match the expected API version ({api_version})"
        )));
    }
    if !body_kind.is_empty() && body_kind != kind {
        return Err(Status::bad_request(format!(
            "the kind in the data ({body_kind}) does not match the expected kind ({kind})"
        )));
    }
    if let Some(map) = body.as_object_mut() {
        map.insert(
            "apiVersion".into(),
            serde_json::Value::String(api_version.to_string()),
        );
        map.insert("kind".into(), serde_json::Value::String(kind.to_string()));
    }
    Ok(())
}

/// Current object of a key from a snapshot; corrupt objects read as a 500 as kube's decode errors do.
pub fn read_current(
    snapshot: &ferrokube_store::Snapshot<object::StoredObject>,
    key: &str,
) -> Result<Option<(i64, serde_json::Value)>> {
    match snapshot.get(key) {
        None => Ok(None),
        Some(entry) => match entry.object.value() {
            Some(value) => Ok(Some((entry.mod_revision, value))),
            None => Err(super::deletion::corrupt_object(
                key,
                entry.object.corrupt_error().unwrap_or_default(),
            )),
        },
    }
}
