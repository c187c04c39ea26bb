//! Cases from kube's `TestValidateDeviceClass`, `TestValidateClaim`,
//! `TestValidateClaimTemplate`, `TestValidateResourceSlice`
//! (`resource/validation/validation_*_test.go`), main rules.

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn device_classes() {
    let class = |spec: Value| json!({"metadata": {"name": "gpu"}, "spec": spec});
    assert!(device_class(&class(json!({})), None).is_empty());
    assert!(device_class(
        &class(json!({
            "selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}],
            "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"kind": "x"}}}],
        })),
        None
    )
    .is_empty());
    assert_eq!(
        texts(&device_class(&class(json!({
            "selectors": [{}, {"cel": {"expression": ""}}],
            "config": [{}, {"opaque": {"driver": "", "parameters": [1]}}, {"opaque": {"driver": "gpu.example.com"}}],
        })), None)),
        [
            "spec.selectors[0].cel: Required value",
            "spec.selectors[1].cel.expression: Required value",
            "spec.config[0].opaque: Required value",
            "spec.config[1].opaque.driver: Required value",
            "spec.config[1].opaque.driver: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "spec.config[1].opaque.parameters: Invalid value: \"<value omitted>\": parameters must be a valid JSON object",
            "spec.config[2].opaque.parameters: Required value",
        ]
    );
}

fn claim(requests: Value) -> Value {
    json!({"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": requests}}})
}

#[test]
fn resource_claims() {
    assert!(resource_claim(&claim(
        json!([{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}])
    ))
    .is_empty());
    assert!(
        resource_claim(&claim(json!([{"name": "gpu", "firstAvailable": [
            {"name": "big", "deviceClassName": "big.example.com", "allocationMode": "All"},
            {"name": "small", "deviceClassName": "small.example.com", "count": 2},
        ]}])))
        .is_empty()
    );
    assert_eq!(
        texts(&resource_claim(&claim(json!([
            {"name": "Bad_Name"},
            {"name": "gpu", "exactly": {"deviceClassName": "c", "allocationMode": "All", "count": 2}},
            {"name": "gpu", "exactly": {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 0}},
            {"name": "x", "exactly": {"allocationMode": "Some"}, "firstAvailable": [{"name": "a"}]},
            {"name": "y", "firstAvailable": [{"name": "a", "deviceClassName": "c"}, {"name": "a", "deviceClassName": "c"}]},
        ])))),
        [
            "spec.devices.requests[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
            "spec.devices.requests[1].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'",
            "spec.devices.requests[2].exactly.count: Invalid value: 0: must be greater than zero",
            "spec.devices.requests[3]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            "spec.devices.requests[4].firstAvailable[1].name: Duplicate value: \"a\"",
            "spec.devices.requests[2].name: Duplicate value: \"gpu\"",
        ]
    );
    let mut with_refs = claim(
        json!([{"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": "c"}]}]),
    );
    with_refs["spec"]["devices"]["constraints"] = json!([{"requests": ["gpu", "other"], "matchAttribute": "example.com/numa"}, {"requests": ["gpu/big", "gpu/big"]}]);
    with_refs["spec"]["devices"]["config"] = json!([{"requests": ["gpu/small"], "opaque": {"driver": "gpu.example.com", "parameters": {}}}]);
    assert_eq!(
        texts(&resource_claim(&with_refs)),
        [
            "spec.devices.constraints[0].requests[1]: Invalid value: \"other\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
            "spec.devices.constraints[1].requests[1]: Duplicate value: \"gpu/big\"",
            "spec.devices.constraints[1].matchAttribute: Required value",
            "spec.devices.config[0].requests[0]: Invalid value: \"gpu/small\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
        ]
    );
    let old = claim(json!([{"name": "gpu", "exactly": {"deviceClassName": "c"}}]));
    assert!(spec_immutable(&old, &old).is_empty());
    let changed = claim(json!([{"name": "gpu", "exactly": {"deviceClassName": "d"}}]));
    assert_eq!(spec_immutable(&changed, &old).len(), 1);
    assert!(texts(&spec_immutable(&changed, &old))[0].ends_with(": field is immutable"));
}

#[test]
fn resource_claim_templates() {
    let template = json!({"metadata": {"name": "t", "namespace": "default"}, "spec": {
        "metadata": {"labels": {"bad key!": "v"}},
        "spec": {"devices": {"requests": [{"name": "gpu"}]}}}});
    assert_eq!(
        texts(&resource_claim_template(&template)),
        [
            "spec.metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            "spec.spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
        ]
    );
}

fn slice(spec: Value) -> Value {
    json!({"metadata": {"name": "s"}, "spec": spec})
}

#[test]
fn resource_slices() {
    let valid = slice(
        json!({"driver": "gpu.example.com", "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-1", "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}),
    );
    assert!(
        resource_slice(&valid, None).is_empty(),
        "{:?}",
        texts(&resource_slice(&valid, None))
    );
    assert!(resource_slice(&slice(json!({"driver": "d.example.com", "pool": {"name": "a/b", "resourceSliceCount": 2}, "allNodes": true})), None).is_empty());
    assert_eq!(
        texts(&resource_slice(&slice(json!({"pool": {"generation": -1}, "devices": [{"name": "a"}, {"name": "a"}]})), None)),
        [
            "spec.driver: Required value",
            "spec.driver: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "spec.pool.name: Required value",
            "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
            "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero",
            "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
            "spec.devices[1].name: Duplicate value: \"a\"",
        ]
    );
    assert_eq!(
        texts(&resource_slice(&slice(json!({"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1},
            "nodeName": "n", "allNodes": true})), None)),
        ["spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"]
    );
    let moved = slice(
        json!({"driver": "other.example.com", "pool": {"name": "node-2", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-2"}),
    );
    assert_eq!(
        texts(&resource_slice(&moved, Some(&valid))),
        [
            "spec.pool.name: Invalid value: \"node-2\": field is immutable",
            "spec.driver: Invalid value: \"other.example.com\": field is immutable",
            "spec.nodeName: Invalid value: \"node-2\": field is immutable",
        ]
    );
}

/// A class's selectors are compiled on create and when they change; an
/// update that keeps them does not compile them again (kube's `stored`).
#[test]
fn device_class_selectors_are_compiled_unless_stored() {
    let class = |expression: &str| json!({"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": expression}}]}});
    let bad = class("device.driver");
    assert_eq!(
        texts(&device_class(&bad, None)),
        ["spec.selectors[0].cel.expression: Invalid value: \"device.driver\": must evaluate to bool or the unknown type, not string"]
    );
    assert!(device_class(&bad, Some(&bad)).is_empty());
    assert_eq!(texts(&device_class(&bad, Some(&class("true")))).len(), 1);
    let claim = json!({"metadata": {"name": "c", "namespace": "n"}, "spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "c", "selectors": [{"cel": {"expression": "device.x"}}]}}]}}});
    assert_eq!(
        texts(&resource_claim(&claim)),
        ["spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: \"device.x\": compilation failed: ERROR: <input>:1:7: undefined field 'x'\n | device.x\n | ......^"]
    );
}

/// `validateResourceSliceSpec`'s node fields: an empty `nodeName` and a
/// false flag are refused, a node selector is checked as core checks it;
/// `validateRequestNameRef` checks each segment as a DNS label.
#[test]
fn node_fields_and_request_references() {
    let spec = |extra: Value| {
        let mut spec = json!({"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": true});
        for (name, value) in extra.as_object().into_iter().flatten() {
            spec[name] = value.clone();
        }
        json!({"metadata": {"name": "s"}, "spec": spec})
    };
    assert_eq!(
        texts(&resource_slice(&spec(json!({"nodeName": "", "perDeviceNodeSelection": false})), None)),
        [
            "spec.nodeName: Invalid value: \"\": must be either unset or set to a non-empty string",
            "spec.perDeviceNodeSelection: Invalid value: false: must be either unset or set to true",
        ]
    );
    assert_eq!(
        texts(&resource_slice(&spec(json!({"allNodes": null, "nodeSelector": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "Near"}]}]}})), None)),
        ["spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Near\": not a valid selector operator"]
    );
    let mut with_refs = claim(json!([{"name": "gpu", "exactly": {"deviceClassName": "c"}}]));
    with_refs["spec"]["devices"]["constraints"] =
        json!([{"requests": ["Gpu", "a/b/c"], "matchAttribute": "example.com/numa"}]);
    assert_eq!(
        texts(&resource_claim(&with_refs)),
        [
            "spec.devices.constraints[0].requests[0]: Invalid value: \"Gpu\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            "spec.devices.constraints[0].requests[0]: Invalid value: \"Gpu\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
            "spec.devices.constraints[0].requests[1]: Invalid value: \"a/b/c\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
        ]
    );
}
