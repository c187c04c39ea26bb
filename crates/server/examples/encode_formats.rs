//! Encoder benchmark: the same `serde_json::Value` objects encoded as JSON
//! (serde_json, what the per-version JSON cache does), Kubernetes protobuf
//! (`ferrokube::protobuf`, the per-version protobuf cache) and CBOR
//! (`ferrokube::cbor`), in one process, one thread.
//!
//! ```sh
//! cargo run --release -p ferrokube --example encode_formats -- [OBJECTS] [RUNS]
//! ```
//!
//! Two object sets: `served-pod.json` (the `ferrokube-bench` list Pod as the
//! server returns it, managedFields included) with distinct names, and the
//! every-field sample Pod of `protobuf::sample` (nesting bounded). Prints the
//! median time per set and format and protobuf's speed-up over JSON.

use std::time::{Duration, Instant};

use serde_json::Value;

const SERVED_POD: &str = include_str!("served-pod.json");

fn main() {
    let mut args = std::env::args().skip(1);
    let objects: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let served: Value = serde_json::from_str(SERVED_POD).expect("served-pod.json");
    let sample = ferrokube::protobuf::sample::sample_object("v1", "Pod").expect("sample Pod");
    for (label, template, count) in [
        ("typical pod", &served, objects),
        ("every-field pod", &sample, objects / 10),
    ] {
        let pods: Vec<Value> = (0..count)
            .map(|i| {
                let mut pod = template.clone();
                pod["metadata"]["name"] = Value::String(format!("bench-pod-{i}"));
                pod
            })
            .collect();
        let mut bytes = [0usize; 3];
        let json = time(runs, || {
            bytes[0] = pods
                .iter()
                .map(|pod| serde_json::to_vec(pod).map_or(0, |b| b.len()))
                .sum();
        });
        let protobuf = time(runs, || {
            bytes[1] = pods
                .iter()
                .map(|pod| ferrokube::protobuf::encode_message_of(pod).map_or(0, |b| b.len()))
                .sum();
        });
        let cbor = time(runs, || {
            bytes[2] = pods
                .iter()
                .map(|pod| ferrokube::cbor::encode(pod).len())
                .sum();
        });
        assert!(bytes[1] > 0, "{label}: protobuf encoding failed");
        println!("{label}: {count} objects, median (min) of {runs} runs");
        for (name, (took, min), size) in [
            ("json", json, bytes[0]),
            ("protobuf", protobuf, bytes[1]),
            ("cbor", cbor, bytes[2]),
        ] {
            println!(
                "  {name:<9} {:>9.2} ms ({:>9.2}) {size:>12} bytes  {:>5.2}x json time",
                took.as_secs_f64() * 1e3,
                min.as_secs_f64() * 1e3,
                took.as_secs_f64() / json.0.as_secs_f64()
            );
        }
        println!(
            "  protobuf speed-up over json: {:.2}x (minimums: {:.2}x)",
            json.0.as_secs_f64() / protobuf.0.as_secs_f64(),
            json.1.as_secs_f64() / protobuf.1.as_secs_f64()
        );
    }
}

/// Median and minimum of `runs` timed calls (the minimum is the least
/// disturbed by other load on a shared machine).
fn time(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    f(); // warm-up (schema parse, allocator)
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[times.len() / 2], times[0])
}
