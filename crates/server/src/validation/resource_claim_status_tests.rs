//! Cases from kube's `TestValidateClaimStatusUpdate`
//! (`validation_resourceclaim_test.go`).

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn claim(status: Value) -> Value {
    json!({"metadata": {"name": "c", "namespace": "n"}, "spec": {"devices": {
        "requests": [{"name": "req-0", "exactly": {"deviceClassName": "c"}}]}},
        "status": status})
}

fn allocation() -> Value {
    json!({"devices": {"results": [
        {"request": "req-0", "driver": "dra.example.com", "pool": "pool-0", "device": "device-0"}]}})
}

fn reserved(uid: &str) -> Value {
    json!({"resource": "pods", "name": "p", "uid": uid})
}

#[test]
fn a_valid_allocation_and_reservation_pass() {
    let old = claim(json!({}));
    let new = claim(
        json!({"allocation": allocation(), "reservedFor": [reserved("1")],
        "devices": [{"driver": "dra.example.com", "pool": "pool-0", "device": "device-0",
            "conditions": [{"type": "Ready", "status": "True", "reason": "Ok", "message": "",
                "lastTransitionTime": "2024-01-01T00:00:00Z"}],
            "data": {"a": 1},
            "networkData": {"interfaceName": "eth0", "ips": ["10.9.8.7/24", "2001:db8::1/64"]}}]}),
    );
    assert_eq!(
        texts(&resource_claim_status_update(&new, &old)),
        Vec::<String>::new()
    );
}

#[test]
fn reservations_need_an_allocation_and_unique_uids() {
    let old = claim(json!({}));
    let new = claim(json!({"reservedFor": [reserved("1"), {"uid": "1"}]}));
    assert_eq!(
        texts(&resource_claim_status_update(&new, &old)),
        [
            "status.reservedFor[1].resource: Required value",
            "status.reservedFor[1].name: Required value",
            "status.reservedFor[1].uid: Duplicate value: \"1\"",
            "status.reservedFor: Forbidden: may not be specified when `allocated` is not set",
        ]
    );
    // No new consumer once the claim is being deleted.
    let old = claim(json!({"allocation": allocation(), "reservedFor": [reserved("1")]}));
    let mut new =
        claim(json!({"allocation": allocation(), "reservedFor": [reserved("1"), reserved("2")]}));
    new["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
    assert_eq!(
        texts(&resource_claim_status_update(&new, &old)),
        ["status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"]
    );
}

#[test]
fn a_new_allocation_is_validated_and_a_stored_one_is_immutable() {
    let old = claim(json!({}));
    let new = claim(json!({"allocation": {"devices": {
        "results": [{"request": "other", "driver": "", "pool": "", "device": "Bad"}],
        "config": [{"source": "Elsewhere", "requests": ["req-0"],
            "opaque": {"driver": "dra.example.com", "parameters": {}}}]},
        "nodeSelector": {"nodeSelectorTerms": []}}}));
    assert_eq!(
        texts(&resource_claim_status_update(&new, &old)),
        [
            "status.allocation.devices.results[0].request: Invalid value: \"other\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
            "status.allocation.devices.results[0].driver: Required value",
            "status.allocation.devices.results[0].driver: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "status.allocation.devices.results[0].pool: Required value",
            "status.allocation.devices.results[0].device: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            "status.allocation.devices.config[0].source: Unsupported value: \"Elsewhere\": supported values: \"FromClaim\", \"FromClass\"",
            "status.allocation.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term",
        ]
    );
    let old = claim(json!({"allocation": allocation()}));
    let mut changed = allocation();
    changed["devices"]["results"][0]["device"] = json!("device-1");
    let new = claim(json!({"allocation": changed}));
    let errors = texts(&resource_claim_status_update(&new, &old));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("status.allocation: Invalid value: ")
            && errors[0].ends_with(": field is immutable"),
        "{errors:?}"
    );
    // Removing the allocation is allowed (deallocation).
    assert!(resource_claim_status_update(&claim(json!({})), &old).is_empty());
}

#[test]
fn device_statuses_name_allocated_devices() {
    let old = claim(json!({"allocation": allocation()}));
    let device = |name: &str, ips: Value| {
        json!({"driver": "dra.example.com", "pool": "pool-0",
        "device": name, "data": [1], "networkData": {"ips": ips, "interfaceName": "x".repeat(257)}})
    };
    let new = claim(json!({"allocation": allocation(), "devices": [
        device("device-0", json!(["10.9.8.7", "10.9.8.7/024", "::ffff:1.2.3.4/120"])),
        device("device-9", json!([])),
        device("device-0", json!([])),
    ]}));
    assert_eq!(
        texts(&resource_claim_status_update(&new, &old)),
        [
            "status.devices[0].data: Invalid value: \"<value omitted>\": must be a valid JSON object",
            "status.devices[0].networkData.interfaceName: Too long: may not be more than 256 bytes",
            "status.devices[0].networkData.ips[0]: Invalid value: \"10.9.8.7\": must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)",
            "status.devices[0].networkData.ips[1]: Invalid value: \"10.9.8.7/024\": must be in canonical form (\"10.9.8.7/24\")",
            "status.devices[0].networkData.ips[2]: Invalid value: \"::ffff:1.2.3.4/120\": must be in canonical form (\"1.2.3.4/24\")",
            "status.devices[1]: Invalid value: dra.example.com/pool-0/device-9: must be an allocated device in the claim",
            "status.devices[1].data: Invalid value: \"<value omitted>\": must be a valid JSON object",
            "status.devices[1].networkData.interfaceName: Too long: may not be more than 256 bytes",
            "status.devices[2].data: Invalid value: \"<value omitted>\": must be a valid JSON object",
            "status.devices[2].networkData.interfaceName: Too long: may not be more than 256 bytes",
            "status.devices[2].deviceID: Duplicate value: dra.example.com/pool-0/device-0",
        ]
    );
}
