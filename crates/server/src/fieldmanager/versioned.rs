//! Managers recorded at another version of the kind: SMD's `Updater.update`
//! compares the old and new objects once per manager version
//! (`versions[managerSet.APIVersion()]`), converting both with kube's
//! `versionConverter` (`managedfields/internal/versionconverter.go`), so a
//! field renamed between versions (`message` of core/v1 Events is `note`
//! of events.k8s.io/v1) is taken from, or conflicts with, the manager that
//! recorded it under its other name.

use std::borrow::Cow;

use serde_json::Value;

use super::compare::Comparison;
use super::managed::{Entry, Managed};
use super::schema::Schema;
use super::set::Set;
use super::walk;
use super::FieldManager;

/// The kind's other served versions, for a field manager of one of them.
pub struct OtherVersions<'a> {
    /// Each other version's `apiVersion` and schema.
    pub schemas: Vec<(String, Schema<'a>)>,
    /// Converts an object (any served version) to an `apiVersion` in place;
    /// `false` when it cannot (the manager's set is then compared at the
    /// request's version, as before).
    pub convert: fn(&mut Value, &str) -> bool,
}

/// The comparison of one write at each version a manager recorded, the
/// request's own included.
pub struct Comparisons {
    own: Comparison,
    others: Vec<(String, Comparison)>,
}

impl Comparisons {
    /// `own` (at the request's version), plus `old` and `new` compared at
    /// every other version among `versions` that `other` knows, with the
    /// `reset` prefixes taken out as from `own`.
    pub fn new<'v>(
        own: Comparison,
        other: Option<&OtherVersions<'_>>,
        versions: impl Iterator<Item = &'v str>,
        old: &Value,
        new: &Value,
        reset: &Set,
    ) -> Self {
        let mut others: Vec<(String, Comparison)> = Vec::new();
        let Some(other) = other else {
            return Comparisons { own, others };
        };
        for version in versions {
            if others.iter().any(|(known, _)| known == version) {
                continue;
            }
            let Some((_, schema)) = other.schemas.iter().find(|(known, _)| known == version) else {
                continue;
            };
            let (mut old, mut new) = (old.clone(), new.clone());
            if !(other.convert)(&mut old, version) || !(other.convert)(&mut new, version) {
                continue;
            }
            let mut comparison = walk::compare(schema, &old, &new);
            comparison.added.remove_prefixes(reset);
            comparison.modified.remove_prefixes(reset);
            comparison.removed.remove_prefixes(reset);
            others.push((version.to_string(), comparison));
        }
        Comparisons { own, others }
    }

    /// The comparison a manager recorded at `version` is judged by.
    pub fn at(&self, version: &str) -> &Comparison {
        self.others
            .iter()
            .find(|(known, _)| known == version)
            .map_or(&self.own, |(_, comparison)| comparison)
    }

    /// The comparison at the request's version.
    pub fn own(&self) -> &Comparison {
        &self.own
    }
}

/// `own` plus, for the kind's other versions among the entries', the
/// comparison of `old` and `new` at that version.
pub(super) fn comparisons(
    manager: &FieldManager<'_>,
    own: Comparison,
    entries: &[Managed<'_>],
    old: &Value,
    new: &Value,
    reset: &Set,
) -> Comparisons {
    let others: Vec<&str> = match &manager.other_versions {
        Some(_) => entries
            .iter()
            .map(|managed| managed.entry.api_version.as_str())
            .filter(|version| *version != manager.api_version)
            .collect(),
        None => Vec::new(),
    };
    Comparisons::new(
        own,
        manager.other_versions.as_ref(),
        others.into_iter(),
        old,
        new,
        reset,
    )
}

/// What changed (added or modified) and what was removed, at the version
/// `entry` was recorded at; `changed` is the request version's.
pub(super) fn changes_for<'c>(
    versions: &'c Comparisons,
    entry: &Entry,
    changed: &'c Set,
) -> (Cow<'c, Set>, &'c Set) {
    let at = versions.at(&entry.api_version);
    if std::ptr::eq(at, versions.own()) {
        return (Cow::Borrowed(changed), &at.removed);
    }
    (Cow::Owned(at.added.union(&at.modified)), &at.removed)
}
