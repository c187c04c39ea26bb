//! The pod subresources kube-apiserver hands to a kubelet (`log`, `exec`,
//! `attach`, `portforward`; `pkg/registry/core/pod/rest/log.go`,
//! `subresources.go`, and `pkg/registry/core/pod/strategy.go`
//! `LogLocation`, `streamLocation`, `PortForwardLocation`). ferrokube has no
//! kubelets, so it answers what kube answers before it would dial one: the
//! missing pod, an unknown or unnamed container, a pod without a node
//! (`log`: kube's empty 204; the streams: 400 `pod p does not have a host
//! assigned`), a node that does not exist. A pod bound to an existing node
//! gets a 503, where kube would reach that node's kubelet.

use std::sync::Arc;

use serde_json::Value;

use super::context::Api;
use super::exchange::ApiResponse;
use super::target::Target;
use crate::object;
use crate::status::{GroupResource, Result, Status};

fn containers<'a>(pod: &'a Value, field: &str) -> impl Iterator<Item = &'a str> {
    pod.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|container| container.get("name").and_then(Value::as_str))
}

/// `validateContainer` / `streamLocation`'s container choice: the named
/// container must exist (any kind); without a name the pod must have
/// exactly one (regular) container.
fn choose_container(pod: &Value, name: &str, requested: &str) -> Result<()> {
    if requested.is_empty() {
        let regular: Vec<&str> = containers(pod, "containers").collect();
        return match regular.len() {
            1 => Ok(()),
            0 => Err(Status::bad_request(format!(
                "a container name must be specified for pod {name}"
            ))),
            _ => {
                // `podutil.VisitContainers`: init, regular, ephemeral.
                let all: Vec<&str> = containers(pod, "initContainers")
                    .chain(containers(pod, "containers"))
                    .chain(containers(pod, "ephemeralContainers"))
                    .collect();
                Err(Status::bad_request(format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    all.join(" ")
                )))
            }
        };
    }
    let known = containers(pod, "initContainers")
        .chain(containers(pod, "containers"))
        .chain(containers(pod, "ephemeralContainers"))
        .any(|container| container == requested);
    if known {
        Ok(())
    } else {
        Err(Status::bad_request(format!(
            "container {requested} is not valid for pod {name}"
        )))
    }
}

/// `NodeConnectionInfoGetter.GetConnectionInfo`: the node must exist; its
/// kubelet cannot be reached from here.
fn kubelet_of(api: &Api, node: &str) -> Result<ApiResponse> {
    let registry = api.registry.load();
    let nodes = registry
        .lookup("", "v1", "nodes")
        .ok_or_else(|| Status::internal("nodes are not served"))?;
    let key = super::target::key_for(nodes, None, node);
    if api.store.snapshot().get(&key).is_none() {
        return Err(Status::not_found(&GroupResource::new("", "nodes"), node));
    }
    Err(Status {
        code: 503,
        reason: "ServiceUnavailable",
        message: format!(
            "the kubelet of node {node:?} cannot be reached: this server runs no kubelets"
        ),
        details: None,
    })
}

/// `subresource` of the pod `target` names, for `container` (the
/// request's, or the admitted options object's for the streams).
pub(super) async fn connect(
    api: &Arc<Api>,
    target: &Target<'_>,
    subresource: &str,
    container: &str,
) -> Result<ApiResponse> {
    let name = target.name.unwrap_or_default();
    let pods = target.parent();
    let snapshot = api.store.snapshot();
    let (_, pod) = pods
        .read_current(&snapshot, &pods.key(name))?
        .ok_or_else(|| Status::not_found(&GroupResource::new("", "pods"), name))?;
    if subresource != "portforward" {
        choose_container(&pod, name, container)?;
    }
    let node = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if node.is_empty() {
        if subresource == "log" {
            // An empty location: `StreamObject` answers 204 No Content.
            return Ok(ApiResponse::bytes(204, "text/plain", bytes::Bytes::new()));
        }
        return Err(Status::bad_request(format!(
            "pod {} does not have a host assigned",
            object::name(&pod)
        )));
    }
    kubelet_of(api, node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn containers_are_chosen_as_kube_chooses_them() {
        let one = json!({"spec": {"containers": [{"name": "c"}]}});
        assert!(choose_container(&one, "p", "").is_ok());
        assert_eq!(
            choose_container(&one, "p", "x").unwrap_err().message,
            "container x is not valid for pod p"
        );
        let two = json!({"spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "a"}, {"name": "b"}]}});
        assert_eq!(
            choose_container(&two, "p", "").unwrap_err().message,
            "a container name must be specified for pod p, choose one of: [i a b]"
        );
        assert!(choose_container(&two, "p", "i").is_ok());
        let none = json!({"spec": {}});
        assert_eq!(
            choose_container(&none, "p", "").unwrap_err().message,
            "a container name must be specified for pod p"
        );
    }
}
