//! Objects that exist from the first start: the system namespaces
//! (kube-apiserver's `SystemNamespaces`: default, kube-system, kube-public,
//! kube-node-lease), and the `default/kubernetes` Service with its
//! Endpoints and EndpointSlice, which kube-apiserver keeps itself (not a
//! controller: always on).

use serde_json::json;

use crate::api::Api;
use crate::object;

pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error("creating namespace {name}: {message}")]
    Namespace { name: String, message: String },
    #[error("reconciling {path}: {message}")]
    Object { path: String, message: String },
}

pub async fn ensure_system_namespaces(api: &Api) -> Result<(), BootstrapError> {
    for name in SYSTEM_NAMESPACES {
        let key = format!("/registry/namespaces/{name}");
        if api.store.snapshot().get(&key).is_some() {
            continue;
        }
        let namespace = json!({
            "kind": "Namespace",
            "apiVersion": "v1",
            "metadata": {
                "name": name,
                "uid": uuid::Uuid::new_v4().to_string(),
                "creationTimestamp": crate::go::time::now_rfc3339(),
                "labels": {"kubernetes.io/metadata.name": name},
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        });
        let txn = ferrokube_store::Txn::single(ferrokube_store::Op::Put {
            key,
            value: object::storage_bytes(&namespace),
            expect: ferrokube_store::Expect::Absent,
        });
        match api.store.commit(txn).await {
            Ok(_) => {}
            // Another replica created it first.
            Err(ferrokube_store::StoreError::Backend(
                ferrokube_store::BackendError::PreconditionFailed { .. },
            )) => {}
            Err(error) => {
                return Err(BootstrapError::Namespace {
                    name: name.to_string(),
                    message: error.to_string(),
                })
            }
        }
    }
    Ok(())
}

/// The Service port of `default/kubernetes`.
const KUBERNETES_SERVICE_PORT: u16 = 443;

/// What kube-apiserver keeps about itself in `default`: the `kubernetes`
/// Service (the first IP of the service range, port 443 → the secure port)
/// and its Endpoints and EndpointSlice naming this server
/// (`controlplane/controller/kubernetesservice`, `controlplane/reconcilers`).
#[derive(Debug, Clone)]
pub struct KubernetesService {
    /// The secure port clients reach this server on.
    pub port: u16,
    /// The address the endpoints name: the bind address, or loopback when
    /// bound to every address.
    pub endpoint_ip: std::net::IpAddr,
}

impl KubernetesService {
    pub fn new(bind_address: std::net::IpAddr, port: u16) -> Self {
        let endpoint_ip = match bind_address {
            std::net::IpAddr::V4(v4) if v4.is_unspecified() => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::IpAddr::V6(v6) if v6.is_unspecified() => std::net::Ipv6Addr::LOCALHOST.into(),
            other => other,
        };
        KubernetesService { port, endpoint_ip }
    }

    /// Create or repair the Service, Endpoints and EndpointSlice.
    pub async fn reconcile(&self, api: &std::sync::Arc<Api>) -> Result<(), BootstrapError> {
        let client = crate::controllers::Client::apiserver(api.clone());
        let service_ip = api.services.ip_range().address(0).to_string();
        let port = json!([{
            "name": "https",
            "protocol": "TCP",
            "port": KUBERNETES_SERVICE_PORT,
            "targetPort": self.port,
        }]);
        let service = json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "kubernetes",
                "namespace": "default",
                "labels": {"component": "apiserver", "provider": "kubernetes"},
            },
            "spec": {
                "ports": port,
                "clusterIP": service_ip,
                "sessionAffinity": "None",
                "type": "ClusterIP",
            },
        });
        ensure(
            &client,
            "/api/v1/namespaces/default/services/kubernetes",
            &service,
            |existing| {
                existing.pointer("/spec/ports") == Some(&port)
                    && existing.pointer("/spec/type") == Some(&json!("ClusterIP"))
            },
            |existing, wanted| {
                existing["spec"]["ports"] = wanted["spec"]["ports"].clone();
                existing["spec"]["type"] = json!("ClusterIP");
            },
        )
        .await?;
        let ip = self.endpoint_ip.to_string();
        let endpoint_ports = json!([{"name": "https", "port": self.port, "protocol": "TCP"}]);
        let subsets = json!([{"addresses": [{"ip": ip}], "ports": endpoint_ports}]);
        let endpoints = json!({
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {
                "name": "kubernetes",
                "namespace": "default",
                "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
            },
            "subsets": subsets,
        });
        ensure(
            &client,
            "/api/v1/namespaces/default/endpoints/kubernetes",
            &endpoints,
            |existing| existing.get("subsets") == Some(&subsets),
            |existing, wanted| {
                existing["subsets"] = wanted["subsets"].clone();
            },
        )
        .await?;
        let address_type = if self.endpoint_ip.is_ipv4() {
            "IPv4"
        } else {
            "IPv6"
        };
        let slice_endpoints = json!([{"addresses": [ip], "conditions": {"ready": true}}]);
        let slice = json!({
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": "kubernetes",
                "namespace": "default",
                "labels": {"kubernetes.io/service-name": "kubernetes"},
            },
            "addressType": address_type,
            "endpoints": slice_endpoints,
            "ports": endpoint_ports,
        });
        ensure(
            &client,
            "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes",
            &slice,
            |existing| {
                existing.get("endpoints") == Some(&slice_endpoints)
                    && existing.get("ports") == Some(&endpoint_ports)
                    && existing.get("addressType") == Some(&json!(address_type))
            },
            |existing, wanted| {
                for field in ["endpoints", "ports", "addressType"] {
                    existing[field] = wanted[field].clone();
                }
            },
        )
        .await
    }

    /// Reconcile now, then every 10 seconds until the server stops (kube's
    /// endpoint reconciler interval), so a deleted or edited object comes
    /// back. Among replicas only the leader writes, so the endpoints do not
    /// flap between replicas' addresses.
    pub fn spawn(
        self,
        api: std::sync::Arc<Api>,
        leading: tokio::sync::watch::Receiver<bool>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut shutdown = api.shutdown_signal();
            loop {
                if *leading.borrow() {
                    if let Err(error) = self.reconcile(&api).await {
                        tracing::warn!(%error, "reconciling default/kubernetes");
                    }
                }
                tokio::select! {
                    _ = tokio::time::sleep(std::time::Duration::from_secs(10)) => {}
                    _ = shutdown.wait_for(|stop| *stop) => return,
                }
            }
        })
    }
}

/// Create `wanted` at `path` when absent; when present and `matches` says it
/// drifted, `repair` it and write it back.
async fn ensure(
    client: &crate::controllers::Client,
    path: &str,
    wanted: &serde_json::Value,
    matches: impl Fn(&serde_json::Value) -> bool,
    repair: impl Fn(&mut serde_json::Value, &serde_json::Value),
) -> Result<(), BootstrapError> {
    let failed = |error: crate::controllers::ClientError| BootstrapError::Object {
        path: path.to_string(),
        message: error.to_string(),
    };
    match client.get(path).await {
        Ok(mut existing) => {
            if matches(&existing) {
                return Ok(());
            }
            repair(&mut existing, wanted);
            match client.update(path, &existing).await {
                Ok(_) => Ok(()),
                Err(error) if error.is_conflict() => Ok(()),
                Err(error) => Err(failed(error)),
            }
        }
        Err(error) if error.is_not_found() => {
            let collection = path.rsplit_once('/').map_or(path, |(parent, _)| parent);
            match client.create(collection, wanted).await {
                Ok(_) => Ok(()),
                Err(error) if error.is_already_exists() => Ok(()),
                Err(error) => Err(failed(error)),
            }
        }
        Err(error) => Err(failed(error)),
    }
}
