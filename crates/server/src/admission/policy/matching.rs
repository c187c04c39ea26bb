//! Which requests a policy or binding applies to
//! (`admission/plugin/policy/matching/matching.go` `Matcher.Matches`):
//! the namespaceSelector, the objectSelector, the excluded rules, then the
//! resource rules (with `resourceNames`); a selector error counts only when
//! the rules match. Rules are matched as webhooks' are
//! (`webhook/matching.rs`), so `*`, `pods/status`, `*/*` and scopes mean
//! the same.

use serde_json::Value;

use super::compile::{MatchResources, NamedRule};
use crate::admission::attributes::Attributes;
use crate::admission::webhook::matching::{namespace_matches, object_matches, rule_matches};
use crate::object::ObjectStore;
use crate::status::Status;

/// `matchesResourceRules`: a rule that matches the request and, when it
/// names resources, the request's name.
fn matches_rules(rules: &[NamedRule], attributes: &Attributes<'_>) -> bool {
    rules.iter().any(|named| {
        rule_matches(&named.rule, attributes)
            && (named.resource_names.is_empty()
                || named
                    .resource_names
                    .iter()
                    .any(|name| name == attributes.name))
    })
}

/// `Matcher.Matches`. An empty `resourceRules` (a binding's
/// matchResources that only narrows by selectors) matches every resource.
///
/// matchPolicy `Equivalent` would also try the group's other versions of
/// the resource; ferrokube does not convert objects for admission, so only
/// the request's own version is matched (docs/compatibility.md), as for
/// webhooks.
pub fn matches(
    store: &ObjectStore,
    criteria: &MatchResources,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<bool, Status> {
    let namespace = namespace_matches(store, &criteria.namespace_selector, attributes, object);
    if matches!(namespace, Ok(false)) {
        return Ok(false);
    }
    let object_selected = object_matches(&criteria.object_selector, attributes, object);
    if matches!(object_selected, Ok(false)) {
        return Ok(false);
    }
    if matches_rules(&criteria.exclude_resource_rules, attributes) {
        return Ok(false);
    }
    let matched =
        criteria.resource_rules.is_empty() || matches_rules(&criteria.resource_rules, attributes);
    if !matched {
        return Ok(false);
    }
    object_selected?;
    namespace?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::attributes::{GroupVersionName, Operation};
    use crate::admission::policy::compile;
    use serde_json::json;

    fn attributes<'a>(
        operation: Operation,
        resource: &str,
        subresource: &'a str,
        name: &'a str,
    ) -> Attributes<'a> {
        Attributes {
            operation,
            kind: GroupVersionName::new("apps", "v1", "Deployment"),
            resource: GroupVersionName::new("apps", "v1", resource),
            subresource,
            name,
            namespace: "",
            old_object: None,
            options: Value::Null,
            dry_run: false,
            user: None,
        }
    }

    fn criteria(constraints: Value) -> MatchResources {
        let policy = compile::policy(&json!({
            "metadata": {"name": "p"},
            "spec": {"matchConstraints": constraints},
        }))
        .expect("compiles");
        policy.match_constraints
    }

    async fn store() -> ObjectStore {
        use ferrokube_store::{Backend, LocalBackend, MemoryDisk, Store};
        let backend: std::sync::Arc<dyn Backend> =
            std::sync::Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
        Store::open(backend, crate::object::ObjectCodec)
            .await
            .expect("store")
    }

    #[tokio::test]
    async fn rules_names_and_exclusions_match_as_kubes_matcher() {
        let store = store().await;
        let rules = criteria(json!({
            "resourceRules": [{
                "apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["deployments"],
            }, {
                "apiGroups": ["apps"], "apiVersions": ["*"],
                "operations": ["*"], "resources": ["deployments/scale"],
                "resourceNames": ["web"],
            }],
            "excludeResourceRules": [{
                "apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"],
                "resources": ["*"], "resourceNames": ["skipped"],
            }],
        }));
        let create = attributes(Operation::Create, "deployments", "", "web");
        assert!(matches(&store, &rules, &create, None).expect("no error"));
        let delete = attributes(Operation::Delete, "deployments", "", "web");
        assert!(!matches(&store, &rules, &delete, None).expect("no error"));
        let excluded = attributes(Operation::Create, "deployments", "", "skipped");
        assert!(!matches(&store, &rules, &excluded, None).expect("no error"));
        let scale_web = attributes(Operation::Update, "deployments", "scale", "web");
        assert!(matches(&store, &rules, &scale_web, None).expect("no error"));
        let scale_other = attributes(Operation::Update, "deployments", "scale", "db");
        assert!(!matches(&store, &rules, &scale_other, None).expect("no error"));
        let status = attributes(Operation::Update, "deployments", "status", "web");
        assert!(!matches(&store, &rules, &status, None).expect("no error"));
    }

    #[tokio::test]
    async fn object_selector_reads_the_new_or_old_labels_and_empty_rules_match_all() {
        let store = store().await;
        let selected = criteria(json!({"objectSelector": {"matchLabels": {"team": "a"}}}));
        let request = attributes(Operation::Create, "deployments", "", "web");
        let labelled = json!({"metadata": {"labels": {"team": "a"}}});
        let other = json!({"metadata": {"labels": {"team": "b"}}});
        assert!(matches(&store, &selected, &request, Some(&labelled)).expect("no error"));
        assert!(!matches(&store, &selected, &request, Some(&other)).expect("no error"));
        let mut update = attributes(Operation::Update, "deployments", "", "web");
        update.old_object = Some(&labelled);
        assert!(matches(&store, &selected, &update, Some(&other)).expect("no error"));
    }

    #[tokio::test]
    async fn a_bad_selector_is_an_error_only_when_the_rules_match() {
        let store = store().await;
        let bad = criteria(json!({
            "objectSelector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]},
            "resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["deployments"]}],
        }));
        let create = attributes(Operation::Create, "deployments", "", "web");
        assert!(matches(&store, &bad, &create, None).is_err());
        let delete = attributes(Operation::Delete, "deployments", "", "web");
        assert!(!matches(&store, &bad, &delete, None).expect("no error"));
    }
}
