//! Cases of kube's `TestValidateResourceRequirements`,
//! `TestValidateResourceNames`, `TestValidatePodSpec`'s pod-level resources
//! and claims cases and `TestValidatePodResourceConsistency`
//! (`core/validation/validation_test.go`), with kube's texts.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::*;

fn context(claim_names: &BTreeSet<String>) -> RequirementsContext<'_> {
    RequirementsContext {
        claim_names,
        allow_indivisible_huge_pages: false,
    }
}

fn container_errors(requirements: Value, claims: &[&str]) -> Vec<String> {
    let names: BTreeSet<String> = claims.iter().map(|name| name.to_string()).collect();
    let mut errors = Vec::new();
    container_requirements(&requirements, context(&names), "resources", &mut errors);
    errors.iter().map(ToString::to_string).collect()
}

fn pod_errors(spec: Value) -> Vec<String> {
    let names = pod_claim_names(&spec);
    let mut errors = Vec::new();
    pod_resources(&spec, context(&names), "spec", &mut errors);
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn container_resource_names_and_values() {
    let cases = [
        (
            json!({"limits": {"bogus": "1"}}),
            vec![
                "resources.limits[bogus]: Invalid value: bogus: must be a standard resource type or fully qualified",
                "resources.limits[bogus]: Invalid value: bogus: must be a standard resource for containers",
            ],
        ),
        (
            json!({"limits": {"example.com/gpu": "500m"}, "requests": {"example.com/gpu": "500m"}}),
            vec![
                "resources.limits[example.com/gpu]: Invalid value: \"500m\": must be an integer",
                "resources.requests[example.com/gpu]: Invalid value: \"500m\": must be an integer",
            ],
        ),
        (
            json!({"limits": {"kubernetes.io/x": "1"}, "requests": {"requests.example.com/x": "1"}}),
            vec![
                "resources.requests[requests.example.com/x]: Invalid value: requests.example.com/x: doesn't follow extended resource name standard",
                "resources.limits: Required value: Limit must be set for non overcommitable resources",
            ],
        ),
        (
            json!({"limits": {"memory": "1Gi", "hugepages-2Mi": "3Mi"}, "requests": {"hugepages-2Mi": "3Mi"}}),
            vec![
                "resources.limits[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi",
                "resources.requests[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi",
            ],
        ),
        (
            json!({"limits": {"memory": "1Gi", "hugepages-foo": "2Mi"}, "requests": {"hugepages-foo": "2Mi"}}),
            vec![
                "resources.limits[hugepages-foo]: Invalid value: \"2Mi\": 2Mi is not positive integer multiple of hugepages-foo",
                "resources.requests[hugepages-foo]: Invalid value: \"2Mi\": 2Mi is not positive integer multiple of hugepages-foo",
            ],
        ),
        (
            json!({"limits": {"hugepages-1Gi": "2Gi"}}),
            vec!["resources: Forbidden: HugePages require cpu or memory"],
        ),
        (
            json!({"limits": {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "4Mi", "example.com/gpu": "2"},
                   "requests": {"cpu": "500m", "hugepages-2Mi": "4Mi", "example.com/gpu": "2"}}),
            vec![],
        ),
    ];
    for (requirements, expected) in cases {
        assert_eq!(
            container_errors(requirements.clone(), &[]),
            expected,
            "{requirements}"
        );
    }
}

#[test]
fn indivisible_hugepages_are_tolerated_when_the_old_spec_had_them() {
    let names = BTreeSet::new();
    let requirements = json!({"limits": {"memory": "1Gi", "hugepages-2Mi": "3Mi"}});
    let mut errors = Vec::new();
    let tolerant = RequirementsContext {
        claim_names: &names,
        allow_indivisible_huge_pages: true,
    };
    container_requirements(&requirements, tolerant, "resources", &mut errors);
    assert!(errors.is_empty(), "{errors:?}");

    let old = json!({"containers": [{"name": "c", "resources": {"limits": requirements["limits"].clone()}}]});
    assert!(uses_indivisible_huge_pages(&old));
    assert!(uses_indivisible_huge_pages(
        &json!({"overhead": {"hugepages-1Gi": "1500Mi"}})
    ));
    assert!(!uses_indivisible_huge_pages(
        &json!({"containers": [{"name": "c", "resources": {"limits": {"hugepages-2Mi": "4Mi"}}}]})
    ));
}

#[test]
fn claims_name_the_pods_resource_claims() {
    let cases = [
        (
            json!({"claims": [{"name": "gpu"}]}),
            vec![],
            vec!["resources.claims[0]: Not found: \"gpu\": must be one of the names in pod.spec.resourceClaims which is empty"],
        ),
        (
            json!({"claims": [{"name": "nic"}]}),
            vec!["gpu", "fpga"],
            vec!["resources.claims[0]: Not found: \"nic\": must be one of the names in pod.spec.resourceClaims: fpga, gpu"],
        ),
        (
            json!({"claims": [{"name": ""}, {"name": "gpu"}, {"name": "gpu"}]}),
            vec!["gpu"],
            vec![
                "resources.claims[0]: Required value",
                "resources.claims[2]: Duplicate value: \"gpu\"",
            ],
        ),
        (
            json!({"claims": [{"name": "gpu", "request": "a"}, {"name": "gpu", "request": "a"},
                              {"name": "gpu", "request": "B_"}, {"name": "gpu"}]}),
            vec!["gpu"],
            vec![
                "resources.claims[1]: Duplicate value: \"gpu/a\"",
                "resources.claims[2].request: Invalid value: \"B_\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "resources.claims[3]: Duplicate value: \"gpu\"",
                "resources.claims[3]: Duplicate value: \"gpu\"",
            ],
        ),
        (
            json!({"claims": [{"name": "gpu", "request": "a"}, {"name": "gpu", "request": "b"}]}),
            vec!["gpu"],
            vec![],
        ),
    ];
    for (requirements, claims, expected) in cases {
        assert_eq!(
            container_errors(requirements.clone(), &claims),
            expected,
            "{requirements}"
        );
    }
}

#[test]
fn pod_level_resources_are_kubes() {
    let container = |resources: Value| json!({"name": "c", "image": "i", "resources": resources});
    let cases = [
        (
            json!({"resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}},
                   "containers": [container(json!({"requests": {"cpu": "500m", "ephemeral-storage": "1Gi"}, "limits": {"cpu": "1"}}))]}),
            vec![],
        ),
        (
            json!({"resources": {"requests": {"cpu": "100m"}},
                   "containers": [container(json!({"requests": {"cpu": "200m", "memory": "10Mi", "ephemeral-storage": "1Gi", "example.com/gpu": "1"},
                                                   "limits": {"example.com/gpu": "1"}}))]}),
            vec![
                "spec.resources.requests[cpu]: Invalid value: \"100m\": must be greater than or equal to aggregate container requests of 200m",
                "spec.resources.requests[memory]: Invalid value: \"0\": must be greater than or equal to aggregate container requests of 10Mi",
            ],
        ),
        (
            json!({"resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}},
                   "containers": [container(json!({"limits": {"cpu": "2"}})), container(json!({"limits": {"memory": "1Gi"}}))]}),
            vec!["spec.resources.containers[0][cpu].limits: Invalid value: \"2\": must be less than or equal to pod limits of 1"],
        ),
        (
            json!({"resources": {"limits": {"ephemeral-storage": "1Gi", "bogus": "1", "example.com/gpu": "1"}},
                   "containers": [container(json!({}))]}),
            vec![
                "spec.resources.limits[bogus]: Invalid value: bogus: must be a standard resource type or fully qualified",
                "spec.resources.limits[ephemeral-storage]: Unsupported value: \"ephemeral-storage\": supported values: \"cpu\", \"hugepages-\", \"memory\"",
                "spec.resources.limits[example.com/gpu]: Unsupported value: \"example.com/gpu\": supported values: \"cpu\", \"hugepages-\", \"memory\"",
            ],
        ),
        (
            json!({"resources": {"claims": [{"name": "gpu"}], "limits": {"cpu": "1"}, "requests": {"cpu": "2"}},
                   "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}],
                   "containers": [container(json!({}))]}),
            vec![
                "spec.resources.claims: Forbidden: claims cannot be set for Resources at pod-level",
                "spec.resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1",
            ],
        ),
        (
            json!({"os": {"name": "windows"}, "resources": {"limits": {"bogus": "1"}}, "containers": [container(json!({}))]}),
            vec!["spec.resources: Forbidden: may not be set for a windows pod"],
        ),
        (
            json!({"containers": [container(json!({"requests": {"cpu": "2"}}))]}),
            vec![],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(pod_errors(spec.clone()), expected, "{spec}");
    }
}
