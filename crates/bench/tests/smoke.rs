//! Every scenario for about a second with tiny sizes (watch: 20 watchers
//! for half a second; list: 120 Pods), against ferrokubes the tool starts
//! (and one it is pointed at by kubeconfig). No timing assertions: only
//! that results come out, sane and without errors.
//!
//! Needs a built ferrokube: `$FERROKUBE_BIN`, else `ferrokube` next to
//! this test's own profile directory (`target/<profile>/ferrokube`). It is
//! never built from here: `cargo build -p ferrokube` first.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

mod support;
use support::ferrokube_bin;

/// Runs the bench with `args` plus `--json --quiet`, returns the report.
fn bench(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_ferrokube-bench"))
        .args(args)
        .args(["--json", "--quiet"])
        .env_remove("KUBECONFIG")
        .output()
        .expect("run ferrokube-bench");
    assert!(
        out.status.success(),
        "ferrokube-bench {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn results(report: &Value) -> &Vec<Value> {
    report["results"].as_array().expect("results array")
}

/// A load result has requests, no errors, and ordered percentiles.
fn assert_sane_load(result: &Value) {
    let label = &result["label"];
    let load = &result["load"];
    let requests = load["requests"].as_u64().expect("requests");
    assert!(requests > 0, "{label}: no requests: {result}");
    assert_eq!(
        load["errors"].as_u64(),
        Some(0),
        "{label}: errors: {result}"
    );
    assert!(load["throughput_per_s"].as_f64().expect("throughput") > 0.0);
    let latency = &load["latency"];
    let ms = |k: &str| {
        latency[k]
            .as_f64()
            .unwrap_or_else(|| panic!("{k} in {latency}"))
    };
    assert!(ms("min_ms") > 0.0, "{label}: {latency}");
    assert!(ms("min_ms") <= ms("p50_ms"), "{label}: {latency}");
    assert!(ms("p50_ms") <= ms("p99_ms"), "{label}: {latency}");
    assert!(ms("p99_ms") <= ms("p999_ms"), "{label}: {latency}");
    assert!(ms("p999_ms") <= ms("max_ms"), "{label}: {latency}");
    assert_eq!(latency["count"].as_u64(), Some(requests));
    assert!(load["response_bytes"].as_u64().expect("response_bytes") > 0);
    assert_eq!(load["protocol"], "h2", "{label}");
}

const SHORT: &[&str] = &["--duration", "0.5", "--warmup", "0.2", "--concurrency", "4"];

#[test]
fn ready_reports_time_and_memory() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "ready",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--runs",
        "2",
        "--idle-ms",
        "20",
    ]);
    let result = &results(&report)[0];
    assert_eq!(result["scenario"], "ready");
    let ready = &result["ready"];
    assert_eq!(ready["runs"], 2);
    assert_eq!(ready["samples"].as_array().map(Vec::len), Some(2));
    let min = ready["ready_ms"]["min"].as_f64().expect("min");
    let max = ready["ready_ms"]["max"].as_f64().expect("max");
    assert!(min > 0.0 && min <= max, "{ready}");
    assert!(
        ready["listening_ms"]["min"].as_f64().expect("listening") <= max,
        "{ready}"
    );
    if cfg!(target_os = "linux") {
        assert!(
            ready["rss_mib"]["median"].as_f64().expect("rss") > 0.0,
            "{ready}"
        );
    }
}

#[test]
fn create_with_fsync_on_and_off() {
    let bin = ferrokube_bin();
    let args = [
        &[
            "create",
            "--start-ferrokube",
            bin.to_str().expect("utf8 path"),
            "--fsync",
            "both",
            "--size",
            "300",
        ][..],
        SHORT,
    ]
    .concat();
    let report = bench(&args);
    let results = results(&report);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["label"], "create fsync=on");
    assert_eq!(results[1]["label"], "create fsync=off");
    assert_eq!(
        results[1]["target"]["server_args"],
        serde_json::json!(["--fsync=false"])
    );
    for result in results {
        assert_sane_load(result);
        assert_eq!(result["load"]["object_bytes"], 300);
        assert!(
            result["server_memory"]["rss_kib"].as_u64().is_some() || !cfg!(target_os = "linux")
        );
    }
}

#[test]
fn get_with_ceiling_and_ratio() {
    let bin = ferrokube_bin();
    let args = [
        &[
            "get",
            "--start-ferrokube",
            bin.to_str().expect("utf8 path"),
            "--server-arg=--storage-backend=memory",
            "--with-ceiling",
            "--size",
            "256",
            "--ceiling-size",
            "512",
        ][..],
        SHORT,
    ]
    .concat();
    let report = bench(&args);
    let results = results(&report);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["scenario"], "ceiling");
    assert_eq!(results[0]["load"]["response_bytes"], 512);
    assert_eq!(results[1]["scenario"], "get");
    for result in results {
        assert_sane_load(result);
    }
    let ratio = &report["ratios"][0];
    assert_eq!(ratio["name"], "get / ceiling");
    let value = ratio["value"].as_f64().expect("ratio");
    assert!(value > 0.0 && value.is_finite(), "{ratio}");
}

#[test]
fn ceiling_alone_with_a_request_count() {
    let report = bench(&[
        "ceiling",
        "--requests",
        "200",
        "--concurrency",
        "8",
        "--http1",
    ]);
    let result = &results(&report)[0];
    assert_eq!(result["load"]["requests"], 200);
    assert_eq!(result["load"]["errors"], 0);
    assert_eq!(result["load"]["protocol"], "http/1.1");
    assert_eq!(result["load"]["connections"], 0);
}

/// `--rate` paces the clients: they never send ahead of their schedules,
/// so the measured window holds at most rate × window (plus one request a
/// client) where a closed loop sends thousands.
#[test]
fn ceiling_paced_by_rate() {
    let report = bench(&[
        "ceiling",
        "--rate",
        "200",
        "--duration",
        "0.5",
        "--warmup",
        "0.2",
        "--concurrency",
        "4",
    ]);
    let result = &results(&report)[0];
    assert_sane_load(result);
    let requests = result["load"]["requests"].as_u64().expect("requests");
    assert!(
        requests <= 200 / 2 + 4,
        "{requests} requests in 0.5 s at 200/s"
    );
}

#[test]
fn watch_delivers_every_update_to_every_watcher() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "watch",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--server-arg=--fsync=false",
        "--watchers",
        "20",
        "--streams-per-connection",
        "8",
        "--writes-per-second",
        "20",
        "--duration",
        "0.5",
        "--size",
        "300",
        "--idle-ms",
        "20",
    ]);
    let result = &results(&report)[0];
    assert_eq!(result["scenario"], "watch");
    let watch = &result["watch"];
    assert_eq!(watch["watchers"], 20, "{watch}");
    assert_eq!(watch["opened"], 20, "{watch}");
    assert_eq!(watch["protocol"], "h2", "{watch}");
    assert_eq!(watch["watch_connections"], 3, "{watch}");
    let writes = &watch["writes"];
    assert_eq!(writes["sent"], 10, "{writes}");
    assert_eq!(writes["ok"], 10, "{writes}");
    assert_eq!(writes["failed"], 0, "{writes}");
    let events = &watch["events"];
    assert_eq!(events["expected"], 200, "{events}");
    assert_eq!(events["received"], 200, "{events}");
    assert_eq!(events["missing"], 0, "{events}");
    assert_eq!(events["duplicates"], 0, "{events}");
    assert_eq!(events["streams_ended_early"], 0, "{events}");
    for key in ["delivery_since_send", "delivery_since_response"] {
        let latency = &watch[key];
        assert_eq!(latency["count"], 200, "{key}: {latency}");
        let ms = |k: &str| latency[k].as_f64().expect("ms");
        assert!(ms("p50_ms") <= ms("p99_ms") && ms("p99_ms") <= ms("max_ms"));
    }
    assert!(
        watch["delivery_since_send"]["min_ms"]
            .as_f64()
            .expect("min")
            > 0.0
    );
    if cfg!(target_os = "linux") {
        let memory = &watch["memory"];
        assert!(
            memory["before_kib"].as_u64().expect("before") > 0,
            "{memory}"
        );
        assert!(memory["idle_kib"].as_u64().expect("idle") > 0, "{memory}");
        assert!(memory["per_idle_watcher_bytes"].is_number(), "{memory}");
        assert!(memory["run_max_kib"].as_u64().expect("max") > 0, "{memory}");
        let cpu = &watch["server_cpu"];
        assert!(cpu["seconds"].as_f64().expect("cpu s") >= 0.0, "{cpu}");
        assert!(cpu["per_event_us"].is_number(), "{cpu}");
    }
}

#[test]
fn list_unpaginated_and_chunked() {
    let bin = ferrokube_bin();
    let path = bin.to_str().expect("utf8 path");
    let report = bench(&[
        "list",
        "--start-ferrokube",
        path,
        "--server-arg=--fsync=false",
        "--objects",
        "120",
        "--page-size",
        "50",
        "--runs",
        "2",
        "--concurrency",
        "8",
    ]);
    let result = &results(&report)[0];
    assert_eq!(result["scenario"], "list");
    let list = &result["list"];
    assert_eq!(list["kind"], "Pod", "{list}");
    assert_eq!(list["setup"]["created"], 120, "{list}");
    assert_eq!(list["content_type"], "application/json", "{list}");
    let (whole, chunked) = (&list["unpaginated"], &list["chunked"]);
    assert_eq!(whole["items"], 120, "{whole}");
    assert_eq!(whole["pages"], 1, "{whole}");
    assert_eq!(chunked["items"], 120, "{chunked}");
    assert_eq!(chunked["pages"], 3, "{chunked}");
    assert_eq!(chunked["limit"], 50, "{chunked}");
    assert_eq!(whole["samples_ms"].as_array().map(Vec::len), Some(2));
    assert!(
        whole["bytes"].as_u64().expect("bytes") > 120 * 1000,
        "{whole}"
    );
    assert!(list["chunked_to_unpaginated"].as_f64().expect("ratio") > 0.0);

    // ConfigMaps of --size bytes, and the human output.
    let out = Command::new(env!("CARGO_BIN_EXE_ferrokube-bench"))
        .args([
            "list",
            "--start-ferrokube",
            path,
            "--server-arg=--storage-backend=memory",
            "--object-kind",
            "configmap",
            "--size",
            "300",
            "--objects",
            "30",
            "--page-size",
            "10",
            "--runs",
            "1",
            "-q",
        ])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("30 ConfigMaps") && text.contains("chunked limit=10"),
        "{text}"
    );
}

/// The `--kubeconfig` path: a ferrokube started here, measured as if it
/// were any server, with the human output.
#[test]
fn any_server_by_kubeconfig() {
    let bin = ferrokube_bin();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let started = runtime.block_on(async {
        let mut started = ferrokube_bench::launch::Started::spawn(
            &bin,
            &["--storage-backend=memory".to_string()],
            Duration::from_secs(60),
        )
        .await
        .expect("start ferrokube");
        started
            .wait_ready(Duration::from_secs(60))
            .await
            .expect("ready");
        started
    });
    let kubeconfig = started.kubeconfig_path.to_str().expect("utf8").to_string();
    let report = bench(&[
        "get",
        "--kubeconfig",
        &kubeconfig,
        "--requests",
        "100",
        "--concurrency",
        "4",
        "--namespace",
        "smoke",
    ]);
    let result = &results(&report)[0];
    assert_eq!(result["target"]["source"], "kubeconfig");
    assert_eq!(result["load"]["requests"], 100);
    assert_sane_load(result);
    assert!(result.get("server_memory").is_none());

    let out = Command::new(env!("CARGO_BIN_EXE_ferrokube-bench"))
        .args([
            "create",
            "--kubeconfig",
            &kubeconfig,
            "--requests",
            "50",
            "-c",
            "2",
            "-q",
        ])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("req/s") && text.contains("create"), "{text}");
    drop(started);
}

/// Each result is either measured and sane, or says why not (e.g. 415
/// before server-side apply exists).
fn assert_sane_or_unsupported(result: &Value, expect: &str) {
    match result.get("unsupported").and_then(Value::as_str) {
        Some(why) => assert!(why.contains(expect), "{result}"),
        None => assert_sane_load(result),
    }
}

#[test]
fn update_and_merge_patch() {
    let bin = ferrokube_bin();
    let path = bin.to_str().expect("utf8 path");
    let update = bench(
        &[
            &[
                "update",
                "--start-ferrokube",
                path,
                "--server-arg=--fsync=false",
                "--size",
                "400",
            ][..],
            SHORT,
        ]
        .concat(),
    );
    let result = &results(&update)[0];
    assert_eq!(result["scenario"], "update");
    assert_sane_load(result);
    assert!(result["load"]["distribution"]
        .as_array()
        .is_some_and(|d| !d.is_empty()));

    let patch = bench(
        &[
            &[
                "patch",
                "--start-ferrokube",
                path,
                "--server-arg=--storage-backend=memory",
                "--type",
                "merge",
            ][..],
            SHORT,
        ]
        .concat(),
    );
    let result = &results(&patch)[0];
    assert_eq!(result["label"], "patch merge configmap");
    assert_sane_load(result);
}

#[test]
fn apply_patch_is_measured_or_reported_unsupported() {
    let bin = ferrokube_bin();
    let report = bench(
        &[
            &[
                "patch",
                "--start-ferrokube",
                bin.to_str().expect("utf8 path"),
                "--server-arg=--storage-backend=memory",
                "--type",
                "apply",
                "--duration",
                "0.3",
            ][..],
            &["--warmup", "0.1", "--concurrency", "2"][..],
        ]
        .concat(),
    );
    let results = results(&report);
    let labels: Vec<&str> = results.iter().filter_map(|r| r["label"].as_str()).collect();
    assert_eq!(
        labels,
        [
            "patch apply configmap",
            "patch apply deployment-50",
            "patch apply deployment status"
        ]
    );
    for result in results {
        assert_sane_or_unsupported(result, "415");
    }
}

#[test]
fn delete_removes_every_seeded_object() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "delete",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--server-arg=--storage-backend=memory",
        "--objects",
        "60",
        "--concurrency",
        "4",
        "--size",
        "300",
    ]);
    let result = &results(&report)[0];
    assert_eq!(result["scenario"], "delete");
    assert_eq!(result["load"]["requests"], 60, "{result}");
    assert_sane_load(result);
}

#[test]
fn list_formats_json_protobuf_cbor() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "list-formats",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--server-arg=--storage-backend=memory",
        "--objects",
        "30",
        "--runs",
        "2",
        "--concurrency",
        "4",
    ]);
    let result = &results(&report)[0];
    let formats = result["formats"]["formats"].as_array().expect("formats");
    let accepts: Vec<&str> = formats
        .iter()
        .filter_map(|f| f["accept"].as_str())
        .collect();
    assert_eq!(
        accepts,
        [
            "application/json",
            "application/vnd.kubernetes.protobuf",
            "application/cbor"
        ]
    );
    let json = &formats[0];
    assert_eq!(json["items"], 30, "{json}");
    assert_eq!(json["time_to_json"], 1.0, "{json}");
    assert!(json["bytes"].as_u64().expect("bytes") > 30 * 1000, "{json}");
    for format in formats {
        if format.get("unsupported").is_none() {
            assert!(format["bytes"].as_u64().expect("bytes") > 0, "{format}");
            assert_eq!(format["samples_ms"].as_array().map(Vec::len), Some(2));
        }
    }
}

#[test]
fn memory_at_two_counts() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "memory",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--server-arg=--fsync=false",
        "--stored",
        "40,80",
        "--concurrency",
        "4",
        "--idle-ms",
        "20",
    ]);
    let memory = &results(&report)[0]["memory"];
    let points = memory["points"].as_array().expect("points");
    assert_eq!(points.len(), 2, "{memory}");
    assert_eq!(points[0]["objects"], 40);
    assert_eq!(points[1]["objects"], 80);
    assert_eq!(points[1]["raw_bytes"], 80 * 1024);
    if cfg!(target_os = "linux") {
        assert!(memory["empty_rss_kib"].as_u64().expect("empty") > 0);
        assert!(points[1]["rss_to_raw"].as_f64().expect("ratio") > 0.0);
        assert!(points[1]["stored_json_bytes"].as_u64().expect("stored") >= 1024);
    }
}

#[test]
fn ready_after_restart_with_stored_objects() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "ready",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--server-arg=--fsync=false",
        "--stored",
        "0,50",
        "--runs",
        "1",
        "--idle-ms",
        "10",
        "--concurrency",
        "4",
    ]);
    let results = results(&report);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["label"], "ready");
    assert_eq!(results[0]["ready"]["stored"], 0);
    assert_eq!(results[1]["label"], "ready stored=50");
    assert_eq!(results[1]["ready"]["stored"], 50);
    assert!(
        results[1]["ready"]["ready_ms"]["median"]
            .as_f64()
            .expect("ms")
            > 0.0
    );
}

#[test]
fn mix_of_informers_creates_and_status_updates() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "mix",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--server-arg=--fsync=false",
        "--informers",
        "2",
        "--concurrency",
        "4",
        "--duration",
        "0.6",
        "--warmup",
        "0.1",
    ]);
    let mix = &results(&report)[0]["mix"];
    assert_eq!(mix["informers"], 2, "{mix}");
    assert_eq!(mix["streams"], 4, "{mix}");
    assert!(mix["watch_errors"].is_null(), "{mix}");
    for op in ["creates", "status_updates"] {
        assert!(mix[op]["requests"].as_u64().expect("requests") > 0, "{mix}");
        assert_eq!(mix[op]["errors"], 0, "{mix}");
    }
    assert!(
        mix["delivery"]["count"].as_u64().expect("count") > 0,
        "{mix}"
    );
}

/// Both ceilings next to a write scenario (etcd's only where an etcd
/// binary is installed), the ratios, and the SVG charts.
#[test]
fn write_ceilings_ratios_and_charts() {
    let bin = ferrokube_bin();
    let charts = std::env::temp_dir().join(format!("ferrokube-bench-svg-{}", std::process::id()));
    let report = bench(
        &[
            &[
                "create",
                "--start-ferrokube",
                bin.to_str().expect("utf8 path"),
                "--with-ceiling",
                "--size",
                "300",
                "--svg",
                charts.to_str().expect("utf8"),
            ][..],
            SHORT,
        ]
        .concat(),
    );
    let results = results(&report);
    let labels: Vec<&str> = results.iter().filter_map(|r| r["label"].as_str()).collect();
    assert_eq!(labels, ["ceiling", "etcd put ceiling", "create"]);
    assert_sane_load(&results[0]);
    assert_sane_load(&results[2]);
    let etcd = &results[1];
    let names: Vec<&str> = report["ratios"]
        .as_array()
        .expect("ratios")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(names.contains(&"create / ceiling"), "{names:?}");
    assert!(
        names.contains(&"create p50 latency / ceiling p50"),
        "{names:?}"
    );
    if etcd.get("unsupported").is_none() {
        assert!(
            etcd["load"]["requests"].as_u64().expect("puts") > 0,
            "{etcd}"
        );
        assert!(names.contains(&"create / etcd put ceiling"), "{names:?}");
    }
    let latency = std::fs::read_to_string(charts.join("latency.svg")).expect("latency.svg");
    assert!(latency.starts_with("<svg") && latency.contains("<polyline"));
    assert!(charts.join("create.svg").is_file());
    let _ = std::fs::remove_dir_all(&charts);
}

#[test]
fn crd_reports_one_sample_per_run() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "crd",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--server-arg=--storage-backend=memory",
        "--runs",
        "3",
    ]);
    let result = &results(&report)[0];
    assert_eq!(result["scenario"], "crd");
    let samples = result["crd"]["established_ms"].as_array().expect("samples");
    assert_eq!(samples.len(), 3, "{result}");
    let values: Vec<f64> = samples.iter().filter_map(Value::as_f64).collect();
    assert!(
        values.windows(2).all(|pair| pair[0] <= pair[1]),
        "{values:?}"
    );
    assert!(values.iter().all(|ms| *ms > 0.0), "{values:?}");
}

#[test]
fn crd_create_reports_both_rates() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "crd-create",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--server-arg=--storage-backend=memory",
        "--requests",
        "40",
        "--concurrency",
        "2",
    ]);
    let all = results(&report);
    assert_eq!(all.len(), 2, "{report}");
    for result in all {
        assert_eq!(result["scenario"], "crd-create");
        assert_eq!(result["load"]["requests"], 40, "{result}");
        assert_eq!(result["load"]["errors"], 0, "{result}");
    }
    assert!(all[1]["label"]
        .as_str()
        .is_some_and(|label| label.contains("widgets (30 fields)")));
}

#[test]
fn ready_with_crds_serves_them_after_the_restart() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "ready",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--server-arg=--fsync=false",
        "--crds",
        "3",
        "--crd-fields",
        "20",
        "--runs",
        "1",
        "--idle-ms",
        "10",
    ]);
    let result = &results(&report)[0];
    assert_eq!(result["label"], "ready crds=3");
    assert_eq!(result["ready"]["runs"], 1, "{result}");
}

#[test]
fn rbac_compares_both_modes() {
    let bin = ferrokube_bin();
    let report = bench(&[
        "rbac",
        "--start-ferrokube",
        bin.to_str().expect("utf8 path"),
        "--server-arg=--storage-backend=memory",
        "--roles",
        "20",
        "--runs",
        "1",
        "--requests",
        "40",
        "--concurrency",
        "2",
    ]);
    let all = results(&report);
    assert_eq!(all.len(), 4, "{report}");
    for result in all {
        assert_eq!(result["scenario"], "rbac");
        assert_eq!(result["load"]["requests"], 40, "{result}");
        assert_eq!(result["load"]["errors"], 0, "{result}");
    }
    let labels: Vec<&str> = all.iter().filter_map(|r| r["label"].as_str()).collect();
    assert_eq!(
        labels,
        [
            "rbac AlwaysAllow #1 get",
            "rbac AlwaysAllow #1 create",
            "rbac RBAC #1 get",
            "rbac RBAC #1 create"
        ]
    );
    let ratios = report["ratios"].as_array().expect("ratios");
    assert_eq!(ratios.len(), 2, "{report}");
}

#[test]
fn in_process_starts_stops_snapshots_and_restores() {
    let report = bench(&[
        "in-process",
        "--servers",
        "3",
        "--objects",
        "20",
        "--runs",
        "2",
    ]);
    let result = &results(&report)[0];
    assert_eq!(result["scenario"], "in-process");
    let measured = &result["in_process"];
    assert_eq!(measured["cycles"], 3, "{result}");
    assert_eq!(measured["objects"], 20, "{result}");
    for field in ["start_ms", "stop_ms", "snapshot_us", "restore_us"] {
        let median = measured[field]["median"].as_f64();
        assert!(median.is_some_and(|value| value > 0.0), "{field}: {result}");
    }
    assert!(
        measured["first_start_ms"]
            .as_f64()
            .is_some_and(|ms| ms > 0.0),
        "{result}"
    );
    assert!(
        measured["threads_after_last"]
            .as_u64()
            .is_some_and(|threads| threads > 0),
        "{result}"
    );
}
