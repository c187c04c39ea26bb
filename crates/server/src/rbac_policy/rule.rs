//! `rbacv1.PolicyRule` as a typed value, and whether some rules cover
//! others: `k8s.io/component-helpers/auth/rbac/validation/policy_comparator.go`
//! (`Covers`, `BreakdownRule`, `ruleCovers`).

use serde_json::{json, Map, Value};

/// One rule of a Role or ClusterRole. An absent list and an empty one are the
/// same rule, as `equality.Semantic.DeepEqual` has it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

/// `rbacv1.ResourceAll`, `VerbAll`, `APIGroupAll`.
const ALL: &str = "*";

fn strings(rule: &Map<String, Value>, field: &str) -> Vec<String> {
    rule.get(field)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl PolicyRule {
    /// The rule a JSON `PolicyRule` holds (entries that are not strings are
    /// skipped; stored roles passed validation, so there are none).
    pub fn from_value(value: &Value) -> PolicyRule {
        let Some(rule) = value.as_object() else {
            return PolicyRule::default();
        };
        PolicyRule {
            verbs: strings(rule, "verbs"),
            api_groups: strings(rule, "apiGroups"),
            resources: strings(rule, "resources"),
            resource_names: strings(rule, "resourceNames"),
            non_resource_urls: strings(rule, "nonResourceURLs"),
        }
    }

    /// The JSON kube writes: `verbs` always, the other lists when not empty
    /// (`omitempty`).
    pub fn to_value(&self) -> Value {
        let mut rule = Map::new();
        rule.insert("verbs".into(), json!(self.verbs));
        for (field, values) in [
            ("apiGroups", &self.api_groups),
            ("resources", &self.resources),
            ("resourceNames", &self.resource_names),
            ("nonResourceURLs", &self.non_resource_urls),
        ] {
            if !values.is_empty() {
                rule.insert(field.into(), json!(values));
            }
        }
        Value::Object(rule)
    }

    /// The rules of a Role or ClusterRole (`rules` absent or null: none).
    pub fn rules_of(object: &Value) -> Vec<PolicyRule> {
        object
            .get("rules")
            .and_then(Value::as_array)
            .map(|rules| rules.iter().map(PolicyRule::from_value).collect())
            .unwrap_or_default()
    }
}

/// `Covers`: the parts of `servant` that no rule of `owner` allows, broken
/// down to one verb, group, resource and name each, in `servant`'s order.
/// Empty when `owner` covers all of `servant`.
pub fn uncovered(owner: &[PolicyRule], servant: &[PolicyRule]) -> Vec<PolicyRule> {
    servant
        .iter()
        .flat_map(breakdown)
        .filter(|subrule| !owner.iter().any(|rule| rule_covers(rule, subrule)))
        .collect()
}

/// `BreakdownRule`: an equivalent list of rules with at most one verb,
/// resource and resource name each; non-resource URLs pair only with verbs.
pub fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut subrules = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let one = |names: Vec<String>| PolicyRule {
                    verbs: vec![verb.clone()],
                    api_groups: vec![group.clone()],
                    resources: vec![resource.clone()],
                    resource_names: names,
                    non_resource_urls: Vec::new(),
                };
                if rule.resource_names.is_empty() {
                    subrules.push(one(Vec::new()));
                } else {
                    for name in &rule.resource_names {
                        subrules.push(one(vec![name.clone()]));
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            subrules.push(PolicyRule {
                verbs: vec![verb.clone()],
                non_resource_urls: vec![url.clone()],
                ..PolicyRule::default()
            });
        }
    }
    subrules
}

fn has(set: &[String], element: &str) -> bool {
    set.iter().any(|item| item == element)
}

fn has_all(set: &[String], contains: &[String]) -> bool {
    contains.iter().all(|element| has(set, element))
}

/// `resourceCoversAll`: `*` or every resource, where `*/sub` covers the
/// subresource `sub` of any resource.
fn resource_covers_all(set: &[String], covers: &[String]) -> bool {
    if has(set, ALL) || has_all(set, covers) {
        return true;
    }
    covers.iter().all(|path| {
        if has(set, path) {
            return true;
        }
        match path.split_once('/') {
            Some((_, subresource)) => has(set, &format!("*/{subresource}")),
            None => false,
        }
    })
}

/// `nonResourceURLCovers`: equal, or a `prefix*` owner.
fn non_resource_url_covers(owner: &str, path: &str) -> bool {
    owner == path || (owner.ends_with('*') && path.starts_with(owner.trim_end_matches('*')))
}

fn non_resource_urls_cover_all(set: &[String], covers: &[String]) -> bool {
    covers
        .iter()
        .all(|path| set.iter().any(|owner| non_resource_url_covers(owner, path)))
}

/// `ruleCovers`: whether `owner` allows everything the atomic `subrule` does.
fn rule_covers(owner: &PolicyRule, subrule: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, ALL) || has_all(&owner.verbs, &subrule.verbs);
    let groups = has(&owner.api_groups, ALL) || has_all(&owner.api_groups, &subrule.api_groups);
    let resources = resource_covers_all(&owner.resources, &subrule.resources);
    let urls = non_resource_urls_cover_all(&owner.non_resource_urls, &subrule.non_resource_urls);
    let names = if subrule.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &subrule.resource_names)
    };
    verbs && groups && resources && names && urls
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(value: Value) -> PolicyRule {
        PolicyRule::from_value(&value)
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
            .map(PolicyRule::to_value)
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
