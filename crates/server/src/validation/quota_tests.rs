//! Cases from kube's `TestValidateResourceQuota` and `TestValidateResourceNames`
//! (`core/validation/validation_test.go`).

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn resource_quotas_as_kube_validates_them() {
    let valid = [
        json!({"spec": {"hard": {"cpu": "100", "memory": "10000", "requests.cpu": "100", "limits.memory": "10000", "pods": "10", "services": "0", "example.com/foo": "7", "count/deployments.apps": "3", "requests.hugepages-2Mi": "10Mi"}}}),
        json!({"spec": {"hard": {"pods": "10"}, "scopes": ["BestEffort"]}}),
        json!({"spec": {"hard": {"cpu": "1"}, "scopes": ["NotBestEffort", "Terminating"]}}),
        json!({"spec": {"hard": {"pods": "10"}, "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}}),
        json!({"spec": {"hard": {"persistentvolumeclaims": "1"}, "scopeSelector": {"matchExpressions": [{"scopeName": "VolumeAttributesClass", "operator": "In", "values": ["gold"]}]}}}),
    ];
    for object in valid {
        assert_eq!(
            texts(&resource_quota(&object)),
            Vec::<String>::new(),
            "{object}"
        );
    }
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"spec": {"hard": {"cpu": "-1"}}}),
            vec!["spec.hard[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"],
        ),
        (
            json!({"spec": {"hard": {"pods": "1500m"}}}),
            vec!["spec.hard[pods]: Invalid value: \"1500m\": must be an integer"],
        ),
        (
            json!({"spec": {"hard": {"disk": "10"}}}),
            vec![
                "spec.hard[disk]: Invalid value: disk: must be a standard resource type or fully qualified",
                "spec.hard[disk]: Invalid value: disk: must be a standard resource for quota",
            ],
        ),
        (
            json!({"spec": {"hard": {"storage": "10Gi"}}}),
            vec!["spec.hard[storage]: Invalid value: storage: must be a standard resource for quota"],
        ),
        (
            json!({"spec": {"hard": {"cpu": "10"}, "scopes": ["BestEffort"]}}),
            vec!["spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\"}: unsupported scope applied to resource"],
        ),
        (
            json!({"spec": {"hard": {"pods": "10"}, "scopes": ["BestEffort", "NotBestEffort"]}}),
            vec!["spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\", \"NotBestEffort\"}: conflicting scopes"],
        ),
        (
            json!({"spec": {"hard": {"pods": "10"}, "scopes": ["Foo"]}}),
            vec!["spec.scopes: Invalid value: []core.ResourceQuotaScope{\"Foo\"}: unsupported scope"],
        ),
        (
            json!({"spec": {"hard": {"pods": "10"}, "scopeSelector": {"matchExpressions": [{"scopeName": "BestEffort", "operator": "In", "values": ["x"]}]}}}),
            vec!["spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"],
        ),
        (
            json!({"spec": {"hard": {"pods": "10"}, "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In"}]}}}),
            vec!["spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"],
        ),
        (
            json!({"spec": {"hard": {"pods": "10"}, "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "Exists", "values": ["a"]}]}}}),
            vec!["spec.scopeSelector.matchExpressions.values: Invalid value: []string{\"a\"}: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"],
        ),
        (
            json!({"spec": {"hard": {"memory": "1Gi"}, "scopeSelector": {"matchExpressions": [{"scopeName": "BestEffort", "operator": "Exists"}]}}}),
            vec!["spec.scopeSelector.matchExpressions: Invalid value: core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core.ScopedResourceSelectorRequirement{ScopeName:\"BestEffort\", Operator:\"Exists\", Values:[]string(nil)}}}: unsupported scope applied to resource"],
        ),
        (
            json!({"status": {"used": {"pods": "-1"}}}),
            vec!["status.used[pods]: Invalid value: \"-1\": must be greater than or equal to 0"],
        ),
    ];
    for (object, expected) in cases {
        assert_eq!(texts(&resource_quota(&object)), expected, "{object}");
    }
}

#[test]
fn quota_scopes_are_immutable() {
    let old = json!({"spec": {"hard": {"pods": "1"}, "scopes": ["BestEffort"]}});
    assert!(resource_quota_update(&old, &old).is_empty());
    let changed = json!({"spec": {"hard": {"pods": "1"}, "scopes": ["NotBestEffort"]}});
    assert_eq!(
        texts(&resource_quota_update(&changed, &old)),
        ["spec.scopes: Invalid value: []core.ResourceQuotaScope{\"NotBestEffort\"}: field is immutable"]
    );
    let more = json!({"spec": {"hard": {"pods": "2"}, "scopes": ["BestEffort"]}});
    assert!(resource_quota_update(&more, &old).is_empty());
}

#[test]
fn quantity_helpers() {
    let mut errors = Vec::new();
    basic_resource(&json!("-2"), "x", &mut errors);
    basic_resource(&json!("-500m"), "y", &mut errors);
    assert_eq!(
        texts(&errors),
        ["x: Invalid value: -2: must be a valid resource quantity"]
    );
    assert!(is_extended("example.com/gpu"));
    assert!(!is_extended("kubernetes.io/gpu"));
    assert!(!is_extended("cpu"));
}
