//! Whether some RBAC rules cover others, as reconciliation asks it
//! (`k8s.io/component-helpers/auth/rbac/validation/policy_comparator.go`
//! `Covers`, `BreakdownRule`): the authorizer's rule type and the comparator
//! escalation prevention uses (`crate::authz::escalation`), one of each.

pub use crate::authz::escalation::{breakdown, uncovered};
pub use crate::authz::rbac::PolicyRule;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn rule(value: Value) -> PolicyRule {
        PolicyRule::from_json(&value)
    }

    #[test]
    fn covers_follows_the_policy_comparator() {
        let owner = [
            rule(
                json!({"apiGroups": [""], "resources": ["pods", "*/status"], "verbs": ["get", "list"]}),
            ),
            rule(json!({"nonResourceURLs": ["/api/*"], "verbs": ["get"]})),
            rule(
                json!({"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["a"], "verbs": ["*"]}),
            ),
        ];
        // Covered: by a verb subset, a `*/status` subresource, a URL prefix, a named rule.
        let covered = [
            rule(json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]})),
            rule(json!({"apiGroups": [""], "resources": ["services/status"], "verbs": ["list"]})),
            rule(json!({"nonResourceURLs": ["/api/v1"], "verbs": ["get"]})),
            rule(
                json!({"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["a"], "verbs": ["delete"]}),
            ),
        ];
        assert_eq!(uncovered(&owner, &covered), Vec::<PolicyRule>::new());
        // Not covered: broken down to atomic rules, in order.
        let wanted = [
            rule(json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "delete"]})),
            rule(
                json!({"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["a", "b"], "verbs": ["get"]}),
            ),
            rule(json!({"nonResourceURLs": ["/apis"], "verbs": ["get"]})),
        ];
        let missing: Vec<Value> = uncovered(&owner, &wanted)
            .iter()
            .map(PolicyRule::to_json)
            .collect();
        assert_eq!(
            missing,
            vec![
                json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]}),
                json!({"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["b"], "verbs": ["get"]}),
                json!({"nonResourceURLs": ["/apis"], "verbs": ["get"]}),
            ]
        );
    }

    #[test]
    fn a_named_owner_does_not_cover_every_name() {
        let owner = [rule(
            json!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["x"], "verbs": ["get"]}),
        )];
        let servant = [rule(
            json!({"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}),
        )];
        assert_eq!(uncovered(&owner, &servant).len(), 1);
    }
}
