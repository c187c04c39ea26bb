//! One RBAC `PolicyRule` and whether it allows a request: kube's
//! `pkg/apis/rbac/v1/evaluation_helpers.go` (`VerbMatches`,
//! `APIGroupMatches`, `ResourceMatches`, `ResourceNameMatches`,
//! `NonResourceURLMatches`) and `plugin/pkg/auth/authorizer/rbac/rbac.go`
//! (`RuleAllows`).

use serde_json::Value;

use crate::authz::Attributes;

/// `rbacv1.VerbAll`, `APIGroupAll`, `ResourceAll`, `NonResourceAll`.
const ALL: &str = "*";

/// `rbacv1.PolicyRule`: what a Role or ClusterRole grants.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// A rule as stored (`rules[i]` of a Role); members that are absent or
    /// not lists of strings grant nothing (the API validates them on write).
    pub fn from_json(value: &Value) -> PolicyRule {
        let strings = |member: &str| crate::object::string_list(value.get(member));
        PolicyRule {
            verbs: strings("verbs"),
            api_groups: strings("apiGroups"),
            resources: strings("resources"),
            resource_names: strings("resourceNames"),
            non_resource_urls: strings("nonResourceURLs"),
        }
    }

    /// The JSON kube writes: `verbs` always, the other lists when not empty
    /// (`omitempty`).
    pub fn to_json(&self) -> Value {
        let mut rule = serde_json::Map::new();
        rule.insert("verbs".into(), serde_json::json!(self.verbs));
        for (field, values) in [
            ("apiGroups", &self.api_groups),
            ("resources", &self.resources),
            ("resourceNames", &self.resource_names),
            ("nonResourceURLs", &self.non_resource_urls),
        ] {
            if !values.is_empty() {
                rule.insert(field.into(), serde_json::json!(values));
            }
        }
        Value::Object(rule)
    }

    /// The rules of a Role or ClusterRole (`rules` absent or null: none).
    pub fn rules_of(object: &Value) -> Vec<PolicyRule> {
        object
            .get("rules")
            .and_then(Value::as_array)
            .map(|rules| rules.iter().map(PolicyRule::from_json).collect())
            .unwrap_or_default()
    }

    /// `RuleAllows`.
    pub fn allows(&self, attributes: &Attributes<'_>) -> bool {
        if attributes.resource_request {
            return self.verb_matches(attributes.verb)
                && self.api_group_matches(attributes.api_group)
                && self.resource_matches(attributes.resource, attributes.subresource)
                && self.resource_name_matches(&attributes.name);
        }
        self.verb_matches(attributes.verb) && self.non_resource_url_matches(attributes.path)
    }

    /// `VerbMatches`.
    pub fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|rule| rule == ALL || rule == verb)
    }

    /// `APIGroupMatches`.
    pub fn api_group_matches(&self, group: &str) -> bool {
        self.api_groups
            .iter()
            .any(|rule| rule == ALL || rule == group)
    }

    /// `ResourceMatches`: `*`, the exact `resource[/subresource]` (compared
    /// in place, without joining the two), or `*/subresource`.
    pub fn resource_matches(&self, resource: &str, subresource: &str) -> bool {
        self.resources.iter().any(|rule| {
            rule == ALL
                || names_resource(rule, resource, subresource)
                || (!subresource.is_empty()
                    && rule.len() == subresource.len() + 2
                    && rule.starts_with("*/")
                    && rule.ends_with(subresource))
        })
    }

    /// `ResourceNameMatches`: no names means every name.
    pub fn resource_name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || self.resource_names.iter().any(|rule| rule == name)
    }

    /// `NonResourceURLMatches`: `*`, the exact path, or a prefix ending in `*`.
    pub fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|rule| {
            rule == ALL
                || rule == path
                || (rule.ends_with('*') && path.starts_with(rule.trim_end_matches('*')))
        })
    }
}

/// Whether `rule` is `resource`, or `resource/subresource` when there is a
/// subresource (kube compares with the joined `combinedResource`).
fn names_resource(rule: &str, resource: &str, subresource: &str) -> bool {
    if subresource.is_empty() {
        return rule == resource;
    }
    rule.strip_prefix(resource)
        .and_then(|rest| rest.strip_prefix('/'))
        == Some(subresource)
}
