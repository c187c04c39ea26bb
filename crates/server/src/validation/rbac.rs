//! RBAC validation (`pkg/apis/rbac/validation/validation.go`: `ValidateRole`,
//! `ValidateClusterRole`, `ValidatePolicyRule`, `ValidateRoleBinding`,
//! `ValidateClusterRoleBinding`, `ValidateRoleBindingSubject` and the
//! bindings' immutable `roleRef`).

use serde_json::Value;

use super::field::{self, child, index};
use super::selector;
use crate::go::strconv::quote;
use crate::status::FieldError;

const GROUP: &str = "rbac.authorization.k8s.io";

/// `ValidatePolicyRule` of every rule.
fn rules(object: &Value, namespaced: bool, errors: &mut Vec<FieldError>) {
    for (position, rule) in field::items_at(object, "rules").iter().enumerate() {
        let path = index("rules", position);
        if field::items_at(rule, "verbs").is_empty() {
            errors.push(field::required(
                &child(&path, "verbs"),
                "verbs must contain at least one value",
            ));
        }
        let urls = field::items_at(rule, "nonResourceURLs");
        if !urls.is_empty() {
            let rendered = selector::go_string_slice(rule.get("nonResourceURLs"));
            let urls_path = child(&path, "nonResourceURLs");
            if namespaced {
                errors.push(field::invalid_rendered(
                    &urls_path,
                    &rendered,
                    "namespaced rules cannot apply to non-resource URLs",
                ));
            }
            let resource_fields = ["apiGroups", "resources", "resourceNames"]
                .iter()
                .any(|name| !field::items_at(rule, name).is_empty());
            if resource_fields {
                errors.push(field::invalid_rendered(
                    &urls_path,
                    &rendered,
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
            continue;
        }
        if field::items_at(rule, "apiGroups").is_empty() {
            errors.push(field::required(
                &child(&path, "apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
        if field::items_at(rule, "resources").is_empty() {
            errors.push(field::required(
                &child(&path, "resources"),
                "resource rules must supply at least one resource",
            ));
        }
    }
}

/// `ValidateRole`.
pub fn role(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    rules(object, true, &mut errors);
    errors
}

/// `ValidateClusterRole`.
pub fn cluster_role(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    rules(object, false, &mut errors);
    if let Some(aggregation) = object.get("aggregationRule").filter(|v| !v.is_null()) {
        let selectors = field::items_at(aggregation, "clusterRoleSelectors");
        let path = "aggregationRule.clusterRoleSelectors";
        if selectors.is_empty() {
            errors.push(field::required(
                path,
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
        for (position, selector_value) in selectors.iter().enumerate() {
            selector::validate(selector_value, &index(path, position), &mut errors);
        }
    }
    errors
}

/// `ValidateRoleBinding` (`namespaced`) or `ValidateClusterRoleBinding`.
pub fn binding(object: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let role_ref = object.get("roleRef").unwrap_or(&Value::Null);
    let group = field::str_at(role_ref, "apiGroup");
    if group != GROUP {
        errors.push(field::not_supported("roleRef.apiGroup", group, &[GROUP]));
    }
    let kind = field::str_at(role_ref, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        errors.push(field::not_supported("roleRef.kind", kind, kinds));
    }
    let name = field::str_at(role_ref, "name");
    if name.is_empty() {
        errors.push(field::required("roleRef.name", ""));
    } else {
        for message in crate::names::path_segment(name) {
            errors.push(field::invalid("roleRef.name", name, message));
        }
    }
    for (position, subject) in field::items_at(object, "subjects").iter().enumerate() {
        binding_subject(
            subject,
            namespaced,
            &index("subjects", position),
            &mut errors,
        );
    }
    errors
}

/// `ValidateRoleBindingSubject`.
fn binding_subject(subject: &Value, namespaced: bool, path: &str, errors: &mut Vec<FieldError>) {
    let name = field::str_at(subject, "name");
    if name.is_empty() {
        errors.push(field::required(&child(path, "name"), ""));
    }
    let group = field::str_at(subject, "apiGroup");
    match field::str_at(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                field::dns1123_subdomain(&child(path, "name"), name, errors);
            }
            if !group.is_empty() {
                errors.push(field::not_supported(&child(path, "apiGroup"), group, &[""]));
            }
            if !namespaced && field::str_at(subject, "namespace").is_empty() {
                errors.push(field::required(&child(path, "namespace"), ""));
            }
        }
        "User" | "Group" => {
            if group != GROUP {
                errors.push(field::not_supported(
                    &child(path, "apiGroup"),
                    group,
                    &[GROUP],
                ));
            }
        }
        other => errors.push(field::not_supported(
            &child(path, "kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
}

/// `ValidateRoleBindingUpdate` / `ValidateClusterRoleBindingUpdate`: the
/// binding's rules, then an unchanged `roleRef`.
pub fn binding_update(new: &Value, old: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errors = binding(new, namespaced);
    let role_ref = |object: &Value| {
        let role_ref = object.get("roleRef").unwrap_or(&Value::Null);
        (
            field::str_at(role_ref, "apiGroup").to_string(),
            field::str_at(role_ref, "kind").to_string(),
            field::str_at(role_ref, "name").to_string(),
        )
    };
    let (group, kind, name) = role_ref(new);
    if (group.clone(), kind.clone(), name.clone()) != role_ref(old) {
        errors.push(field::invalid_rendered(
            "roleRef",
            &format!(
                "rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}",
                quote(&group),
                quote(&kind),
                quote(&name)
            ),
            "cannot change roleRef",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestValidateRoleBinding*`, `TestValidatePolicyRule`
    /// and `TestValidateClusterRoleAggregation`.
    #[test]
    fn roles_and_bindings_as_kube() {
        let valid_role =
            json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
        assert!(role(&valid_role).is_empty());
        assert_eq!(
            texts(role(&json!({"rules": [{"verbs": []}, {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}))),
            vec![
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[0].resources: Required value: resource rules must supply at least one resource",
                "rules[1].nonResourceURLs: Invalid value: []string{\"/healthz\"}: namespaced rules cannot apply to non-resource URLs",
            ]
        );
        assert!(cluster_role(
            &json!({"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]})
        )
        .is_empty());
        assert_eq!(
            texts(cluster_role(&json!({"aggregationRule": {}}))),
            vec!["aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"]
        );
        let subjects = json!([
            {"kind": "User", "apiGroup": GROUP, "name": "jane"},
            {"kind": "ServiceAccount", "name": "default", "namespace": "ns"}
        ]);
        let valid = json!({"roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "r"}, "subjects": subjects});
        assert!(binding(&valid, true).is_empty());
        assert_eq!(
            texts(binding(&valid, false)),
            vec!["roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\""]
        );
        assert_eq!(
            texts(binding(&json!({"roleRef": {"apiGroup": "x", "kind": "Thing"},
                                  "subjects": [{"kind": "Robot", "name": "r"}, {"kind": "User", "name": ""},
                                               {"kind": "ServiceAccount", "name": "Bad_Name", "apiGroup": GROUP}]}), false)),
            vec![
                "roleRef.apiGroup: Unsupported value: \"x\": supported values: \"rbac.authorization.k8s.io\"",
                "roleRef.kind: Unsupported value: \"Thing\": supported values: \"ClusterRole\"",
                "roleRef.name: Required value",
                "subjects[0].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"",
                "subjects[1].name: Required value",
                "subjects[1].apiGroup: Unsupported value: \"\": supported values: \"rbac.authorization.k8s.io\"",
                "subjects[2].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "subjects[2].apiGroup: Unsupported value: \"rbac.authorization.k8s.io\": supported values: \"\"",
                "subjects[2].namespace: Required value",
            ]
        );
        let mut changed = valid.clone();
        changed["roleRef"]["name"] = json!("other");
        assert_eq!(
            texts(binding_update(&changed, &valid, true)),
            vec!["roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"Role\", Name:\"other\"}: cannot change roleRef"]
        );
    }
}
