//! Results: one JSON document (`--json`) or human tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::cpu::CpuUsage;
use crate::launch::Memory;
use crate::runner::{ErrorTally, LoadOutcome};
use crate::stats::{round3, LatencySummary, MinMedMax};

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
#[derive(Debug, Clone, PartialEq, Serialize)]
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

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioResult {
    pub scenario: String,
    /// The scenario and its variant, e.g. `create fsync=off`.
    pub label: String,
    pub target: Target,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<ReadyResult>,
    /// The started server's memory after the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_memory: Option<Memory>,
}

#[derive(Debug, Clone, Serialize)]
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
    pub samples: Vec<ReadySample>,
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
        let _ = writeln!(
            out,
            "\n{} ({} runs, {})",
            r.label, ready.runs, r.target.server
        );
        out.push_str(&table(&["", "min", "median", "max"], &rows, 1));
    }
    for ratio in &report.ratios {
        let _ = writeln!(
            out,
            "\n{}: {:.1}% ({} / {})",
            ratio.name,
            ratio.value * 100.0,
            ratio.numerator,
            ratio.denominator
        );
    }
    out
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
                server_memory: None,
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
