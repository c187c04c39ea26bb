//! Update-time relaxations through [`super::validate`]: label values an old
//! object already carried (kube's `TestValidatePodUpdate` /
//! `TestValidateNetworkPolicyUpdate` / PDB strategy cases with an old object
//! holding `-1` or `a b`, hugepage values that are not a multiple of
//! their page size), and a Job's immutable fields compared with
//! `Semantic.DeepEqual` (`{}` and absent).

use serde_json::{json, Value};

use crate::registry::Registry;
use crate::status::FieldError;

fn validate(
    group: &str,
    version: &str,
    plural: &str,
    new: &Value,
    old: Option<&Value>,
) -> Vec<String> {
    let registry = Registry::new(crate::registry::builtin_resources());
    let resource = registry.lookup(group, version, plural).expect("served");
    super::validate(resource, None, new, old)
        .iter()
        .map(FieldError::to_string)
        .collect()
}

fn expression(value: &str) -> Value {
    json!({"matchExpressions": [{"key": "k", "operator": "In", "values": [value]}]})
}

fn pod_spec(affinity: Value, spread_selector: Option<Value>) -> Value {
    let mut spec = json!({
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
        "containers": [{"name": "c", "image": "busybox",
            "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}],
        "affinity": affinity,
    });
    if let Some(selector) = spread_selector {
        spec["topologySpreadConstraints"] = json!([{"maxSkew": 1, "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}]);
    }
    spec
}

fn pod_affinity(value: &str) -> Value {
    json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": expression(value), "topologyKey": "zone"}]}})
}

fn node_affinity(value: &str) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": [value]}]}]}}})
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "p", "namespace": "default"}, "spec": spec})
}

const AFFINITY_VALUE: &str = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values[0]: Invalid value: \"-1\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

#[test]
fn a_pod_keeps_label_values_its_old_spec_had() {
    let bad = pod(pod_spec(pod_affinity("-1"), None));
    // Create, and an update from a valid pod, refuse the value.
    assert_eq!(validate("", "v1", "pods", &bad, None), [AFFINITY_VALUE]);
    let good = pod(pod_spec(pod_affinity("ok"), None));
    assert!(validate("", "v1", "pods", &bad, Some(&good)).contains(&AFFINITY_VALUE.to_string()));
    // An update of a pod that already had it does not check the values.
    let mut relabeled = bad.clone();
    relabeled["metadata"]["labels"] = json!({"x": "y"});
    assert_eq!(
        validate("", "v1", "pods", &relabeled, Some(&bad)),
        Vec::<String>::new()
    );

    for (name, old) in [
        (
            "required node affinity",
            pod(pod_spec(node_affinity("-1"), None)),
        ),
        (
            "topology spread",
            pod(pod_spec(json!(null), Some(expression("-1")))),
        ),
    ] {
        let errors = validate("", "v1", "pods", &old, None);
        assert_eq!(errors.len(), 1, "{name}: {errors:?}");
        let mut relabeled = old.clone();
        relabeled["metadata"]["labels"] = json!({"x": "y"});
        assert_eq!(
            validate("", "v1", "pods", &relabeled, Some(&old)),
            Vec::<String>::new(),
            "{name}"
        );
    }
    // Each option covers its own selectors only.
    let old = pod(pod_spec(node_affinity("-1"), None));
    let mut new = old.clone();
    new["spec"]["affinity"]["podAffinity"] = pod_affinity("-1")["podAffinity"].clone();
    assert_eq!(validate("", "v1", "pods", &new, Some(&old)).len(), 2);
}

fn deployment(affinity: Value) -> Value {
    let mut spec = pod_spec(affinity, None);
    spec["containers"][0]["terminationMessagePath"] = json!("/dev/termination-log");
    json!({"metadata": {"name": "d", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": spec}}})
}

#[test]
fn workload_templates_take_the_options_from_the_old_template() {
    let bad = deployment(pod_affinity("-1"));
    let path_error = AFFINITY_VALUE.replacen("spec.", "spec.template.spec.", 1);
    assert_eq!(
        validate("apps", "v1", "deployments", &bad, None),
        std::slice::from_ref(&path_error)
    );
    let mut scaled = bad.clone();
    scaled["spec"]["replicas"] = json!(3);
    assert_eq!(
        validate("apps", "v1", "deployments", &scaled, Some(&bad)),
        Vec::<String>::new()
    );
    let good = deployment(pod_affinity("ok"));
    assert_eq!(
        validate("apps", "v1", "deployments", &bad, Some(&good)),
        std::slice::from_ref(&path_error)
    );
    // A PodTemplate object's template, too.
    let template = |spec: Value| {
        json!({"metadata": {"name": "t", "namespace": "default"},
        "template": {"metadata": {"labels": {"app": "a"}}, "spec": spec}})
    };
    let bad_template = template(pod_spec(pod_affinity("-1"), None));
    assert_eq!(
        validate("", "v1", "podtemplates", &bad_template, None).len(),
        1
    );
    assert_eq!(
        validate("", "v1", "podtemplates", &bad_template, Some(&bad_template)),
        Vec::<String>::new()
    );
}

/// `AllowIndivisibleHugePagesValues`: a hugepage quantity that is not a
/// multiple of its page size is refused on create, and tolerated (every
/// hugepage quantity then goes unchecked) when the old spec had one.
#[test]
fn indivisible_hugepages_are_kept_when_the_old_spec_had_them() {
    let with_huge_pages = |value: &str| {
        let mut spec = pod_spec(json!(null), None);
        spec["containers"][0]["resources"] = json!({
            "limits": {"memory": "1Gi", "hugepages-2Mi": value},
            "requests": {"memory": "1Gi", "hugepages-2Mi": value}});
        spec
    };
    let bad = pod(with_huge_pages("3Mi"));
    assert_eq!(
        validate("", "v1", "pods", &bad, None),
        vec![
            "spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi",
            "spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi",
        ]
    );
    let mut labelled = bad.clone();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    assert_eq!(
        validate("", "v1", "pods", &labelled, Some(&bad)),
        Vec::<String>::new()
    );
    // From a divisible old spec the values are checked (and the spec
    // change itself is forbidden for a pod).
    let good = pod(with_huge_pages("4Mi"));
    let errors = validate("", "v1", "pods", &bad, Some(&good));
    let huge_page_errors = errors
        .iter()
        .filter(|error| error.contains("is not positive integer multiple of hugepages-2Mi"))
        .count();
    assert_eq!(huge_page_errors, 2, "{errors:?}");

    let mut deployment_bad = deployment(json!(null));
    deployment_bad["spec"]["template"]["spec"] = with_huge_pages("3Mi");
    deployment_bad["spec"]["template"]["spec"]["containers"][0]["terminationMessagePath"] =
        json!("/dev/termination-log");
    assert_eq!(
        validate("apps", "v1", "deployments", &deployment_bad, None),
        vec![
            "spec.template.spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi",
            "spec.template.spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi",
        ]
    );
    let mut scaled = deployment_bad.clone();
    scaled["spec"]["replicas"] = json!(3);
    assert_eq!(
        validate("apps", "v1", "deployments", &scaled, Some(&deployment_bad)),
        Vec::<String>::new()
    );
}

#[test]
fn a_network_policy_keeps_values_its_old_pod_selector_had() {
    let policy = |pod_selector: Value, peer_selector: Value| {
        json!({
        "metadata": {"name": "np", "namespace": "default"},
        "spec": {"podSelector": pod_selector, "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"podSelector": peer_selector}]}]}})
    };
    let bad = policy(expression("-1"), expression("a b"));
    assert_eq!(
        validate("networking.k8s.io", "v1", "networkpolicies", &bad, None).len(),
        2
    );
    // The old podSelector sets the option; it relaxes the peers' selectors too.
    assert_eq!(
        validate(
            "networking.k8s.io",
            "v1",
            "networkpolicies",
            &bad,
            Some(&bad)
        ),
        Vec::<String>::new()
    );
    // An old policy whose only bad value is in a peer sets nothing.
    let peer_only = policy(expression("ok"), expression("a b"));
    assert_eq!(
        validate(
            "networking.k8s.io",
            "v1",
            "networkpolicies",
            &peer_only,
            Some(&peer_only)
        )
        .len(),
        1
    );
}

#[test]
fn a_pod_disruption_budget_keeps_values_its_old_selector_had() {
    let budget = |selector: Value| {
        json!({"metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": selector}})
    };
    let bad = budget(expression("-1"));
    assert_eq!(
        validate("policy", "v1", "poddisruptionbudgets", &bad, None).len(),
        1
    );
    assert_eq!(
        validate("policy", "v1", "poddisruptionbudgets", &bad, Some(&bad)),
        Vec::<String>::new()
    );
    let good = budget(expression("ok"));
    assert_eq!(
        validate("policy", "v1", "poddisruptionbudgets", &bad, Some(&good)).len(),
        1
    );
    // matchLabels values are always checked.
    let labels = budget(json!({"matchLabels": {"k": "-1"}}));
    assert_eq!(
        validate(
            "policy",
            "v1",
            "poddisruptionbudgets",
            &labels,
            Some(&labels)
        )
        .len(),
        1
    );
}

fn job() -> Value {
    json!({
        "metadata": {"name": "j", "namespace": "default", "uid": "u-1"},
        "spec": {"manualSelector": true, "parallelism": 1, "completions": 2,
            "completionMode": "Indexed", "backoffLimit": 6,
            "selector": {"matchLabels": {"a": "b"}},
            "successPolicy": {"rules": [{"succeededCount": 1}]},
            "template": {"metadata": {"labels": {"a": "b"}},
                "spec": {"restartPolicy": "Never", "dnsPolicy": "ClusterFirst",
                    "terminationGracePeriodSeconds": 30,
                    "containers": [{"name": "c", "image": "busybox",
                        "imagePullPolicy": "IfNotPresent",
                        "terminationMessagePolicy": "File"}]}}},
    })
}

#[test]
fn job_updates_compare_immutable_fields_semantically() {
    let old = job();
    // What client-go writes for the same template: empty value structs, nulls, empty lists.
    let mut new = old.clone();
    new["spec"]["template"]["metadata"]["creationTimestamp"] = Value::Null;
    new["spec"]["template"]["spec"]["containers"][0]["resources"] = json!({});
    new["spec"]["template"]["spec"]["containers"][0]["env"] = json!([]);
    new["spec"]["template"]["spec"]["nodeSelector"] = json!({});
    new["spec"]["selector"]["matchExpressions"] = json!([]);
    new["spec"]["parallelism"] = json!(2);
    assert_eq!(
        validate("batch", "v1", "jobs", &new, Some(&old)),
        Vec::<String>::new()
    );
    // And the other way round.
    assert_eq!(
        validate("batch", "v1", "jobs", &old, Some(&new)),
        Vec::<String>::new()
    );

    // A pointer to an empty struct is a change.
    let mut changed = old.clone();
    changed["spec"]["template"]["spec"]["containers"][0]["securityContext"] = json!({});
    assert_eq!(
        validate("batch", "v1", "jobs", &changed, Some(&old)),
        ["spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"]
    );
}

#[test]
fn a_jobs_success_policy_is_immutable() {
    let old = job();
    let mut new = old.clone();
    new["spec"]["successPolicy"]["rules"][0]["succeededCount"] = json!(2);
    assert_eq!(
        validate("batch", "v1", "jobs", &new, Some(&old)),
        ["spec.successPolicy: Invalid value: batch.SuccessPolicy{...}: field is immutable"]
    );
    new["spec"].as_object_mut().unwrap().remove("successPolicy");
    assert_eq!(
        validate("batch", "v1", "jobs", &new, Some(&old)),
        ["spec.successPolicy: Invalid value: null: field is immutable"]
    );
}

/// `AllowInvalidPodDeletionCost` (`GetValidationOptionsFromPodSpecAndMeta`
/// with the old pod's or template's metadata): a deletion cost that was
/// already invalid may stay or change; one that was valid may not become
/// invalid. For pods, every template and a StatefulSet's template.
#[test]
fn an_invalid_deletion_cost_the_old_object_had_is_kept() {
    let cost = |object: &mut Value, at: &str, value: &str| {
        let metadata = object.pointer_mut(at).expect("metadata");
        metadata["annotations"] = json!({"controller.kubernetes.io/pod-deletion-cost": value});
    };
    let refusal = |path: &str, value: &str| {
        format!("{path}[controller.kubernetes.io/pod-deletion-cost]: Invalid value: \"{value}\": must be a 32bit integer")
    };
    let mut old_pod = pod(pod_spec(json!(null), None));
    cost(&mut old_pod, "/metadata", "+1");
    let mut new_pod = old_pod.clone();
    cost(&mut new_pod, "/metadata", "x");
    assert_eq!(
        validate("", "v1", "pods", &new_pod, Some(&old_pod)),
        Vec::<String>::new()
    );
    let mut valid_pod = old_pod.clone();
    cost(&mut valid_pod, "/metadata", "7");
    // Reported twice, as kube's `ValidatePodUpdate` does.
    let pod_refusal = refusal("metadata.annotations", "x");
    assert_eq!(
        validate("", "v1", "pods", &new_pod, Some(&valid_pod)),
        vec![pod_refusal.clone(), pod_refusal]
    );

    let mut old_deployment = deployment(json!(null));
    cost(&mut old_deployment, "/spec/template/metadata", "+1");
    let mut new_deployment = old_deployment.clone();
    cost(&mut new_deployment, "/spec/template/metadata", "x");
    assert_eq!(
        validate("apps", "v1", "deployments", &new_deployment, None),
        vec![refusal("spec.template.annotations", "x")]
    );
    assert_eq!(
        validate(
            "apps",
            "v1",
            "deployments",
            &new_deployment,
            Some(&old_deployment)
        ),
        Vec::<String>::new()
    );
    let mut valid_deployment = old_deployment.clone();
    cost(&mut valid_deployment, "/spec/template/metadata", "7");
    assert_eq!(
        validate(
            "apps",
            "v1",
            "deployments",
            &new_deployment,
            Some(&valid_deployment)
        ),
        vec![refusal("spec.template.annotations", "x")]
    );

    let mut old_set = json!({"metadata": {"name": "s", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}}, "serviceName": "s",
            "podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": pod_spec(json!(null), None)}}});
    cost(&mut old_set, "/spec/template/metadata", "+1");
    let mut new_set = old_set.clone();
    cost(&mut new_set, "/spec/template/metadata", "x");
    assert_eq!(
        validate("apps", "v1", "statefulsets", &new_set, None),
        vec![refusal("spec.template.annotations", "x")]
    );
    assert_eq!(
        validate("apps", "v1", "statefulsets", &new_set, Some(&old_set)),
        Vec::<String>::new()
    );
}
