//! The RBAC objects held in memory, indexed so that authorizing a request
//! reads only the bindings that name its user, one of its groups or its
//! service account, in its namespace or cluster-wide: the work per request
//! does not grow with bindings that do not match (issue 15's performance
//! requirement). kube's `DefaultRuleResolver` lists every binding instead
//! (`pkg/registry/rbac/validation/rule.go`, `VisitRulesFor`); the bindings
//! visited, and so the decisions, are the same.

use std::collections::BTreeMap;

// Seeded per process; the keys are names admins write into RBAC objects.
use foldhash::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::objects::{Binding, RoleRef, RoleRefError, SubjectKey};
use super::rule::PolicyRule;
use crate::authn::UserInfo;

/// Where each RBAC kind lives in the store (kube's etcd keys).
pub const ROLES_PREFIX: &str = "/registry/roles/";
pub const ROLE_BINDINGS_PREFIX: &str = "/registry/rolebindings/";
pub const CLUSTER_ROLES_PREFIX: &str = "/registry/clusterroles/";
pub const CLUSTER_ROLE_BINDINGS_PREFIX: &str = "/registry/clusterrolebindings/";
pub const PREFIXES: [&str; 4] = [
    ROLES_PREFIX,
    ROLE_BINDINGS_PREFIX,
    CLUSTER_ROLES_PREFIX,
    CLUSTER_ROLE_BINDINGS_PREFIX,
];

/// Bindings by the subjects they name, each set ordered by binding name.
#[derive(Debug, Default, Clone)]
struct BySubject {
    users: HashMap<String, BTreeMap<String, Arc<Binding>>>,
    groups: HashMap<String, BTreeMap<String, Arc<Binding>>>,
}

impl BySubject {
    fn insert(&mut self, binding: &Arc<Binding>) {
        for subject in &binding.subjects {
            let Some(key) = subject.key(&binding.namespace) else {
                continue;
            };
            let map = match key {
                SubjectKey::User(name) => self.users.entry(name),
                SubjectKey::Group(name) => self.groups.entry(name),
            };
            map.or_default()
                .insert(binding.name.clone(), binding.clone());
        }
    }

    fn remove(&mut self, binding: &Binding) {
        for subject in &binding.subjects {
            let (map, name) = match subject.key(&binding.namespace) {
                Some(SubjectKey::User(name)) => (&mut self.users, name),
                Some(SubjectKey::Group(name)) => (&mut self.groups, name),
                None => continue,
            };
            if let Some(set) = map.get_mut(&name) {
                set.remove(&binding.name);
                if set.is_empty() {
                    map.remove(&name);
                }
            }
        }
    }

    /// Calls `visitor` with each binding naming `user` or one of its
    /// groups, by name, once each, until it returns false; false when it
    /// stopped. When one set holds them all (the common case: a user bound
    /// by name, or only through one group) they are visited in place,
    /// without collecting them.
    fn visit_for_user<'s>(
        &'s self,
        user: &UserInfo,
        visitor: impl FnMut(&'s Arc<Binding>) -> bool,
    ) -> bool {
        let mut sets = self.users.get(&user.name).into_iter().chain(
            user.groups
                .iter()
                .filter_map(|group| self.groups.get(group)),
        );
        let Some(first) = sets.next() else {
            return true;
        };
        let Some(second) = sets.next() else {
            return first.values().all(visitor);
        };
        let mut found: Vec<&Arc<Binding>> = first.values().chain(second.values()).collect();
        for set in sets {
            found.extend(set.values());
        }
        // A binding naming the user and a group (or two groups) is visited once.
        found.sort_by(|a, b| a.name.cmp(&b.name));
        found.dedup_by(|a, b| Arc::ptr_eq(a, b));
        found.into_iter().all(visitor)
    }

    /// The bindings naming `user` or one of its groups, by name, once each.
    fn for_user(&self, user: &UserInfo) -> Vec<&Arc<Binding>> {
        let mut found = Vec::new();
        self.visit_for_user(user, |binding| {
            found.push(binding);
            true
        });
        found
    }

    fn is_empty(&self) -> bool {
        self.users.is_empty() && self.groups.is_empty()
    }
}

/// Every Role, ClusterRole, RoleBinding and ClusterRoleBinding.
#[derive(Debug, Default, Clone)]
pub struct RbacIndex {
    /// Namespace → name → rules (looked up without building a key).
    roles: HashMap<String, HashMap<String, Arc<[PolicyRule]>>>,
    cluster_roles: HashMap<String, Arc<[PolicyRule]>>,
    /// Every binding by its store key, to unindex it when it changes.
    bindings: HashMap<String, Arc<Binding>>,
    cluster_bindings: BySubject,
    /// Namespace → its RoleBindings.
    namespaced_bindings: HashMap<String, BySubject>,
}

/// What one changed store key was.
enum Kind<'a> {
    Role { namespace: &'a str, name: &'a str },
    ClusterRole { name: &'a str },
    RoleBinding { namespace: &'a str, name: &'a str },
    ClusterRoleBinding { name: &'a str },
}

fn kind_of(key: &str) -> Option<Kind<'_>> {
    let namespaced = |rest: &'static str| -> Option<(&str, &str)> {
        let (namespace, name) = key.strip_prefix(rest)?.split_once('/')?;
        (!name.contains('/')).then_some((namespace, name))
    };
    let cluster = |rest: &'static str| -> Option<&str> {
        let name = key.strip_prefix(rest)?;
        (!name.contains('/')).then_some(name)
    };
    if let Some((namespace, name)) = namespaced(ROLES_PREFIX) {
        return Some(Kind::Role { namespace, name });
    }
    if let Some((namespace, name)) = namespaced(ROLE_BINDINGS_PREFIX) {
        return Some(Kind::RoleBinding { namespace, name });
    }
    if let Some(name) = cluster(CLUSTER_ROLES_PREFIX) {
        return Some(Kind::ClusterRole { name });
    }
    cluster(CLUSTER_ROLE_BINDINGS_PREFIX).map(|name| Kind::ClusterRoleBinding { name })
}

/// Whether a store key holds an RBAC object.
pub fn is_rbac_key(key: &str) -> bool {
    PREFIXES.iter().any(|prefix| key.starts_with(prefix))
}

fn rules_of(object: &Value) -> Arc<[PolicyRule]> {
    object
        .get("rules")
        .and_then(Value::as_array)
        .map(|rules| rules.iter().map(PolicyRule::from_json).collect())
        .unwrap_or_default()
}

impl RbacIndex {
    /// Applies the state of one store key: `Some(object)` after a create or
    /// update, `None` after a delete (or for an object that does not decode,
    /// which grants nothing).
    pub fn apply(&mut self, key: &str, object: Option<&Value>) {
        let Some(kind) = kind_of(key) else {
            return;
        };
        match kind {
            Kind::Role { namespace, name } => match object {
                Some(object) => {
                    self.roles
                        .entry(namespace.to_string())
                        .or_default()
                        .insert(name.to_string(), rules_of(object));
                }
                None => {
                    if let Some(roles) = self.roles.get_mut(namespace) {
                        roles.remove(name);
                        if roles.is_empty() {
                            self.roles.remove(namespace);
                        }
                    }
                }
            },
            Kind::ClusterRole { name } => {
                match object {
                    Some(object) => self
                        .cluster_roles
                        .insert(name.to_string(), rules_of(object)),
                    None => self.cluster_roles.remove(name),
                };
            }
            Kind::RoleBinding { namespace, name } => {
                self.unindex_binding(key);
                if let Some(object) = object {
                    self.index_binding(key, Binding::from_json(name, namespace, object));
                }
            }
            Kind::ClusterRoleBinding { name } => {
                self.unindex_binding(key);
                if let Some(object) = object {
                    self.index_binding(key, Binding::from_json(name, "", object));
                }
            }
        }
    }

    fn index_binding(&mut self, key: &str, binding: Binding) {
        let binding = Arc::new(binding);
        if binding.namespace.is_empty() {
            self.cluster_bindings.insert(&binding);
        } else {
            self.namespaced_bindings
                .entry(binding.namespace.clone())
                .or_default()
                .insert(&binding);
        }
        self.bindings.insert(key.to_string(), binding);
    }

    fn unindex_binding(&mut self, key: &str) {
        let Some(old) = self.bindings.remove(key) else {
            return;
        };
        if old.namespace.is_empty() {
            self.cluster_bindings.remove(&old);
            return;
        }
        if let Some(by_subject) = self.namespaced_bindings.get_mut(&old.namespace) {
            by_subject.remove(&old);
            if by_subject.is_empty() {
                self.namespaced_bindings.remove(&old.namespace);
            }
        }
    }

    /// The ClusterRoleBindings that name `user`, by name.
    pub fn cluster_bindings_for(&self, user: &UserInfo) -> Vec<&Arc<Binding>> {
        self.cluster_bindings.for_user(user)
    }

    /// [`Self::cluster_bindings_for`] then [`Self::bindings_for`] (none when
    /// `namespace` is empty), handed to `visitor` until it returns false.
    pub fn visit_bindings_for<'s>(
        &'s self,
        user: &UserInfo,
        namespace: &str,
        mut visitor: impl FnMut(&'s Arc<Binding>) -> bool,
    ) {
        if self.visit_cluster_bindings_for(user, &mut visitor) {
            self.visit_namespace_bindings_for(user, namespace, visitor);
        }
    }

    /// The ClusterRoleBindings naming `user` (or a group of it), by name;
    /// false when `visitor` stopped.
    pub fn visit_cluster_bindings_for<'s>(
        &'s self,
        user: &UserInfo,
        visitor: impl FnMut(&'s Arc<Binding>) -> bool,
    ) -> bool {
        self.cluster_bindings.visit_for_user(user, visitor)
    }

    /// The RoleBindings of `namespace` (none for an empty one) naming
    /// `user`, by name; false when `visitor` stopped.
    pub fn visit_namespace_bindings_for<'s>(
        &'s self,
        user: &UserInfo,
        namespace: &str,
        visitor: impl FnMut(&'s Arc<Binding>) -> bool,
    ) -> bool {
        match self.namespaced_bindings.get(namespace) {
            Some(by_subject) if !namespace.is_empty() => by_subject.visit_for_user(user, visitor),
            _ => true,
        }
    }

    /// The RoleBindings of `namespace` that name `user`, by name.
    pub fn bindings_for(&self, user: &UserInfo, namespace: &str) -> Vec<&Arc<Binding>> {
        self.namespaced_bindings
            .get(namespace)
            .map(|by_subject| by_subject.for_user(user))
            .unwrap_or_default()
    }

    /// The rules a binding grants (`GetRoleReferenceRules`; a RoleBinding
    /// reads Roles of its own namespace).
    pub fn role_rules(
        &self,
        role_ref: &RoleRef,
        binding_namespace: &str,
    ) -> Result<&Arc<[PolicyRule]>, RoleRefError> {
        match role_ref.kind.as_str() {
            "Role" => self
                .roles
                .get(binding_namespace)
                .and_then(|roles| roles.get(&role_ref.name))
                .filter(|_| !binding_namespace.is_empty())
                .ok_or_else(|| RoleRefError::RoleNotFound(role_ref.name.clone())),
            "ClusterRole" => self
                .cluster_roles
                .get(&role_ref.name)
                .ok_or_else(|| RoleRefError::ClusterRoleNotFound(role_ref.name.clone())),
            other => Err(RoleRefError::UnsupportedKind(other.to_string())),
        }
    }

    /// How many bindings are held (tests, logs).
    pub fn binding_count(&self) -> usize {
        self.bindings.len()
    }
}
