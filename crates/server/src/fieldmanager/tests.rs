//! Table-driven tests modelled on structured-merge-diff's: FieldsV1 round
//! trips, the merge per list and map type, and managedFields golden cases.

use serde_json::{json, Value};

use super::*;
use crate::openapi::OpenApi;
use crate::registry::builtin_resources;

fn openapi() -> &'static OpenApi {
    static OPENAPI: std::sync::OnceLock<OpenApi> = std::sync::OnceLock::new();
    OPENAPI.get_or_init(|| OpenApi::new(builtin_resources()))
}

fn manager(group: &str, version: &str, kind: &str) -> FieldManager<'static> {
    FieldManager {
        schema: Schema::for_kind(openapi(), group, version, kind),
        api_version: if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        },
        subresource: String::new(),
        reset: Set::new(),
        other_versions: None,
    }
}

fn deployments() -> FieldManager<'static> {
    let mut fm = manager("apps", "v1", "Deployment");
    fm.reset.insert(&[PathElement::field("status")]);
    fm
}

#[test]
fn fields_v1_round_trips_byte_for_byte() {
    let cases = [
        r#"{}"#,
        r#"{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:x":{}}}}"#,
        r#"{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}"#,
        r#"{"f:metadata":{"f:finalizers":{".":{},"v:\"a\"":{},"v:\"b\"":{}}}}"#,
        r#"{"f:a":{},"f:b":{"f:c":{}},"f:d":{}}"#,
        r#"{"f:list":{"i:0":{},"i:2":{"f:x":{}}}}"#,
        // SMD orders keys by value (80 < 8080), not by their text.
        r#"{"f:ports":{"k:{\"port\":80}":{},"k:{\"port\":8080}":{}}}"#,
        // Escaping as Go's encoder does it.
        r#"{"f:m":{"v:\"a\\u003cb\"":{}}}"#,
    ];
    for case in cases {
        let value: Value = serde_json::from_str(case).expect("valid JSON");
        let set = fields_v1::from_value(&value).expect("decodes");
        assert_eq!(
            fields_v1::to_json_string(&set),
            case,
            "round trip of {case}"
        );
        assert_eq!(fields_v1::to_value(&set), value, "value form of {case}");
    }
}

#[test]
fn fields_v1_rejects_bad_keys_and_skips_unknown_types() {
    for bad in [
        r#"{"x":{}}"#,
        r#"{"f-a":{}}"#,
        r#"{"k:[1]":{}}"#,
        r#"{"i:x":{}}"#,
    ] {
        let value: Value = serde_json::from_str(bad).expect("json");
        assert!(fields_v1::from_value(&value).is_err(), "{bad}");
    }
    let unknown = json!({"z:whatever": {}, "f:a": {}});
    let set = fields_v1::from_value(&unknown).expect("decodes");
    assert_eq!(fields_v1::to_json_string(&set), r#"{"f:a":{}}"#);
}

#[test]
fn path_strings_as_in_conflict_messages() {
    let path = vec![
        PathElement::field("spec"),
        PathElement::field("containers"),
        PathElement::key(vec![("name".into(), json!("nginx"))]),
        PathElement::field("image"),
    ];
    assert_eq!(
        path_string(&path),
        r#".spec.containers[name="nginx"].image"#
    );
    assert_eq!(
        path_string(&[
            PathElement::field("f"),
            PathElement::Value(json!("a")),
            PathElement::Index(2)
        ]),
        r#".f[="a"][2]"#
    );
}

#[test]
fn merge_per_list_and_map_type() {
    let fm = deployments();
    let container = |name: &str, image: &str| json!({"name": name, "image": image});
    let spec =
        |containers: Value| json!({"spec": {"template": {"spec": {"containers": containers}}}});
    struct Case {
        name: &'static str,
        live: Value,
        config: Value,
        merged: Value,
    }
    let cases = [
        Case {
            name: "list-type map: by key, live-only items keep their place",
            live: spec(json!([container("a", "x"), container("b", "x")])),
            config: spec(json!([container("b", "y"), container("c", "y")])),
            merged: spec(json!([
                container("a", "x"),
                container("b", "y"),
                container("c", "y")
            ])),
        },
        Case {
            name: "list-type map: the configuration's order wins for shared items",
            live: spec(json!([container("a", "x"), container("b", "x")])),
            config: spec(json!([container("b", "x"), container("a", "x")])),
            merged: spec(json!([container("b", "x"), container("a", "x")])),
        },
        Case {
            name: "list-type set",
            live: json!({"metadata": {"finalizers": ["a", "b"]}}),
            config: json!({"metadata": {"finalizers": ["c", "a"]}}),
            merged: json!({"metadata": {"finalizers": ["c", "a", "b"]}}),
        },
        Case {
            name: "atomic list: replaced",
            live: spec(json!([{"name": "a", "args": ["1", "2"]}])),
            config: spec(json!([{"name": "a", "args": ["3"]}])),
            merged: spec(json!([{"name": "a", "args": ["3"]}])),
        },
        Case {
            name: "granular map: entries merge",
            live: json!({"metadata": {"labels": {"a": "1", "b": "1"}}}),
            config: json!({"metadata": {"labels": {"b": "2", "c": "2"}}}),
            merged: json!({"metadata": {"labels": {"a": "1", "b": "2", "c": "2"}}}),
        },
        Case {
            name: "atomic map (LabelSelector): replaced",
            live: json!({"spec": {"selector": {"matchLabels": {"a": "1"}}}}),
            config: json!({"spec": {"selector": {"matchLabels": {"b": "1"}}}}),
            merged: json!({"spec": {"selector": {"matchLabels": {"b": "1"}}}}),
        },
        Case {
            name: "scalars from the configuration, the rest kept",
            live: json!({"spec": {"replicas": 1, "paused": true}}),
            config: json!({"spec": {"replicas": 3}}),
            merged: json!({"spec": {"replicas": 3, "paused": true}}),
        },
    ];
    for case in cases {
        assert_eq!(
            walk::merge(&fm.schema, &case.live, &case.config),
            case.merged,
            "{}",
            case.name
        );
    }
}

#[test]
fn field_sets_follow_the_schema() {
    let fm = deployments();
    let config = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"app": "x"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}], "args": ["a"]}]}}
        }
    });
    let set = walk::to_field_set(&fm.schema, &config);
    assert_eq!(
        fields_v1::to_json_string(&set),
        concat!(
            r#"{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:labels":{"f:app":{}},"f:name":{}},"#,
            r#""f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:spec":{"f:containers":{"#,
            r#""k:{\"name\":\"c\"}":{".":{},"f:args":{},"f:image":{},"f:name":{},"f:ports":{"#,
            r#""k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}"#
        )
    );
}

#[test]
fn typed_checks_on_applied_configurations() {
    let fm = deployments();
    let unknown = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "n"}, "spec": {"bogus": 1}});
    let error =
        check_applied(&fm.schema, "apps/v1", "Deployment", &unknown).expect_err("unknown field");
    assert_eq!(
        error.to_string(),
        "failed to create typed patch object (n/d; apps/v1, Kind=Deployment): .spec.bogus: field not declared in schema"
    );
    assert_eq!(error.to_status().code, 500);
    let wrong_kind = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    let error = check_applied(&fm.schema, "apps/v1", "Deployment", &wrong_kind).expect_err("kind");
    assert_eq!(error.to_status().code, 400);
    assert_eq!(
        error.to_string(),
        "invalid object type: /v1, Kind=ConfigMap"
    );
    let no_key = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}});
    let error = check_applied(&fm.schema, "apps/v1", "Deployment", &no_key).expect_err("key");
    assert!(error.to_string().ends_with(
        ".spec.template.spec.containers: element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)"
    ), "{error}");
}

fn entries(object: &Value) -> Vec<Value> {
    object["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn fields_of(object: &Value, manager: &str, operation: &str) -> String {
    let entry = entries(object)
        .into_iter()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
        .unwrap_or_else(|| panic!("no {operation} entry for {manager}: {object}"));
    let set = fields_v1::from_value(&entry["fieldsV1"]).expect("fieldsV1");
    fields_v1::to_json_string(&set)
}

const NOW: &str = "2026-01-01T00:00:00Z";
const LATER: &str = "2026-01-01T00:00:05Z";

#[test]
fn golden_update_records_changed_fields() {
    let fm = manager("", "v1", "ConfigMap");
    let zero = zero_object("v1", "ConfigMap");
    assert_eq!(zero, json!({"metadata": {"creationTimestamp": null}}));
    let mut created = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n", "labels": {"x": "y"}}, "data": {"k": "v"}});
    fm.update(&zero, &mut created, "pytest", NOW);
    assert_eq!(
        created["metadata"]["managedFields"],
        json!([{"manager": "pytest", "operation": "Update", "apiVersion": "v1", "time": NOW, "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:x": {}}}}}])
    );
    // A second manager changes one key: it takes it, the first keeps the rest.
    let mut edited = created.clone();
    edited["data"]["k"] = json!("w");
    edited["data"]["l"] = json!("new");
    fm.update(&created, &mut edited, "editor", LATER);
    assert_eq!(
        fields_of(&edited, "pytest", "Update"),
        r#"{"f:data":{},"f:metadata":{"f:labels":{".":{},"f:x":{}}}}"#
    );
    assert_eq!(
        fields_of(&edited, "editor", "Update"),
        r#"{"f:data":{"f:k":{},"f:l":{}}}"#
    );
    // Kube's order: same operation, older first.
    let managers: Vec<Value> = entries(&edited)
        .iter()
        .map(|e| e["manager"].clone())
        .collect();
    assert_eq!(managers, vec![json!("pytest"), json!("editor")]);
    // A no-op update changes nothing, times included.
    let mut again = edited.clone();
    fm.update(&edited, &mut again, "third", "2026-01-01T00:01:00Z");
    assert_eq!(again, edited);
    // Removing a field takes it from its owner.
    let mut removed = edited.clone();
    removed["data"].as_object_mut().expect("data").remove("l");
    fm.update(&edited, &mut removed, "third", "2026-01-01T00:01:00Z");
    assert_eq!(
        fields_of(&removed, "editor", "Update"),
        r#"{"f:data":{"f:k":{}}}"#
    );
    assert!(entries(&removed).iter().all(|e| e["manager"] != "third"));
}

#[test]
fn golden_request_managed_fields_reset_or_kept() {
    let fm = manager("", "v1", "ConfigMap");
    let mut live = json!({"metadata": {"name": "c"}, "data": {"a": "1"}});
    fm.update(&json!({}), &mut live, "creator", NOW);
    // Sent without managedFields: the live entries are kept.
    let mut same = json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
    fm.update(&live, &mut same, "u", LATER);
    assert_eq!(entries(&same).len(), 2);
    // An empty list resets them: only this write's fields are left.
    let mut reset =
        json!({"metadata": {"name": "c", "managedFields": []}, "data": {"a": "1", "b": "3"}});
    fm.update(&same, &mut reset, "u", LATER);
    assert_eq!(entries(&reset).len(), 1);
    assert_eq!(fields_of(&reset, "u", "Update"), r#"{"f:data":{"f:b":{}}}"#);
    // Invalid entries fall back to the live ones.
    let mut invalid = json!({"metadata": {"name": "c", "managedFields": [{"manager": "x", "operation": "Bogus"}]}, "data": {"a": "1", "b": "3"}});
    fm.update(&reset, &mut invalid, "u", LATER);
    assert_eq!(
        invalid["metadata"]["managedFields"],
        reset["metadata"]["managedFields"]
    );
}

fn deployment(replicas: i64, labels: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n", "labels": labels},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    })
}

#[test]
fn golden_apply_conflicts_force_and_prune() {
    let fm = deployments();
    // Apply creates.
    let created = fm
        .apply(
            &json!({}),
            &deployment(1, json!({"a": "1", "b": "1"})),
            "mgr",
            false,
            NOW,
        )
        .expect("first apply");
    assert_eq!(
        fields_of(&created, "mgr", "Apply"),
        concat!(
            r#"{"f:metadata":{"f:labels":{"f:a":{},"f:b":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"#,
            r#""f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}}}}"#
        )
    );
    assert_eq!(entries(&created)[0]["time"], json!(NOW));
    // Another manager updates replicas (kubectl scale / edit).
    let mut scaled = created.clone();
    scaled["spec"]["replicas"] = json!(5);
    fm.update(&created, &mut scaled, "kubectl-edit", LATER);
    assert!(fields_of(&scaled, "kubectl-edit", "Update").contains("f:replicas"));
    assert!(!fields_of(&scaled, "mgr", "Apply").contains("f:replicas"));
    // Re-applying replicas: 1 conflicts with the updater.
    let error = fm
        .apply(
            &scaled,
            &deployment(1, json!({"a": "1", "b": "1"})),
            "mgr",
            false,
            LATER,
        )
        .expect_err("conflict");
    let status = error.to_status();
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using apps/v1: .spec.replicas"
    );
    let body = status.to_json();
    assert_eq!(
        body["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"kubectl-edit\" using apps/v1", "field": ".spec.replicas"}])
    );
    // Forced: the applier takes the field, the updater's entry is gone.
    let forced = fm
        .apply(
            &scaled,
            &deployment(1, json!({"a": "1", "b": "1"})),
            "mgr",
            true,
            LATER,
        )
        .expect("forced apply");
    assert_eq!(forced["spec"]["replicas"], json!(1));
    assert!(entries(&forced)
        .iter()
        .all(|e| e["manager"] != "kubectl-edit"));
    // Two conflicts with an applier: kube's multi-line message.
    let other = fm
        .apply(
            &forced,
            &deployment(7, json!({"a": "9", "b": "1"})),
            "other",
            false,
            LATER,
        )
        .expect_err("two conflicts")
        .to_status();
    assert_eq!(
        other.message,
        "Apply failed with 2 conflicts: conflicts with \"mgr\":\n- .metadata.labels.a\n- .spec.replicas"
    );
    // Removing label b from the configuration removes it from the object.
    let pruned = fm
        .apply(
            &forced,
            &deployment(1, json!({"a": "1"})),
            "mgr",
            false,
            LATER,
        )
        .expect("apply without b");
    assert_eq!(pruned["metadata"]["labels"], json!({"a": "1"}));
    assert!(!fields_of(&pruned, "mgr", "Apply").contains("f:b"));
    // Re-applying the same configuration is a no-op: time untouched.
    let same = fm
        .apply(
            &pruned,
            &deployment(1, json!({"a": "1"})),
            "mgr",
            false,
            "2030-01-01T00:00:00Z",
        )
        .expect("no-op apply");
    assert_eq!(same, pruned);
}

#[test]
fn golden_two_appliers_share_a_field() {
    let fm = deployments();
    let first = fm
        .apply(
            &json!({}),
            &deployment(1, json!({"shared": "x", "mine": "1"})),
            "one",
            false,
            NOW,
        )
        .expect("one");
    // Same value: no conflict, both own `shared`.
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "n", "labels": {"shared": "x"}}});
    let second = fm.apply(&first, &config, "two", false, LATER).expect("two");
    assert!(fields_of(&second, "one", "Apply").contains("f:shared"));
    assert_eq!(
        fields_of(&second, "two", "Apply"),
        r#"{"f:metadata":{"f:labels":{"f:shared":{}}}}"#
    );
    // `one` stops applying both labels: `mine` goes, `shared` stays (owned by `two`).
    let mut without = deployment(1, json!({}));
    without["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("labels");
    let third = fm
        .apply(&second, &without, "one", false, LATER)
        .expect("one again");
    assert_eq!(third["metadata"]["labels"], json!({"shared": "x"}));
}

#[test]
fn manager_names_from_the_user_agent() {
    assert_eq!(manager_name(Some("mine"), Some("kubectl/v1.33")), "mine");
    assert_eq!(
        manager_name(None, Some("kubectl/v1.33.0 (linux/amd64)")),
        "kubectl"
    );
    assert_eq!(
        manager_name(Some(""), Some("OpenAPI-Generator/31.0.0/python")),
        "OpenAPI-Generator"
    );
    assert_eq!(manager_name(None, Some("a\u{1}b/c")), "ab");
    assert_eq!(manager_name(None, Some(&"x".repeat(300))).len(), 128);
    assert_eq!(manager_name(None, None), "");
}

#[test]
fn update_managers_are_capped_into_ancient_changes() {
    let fm = manager("", "v1", "ConfigMap");
    let mut object = json!({"metadata": {"name": "c"}, "data": {}});
    for i in 0..12 {
        let mut next = object.clone();
        next["data"][format!("k{i}")] = json!("v");
        fm.update(
            &object,
            &mut next,
            &format!("m{i:02}"),
            &format!("2026-01-01T00:00:{i:02}Z"),
        );
        object = next;
    }
    let list = entries(&object);
    assert_eq!(list.len(), MAX_UPDATE_MANAGERS);
    let ancient: Vec<&Value> = list
        .iter()
        .filter(|e| e["manager"] == "ancient-changes")
        .collect();
    assert_eq!(ancient.len(), 1, "{list:?}");
    // The three oldest (m00 with data itself, m01, m02) went into the bucket.
    let set = fields_v1::from_value(&ancient[0]["fieldsV1"]).expect("fields");
    assert_eq!(
        fields_v1::to_json_string(&set),
        r#"{"f:data":{"f:k0":{},"f:k1":{},"f:k2":{}}}"#
    );
    assert_eq!(ancient[0]["time"], json!("2026-01-01T00:00:02Z"));
    assert!(list
        .iter()
        .all(|e| e["manager"] != "m00" && e["manager"] != "m02"));
}

#[test]
fn subtract_in_place_is_the_difference() {
    use super::set::set_of;
    let f = PathElement::field;
    let a = set_of(&[
        &[f("spec"), f("replicas")],
        &[f("spec"), f("template"), f("x")],
        &[f("spec"), f("template"), f("y")],
        &[f("metadata")],
        &[f("metadata"), f("labels"), f("a")],
    ]);
    let b = set_of(&[
        &[f("spec"), f("template"), f("x")],
        &[f("spec"), f("template"), f("y")],
        &[f("metadata")],
        &[f("status"), f("replicas")],
    ]);
    for (left, right) in [(&a, &b), (&b, &a), (&a, &a)] {
        let mut out = left.clone();
        out.subtract(right);
        assert_eq!(out, left.difference(right));
    }
}
