//! `componentstatuses` (core v1, deprecated since 1.19, still served by
//! kube-apiserver 1.34): nothing stored; every GET and LIST probes the
//! components kube's `componentStatusStorage.serversToValidate` names —
//! kube-controller-manager and kube-scheduler on their default secure
//! ports of 127.0.0.1 (HTTPS without certificate checks, `/healthz`), and
//! the storage as `etcd-0` — as `pkg/registry/core/componentstatus` does.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::selection::Selection;
use super::target::Target;
use crate::status::{Result, Status};

mod probe;

use probe::Probe;

/// `probeTimeOut` of `componentstatus/validator.go`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether `resource` is core v1 componentstatuses.
pub fn served(resource: &crate::registry::ResourceDef) -> bool {
    (resource.group, resource.plural) == ("", "componentstatuses")
}

/// What kube probes, by name: `KubeControllerManagerPort` 10257 and
/// `DefaultKubeSchedulerPort` 10259; one `etcd-N` per storage backend (one
/// here: the store, embedded or etcd).
const COMPONENTS: [(&str, Option<u16>); 3] = [
    ("controller-manager", Some(10257)),
    ("etcd-0", None),
    ("scheduler", Some(10259)),
];

/// `REST.Get`: an unknown name is kube's plain error, a 500.
pub async fn get(api: &Api, target: &Target<'_>) -> Result<ApiResponse> {
    let name = target.name.unwrap_or_default();
    let Some(&(name, port)) = COMPONENTS.iter().find(|(known, _)| *known == name) else {
        return Err(Status::internal(format!("Component not found: {name}")));
    };
    let mut status = component_status(api, name, port).await;
    if let Some(map) = status.as_object_mut() {
        map.insert("kind".into(), json!("ComponentStatus"));
        map.insert("apiVersion".into(), json!("v1"));
    }
    Ok(ApiResponse::object(200, status))
}

/// `REST.List`: every component probed at once; label and field selectors
/// filter the answers (componentstatuses have no labels, so a label
/// selector that needs one selects nothing).
pub async fn list(api: &Api, request: &ApiRequest, target: &Target<'_>) -> Result<ApiResponse> {
    let selection = Selection::from_request(request, target)?;
    let probes = COMPONENTS
        .iter()
        .map(|&(name, port)| component_status(api, name, port));
    let items: Vec<Value> = futures::future::join_all(probes)
        .await
        .into_iter()
        .filter(|status| {
            selection.labels.matches(None)
                && selection
                    .fields
                    .matches(target.resource.group, target.resource.kind, status)
        })
        .collect();
    Ok(ApiResponse::object(
        200,
        json!({"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": items}),
    ))
}

/// `getComponentStatus`: one `Healthy` condition from the probe's result.
async fn component_status(api: &Api, name: &str, port: Option<u16>) -> Value {
    let probe = match port {
        Some(port) => probe::https_healthz(port, PROBE_TIMEOUT).await,
        None => store_probe(api).await,
    };
    let mut condition = Map::new();
    condition.insert("type".into(), json!("Healthy"));
    condition.insert("status".into(), json!(probe.condition_status()));
    if !probe.message.is_empty() {
        condition.insert("message".into(), json!(probe.message));
    }
    if !probe.error.is_empty() {
        condition.insert("error".into(), json!(probe.error));
    }
    json!({"metadata": {"name": name}, "conditions": [condition]})
}

/// `EtcdServer.DoServerCheck`: the storage answers a read, or its error.
async fn store_probe(api: &Api) -> Probe {
    let read = api.store.backend().current_revision();
    match tokio::time::timeout(PROBE_TIMEOUT, read).await {
        Ok(Ok(_)) => Probe::success("ok"),
        Ok(Err(error)) => Probe::failure_with_error(error.to_string()),
        Err(_) => Probe::failure_with_error("context deadline exceeded"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_kubes_names_in_order() {
        let names: Vec<&str> = COMPONENTS.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["controller-manager", "etcd-0", "scheduler"]);
    }
}
