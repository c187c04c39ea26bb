//! The bootstrap RBAC policy: every default ClusterRole, ClusterRoleBinding,
//! Role and RoleBinding kube-apiserver 1.34 keeps
//! (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy`), vendored as kube's
//! golden files under `data/` (see `data/README.md`), and the post-start hook
//! that reconciles them at every start (`pkg/registry/rbac/rest/storage_rbac.go`,
//! `EnsureRBACPolicy`).

mod ensure;
mod reconcile;
mod rule;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

pub use ensure::{ensure_rbac_policy, POST_START_HOOK};
pub use reconcile::{reconcile_binding, reconcile_role, BindingOutcome, Operation, RoleOutcome};
pub use rule::{breakdown, uncovered, PolicyRule};

/// `rbacv1.AutoUpdateAnnotationKey`: a default object annotated `"false"` is
/// left as its owner made it.
pub const AUTOUPDATE_ANNOTATION: &str = "rbac.authorization.kubernetes.io/autoupdate";

#[derive(Debug, thiserror::Error)]
pub enum RbacPolicyError {
    #[error("the vendored bootstrap policy {file} does not parse: {message}")]
    Vendored { file: &'static str, message: String },
    #[error("{operation} {kind} {name}: {message}")]
    Write {
        operation: &'static str,
        kind: &'static str,
        name: String,
        message: String,
    },
    #[error("{kind} {name}: exceeded maximum attempts")]
    Attempts { kind: &'static str, name: String },
}

/// What `storage_rbac.go`'s `PolicyData` holds: the objects in the order kube
/// reconciles them.
#[derive(Debug)]
pub struct BootstrapPolicy {
    /// `ClusterRoles()` then `ControllerRoles()`.
    pub cluster_roles: Vec<Value>,
    /// `ClusterRoleBindings()` then `ControllerRoleBindings()`.
    pub cluster_role_bindings: Vec<Value>,
    /// `NamespaceRoles()`.
    pub roles: Vec<Value>,
    /// `NamespaceRoleBindings()`.
    pub role_bindings: Vec<Value>,
}

const CLUSTER_ROLES: &str = include_str!("data/cluster-roles.yaml");
const CONTROLLER_ROLES: &str = include_str!("data/controller-roles.yaml");
const CLUSTER_ROLE_BINDINGS: &str = include_str!("data/cluster-role-bindings.yaml");
const CONTROLLER_ROLE_BINDINGS: &str = include_str!("data/controller-role-bindings.yaml");
const NAMESPACE_ROLES: &str = include_str!("data/namespace-roles.yaml");
const NAMESPACE_ROLE_BINDINGS: &str = include_str!("data/namespace-role-bindings.yaml");

/// The items of one vendored `v1.List`, without the `creationTimestamp: null`
/// kube's golden files carry.
fn items(file: &'static str, yaml: &str) -> Result<Vec<Value>, RbacPolicyError> {
    let list =
        crate::yaml::yaml_to_json(yaml.as_bytes()).map_err(|error| RbacPolicyError::Vendored {
            file,
            message: error.to_string(),
        })?;
    let Some(items) = list.get("items").and_then(Value::as_array) else {
        return Err(RbacPolicyError::Vendored {
            file,
            message: "no items".into(),
        });
    };
    Ok(items
        .iter()
        .cloned()
        .map(|mut item| {
            if let Some(metadata) = crate::object::metadata_mut(&mut item) {
                metadata.remove("creationTimestamp");
            }
            item
        })
        .collect())
}

impl BootstrapPolicy {
    fn load() -> Result<BootstrapPolicy, RbacPolicyError> {
        let mut cluster_roles = items("cluster-roles.yaml", CLUSTER_ROLES)?;
        cluster_roles.extend(items("controller-roles.yaml", CONTROLLER_ROLES)?);
        let mut cluster_role_bindings = items("cluster-role-bindings.yaml", CLUSTER_ROLE_BINDINGS)?;
        cluster_role_bindings.extend(items(
            "controller-role-bindings.yaml",
            CONTROLLER_ROLE_BINDINGS,
        )?);
        Ok(BootstrapPolicy {
            cluster_roles,
            cluster_role_bindings,
            roles: items("namespace-roles.yaml", NAMESPACE_ROLES)?,
            role_bindings: items("namespace-role-bindings.yaml", NAMESPACE_ROLE_BINDINGS)?,
        })
    }

    /// The policy, parsed once per process.
    pub fn get() -> Result<&'static BootstrapPolicy, &'static RbacPolicyError> {
        static POLICY: OnceLock<Result<BootstrapPolicy, RbacPolicyError>> = OnceLock::new();
        POLICY.get_or_init(BootstrapPolicy::load).as_ref()
    }

    /// Every object with its kind, for tests and tools.
    pub fn objects(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        let tag = |kind: &'static str| move |object| (kind, object);
        self.cluster_roles
            .iter()
            .map(tag("ClusterRole"))
            .chain(
                self.cluster_role_bindings
                    .iter()
                    .map(tag("ClusterRoleBinding")),
            )
            .chain(self.roles.iter().map(tag("Role")))
            .chain(self.role_bindings.iter().map(tag("RoleBinding")))
    }
}

/// `ClusterRolesToAggregate`: roles that became aggregated, old name → the
/// role their custom rules move to (`primeAggregatedClusterRoles`).
pub fn cluster_roles_to_aggregate() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        ("admin", "system:aggregate-to-admin"),
        ("edit", "system:aggregate-to-edit"),
        ("view", "system:aggregate-to-view"),
    ])
}

/// `ClusterRoleBindingsToSplit`: an old binding whose subjects seed a newer
/// one (`system:public-info-viewer` was split from `system:discovery`).
pub fn cluster_role_bindings_to_split() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([("system:discovery", "system:public-info-viewer")])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendored_policy_parses_with_kube_metadata() {
        let policy = match BootstrapPolicy::get() {
            Ok(policy) => policy,
            Err(error) => panic!("{error}"),
        };
        assert_eq!(policy.cluster_roles.len(), 31 + 37);
        assert_eq!(policy.cluster_role_bindings.len(), 12 + 37);
        assert_eq!(policy.roles.len(), 7);
        assert_eq!(policy.role_bindings.len(), 7);
        for (kind, object) in policy.objects() {
            assert_eq!(object["kind"], kind);
            assert_eq!(object["apiVersion"], "rbac.authorization.k8s.io/v1");
            assert_eq!(
                object["metadata"]["annotations"][AUTOUPDATE_ANNOTATION], "true",
                "{object}"
            );
            assert_eq!(
                object["metadata"]["labels"]["kubernetes.io/bootstrapping"], "rbac-defaults",
                "{object}"
            );
            assert!(object["metadata"].get("creationTimestamp").is_none());
        }
        // Every controller role has its binding to the controller's service account.
        for role in &policy.cluster_roles {
            let name = crate::object::name(role);
            let Some(short) = name.strip_prefix("system:controller:") else {
                continue;
            };
            let binding = policy
                .cluster_role_bindings
                .iter()
                .find(|binding| crate::object::name(binding) == name)
                .unwrap_or_else(|| panic!("no binding for {name}"));
            assert_eq!(binding["roleRef"]["name"], name);
            assert_eq!(binding["subjects"][0]["name"], short);
        }
    }
}
