//! What reconciling one default object against the stored one does, without
//! doing it: `k8s.io/component-helpers/auth/rbac/reconciliation`
//! (`computeReconciledRole` in `reconcile_role.go`,
//! `computeReconciledRoleBinding` in `reconcile_rolebindings.go`) with
//! `RemoveExtraPermissions` and `RemoveExtraSubjects` false, as
//! `EnsureRBACPolicy` runs them: missing rules, subjects, labels,
//! annotations and aggregation selectors are added, extras kept.

use serde_json::{Map, Value};

use super::rule::{uncovered, PolicyRule};
use super::AUTOUPDATE_ANNOTATION;

/// `ReconcileOperation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    None,
    Create,
    Update,
    /// A binding whose roleRef changed: deleted and created again.
    Recreate,
}

/// `ReconcileClusterRoleResult`, for Roles and ClusterRoles alike.
#[derive(Debug, Clone)]
pub struct RoleOutcome {
    pub operation: Operation,
    /// The stored object says `autoupdate: "false"`: nothing is written.
    pub protected: bool,
    /// The object to create or update.
    pub role: Value,
    pub missing_rules: Vec<PolicyRule>,
}

/// `ReconcileClusterRoleBindingResult`, for RoleBindings and ClusterRoleBindings.
#[derive(Debug, Clone)]
pub struct BindingOutcome {
    pub operation: Operation,
    pub protected: bool,
    pub binding: Value,
    pub missing_subjects: Vec<Value>,
}

/// A metadata string map; absent (or not a map) is `None`, as a nil Go map.
fn string_map(object: &Value, field: &str) -> Option<Map<String, Value>> {
    object
        .get("metadata")
        .and_then(|metadata| metadata.get(field))
        .and_then(Value::as_object)
        .cloned()
}

/// `merge(expected, existing)`: the existing values win.
fn merge(
    expected: Option<Map<String, Value>>,
    existing: Option<Map<String, Value>>,
) -> Option<Map<String, Value>> {
    if expected.is_none() && existing.is_none() {
        return None;
    }
    let mut output = expected.unwrap_or_default();
    output.extend(existing.unwrap_or_default());
    Some(output)
}

fn is_protected(existing: &Value) -> bool {
    string_map(existing, "annotations")
        .and_then(|annotations| annotations.get(AUTOUPDATE_ANNOTATION).cloned())
        == Some(Value::String("false".into()))
}

/// Merges the expected labels and annotations into `result` (a copy of
/// `existing`); true when that changed them.
fn merge_metadata(result: &mut Value, existing: &Value, expected: &Value) -> bool {
    let mut changed = false;
    for field in ["annotations", "labels"] {
        let current = string_map(existing, field);
        let merged = merge(string_map(expected, field), current.clone());
        if merged != current {
            changed = true;
            if let (Some(metadata), Some(merged)) = (crate::object::metadata_mut(result), merged) {
                metadata.insert(field.into(), Value::Object(merged));
            }
        }
    }
    changed
}

/// The selectors of an `aggregationRule`; `None` when the role has none.
fn selectors(role: &Value) -> Option<Vec<Value>> {
    let rule = role.get("aggregationRule").filter(|rule| !rule.is_null())?;
    Some(
        rule.get("clusterRoleSelectors")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    )
}

/// A label selector with empty members dropped, so that `equality.Semantic`
/// (nil and empty alike) is plain equality.
fn normalized_selector(selector: &Value) -> Value {
    let mut out = Map::new();
    if let Some(labels) = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .filter(|labels| !labels.is_empty())
    {
        out.insert("matchLabels".into(), Value::Object(labels.clone()));
    }
    if let Some(expressions) = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .filter(|expressions| !expressions.is_empty())
    {
        let expressions = expressions
            .iter()
            .map(|expression| {
                let mut expression = expression.as_object().cloned().unwrap_or_default();
                if expression
                    .get("values")
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty)
                {
                    expression.remove("values");
                }
                Value::Object(expression)
            })
            .collect();
        out.insert("matchExpressions".into(), Value::Array(expressions));
    }
    Value::Object(out)
}

/// `aggregationRuleCovers(owner, servant)`: the servant's selectors the owner lacks.
fn uncovered_selectors(owner: Option<&[Value]>, servant: Option<&[Value]>) -> Vec<Value> {
    match (owner, servant) {
        (_, None) => Vec::new(),
        (None, Some(servant)) => servant.to_vec(),
        (Some(owner), Some(servant)) => {
            let owner: Vec<Value> = owner.iter().map(normalized_selector).collect();
            servant
                .iter()
                .filter(|selector| !owner.contains(&normalized_selector(selector)))
                .cloned()
                .collect()
        }
    }
}

/// `ReconcileRoleOptions.run`'s decision for one Role or ClusterRole.
pub fn reconcile_role(existing: Option<&Value>, expected: &Value) -> RoleOutcome {
    let Some(existing) = existing else {
        return RoleOutcome {
            operation: Operation::Create,
            protected: false,
            role: expected.clone(),
            missing_rules: PolicyRule::rules_of(expected),
        };
    };
    let mut operation = Operation::None;
    let mut role = existing.clone();
    if merge_metadata(&mut role, existing, expected) {
        operation = Operation::Update;
    }
    let missing_rules = uncovered(
        &PolicyRule::rules_of(existing),
        &PolicyRule::rules_of(expected),
    );
    if !missing_rules.is_empty() {
        let mut rules = existing
            .get("rules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        rules.extend(missing_rules.iter().map(PolicyRule::to_json));
        role["rules"] = Value::Array(rules);
        operation = Operation::Update;
    }
    let expected_selectors = selectors(expected);
    let existing_selectors = selectors(existing);
    let missing_selectors =
        uncovered_selectors(existing_selectors.as_deref(), expected_selectors.as_deref());
    if expected_selectors.is_none() && existing_selectors.is_some() {
        // Not expected to be an aggregated role at all.
        if let Some(object) = role.as_object_mut() {
            object.remove("aggregationRule");
        }
        operation = Operation::Update;
    } else if !missing_selectors.is_empty() {
        let mut all = existing_selectors.unwrap_or_default();
        all.extend(missing_selectors);
        role["aggregationRule"] = serde_json::json!({ "clusterRoleSelectors": all });
        operation = Operation::Update;
    }
    RoleOutcome {
        operation,
        protected: is_protected(existing),
        role,
        missing_rules,
    }
}

/// A subject as the struct `rbacv1.Subject` compares: absent fields are "".
fn subject_key(subject: &Value) -> [&str; 4] {
    let field = |name: &str| subject.get(name).and_then(Value::as_str).unwrap_or("");
    [
        field("kind"),
        field("apiGroup"),
        field("name"),
        field("namespace"),
    ]
}

fn role_ref_key(binding: &Value) -> [&str; 3] {
    let field = |name: &str| {
        binding
            .get("roleRef")
            .and_then(|role_ref| role_ref.get(name))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    [field("apiGroup"), field("kind"), field("name")]
}

fn subjects(binding: &Value) -> Vec<Value> {
    binding
        .get("subjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// `ReconcileRoleBindingOptions.run`'s decision for one RoleBinding or
/// ClusterRoleBinding.
pub fn reconcile_binding(existing: Option<&Value>, expected: &Value) -> BindingOutcome {
    let Some(existing) = existing else {
        return BindingOutcome {
            operation: Operation::Create,
            protected: false,
            binding: expected.clone(),
            missing_subjects: subjects(expected),
        };
    };
    let protected = is_protected(existing);
    if role_ref_key(existing) != role_ref_key(expected) {
        // The roleRef is immutable: reset the binding completely.
        return BindingOutcome {
            operation: Operation::Recreate,
            protected,
            binding: expected.clone(),
            missing_subjects: Vec::new(),
        };
    }
    let mut operation = Operation::None;
    let mut binding = existing.clone();
    if merge_metadata(&mut binding, existing, expected) {
        operation = Operation::Update;
    }
    // `diffSubjectLists(expected, existing)`: expected ones not there, once each.
    let existing_subjects = subjects(existing);
    let mut missing_subjects: Vec<Value> = Vec::new();
    for subject in subjects(expected) {
        let key = subject_key(&subject);
        let present = existing_subjects
            .iter()
            .chain(missing_subjects.iter())
            .any(|other| subject_key(other) == key);
        if !present {
            missing_subjects.push(subject);
        }
    }
    if !missing_subjects.is_empty() {
        let mut all = existing_subjects;
        all.extend(missing_subjects.iter().cloned());
        binding["subjects"] = Value::Array(all);
        operation = Operation::Update;
    }
    BindingOutcome {
        operation,
        protected,
        binding,
        missing_subjects,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn expected_role() -> Value {
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "name": "system:test",
                "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                "annotations": {AUTOUPDATE_ANNOTATION: "true"},
            },
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
        })
    }

    #[test]
    fn a_missing_role_is_created_as_expected() {
        let outcome = reconcile_role(None, &expected_role());
        assert_eq!(outcome.operation, Operation::Create);
        assert_eq!(outcome.role, expected_role());
    }

    #[test]
    fn missing_rules_and_metadata_are_added_and_extras_kept() {
        let existing = json!({
            "kind": "ClusterRole",
            "metadata": {"name": "system:test", "labels": {"mine": "x"}, "resourceVersion": "7"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
                {"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]},
            ],
        });
        let outcome = reconcile_role(Some(&existing), &expected_role());
        assert_eq!(outcome.operation, Operation::Update);
        assert!(!outcome.protected);
        assert_eq!(
            outcome.role["rules"],
            json!([
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
                {"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]},
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
            ])
        );
        assert_eq!(
            outcome.role["metadata"]["labels"],
            json!({"mine": "x", "kubernetes.io/bootstrapping": "rbac-defaults"})
        );
        assert_eq!(
            outcome.role["metadata"]["annotations"][AUTOUPDATE_ANNOTATION],
            "true"
        );
        assert_eq!(outcome.role["metadata"]["resourceVersion"], "7");
        // Once reconciled there is nothing left to do.
        let again = reconcile_role(Some(&outcome.role), &expected_role());
        assert_eq!(again.operation, Operation::None);
    }

    #[test]
    fn autoupdate_false_is_protected_and_its_value_kept() {
        let mut existing = expected_role();
        existing["metadata"]["annotations"][AUTOUPDATE_ANNOTATION] = json!("false");
        existing["rules"] = json!([]);
        let outcome = reconcile_role(Some(&existing), &expected_role());
        assert!(outcome.protected);
        assert_eq!(outcome.operation, Operation::Update);
        assert_eq!(
            outcome.role["metadata"]["annotations"][AUTOUPDATE_ANNOTATION],
            "false"
        );
    }

    #[test]
    fn aggregation_selectors_are_added_or_removed() {
        let selector = json!({"matchLabels": {"a": "true"}});
        let mut expected = expected_role();
        expected["aggregationRule"] = json!({"clusterRoleSelectors": [selector]});
        let mut existing = expected_role();
        existing["aggregationRule"] = json!({"clusterRoleSelectors": [{"matchLabels": {"b": "true"}, "matchExpressions": []}]});
        let outcome = reconcile_role(Some(&existing), &expected);
        assert_eq!(
            outcome.role["aggregationRule"]["clusterRoleSelectors"],
            json!([{"matchLabels": {"b": "true"}, "matchExpressions": []}, selector])
        );
        let outcome = reconcile_role(Some(&existing), &expected_role());
        assert_eq!(outcome.operation, Operation::Update);
        assert!(outcome.role.get("aggregationRule").is_none());
        let mut same = expected.clone();
        same["aggregationRule"]["clusterRoleSelectors"][0]["matchExpressions"] = json!([]);
        assert_eq!(
            reconcile_role(Some(&same), &expected).operation,
            Operation::None
        );
    }

    #[test]
    fn bindings_gain_missing_subjects_and_are_recreated_for_another_role() {
        let expected = json!({
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "b", "labels": {"l": "v"}, "annotations": {AUTOUPDATE_ANNOTATION: "true"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g1"},
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g2"},
            ],
        });
        let mut existing = expected.clone();
        existing["subjects"] = json!([
            {"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"},
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g2"},
        ]);
        let outcome = reconcile_binding(Some(&existing), &expected);
        assert_eq!(outcome.operation, Operation::Update);
        assert_eq!(
            outcome.binding["subjects"],
            json!([
                {"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"},
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g2"},
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g1"},
            ])
        );
        existing["roleRef"]["name"] = json!("other");
        let outcome = reconcile_binding(Some(&existing), &expected);
        assert_eq!(outcome.operation, Operation::Recreate);
        assert_eq!(outcome.binding, expected);
        assert_eq!(
            reconcile_binding(Some(&expected), &expected).operation,
            Operation::None
        );
    }
}
