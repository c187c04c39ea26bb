//! Results: one JSON document (`--json`) or human tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::cpu::CpuUsage;
use crate::launch::Memory;
use crate::runner::{ErrorTally, LoadOutcome};
use crate::stats::{round3, LatencySummary, MinMedMax, Quantile};

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub tool: String,
    pub version: String,
    /// Cores this process could use.
    pub cores: usize,
    pub results: Vec<ScenarioResult>,
    pub ratios: Vec<Ratio>,
}

/// Where the requests went.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Target {
    /// `kubeconfig`, `started` (a ferrokube this tool started) or
    /// `in-process` (the ceiling server).
    pub source: String,
    pub server: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubeconfig: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_args: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ScenarioResult {
    pub scenario: String,
    /// The scenario and its variant, e.g. `create fsync=off`.
    pub label: String,
    pub target: Target,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<ReadyResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list: Option<ListResult>,
    /// The started server's memory after the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_memory: Option<Memory>,
    /// Why the server could not be measured this way (e.g. HTTP 415 for a
    /// patch type it does not implement yet); the other fields are empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::scenarios::memory::MemoryResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formats: Option<crate::scenarios::formats::FormatsResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mix: Option<crate::scenarios::mix::MixResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<crate::scenarios::lifecycle::LifecycleResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crd: Option<crate::scenarios::crd::CrdResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_process: Option<crate::scenarios::in_process::InProcessResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<crate::scenarios::faults::FaultsResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abuse: Option<crate::scenarios::abuse::AbuseResult>,
}

impl ScenarioResult {
    /// A verdict scenario (faults, abuse) that failed.
    pub fn failed(&self) -> bool {
        self.faults.as_ref().is_some_and(|f| !f.passed)
            || self.abuse.as_ref().is_some_and(|a| !a.passed)
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct LoadResult {
    pub concurrency: usize,
    pub protocol: String,
    /// Shared HTTP/2 connections (0: one HTTP/1.1 connection per worker).
    pub connections: usize,
    /// Request body size (creates) or stored object size (gets).
    pub object_bytes: usize,
    /// Response body size of one successful answer.
    pub response_bytes: usize,
    /// The measured window, seconds.
    pub duration_s: f64,
    pub warmup_s: f64,
    /// Successful requests in the window.
    pub requests: u64,
    /// Failed requests, warm-up included.
    pub errors: u64,
    pub throughput_per_s: f64,
    pub latency: LatencySummary,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_kind: BTreeMap<String, ErrorTally>,
    /// CPU use over the window, in cores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUsage>,
    /// Latency at fixed percentiles, for charts (`--svg`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub distribution: Vec<Quantile>,
}

impl LoadResult {
    pub fn from_outcome(
        outcome: &LoadOutcome,
        concurrency: usize,
        protocol: &str,
        connections: usize,
        object_bytes: usize,
        response_bytes: usize,
        warmup_s: f64,
    ) -> LoadResult {
        LoadResult {
            concurrency,
            protocol: protocol.to_string(),
            connections,
            object_bytes,
            response_bytes,
            duration_s: round3(outcome.elapsed.as_secs_f64()),
            warmup_s,
            requests: outcome.latency.count(),
            errors: outcome.errors,
            throughput_per_s: (outcome.throughput() * 10.0).round() / 10.0,
            latency: outcome.latency.summary(),
            errors_by_kind: outcome.error_kinds.clone(),
            cpu: outcome.cpu,
            distribution: outcome.latency.distribution(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReadySample {
    pub ready_ms: f64,
    pub listening_ms: f64,
    pub rss_kib: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReadyResult {
    pub runs: usize,
    /// Spawn to the first 200 from `/readyz`.
    pub ready_ms: MinMedMax,
    /// Spawn to the "serving on" line.
    pub listening_ms: MinMedMax,
    /// VmRSS after ready and `idle_ms` of idling, MiB.
    pub rss_mib: Option<MinMedMax>,
    pub idle_ms: u64,
    /// Objects in the store at each start (pre-loaded).
    pub stored: usize,
    pub samples: Vec<ReadySample>,
}

/// The writer of a `watch` run.
#[derive(Debug, Clone, Serialize)]
pub struct WriteStats {
    /// Updates sent.
    pub sent: u64,
    /// Updates answered 200: each must reach every watcher.
    pub ok: u64,
    pub failed: u64,
    /// Send to response, successful updates.
    pub latency: LatencySummary,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_kind: BTreeMap<String, ErrorTally>,
}

/// What the watchers received.
#[derive(Debug, Clone, Serialize)]
pub struct EventStats {
    /// Successful updates × watchers that opened.
    pub expected: u64,
    /// Events of this run's updates, first copies only.
    pub received: u64,
    /// Expected events that never arrived.
    pub missing: u64,
    /// Watchers with at least one missing event.
    pub watchers_with_gaps: usize,
    /// A second event for the same update on the same watcher.
    pub duplicates: u64,
    /// Events of updates whose request failed on the client side (they may
    /// still have been applied).
    pub unexpected: u64,
    pub bookmarks: u64,
    /// ERROR events (e.g. 410 Expired): the stream ends after one.
    pub error_events: u64,
    /// Other events: objects this run did not write.
    pub other: u64,
    /// Streams that ended (or failed) before the run was over.
    pub streams_ended_early: u64,
    /// Bytes of watch stream received, all watchers.
    pub stream_bytes: u64,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_kind: BTreeMap<String, ErrorTally>,
}

/// The started server's resident memory around a `watch` run, KiB.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct WatchMemory {
    /// After setup, before the watchers' connections were opened.
    pub before_kib: Option<u64>,
    /// With every watcher open and idle, after --idle-ms.
    pub idle_kib: Option<u64>,
    /// (idle − before) / watchers, in bytes; includes each watcher's share
    /// of its connection.
    pub per_idle_watcher_bytes: Option<f64>,
    /// The highest reading, every 250 ms, from the first write to the end.
    pub run_max_kib: Option<u64>,
    /// After the last event arrived.
    pub after_kib: Option<u64>,
}

/// The started server's CPU time while the writer ran (first write until
/// every event arrived), from /proc/PID/stat.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ServerCpu {
    pub seconds: f64,
    pub window_s: f64,
    /// Server CPU per successful update, microseconds.
    pub per_write_us: f64,
    /// Server CPU per delivered event, microseconds.
    pub per_event_us: f64,
    /// Server cores used while the watchers sat idle (--idle-ms).
    pub idle_cores: f64,
    /// Write-family system calls the server made in the window
    /// (`/proc/PID/io` syscw), when readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_syscalls: Option<u64>,
    /// `write_syscalls` per delivered event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_syscalls_per_event: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WatchResult {
    /// Watchers asked for.
    pub watchers: usize,
    /// Watchers whose stream opened (200 and headers).
    pub opened: usize,
    pub protocol: String,
    /// Connections the watch streams share (0: one HTTP/1.1 connection
    /// per watcher).
    pub watch_connections: usize,
    /// Time to open every watch (all response heads in), ms.
    pub open_ms: f64,
    /// Bytes of one update's body.
    pub object_bytes: usize,
    /// Updates per second asked for.
    pub writes_per_second: f64,
    /// Seconds of writing asked for.
    pub duration_s: f64,
    /// First send to the last event received (or the drain deadline), s.
    pub window_s: f64,
    pub writes: WriteStats,
    pub events: EventStats,
    /// Receive time − the update's send time, per (watcher, event).
    pub delivery_since_send: LatencySummary,
    /// Receive time − the time the update's response arrived, per
    /// (watcher, event); events that came first count as 0.
    pub delivery_since_response: LatencySummary,
    /// Events that arrived before their update's response did.
    pub before_response: u64,
    pub memory: WatchMemory,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cpu: Option<ServerCpu>,
    /// CPU over the window, in cores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUsage>,
}

/// One way of listing the whole collection, over all runs.
#[derive(Debug, Clone, Serialize)]
pub struct ListTiming {
    /// `limit` of each page (`None`: one unpaginated LIST).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Requests per list.
    pub pages: usize,
    /// Items in one whole list.
    pub items: usize,
    /// Response bytes of one whole list (all pages).
    pub bytes: u64,
    /// Time from the first request to the last byte of the last page, ms.
    pub total_ms: MinMedMax,
    /// The part of it spent waiting for response heads (the server builds
    /// each page before its head goes out), summed over pages, ms.
    pub headers_ms: MinMedMax,
    pub samples_ms: Vec<f64>,
}

/// Setup of a `list` run.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ListSetup {
    pub created: u64,
    pub seconds: f64,
    pub per_s: f64,
    pub concurrency: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ListResult {
    /// `Pod` or `ConfigMap`.
    pub kind: String,
    pub objects: usize,
    /// Bytes of one create's body.
    pub object_bytes: usize,
    /// Response bytes per item of the unpaginated list (what the server
    /// stores and sends, defaults included).
    pub bytes_per_item: f64,
    pub accept: String,
    /// The Content-Type of the answers.
    pub content_type: String,
    pub runs: usize,
    pub setup: ListSetup,
    /// The started server's RSS after the creates, before any list, KiB
    /// (the RSS after the lists is the result's `server_memory`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_after_setup_kib: Option<u64>,
    pub unpaginated: ListTiming,
    pub chunked: ListTiming,
    /// Median chunked total / median unpaginated total.
    pub chunked_to_unpaginated: f64,
    /// CPU over the measured lists, in cores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUsage>,
}

/// `numerator` as a fraction of `denominator` (throughputs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratio {
    pub name: String,
    pub numerator: String,
    pub denominator: String,
    pub value: f64,
}

/// `a / b`, or `None` when `b` is not positive.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0 && a.is_finite() && b.is_finite()).then(|| a / b)
}

/// `12345678` → `12,345,678`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A table whose first `left` columns are left-aligned and the rest (the
/// numbers) right-aligned.
pub fn table(headers: &[&str], rows: &[Vec<String>], left: usize) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (i, cell) in cells.enumerate() {
            let width = widths.get(i).copied().unwrap_or(0);
            let sep = if i == 0 { "" } else { "  " };
            if i < left {
                let _ = write!(text, "{sep}{cell:<width$}");
            } else {
                let _ = write!(text, "{sep}{cell:>width$}");
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&mut headers.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The human rendering of `report`.
pub fn human(report: &Report) -> String {
    let mut out = format!(
        "{} {} on {} core{}\n",
        report.tool,
        report.version,
        report.cores,
        if report.cores == 1 { "" } else { "s" }
    );
    let loads: Vec<&ScenarioResult> = report.results.iter().filter(|r| r.load.is_some()).collect();
    if !loads.is_empty() {
        let headers = [
            "scenario",
            "target",
            "clients",
            "proto",
            "requests",
            "errors",
            "req/s",
            "p50 ms",
            "p99 ms",
            "p99.9 ms",
            "max ms",
            "RSS MiB",
            "CPU client/server/other",
        ];
        let rows: Vec<Vec<String>> = loads
            .iter()
            .filter_map(|r| {
                let l = r.load.as_ref()?;
                Some(vec![
                    r.label.clone(),
                    r.target.source.clone(),
                    l.concurrency.to_string(),
                    if l.connections > 0 {
                        format!("{}x{}", l.protocol, l.connections)
                    } else {
                        l.protocol.clone()
                    },
                    thousands(l.requests),
                    thousands(l.errors),
                    thousands(l.throughput_per_s.round() as u64),
                    ms(l.latency.p50_ms),
                    ms(l.latency.p99_ms),
                    ms(l.latency.p999_ms),
                    ms(l.latency.max_ms),
                    r.server_memory
                        .map(|m| format!("{:.1}", m.rss_kib as f64 / 1024.0))
                        .unwrap_or_else(|| "-".into()),
                    l.cpu
                        .map(|c| {
                            format!(
                                "{:.2}/{}/{:.2}",
                                c.client_cores,
                                c.server_cores
                                    .map_or("-".to_string(), |s| format!("{s:.2}")),
                                c.other_cores
                            )
                        })
                        .unwrap_or_else(|| "-".into()),
                ])
            })
            .collect();
        out.push('\n');
        out.push_str(&table(&headers, &rows, 2));
        for r in &loads {
            if let Some(l) = &r.load {
                for (kind, t) in &l.errors_by_kind {
                    let _ = writeln!(
                        out,
                        "  {}: {} × {kind}, e.g. {}",
                        r.label, t.count, t.sample
                    );
                }
            }
        }
    }
    for r in report.results.iter().filter(|r| r.ready.is_some()) {
        let Some(ready) = &r.ready else { continue };
        let mmm = |m: &MinMedMax, f: &dyn Fn(f64) -> String| vec![f(m.min), f(m.median), f(m.max)];
        let mut rows = vec![
            [
                vec!["time to ready (ms)".to_string()],
                mmm(&ready.ready_ms, &ms),
            ]
            .concat(),
            [
                vec!["time to listening (ms)".to_string()],
                mmm(&ready.listening_ms, &ms),
            ]
            .concat(),
        ];
        if let Some(rss) = &ready.rss_mib {
            rows.push(
                [
                    vec![format!("RSS after ready +{} ms (MiB)", ready.idle_ms)],
                    mmm(rss, &|v| format!("{v:.1}")),
                ]
                .concat(),
            );
        }
        let stored = if ready.stored > 0 {
            format!(", {} objects stored", thousands(ready.stored as u64))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "\n{} ({} runs{stored}, {})",
            r.label, ready.runs, r.target.server
        );
        out.push_str(&table(&["", "min", "median", "max"], &rows, 1));
    }
    for r in &report.results {
        if let Some(watch) = &r.watch {
            human_watch(&mut out, r, watch);
        }
        if let Some(list) = &r.list {
            human_list(&mut out, r, list);
        }
    }
    for r in &report.results {
        if let Some(why) = &r.unsupported {
            let _ = writeln!(out, "\n{}: not measured: {why}", r.label);
        }
        if let Some(memory) = &r.memory {
            human_memory(&mut out, r, memory);
        }
        if let Some(formats) = &r.formats {
            human_formats(&mut out, r, formats);
        }
        if let Some(mix) = &r.mix {
            human_mix(&mut out, r, mix);
        }
        if let Some(crd) = &r.crd {
            crate::scenarios::crd::human(&mut out, r, crd);
        }
        if let Some(in_process) = &r.in_process {
            crate::scenarios::in_process::human(&mut out, r, in_process);
        }
        if let Some(lifecycle) = &r.lifecycle {
            crate::scenarios::lifecycle::human(&mut out, r, lifecycle);
        }
    }
    for r in &report.results {
        if let Some(f) = &r.faults {
            crate::scenarios::faults::human(&mut out, r, f);
        }
        if let Some(a) = &r.abuse {
            crate::scenarios::abuse::human(&mut out, r, a);
        }
    }
    for ratio in &report.ratios {
        if ratio.name.contains("latency") {
            let _ = writeln!(
                out,
                "\n{}: {:.2}× ({} / {})",
                ratio.name, ratio.value, ratio.numerator, ratio.denominator
            );
        } else {
            let _ = writeln!(
                out,
                "\n{}: {:.1}% ({} / {})",
                ratio.name,
                ratio.value * 100.0,
                ratio.numerator,
                ratio.denominator
            );
        }
    }
    out
}

/// `--svg DIR`: the charts of `report`.
pub fn svg_files(
    report: &Report,
    dir: &std::path::Path,
) -> std::io::Result<Vec<std::path::PathBuf>> {
    crate::svg::write_charts(report, dir)
}

fn human_memory(out: &mut String, r: &ScenarioResult, m: &crate::scenarios::memory::MemoryResult) {
    let _ = writeln!(
        out,
        "\n{} ({} B ConfigMaps; empty server {:.1} MiB, {})",
        r.label,
        m.object_bytes,
        m.empty_rss_kib as f64 / 1024.0,
        r.target.server
    );
    let rows: Vec<Vec<String>> = m
        .points
        .iter()
        .map(|p| {
            vec![
                thousands(p.objects),
                format!("{:.1}", p.raw_bytes as f64 / 1048576.0),
                format!("{:.1}", p.rss_kib as f64 / 1024.0),
                format!("{:.1}", p.hwm_kib as f64 / 1024.0),
                format!("{:.0}", p.per_object_bytes),
                format!("{:.2}", p.rss_to_raw),
                format!("{:.2}", p.growth_to_raw),
                p.stored_json_bytes.to_string(),
                thousands(p.fill_per_s as u64),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "objects",
            "raw MiB",
            "RSS MiB",
            "peak MiB",
            "B/object",
            "RSS/raw",
            "growth/raw",
            "stored JSON B",
            "fill/s",
        ],
        &rows,
        0,
    ));
}

fn human_formats(
    out: &mut String,
    r: &ScenarioResult,
    f: &crate::scenarios::formats::FormatsResult,
) {
    let _ = writeln!(
        out,
        "\n{} ({} {}s, {} runs each, {})",
        r.label,
        thousands(f.objects as u64),
        f.kind,
        f.runs,
        r.target.server
    );
    let rows: Vec<Vec<String>> = f
        .formats
        .iter()
        .map(|t| match &t.unsupported {
            Some(_) => vec![
                t.accept.clone(),
                "not offered (below)".into(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ],
            None => vec![
                t.accept.clone(),
                t.items.map_or("-".into(), |n| thousands(n as u64)),
                thousands(t.bytes),
                ms(t.total_ms.median),
                ms(t.head_ms.median),
                t.server_ms.map_or("-".into(), ms),
                t.time_to_json.map_or("-".into(), |v| format!("{v:.2}")),
                t.bytes_to_json.map_or("-".into(), |v| format!("{v:.2}")),
            ],
        })
        .collect();
    out.push_str(&table(
        &[
            "accept",
            "items",
            "bytes",
            "full body ms (median)",
            "head ms",
            "server ms (mean)",
            "time/JSON",
            "bytes/JSON",
        ],
        &rows,
        1,
    ));
    for t in &f.formats {
        if let Some(why) = &t.unsupported {
            let _ = writeln!(out, "  {}: {why}", t.accept);
        }
    }
}

fn human_mix(out: &mut String, r: &ScenarioResult, m: &crate::scenarios::mix::MixResult) {
    let _ = writeln!(
        out,
        "\n{} ({} informers, {} watch streams open at the end, {} Pods; initial list median {} ms; {})",
        r.label,
        m.informers,
        m.streams,
        m.pods,
        ms(m.initial_list_ms.median),
        r.target.server
    );
    let op = |name: &str, l: &LoadResult| {
        let mut row = latency_row(name, &l.latency);
        row.insert(2, thousands(l.throughput_per_s.round() as u64));
        row.insert(3, thousands(l.errors));
        row
    };
    let mut delivery = latency_row("watch delivery", &m.delivery);
    delivery.insert(2, "-".into());
    delivery.insert(3, "-".into());
    let rows = vec![
        op("create ConfigMap", &m.creates),
        op("patch Pod status", &m.status_updates),
        delivery,
    ];
    out.push_str(&table(
        &[
            "", "count", "ops/s", "errors", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms",
        ],
        &rows,
        1,
    ));
    let _ = writeln!(
        out,
        "  {} events with a send time, {} bookmarks",
        thousands(m.events),
        thousands(m.bookmarks)
    );
    for e in &m.watch_errors {
        let _ = writeln!(out, "  {} × {}", e.count, e.sample);
    }
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or("n/a".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

fn cpu_text(cpu: Option<CpuUsage>) -> String {
    cpu.map_or("-".into(), |c| {
        format!(
            "{:.2}/{}/{:.2}",
            c.client_cores,
            c.server_cores
                .map_or("n/a".to_string(), |s| format!("{s:.2}")),
            c.other_cores
        )
    })
}

fn latency_row(name: &str, l: &LatencySummary) -> Vec<String> {
    vec![
        name.to_string(),
        thousands(l.count),
        ms(l.p50_ms),
        ms(l.p90_ms),
        ms(l.p99_ms),
        ms(l.p999_ms),
        ms(l.max_ms),
    ]
}

fn human_watch(out: &mut String, r: &ScenarioResult, w: &WatchResult) {
    let proto = if w.watch_connections > 0 {
        format!("{}x{}", w.protocol, w.watch_connections)
    } else {
        w.protocol.clone()
    };
    let _ = writeln!(
        out,
        "\n{} ({} watchers over {proto}, {} updates/s for {} s of {} B ConfigMaps, {})",
        r.label,
        thousands(w.watchers as u64),
        w.writes_per_second,
        w.duration_s,
        w.object_bytes,
        r.target.server
    );
    let rows = vec![
        latency_row("delivery since send", &w.delivery_since_send),
        latency_row("delivery since response", &w.delivery_since_response),
        latency_row("update (send to response)", &w.writes.latency),
    ];
    out.push_str(&table(
        &[
            "", "count", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms",
        ],
        &rows,
        1,
    ));
    let e = &w.events;
    let _ = writeln!(
        out,
        "opened       {} of {} watchers in {} ms",
        thousands(w.opened as u64),
        thousands(w.watchers as u64),
        ms(w.open_ms)
    );
    let _ = writeln!(
        out,
        "updates      {} sent, {} ok, {} failed",
        thousands(w.writes.sent),
        thousands(w.writes.ok),
        thousands(w.writes.failed)
    );
    let _ = writeln!(
        out,
        "events       {} expected, {} received, {} missing ({} watchers with gaps), {} duplicate, {} unexpected, {} bookmarks, {} ERROR, {} other, {} streams ended early; {} before their update's response",
        thousands(e.expected),
        thousands(e.received),
        thousands(e.missing),
        thousands(e.watchers_with_gaps as u64),
        thousands(e.duplicates),
        thousands(e.unexpected),
        thousands(e.bookmarks),
        thousands(e.error_events),
        thousands(e.other),
        thousands(e.streams_ended_early),
        thousands(w.before_response)
    );
    let m = &w.memory;
    let _ = writeln!(
        out,
        "server RSS   {} before the watchers, {} with them idle ({} per idle watcher), {} max during the run, {} after",
        mib(m.before_kib),
        mib(m.idle_kib),
        m.per_idle_watcher_bytes
            .map_or("n/a".into(), |b| format!("{:.1} KiB", b / 1024.0)),
        mib(m.run_max_kib),
        mib(m.after_kib)
    );
    let _ = writeln!(
        out,
        "server CPU   {}",
        w.server_cpu.map_or("n/a".into(), |c| format!(
            "{:.2} s in {:.1} s: {:.1} µs per update, {:.2} µs per delivered event; {:.2} cores with the watchers idle{}",
            c.seconds,
            c.window_s,
            c.per_write_us,
            c.per_event_us,
            c.idle_cores,
            match (c.write_syscalls, c.write_syscalls_per_event) {
                (Some(n), Some(per)) => format!(
                    "; {} write syscalls ({per:.2} per delivered event)",
                    thousands(n)
                ),
                _ => String::new(),
            }
        ))
    );
    let _ = writeln!(out, "CPU client/server/other  {} cores", cpu_text(w.cpu));
    for (kind, t) in w.writes.errors_by_kind.iter().chain(&e.errors_by_kind) {
        let _ = writeln!(
            out,
            "  {}: {} × {kind}, e.g. {}",
            r.label, t.count, t.sample
        );
    }
}

fn human_list(out: &mut String, r: &ScenarioResult, l: &ListResult) {
    let _ = writeln!(
        out,
        "\n{} ({} {}s, {:.0} B each as listed, {} runs, Accept {} → {}, {})",
        r.label,
        thousands(l.objects as u64),
        l.kind,
        l.bytes_per_item,
        l.runs,
        l.accept,
        l.content_type,
        r.target.server
    );
    let row = |name: String, t: &ListTiming| {
        vec![
            name,
            ms(t.total_ms.min),
            ms(t.total_ms.median),
            ms(t.total_ms.max),
            ms(t.headers_ms.median),
            thousands(t.pages as u64),
            thousands(t.items as u64),
            thousands(t.bytes),
        ]
    };
    let rows = vec![
        row("unpaginated".into(), &l.unpaginated),
        row(
            format!("chunked limit={}", l.chunked.limit.unwrap_or(0)),
            &l.chunked,
        ),
    ];
    out.push_str(&table(
        &[
            "",
            "min ms",
            "median ms",
            "max ms",
            "to heads ms",
            "pages",
            "items",
            "bytes",
        ],
        &rows,
        1,
    ));
    let _ = writeln!(
        out,
        "chunked / unpaginated: {:.2}× (medians)",
        l.chunked_to_unpaginated
    );
    let _ = writeln!(
        out,
        "setup        {} creates in {:.1} s ({}/s, {} clients)",
        thousands(l.setup.created),
        l.setup.seconds,
        thousands(l.setup.per_s.round() as u64),
        l.setup.concurrency
    );
    let _ = writeln!(
        out,
        "server RSS   {} after the creates, {} after the lists",
        mib(l.rss_after_setup_kib),
        mib(r.server_memory.map(|m| m.rss_kib))
    );
    let _ = writeln!(
        out,
        "CPU client/server/other  {} cores over the measured lists",
        cpu_text(l.cpu)
    );
    out.push_str(
        "times are the client's, to the last byte over the connection; the server reports no time of its own\n",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(100000), "100,000");
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(1.0, 4.0), Some(0.25));
        assert_eq!(ratio(1.0, 0.0), None);
        assert_eq!(ratio(f64::NAN, 1.0), None);
    }

    #[test]
    fn table_alignment() {
        let text = table(
            &["name", "n"],
            &[
                vec!["a".into(), "1".into()],
                vec!["longer".into(), "1,000".into()],
            ],
            1,
        );
        assert_eq!(text, "name        n\na           1\nlonger  1,000\n");
    }

    #[test]
    fn human_report_has_rows_and_ratio() {
        let target = Target {
            source: "in-process".into(),
            server: "https://127.0.0.1:1".into(),
            kubeconfig: None,
            binary: None,
            server_args: vec![],
        };
        let load = LoadResult {
            concurrency: 32,
            protocol: "h2".into(),
            connections: 4,
            object_bytes: 2048,
            response_bytes: 2048,
            duration_s: 10.0,
            warmup_s: 1.0,
            requests: 400_000,
            errors: 0,
            throughput_per_s: 40_000.0,
            latency: LatencySummary {
                count: 400_000,
                min_ms: 0.1,
                mean_ms: 0.8,
                p50_ms: 0.75,
                p90_ms: 1.2,
                p99_ms: 2.5,
                p999_ms: 12.25,
                max_ms: 150.0,
            },
            errors_by_kind: BTreeMap::new(),
            cpu: Some(CpuUsage {
                client_cores: 1.5,
                server_cores: None,
                other_cores: 0.25,
            }),
            distribution: Vec::new(),
        };
        let report = Report {
            tool: "ferrokube-bench".into(),
            version: "0.1.0".into(),
            cores: 2,
            results: vec![ScenarioResult {
                scenario: "ceiling".into(),
                label: "ceiling".into(),
                target,
                load: Some(load),
                ready: None,
                watch: None,
                list: None,
                server_memory: None,
                ..Default::default()
            }],
            ratios: vec![Ratio {
                name: "get / ceiling".into(),
                numerator: "get 20,000/s".into(),
                denominator: "ceiling 40,000/s".into(),
                value: 0.5,
            }],
        };
        let text = human(&report);
        assert!(text.contains("ceiling   in-process"), "{text}");
        assert!(text.contains("400,000"), "{text}");
        assert!(text.contains("40,000"), "{text}");
        assert!(text.contains("0.75"), "{text}");
        assert!(text.contains("12.3") || text.contains("12.2"), "{text}");
        assert!(text.contains("h2x4"), "{text}");
        assert!(text.contains("get / ceiling: 50.0%"), "{text}");
        assert!(text.contains("1.50/-/0.25"), "{text}");
        let json = serde_json::to_value(&report).expect("json");
        assert_eq!(json["results"][0]["load"]["throughput_per_s"], 40_000.0);
        assert_eq!(json["ratios"][0]["value"], 0.5);
        assert!(json["results"][0].get("ready").is_none());
    }
}
