//! Randomized sequences of applies and updates by several managers on a
//! Deployment (granular maps, list-maps, sets, atomic lists, the reset
//! status), a ConfigMap and a custom resource (deduced throughout). The
//! fast paths of [`super`] (the skipped prune, FieldsV1 kept undecoded)
//! must give exactly what the full algorithms give; every step is checked.
//!
//! `FIELDMANAGER_CORPUS=path` also writes every step's output to `path`
//! (or, when it exists, compares with it): a byte-for-byte check of a
//! change against the outputs of an earlier build.

use serde_json::{json, Map, Value};

use super::*;
use crate::openapi::OpenApi;
use crate::registry::builtin_resources;
use crate::rng::Rng;

fn openapi() -> &'static OpenApi {
    static OPENAPI: std::sync::OnceLock<OpenApi> = std::sync::OnceLock::new();
    OPENAPI.get_or_init(|| OpenApi::new(builtin_resources()))
}

fn string_map(rng: &mut Rng, keys: &[&str], values: &[&str]) -> Value {
    let mut map = Map::new();
    for key in keys {
        if rng.chance(40) {
            map.insert(key.to_string(), json!(rng.pick(values)));
        }
    }
    Value::Object(map)
}

fn container(rng: &mut Rng, name: &str) -> Value {
    let mut c = Map::new();
    c.insert("name".into(), json!(name));
    if rng.chance(80) {
        c.insert("image".into(), json!(rng.pick(&["i:1", "i:2", "j:1"])));
    }
    if rng.chance(40) {
        let mut ports = Vec::new();
        for port in [80, 81] {
            if rng.chance(50) {
                let mut p = json!({"containerPort": port});
                match rng.below(3) {
                    0 => p["protocol"] = json!("TCP"),
                    1 => p["protocol"] = json!("UDP"),
                    _ => {}
                }
                if rng.chance(30) {
                    p["name"] = json!(rng.pick(&["http", "alt"]));
                }
                ports.push(p);
            }
        }
        c.insert("ports".into(), Value::Array(ports));
    }
    if rng.chance(30) {
        let mut env = Vec::new();
        for name in ["A", "B"] {
            if rng.chance(60) {
                env.push(json!({"name": name, "value": rng.pick(&["1", "2"])}));
            }
        }
        c.insert("env".into(), Value::Array(env));
    }
    if rng.chance(25) {
        let args: Vec<Value> = (0..rng.below(3)).map(|i| json!(format!("a{i}"))).collect();
        c.insert("args".into(), Value::Array(args));
    }
    if rng.chance(30) {
        let resources = match rng.below(3) {
            0 => json!({}),
            1 => json!({"requests": {}}),
            _ => json!({"requests": string_map(rng, &["cpu", "memory"], &["1", "2"])}),
        };
        c.insert("resources".into(), resources);
    }
    if rng.chance(10) {
        c.insert("terminationMessagePath".into(), json!("/dev/log"));
    }
    Value::Object(c)
}

fn deployment(rng: &mut Rng, with_status: bool) -> Value {
    let mut metadata = json!({"name": "d", "namespace": "n"});
    if rng.chance(60) {
        metadata["labels"] = string_map(rng, &["a", "b", "c"], &["1", "2"]);
    }
    if rng.chance(25) {
        metadata["annotations"] = string_map(rng, &["x", "y"], &["1", "2"]);
    }
    if rng.chance(20) {
        let f: Vec<Value> = ["f1", "f2", "f3"]
            .iter()
            .filter(|_| rng.chance(50))
            .map(|f| json!(f))
            .collect();
        metadata["finalizers"] = Value::Array(f);
    }
    let mut spec = Map::new();
    if rng.chance(50) {
        spec.insert("replicas".into(), json!(rng.below(4)));
    }
    if rng.chance(30) {
        spec.insert(
            "selector".into(),
            json!({"matchLabels": string_map(rng, &["app", "tier"], &["x", "y"])}),
        );
    }
    if rng.chance(15) {
        spec.insert("paused".into(), Value::Null);
    }
    if rng.chance(80) {
        let mut names = vec!["a", "b", "c", "d"];
        let mut containers = Vec::new();
        for _ in 0..rng.below(4) {
            let name = names.remove(rng.below(names.len()));
            containers.push(container(rng, name));
        }
        let mut template = json!({"spec": {"containers": containers}});
        if rng.chance(40) {
            template["metadata"] = json!({"labels": string_map(rng, &["app"], &["x", "y"])});
        }
        if rng.chance(15) {
            template["spec"]["nodeSelector"] = string_map(rng, &["zone"], &["1"]);
        }
        spec.insert("template".into(), template);
    }
    let mut object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata});
    if !spec.is_empty() || rng.chance(50) {
        object["spec"] = Value::Object(spec);
    }
    if with_status && rng.chance(40) {
        object["status"] = json!({"replicas": rng.below(3), "conditions": [{"type": "Available", "status": rng.pick(&["True", "False"])}]});
    }
    object
}

fn deduced_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 2 { 4 } else { 7 }) {
        0 => json!(rng.pick(&["x", "y"])),
        1 => json!(rng.below(3)),
        2 => Value::Null,
        3 => json!([rng.pick(&["p", "q"])]),
        4 => json!({}),
        _ => {
            let mut map = Map::new();
            for key in ["k", "l", "m"] {
                if rng.chance(50) {
                    map.insert(key.into(), deduced_value(rng, depth + 1));
                }
            }
            Value::Object(map)
        }
    }
}

fn custom(rng: &mut Rng) -> Value {
    let mut object =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    if rng.chance(80) {
        object["spec"] = deduced_value(rng, 0);
    }
    if rng.chance(30) {
        object["metadata"]["labels"] = string_map(rng, &["a", "b"], &["1"]);
    }
    object
}

fn configmap(rng: &mut Rng) -> Value {
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}});
    if rng.chance(80) {
        object["data"] = string_map(rng, &["k1", "k2", "k3"], &["v1", "v2"]);
    }
    if rng.chance(30) {
        object["metadata"]["labels"] = string_map(rng, &["a", "b"], &["1"]);
    }
    object
}

#[derive(Clone, Copy)]
enum Kind {
    Deployment,
    ConfigMap,
    Custom,
}

fn field_manager(kind: Kind, subresource: &str) -> FieldManager<'static> {
    let (schema, api_version) = match kind {
        Kind::Deployment => (
            Schema::for_kind(openapi(), "apps", "v1", "Deployment"),
            "apps/v1",
        ),
        Kind::ConfigMap => (Schema::for_kind(openapi(), "", "v1", "ConfigMap"), "v1"),
        Kind::Custom => (Schema::deduced_throughout(), "example.com/v1"),
    };
    let mut reset = Set::new();
    if matches!(kind, Kind::Deployment) {
        reset.insert(&[PathElement::field("status")]);
    }
    FieldManager {
        schema,
        api_version: api_version.into(),
        subresource: subresource.into(),
        reset,
        other_versions: None,
    }
}

fn random_object(rng: &mut Rng, kind: Kind, with_status: bool) -> Value {
    match kind {
        Kind::Deployment => deployment(rng, with_status),
        Kind::ConfigMap => configmap(rng),
        Kind::Custom => custom(rng),
    }
}

/// A small edit of `live` (an update's body): one field changed, added or
/// removed, sometimes with the managedFields sent back, reset or broken.
fn edit(rng: &mut Rng, kind: Kind, live: &Value) -> Value {
    let mut new = if rng.chance(25) {
        random_object(rng, kind, true)
    } else {
        let mut new = live.clone();
        let fresh = random_object(rng, kind, true);
        if let (Some(map), Some(fresh)) = (new.as_object_mut(), fresh.as_object()) {
            for (key, value) in fresh {
                if key != "metadata" && rng.chance(40) {
                    map.insert(key.clone(), value.clone());
                }
            }
        }
        if rng.chance(30) {
            if let Some(labels) = fresh.pointer("/metadata/labels") {
                new["metadata"]["labels"] = labels.clone();
            }
        }
        new
    };
    let managed = live.pointer("/metadata/managedFields").cloned();
    match rng.below(10) {
        0 => new["metadata"]["managedFields"] = json!([]),
        1 => new["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Bogus"}]),
        2 | 3 => {
            if let Some(managed) = managed {
                new["metadata"]["managedFields"] = managed;
            }
        }
        _ => {
            if let Some(metadata) = new.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.remove("managedFields");
            }
        }
    }
    new
}

/// `object` with every FieldsV1 spelled so that it decodes to the same set
/// but is not canonical (an element type decoding skips): a write then
/// decodes every entry, as before raw FieldsV1 objects were kept.
fn uglify(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(Value::Array(entries)) = object.pointer_mut("/metadata/managedFields") {
        for entry in entries {
            if let Some(Value::Object(fields)) = entry.get_mut("fieldsV1") {
                fields.insert("z:skipped".into(), json!({}));
            }
        }
    }
    object
}

/// Runs `steps` random writes on one object and returns every step's output.
fn run_sequence(seed: u64, steps: usize) -> Vec<String> {
    let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let kind = *rng.pick(&[
        Kind::Deployment,
        Kind::Deployment,
        Kind::ConfigMap,
        Kind::Custom,
    ]);
    let mut live = json!({});
    let mut out = Vec::new();
    let mut configs: std::collections::HashMap<&str, Value> = Default::default();
    for step in 0..steps {
        let now = format!("2026-01-01T00:{:02}:{:02}Z", step / 60, step % 60);
        let status = matches!(kind, Kind::Deployment) && rng.chance(15);
        let fm = field_manager(kind, if status { "status" } else { "" });
        if rng.chance(55) {
            let manager = *rng.pick(&["a1", "a2", "kubectl"]);
            let force = rng.chance(40);
            let mut fm = fm;
            // Often the manager's previous configuration, slightly edited
            // (what the prune shortcut is for); otherwise a fresh one.
            let config = match configs.get(manager) {
                Some(previous) if rng.chance(60) => {
                    let mut config: Value = previous.clone();
                    let fresh = random_object(&mut rng, kind, true);
                    if let (Some(map), Some(fresh)) = (config.as_object_mut(), fresh.as_object()) {
                        for (key, value) in fresh {
                            if key != "metadata" && rng.chance(25) {
                                map.insert(key.clone(), value.clone());
                            }
                        }
                    }
                    config
                }
                _ => random_object(&mut rng, kind, true),
            };
            configs.insert(manager, config.clone());
            if status {
                if let Some(map) = config.as_object() {
                    for key in map.keys().filter(|key| *key != "status") {
                        fm.reset.insert(&[PathElement::Field(key.clone())]);
                    }
                }
            }
            let (api_version, kind_name) = (
                config["apiVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                config["kind"].as_str().unwrap_or_default().to_string(),
            );
            if let Err(error) = check_applied(&fm.schema, &api_version, &kind_name, &config) {
                out.push(format!("{step} check {error}"));
                continue;
            }
            let result = fm.apply_with_last_applied(&live, &config, manager, force, &now);
            let decoded = fm.apply_with_last_applied(&uglify(&live), &config, manager, force, &now);
            assert_eq!(
                result, decoded,
                "apply with every FieldsV1 decoded, step {step}"
            );
            match result {
                Ok(object) => {
                    out.push(format!("{step} apply {manager} {object}"));
                    live = object;
                }
                Err(error) => out.push(format!(
                    "{step} apply {manager} error {}",
                    error.to_status().to_json()
                )),
            }
        } else {
            let manager = *rng.pick(&["u1", "u2"]);
            let mut new = edit(&mut rng, kind, &live);
            let mut decoded = new.clone();
            fm.update(&uglify(&live), &mut decoded, manager, &now);
            fm.update(&live, &mut new, manager, &now);
            assert_eq!(
                new, decoded,
                "update with every FieldsV1 decoded, step {step}"
            );
            out.push(format!("{step} update {manager} {new}"));
            live = new;
        }
    }
    out
}

#[test]
fn random_writes_match_the_reference_outputs() {
    let mut lines = Vec::new();
    for seed in 0..400 {
        lines.extend(run_sequence(seed, 30));
    }
    let Ok(path) = std::env::var("FIELDMANAGER_CORPUS") else {
        return;
    };
    match std::fs::read_to_string(&path) {
        Ok(expected) => {
            let expected: Vec<&str> = expected.lines().collect();
            assert_eq!(expected.len(), lines.len(), "number of steps");
            for (want, got) in expected.iter().zip(&lines) {
                assert_eq!(*want, got.as_str());
            }
        }
        Err(_) => std::fs::write(&path, lines.join("\n") + "\n").expect("write the corpus"),
    }
}
