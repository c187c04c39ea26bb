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
use crate::admission::webhook::config::MatchPolicy;
use crate::admission::webhook::equivalent::{self, Equivalent};
use crate::admission::webhook::matching::{
    names_resource, namespace_matches, object_matches, rule_matches,
};
use crate::object::ObjectStore;
use crate::status::Status;

/// How a request matched a policy's rules: at its own resource, or (with
/// `matchPolicy: Equivalent`) at an equivalent one, whose kind the policy
/// then evaluates the objects at.
#[derive(Debug, Clone, PartialEq)]
pub enum Matched {
    Own,
    Equivalent(Equivalent),
}

/// `matchesResourceRules`: a rule that matches the request and, when it
/// names resources, the request's name; else, unless the policy is
/// `Exact`, a rule that matches an equivalent resource (kube checks no
/// names there).
fn matches_rules(
    store: &ObjectStore,
    rules: &[NamedRule],
    match_policy: MatchPolicy,
    attributes: &Attributes<'_>,
) -> Option<Matched> {
    let own = rules.iter().any(|named| {
        rule_matches(&named.rule, attributes)
            && (named.resource_names.is_empty()
                || named
                    .resource_names
                    .iter()
                    .any(|name| name == attributes.name))
    });
    if own {
        return Some(Matched::Own);
    }
    if match_policy == MatchPolicy::Exact
        || !names_resource(rules.iter().map(|named| &named.rule), attributes)
    {
        return None;
    }
    let equivalents = equivalent::equivalents(store, attributes);
    rules.iter().find_map(|named| {
        equivalents
            .iter()
            .find(|equivalent| {
                rule_matches(
                    &named.rule,
                    &equivalent.attributes(attributes, attributes.old_object),
                )
            })
            .map(|equivalent| Matched::Equivalent(equivalent.clone()))
    })
}

/// `Matcher.Matches`. An empty `resourceRules` (a binding's
/// matchResources that only narrows by selectors) matches every resource
/// at its own version.
pub fn matches(
    store: &ObjectStore,
    criteria: &MatchResources,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<Option<Matched>, Status> {
    let namespace = namespace_matches(store, &criteria.namespace_selector, attributes, object);
    if matches!(namespace, Ok(false)) {
        return Ok(None);
    }
    let object_selected = object_matches(&criteria.object_selector, attributes, object);
    if matches!(object_selected, Ok(false)) {
        return Ok(None);
    }
    let policy = criteria.match_policy;
    if matches_rules(store, &criteria.exclude_resource_rules, policy, attributes).is_some() {
        return Ok(None);
    }
    let matched = if criteria.resource_rules.is_empty() {
        Some(Matched::Own)
    } else {
        matches_rules(store, &criteria.resource_rules, policy, attributes)
    };
    if matched.is_none() {
        return Ok(None);
    }
    object_selected?;
    namespace?;
    Ok(matched)
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
        assert!(matches(&store, &rules, &create, None)
            .expect("no error")
            .is_some());
        let delete = attributes(Operation::Delete, "deployments", "", "web");
        assert!(matches(&store, &rules, &delete, None)
            .expect("no error")
            .is_none());
        let excluded = attributes(Operation::Create, "deployments", "", "skipped");
        assert!(matches(&store, &rules, &excluded, None)
            .expect("no error")
            .is_none());
        let scale_web = attributes(Operation::Update, "deployments", "scale", "web");
        assert!(matches(&store, &rules, &scale_web, None)
            .expect("no error")
            .is_some());
        let scale_other = attributes(Operation::Update, "deployments", "scale", "db");
        assert!(matches(&store, &rules, &scale_other, None)
            .expect("no error")
            .is_none());
        let status = attributes(Operation::Update, "deployments", "status", "web");
        assert!(matches(&store, &rules, &status, None)
            .expect("no error")
            .is_none());
    }

    /// `matchPolicy: Equivalent` (the default) matches a core v1 Event
    /// create by rules naming `events.k8s.io/v1`, at that kind; `Exact`
    /// does not; an equivalent exclusion excludes.
    #[tokio::test]
    async fn equivalent_resources_match_at_their_own_kind() {
        let store = store().await;
        let create = Attributes {
            kind: GroupVersionName::new("", "v1", "Event"),
            resource: GroupVersionName::new("", "v1", "events"),
            ..attributes(Operation::Create, "events", "", "e")
        };
        let rule = json!({"apiGroups": ["events.k8s.io"], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["events"]});
        let equivalent = criteria(json!({"resourceRules": [rule]}));
        match matches(&store, &equivalent, &create, None).expect("no error") {
            Some(Matched::Equivalent(matched)) => {
                assert_eq!(
                    matched.kind,
                    GroupVersionName::new("events.k8s.io", "v1", "Event")
                );
                assert_eq!(
                    matched.resource,
                    GroupVersionName::new("events.k8s.io", "v1", "events")
                );
            }
            other => panic!("matched {other:?}"),
        }
        let exact = criteria(json!({"resourceRules": [rule], "matchPolicy": "Exact"}));
        assert!(matches(&store, &exact, &create, None)
            .expect("no error")
            .is_none());
        let own = criteria(
            json!({"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["events"]}]}),
        );
        assert_eq!(
            matches(&store, &own, &create, None).expect("no error"),
            Some(Matched::Own)
        );
        let excluded = criteria(json!({
            "resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"],
                "operations": ["*"], "resources": ["*"]}],
            "excludeResourceRules": [rule],
        }));
        assert!(matches(&store, &excluded, &create, None)
            .expect("no error")
            .is_none());
    }

    #[tokio::test]
    async fn object_selector_reads_the_new_or_old_labels_and_empty_rules_match_all() {
        let store = store().await;
        let selected = criteria(json!({"objectSelector": {"matchLabels": {"team": "a"}}}));
        let request = attributes(Operation::Create, "deployments", "", "web");
        let labelled = json!({"metadata": {"labels": {"team": "a"}}});
        let other = json!({"metadata": {"labels": {"team": "b"}}});
        assert!(matches(&store, &selected, &request, Some(&labelled))
            .expect("no error")
            .is_some());
        assert!(matches(&store, &selected, &request, Some(&other))
            .expect("no error")
            .is_none());
        let mut update = attributes(Operation::Update, "deployments", "", "web");
        update.old_object = Some(&labelled);
        assert!(matches(&store, &selected, &update, Some(&other))
            .expect("no error")
            .is_some());
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
        assert!(matches(&store, &bad, &delete, None)
            .expect("no error")
            .is_none());
    }
}
