//! Cases ported from kube's `validation_test.go` `TestValidatePodStatusUpdate`
//! and `TestPodIPsValidation` / `TestHostIPsValidation`.

use super::*;
use serde_json::json;

fn pod(restart_policy: &str, status: Value) -> Value {
    json!({"metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "x",
            "resources": {"requests": {"cpu": "1"}}}],
            "restartPolicy": restart_policy},
        "status": status})
}

fn messages(errors: &[FieldError]) -> Vec<String> {
    errors
        .iter()
        .map(|error| format!("{}: {}", error.field, error.body()))
        .collect()
}

fn update(old_status: Value, new_status: Value) -> Vec<String> {
    messages(&pod_status_update(
        &pod("Never", new_status),
        &pod("Never", old_status),
    ))
}

#[test]
fn a_valid_status_passes() {
    let status = json!({"phase": "Running", "qosClass": "Burstable",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "example.com/custom", "status": "True"}],
        "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}],
        "podIPs": [{"ip": "10.1.0.1"}, {"ip": "fd01::1"}],
        "nominatedNodeName": "node-1",
        "containerStatuses": [{"name": "c", "state": {"running": {}},
            "user": {"linux": {"uid": 0, "gid": 0, "supplementalGroups": [1]}}}]});
    assert_eq!(
        update(json!({"qosClass": "Burstable"}), status),
        Vec::<String>::new()
    );
}

#[test]
fn conditions_nominated_node_and_qos_class() {
    let errors = update(
        json!({"qosClass": "Burstable"}),
        json!({"qosClass": "Guaranteed", "nominatedNodeName": "Node_1",
            "conditions": [{"type": "bad type", "status": "True"}]}),
    );
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].starts_with("metadata.conditions[0].Type: Invalid value: \"bad type\": name part must consist of alphanumeric characters"), "{errors:?}");
    assert!(
        errors[1].starts_with(
            "status.nominatedNodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain"
        ),
        "{errors:?}"
    );
    assert_eq!(
        errors[2],
        "status.qosClass: Invalid value: \"Guaranteed\": field is immutable"
    );
}

#[test]
fn terminated_containers_stay_terminated_unless_restarted() {
    let terminated = |code: i64| json!({"containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": code}}}]});
    let running = json!({"containerStatuses": [{"name": "c", "state": {"running": {}}}]});
    assert_eq!(
        update(terminated(0), running.clone()),
        ["status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state"]
    );
    let on_failure = |status: Value| pod("OnFailure", status);
    assert!(pod_status_update(&on_failure(running.clone()), &on_failure(terminated(1))).is_empty());
    assert_eq!(
        messages(&pod_status_update(
            &on_failure(running.clone()),
            &on_failure(terminated(0))
        ))
        .len(),
        1
    );
    let always = |status: Value| pod("Always", status);
    assert!(pod_status_update(&always(running), &always(terminated(0))).is_empty());
}

#[test]
fn pod_and_host_ips() {
    assert_eq!(
        update(json!({}), json!({"podIPs": [{"ip": "1.1.1.1"}, {"ip": "1.1.1.1"}]})),
        [
            "status.podIPs: Invalid value: []core.PodIP{core.PodIP{IP:\"1.1.1.1\"}, core.PodIP{IP:\"1.1.1.1\"}}: may specify no more than one IP for each IP family",
            "status.podIPs[1]: Duplicate value: core.PodIP{IP:\"1.1.1.1\"}",
        ]
    );
    let errors = update(json!({}), json!({"podIPs": [{"ip": "1.1.1.1.1"}]}));
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with(
            "status.podIPs[0]: Invalid value: \"1.1.1.1.1\": must be a valid IP address"
        ),
        "{errors:?}"
    );
    assert_eq!(
        update(
            json!({}),
            json!({"hostIP": "10.0.0.2", "hostIPs": [{"ip": "10.0.0.1"}]})
        ),
        ["status.hostIPs[0].ip: Invalid value: \"10.0.0.1\": must be equal to `hostIP`"]
    );
}

#[test]
fn users_and_allocated_resources() {
    let errors = update(
        json!({}),
        json!({"containerStatuses": [{"name": "c", "state": {},
            "user": {"linux": {"uid": -1, "gid": 0}},
            "allocatedResourcesStatus": [{"name": "memory", "resources": [
                {"resourceID": "a", "health": "Fine"}, {"resourceID": "a", "health": "Healthy"}]}]}],
            "ephemeralContainerStatuses": [{"name": "e", "state": {},
                "allocatedResourcesStatus": [{"name": "cpu"}]}]}),
    );
    assert_eq!(
        errors,
        [
            "status.containerStatuses[0].linux.uid: Invalid value: -1: must be between 0 and 2147483647, inclusive",
            "status.containerStatuses[0].allocatedResourcesStatus[0].name: Invalid value: \"memory\": must match one of the container's resource requests",
            "status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health: Unsupported value: \"Fine\": supported values: \"Healthy\", \"Unhealthy\", \"Unknown\"",
            "status.containerStatuses[0].allocatedResourcesStatus[0].resources[1].resourceID: Duplicate value: \"a\"",
            "status.ephemeralContainerStatuses[0].allocatedResourcesStatus: Forbidden: must not be specified in container status",
        ]
    );
}

#[test]
fn resource_claim_statuses_name_spec_claims() {
    let mut old = pod("Never", json!({}));
    old["spec"]["resourceClaims"] = json!([{"name": "gpu"}]);
    let mut new = old.clone();
    new["status"] = json!({"resourceClaimStatuses": [
        {"name": "gpu", "resourceClaimName": "p-gpu"},
        {"name": "gpu"},
        {"name": "other"}]});
    assert_eq!(
        messages(&pod_status_update(&new, &old)),
        [
            "status.resourceClaimStatuses[1].name: Duplicate value: \"gpu\"",
            "status.resourceClaimStatuses[2].name: Invalid value: \"other\": must match the name of an entry in `spec.resourceClaims`",
        ]
    );
}
