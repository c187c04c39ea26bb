//! The audit policy (`audit.k8s.io/v1` `Policy`): loaded as
//! `apiserver/pkg/audit/policy/reader.go` `LoadPolicyFromFile` does,
//! validated as `apis/audit/validation/validation.go`, and evaluated per
//! request as `audit/policy/checker.go` (`EvaluatePolicyRule`, rules in
//! order, the first match wins; no match is level `None`).

use std::path::Path;

use serde::Deserialize;

use crate::authn::UserInfo;
use crate::authz::Attributes;
use crate::status::{FieldError, FieldErrorKind};

use super::AuditError;

/// How much of a request an event records (`audit.Level`), in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    None,
    Metadata,
    Request,
    RequestResponse,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }

    fn parse(text: &str) -> Option<Level> {
        Some(match text {
            "None" => Level::None,
            "Metadata" => Level::Metadata,
            "Request" => Level::Request,
            "RequestResponse" => Level::RequestResponse,
            _ => return None,
        })
    }
}

/// The stages of a request an event is written at (`audit.Stage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    RequestReceived,
    ResponseStarted,
    ResponseComplete,
    Panic,
}

impl Stage {
    pub const ALL: [Stage; 4] = [
        Stage::RequestReceived,
        Stage::ResponseStarted,
        Stage::ResponseComplete,
        Stage::Panic,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::RequestReceived => "RequestReceived",
            Stage::ResponseStarted => "ResponseStarted",
            Stage::ResponseComplete => "ResponseComplete",
            Stage::Panic => "Panic",
        }
    }

    fn parse(text: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|stage| stage.as_str() == text)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of stages (`omitStages`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StageSet(u8);

impl StageSet {
    pub fn contains(self, stage: Stage) -> bool {
        self.0 & stage.bit() != 0
    }

    fn insert(&mut self, stage: Stage) {
        self.0 |= stage.bit();
    }

    fn union(self, other: StageSet) -> StageSet {
        StageSet(self.0 | other.0)
    }
}

/// What the policy decides for one request (`RequestAuditConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestAuditConfig {
    pub level: Level,
    pub omit_stages: StageSet,
    pub omit_managed_fields: bool,
}

/// `GroupResources`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GroupResources {
    #[serde(default)]
    group: String,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    resource_names: Vec<String>,
}

/// One `PolicyRule` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRule {
    #[serde(default)]
    level: String,
    #[serde(default)]
    users: Vec<String>,
    #[serde(default)]
    user_groups: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    resources: Vec<GroupResources>,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default, rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
    #[serde(default)]
    omit_stages: Vec<String>,
    #[serde(default)]
    omit_managed_fields: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPolicy {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    rules: Vec<RawRule>,
    #[serde(default)]
    omit_stages: Vec<String>,
    #[serde(default)]
    omit_managed_fields: bool,
}

/// One validated rule; its `omit_stages` already include the policy's
/// (`NewPolicyRuleEvaluator` unions them).
#[derive(Debug, Clone)]
struct Rule {
    level: Level,
    users: Vec<String>,
    user_groups: Vec<String>,
    verbs: Vec<String>,
    resources: Vec<GroupResources>,
    namespaces: Vec<String>,
    non_resource_urls: Vec<String>,
    omit_stages: StageSet,
    omit_managed_fields: Option<bool>,
}

/// A loaded, valid audit policy.
#[derive(Debug, Clone)]
pub struct Policy {
    rules: Vec<Rule>,
    omit_stages: StageSet,
    omit_managed_fields: bool,
}

const API_VERSION: &str = "audit.k8s.io/v1";

impl Policy {
    /// `LoadPolicyFromFile`, with the wording kube-apiserver exits with
    /// (`AuditOptions.newPolicyRuleEvaluator`: "loading audit policy file").
    pub fn load(path: &Path) -> Result<Policy, AuditError> {
        let bytes = std::fs::read(path).map_err(|error| {
            AuditError::Policy(format!(
                "failed to read file path {}: {error}",
                crate::go::strconv::quote(&path.display().to_string())
            ))
        })?;
        Policy::parse(&bytes)
            .map_err(|error| AuditError::Policy(format!("{error}: from file {}", path.display())))
    }

    /// `LoadPolicyFromBytes`: decode (YAML or JSON), check the group
    /// version, validate, refuse a policy without rules.
    pub fn parse(bytes: &[u8]) -> Result<Policy, String> {
        let value = crate::yaml::yaml_to_json(bytes)
            .map_err(|error| format!("failed decoding: {}", error.message()))?;
        let raw: RawPolicy =
            serde_json::from_value(value).map_err(|error| format!("failed decoding: {error}"))?;
        if raw.kind.is_empty() {
            return Err("failed decoding: Object 'Kind' is missing".to_string());
        }
        if raw.api_version != API_VERSION || raw.kind != "Policy" {
            return Err(format!(
                "failed decoding: no kind {} is registered for version {}",
                crate::go::strconv::quote(&raw.kind),
                crate::go::strconv::quote(&raw.api_version)
            ));
        }
        let errors = validate(&raw);
        if !errors.is_empty() {
            let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
            return Err(crate::go::errors::aggregate(&messages));
        }
        if raw.rules.is_empty() {
            return Err("loaded illegal policy with 0 rules".to_string());
        }
        let omit_stages = stage_set(&raw.omit_stages);
        let rules = raw
            .rules
            .into_iter()
            .map(|rule| Rule {
                level: Level::parse(&rule.level).unwrap_or(Level::None),
                omit_stages: stage_set(&rule.omit_stages).union(omit_stages),
                users: rule.users,
                user_groups: rule.user_groups,
                verbs: rule.verbs,
                resources: rule.resources,
                namespaces: rule.namespaces,
                non_resource_urls: rule.non_resource_urls,
                omit_managed_fields: rule.omit_managed_fields,
            })
            .collect();
        Ok(Policy {
            rules,
            omit_stages,
            omit_managed_fields: raw.omit_managed_fields,
        })
    }

    /// `EvaluatePolicyRule`: the first rule that matches decides. `user`
    /// is `None` for a request that failed authentication.
    pub fn evaluate(&self, user: Option<&UserInfo>, attributes: &Attributes) -> RequestAuditConfig {
        for rule in &self.rules {
            if rule_matches(rule, user, attributes) {
                return RequestAuditConfig {
                    level: rule.level,
                    omit_stages: rule.omit_stages,
                    omit_managed_fields: rule
                        .omit_managed_fields
                        .unwrap_or(self.omit_managed_fields),
                };
            }
        }
        RequestAuditConfig {
            level: Level::None,
            omit_stages: self.omit_stages,
            omit_managed_fields: self.omit_managed_fields,
        }
    }
}

fn stage_set(stages: &[String]) -> StageSet {
    let mut set = StageSet::default();
    for stage in stages.iter().filter_map(|stage| Stage::parse(stage)) {
        set.insert(stage);
    }
    set
}

/// `ValidatePolicy` (kube validates only the rules, not the policy's own
/// `omitStages`).
fn validate(policy: &RawPolicy) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (index, rule) in policy.rules.iter().enumerate() {
        validate_rule(rule, &format!("rules[{index}]"), &mut errors);
    }
    errors
}

fn validate_rule(rule: &RawRule, path: &str, errors: &mut Vec<FieldError>) {
    let level_path = format!("{path}.level");
    match rule.level.as_str() {
        "" => errors.push(FieldError::required(&level_path, "")),
        level if Level::parse(level).is_none() => errors.push(FieldError::not_supported(
            &level_path,
            level,
            &["None", "Metadata", "Request", "RequestResponse"],
        )),
        _ => {}
    }
    for (index, url) in rule.non_resource_urls.iter().enumerate() {
        if url == "*" {
            continue;
        }
        let url_path = format!("{path}.nonResourceURLs[{index}]");
        if !url.starts_with('/') {
            errors.push(FieldError::invalid(
                &url_path,
                url,
                "non-resource URL rules must begin with a '/' character",
            ));
        }
        if !url.is_empty() && url[..url.len() - 1].contains('*') {
            errors.push(FieldError::invalid(
                &url_path,
                url,
                "non-resource URL wildcards '*' must be the final character of the rule",
            ));
        }
    }
    for group_resources in &rule.resources {
        if !group_resources.group.is_empty() {
            let messages = crate::names::dns1123_subdomain(&group_resources.group);
            if !messages.is_empty() {
                errors.push(FieldError::invalid(
                    &format!("{path}.resources.group"),
                    &group_resources.group,
                    messages.join(","),
                ));
            }
        }
        if !group_resources.resource_names.is_empty() && group_resources.resources.is_empty() {
            errors.push(FieldError {
                kind: FieldErrorKind::Invalid(crate::go::fmt::sharp_v_strings(
                    &group_resources.resource_names,
                )),
                field: format!("{path}.resources.resourceNames"),
                detail: "using resourceNames requires at least one resource".to_string(),
            });
        }
    }
    for (index, stage) in rule.omit_stages.iter().enumerate() {
        if Stage::parse(stage).is_none() {
            errors.push(FieldError::invalid(
                &format!("{path}.omitStages[{index}]"),
                stage,
                "allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic",
            ));
        }
    }
    if !rule.non_resource_urls.is_empty()
        && (!rule.resources.is_empty() || !rule.namespaces.is_empty())
    {
        errors.push(FieldError {
            kind: FieldErrorKind::Invalid(crate::go::fmt::sharp_v_strings(&rule.non_resource_urls)),
            field: format!("{path}.nonResourceURLs"),
            detail: "rules cannot apply to both regular resources and non-resource URLs"
                .to_string(),
        });
    }
}

/// `ruleMatches`.
fn rule_matches(rule: &Rule, user: Option<&UserInfo>, attributes: &Attributes) -> bool {
    if !rule.users.is_empty() {
        match user {
            Some(user) if rule.users.contains(&user.name) => {}
            _ => return false,
        }
    }
    if !rule.user_groups.is_empty() {
        let Some(user) = user else {
            return false;
        };
        if !user
            .groups
            .iter()
            .any(|group| rule.user_groups.contains(group))
        {
            return false;
        }
    }
    if !rule.verbs.is_empty() && !rule.verbs.iter().any(|verb| verb == attributes.verb) {
        return false;
    }
    if !rule.namespaces.is_empty() || !rule.resources.is_empty() {
        return rule_matches_resource(rule, attributes);
    }
    if !rule.non_resource_urls.is_empty() {
        return rule_matches_non_resource(rule, attributes);
    }
    true
}

/// `ruleMatchesNonResource` with `pathMatches`.
fn rule_matches_non_resource(rule: &Rule, attributes: &Attributes) -> bool {
    if attributes.resource_request {
        return false;
    }
    let path = attributes.path;
    rule.non_resource_urls.iter().any(|spec| {
        spec == "*"
            || spec == path
            || (spec.ends_with('*') && path.starts_with(spec.trim_end_matches('*')))
    })
}

/// `ruleMatchesResource`: `resource/subresource`, `*`, `*/subresource`
/// and `resource/*`, each limited to `resourceNames` when given.
fn rule_matches_resource(rule: &Rule, attributes: &Attributes) -> bool {
    if !attributes.resource_request {
        return false;
    }
    if !rule.namespaces.is_empty()
        && !rule
            .namespaces
            .iter()
            .any(|namespace| namespace == attributes.namespace)
    {
        return false;
    }
    if rule.resources.is_empty() {
        return true;
    }
    let (resource, subresource) = (attributes.resource, attributes.subresource);
    let combined = if subresource.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}/{subresource}")
    };
    let name: &str = &attributes.name;
    for group_resources in &rule.resources {
        if group_resources.group != attributes.api_group {
            continue;
        }
        if group_resources.resources.is_empty() {
            return true;
        }
        let name_matches = group_resources.resource_names.is_empty()
            || group_resources.resource_names.iter().any(|n| n == name);
        if !name_matches {
            continue;
        }
        for spec in &group_resources.resources {
            if spec == &combined || spec == "*" {
                return true;
            }
            if !subresource.is_empty() && spec.strip_prefix("*/") == Some(subresource) {
                return true;
            }
            if spec.strip_suffix("/*") == Some(resource) {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
