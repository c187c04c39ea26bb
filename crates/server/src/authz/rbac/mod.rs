//! The RBAC authorizer: `plugin/pkg/auth/authorizer/rbac/rbac.go`
//! (`RBACAuthorizer.Authorize`, the `authorizingVisitor`) over
//! `pkg/registry/rbac/validation/rule.go`'s rule resolution
//! (`VisitRulesFor`, `RulesFor`), reading Roles, ClusterRoles, RoleBindings
//! and ClusterRoleBindings from an in-memory index (`index.rs`) that follows
//! the store (`follow.rs`).

mod follow;
mod index;
#[cfg(test)]
mod kube_cases;
mod objects;
mod rule;
#[cfg(test)]
mod tests;

use std::sync::atomic::AtomicI64;
use std::sync::{Mutex, RwLock};

use ferrokube_store::Revision;

pub use index::{is_rbac_key, RbacIndex};
pub use objects::{service_account_user, Binding, BindingSource, RoleRefError, Subject};
pub use rule::PolicyRule;

use super::{Attributes, Decision};
use crate::authn::UserInfo;
use crate::object::ObjectStore;

/// One step of [`Rbac::visit_rules_for`]: a rule and the binding that
/// grants it, or a binding whose role could not be read.
pub enum Visit<'a> {
    Rule {
        source: BindingSource<'a>,
        rule: &'a PolicyRule,
    },
    Error(RoleRefError),
}

/// Whether an Allow says which binding allowed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllowReason {
    /// "RBAC: allowed by …", as access reviews show it.
    Describe,
    /// An empty reason (the request path, which never shows it).
    Omit,
}

/// The RBAC authorizer and rule resolver.
pub struct Rbac {
    index: RwLock<RbacIndex>,
    /// The store revision up to which `index` holds every RBAC change.
    applied: AtomicI64,
    /// Serialises catching up with the store.
    follow_lock: Mutex<()>,
    /// `None` for an authorizer over fixed objects (tests).
    store: Option<FollowedStore>,
}

struct FollowedStore {
    store: ObjectStore,
    revision: tokio::sync::watch::Receiver<Revision>,
    /// The revision of the last change of a Role, ClusterRole or binding.
    rbac_changes: std::sync::Arc<ferrokube_store::PrefixMark>,
}

impl std::fmt::Debug for Rbac {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Rbac")
            .field("applied", &self.applied)
            .finish_non_exhaustive()
    }
}

impl Rbac {
    /// An authorizer over fixed objects: `(store key, object)` pairs.
    pub fn from_objects<'a>(
        objects: impl IntoIterator<Item = (&'a str, serde_json::Value)>,
    ) -> Rbac {
        let mut index = RbacIndex::default();
        for (key, object) in objects {
            index.apply(key, Some(&object));
        }
        Rbac {
            index: RwLock::new(index),
            applied: AtomicI64::new(0),
            follow_lock: Mutex::new(()),
            store: None,
        }
    }

    fn read_index(&self) -> std::sync::RwLockReadGuard<'_, RbacIndex> {
        self.index
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `RBACAuthorizer.Authorize`: Allow with "RBAC: allowed by …" when a
    /// rule of a binding of the user allows the request, otherwise
    /// NoOpinion with the bindings' role resolution errors as the reason.
    pub fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        self.decide(attributes, AllowReason::Describe)
    }

    /// [`Rbac::authorize`], or with an empty reason on Allow when
    /// `allow_reason` says so: the request path only reads why a request
    /// was refused, so it does not format the binding that allowed it.
    pub fn decide(&self, attributes: &Attributes<'_>, allow_reason: AllowReason) -> Decision {
        self.catch_up();
        let index = self.read_index();
        let mut errors = Vec::new();
        let allowed_by = match allow_reason {
            AllowReason::Describe => {
                first_allowing(&index, attributes, Bindings::All, allow_reason, &mut errors)
            }
            // Whether a rule allows does not depend on the order the
            // bindings are read in, only which binding is named and the
            // order of the errors do; the request path names none, so it
            // reads the namespace's bindings first (a namespaced request is
            // most often granted there) and keeps kube's order of errors.
            AllowReason::Omit => {
                let mut namespace_errors = Vec::new();
                let namespaced = first_allowing(
                    &index,
                    attributes,
                    Bindings::Namespace,
                    allow_reason,
                    &mut namespace_errors,
                );
                let allowed_by = namespaced.or_else(|| {
                    first_allowing(
                        &index,
                        attributes,
                        Bindings::Cluster,
                        allow_reason,
                        &mut errors,
                    )
                });
                errors.extend(namespace_errors);
                allowed_by
            }
        };
        if let Some(reason) = allowed_by {
            return Decision::allow(reason);
        }
        if errors.is_empty() {
            return Decision::no_opinion(String::new());
        }
        Decision::no_opinion(format!("RBAC: {}", aggregate(&errors)))
    }

    /// `VisitRulesFor`: every rule that applies to `user` in `namespace`
    /// (cluster-wide bindings first, then the namespace's), and every
    /// binding whose role is missing; `visitor` returns false to stop.
    pub fn visit_rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
        visitor: impl FnMut(Visit<'_>) -> bool,
    ) {
        self.catch_up();
        let index = self.read_index();
        visit(&index, user, namespace, visitor);
    }

    /// `RulesFor`: the rules that apply to `user` in `namespace` (what
    /// escalation checks and SelfSubjectRulesReview need), and the role
    /// resolution errors met on the way.
    pub fn rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
    ) -> (Vec<PolicyRule>, Vec<RoleRefError>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        self.visit_rules_for(user, namespace, |visit| {
            match visit {
                Visit::Rule { rule, .. } => rules.push(rule.clone()),
                Visit::Error(error) => errors.push(error),
            }
            true
        });
        (rules, errors)
    }

    /// `GetRoleReferenceRules`: the rules of the role a binding in
    /// `binding_namespace` (empty for a ClusterRoleBinding) references.
    pub fn role_rules(
        &self,
        kind: &str,
        name: &str,
        binding_namespace: &str,
    ) -> Result<std::sync::Arc<[PolicyRule]>, RoleRefError> {
        self.catch_up();
        let role_ref = objects::RoleRef {
            kind: kind.to_string(),
            name: name.to_string(),
        };
        self.read_index()
            .role_rules(&role_ref, binding_namespace)
            .cloned()
    }
}

/// `DefaultRuleResolver.VisitRulesFor` over the index: only the bindings
/// that name the user are read.
fn visit(
    index: &RbacIndex,
    user: &UserInfo,
    namespace: &str,
    visitor: impl FnMut(Visit<'_>) -> bool,
) {
    visit_in(index, user, namespace, Bindings::All, visitor);
}

/// Which of a user's bindings [`visit_in`] reads.
#[derive(Clone, Copy)]
enum Bindings {
    /// The cluster's then the namespace's, as kube's `VisitRulesFor`.
    All,
    Cluster,
    Namespace,
}

/// The reason of the first rule among `bindings` that allows the request
/// (empty unless `allow_reason` describes it); the role resolution errors
/// met before it are added to `errors`.
fn first_allowing(
    index: &RbacIndex,
    attributes: &Attributes<'_>,
    bindings: Bindings,
    allow_reason: AllowReason,
    errors: &mut Vec<String>,
) -> Option<String> {
    let mut allowed_by = None;
    visit_in(
        index,
        attributes.user,
        attributes.namespace,
        bindings,
        |visit| {
            match visit {
                Visit::Rule { source, rule } => {
                    if rule.allows(attributes) {
                        allowed_by = Some(match allow_reason {
                            AllowReason::Describe => format!("RBAC: allowed by {source}"),
                            AllowReason::Omit => String::new(),
                        });
                        return false;
                    }
                }
                Visit::Error(error) => errors.push(error.to_string()),
            }
            true
        },
    );
    allowed_by
}

fn visit_in(
    index: &RbacIndex,
    user: &UserInfo,
    namespace: &str,
    bindings: Bindings,
    mut visitor: impl FnMut(Visit<'_>) -> bool,
) {
    let each = |binding: &std::sync::Arc<objects::Binding>| {
        let Some(subject) = binding.subject_for(user) else {
            debug_assert!(
                false,
                "the index returned a binding that does not name the user"
            );
            return true;
        };
        let rules = match index.role_rules(&binding.role_ref, &binding.namespace) {
            Ok(rules) => rules,
            Err(error) => return visitor(Visit::Error(error)),
        };
        rules.iter().all(|rule| {
            visitor(Visit::Rule {
                source: binding.describe(subject),
                rule,
            })
        })
    };
    match bindings {
        Bindings::All => index.visit_bindings_for(user, namespace, each),
        Bindings::Cluster => {
            index.visit_cluster_bindings_for(user, each);
        }
        Bindings::Namespace => {
            index.visit_namespace_bindings_for(user, namespace, each);
        }
    }
}

use crate::go::errors::aggregate;
