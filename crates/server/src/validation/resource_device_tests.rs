//! Cases from kube's `TestValidateResourceSlice` (attributes, capacities)
//! and `TestValidateClaim` (constraints' `matchAttribute`).

use serde_json::{json, Value};

use crate::status::FieldError;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn slice(devices: Value) -> Value {
    json!({"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com", "nodeName": "n",
        "pool": {"name": "p", "resourceSliceCount": 1}, "devices": devices}})
}

fn slice_errors(devices: Value) -> Vec<String> {
    texts(&super::super::resource::resource_slice(
        &slice(devices),
        None,
    ))
}

#[test]
fn valid_attributes_and_capacities_pass() {
    assert!(slice_errors(json!([{"name": "d", "attributes": {
        "model": {"string": "a100"},
        "gpu.example.com/cores": {"int": 8},
        "driverVersion": {"version": "1.2.3-rc.1+build.5"},
        "_flag": {"bool": true},
    }, "capacity": {"memory": {"value": "40Gi"}}}]))
    .is_empty());
}

#[test]
fn bad_attributes_are_reported_as_kube_reports_them() {
    let long = "x".repeat(65);
    assert_eq!(
        slice_errors(json!([{"name": "d", "attributes": {
            "a": {},
            "b": {"int": 1, "string": "x"},
            "c": {"string": long},
            "d": {"version": "1.2"},
            "9bad": {"bool": true},
            "/x": {"bool": true},
            "example.com/": {"bool": true},
            "a/b/c": {"bool": true},
            "Bad_Domain/x": {"bool": true},
        }}])),
        [
            "spec.devices[0].attributes: Invalid value: \"\": the domain must not be empty",
            "spec.devices[0].attributes: Invalid value: \"9bad\": a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
            "spec.devices[0].attributes: Invalid value: \"Bad_Domain\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "spec.devices[0].attributes[a]: Invalid value: \"\": exactly one value must be specified",
            "spec.devices[0].attributes: Invalid value: \"a/b/c\": must not contain more than one slash",
            "spec.devices[0].attributes[b]: Invalid value: resource.DeviceAttribute{IntValue:(*int64)(0xc000000000), BoolValue:(*bool)(nil), StringValue:(*string)(0xc000000000), VersionValue:(*string)(nil)}: exactly one value must be specified",
            "spec.devices[0].attributes[c].string: Too long: may not be more than 64 bytes",
            "spec.devices[0].attributes[d].version: Invalid value: \"1.2\": must be a string compatible with semver.org spec 2.0.0",
            "spec.devices[0].attributes: Invalid value: \"\": the name must not be empty",
        ]
    );
}

#[test]
fn attributes_and_capacities_are_bounded_together() {
    let mut attributes = serde_json::Map::new();
    for position in 0..20 {
        attributes.insert(format!("a{position}"), json!({"bool": true}));
    }
    let mut capacity = serde_json::Map::new();
    for position in 0..13 {
        capacity.insert(format!("c{position}"), json!({"value": "1"}));
    }
    assert_eq!(
        slice_errors(json!([{"name": "d", "attributes": attributes, "capacity": capacity}])),
        ["spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32"]
    );
    assert_eq!(
        slice_errors(json!([{"name": "d", "capacity": {"x/y/z": {"value": "1"}}}])),
        ["spec.devices[0].capacity: Invalid value: \"x/y/z\": must not contain more than one slash"]
    );
}

#[test]
fn a_constraint_names_a_fully_qualified_attribute() {
    let claim = json!({"metadata": {"name": "c", "namespace": "n"}, "spec": {"devices": {
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "c"}}],
        "constraints": [{"matchAttribute": "numa"}, {"matchAttribute": "example.com/numa"}],
    }}});
    assert_eq!(
        texts(&super::super::resource::resource_claim(&claim)),
        ["spec.devices.constraints[0].matchAttribute: Invalid value: \"numa\": a fully qualified name must be a domain and a name separated by a slash"]
    );
}
