//! Which webhooks a request calls (`plugin/webhook/generic/webhook.go`
//! `ShouldCallHook`, `predicates/rules`, `predicates/namespace`,
//! `predicates/object`): namespaceSelector, objectSelector, the rules
//! (with `matchPolicy: Equivalent`, also at the resource's other versions:
//! `equivalent.rs`), then the `matchConditions` (`match_conditions.rs`).

use serde_json::Value;

use super::config::{MatchPolicy, Rule, Scope, Webhook};
use super::equivalent::{self, Equivalent};
use super::match_conditions::{self, Outcome};
use crate::admission::attributes::Attributes;
use crate::label_selector::{LabelSelectorError, Selector};
use crate::object::ObjectStore;
use crate::status::{GroupResource, Status};

/// `rules.IsExemptAdmissionConfigurationResource`: the admission
/// configuration objects themselves are never sent to webhooks.
pub fn is_exempt(attributes: &Attributes<'_>) -> bool {
    attributes.resource.group == "admissionregistration.k8s.io"
        && matches!(
            attributes.resource.name.as_str(),
            "validatingwebhookconfigurations"
                | "mutatingwebhookconfigurations"
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

fn exact_or_wildcard(items: &[String], requested: &str) -> bool {
    items.iter().any(|item| item == "*" || item == requested)
}

/// `rules.Matcher.Matches`: scope, operation, group, version, resource.
pub fn rule_matches(rule: &Rule, attributes: &Attributes<'_>) -> bool {
    let scope = match rule.scope {
        Scope::All => true,
        Scope::Namespaced => !attributes.is_namespace() && !attributes.namespace.is_empty(),
        Scope::Cluster => attributes.is_namespace() || attributes.namespace.is_empty(),
        Scope::Other => false,
    };
    let operation = rule
        .operations
        .iter()
        .any(|operation| operation == "*" || operation == attributes.operation.as_str());
    let resource = rule.resources.iter().any(|entry| {
        let (resource, subresource) = entry.split_once('/').unwrap_or((entry, ""));
        (resource == "*" || resource == attributes.resource.name)
            && (subresource == "*" || subresource == attributes.subresource)
    });
    scope
        && operation
        && exact_or_wildcard(&rule.api_groups, &attributes.resource.group)
        && exact_or_wildcard(&rule.api_versions, &attributes.resource.version)
        && resource
}

/// Whether any of `rules` names the request's resource (or `*`), at any
/// group and version: equivalents keep the resource's name, so rules that
/// do not name it need not look them up (a CRD read per request).
pub(crate) fn names_resource<'r>(
    mut rules: impl Iterator<Item = &'r Rule>,
    attributes: &Attributes<'_>,
) -> bool {
    rules.any(|rule| {
        rule.resources.iter().any(|entry| {
            let resource = entry.split_once('/').map_or(entry.as_str(), |(r, _)| r);
            resource == "*" || resource == attributes.resource.name
        })
    })
}

/// The labels of the request's namespace (`GetNamespaceLabels`): from the
/// object itself for a create or update of a Namespace, else the stored
/// namespace's (404 when it is missing).
pub(crate) fn namespace_labels(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<Option<serde_json::Map<String, Value>>, Status> {
    use crate::admission::attributes::Operation;
    if attributes.is_namespace()
        && attributes.subresource.is_empty()
        && matches!(attributes.operation, Operation::Create | Operation::Update)
    {
        return Ok(object
            .and_then(|object| object.pointer("/metadata/labels"))
            .and_then(Value::as_object)
            .cloned());
    }
    let namespace = if attributes.is_namespace() {
        attributes.name
    } else {
        attributes.namespace
    };
    let snapshot = store.snapshot();
    let not_found = || Status::not_found(&GroupResource::new("", "namespaces"), namespace);
    let entry = snapshot
        .get(&format!("/registry/namespaces/{namespace}"))
        .ok_or_else(not_found)?;
    // The labels from the stored object's index: a namespace's managed
    // fields and status are not parsed on every admitted request.
    if let Some(labels) = entry.object.index().and_then(|view| view.labels_map()) {
        return Ok(Some(labels));
    }
    let stored = entry.object.value().ok_or_else(not_found)?;
    Ok(stored
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned())
}

/// `MatchNamespaceSelector` (webhooks and admission policies):
/// cluster-scoped objects other than namespaces are never exempted.
pub(crate) fn namespace_matches(
    store: &ObjectStore,
    namespace_selector: &Result<Selector, LabelSelectorError>,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<bool, Status> {
    if attributes.namespace.is_empty() && !attributes.is_namespace() {
        return Ok(true);
    }
    let selector = match namespace_selector {
        Ok(selector) => selector,
        Err(error) => return Err(Status::internal(error)),
    };
    if selector.is_empty() {
        return Ok(true);
    }
    let labels = namespace_labels(store, attributes, object)?;
    Ok(selector.matches_labels(labels.as_ref()))
}

/// `MatchObjectSelector` (webhooks and admission policies): the new or
/// the old object's labels.
pub(crate) fn object_matches(
    object_selector: &Result<Selector, LabelSelectorError>,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<bool, Status> {
    let selector = match object_selector {
        Ok(selector) => selector,
        Err(error) => return Err(Status::internal(error)),
    };
    if selector.is_empty() {
        return Ok(true);
    }
    // A CONNECT's object is an options object without ObjectMeta: kube's
    // `meta.Accessor` fails on it and `matchObject` says no.
    let has_meta = attributes.operation != crate::admission::attributes::Operation::Connect;
    let matches = |object: Option<&Value>| {
        has_meta
            && object.is_some_and(|object| {
                selector.matches_labels(
                    object
                        .pointer("/metadata/labels")
                        .and_then(Value::as_object),
                )
            })
    };
    Ok(matches(object) || matches(attributes.old_object))
}

/// How a webhook is called: at the request's resource, or at an
/// equivalent one (`matchPolicy: Equivalent`) with the objects converted.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub equivalent: Option<Equivalent>,
}

/// `ShouldCallHook`: whether and how `webhook` is called for this request;
/// a selector error only counts when the rules match.
pub fn should_call(
    store: &ObjectStore,
    webhook: &Webhook,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    authorizer: Option<&crate::authz::Authorizer>,
) -> Result<Option<Invocation>, Status> {
    let namespace = namespace_matches(store, &webhook.namespace_selector, attributes, object);
    if matches!(namespace, Ok(false)) {
        return Ok(None);
    }
    let object_selected = object_matches(&webhook.object_selector, attributes, object);
    if matches!(object_selected, Ok(false)) {
        return Ok(None);
    }
    let matched = webhook
        .rules
        .iter()
        .any(|rule| rule_matches(rule, attributes));
    let mut invocation = Invocation { equivalent: None };
    if !matched {
        if webhook.match_policy != MatchPolicy::Equivalent
            || !names_resource(webhook.rules.iter(), attributes)
        {
            return Ok(None);
        }
        // Earlier rules first, each against every equivalent resource.
        let candidates = equivalent::equivalents(store, attributes);
        invocation.equivalent = webhook.rules.iter().find_map(|rule| {
            candidates
                .iter()
                .find(|candidate| rule_matches(rule, &candidate.attributes(attributes, None)))
                .cloned()
        });
        if invocation.equivalent.is_none() {
            return Ok(None);
        }
    }
    namespace?;
    object_selected?;
    if webhook.match_conditions.is_empty() {
        return Ok(Some(invocation));
    }
    let checker = authorizer.map(|authorizer| {
        crate::admission::policy::authorizer::RequestChecker::shared(authorizer, attributes)
    });
    let outcome = match &invocation.equivalent {
        None => match_conditions::evaluate_with(
            &webhook.match_conditions,
            webhook.failure_policy,
            attributes,
            object,
            checker,
        ),
        Some(equivalent) => {
            let object = object
                .map(|object| equivalent.to_this(object))
                .transpose()?;
            let old = attributes
                .old_object
                .map(|old| equivalent.to_this(old))
                .transpose()?;
            match_conditions::evaluate_with(
                &webhook.match_conditions,
                webhook.failure_policy,
                &equivalent.attributes(attributes, old.as_ref()),
                object.as_ref(),
                checker,
            )
        }
    };
    match outcome {
        Outcome::Call => Ok(Some(invocation)),
        Outcome::Skip => Ok(None),
        Outcome::Refuse(reason) => {
            tracing::warn!(webhook = %webhook.name, %reason, "failed evaluating match conditions, failing closed");
            Err(Status::forbidden(
                &GroupResource::new(&attributes.resource.group, &attributes.resource.name),
                attributes.name,
                &reason,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::attributes::{GroupVersionName, Operation};

    fn attributes<'a>(
        operation: Operation,
        resource: &str,
        subresource: &'a str,
        namespace: &'a str,
    ) -> Attributes<'a> {
        Attributes {
            operation,
            kind: GroupVersionName::new("", "v1", "ConfigMap"),
            resource: GroupVersionName::new("", "v1", resource),
            subresource,
            name: "x",
            namespace,
            old_object: None,
            options: Value::Null,
            dry_run: false,
            user: None,
        }
    }

    fn rule(operations: &[&str], resources: &[&str], scope: Scope) -> Rule {
        let owned = |items: &[&str]| items.iter().map(|item| item.to_string()).collect();
        Rule {
            operations: owned(operations),
            api_groups: owned(&[""]),
            api_versions: owned(&["*"]),
            resources: owned(resources),
            scope,
        }
    }

    #[test]
    fn rules_match_as_kubes_matcher() {
        let create = attributes(Operation::Create, "configmaps", "", "ns");
        assert!(rule_matches(
            &rule(&["CREATE"], &["configmaps"], Scope::All),
            &create
        ));
        assert!(rule_matches(
            &rule(&["*"], &["*"], Scope::Namespaced),
            &create
        ));
        assert!(!rule_matches(
            &rule(&["UPDATE"], &["configmaps"], Scope::All),
            &create
        ));
        assert!(!rule_matches(
            &rule(&["*"], &["*"], Scope::Cluster),
            &create
        ));
        // `*` is every resource but no subresource; `*/*` and `x/*` reach them.
        let status = attributes(Operation::Update, "pods", "status", "ns");
        assert!(!rule_matches(&rule(&["*"], &["*"], Scope::All), &status));
        assert!(rule_matches(&rule(&["*"], &["*/*"], Scope::All), &status));
        assert!(rule_matches(
            &rule(&["*"], &["pods/*"], Scope::All),
            &status
        ));
        assert!(rule_matches(
            &rule(&["*"], &["pods/status"], Scope::All),
            &status
        ));
        assert!(!rule_matches(&rule(&["*"], &["pods"], Scope::All), &status));
        // A Namespace is cluster-scoped even with its own name as namespace.
        let namespace = attributes(Operation::Delete, "namespaces", "", "ns");
        assert!(rule_matches(
            &rule(&["DELETE"], &["namespaces"], Scope::Cluster),
            &namespace
        ));
        assert!(!rule_matches(
            &rule(&["DELETE"], &["*"], Scope::Namespaced),
            &namespace
        ));
    }
}
