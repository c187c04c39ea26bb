//! resource.k8s.io/v1 (dynamic resource allocation) validation through
//! kubectl 1.33: a DeviceClass's CEL selector, a ResourceSlice's device attributes and a ResourceClaim's
//! `/status` (`ValidateResourceClaimStatusUpdate`) refused with kube's 422
//! text, a valid allocation and reservation stored; admin access refused
//! outside a namespace labelled `resource.kubernetes.io/admin-access: true`.
//! Needs `kubectl.1.33`.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::TestEnv;

const KUBECTL: &str = "1.33";

#[tokio::test]
async fn kubectl_prints_kubes_text_for_bad_device_attributes() {
    let env = TestEnv::new("dra-slice").await;
    let slice = |attributes: &str| {
        format!(
            "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: {}-slice\nspec:\n  driver: gpu.example.com\n  nodeName: node-1\n  pool: {{name: pool, resourceSliceCount: 1}}\n  devices:\n  - name: gpu-0\n    attributes: {attributes}\n    capacity: {{memory: {{value: 40Gi}}}}\n",
            env.ns
        )
    };
    let bad = slice(
        r#"{"gpu.example.com/model": {"string": "a100", "int": 1}, "driverVersion": {"version": "v1"}}"#,
    );
    let (status, out, err) = env.kubectl_stdin(KUBECTL, &["create", "-f", "-"], Some(&bad));
    assert!(!status.success(), "{out}");
    assert_eq!(
        err,
        format!(
            "The ResourceSlice \"{}-slice\" is invalid: \n* spec.devices[0].attributes[driverVersion].version: Invalid value: \"v1\": must be a string compatible with semver.org spec 2.0.0\n* spec.devices[0].attributes[gpu.example.com/model]: Invalid value: resource.DeviceAttribute{{IntValue:(*int64)(0xc000000000), BoolValue:(*bool)(nil), StringValue:(*string)(0xc000000000), VersionValue:(*string)(nil)}}: exactly one value must be specified\n",
            env.ns
        )
    );
    let good = slice(
        r#"{"gpu.example.com/model": {"string": "a100"}, "driverVersion": {"version": "1.2.3"}}"#,
    );
    let (status, out, err) = env.kubectl_stdin(KUBECTL, &["create", "-f", "-"], Some(&good));
    assert!(status.success(), "{out}{err}");
    env.kubectl_ok(
        KUBECTL,
        &["delete", "resourceslice", &format!("{}-slice", env.ns)],
    );
}

#[tokio::test]
async fn kubectl_prints_kubes_text_for_a_bad_claim_status() {
    let env = TestEnv::new("dra-claim").await;
    let ns = env.ns.as_str();
    let claim = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: gpu\nspec:\n  devices:\n    requests:\n    - name: req-0\n      exactly: {deviceClassName: gpu.example.com}\n";
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", ns], Some(claim));
    assert!(status.success(), "{out}{err}");
    let patch_status = |patch: &str| {
        env.kubectl(
            KUBECTL,
            &[
                "patch",
                "resourceclaim",
                "gpu",
                "-n",
                ns,
                "--subresource",
                "status",
                "--type",
                "merge",
                "-p",
                patch,
            ],
        )
    };
    let (status, _, err) =
        patch_status(r#"{"status":{"reservedFor":[{"resource":"pods","name":"p","uid":"1"}]}}"#);
    assert!(!status.success());
    assert_eq!(
        err,
        "The ResourceClaim \"gpu\" is invalid: status.reservedFor: Forbidden: may not be specified when `allocated` is not set\n"
    );
    let (status, _, err) = patch_status(
        r#"{"status":{"allocation":{"devices":{"results":[{"request":"req-1","driver":"gpu.example.com","pool":"pool","device":"gpu-0"}]}}}}"#,
    );
    assert!(!status.success());
    assert_eq!(
        err,
        "The ResourceClaim \"gpu\" is invalid: status.allocation.devices.results[0].request: Invalid value: \"req-1\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'\n"
    );
    let (status, out, err) = patch_status(
        r#"{"status":{"allocation":{"devices":{"results":[{"request":"req-0","driver":"gpu.example.com","pool":"pool","device":"gpu-0"}]}},"reservedFor":[{"resource":"pods","name":"p","uid":"1"}]}}"#,
    );
    assert!(status.success(), "{out}{err}");
    let reserved = env.kubectl_ok(
        KUBECTL,
        &[
            "get",
            "resourceclaim",
            "gpu",
            "-n",
            ns,
            "-o",
            "jsonpath={.status.reservedFor[0].name}/{.status.allocation.devices.results[0].device}",
        ],
    );
    assert_eq!(reserved, "p/gpu-0");
    // A stored allocation is immutable.
    let (status, _, err) = patch_status(
        r#"{"status":{"allocation":{"devices":{"results":[{"request":"req-0","driver":"gpu.example.com","pool":"pool","device":"gpu-1"}]}}}}"#,
    );
    assert!(!status.success());
    assert!(
        err.starts_with("The ResourceClaim \"gpu\" is invalid: status.allocation: Invalid value: ")
            && err.ends_with(": field is immutable\n"),
        "{err}"
    );
}

#[tokio::test]
async fn kubectl_prints_kubes_text_for_a_bad_selector() {
    let env = TestEnv::new("dra-class").await;
    let name = format!("{}-gpu", env.ns);
    let class = |expression: &str| {
        format!(
            "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: {name}\nspec:\n  selectors:\n  - cel:\n      expression: '{expression}'\n"
        )
    };
    let (status, _, err) = env.kubectl_stdin(
        KUBECTL,
        &["create", "-f", "-"],
        Some(&class("device.driver")),
    );
    assert!(!status.success());
    assert_eq!(
        err,
        format!("The DeviceClass \"{name}\" is invalid: spec.selectors[0].cel.expression: Invalid value: \"device.driver\": must evaluate to bool or the unknown type, not string\n")
    );
    let (status, _, err) = env.kubectl_stdin(
        KUBECTL,
        &["create", "-f", "-"],
        Some(&class("device.vendor == \"x\"")),
    );
    assert!(!status.success());
    assert_eq!(
        err,
        format!("The DeviceClass \"{name}\" is invalid: spec.selectors[0].cel.expression: Invalid value: \"device.vendor == \\\"x\\\"\": compilation failed: ERROR: <input>:1:7: undefined field 'vendor'\n | device.vendor == \"x\"\n | ......^\n")
    );
    let (status, out, err) = env.kubectl_stdin(
        KUBECTL,
        &["create", "-f", "-"],
        Some(&class("device.driver == \"gpu.example.com\"")),
    );
    assert!(status.success(), "{out}{err}");
    env.kubectl_ok(KUBECTL, &["delete", "deviceclass", &name]);
}

#[tokio::test]
async fn admin_access_needs_a_labelled_namespace() {
    let env = TestEnv::new("dra-admin").await;
    let ns = env.ns.as_str();
    let claim = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: admin\nspec:\n  devices:\n    requests:\n    - name: req-0\n      exactly: {deviceClassName: gpu.example.com, adminAccess: true}\n";
    let (status, _, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", ns], Some(claim));
    assert!(!status.success());
    assert_eq!(
        err,
        "The ResourceClaim \"admin\" is invalid: spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace\n"
    );
    env.kubectl_ok(
        KUBECTL,
        &[
            "label",
            "namespace",
            ns,
            "resource.kubernetes.io/admin-access=true",
        ],
    );
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", ns], Some(claim));
    assert!(status.success(), "{out}{err}");
}
