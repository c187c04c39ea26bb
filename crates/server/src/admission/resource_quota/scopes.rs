//! A quota's scopes (`pkg/quota/v1/evaluator/core/pods.go`
//! `podMatchesScopeFunc`, `generic/evaluator.go` `Matches` and
//! `getScopeSelectorsFromQuota`): `spec.scopes` become `Exists`
//! requirements, `spec.scopeSelector.matchExpressions` are added, and an
//! object is in the quota only when every requirement holds.

use serde_json::Value;

/// One `ScopedResourceSelectorRequirement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeRequirement {
    pub scope_name: String,
    pub operator: String,
    pub values: Vec<String>,
}

/// `getScopeSelectorsFromQuota`.
pub fn requirements(quota: &Value) -> Vec<ScopeRequirement> {
    let mut requirements: Vec<ScopeRequirement> = quota
        .pointer("/spec/scopes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|scope| ScopeRequirement {
            scope_name: scope.to_string(),
            operator: "Exists".to_string(),
            values: Vec::new(),
        })
        .collect();
    let expressions = quota
        .pointer("/spec/scopeSelector/matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for expression in expressions {
        let text = |field: &str| {
            expression
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        requirements.push(ScopeRequirement {
            scope_name: text("scopeName"),
            operator: text("operator"),
            values: expression
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        });
    }
    requirements
}

impl ScopeRequirement {
    /// `ScopedResourceSelectorRequirementsAsSelector` matched against a
    /// label set holding at most `value` under the scope's name (kube puts
    /// the pod's priority class there, when it has one).
    pub fn matches_value(&self, value: Option<&str>) -> bool {
        match self.operator.as_str() {
            "In" => value.is_some_and(|value| self.values.iter().any(|v| v == value)),
            "NotIn" => value.is_none_or(|value| !self.values.iter().any(|v| v == value)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    }
}

/// Whether every requirement holds (`quota.MatchesNoScopeFunc` makes any
/// requirement fail for kinds without scopes: a scoped quota counts only
/// pods, and claims by VolumeAttributesClass).
pub fn matches_all(
    requirements: &[ScopeRequirement],
    matches: impl Fn(&ScopeRequirement) -> bool,
) -> bool {
    requirements.iter().all(matches)
}
