//! The fault and abuse harnesses, short, so they cannot rot: `faults` for a
//! few seconds on SQLite and on a 3-member etcd (at least one SIGKILL of
//! the server each), and `abuse` for a few seconds. Only the verdicts are
//! asserted — no acknowledged write lost, watch streams complete and in
//! order, the server alive and answering — never a time.
//!
//! Needs a built ferrokube (`cargo build -p ferrokube`, or
//! `$FERROKUBE_BIN`) and, for etcd, Debian's etcd-server (or `$FERROKUBE_ETCD`).

use std::process::Command;

use serde_json::Value;

mod support;
use support::ferrokube_bin;

/// Runs the bench with `args` plus `--json --quiet`: the result, and
/// whether it exited 0.
fn bench(args: &[&str]) -> (Value, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_ferrokube-bench"))
        .args(args)
        .args(["--json", "--quiet"])
        .env_remove("KUBECONFIG")
        .output()
        .expect("run ferrokube-bench");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "ferrokube-bench {args:?}: no JSON report ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let result = report["results"][0].clone();
    (result, out.status.success())
}

fn faults(backend: &str) {
    let bin = ferrokube_bin();
    let (result, ok) = bench(&[
        "faults",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--storage-backend",
        backend,
        "--duration",
        "6",
        "--writers",
        "4",
        "--seed",
        "18",
    ]);
    let f = &result["faults"];
    let verdict = &f["verdict"];
    assert_eq!(verdict["lost_writes"], 0, "{result:#}");
    assert_eq!(verdict["missing_events"], 0, "{result:#}");
    assert_eq!(verdict["out_of_order"], 0, "{result:#}");
    assert_eq!(verdict["unexplained"], 0, "{result:#}");
    assert_eq!(verdict["watchers_incomplete"], 0, "{result:#}");
    assert_eq!(f["passed"], true, "{result:#}");
    assert!(ok, "exited non-zero: {result:#}");
    // The run did something: writes acknowledged, a kill survived,
    // watchers that saw events.
    assert!(
        verdict["acked_writes"].as_u64().unwrap_or(0) > 0,
        "{result:#}"
    );
    let kills =
        f["server_kills"].as_u64().unwrap_or(0) + f["etcd_member_kills"].as_u64().unwrap_or(0);
    assert!(kills >= 1, "{result:#}");
    let watchers = f["watchers"].as_array().expect("watchers");
    assert_eq!(watchers.len(), 4, "{result:#}");
    assert!(
        watchers
            .iter()
            .all(|w| w["events"].as_u64().unwrap_or(0) > 0),
        "{result:#}"
    );
}

#[test]
fn faults_on_sqlite_lose_nothing() {
    faults("sqlite");
}

#[test]
fn faults_on_etcd_lose_nothing() {
    faults("etcd");
}

#[test]
fn abuse_leaves_the_server_answering() {
    let bin = ferrokube_bin();
    let (result, ok) = bench(&[
        "abuse",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--duration",
        "4",
        "--abusers",
        "20",
    ]);
    let a = &result["abuse"];
    assert_eq!(a["alive_after"], true, "{result:#}");
    assert_eq!(a["normal_errors"], serde_json::json!({}), "{result:#}");
    assert_eq!(a["passed"], true, "{result:#}");
    assert!(ok, "exited non-zero: {result:#}");
    // Each kind of abuse happened and was answered.
    assert!(a["alone"]["count"].as_u64().unwrap_or(0) > 0, "{result:#}");
    assert!(a["abused"]["count"].as_u64().unwrap_or(0) > 0, "{result:#}");
    for kind in ["slow", "half_open_tcp", "half_open_tls"] {
        assert!(
            a[kind]["opened"].as_u64().unwrap_or(0) > 0,
            "{kind}: {result:#}"
        );
    }
    for flood in ["unauthenticated", "oversized_authenticated"] {
        let answered: u64 = a[flood]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| k.starts_with("HTTP 4"))
                    .filter_map(|(_, v)| v.as_u64())
                    .sum()
            })
            .unwrap_or(0);
        assert!(answered > 0, "{flood}: no 4xx: {result:#}");
    }
}
