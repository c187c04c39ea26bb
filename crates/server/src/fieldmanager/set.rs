//! Field sets (`fieldpath.Set`): the paths a manager owns, as a tree.
//! A node's `members` are the leaf paths ending at it, its `children` the
//! subtrees below it; a path element may be both (a map that is itself
//! owned and has owned entries), which FieldsV1 writes as `".": {}`.

use std::collections::{BTreeMap, BTreeSet};

use super::path::{Path, PathElement};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    pub(super) members: BTreeSet<PathElement>,
    /// Never holds an empty set (SMD's invariant).
    pub(super) children: BTreeMap<PathElement, Set>,
}

impl Set {
    pub fn new() -> Self {
        Set::default()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds one path (the empty path is ignored, as SMD's root never is a member).
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => {
                // Look up before cloning: most inserts land in an existing child.
                match self.children.get_mut(first) {
                    Some(child) => child.insert(rest),
                    None => {
                        let mut child = Set::new();
                        child.insert(rest);
                        self.children.insert(first.clone(), child);
                    }
                }
            }
        }
    }

    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self
                .children
                .get(first)
                .is_some_and(|child| child.has(rest)),
        }
    }

    /// The subtree below `element` (`Set.WithPrefix`).
    pub fn with_prefix(&self, element: &PathElement) -> Set {
        self.children.get(element).cloned().unwrap_or_default()
    }

    pub fn child(&self, element: &PathElement) -> Option<&Set> {
        self.children.get(element)
    }

    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.union_in_place(other);
        out
    }

    pub fn union_in_place(&mut self, other: &Set) {
        for member in &other.members {
            if !self.members.contains(member) {
                self.members.insert(member.clone());
            }
        }
        for (element, child) in &other.children {
            match self.children.get_mut(element) {
                Some(mine) => mine.union_in_place(child),
                None => {
                    self.children.insert(element.clone(), child.clone());
                }
            }
        }
    }

    /// `Set.Difference`: members not in `other`, children minus the matching
    /// child of `other` (membership of a parent does not remove its children).
    pub fn difference(&self, other: &Set) -> Set {
        let members = self.members.difference(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (element, child) in &self.children {
            let rest = match other.children.get(element) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                children.insert(element.clone(), rest);
            }
        }
        Set { members, children }
    }

    /// `self = self.difference(other)` in place: the work follows `other`
    /// (usually a few changed fields), not `self` (a manager's whole set).
    pub fn subtract(&mut self, other: &Set) {
        for member in &other.members {
            self.members.remove(member);
        }
        for (element, theirs) in &other.children {
            if let Some(mine) = self.children.get_mut(element) {
                mine.subtract(theirs);
                if mine.is_empty() {
                    self.children.remove(element);
                }
            }
        }
    }

    /// Whether every path of `other` is in `self`.
    pub fn contains_set(&self, other: &Set) -> bool {
        other
            .members
            .iter()
            .all(|member| self.members.contains(member))
            && other.children.iter().all(|(element, theirs)| {
                self.children
                    .get(element)
                    .is_some_and(|mine| mine.contains_set(theirs))
            })
    }

    pub fn intersection(&self, other: &Set) -> Set {
        let members = self.members.intersection(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (element, child) in &self.children {
            if let Some(theirs) = other.children.get(element) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    children.insert(element.clone(), both);
                }
            }
        }
        Set { members, children }
    }

    /// Every member path, in SMD's `Iterate` order: a node's members, then
    /// its children depth-first.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        let mut prefix = Vec::new();
        self.collect_paths(&mut prefix, &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for member in &self.members {
            let mut path = prefix.clone();
            path.push(member.clone());
            out.push(path);
        }
        for (element, child) in &self.children {
            prefix.push(element.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// Removes every path that starts with one of `prefixes`' members
    /// (`fieldpath.NewExcludeFilterSetMap` / `Filter`).
    pub fn without_prefixes(&self, prefixes: &Set) -> Set {
        let mut out = Set::new();
        for member in &self.members {
            if !prefixes.members.contains(member) {
                out.members.insert(member.clone());
            }
        }
        for (element, child) in &self.children {
            if prefixes.members.contains(element) {
                continue;
            }
            let rest = match prefixes.children.get(element) {
                Some(deeper) => child.without_prefixes(deeper),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(element.clone(), rest);
            }
        }
        out
    }

    /// `*self = self.without_prefixes(prefixes)`, in place (the work
    /// follows `prefixes`, usually one field).
    pub fn remove_prefixes(&mut self, prefixes: &Set) {
        for member in &prefixes.members {
            self.members.remove(member);
            self.children.remove(member);
        }
        for (element, deeper) in &prefixes.children {
            if prefixes.members.contains(element) {
                continue;
            }
            if let Some(mine) = self.children.get_mut(element) {
                mine.remove_prefixes(deeper);
                if mine.is_empty() {
                    self.children.remove(element);
                }
            }
        }
    }

    /// Number of member paths.
    pub fn len(&self) -> usize {
        self.members.len() + self.children.values().map(Set::len).sum::<usize>()
    }
}

/// A set from paths (tests and fixed sets).
pub fn set_of(paths: &[&[PathElement]]) -> Set {
    let mut set = Set::new();
    for path in paths {
        set.insert(path);
    }
    set
}
