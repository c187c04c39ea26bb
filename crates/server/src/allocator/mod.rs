//! Service ClusterIP and NodePort allocation (`pkg/registry/core/service/storage/alloc.go`).
//!
//! What is allocated is derived from the stored Services themselves: the
//! allocator follows the store's change log (and rebuilds from a snapshot at
//! start or when it fell behind the history window), so a deleted Service's
//! IP and ports are free as soon as the delete is committed, and nothing
//! besides the Services needs persisting. An allocation in flight is held
//! by a [`Reservation`] until its write is committed (or fails).

mod ip_range;
mod port_range;
mod service;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use serde_json::Value;

pub use ip_range::{IpRange, Lookup};
pub use port_range::PortRange;

use crate::object::ObjectStore;
use crate::registry::ResourceDef;
use crate::status::Status;

/// kube-apiserver's default `--service-cluster-ip-range`.
pub const DEFAULT_SERVICE_CLUSTER_IP_RANGE: &str = "10.0.0.0/24";
/// Where Services are stored.
const SERVICES_PREFIX: &str = "/registry/services/specs/";

#[derive(Debug, Default)]
struct Held {
    ips: Vec<IpAddr>,
    ports: Vec<u16>,
}

struct Inner {
    ips: IpRange,
    ports: PortRange,
    /// Service key → what it holds, as stored.
    held: HashMap<String, Held>,
    ip_owner: HashMap<IpAddr, String>,
    port_owner: HashMap<u16, String>,
    /// In-flight allocations: value → reservation id.
    pending_ips: HashMap<IpAddr, u64>,
    pending_ports: HashMap<u16, u64>,
    /// The store revision `held` reflects; None: not built yet.
    revision: Option<ferrokube_store::Revision>,
    next_reservation: u64,
}

pub struct ServiceAllocator {
    inner: Mutex<Inner>,
}

impl Default for ServiceAllocator {
    fn default() -> Self {
        ServiceAllocator::new(
            IpRange::parse(DEFAULT_SERVICE_CLUSTER_IP_RANGE).unwrap_or_else(|_| unreachable!()),
            PortRange::default(),
        )
    }
}

/// Holds in-flight allocations until dropped (after the commit).
pub struct Reservation<'a> {
    allocator: &'a ServiceAllocator,
    id: u64,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.allocator.lock().release(self.id);
    }
}

fn held_by(service: &Value) -> Held {
    let mut held = Held::default();
    let spec = service.get("spec");
    let ips = spec
        .and_then(|spec| spec.get("clusterIPs"))
        .and_then(Value::as_array)
        .map(|ips| ips.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .filter(|ips| !ips.is_empty())
        .or_else(|| {
            spec.and_then(|spec| spec.get("clusterIP"))
                .and_then(Value::as_str)
                .map(|ip| vec![ip])
        })
        .unwrap_or_default();
    held.ips = ips.iter().filter_map(|ip| ip.parse().ok()).collect();
    for port in spec
        .and_then(|spec| spec.get("ports"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(node_port) = port.get("nodePort").and_then(Value::as_u64) {
            held.ports.extend(u16::try_from(node_port).ok());
        }
    }
    if let Some(port) = spec
        .and_then(|spec| spec.get("healthCheckNodePort"))
        .and_then(Value::as_u64)
    {
        held.ports.extend(u16::try_from(port).ok());
    }
    held
}

impl ServiceAllocator {
    pub fn new(ips: IpRange, ports: PortRange) -> ServiceAllocator {
        ServiceAllocator {
            inner: Mutex::new(Inner {
                ips,
                ports,
                held: HashMap::new(),
                ip_owner: HashMap::new(),
                port_owner: HashMap::new(),
                pending_ips: HashMap::new(),
                pending_ports: HashMap::new(),
                revision: None,
                next_reservation: 1,
            }),
        }
    }

    /// Set the ranges (`--service-cluster-ip-range`, `--service-node-port-range`).
    pub fn configure(&self, ips: IpRange, ports: PortRange) {
        let mut inner = self.lock();
        inner.ips = ips;
        inner.ports = ports;
    }

    pub fn ip_range(&self) -> IpRange {
        self.lock().ips.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Bring the view of what is allocated up to the store's current state.
    fn catch_up(inner: &mut Inner, store: &ObjectStore) {
        if let Some(revision) = inner.revision {
            if let Ok(changes) = store.changes_since(revision, usize::MAX) {
                for change in &changes {
                    if !change.key.starts_with(SERVICES_PREFIX) {
                        continue;
                    }
                    let now = if change.deleted {
                        None
                    } else {
                        change.object.value()
                    };
                    inner.set(&change.key, now.as_ref());
                }
                if let Some(last) = changes.last() {
                    inner.revision = Some(last.revision);
                }
                return;
            }
        }
        // First use, or fallen out of the history window: rebuild.
        let snapshot = store.snapshot();
        inner.held.clear();
        inner.ip_owner.clear();
        inner.port_owner.clear();
        for (key, entry) in snapshot.range(SERVICES_PREFIX, None) {
            inner.set(key, entry.object.value().as_ref());
        }
        inner.revision = Some(snapshot.revision);
    }
}

impl Inner {
    /// Forget the in-flight allocations of reservation `id`.
    fn release(&mut self, id: u64) {
        self.pending_ips.retain(|_, holder| *holder != id);
        self.pending_ports.retain(|_, holder| *holder != id);
    }

    fn set(&mut self, key: &str, service: Option<&Value>) {
        if let Some(old) = self.held.remove(key) {
            for ip in old.ips {
                if self.ip_owner.get(&ip).is_some_and(|owner| owner == key) {
                    self.ip_owner.remove(&ip);
                }
            }
            for port in old.ports {
                if self.port_owner.get(&port).is_some_and(|owner| owner == key) {
                    self.port_owner.remove(&port);
                }
            }
        }
        let Some(service) = service else {
            return;
        };
        let held = held_by(service);
        for ip in &held.ips {
            self.ip_owner.insert(*ip, key.to_string());
        }
        for port in &held.ports {
            self.port_owner.insert(*port, key.to_string());
        }
        self.held.insert(key.to_string(), held);
    }
}

fn is_services(resource: &ResourceDef) -> bool {
    (resource.group, resource.plural) == ("", "services")
}

fn service_key(service: &Value) -> String {
    format!(
        "{SERVICES_PREFIX}{}/{}",
        crate::object::namespace(service),
        crate::object::name(service)
    )
}

/// Create hook: default the IP family fields, allocate the ClusterIP and
/// node ports of a new Service (honouring requested ones). Hold the
/// returned reservation until the write is committed.
pub fn on_create<'a>(
    allocator: &'a ServiceAllocator,
    store: &ObjectStore,
    resource: &ResourceDef,
    object: &mut Value,
) -> Result<Option<Reservation<'a>>, Status> {
    if !is_services(resource) {
        return Ok(None);
    }
    let key = service_key(object);
    let mut inner = allocator.lock();
    ServiceAllocator::catch_up(&mut inner, store);
    let id = inner.next_reservation;
    inner.next_reservation += 1;
    let result = service::allocate_create(&mut inner, &key, id, object);
    if result.is_err() {
        inner.release(id);
    }
    // The lock is released before a reservation could be dropped.
    drop(inner);
    result?;
    Ok(Some(Reservation { allocator, id }))
}

/// Update hook: keep what the Service holds when the new body omits it,
/// allocate what a type change or a new port needs.
pub fn on_update<'a>(
    allocator: &'a ServiceAllocator,
    store: &ObjectStore,
    resource: &ResourceDef,
    subresource: Option<&str>,
    old: &Value,
    object: &mut Value,
) -> Result<Option<Reservation<'a>>, Status> {
    if !is_services(resource) || subresource.is_some() {
        return Ok(None);
    }
    let key = service_key(object);
    let mut inner = allocator.lock();
    ServiceAllocator::catch_up(&mut inner, store);
    let id = inner.next_reservation;
    inner.next_reservation += 1;
    let result = service::allocate_update(&mut inner, &key, id, old, object);
    if result.is_err() {
        inner.release(id);
    }
    // The lock is released before a reservation could be dropped.
    drop(inner);
    result?;
    Ok(Some(Reservation { allocator, id }))
}
