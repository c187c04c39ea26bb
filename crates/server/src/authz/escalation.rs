//! Escalation prevention's rule arithmetic: whether the rules a user holds
//! cover the rules a Role or binding would grant, and kube's refusal text.
//! `component-helpers/auth/rbac/validation/policy_comparator.go` (`Covers`,
//! `BreakdownRule`, `ruleCovers`), `pkg/registry/rbac/validation/policy_compact.go`
//! (`CompactRules`), `pkg/apis/rbac/v1/evaluation_helpers.go` (`CompactString`)
//! and `pkg/registry/rbac/validation/rule.go` (`ConfirmNoEscalation`).

use std::collections::BTreeSet;

use super::rbac::PolicyRule;
use crate::authn::UserInfo;
use crate::go::strconv::quote;

/// `fullAuthority`: what setting an aggregationRule needs.
pub fn full_authority() -> Vec<PolicyRule> {
    let all = || vec!["*".to_string()];
    vec![
        PolicyRule {
            verbs: all(),
            api_groups: all(),
            resources: all(),
            ..PolicyRule::default()
        },
        PolicyRule {
            verbs: all(),
            non_resource_urls: all(),
            ..PolicyRule::default()
        },
    ]
}

/// `BreakdownRule`: one rule per group × resource × verb (× name), and per
/// non-resource URL × verb.
pub fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let one = |value: &String| vec![value.clone()];
    let mut subrules = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let base = PolicyRule {
                    api_groups: one(group),
                    resources: one(resource),
                    verbs: one(verb),
                    ..PolicyRule::default()
                };
                if rule.resource_names.is_empty() {
                    subrules.push(base);
                } else {
                    for name in &rule.resource_names {
                        subrules.push(PolicyRule {
                            resource_names: one(name),
                            ..base.clone()
                        });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            subrules.push(PolicyRule {
                non_resource_urls: one(url),
                verbs: one(verb),
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

/// `resourceCoversAll`: `*`, every resource, or `*/subresource`.
fn resource_covers_all(set: &[String], covers: &[String]) -> bool {
    if has(set, "*") || has_all(set, covers) {
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

/// `nonResourceURLCovers`.
fn non_resource_url_covers(owner: &str, path: &str) -> bool {
    owner == path || (owner.ends_with('*') && path.starts_with(owner.trim_end_matches('*')))
}

/// `ruleCovers`: whether `owner` covers a broken-down `sub` rule.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resource_covers_all(&owner.resources, &sub.resources);
    let urls = sub.non_resource_urls.iter().all(|path| {
        owner
            .non_resource_urls
            .iter()
            .any(|owned| non_resource_url_covers(owned, path))
    });
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && names && urls
}

/// `Covers`: the broken-down servant rules no owner rule covers (empty when
/// the owner holds everything).
pub fn uncovered(owner: &[PolicyRule], servant: &[PolicyRule]) -> Vec<PolicyRule> {
    servant
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|rule| rule_covers(rule, sub)))
        .collect()
}

/// `CompactRules`: rules of one group and one resource (and at most one
/// name) that differ only by verb are merged.
pub fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut compacted = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let is_simple = rule.resource_names.len() <= 1
            && rule.non_resource_urls.is_empty()
            && rule.api_groups.len() == 1
            && rule.resources.len() == 1;
        if !is_simple {
            compacted.push(rule);
            continue;
        }
        let same = simple.iter_mut().find(|existing| {
            existing.api_groups == rule.api_groups
                && existing.resources == rule.resources
                && existing.resource_names == rule.resource_names
        });
        match same {
            Some(existing) => {
                for verb in rule.verbs {
                    if !existing.verbs.contains(&verb) {
                        existing.verbs.push(verb);
                    }
                }
            }
            None => simple.push(rule),
        }
    }
    compacted.extend(simple);
    compacted
}

/// `%q` of a `[]string`: `["a" "b"]`.
fn quote_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| quote(item)).collect();
    format!("[{}]", quoted.join(" "))
}

/// `CompactString`: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`.
pub fn compact_string(rule: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (label, items) in [
        ("APIGroups", &rule.api_groups),
        ("Resources", &rule.resources),
        ("NonResourceURLs", &rule.non_resource_urls),
        ("ResourceNames", &rule.resource_names),
        ("Verbs", &rule.verbs),
    ] {
        if !items.is_empty() {
            parts.push(format!("{label}:{}", quote_list(items)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// `ConfirmNoEscalation`'s refusal, or `None` when `owner_rules` cover
/// `rules`. `resolution_errors` are the role lookups that failed while
/// gathering the owner's rules.
pub fn escalation_error(
    user: &UserInfo,
    owner_rules: &[PolicyRule],
    resolution_errors: &[String],
    rules: &[PolicyRule],
) -> Option<String> {
    let missing = uncovered(owner_rules, rules);
    if missing.is_empty() {
        return None;
    }
    let descriptions: BTreeSet<String> = compact(missing).iter().map(compact_string).collect();
    let mut message = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        quote(&user.name),
        quote_list(&user.groups),
        descriptions.into_iter().collect::<Vec<_>>().join("\n")
    );
    if !resolution_errors.is_empty() {
        // `%v` of a one-element `[]error` holding the aggregate.
        let aggregate = match resolution_errors {
            [only] => only.clone(),
            several => format!("[{}]", several.join(", ")),
        };
        message.push_str(&format!("; resolution errors: [{aggregate}]"));
    }
    Some(message)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(value: serde_json::Value) -> PolicyRule {
        PolicyRule::from_json(&value)
    }

    #[test]
    fn covers_as_kube_policy_comparator() {
        let owner = vec![
            rule(
                json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "*/scale"]}),
            ),
            rule(
                json!({"verbs": ["*"], "apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"]}),
            ),
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/healthz*"]})),
        ];
        let covered = [
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
            json!({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}),
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["deployments/scale"]}),
            json!({"verbs": ["delete"], "apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"]}),
            json!({"verbs": ["get"], "nonResourceURLs": ["/healthz/ping"]}),
        ];
        for servant in covered {
            assert!(
                uncovered(&owner, &[rule(servant.clone())]).is_empty(),
                "{servant}"
            );
        }
        let not_covered = [
            json!({"verbs": ["watch"], "apiGroups": [""], "resources": ["pods"]}),
            json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]}),
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}),
            json!({"verbs": ["get"], "nonResourceURLs": ["/metrics"]}),
        ];
        for servant in not_covered {
            assert!(
                !uncovered(&owner, &[rule(servant.clone())]).is_empty(),
                "{servant}"
            );
        }
    }

    #[test]
    fn the_refusal_is_worded_as_kube() {
        let user = UserInfo {
            name: "jane".into(),
            uid: String::new(),
            groups: vec!["team".into(), "system:authenticated".into()],
            extra: Default::default(),
        };
        let owner = vec![rule(
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}),
        )];
        let wanted = vec![
            rule(
                json!({"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["configmaps", "secrets"]}),
            ),
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/metrics"]})),
        ];
        assert_eq!(
            escalation_error(&user, &owner, &[], &wanted).as_deref(),
            Some(
                "user \"jane\" (groups=[\"team\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
                 {APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"list\" \"watch\"]}\n\
                 {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\" \"watch\"]}\n\
                 {NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}"
            )
        );
        assert_eq!(escalation_error(&user, &owner, &[], &owner[..1]), None);
        let with_errors = escalation_error(
            &user,
            &[],
            &["roles.rbac.authorization.k8s.io \"gone\" not found".into()],
            &owner,
        );
        assert!(with_errors.unwrap().ends_with(
            "; resolution errors: [roles.rbac.authorization.k8s.io \"gone\" not found]"
        ));
    }
}
