//! Keeps the served registry equal to the established CRDs in the store, on
//! every replica (not only the leader: each one serves what its own store
//! holds). Reads the store's change log like a controller and swaps in a new
//! registry snapshot whenever a CRD changes.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::definition::{served_versions, CustomVersion};
use crate::object::feed::{Feed, ObjectSnapshot, Update};
use crate::object::ObjectStore;
use crate::registry::{builtin_resources, LiveRegistry, Registry, ResourceDef};

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
                            crds.insert(name.to_string(), served(&crd));
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

/// What one CRD serves, read once when it changes: the parsed CRD is
/// dropped right away (a 200-field CRD's tree is ~0.5 MiB), and a change
/// to one CRD does not read the others again.
type Served = Vec<(&'static ResourceDef, Arc<CustomVersion>)>;

fn served(crd: &Value) -> Served {
    served_versions(crd)
        .into_iter()
        .map(|(definition, facts)| (definition, Arc::new(facts)))
        .collect()
}

fn load(snapshot: &ObjectSnapshot) -> BTreeMap<String, Served> {
    snapshot
        .range(CRD_PREFIX, None)
        .filter_map(|(key, entry)| {
            let name = key.strip_prefix(CRD_PREFIX)?;
            Some((name.to_string(), served(&entry.object.value()?)))
        })
        .collect()
}

/// The registry serving the built-in kinds and the established CRDs, custom
/// groups in name order.
fn build(crds: &BTreeMap<String, Served>) -> Registry {
    let mut custom: Vec<_> = crds.values().flatten().cloned().collect();
    custom.sort_by_key(|(definition, _)| (definition.group, definition.plural));
    Registry::with_custom(builtin_resources(), custom)
}

/// The registry serving `crds` (each a whole CRD object), for tests of the
/// layers above.
pub fn registry_of(crds: &[Value]) -> Registry {
    let served: BTreeMap<String, Served> = crds
        .iter()
        .map(|crd| {
            let name = crd.pointer("/metadata/name").and_then(Value::as_str);
            (name.unwrap_or("").to_string(), served(crd))
        })
        .collect();
    build(&served)
}
