//! RoleBindings and ClusterRoleBindings as the authorizer reads them:
//! subjects, the role they reference, and how kube describes them in
//! reasons (`pkg/registry/rbac/validation/rule.go`: `appliesTo`,
//! `appliesToUser`, `describeSubject`, the binding describers,
//! `GetRoleReferenceRules`).

use std::fmt;

use serde_json::Value;

use crate::authn::UserInfo;
use crate::go::strconv::quote;

/// `serviceaccount.ServiceAccountUsernamePrefix`.
pub const SERVICE_ACCOUNT_USER_PREFIX: &str = "system:serviceaccount:";

/// The user name of a service account (`serviceaccount.MakeUsername`).
pub fn service_account_user(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_USER_PREFIX}{namespace}:{name}")
}

/// `rbacv1.Subject`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

/// Who a subject names, as the index keys it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SubjectKey {
    /// A user name; a service account is the user
    /// `system:serviceaccount:<namespace>:<name>`.
    User(String),
    Group(String),
}

impl Subject {
    fn from_json(value: &Value) -> Subject {
        let text = |member: &str| {
            value
                .get(member)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Subject {
            kind: text("kind"),
            name: text("name"),
            namespace: text("namespace"),
        }
    }

    /// The one key under which this subject matches users, in a binding of
    /// `binding_namespace` (empty for a ClusterRoleBinding); `None` when it
    /// matches nobody (an unknown kind, a service account without namespace
    /// in a ClusterRoleBinding).
    pub fn key(&self, binding_namespace: &str) -> Option<SubjectKey> {
        match self.kind.as_str() {
            "User" => Some(SubjectKey::User(self.name.clone())),
            "Group" => Some(SubjectKey::Group(self.name.clone())),
            "ServiceAccount" => {
                // A subject without namespace means the binding's own namespace.
                let namespace = if self.namespace.is_empty() {
                    binding_namespace
                } else {
                    &self.namespace
                };
                (!namespace.is_empty())
                    .then(|| SubjectKey::User(service_account_user(namespace, &self.name)))
            }
            _ => None,
        }
    }

    /// `appliesToUser` (with `serviceaccount.MatchesUsername`'s
    /// allocation-free comparison).
    pub fn applies_to(&self, user: &UserInfo, binding_namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => user.name == self.name,
            "Group" => user.groups.contains(&self.name),
            "ServiceAccount" => {
                let namespace = if self.namespace.is_empty() {
                    binding_namespace
                } else {
                    &self.namespace
                };
                !namespace.is_empty()
                    && user
                        .name
                        .strip_prefix(SERVICE_ACCOUNT_USER_PREFIX)
                        .and_then(|rest| rest.strip_prefix(namespace))
                        .and_then(|rest| rest.strip_prefix(':'))
                        == Some(self.name.as_str())
            }
            _ => false,
        }
    }

    /// `describeSubject`: `User "jane"`, `ServiceAccount "name/namespace"`.
    fn describe(&self, binding_namespace: &str) -> String {
        if self.kind == "ServiceAccount" {
            let namespace = if self.namespace.is_empty() {
                binding_namespace
            } else {
                &self.namespace
            };
            return format!(
                "{} {}",
                self.kind,
                quote(&format!("{}/{namespace}", self.name))
            );
        }
        format!("{} {}", self.kind, quote(&self.name))
    }
}

/// `rbacv1.RoleRef`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleRef {
    pub kind: String,
    pub name: String,
}

/// A RoleBinding (`namespace` set) or ClusterRoleBinding (`namespace` empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub name: String,
    pub namespace: String,
    pub subjects: Vec<Subject>,
    pub role_ref: RoleRef,
}

impl Binding {
    /// A binding as stored; its name and namespace come from its store key.
    pub fn from_json(name: &str, namespace: &str, value: &Value) -> Binding {
        let subjects = value
            .get("subjects")
            .and_then(Value::as_array)
            .map(|subjects| subjects.iter().map(Subject::from_json).collect())
            .unwrap_or_default();
        let role_ref = value.get("roleRef");
        let text = |member: &str| {
            role_ref
                .and_then(|role_ref| role_ref.get(member))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Binding {
            name: name.to_string(),
            namespace: namespace.to_string(),
            subjects,
            role_ref: RoleRef {
                kind: text("kind"),
                name: text("name"),
            },
        }
    }

    /// `appliesTo`: the first subject that names `user`.
    pub fn subject_for(&self, user: &UserInfo) -> Option<&Subject> {
        self.subjects
            .iter()
            .find(|subject| subject.applies_to(user, &self.namespace))
    }

    /// What `source.String()` says in an "allowed by" reason.
    pub fn describe<'a>(&'a self, subject: &'a Subject) -> BindingSource<'a> {
        BindingSource {
            binding: self,
            subject,
        }
    }
}

/// One binding and the subject through which it applies (kube's
/// `clusterRoleBindingDescriber` / `roleBindingDescriber`).
pub struct BindingSource<'a> {
    pub binding: &'a Binding,
    pub subject: &'a Subject,
}

impl fmt::Display for BindingSource<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let binding = self.binding;
        if binding.namespace.is_empty() {
            write!(
                formatter,
                "ClusterRoleBinding {} of {} {} to {}",
                quote(&binding.name),
                binding.role_ref.kind,
                quote(&binding.role_ref.name),
                self.subject.describe("")
            )
        } else {
            write!(
                formatter,
                "RoleBinding {} of {} {} to {}",
                quote(&format!("{}/{}", binding.name, binding.namespace)),
                binding.role_ref.kind,
                quote(&binding.role_ref.name),
                self.subject.describe(&binding.namespace)
            )
        }
    }
}

/// Why a binding's role could not be read (`GetRoleReferenceRules`; the
/// listers' `NotFound` texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoleRefError {
    #[error("role.rbac.authorization.k8s.io {} not found", quote(.0))]
    RoleNotFound(String),
    #[error("clusterrole.rbac.authorization.k8s.io {} not found", quote(.0))]
    ClusterRoleNotFound(String),
    #[error("unsupported role reference kind: {}", quote(.0))]
    UnsupportedKind(String),
}

impl RoleRefError {
    /// The same failure as the RBAC registry's role getters word it
    /// (escalation checks read roles through the registry: plural resources).
    pub fn registry_message(&self) -> String {
        match self {
            RoleRefError::RoleNotFound(name) => {
                format!("roles.rbac.authorization.k8s.io {} not found", quote(name))
            }
            RoleRefError::ClusterRoleNotFound(name) => {
                format!(
                    "clusterroles.rbac.authorization.k8s.io {} not found",
                    quote(name)
                )
            }
            RoleRefError::UnsupportedKind(_) => self.to_string(),
        }
    }
}
