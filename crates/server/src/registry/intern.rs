//! Interning of resource definitions, so that custom resources get the same
//! `&'static ResourceDef` every built-in kind has and the request path keeps
//! one representation.
//!
//! A definition is allocated once per distinct value for the life of the
//! process: re-establishing an unchanged CRD reuses it, and memory grows only
//! with the distinct definitions ever served (a CRD whose names or subresources
//! change), not with the number of registry snapshots.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Mutex;

use super::resource::{ResourceDef, SubresourceDef};

struct Interner<T: ?Sized + 'static>(Mutex<Option<HashSet<&'static T>>>);

impl<T: ?Sized + Hash + Eq> Interner<T> {
    const fn new() -> Self {
        Interner(Mutex::new(None))
    }

    fn get_or_insert(&self, value: &T, leak: impl FnOnce() -> &'static T) -> &'static T {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let set = guard.get_or_insert_with(HashSet::new);
        if let Some(found) = set.get(value) {
            return found;
        }
        let leaked = leak();
        set.insert(leaked);
        leaked
    }
}

static STRINGS: Interner<str> = Interner::new();
static STRING_LISTS: Interner<[&'static str]> = Interner::new();
static SUBRESOURCE_LISTS: Interner<[SubresourceDef]> = Interner::new();
static DEFINITIONS: Interner<ResourceDef> = Interner::new();

/// `text` as a `'static` string.
pub fn string(text: &str) -> &'static str {
    STRINGS.get_or_insert(text, || Box::leak(text.to_owned().into_boxed_str()))
}

/// A `'static` list of strings.
pub fn strings<S: AsRef<str>>(items: &[S]) -> &'static [&'static str] {
    let interned: Vec<&'static str> = items.iter().map(|item| string(item.as_ref())).collect();
    STRING_LISTS.get_or_insert(&interned, || Box::leak(interned.clone().into_boxed_slice()))
}

pub fn subresources(items: Vec<SubresourceDef>) -> &'static [SubresourceDef] {
    SUBRESOURCE_LISTS.get_or_insert(&items, || Box::leak(items.clone().into_boxed_slice()))
}

pub fn definition(definition: ResourceDef) -> &'static ResourceDef {
    DEFINITIONS.get_or_insert(&definition, || Box::leak(Box::new(definition)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::NameRule;

    fn widgets(kind: &str) -> ResourceDef {
        ResourceDef {
            group: string("example.com"),
            version: string("v1"),
            kind: string(kind),
            plural: string("widgets"),
            singular: string("widget"),
            namespaced: true,
            verbs: strings(&["get", "list"]),
            short_names: strings::<&str>(&[]),
            categories: strings(&["all"]),
            subresources: subresources(Vec::new()),
            storage: string("example.com/widgets"),
            name_rule: NameRule::Dns1123Subdomain,
            create_on_update: false,
            has_generation: true,
            returns_deleted_object: false,
            custom: true,
        }
    }

    #[test]
    fn equal_definitions_share_one_allocation() {
        let first = definition(widgets("Widget"));
        let again = definition(widgets("Widget"));
        assert!(std::ptr::eq(first, again));
        let other = definition(widgets("Gadget"));
        assert!(!std::ptr::eq(first, other));
        assert_eq!(other.kind, "Gadget");
        assert!(std::ptr::eq(string("widgets"), first.plural));
    }
}
