//! The revision of the last change under some key prefixes, kept by the
//! cache as it applies events: a follower of a few kinds (the RBAC index
//! follows Roles and bindings) learns in one atomic load whether anything it
//! follows changed since the revision it holds, instead of scanning the
//! change log for every write of other kinds.
//!
//! Ordering: the cache raises a mark before it publishes the revision of the
//! change ([`crate::Store::subscribe`]), so a reader that reads the
//! published revision first and the mark second sees every change under the
//! prefixes up to that revision reflected in the mark.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::Revision;

/// The last revision at which a key under one of `prefixes` changed (or the
/// cache was reset, which may have changed anything).
#[derive(Debug)]
pub struct PrefixMark {
    prefixes: Vec<String>,
    last_change: AtomicI64,
}

impl PrefixMark {
    pub(crate) fn new(prefixes: Vec<String>, start: Revision) -> PrefixMark {
        PrefixMark {
            prefixes,
            last_change: AtomicI64::new(start),
        }
    }

    /// The revision of the last change under the prefixes seen so far.
    pub fn last_change(&self) -> Revision {
        self.last_change.load(Ordering::Acquire)
    }

    /// Whether `key` lies under one of the prefixes.
    pub fn covers(&self, key: &str) -> bool {
        self.prefixes.iter().any(|prefix| key.starts_with(prefix))
    }

    /// Records a change at `revision` (keys under the prefixes, or a reset).
    pub(crate) fn raise(&self, revision: Revision) {
        self.last_change.fetch_max(revision, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_only_its_prefixes() {
        let mark = PrefixMark::new(vec!["/registry/roles/".into(), "/registry/x/".into()], 3);
        assert!(mark.covers("/registry/roles/ns/r"));
        assert!(mark.covers("/registry/x/a"));
        assert!(!mark.covers("/registry/rolebindings/ns/r"));
        assert_eq!(mark.last_change(), 3);
    }

    #[test]
    fn raise_never_lowers() {
        let mark = PrefixMark::new(vec!["/a/".into()], 5);
        mark.raise(9);
        mark.raise(7);
        assert_eq!(mark.last_change(), 9);
    }
}
