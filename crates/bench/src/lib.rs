//! ferrokube-bench: drives any Kubernetes API server (or a ferrokube it
//! starts) with closed-loop load and reports throughput, latency
//! percentiles, time to ready and memory, next to an in-process ceiling on
//! the same TLS and HTTP stack.
//!
//! Layout: [`cli`] parses, [`scenarios`] holds one module per scenario
//! (load: create, get, update/patch/delete in `write`, ceiling and the
//! etcd put ceiling; start-up: ready; memory; streams: watch, mix; reads
//! of a large collection: list, list-formats),
//! [`runner`] is the shared load loop, [`stats`] the histograms,
//! [`client`] the HTTPS client, [`kubeconfig`] (over [`yaml`], yaml-rust2) the
//! connection settings, [`launch`] the started server, [`report`] the
//! output, [`svg`] the charts.

pub mod cli;
pub mod client;
pub mod cpu;
pub mod kubeconfig;
pub mod launch;
pub mod report;
pub mod runner;
pub mod scenarios;
pub mod stats;
pub mod svg;
pub mod yaml;

use cli::{Cli, Scenario};
use report::{ratio, thousands, Ratio, Report};

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Kubeconfig(#[from] kubeconfig::KubeconfigError),
    #[error(transparent)]
    Client(#[from] client::ClientError),
    #[error("starting ferrokube: {0}")]
    Launch(String),
    #[error("setting up: {0}")]
    Setup(String),
}

/// Runs the scenario `cli` names and collects the results.
pub async fn run(cli: &Cli) -> Result<Report, BenchError> {
    cli.validate()?;
    let mut results = Vec::new();
    let mut ratios = Vec::new();
    match cli.scenario {
        Scenario::Ceiling => results.push(scenarios::ceiling::run(cli).await?),
        Scenario::InProcess => results.push(scenarios::in_process::run(cli, "in-process").await?),
        Scenario::Faults => {
            let label = format!("faults {:?}", cli.storage_backend).to_lowercase();
            results.push(scenarios::faults::run(cli, &label).await?);
        }
        Scenario::Abuse => results.push(scenarios::abuse::run(cli, "abuse").await?),
        Scenario::Ready => {
            let Some(bin) = &cli.start_ferrokube else {
                return Err(BenchError::Usage(
                    "ready needs --start-ferrokube BIN".into(),
                ));
            };
            for variant in cli.variants() {
                for stored in cli.stored_counts(&[0]) {
                    let mut label = "ready".to_string();
                    if stored > 0 {
                        label.push_str(&format!(" stored={stored}"));
                    }
                    if cli.crds > 0 {
                        label.push_str(&format!(" crds={}", cli.crds));
                    }
                    label.push_str(&variant.suffix);
                    results.push(scenarios::ready::run(cli, bin, &variant, &label, stored).await?);
                }
            }
        }
        Scenario::Watch
        | Scenario::List
        | Scenario::ListFormats
        | Scenario::Memory
        | Scenario::Mix
        | Scenario::Lifecycle
        | Scenario::Crd => {
            for variant in cli.variants() {
                let label = format!("{}{}", cli.scenario.name(), variant.suffix);
                let endpoint = scenarios::Endpoint::open(cli, &variant).await?;
                let result = match cli.scenario {
                    Scenario::Watch => scenarios::watch::run(cli, &endpoint, &label).await?,
                    Scenario::ListFormats => {
                        scenarios::formats::run(cli, &endpoint, &label).await?
                    }
                    Scenario::Memory => scenarios::memory::run(cli, &endpoint, &label).await?,
                    Scenario::Mix => scenarios::mix::run(cli, &endpoint, &label).await?,
                    Scenario::Lifecycle => {
                        scenarios::lifecycle::run(cli, &endpoint, &label).await?
                    }
                    Scenario::Crd => scenarios::crd::run(cli, &endpoint, &label).await?,
                    _ => scenarios::list::run(cli, &endpoint, &label).await?,
                };
                drop(endpoint);
                results.push(result);
            }
        }
        Scenario::CrdCreate => {
            for variant in cli.variants() {
                let label = format!("crd-create{}", variant.suffix);
                let endpoint = scenarios::Endpoint::open(cli, &variant).await?;
                results.extend(scenarios::crd_create::run(cli, &endpoint, &label).await?);
            }
        }
        Scenario::CrdCelCreate => {
            for variant in cli.variants() {
                let endpoint = scenarios::Endpoint::open(cli, &variant).await?;
                let (measured, compared) =
                    scenarios::crd_cel_create::run(cli, &endpoint, &variant.suffix).await?;
                results.extend(measured);
                ratios.extend(compared);
            }
        }
        Scenario::PolicyCreate => {
            for variant in cli.variants() {
                let label = format!("policy-create{}", variant.suffix);
                let endpoint = scenarios::Endpoint::open(cli, &variant).await?;
                let (measured, compared) =
                    scenarios::policy_create::run(cli, &endpoint, &label).await?;
                results.extend(measured);
                ratios.extend(compared);
            }
        }
        Scenario::WebhookCreate => {
            for variant in cli.variants() {
                let label = format!("webhook-create{}", variant.suffix);
                let endpoint = scenarios::Endpoint::open(cli, &variant).await?;
                let (measured, compared) =
                    scenarios::webhook_create::run(cli, &endpoint, &label).await?;
                results.extend(measured);
                ratios.extend(compared);
            }
        }
        Scenario::Rbac | Scenario::AuditCreate | Scenario::SecretCreate | Scenario::ApfGet => {
            let (measured, compared) = match cli.scenario {
                Scenario::Rbac => scenarios::rbac::run(cli).await?,
                Scenario::AuditCreate => scenarios::audit_create::run(cli).await?,
                Scenario::ApfGet => scenarios::apf_get::run(cli).await?,
                _ => scenarios::secret_create::run(cli).await?,
            };
            results.extend(measured);
            ratios.extend(compared);
        }
        Scenario::Create
        | Scenario::Get
        | Scenario::Update
        | Scenario::Patch
        | Scenario::Delete => {
            let mut ceilings = Vec::new();
            if cli.with_ceiling {
                let tls = scenarios::ceiling::run(cli).await?;
                results.push(tls.clone());
                ceilings.push(tls);
                if cli.scenario.writes() {
                    let etcd = scenarios::etcd::run(cli).await?;
                    results.push(etcd.clone());
                    ceilings.push(etcd);
                }
            }
            for variant in cli.variants() {
                let label = format!("{}{}", cli.scenario.name(), variant.suffix);
                let endpoint = scenarios::Endpoint::open(cli, &variant).await?;
                let measured = match cli.scenario {
                    Scenario::Create => vec![scenarios::create::run(cli, &endpoint, &label).await?],
                    Scenario::Get => vec![scenarios::get::run(cli, &endpoint, &label).await?],
                    Scenario::Update => {
                        vec![scenarios::write::run_update(cli, &endpoint, &label).await?]
                    }
                    Scenario::Delete => {
                        vec![scenarios::write::run_delete(cli, &endpoint, &label).await?]
                    }
                    _ => scenarios::write::run_patch(cli, &endpoint, &label).await?,
                };
                drop(endpoint);
                for result in measured {
                    for ceiling in &ceilings {
                        ratios.extend(ceiling_ratios(&result, ceiling));
                    }
                    results.push(result);
                }
            }
        }
    }
    Ok(Report {
        tool: "ferrokube-bench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        cores: std::thread::available_parallelism().map_or(1, usize::from),
        results,
        ratios,
    })
}

/// `result` next to `ceiling`: throughput as a fraction of the
/// ceiling's, and median latency as a multiple of it. Nothing when either
/// was not measured.
pub fn ceiling_ratios(
    result: &report::ScenarioResult,
    ceiling: &report::ScenarioResult,
) -> Vec<Ratio> {
    let (Some(load), Some(top)) = (&result.load, &ceiling.load) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(value) = ratio(load.throughput_per_s, top.throughput_per_s) {
        out.push(Ratio {
            name: format!("{} / {}", result.label, ceiling.label),
            numerator: format!(
                "{} {}/s",
                result.label,
                thousands(load.throughput_per_s.round() as u64)
            ),
            denominator: format!(
                "{} {}/s",
                ceiling.label,
                thousands(top.throughput_per_s.round() as u64)
            ),
            value: (value * 1000.0).round() / 1000.0,
        });
    }
    if let Some(value) = ratio(load.latency.p50_ms, top.latency.p50_ms) {
        out.push(Ratio {
            name: format!("{} p50 latency / {} p50", result.label, ceiling.label),
            numerator: format!("{} p50 {} ms", result.label, load.latency.p50_ms),
            denominator: format!("{} p50 {} ms", ceiling.label, top.latency.p50_ms),
            value: (value * 1000.0).round() / 1000.0,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use report::{LoadResult, ScenarioResult};
    use stats::LatencySummary;

    fn measured(label: &str, throughput: f64, p50: f64) -> ScenarioResult {
        ScenarioResult {
            scenario: label.into(),
            label: label.into(),
            load: Some(LoadResult {
                concurrency: 32,
                protocol: "h2".into(),
                connections: 4,
                object_bytes: 1024,
                response_bytes: 1100,
                duration_s: 10.0,
                warmup_s: 1.0,
                requests: (throughput * 10.0) as u64,
                errors: 0,
                throughput_per_s: throughput,
                latency: LatencySummary {
                    p50_ms: p50,
                    ..LatencySummary::default()
                },
                errors_by_kind: Default::default(),
                cpu: None,
                distribution: Vec::new(),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn ratios_to_a_ceiling() {
        let create = measured("create", 2500.0, 10.0);
        let etcd = measured("etcd put ceiling", 5000.0, 4.0);
        let ratios = ceiling_ratios(&create, &etcd);
        assert_eq!(ratios.len(), 2);
        assert_eq!(ratios[0].name, "create / etcd put ceiling");
        assert_eq!(ratios[0].value, 0.5);
        assert_eq!(ratios[0].numerator, "create 2,500/s");
        assert_eq!(ratios[1].name, "create p50 latency / etcd put ceiling p50");
        assert_eq!(ratios[1].value, 2.5);
    }

    #[test]
    fn no_ratio_without_both_measurements() {
        let create = measured("create", 2500.0, 10.0);
        let skipped = ScenarioResult {
            label: "etcd put ceiling".into(),
            unsupported: Some("no etcd binary".into()),
            ..Default::default()
        };
        assert!(ceiling_ratios(&create, &skipped).is_empty());
        assert!(ceiling_ratios(&skipped, &create).is_empty());
        // A ceiling that served nothing gives no ratio rather than infinity.
        let zero = measured("ceiling", 0.0, 0.0);
        assert!(ceiling_ratios(&create, &zero).is_empty());
    }
}
