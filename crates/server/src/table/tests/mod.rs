//! Table tests. The per-kind files check every printer's cells against
//! what kube-apiserver 1.34 produces for the same object (expected values
//! worked out from upstream `printers.go` and its `printers_test.go`); this
//! file checks whole Tables (headers, rows, `includeObject`).

mod cluster;
mod core;
mod workloads;

use serde_json::{json, Value};

use super::columns::{columns, printer_for, Printer};
use super::duration::parse_nanos;
use super::{cells, printers_cluster, render, TableOf};
use crate::registry::builtin_resources;

pub(super) const CREATED: &str = "2024-01-07T00:00:00Z";
pub(super) const AGE: &str = "3d";

pub(super) fn now() -> i64 {
    parse_nanos("2024-01-10T00:00:00Z").unwrap()
}

/// `{"metadata": {"name", "creationTimestamp"}}` merged with `rest`.
pub(super) fn obj(name: &str, rest: Value) -> Value {
    let mut value = json!({"metadata": {"name": name, "creationTimestamp": CREATED}});
    if let (Some(target), Value::Object(extra)) = (value.as_object_mut(), rest) {
        for (key, field) in extra {
            if key == "metadata" {
                for (k, v) in field.as_object().cloned().unwrap_or_default() {
                    target["metadata"][&k] = v;
                }
            } else {
                target.insert(key, field);
            }
        }
    }
    value
}

pub(super) fn check(printer: Printer, cases: Vec<(Value, Value)>) {
    for (object, want) in cases {
        let got = Value::Array(cells(Some(printer), &object, now()));
        assert_eq!(got, want, "{printer:?} cells of {object}");
    }
}

#[test]
fn flow_schemas_sort_by_precedence_then_name() {
    let mut items = [
        obj("b", json!({"spec": {"matchingPrecedence": 500}})),
        obj("a", json!({"spec": {"matchingPrecedence": 500}})),
        obj("first", json!({"spec": {"matchingPrecedence": 1}})),
    ];
    items.sort_by(printers_cluster::flow_schema_order);
    let names: Vec<&str> = items.iter().map(super::format::name).collect();
    assert_eq!(names, ["first", "a", "b"]);
}

/// Every resource kube serves has a cell for each column (kube-apiserver's
/// own IPAddress printer is the known exception: an age cell, no column).
#[test]
fn cells_match_columns() {
    let sample = obj("x", json!({}));
    for resource in builtin_resources() {
        let Some(printer) = printer_for(resource.group, resource.plural) else {
            continue;
        };
        let width = columns(printer).as_array().map_or(0, Vec::len);
        let cell_count = cells(Some(printer), &sample, now()).len();
        let expected = if printer == Printer::IpAddress {
            width + 1
        } else {
            width
        };
        assert_eq!(
            cell_count, expected,
            "{}/{}",
            resource.group, resource.plural
        );
    }
}

fn resource(group: &str, plural: &str) -> &'static crate::registry::ResourceDef {
    builtin_resources()
        .iter()
        .find(|r| r.group == group && r.plural == plural)
        .expect("resource")
}

/// What `kubectl get` prints as headers: the upper-cased priority-0 column names.
fn headers(table: &Value) -> String {
    table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["priority"] == 0)
        .map(|c| c["name"].as_str().unwrap().to_uppercase())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn tables_have_kubectl_headers() {
    let include_object = "Metadata";
    let cases = [
        ("", "configmaps", "NAME DATA AGE"),
        ("", "secrets", "NAME TYPE DATA AGE"),
        ("apps", "deployments", "NAME READY UP-TO-DATE AVAILABLE AGE"),
        ("", "namespaces", "NAME STATUS AGE"),
        (
            "",
            "services",
            "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE",
        ),
        ("", "pods", "NAME READY STATUS RESTARTS AGE"),
        ("batch", "jobs", "NAME STATUS COMPLETIONS DURATION AGE"),
        ("", "events", "LAST SEEN TYPE REASON OBJECT MESSAGE"),
        ("rbac.authorization.k8s.io", "roles", "NAME CREATED AT"),
        (
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "NAME CREATED AT",
        ),
        ("", "limitranges", "NAME CREATED AT"),
    ];
    for (group, plural, want) in cases {
        let table = render(
            TableOf::builtin(resource(group, plural)),
            "v1",
            &[obj("x", json!({}))],
            7,
            None,
            include_object,
            true,
        );
        assert_eq!(headers(&table), want, "{group}/{plural}");
        assert_eq!(table["metadata"]["resourceVersion"], "7");
    }
}

#[test]
fn default_convertor_rows() {
    let include_object = "None";
    let roles = resource("rbac.authorization.k8s.io", "roles");
    let table = render(
        TableOf::builtin(roles),
        "v1",
        &[obj("r", json!({}))],
        3,
        Some("tok"),
        include_object,
        true,
    );
    assert_eq!(table["rows"], json!([{"cells": ["r", CREATED]}]));
    assert_eq!(
        table["metadata"],
        json!({"resourceVersion": "3", "continue": "tok"})
    );
    let empty = render(
        TableOf::builtin(roles),
        "v1",
        &[],
        3,
        None,
        include_object,
        true,
    );
    assert_eq!(empty["rows"], Value::Null);
    let pods = render(
        TableOf::builtin(resource("", "pods")),
        "v1",
        &[],
        3,
        None,
        include_object,
        false,
    );
    assert_eq!(
        (pods["rows"].clone(), pods["columnDefinitions"].clone()),
        (json!([]), Value::Null)
    );
}

#[test]
fn row_objects_follow_include_object() {
    let cm = obj(
        "cm",
        json!({"metadata": {"namespace": "ns"}, "data": {"a": "b"}}),
    );
    let configmaps = resource("", "configmaps");
    let meta = render(
        TableOf::builtin(configmaps),
        "v1",
        std::slice::from_ref(&cm),
        1,
        None,
        "Metadata",
        true,
    );
    assert_eq!(meta["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(meta["rows"][0]["object"]["metadata"]["namespace"], "ns");
    let full = render(
        TableOf::builtin(configmaps),
        "v1",
        std::slice::from_ref(&cm),
        1,
        None,
        "Object",
        true,
    );
    assert_eq!(full["rows"][0]["object"], cm);
    assert_eq!(full["rows"][0]["cells"][1], 1);
}
