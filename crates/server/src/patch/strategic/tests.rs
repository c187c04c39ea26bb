//! Table-driven tests for the strategic merge patch engine. Most cases are
//! upstream's (`strategicpatch/patch_test.go`: the custom cases, the
//! two-way/three-way raw cases applied as the apiserver applies them, and
//! `TestUnknownField`), moved from upstream's test struct onto real kube
//! schemas: `mergingList` → Pod `containers` (merge key `name`),
//! `mergingIntList` → `metadata.finalizers` (merge, primitives),
//! `nonMergingIntList` → `securityContext.supplementalGroups` / `args`,
//! `nonMergingList` → `tolerations` (atomic), `simpleMap` → labels,
//! `retainKeysMap` → Deployment `strategy`, `retainKeysMergingList` → Pod
//! `volumes` (`merge,retainKeys`), `replacingItem` → PDB `selector`.
//! Upstream's `value`/`other` fields become `image`/`workingDir`.

use std::sync::OnceLock;

use serde_json::json;

use super::*;

type Gvk = (&'static str, &'static str, &'static str);

const POD: Gvk = ("", "v1", "Pod");
const DEPLOYMENT: Gvk = ("apps", "v1", "Deployment");
const PDB: Gvk = ("policy", "v1", "PodDisruptionBudget");

fn openapi() -> &'static OpenApi {
    static API: OnceLock<OpenApi> = OnceLock::new();
    API.get_or_init(|| OpenApi::new(crate::registry::builtin_resources()))
}

fn run(kind: Gvk, original: &Value, patch: &Value) -> Result<Value> {
    let context = SchemaContext::for_kind(openapi(), kind.0, kind.1, kind.2)
        .expect("definitions load")
        .expect("kind has a definition");
    apply(original, patch, &context)
}

enum Want {
    Ok(Value),
    /// HTTP code and the exact error text.
    Err(u16, &'static str),
}

struct Case {
    name: &'static str,
    kind: Gvk,
    original: Value,
    patch: Value,
    want: Want,
}

fn ok(name: &'static str, kind: Gvk, original: Value, patch: Value, want: Value) -> Case {
    Case {
        name,
        kind,
        original,
        patch,
        want: Want::Ok(want),
    }
}

fn err(
    name: &'static str,
    kind: Gvk,
    original: Value,
    patch: Value,
    code: u16,
    text: &'static str,
) -> Case {
    Case {
        name,
        kind,
        original,
        patch,
        want: Want::Err(code, text),
    }
}

fn containers(list: Value) -> Value {
    json!({ "spec": { "containers": list } })
}

fn finalizers(list: Value) -> Value {
    json!({ "metadata": { "finalizers": list } })
}

fn volumes(list: Value) -> Value {
    json!({ "spec": { "volumes": list } })
}

fn strategy(value: Value) -> Value {
    json!({ "spec": { "strategy": value } })
}

fn check(cases: Vec<Case>) {
    let mut failures = Vec::new();
    let total = cases.len();
    for case in cases {
        let got = run(case.kind, &case.original, &case.patch);
        match (&case.want, &got) {
            (Want::Ok(want), Ok(got)) if want == got => {}
            (Want::Err(code, text), Err(error))
                if error.http_code() == *code && error.to_string() == *text => {}
            (Want::Ok(want), _) => {
                failures.push(format!("{}:\n  want {want}\n  got  {got:?}", case.name))
            }
            (Want::Err(code, text), _) => failures.push(format!(
                "{}:\n  want error {code} {text:?}\n  got  {:?}",
                case.name,
                got.as_ref()
                    .map_err(|error| (error.http_code(), error.to_string()))
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `customStrategicMergePatchTestCaseData` and `customStrategicMergePatchRawTestCases`.
#[test]
fn upstream_custom_cases() {
    check(vec![
        ok(
            "unique scalars when merging lists",
            POD,
            finalizers(json!(["1", "2"])),
            finalizers(json!(["2", "3"])),
            finalizers(json!(["1", "2", "3"])),
        ),
        ok(
            "delete map from nested map",
            POD,
            json!({ "metadata": { "labels": { "key1": "1", "key2": "1" } } }),
            json!({ "metadata": { "labels": { "$patch": "delete" } } }),
            json!({ "metadata": { "labels": {} } }),
        ),
        ok(
            "delete all items from merging list",
            POD,
            containers(json!([{ "name": "1" }, { "name": "2" }])),
            containers(json!([{ "$patch": "replace" }])),
            containers(json!([])),
        ),
        ok("merge empty merging lists", POD, containers(json!([])), containers(json!([])), containers(json!([]))),
        ok(
            "delete all keys from map",
            POD,
            json!({ "spec": { "hostname": "1", "subdomain": "1" } }),
            json!({ "spec": { "$patch": "replace" } }),
            json!({ "spec": {} }),
        ),
        ok(
            "add key and delete all keys from map",
            POD,
            json!({ "spec": { "hostname": "1", "subdomain": "1" } }),
            json!({ "spec": { "nodeName": "a", "$patch": "replace" } }),
            json!({ "spec": { "nodeName": "a" } }),
        ),
        ok(
            "delete all duplicate entries in a merging list",
            POD,
            containers(json!([
                { "name": "1" }, { "name": "1" }, { "name": "2", "image": "a" }, { "name": "3" }, { "name": "3" }
            ])),
            containers(json!([{ "name": "1", "$patch": "delete" }, { "name": "3", "$patch": "delete" }])),
            containers(json!([{ "name": "2", "image": "a" }])),
        ),
        ok(
            "retainKeys map can add a field when no retainKeys directive present",
            DEPLOYMENT,
            strategy(json!({ "type": "RollingUpdate" })),
            strategy(json!({ "rollingUpdate": { "maxSurge": 1 } })),
            strategy(json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 1 } })),
        ),
        ok(
            "retainKeys map can change a field when no retainKeys directive present",
            DEPLOYMENT,
            strategy(json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 1 } })),
            strategy(json!({ "type": "Recreate" })),
            strategy(json!({ "type": "Recreate", "rollingUpdate": { "maxSurge": 1 } })),
        ),
        ok(
            "retainKeys map can delete a field when no retainKeys directive present",
            DEPLOYMENT,
            strategy(json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 1 } })),
            strategy(json!({ "rollingUpdate": null })),
            strategy(json!({ "type": "RollingUpdate" })),
        ),
        ok(
            "retainKeys map merge an empty map",
            DEPLOYMENT,
            strategy(json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 1 } })),
            strategy(json!({})),
            strategy(json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 1 } })),
        ),
        ok(
            "retainKeys list can add a field when no retainKeys directive present",
            POD,
            volumes(json!([{ "name": "bar" }, { "name": "foo" }])),
            volumes(json!([{ "name": "foo", "emptyDir": {} }])),
            volumes(json!([{ "name": "bar" }, { "name": "foo", "emptyDir": {} }])),
        ),
        ok(
            "retainKeys list can change a field when no retainKeys directive present",
            POD,
            volumes(json!([{ "name": "bar" }, { "name": "foo", "emptyDir": { "medium": "" } }])),
            volumes(json!([{ "name": "foo", "emptyDir": { "medium": "Memory" } }])),
            volumes(json!([{ "name": "bar" }, { "name": "foo", "emptyDir": { "medium": "Memory" } }])),
        ),
        ok(
            "retainKeys list can delete a field when no retainKeys directive present",
            POD,
            volumes(json!([{ "name": "bar" }, { "name": "foo", "emptyDir": {} }])),
            volumes(json!([{ "name": "foo", "emptyDir": null }])),
            volumes(json!([{ "name": "bar" }, { "name": "foo" }])),
        ),
        ok(
            "preserve the order from the patch in a merging list",
            POD,
            containers(json!([{ "name": "1" }, { "name": "2", "image": "b" }, { "name": "3" }])),
            containers(json!([
                { "name": "3", "image": "c" }, { "name": "1", "image": "a" }, { "name": "2", "workingDir": "x" }
            ])),
            containers(json!([
                { "name": "3", "image": "c" },
                { "name": "1", "image": "a" },
                { "name": "2", "image": "b", "workingDir": "x" }
            ])),
        ),
        ok(
            "preserve the order from the patch in a merging list 2",
            POD,
            containers(json!([{ "name": "1" }, { "name": "2", "image": "b" }, { "name": "3" }])),
            containers(json!([{ "name": "3", "image": "c" }, { "name": "1", "image": "a" }])),
            containers(json!([
                { "name": "2", "image": "b" }, { "name": "3", "image": "c" }, { "name": "1", "image": "a" }
            ])),
        ),
        ok(
            "preserve the order from the patch in a merging int list",
            POD,
            finalizers(json!(["1", "2", "3"])),
            finalizers(json!(["3", "1", "2"])),
            finalizers(json!(["3", "1", "2"])),
        ),
        ok(
            "preserve the order from the patch in a merging int list 2",
            POD,
            finalizers(json!(["1", "2", "3"])),
            finalizers(json!(["3", "1"])),
            finalizers(json!(["2", "3", "1"])),
        ),
        ok(
            "$setElementOrder contains item that is not present in the list to be merged",
            POD,
            containers(json!([{ "name": "1" }, { "name": "3" }])),
            json!({ "spec": {
                "$setElementOrder/containers": [{ "name": "3" }, { "name": "2" }, { "name": "1" }],
                "containers": [{ "name": "3", "image": "3" }, { "name": "1", "image": "1" }]
            } }),
            containers(json!([{ "name": "3", "image": "3" }, { "name": "1", "image": "1" }])),
        ),
        ok(
            "$setElementOrder contains item that is not present in the int list to be merged",
            POD,
            finalizers(json!(["1", "3"])),
            json!({ "metadata": { "$setElementOrder/finalizers": ["3", "2", "1"] } }),
            finalizers(json!(["3", "1"])),
        ),
        err(
            "should check if order in $setElementOrder and patch list match",
            POD,
            containers(json!([{ "name": "1" }, { "name": "3" }, { "name": "2" }])),
            json!({ "spec": {
                "$setElementOrder/containers": [{ "name": "1" }, { "name": "2" }, { "name": "3" }],
                "containers": [{ "name": "3", "image": "3" }, { "name": "1", "image": "1" }]
            } }),
            500,
            "The order in patch list:\n[map[image:3 name:3] map[image:1 name:1]]\n doesn't match $setElementOrder \
             list:\n[map[name:1] map[name:2] map[name:3]]\n",
        ),
        err(
            "should check if order in $setElementOrder and patch int list match",
            POD,
            finalizers(json!(["1", "3", "2"])),
            json!({ "metadata": { "$setElementOrder/finalizers": ["1", "2", "3"], "finalizers": ["3", "1"] } }),
            500,
            "The order in patch list:\n[3 1]\n doesn't match $setElementOrder list:\n[1 2 3]\n",
        ),
        err(
            "missing merge key should error out",
            POD,
            containers(json!([{ "name": "1", "image": "a" }])),
            containers(json!([{ "image": "b" }])),
            500,
            "map: map[image:b] does not contain declared merge key: name",
        ),
        ok(
            "$deleteFromPrimitiveList of nonexistent item in primitive list should not add the item to the list",
            POD,
            finalizers(json!(["1", "2"])),
            json!({ "metadata": { "$deleteFromPrimitiveList/finalizers": ["3"] } }),
            finalizers(json!(["1", "2"])),
        ),
        ok(
            "$deleteFromPrimitiveList on empty primitive list should not add the item to the list",
            POD,
            finalizers(json!(null)),
            json!({ "metadata": { "$deleteFromPrimitiveList/finalizers": ["3"] } }),
            finalizers(json!(null)),
        ),
        ok(
            "$deleteFromPrimitiveList on nonexistent primitive list should not add the primitive list",
            POD,
            json!({ "metadata": { "name": "bar" } }),
            json!({ "metadata": { "$deleteFromPrimitiveList/finalizers": ["3"] } }),
            json!({ "metadata": { "name": "bar" } }),
        ),
        ok(
            "$deleteFromPrimitiveList should delete item from a list with merge patch strategy",
            POD,
            finalizers(json!(["1", "2", "3"])),
            json!({ "metadata": { "$deleteFromPrimitiveList/finalizers": ["2"] } }),
            finalizers(json!(["1", "3"])),
        ),
        ok(
            "$deleteFromPrimitiveList should delete item from a list without merge patch strategy",
            POD,
            json!({ "spec": { "securityContext": { "supplementalGroups": [1, 2, 3] } } }),
            json!({ "spec": { "securityContext": { "$deleteFromPrimitiveList/supplementalGroups": [2] } } }),
            json!({ "spec": { "securityContext": { "supplementalGroups": [1, 3] } } }),
        ),
    ]);
}

/// `createStrategicMergePatchTestCaseData`: the two-way patch applied to the
/// original gives the modified object (or the three-way one applied to current).
#[test]
fn upstream_create_cases() {
    check(vec![
        ok(
            "nil original",
            POD,
            json!({}),
            json!({ "metadata": { "name": "1", "namespace": "1" } }),
            json!({ "metadata": { "name": "1", "namespace": "1" } }),
        ),
        ok(
            "nil patch",
            POD,
            json!({ "metadata": { "name": "1" } }),
            json!({}),
            json!({ "metadata": { "name": "1" } }),
        ),
        ok(
            "add field to map",
            POD,
            json!({ "metadata": { "name": "1", "generateName": "a" } }),
            json!({ "metadata": { "namespace": "1" } }),
            json!({ "metadata": { "name": "1", "namespace": "1", "generateName": "a" } }),
        ),
        ok(
            "add field and delete field from map",
            POD,
            json!({ "metadata": { "name": "1", "generateName": "a" } }),
            json!({ "metadata": { "name": null, "namespace": "1" } }),
            json!({ "metadata": { "namespace": "1", "generateName": "a" } }),
        ),
        ok(
            "delete field from nested map (three-way)",
            POD,
            json!({ "metadata": { "labels": { "key1": "1", "key2": "1", "other": "a" } } }),
            json!({ "metadata": { "labels": { "key2": null } } }),
            json!({ "metadata": { "labels": { "key1": "1", "other": "a" } } }),
        ),
        ok(
            "delete all fields from map",
            POD,
            json!({ "metadata": { "annotations": { "name": "1", "value": "1", "other": "a" } } }),
            json!({ "metadata": { "annotations": { "name": null, "value": null } } }),
            json!({ "metadata": { "annotations": { "other": "a" } } }),
        ),
        ok(
            "add field and delete all fields from map with conflict",
            POD,
            json!({ "metadata": { "annotations": { "name": "1", "value": "1", "other": "b" } } }),
            json!({ "metadata": { "annotations": { "name": null, "value": null, "other": "a" } } }),
            json!({ "metadata": { "annotations": { "other": "a" } } }),
        ),
        ok(
            "replace list of scalars",
            POD,
            json!({ "spec": { "securityContext": { "supplementalGroups": [1, 2] } } }),
            json!({ "spec": { "securityContext": { "supplementalGroups": [2, 3] } } }),
            json!({ "spec": { "securityContext": { "supplementalGroups": [2, 3] } } }),
        ),
        ok(
            "replace list of maps without a patch strategy (tolerations are atomic)",
            POD,
            json!({ "spec": { "tolerations": [{ "key": "a", "operator": "Exists" }] } }),
            json!({ "spec": { "tolerations": [{ "key": "b", "operator": "Exists", "effect": "NoSchedule" }] } }),
            json!({ "spec": { "tolerations": [{ "key": "b", "operator": "Exists", "effect": "NoSchedule" }] } }),
        ),
        ok(
            "delete all maps from merging list with conflict",
            POD,
            containers(
                json!([{ "name": "1", "workingDir": "a" }, { "name": "2", "workingDir": "b" }]),
            ),
            containers(
                json!([{ "name": "1", "$patch": "delete" }, { "name": "2", "$patch": "delete" }]),
            ),
            containers(json!([])),
        ),
        ok(
            "delete all maps from empty merging list",
            POD,
            containers(json!([])),
            containers(
                json!([{ "name": "1", "$patch": "delete" }, { "name": "2", "$patch": "delete" }]),
            ),
            containers(json!([])),
        ),
        ok(
            "defined null values should propagate overwrite current fields (with conflict)",
            POD,
            json!({ "metadata": { "name": "a", "namespace": "a" } }),
            json!({ "metadata": { "name": "1", "generateName": "1", "namespace": null } }),
            json!({ "metadata": { "name": "1", "generateName": "1" } }),
        ),
        ok(
            "nil patch with retainKeys map",
            DEPLOYMENT,
            json!({ "spec": { "replicas": 1, "strategy": { "type": "Recreate" } } }),
            json!({}),
            json!({ "spec": { "replicas": 1, "strategy": { "type": "Recreate" } } }),
        ),
    ]);
}

/// `strategicMergePatchRawTestCases`, the three-way patch applied to `current`.
#[test]
fn upstream_raw_cases() {
    let order =
        |names: &[&str]| -> Value { names.iter().map(|name| json!({ "name": name })).collect() };
    check(vec![
        ok(
            "nested patch merge with empty list (two-way)",
            POD,
            json!({ "spec": { "hostname": "hi" } }),
            containers(json!([{ "name": "hello" }, { "$patch": "delete", "name": "doesntexist" }])),
            json!({ "spec": { "hostname": "hi", "containers": [{ "name": "hello" }] } }),
        ),
        ok(
            "nested patch merge with empty list (three-way)",
            POD,
            json!({ "spec": { "hostname": "hi", "containers": [{ "name": "hello2" }] } }),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["hello", "doesntexist"]),
                "containers": [{ "name": "hello" }]
            } }),
            json!({ "spec": { "hostname": "hi", "containers": [{ "name": "hello" }, { "name": "hello2" }] } }),
        ),
        ok(
            "delete items in lists of scalars",
            POD,
            finalizers(json!(["1", "2", "3", "4"])),
            json!({ "metadata": {
                "$setElementOrder/finalizers": ["1", "2"], "$deleteFromPrimitiveList/finalizers": ["3"]
            } }),
            finalizers(json!(["1", "2", "4"])),
        ),
        ok(
            "delete all duplicate items in lists of scalars",
            POD,
            finalizers(json!(["1", "2", "3", "3", "4"])),
            json!({ "metadata": {
                "$setElementOrder/finalizers": ["1", "2"], "$deleteFromPrimitiveList/finalizers": ["3"]
            } }),
            finalizers(json!(["1", "2", "4"])),
        ),
        ok(
            "add and delete items in lists of scalars (two-way)",
            POD,
            finalizers(json!(["1", "2", "3"])),
            json!({ "metadata": {
                "$setElementOrder/finalizers": ["1", "2", "4"],
                "$deleteFromPrimitiveList/finalizers": ["3"],
                "finalizers": ["4"]
            } }),
            finalizers(json!(["1", "2", "4"])),
        ),
        ok(
            "merge lists of maps",
            POD,
            containers(json!([{ "name": "1", "workingDir": "a" }, { "name": "2", "image": "2", "workingDir": "b" }])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["4", "1", "2", "3"]),
                "containers": [{ "name": "4", "image": "4" }, { "name": "3", "image": "3" }]
            } }),
            containers(json!([
                { "name": "4", "image": "4" },
                { "name": "1", "workingDir": "a" },
                { "name": "2", "image": "2", "workingDir": "b" },
                { "name": "3", "image": "3" }
            ])),
        ),
        ok(
            "merge lists of maps with conflict",
            POD,
            containers(json!([{ "name": "1", "workingDir": "a" }, { "name": "2", "image": "3", "workingDir": "b" }])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["1", "2", "3"]),
                "containers": [{ "name": "2", "image": "2" }, { "name": "3", "image": "3" }]
            } }),
            containers(json!([
                { "name": "1", "workingDir": "a" },
                { "name": "2", "image": "2", "workingDir": "b" },
                { "name": "3", "image": "3" }
            ])),
        ),
        ok(
            "add field to map in merging list with conflict",
            POD,
            containers(json!([{ "name": "1", "workingDir": "a" }, { "name": "3", "image": "2", "workingDir": "b" }])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["1", "2"]),
                "containers": [{ "name": "1", "image": "1" }, { "name": "2", "image": "2" }]
            } }),
            containers(json!([
                { "name": "1", "image": "1", "workingDir": "a" },
                { "name": "2", "image": "2" },
                { "name": "3", "image": "2", "workingDir": "b" }
            ])),
        ),
        ok(
            "delete missing map from merging list with conflict",
            POD,
            containers(json!([{ "name": "3", "workingDir": "a" }])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["2"]),
                "containers": [{ "name": "2" }, { "name": "1", "$patch": "delete" }]
            } }),
            containers(json!([{ "name": "2" }, { "name": "3", "workingDir": "a" }])),
        ),
        ok(
            "add map and delete map from merging list",
            POD,
            containers(json!([{ "name": "1" }, { "name": "2", "workingDir": "b" }, { "name": "4", "workingDir": "c" }])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["2", "3"]),
                "containers": [{ "name": "3" }, { "name": "1", "$patch": "delete" }]
            } }),
            containers(json!([{ "name": "2", "workingDir": "b" }, { "name": "4", "workingDir": "c" }, { "name": "3" }])),
        ),
        ok(
            "add map and delete map from merging list with conflict",
            POD,
            containers(json!([{ "name": "1", "workingDir": "a" }, { "name": "4", "workingDir": "c" }])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["2", "3"]),
                "containers": [{ "name": "2" }, { "name": "3" }, { "name": "1", "$patch": "delete" }]
            } }),
            containers(json!([{ "name": "4", "workingDir": "c" }, { "name": "2" }, { "name": "3" }])),
        ),
        ok(
            "delete field from map in merging list",
            POD,
            containers(json!([
                { "name": "1", "image": "1", "workingDir": "a" }, { "name": "2", "image": "2", "workingDir": "b" }
            ])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["1", "2"]),
                "containers": [{ "name": "1", "image": null }]
            } }),
            containers(json!([{ "name": "1", "workingDir": "a" }, { "name": "2", "image": "2", "workingDir": "b" }])),
        ),
        ok(
            "replace non merging list nested in merging list",
            POD,
            containers(json!([{ "name": "1", "workingDir": "a", "args": ["1", "2"] }, { "name": "2" }])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["1", "2"]),
                "containers": [{ "name": "1", "args": ["1b"] }]
            } }),
            containers(json!([{ "name": "1", "workingDir": "a", "args": ["1b"] }, { "name": "2" }])),
        ),
        ok(
            "add field to map in merging list nested in merging list with value conflict",
            POD,
            containers(json!([
                {
                    "name": "1",
                    "workingDir": "a",
                    "env": [{ "name": "1", "value": "a" }, { "name": "2", "value": "b" }]
                },
                { "name": "2", "workingDir": "b" }
            ])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["1", "2"]),
                "containers": [{
                    "$setElementOrder/env": order(&["1", "2"]),
                    "name": "1",
                    "env": [{ "name": "1", "value": "1" }, { "name": "2", "value": "2" }]
                }]
            } }),
            containers(json!([
                {
                    "name": "1",
                    "workingDir": "a",
                    "env": [{ "name": "1", "value": "1" }, { "name": "2", "value": "2" }]
                },
                { "name": "2", "workingDir": "b" }
            ])),
        ),
        ok(
            "add field to map in merging list nested in merging list with deletion conflict (reordered)",
            POD,
            containers(json!([
                { "name": "1", "workingDir": "a", "env": [{ "name": "2", "value": "2" }] },
                { "name": "2", "workingDir": "b" }
            ])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["1", "2"]),
                "containers": [{
                    "$setElementOrder/env": order(&["2", "1"]),
                    "name": "1",
                    "env": [{ "name": "1", "value": "1" }]
                }]
            } }),
            containers(json!([
                {
                    "name": "1",
                    "workingDir": "a",
                    "env": [{ "name": "2", "value": "2" }, { "name": "1", "value": "1" }]
                },
                { "name": "2", "workingDir": "b" }
            ])),
        ),
        ok(
            "merge lists of scalars",
            POD,
            finalizers(json!(["1", "2", "4"])),
            json!({ "metadata": { "$setElementOrder/finalizers": ["1", "2", "3"], "finalizers": ["3"] } }),
            finalizers(json!(["1", "2", "3", "4"])),
        ),
        ok(
            "add an item in a list of primitives and preserve order",
            POD,
            finalizers(json!(["1", "4", "2"])),
            json!({ "metadata": { "$setElementOrder/finalizers": ["3", "1", "2"], "finalizers": ["3"] } }),
            finalizers(json!(["3", "1", "4", "2"])),
        ),
        ok(
            "delete an item in a list of primitives and preserve order",
            POD,
            finalizers(json!(["1", "2", "3"])),
            json!({ "metadata": {
                "$setElementOrder/finalizers": ["2", "1"], "$deleteFromPrimitiveList/finalizers": ["3"]
            } }),
            finalizers(json!(["2", "1"])),
        ),
        ok(
            "add an item in a list and preserve order",
            POD,
            containers(json!([{ "name": "1", "workingDir": "a" }, { "name": "2", "image": "2", "workingDir": "b" }])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["3", "1", "2"]),
                "containers": [{ "name": "3", "image": "3" }]
            } }),
            containers(json!([
                { "name": "3", "image": "3" },
                { "name": "1", "workingDir": "a" },
                { "name": "2", "image": "2", "workingDir": "b" }
            ])),
        ),
        ok(
            "add multiple items in a list and preserve order",
            POD,
            containers(json!([{ "name": "1", "workingDir": "a" }, { "name": "2", "image": "2", "workingDir": "b" }])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["1", "4", "2", "3"]),
                "containers": [{ "name": "4", "image": "4" }, { "name": "3", "image": "3" }]
            } }),
            containers(json!([
                { "name": "1", "workingDir": "a" },
                { "name": "4", "image": "4" },
                { "name": "2", "image": "2", "workingDir": "b" },
                { "name": "3", "image": "3" }
            ])),
        ),
        ok(
            "delete an item in a list and preserve order",
            POD,
            containers(json!([
                { "name": "1", "workingDir": "a" }, { "name": "2", "image": "2", "workingDir": "b" },
                { "name": "3", "image": "3" }
            ])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["2", "1"]),
                "containers": [{ "name": "3", "$patch": "delete" }]
            } }),
            containers(json!([{ "name": "2", "image": "2", "workingDir": "b" }, { "name": "1", "workingDir": "a" }])),
        ),
        ok(
            "change an item in a list and preserve order",
            POD,
            containers(json!([
                { "name": "1", "workingDir": "a" }, { "name": "2", "image": "2", "workingDir": "b" },
                { "name": "3", "image": "3" }
            ])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["2", "3", "1"]),
                "containers": [{ "name": "3", "image": "x" }]
            } }),
            containers(json!([
                { "name": "2", "image": "2", "workingDir": "b" },
                { "name": "3", "image": "x" },
                { "name": "1", "workingDir": "a" }
            ])),
        ),
        ok(
            "add and delete an item in a list and preserve order",
            POD,
            containers(json!([
                { "name": "1", "workingDir": "a" }, { "name": "2", "image": "2", "workingDir": "b" },
                { "name": "3", "image": "3" }
            ])),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["4", "2", "1"]),
                "containers": [{ "name": "4", "image": "4" }, { "name": "3", "$patch": "delete" }]
            } }),
            containers(json!([
                { "name": "4", "image": "4" },
                { "name": "2", "image": "2", "workingDir": "b" },
                { "name": "1", "workingDir": "a" }
            ])),
        ),
        ok(
            "set elements order in a list with server-only items",
            POD,
            containers(json!([
                { "name": "1", "workingDir": "a" }, { "name": "3", "image": "3" }, { "name": "4", "image": "4" },
                { "name": "2", "image": "2" }, { "name": "9" }
            ])),
            json!({ "spec": { "$setElementOrder/containers": order(&["4", "2", "3", "1"]) } }),
            containers(json!([
                { "name": "4", "image": "4" }, { "name": "2", "image": "2" }, { "name": "3", "image": "3" },
                { "name": "1", "workingDir": "a" }, { "name": "9" }
            ])),
        ),
        ok(
            "set elements order in a list with server-only items 2",
            POD,
            containers(json!([
                { "name": "1", "workingDir": "a" }, { "name": "2", "image": "2" }, { "name": "9" },
                { "name": "3", "image": "3" }, { "name": "4", "image": "4" }
            ])),
            json!({ "spec": { "$setElementOrder/containers": order(&["2", "1", "4", "3"]) } }),
            containers(json!([
                { "name": "2", "image": "2" }, { "name": "1", "workingDir": "a" }, { "name": "9" },
                { "name": "4", "image": "4" }, { "name": "3", "image": "3" }
            ])),
        ),
        ok(
            "set elements order in a list with server-only items 3",
            POD,
            containers(json!([
                { "name": "1", "workingDir": "a" }, { "name": "2", "image": "2" }, { "name": "7" }, { "name": "9" },
                { "name": "8" }, { "name": "3", "image": "3" }, { "name": "4", "image": "4" }
            ])),
            json!({ "spec": { "$setElementOrder/containers": order(&["2", "1", "4", "3"]) } }),
            containers(json!([
                { "name": "2", "image": "2" }, { "name": "1", "workingDir": "a" }, { "name": "7" }, { "name": "9" },
                { "name": "8" }, { "name": "4", "image": "4" }, { "name": "3", "image": "3" }
            ])),
        ),
        ok(
            "set elements order in a int list with server-only items 2",
            POD,
            finalizers(json!(["1", "2", "9", "3", "4"])),
            json!({ "metadata": { "$setElementOrder/finalizers": ["2", "1", "4", "3"] } }),
            finalizers(json!(["2", "1", "9", "4", "3"])),
        ),
        ok(
            "set elements order in a int list with server-only items 3",
            POD,
            finalizers(json!(["1", "2", "7", "9", "8", "3", "4"])),
            json!({ "metadata": { "$setElementOrder/finalizers": ["2", "1", "4", "3"] } }),
            finalizers(json!(["2", "1", "7", "9", "8", "4", "3"])),
        ),
        ok(
            "behavior of set element order for a merging list with duplicate",
            POD,
            containers(json!([
                { "name": "1" }, { "name": "2", "image": "dup1" }, { "name": "3" }, { "name": "2", "image": "dup2" },
                { "name": "4" }
            ])),
            json!({ "spec": { "$setElementOrder/containers": order(&["2", "1", "4", "3", "2"]) } }),
            containers(json!([
                { "name": "2", "image": "dup1" }, { "name": "2", "image": "dup2" }, { "name": "1" }, { "name": "4" },
                { "name": "3" }
            ])),
        ),
        ok(
            "behavior of set element order for a merging int list with duplicate",
            POD,
            finalizers(json!(["1", "2", "3", "2", "4"])),
            json!({ "metadata": { "$setElementOrder/finalizers": ["2", "1", "4", "3", "2"] } }),
            finalizers(json!(["2", "2", "1", "4", "3"])),
        ),
        ok(
            "delete and reorder in one list, reorder in another",
            POD,
            json!({ "spec": {
                "containers": [{ "name": "a", "image": "a" }, { "name": "b", "image": "b" }],
                "volumes": [{ "name": "c", "emptyDir": {} }, { "name": "d", "emptyDir": {} }]
            } }),
            json!({ "spec": {
                "$setElementOrder/containers": order(&["b"]),
                "$setElementOrder/volumes": order(&["d", "c"]),
                "containers": [{ "$patch": "delete", "name": "a" }]
            } }),
            json!({ "spec": {
                "containers": [{ "name": "b", "image": "b" }],
                "volumes": [{ "name": "d", "emptyDir": {} }, { "name": "c", "emptyDir": {} }]
            } }),
        ),
    ]);
}

/// The `retainKeys` raw cases on Deployment `strategy` and Pod `volumes`.
#[test]
fn upstream_retain_keys_cases() {
    let rolling = json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": "25%", "maxUnavailable": "25%" } });
    check(vec![
        ok(
            "retainKeys map should clear defaulted field",
            DEPLOYMENT,
            strategy(rolling.clone()),
            strategy(json!({ "$retainKeys": ["type"], "type": "Recreate" })),
            strategy(json!({ "type": "Recreate" })),
        ),
        ok(
            "retainKeys map adds a field and clear a field",
            DEPLOYMENT,
            strategy(json!({ "type": "Recreate", "rollingUpdate": {} })),
            strategy(json!({ "$retainKeys": ["type"], "type": "RollingUpdate" })),
            strategy(json!({ "type": "RollingUpdate" })),
        ),
        ok(
            "retainKeys map deletes a field",
            DEPLOYMENT,
            strategy(rolling.clone()),
            strategy(json!({ "$retainKeys": ["type"], "rollingUpdate": null })),
            strategy(json!({ "type": "RollingUpdate" })),
        ),
        ok(
            "retainKeys map clears a field",
            DEPLOYMENT,
            strategy(rolling.clone()),
            strategy(json!({ "$retainKeys": ["rollingUpdate"] })),
            strategy(json!({ "rollingUpdate": { "maxSurge": "25%", "maxUnavailable": "25%" } })),
        ),
        ok(
            "retainKeys map changes a field in a nested map",
            DEPLOYMENT,
            strategy(rolling.clone()),
            strategy(
                json!({ "$retainKeys": ["rollingUpdate", "type"], "rollingUpdate": { "maxSurge": 2 } }),
            ),
            strategy(
                json!({ "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 2, "maxUnavailable": "25%" } }),
            ),
        ),
        ok(
            "retainKeys list of maps clears a field",
            POD,
            volumes(
                json!([{ "name": "bar" }, { "name": "foo", "emptyDir": {}, "hostPath": { "path": "/x" } }]),
            ),
            json!({ "spec": {
                "$setElementOrder/volumes": [{ "name": "bar" }, { "name": "foo" }],
                "volumes": [{ "$retainKeys": ["emptyDir", "name"], "name": "foo" }]
            } }),
            volumes(json!([{ "name": "bar" }, { "name": "foo", "emptyDir": {} }])),
        ),
        ok(
            "retainKeys list of maps changes a field and clear a field",
            POD,
            volumes(json!([{ "name": "bar" }, { "name": "foo", "emptyDir": {} }])),
            json!({ "spec": {
                "$setElementOrder/volumes": [{ "name": "bar" }, { "name": "foo" }],
                "volumes": [{ "$retainKeys": ["hostPath", "name"], "name": "foo", "hostPath": { "path": "/d" } }]
            } }),
            volumes(json!([{ "name": "bar" }, { "name": "foo", "hostPath": { "path": "/d" } }])),
        ),
        ok(
            "retainKeys list of maps deletes a field and clear a field",
            POD,
            volumes(json!([
                { "name": "bar" }, { "name": "foo", "configMap": { "name": "a" }, "emptyDir": {} }
            ])),
            json!({ "spec": {
                "$setElementOrder/volumes": [{ "name": "bar" }, { "name": "foo" }],
                "volumes": [{ "$retainKeys": ["name"], "name": "foo", "configMap": null }]
            } }),
            volumes(json!([{ "name": "bar" }, { "name": "foo" }])),
        ),
        err(
            "retainKeys must be a list",
            DEPLOYMENT,
            strategy(rolling.clone()),
            strategy(json!({ "$retainKeys": "type", "type": "Recreate" })),
            400,
            "invalid patch format of retainKeys",
        ),
        err(
            "every patched key must be retained",
            DEPLOYMENT,
            strategy(rolling.clone()),
            strategy(
                json!({ "$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": { "maxSurge": 1 } }),
            ),
            400,
            "invalid patch format of retainKeys",
        ),
    ]);
}

/// `TestUnknownField` (patch keys the schema does not know) and the null and
/// directive cleaning of values the original does not have.
#[test]
fn upstream_unknown_field_and_null_cases() {
    check(vec![
        ok(
            "added only",
            POD,
            json!({ "spec": { "hostname": "foo" } }),
            json!({ "spec": { "scalar": true, "complex": { "nested": true }, "array": [1, 2, 3] } }),
            json!({ "spec": { "hostname": "foo", "scalar": true, "complex": { "nested": true }, "array": [1, 2, 3] } }),
        ),
        ok(
            "removed only",
            POD,
            json!({ "spec": { "hostname": "foo", "scalar": true, "complex": { "nested": true }, "array": [1, 2, 3] } }),
            json!({ "spec": { "complex": null, "scalar": null } }),
            json!({ "spec": { "hostname": "foo", "array": [1, 2, 3] } }),
        ),
        err(
            "diff",
            POD,
            json!({ "spec": { "hostname": "foo", "complex": { "nested": true } } }),
            json!({ "spec": { "complex": { "nested": false } } }),
            500,
            "unable to find api field in struct PodSpec for the json field \"complex\"",
        ),
        ok(
            "no diff even if modified null",
            POD,
            json!({ "metadata": { "name": "foo" } }),
            json!({ "metadata": { "annotations": { "key": null } } }),
            json!({ "metadata": { "name": "foo", "annotations": {} } }),
        ),
        ok(
            "discard nulls in nested and adds not nulls",
            POD,
            json!({ "spec": { "hostname": "foo" } }),
            json!({ "spec": { "securityContext": { "runAsUser": 1, "fsGroup": null } } }),
            json!({ "spec": { "hostname": "foo", "securityContext": { "runAsUser": 1 } } }),
        ),
        ok(
            "filter nulls from nested slices",
            POD,
            json!({ "spec": {} }),
            containers(
                json!([{ "name": "a", "image": null, "securityContext": { "privileged": null } }]),
            ),
            containers(json!([{ "name": "a", "securityContext": {} }])),
        ),
        ok(
            "not filter nulls from non-associative slice",
            POD,
            json!({ "spec": {} }),
            containers(json!([{ "name": "a", "args": ["key1", null, "key2"] }])),
            containers(json!([{ "name": "a", "args": ["key1", null, "key2"] }])),
        ),
        ok(
            "null values in original are preserved",
            POD,
            json!({ "metadata": { "labels": null } }),
            json!({ "spec": { "hostname": "x" } }),
            json!({ "metadata": { "labels": null }, "spec": { "hostname": "x" } }),
        ),
        ok(
            "a directive in a field the original lacks drops the field",
            POD,
            json!({ "metadata": { "name": "x" } }),
            json!({ "metadata": { "labels": { "$patch": "replace", "a": "b" }, "annotations": { "$patch": "delete" } } }),
            json!({ "metadata": { "name": "x" } }),
        ),
        ok(
            "deleting a whole primitive list with a null deletion list",
            POD,
            json!({ "metadata": { "name": "x", "finalizers": ["a"] } }),
            json!({ "metadata": { "$deleteFromPrimitiveList/finalizers": null } }),
            json!({ "metadata": { "name": "x" } }),
        ),
    ]);
}

/// Real-world shapes: labels, ports, Deployment templates, replace strategy.
#[test]
fn kube_shapes() {
    check(vec![
        ok(
            "labels and annotations merge key by key",
            POD,
            json!({ "metadata": { "labels": { "app": "a", "tier": "web" }, "annotations": { "x": "1" } } }),
            json!({ "metadata": { "labels": { "tier": null, "env": "prod" }, "annotations": { "y": "2" } } }),
            json!({ "metadata": {
                "labels": { "app": "a", "env": "prod" }, "annotations": { "x": "1", "y": "2" }
            } }),
        ),
        ok(
            "container ports merge by containerPort",
            POD,
            containers(
                json!([{ "name": "c", "ports": [{ "containerPort": 80, "name": "http" }] }]),
            ),
            containers(json!([{
                "name": "c",
                "ports": [{ "containerPort": 443, "name": "https" }, { "containerPort": 80, "$patch": "delete" }]
            }])),
            containers(
                json!([{ "name": "c", "ports": [{ "containerPort": 443, "name": "https" }] }]),
            ),
        ),
        ok(
            "env merges by name and appends new variables",
            POD,
            containers(
                json!([{ "name": "c", "env": [{ "name": "A", "value": "1" }, { "name": "B", "value": "2" }] }]),
            ),
            containers(
                json!([{ "name": "c", "env": [{ "name": "B", "value": "3" }, { "name": "C", "value": "4" }] }]),
            ),
            containers(json!([{
                "name": "c",
                "env": [{ "name": "A", "value": "1" }, { "name": "B", "value": "3" }, { "name": "C", "value": "4" }]
            }])),
        ),
        ok(
            "deployment template containers with $setElementOrder",
            DEPLOYMENT,
            json!({ "spec": { "replicas": 1, "template": { "spec": { "containers": [
                { "name": "app", "image": "v1" }, { "name": "sidecar", "image": "s1" }
            ] } } } }),
            json!({ "spec": { "template": { "spec": {
                "$setElementOrder/containers": [{ "name": "sidecar" }, { "name": "app" }],
                "containers": [{ "name": "app", "image": "v2" }]
            } } } }),
            json!({ "spec": { "replicas": 1, "template": { "spec": { "containers": [
                { "name": "sidecar", "image": "s1" }, { "name": "app", "image": "v2" }
            ] } } } }),
        ),
        ok(
            "kubectl set image style patch keeps the other containers",
            DEPLOYMENT,
            json!({ "spec": { "template": { "spec": { "containers": [
                { "name": "app", "image": "v1", "ports": [{ "containerPort": 8080 }] }, { "name": "log", "image": "l" }
            ] } } } }),
            json!({ "spec": { "template": { "spec": { "containers": [{ "name": "app", "image": "v2" }] } } } }),
            json!({ "spec": { "template": { "spec": { "containers": [
                { "name": "app", "image": "v2", "ports": [{ "containerPort": 8080 }] }, { "name": "log", "image": "l" }
            ] } } } }),
        ),
        ok(
            "replace strategy takes the patch map as it is",
            PDB,
            json!({ "spec": { "selector": {
                "matchLabels": { "a": "b" },
                "matchExpressions": [{ "key": "k", "operator": "Exists" }]
            } } }),
            json!({ "spec": { "selector": { "matchLabels": { "c": "d" } } } }),
            json!({ "spec": { "selector": { "matchLabels": { "c": "d" } } } }),
        ),
        ok(
            // mergeSortedSlice: an item the server order lacks goes before server-only items.
            "finalizers union puts new patch items before server-only ones",
            POD,
            finalizers(json!(["a", "b"])),
            finalizers(json!(["c", "a"])),
            finalizers(json!(["c", "a", "b"])),
        ),
        ok(
            "a new merge-list element without $setElementOrder goes first",
            POD,
            containers(json!([{ "name": "a" }, { "name": "b" }])),
            containers(json!([{ "name": "c", "image": "c" }])),
            containers(json!([{ "name": "c", "image": "c" }, { "name": "a" }, { "name": "b" }])),
        ),
        ok(
            "a null patch changes nothing",
            POD,
            json!({ "metadata": { "name": "x" } }),
            Value::Null,
            json!({ "metadata": { "name": "x" } }),
        ),
    ]);
}

/// Error texts and codes as upstream words them and kube answers them.
#[test]
fn errors() {
    let mut deep = json!("leaf");
    for _ in 0..MAX_DEPTH + 1 {
        deep = json!({ "a": deep });
    }
    check(vec![
        err(
            "unknown field at the root",
            DEPLOYMENT,
            json!({ "bogus": { "a": 1 } }),
            json!({ "bogus": { "b": 1 } }),
            500,
            "unable to find api field in struct Deployment for the json field \"bogus\"",
        ),
        err(
            "$patch: merge on a map is not a directive",
            POD,
            json!({ "spec": { "hostname": "a" } }),
            json!({ "spec": { "$patch": "merge", "hostname": "x" } }),
            500,
            "unknown patch type: merge in map: map[$patch:merge hostname:x]",
        ),
        err(
            "unknown $patch value in a list element",
            POD,
            containers(json!([{ "name": "a" }])),
            containers(json!([{ "name": "a", "$patch": "bogus" }])),
            500,
            "unknown patch type: bogus in map: map[$patch:bogus name:a]",
        ),
        err(
            "non-string $patch value",
            POD,
            json!({ "spec": { "hostname": "a" } }),
            json!({ "spec": { "$patch": 1 } }),
            500,
            "unknown patch type: %!s(int64=1) in map: map[$patch:1]",
        ),
        err(
            "$patch: merge in a list element",
            POD,
            containers(json!([{ "name": "a" }])),
            containers(json!([{ "$patch": "merge" }])),
            500,
            "merging lists cannot yet be specified in the patch",
        ),
        err(
            "$patch: delete without the merge key",
            POD,
            containers(json!([{ "name": "a" }])),
            containers(json!([{ "$patch": "delete" }])),
            500,
            "map: map[$patch:delete] does not contain declared merge key: name",
        ),
        err(
            "integer merge key missing",
            POD,
            containers(json!([{ "name": "c", "ports": [{ "containerPort": 80 }] }])),
            containers(json!([{ "name": "c", "ports": [{ "name": "http", "protocol": "TCP", "hostPort": 1.5 }] }])),
            500,
            "map: map[hostPort:1.5 name:http protocol:TCP] does not contain declared merge key: containerPort",
        ),
        err(
            "malformed $setElementOrder key",
            POD,
            containers(json!([{ "name": "a" }])),
            json!({ "spec": { "$setElementOrderX/containers": [{ "name": "a" }] } }),
            400,
            "invalid patch format of setElementOrder list",
        ),
        err(
            "$setElementOrder must be a list",
            POD,
            containers(json!([{ "name": "a" }])),
            json!({ "spec": { "$setElementOrder/containers": { "name": "a" } } }),
            500,
            "expected a []interface {}, but received a map[string]interface {}",
        ),
        err(
            "malformed $deleteFromPrimitiveList key",
            POD,
            finalizers(json!(["a"])),
            json!({ "metadata": { "$deleteFromPrimitiveListX/finalizers": ["a"] } }),
            400,
            "invalid patch format of primitive list",
        ),
        err(
            "lists of lists",
            POD,
            finalizers(json!([])),
            finalizers(json!([["a"]])),
            422,
            "lists of lists are not supported",
        ),
        err(
            "list element types differ",
            POD,
            finalizers(json!(["a"])),
            finalizers(json!([1])),
            500,
            "list element types are not identical: [[a] [1]]",
        ),
        err(
            "objects nested in a Go map cannot merge",
            POD,
            json!({ "metadata": { "labels": { "a": { "x": "1" } } } }),
            json!({ "metadata": { "labels": { "a": { "y": "2" } } } }),
            500,
            "merging an object in json but data type is not struct, instead is: map",
        ),
        err(
            "lists meeting at a struct field",
            POD,
            json!({ "spec": { "securityContext": [1] } }),
            json!({ "spec": { "securityContext": [2] } }),
            500,
            "expected slice or array type, but got: struct",
        ),
        err(
            "merge list of objects without a merge key",
            POD,
            finalizers(json!([{ "a": 1 }])),
            finalizers(json!([{ "b": 1 }])),
            500,
            "cannot merge lists without merge key for string",
        ),
        err(
            "unhashable $retainKeys entry (upstream panics)",
            POD,
            json!({ "metadata": { "name": "a" } }),
            json!({ "metadata": { "$retainKeys": [{}] } }),
            500,
            "runtime error: hash of unhashable type map[string]interface {}",
        ),
        err(
            "null first element of a merge list (upstream panics)",
            POD,
            finalizers(json!([])),
            finalizers(json!([null])),
            500,
            "runtime error: invalid memory address or nil pointer dereference",
        ),
        err(
            "patch is not an object",
            POD,
            json!({}),
            json!([1]),
            400,
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
        err(
            "patch nested too deeply",
            POD,
            json!({}),
            json!({ "metadata": { "annotations": deep } }),
            400,
            "the strategic merge patch is nested deeper than 100 levels",
        ),
    ]);
}

#[test]
fn statuses_follow_the_handler() {
    let invalid = StrategicPatchError::NoListOfLists.to_status();
    assert_eq!(
        invalid.to_json(),
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server rejected our request due to an error in our request",
            "reason": "Invalid", "details": {}, "code": 422
        })
    );
    let bad = StrategicPatchError::BadPatchFormatForRetainKeys.to_status();
    assert_eq!(
        (bad.code, bad.reason, bad.message.as_str()),
        (400, "BadRequest", "invalid patch format of retainKeys")
    );
    let plain = StrategicPatchError::MergeListDirective.to_status();
    assert_eq!((plain.code, plain.reason), (500, ""));
    assert_eq!(
        plain.message,
        "merging lists cannot yet be specified in the patch"
    );
    let panic = StrategicPatchError::Panic("runtime error: x");
    assert!(panic.is_panic());
    assert_eq!(panic.http_code(), 500);
}

#[test]
fn contexts() {
    assert!(SchemaContext::for_kind(openapi(), "", "v1", "NoSuchKind")
        .expect("definitions")
        .is_none());
    let spec = SchemaContext::for_definition(openapi(), "io.k8s.api.core.v1.PodSpec")
        .expect("definitions")
        .expect("PodSpec is vendored");
    assert_eq!(
        apply(
            &json!({ "containers": [{ "name": "a" }] }),
            &json!({ "containers": [{ "name": "b" }] }),
            &spec
        ),
        Ok(json!({ "containers": [{ "name": "b" }, { "name": "a" }] }))
    );
    // Without a schema objects merge and lists are replaced, as JSON merge patch does.
    assert_eq!(
        apply(
            &json!({ "a": { "b": 1, "c": [1, 2] }, "d": [{ "x": 1 }] }),
            &json!({ "a": { "b": null, "c": [3] }, "d": [{ "y": 2 }] }),
            &SchemaContext::schemaless()
        ),
        Ok(json!({ "a": { "c": [3] }, "d": [{ "y": 2 }] }))
    );
}

#[test]
fn never_panics_on_odd_input() {
    let odd = [
        json!(null),
        json!(1),
        json!("x"),
        json!([]),
        json!({}),
        json!([null]),
        json!([[1]]),
        json!([{}]),
        json!({ "$patch": "delete" }),
        json!({ "$patch": "replace" }),
        json!({ "$retainKeys": [1, null, "a"] }),
        json!({ "$setElementOrder/": [] }),
        json!({ "$deleteFromPrimitiveList/": [1] }),
        json!([{ "name": { "a": 1 } }, { "name": { "a": 1 } }]),
    ];
    let fields = [
        "containers",
        "finalizers",
        "labels",
        "volumes",
        "spec",
        "metadata",
        "args",
        "ports",
        "env",
    ];
    for original in &odd {
        for patch in &odd {
            for field in fields {
                for (kind, wrap) in [(POD, "spec"), (POD, "metadata"), (DEPLOYMENT, "spec")] {
                    let original =
                        json!({ wrap: { field: original, "containers": [{ "name": original }] } });
                    let patch =
                        json!({ wrap: { field: patch, "containers": [{ "name": patch }] } });
                    let _ = run(kind, &original, &patch);
                    let order = json!({ wrap: { format!("$setElementOrder/{field}"): patch[wrap][field].clone() } });
                    let _ = run(kind, &original, &order);
                }
            }
        }
    }
}
