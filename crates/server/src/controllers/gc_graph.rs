//! The garbage collector's view of ownership (`graph_builder.go`, much
//! reduced): owner uid → the keys of its dependents, kept up to date from
//! the change log, so an owner's deletion finds its dependents without a scan.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// One entry of `metadata.ownerReferences` (cached objects index them).
pub use crate::object::OwnerRef;

pub fn owner_refs(object: &Value) -> Vec<OwnerRef> {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| refs.iter().map(crate::object::index::owner_ref).collect())
        .unwrap_or_default()
}

#[derive(Default)]
pub struct Graph {
    /// Dependent key → the owner uids it names.
    owners_of: HashMap<String, Vec<String>>,
    /// Owner uid → dependent keys.
    dependents: HashMap<String, HashSet<String>>,
}

impl Graph {
    /// Records `key`'s current owners (none when deleted); returns the owner
    /// uids it named before.
    pub fn set(&mut self, key: &str, owners: Vec<String>) -> Vec<String> {
        let previous = if owners.is_empty() {
            self.owners_of.remove(key).unwrap_or_default()
        } else {
            self.owners_of
                .insert(key.to_string(), owners.clone())
                .unwrap_or_default()
        };
        for uid in &previous {
            if owners.contains(uid) {
                continue;
            }
            if let Some(set) = self.dependents.get_mut(uid) {
                set.remove(key);
                if set.is_empty() {
                    self.dependents.remove(uid);
                }
            }
        }
        for uid in owners {
            self.dependents
                .entry(uid)
                .or_default()
                .insert(key.to_string());
        }
        previous
    }

    pub fn dependents(&self, owner_uid: &str) -> Vec<String> {
        self.dependents
            .get(owner_uid)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub fn clear(&mut self) {
        self.owners_of.clear();
        self.dependents.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_follows_owner_changes() {
        let mut graph = Graph::default();
        graph.set("/a", vec!["u1".into()]);
        graph.set("/b", vec!["u1".into(), "u2".into()]);
        let mut deps = graph.dependents("u1");
        deps.sort();
        assert_eq!(deps, ["/a", "/b"]);
        assert_eq!(graph.set("/b", vec!["u2".into()]), ["u1", "u2"]);
        assert_eq!(graph.dependents("u1"), ["/a"]);
        graph.set("/a", vec![]);
        assert!(graph.dependents("u1").is_empty());
        assert_eq!(graph.dependents("u2"), ["/b"]);
    }
}
