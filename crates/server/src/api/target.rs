//! A resolved request for one served resource ([`Target`]), its storage
//! keys, and reading the current object from a snapshot: what every handler
//! and write step shares.

use std::sync::Arc;

use crate::crd::CustomVersion;
use crate::object;
use crate::registry::ResourceDef;
use crate::route::Verb;
use crate::status::{GroupResource, Result, Status};

/// A request for one served resource, resolved.
pub struct Target<'a> {
    pub resource: &'static ResourceDef,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
    pub subresource: Option<&'a str>,
    pub verb: Verb,
    /// The custom-resource facts when `resource` is a custom resource.
    pub custom: Option<Arc<CustomVersion>>,
}

impl Target<'_> {
    /// The same resource and object, without the subresource.
    pub fn parent(&self) -> Target<'_> {
        Target {
            resource: self.resource,
            namespace: self.namespace,
            name: self.name,
            subresource: None,
            verb: self.verb,
            custom: self.custom.clone(),
        }
    }

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

impl Target<'_> {
    /// The current object of `key` as this request's version serves it:
    /// the base of a read-modify-write (update, patch, apply, delete,
    /// scale), so that a custom resource stored at another version is
    /// changed, compared and answered at the request's
    /// (`crd::conversion::serve`; built-in kinds served in several
    /// versions: `versions::to_version`).
    pub fn read_current(
        &self,
        snapshot: &ferrokube_store::Snapshot<object::StoredObject>,
        key: &str,
    ) -> Result<Option<(i64, serde_json::Value)>> {
        let mut current = read_stored(snapshot, key)?;
        if let (Some((_, value)), Some(custom)) = (current.as_mut(), self.custom.as_deref()) {
            crate::crd::conversion::serve(value, custom);
        }
        if let Some((_, value)) = current.as_mut() {
            crate::versions::to_version(value, self.resource)
                .map_err(|error| stored_conversion_failed(key, &error))?;
        }
        Ok(current)
    }
}

/// Current object of a key from a snapshot, as stored; corrupt objects read
/// as a 500 as kube's decode errors do.
fn read_stored(
    snapshot: &ferrokube_store::Snapshot<object::StoredObject>,
    key: &str,
) -> Result<Option<(i64, serde_json::Value)>> {
    match snapshot.get(key) {
        None => Ok(None),
        Some(entry) => match entry.object.value() {
            Some(value) => Ok(Some((entry.mod_revision, value))),
            None => Err(corrupt_object(
                key,
                entry.object.corrupt_error().unwrap_or_default(),
            )),
        },
    }
}

/// A stored object that does not decode, as kube reports it: the storage
/// layer's `NewCorruptObjError` (`storage/errors.go`, code `ErrCodeCorruptObj`)
/// turned into an internal error by `InterpretGetError`.
pub fn corrupt_object(key: &str, error: &str) -> Status {
    Status::internal(format!(
        "StorageError: corrupt object, Code: 7, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: {error}"
    ))
}

/// A stored object that does not convert to the request's version: kube's
/// storage decode error, an internal error (500) like a corrupt object.
pub fn stored_conversion_failed(key: &str, error: &crate::versions::Error) -> Status {
    corrupt_object(key, &error.to_string())
}
