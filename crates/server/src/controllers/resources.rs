//! From store keys to resources and back: which resource a
//! `/registry/<storage>/<namespace>/<name>` key belongs to, and where an
//! ownerReference's `apiVersion` + `kind` is stored.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::registry::{LiveRegistry, Registry, ResourceDef};

/// One parsed store key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    pub resource: &'static ResourceDef,
    /// Empty for cluster-scoped objects.
    pub namespace: String,
    pub name: String,
}

/// Resolves keys and kinds against the resource table.
pub struct Resources {
    /// Storage segment → the resource served under the group's preferred version.
    by_storage: HashMap<&'static str, &'static ResourceDef>,
    /// (group, kind) → resource (any served version shares the storage).
    by_kind: HashMap<(&'static str, &'static str), &'static ResourceDef>,
}

impl Resources {
    pub fn new(registry: &Registry) -> Resources {
        let mut by_storage: HashMap<&'static str, &'static ResourceDef> = HashMap::new();
        let mut by_kind = HashMap::new();
        for &resource in registry.resources() {
            if resource.storage.is_empty() {
                continue;
            }
            let preferred = registry
                .group(resource.group)
                .map(|group| group.preferred() == resource.version)
                .unwrap_or(true);
            by_storage
                .entry(resource.storage)
                .and_modify(|current| {
                    if preferred {
                        *current = resource;
                    }
                })
                .or_insert(resource);
            let entry = by_kind
                .entry((resource.group, resource.kind))
                .or_insert(resource);
            if preferred {
                *entry = resource;
            }
        }
        Resources {
            by_storage,
            by_kind,
        }
    }

    /// Every distinct stored resource, one definition each.
    pub fn stored(&self) -> impl Iterator<Item = &'static ResourceDef> + '_ {
        let mut all: Vec<&'static ResourceDef> = self.by_storage.values().copied().collect();
        all.sort_by_key(|resource| resource.storage);
        all.into_iter()
    }

    pub fn parse_key(&self, key: &str) -> Option<KeyInfo> {
        let rest = key.strip_prefix("/registry/")?;
        // Storage segments hold one or two path segments
        // (`configmaps`, `services/specs`, `apiextensions.k8s.io/customresourcedefinitions`).
        let mut split_points = rest.match_indices('/').map(|(at, _)| at);
        let first = split_points.next()?;
        let second = split_points.next();
        for end in [Some(first), second].into_iter().flatten() {
            let Some(resource) = self.by_storage.get(&rest[..end]) else {
                continue;
            };
            let remainder = &rest[end + 1..];
            if resource.namespaced {
                let (namespace, name) = remainder.split_once('/')?;
                if name.contains('/') {
                    continue;
                }
                return Some(KeyInfo {
                    resource,
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                });
            }
            if remainder.contains('/') {
                continue;
            }
            return Some(KeyInfo {
                resource,
                namespace: String::new(),
                name: remainder.to_string(),
            });
        }
        None
    }

    /// The resource an ownerReference's `apiVersion` and `kind` name.
    pub fn by_api_version_kind(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Option<&'static ResourceDef> {
        let group = match api_version.split_once('/') {
            Some((group, _version)) => group,
            None => "",
        };
        self.by_kind.get(&(group, kind)).copied()
    }
}

/// [`Resources`] of the registry being served, rebuilt when CRDs change it
/// (so controllers see custom resources established after they started).
pub struct LiveResources {
    registry: Arc<LiveRegistry>,
    cached: Mutex<(Arc<Registry>, Arc<Resources>)>,
}

impl LiveResources {
    pub fn new(registry: Arc<LiveRegistry>) -> LiveResources {
        let now = registry.load();
        let resources = Arc::new(Resources::new(&now));
        LiveResources {
            registry,
            cached: Mutex::new((now, resources)),
        }
    }

    /// The resources of the current registry snapshot.
    pub fn current(&self) -> Arc<Resources> {
        let now = self.registry.load();
        let mut cached = self
            .cached
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !Arc::ptr_eq(&cached.0, &now) {
            let resources = Arc::new(Resources::new(&now));
            *cached = (now, resources);
        }
        cached.1.clone()
    }
}

/// The store key of an object of `resource`.
pub fn key_of(resource: &ResourceDef, namespace: &str, name: &str) -> String {
    if resource.namespaced {
        format!("/registry/{}/{namespace}/{name}", resource.storage)
    } else {
        format!("/registry/{}/{name}", resource.storage)
    }
}

/// The prefix under which every object of `resource` in `namespace` lives.
pub fn namespace_prefix(resource: &ResourceDef, namespace: &str) -> String {
    format!("/registry/{}/{namespace}/", resource.storage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtin_resources;

    #[test]
    fn keys_resolve_to_resources() {
        let resources = Resources::new(&Registry::new(builtin_resources()));
        let info = resources
            .parse_key("/registry/services/specs/default/kubernetes")
            .unwrap();
        assert_eq!(
            (
                info.resource.plural,
                info.namespace.as_str(),
                info.name.as_str()
            ),
            ("services", "default", "kubernetes")
        );
        let info = resources
            .parse_key("/registry/namespaces/kube-system")
            .unwrap();
        assert_eq!(
            (info.resource.plural, info.name.as_str()),
            ("namespaces", "kube-system")
        );
        let info = resources
            .parse_key("/registry/deployments/ns1/web")
            .unwrap();
        assert_eq!(info.resource.group, "apps");
        assert!(resources.parse_key("/registry/nothing/x").is_none());
        let rs = resources
            .by_api_version_kind("apps/v1", "ReplicaSet")
            .unwrap();
        assert_eq!(rs.plural, "replicasets");
        assert_eq!(
            resources.by_api_version_kind("v1", "Pod").unwrap().plural,
            "pods"
        );
    }
}
