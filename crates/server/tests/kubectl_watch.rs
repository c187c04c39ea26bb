//! `kubectl get configmaps -w` (kubectl 1.33 and 1.27), as a user runs it:
//! kubectl lists (a Table, or JSON with `-o json`), prints what it got, then
//! watches from the list's resourceVersion and prints every change. The test
//! runs kubectl as a child process, makes changes once the initial output is
//! there, reads stdout until the changes are printed, then kills kubectl.
//!
//! A real cluster's root-CA publisher adds `kube-root-ca.crt` to every
//! namespace, possibly while kubectl watches; its rows are ignored.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{kubectl_path, TestEnv};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{json, Value};

/// How long kubectl gets to print what is expected before the test gives up.
const OUTPUT_WAIT: Duration = Duration::from_secs(30);
const ROOT_CA: &str = "kube-root-ca.crt";

use ferrokube_testkit::per_version;

per_version!(
    watch_table,
    watch_table_with_events,
    watch_json,
    watch_json_with_events
);

/// A running `kubectl ... -w` whose stdout and stderr are collected as they come.
struct Watching {
    child: Child,
    out: Arc<Mutex<String>>,
    err: Arc<Mutex<String>>,
    args: Vec<String>,
    _cache: tempfile::TempDir,
}

fn collect(mut r: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let buf = Arc::new(Mutex::new(String::new()));
    let out = buf.clone();
    std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = r.read(&mut chunk) {
            if n == 0 {
                break;
            }
            out.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
    });
    buf
}

impl Watching {
    fn start(env: &TestEnv, version: &str, extra: &[&str]) -> Watching {
        let cache = tempfile::Builder::new()
            .prefix("kubectl-watch-cache-")
            .tempdir()
            .unwrap();
        let mut args: Vec<String> = vec!["get".into(), "configmaps".into(), "-n".into()];
        args.push(env.ns.clone());
        args.extend(extra.iter().map(|s| s.to_string()));
        let mut child = Command::new(kubectl_path(version))
            .arg("--kubeconfig")
            .arg(&env.kubeconfig)
            .arg("--cache-dir")
            .arg(cache.path())
            .args(&args)
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run kubectl.{version}: {e}"));
        let out = collect(child.stdout.take().unwrap());
        let err = collect(child.stderr.take().unwrap());
        Watching {
            child,
            out,
            err,
            args,
            _cache: cache,
        }
    }

    fn stdout(&self) -> String {
        self.out.lock().unwrap().clone()
    }

    /// Waits until `done(stdout)` holds; panics with both outputs if kubectl
    /// exits or nothing satisfying arrives within `OUTPUT_WAIT`.
    async fn wait_until(&mut self, what: &str, done: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + OUTPUT_WAIT;
        loop {
            if done(&self.stdout()) {
                return;
            }
            let exited = self.child.try_wait().unwrap();
            if exited.is_some() || Instant::now() > deadline {
                // Give the reader threads a moment to drain a dead child's pipes.
                tokio::time::sleep(Duration::from_millis(200)).await;
                if done(&self.stdout()) {
                    return;
                }
                panic!(
                    "kubectl {:?}: {what} never showed up ({}).\nstdout:\n{}\nstderr:\n{}",
                    self.args,
                    match exited {
                        Some(st) => format!("kubectl exited: {st}"),
                        None => format!("waited {OUTPUT_WAIT:?}"),
                    },
                    self.stdout(),
                    self.err.lock().unwrap()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops kubectl (it watches until killed) and returns its stdout.
    fn stop(mut self) -> (String, String) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(Duration::from_millis(100));
        let out = self.stdout();
        let err = self.err.lock().unwrap().clone();
        (out, err)
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn cm(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    let data: BTreeMap<String, String> = data
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data})).unwrap()
}

/// The changes every scenario makes once kubectl printed the initial state:
/// create `b` (1 key), replace `a` with 2 keys, delete `b`. Returns the
/// objects the server answered (b created, a replaced).
async fn changes(api: &Api<ConfigMap>) -> (ConfigMap, ConfigMap) {
    let b = api
        .create(&PostParams::default(), &cm("b", &[("k", "1")]))
        .await
        .unwrap();
    let mut a = api.get("a").await.unwrap();
    a.data = Some(
        [("k", "1"), ("l", "2")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    let a = api.replace("a", &PostParams::default(), &a).await.unwrap();
    api.delete("b", &DeleteParams::default()).await.unwrap();
    (b, a)
}

async fn setup(v: &str, prefix: &str) -> (TestEnv, Api<ConfigMap>, ConfigMap) {
    let env = TestEnv::new(&format!("{prefix}-{}", v.replace('.', ""))).await;
    let api: Api<ConfigMap> = env.api();
    let a = api
        .create(&PostParams::default(), &cm("a", &[("k", "1")]))
        .await
        .unwrap();
    (env, api, a)
}

/// Each non-empty stdout line as its words, without `kube-root-ca.crt` rows.
/// The complete lines of kubectl's table output, as words (a line still
/// being written has no newline yet and is left out).
fn rows(out: &str) -> Vec<Vec<String>> {
    out.split_inclusive('\n')
        .filter(|l| l.ends_with('\n') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|words| !words.iter().any(|w| w == ROOT_CA))
        .collect()
}

/// kube's `duration.HumanDuration`: "0s", "42s", "5m3s", "2h", "3d" …
fn is_age(s: &str) -> bool {
    let mut rest = s;
    let mut parts = 0;
    while !rest.is_empty() {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        let unit = rest[digits..].chars().next();
        if !matches!(unit, Some('s' | 'm' | 'h' | 'd' | 'y')) {
            return false;
        }
        rest = &rest[digits + 1..];
        parts += 1;
    }
    (1..=2).contains(&parts)
}

async fn watch_table(v: &str) {
    let (env, api, _) = setup(v, "kw-tab").await;
    let mut kubectl = Watching::start(&env, v, &["-w"]);
    kubectl
        .wait_until("the initial row of a", |out| {
            rows(out)
                .iter()
                .any(|r| r.first().map(String::as_str) == Some("a"))
        })
        .await;
    changes(&api).await;
    kubectl
        .wait_until("5 lines (header, a, b, a, b)", |out| rows(out).len() >= 5)
        .await;
    let (out, err) = kubectl.stop();
    let got = rows(&out);
    assert_eq!(
        got.len(),
        5,
        "one header line and one row per state:\n{out}\nstderr:\n{err}"
    );
    assert_eq!(got[0], ["NAME", "DATA", "AGE"], "{out}");
    let cells: Vec<[&str; 2]> = got[1..]
        .iter()
        .map(|r| {
            assert_eq!(r.len(), 3, "NAME DATA AGE row: {r:?}\n{out}");
            assert!(is_age(&r[2]), "AGE {:?} in {r:?}", r[2]);
            [r[0].as_str(), r[1].as_str()]
        })
        .collect();
    assert_eq!(
        cells,
        [["a", "1"], ["b", "1"], ["a", "2"], ["b", "1"]],
        "the list row of a, then b created, a replaced, b deleted (its last state):\n{out}"
    );
}

async fn watch_table_with_events(v: &str) {
    let (env, api, _) = setup(v, "kw-ev").await;
    let mut kubectl = Watching::start(&env, v, &["-w", "--output-watch-events"]);
    kubectl
        .wait_until("the initial ADDED row of a", |out| {
            rows(out)
                .iter()
                .any(|r| r.get(1).map(String::as_str) == Some("a"))
        })
        .await;
    changes(&api).await;
    kubectl
        .wait_until("5 lines (header and 4 events)", |out| rows(out).len() >= 5)
        .await;
    let (out, err) = kubectl.stop();
    let got = rows(&out);
    assert_eq!(got.len(), 5, "{out}\nstderr:\n{err}");
    assert_eq!(got[0], ["EVENT", "NAME", "DATA", "AGE"], "{out}");
    let cells: Vec<[&str; 3]> = got[1..]
        .iter()
        .map(|r| {
            assert_eq!(r.len(), 4, "EVENT NAME DATA AGE row: {r:?}\n{out}");
            assert!(is_age(&r[3]), "AGE {:?} in {r:?}", r[3]);
            [r[0].as_str(), r[1].as_str(), r[2].as_str()]
        })
        .collect();
    assert_eq!(
        cells,
        [
            ["ADDED", "a", "1"],
            ["ADDED", "b", "1"],
            ["MODIFIED", "a", "2"],
            ["DELETED", "b", "1"],
        ],
        "{out}"
    );
}

/// The JSON values kubectl printed, one after another (kube-root-ca.crt left out).
fn json_values(out: &str) -> Vec<Value> {
    let mut values = Vec::new();
    for value in serde_json::Deserializer::from_str(out).into_iter::<Value>() {
        match value {
            Ok(v) => values.push(v),
            // The last value may still be incomplete while kubectl writes it.
            Err(e) if e.is_eof() => break,
            Err(e) => panic!("kubectl printed something that is not JSON ({e}):\n{out}"),
        }
    }
    values
        .into_iter()
        .filter(|v| v["metadata"]["name"] != ROOT_CA && v["object"]["metadata"]["name"] != ROOT_CA)
        .collect()
}

/// What `kubectl get -o json` shows of an object: kubectl hides managedFields.
fn shown(obj: &ConfigMap) -> Value {
    let mut v = serde_json::to_value(obj).unwrap();
    v["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    v
}

/// How kubectl prints an object: `-o json` hides managedFields, but with
/// `--output-watch-events` it prints a WatchEvent, which its
/// OmitManagedFieldsPrinter leaves alone (not a metav1.Object).
#[derive(Clone, Copy, PartialEq)]
enum ManagedFields {
    Hidden,
    Shown,
}

fn check_json_objects(
    objects: &[Value],
    (a0, b, a1): (&ConfigMap, &ConfigMap, &ConfigMap),
    managed_fields: ManagedFields,
    out: &str,
) {
    let shown = |obj: &ConfigMap| match managed_fields {
        ManagedFields::Hidden => shown(obj),
        ManagedFields::Shown => serde_json::to_value(obj).unwrap(),
    };
    let typed: Vec<Value> = objects
        .iter()
        .map(|o| {
            assert_eq!(
                o["metadata"].get("managedFields").is_some(),
                managed_fields == ManagedFields::Shown,
                "managedFields in what kubectl printed: {o}"
            );
            // Through the typed model, as the server's answers above were.
            serde_json::to_value(serde_json::from_value::<ConfigMap>(o.clone()).unwrap()).unwrap()
        })
        .collect();
    assert_eq!(typed.len(), 4, "{out}");
    assert_eq!(typed[0], shown(a0), "the listed a");
    assert_eq!(typed[1], shown(b), "b as created");
    assert_eq!(typed[2], shown(a1), "a as replaced");
    // The deletion: b's last state at the deletion's resourceVersion.
    let mut deleted = shown(b);
    let rv = typed[3]["metadata"]["resourceVersion"].clone();
    deleted["metadata"]["resourceVersion"] = rv.clone();
    assert_eq!(typed[3], deleted, "b as deleted");
    let rv: i64 = rv.as_str().unwrap().parse().unwrap();
    let a1_rv: i64 = a1
        .metadata
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        rv > a1_rv,
        "the deletion (rv {rv}) comes after a's replace (rv {a1_rv})"
    );
}

async fn watch_json(v: &str) {
    let (env, api, a0) = setup(v, "kw-json").await;
    let mut kubectl = Watching::start(&env, v, &["-w", "-o", "json"]);
    kubectl
        .wait_until("the listed a", |out| !json_values(out).is_empty())
        .await;
    let (b, a1) = changes(&api).await;
    kubectl
        .wait_until("4 objects", |out| json_values(out).len() >= 4)
        .await;
    let (out, _) = kubectl.stop();
    let values = json_values(&out);
    for value in &values {
        assert_eq!(
            (value["apiVersion"].as_str(), value["kind"].as_str()),
            (Some("v1"), Some("ConfigMap")),
            "each printed object is a ConfigMap (list items too): {value}"
        );
    }
    check_json_objects(&values, (&a0, &b, &a1), ManagedFields::Hidden, &out);
}

async fn watch_json_with_events(v: &str) {
    let (env, api, a0) = setup(v, "kw-jev").await;
    let mut kubectl = Watching::start(&env, v, &["-w", "-o", "json", "--output-watch-events"]);
    kubectl
        .wait_until("the listed a", |out| !json_values(out).is_empty())
        .await;
    let (b, a1) = changes(&api).await;
    kubectl
        .wait_until("4 events", |out| json_values(out).len() >= 4)
        .await;
    let (out, _) = kubectl.stop();
    let values = json_values(&out);
    let types: Vec<&str> = values
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("<none>"))
        .collect();
    assert_eq!(types, ["ADDED", "ADDED", "MODIFIED", "DELETED"], "{out}");
    for e in &values {
        assert_eq!(
            e.as_object().map(|m| m.len()),
            Some(2),
            "a WatchEvent has exactly type and object: {e}"
        );
    }
    let objects: Vec<Value> = values.iter().map(|e| e["object"].clone()).collect();
    check_json_objects(&objects, (&a0, &b, &a1), ManagedFields::Shown, &out);
}
