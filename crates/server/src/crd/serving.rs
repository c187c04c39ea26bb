//! Keeps the served registry equal to the established CRDs in the store, on
//! every replica (not only the leader: each one serves what its own store
//! holds). Reads the store's change log like a controller and swaps in a new
//! registry snapshot whenever a CRD changes.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::definition::served_versions;
use crate::object::feed::{Feed, ObjectSnapshot, Update};
use crate::object::ObjectStore;
use crate::registry::{builtin_resources, LiveRegistry, Registry};

/// Where kube-apiserver stores CRDs.
pub const CRD_PREFIX: &str = "/registry/apiextensions.k8s.io/customresourcedefinitions/";

/// Runs until `shutdown` turns true.
pub async fn keep_registry_current(
    store: ObjectStore,
    registry: Arc<LiveRegistry>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    registry.set_followed();
    let (mut feed, snapshot) = Feed::start(&store);
    let mut crds = load(&snapshot);
    registry.replace(build(&crds));
    registry.mark_seen(snapshot.revision);
    loop {
        let update = tokio::select! {
            update = feed.next() => update,
            _ = shutdown.wait_for(|stop| *stop) => return,
        };
        match update {
            Update::Resync(snapshot) => {
                crds = load(&snapshot);
                registry.replace(build(&crds));
                registry.mark_seen(snapshot.revision);
            }
            Update::Changes(changes) => {
                let mut changed = false;
                for change in &changes {
                    let Some(name) = change.key.strip_prefix(CRD_PREFIX) else {
                        continue;
                    };
                    changed = true;
                    match change.object.value() {
                        Some(crd) if !change.deleted => {
                            crds.insert(name.to_string(), crd);
                        }
                        _ => {
                            crds.remove(name);
                        }
                    }
                }
                if changed {
                    registry.replace(build(&crds));
                }
                if let Some(last) = changes.last() {
                    registry.mark_seen(last.revision);
                }
            }
        }
    }
}

fn load(snapshot: &ObjectSnapshot) -> BTreeMap<String, Value> {
    snapshot
        .range(CRD_PREFIX, None)
        .filter_map(|(key, entry)| {
            let name = key.strip_prefix(CRD_PREFIX)?;
            Some((name.to_string(), entry.object.value()?))
        })
        .collect()
}

/// The registry serving the built-in kinds and the established CRDs, custom
/// groups in name order.
pub fn build(crds: &BTreeMap<String, Value>) -> Registry {
    let mut custom: Vec<_> = crds
        .values()
        .flat_map(served_versions)
        .map(|(definition, facts)| (definition, Arc::new(facts)))
        .collect();
    custom.sort_by_key(|(definition, _)| (definition.group, definition.plural));
    Registry::with_custom(builtin_resources(), custom)
}
