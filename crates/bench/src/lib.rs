//! ferrokube-bench: drives any Kubernetes API server (or a ferrokube it
//! starts) with closed-loop load and reports throughput, latency
//! percentiles, time to ready and memory, next to an in-process ceiling on
//! the same TLS and HTTP stack.
//!
//! Layout: [`cli`] parses, [`scenarios`] holds one module per scenario
//! (load: create, get, ceiling; start-up: ready; streams: watch; reads of
//! a large collection: list),
//! [`runner`] is the shared load loop, [`stats`] the histograms,
//! [`client`] the HTTPS client, [`kubeconfig`] (over [`yaml`]) the
//! connection settings, [`launch`] the started server, [`report`] the
//! output.

pub mod cli;
pub mod client;
pub mod cpu;
pub mod kubeconfig;
pub mod launch;
pub mod report;
pub mod runner;
pub mod scenarios;
pub mod stats;
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
        Scenario::Ready => {
            let Some(bin) = &cli.start_ferrokube else {
                return Err(BenchError::Usage(
                    "ready needs --start-ferrokube BIN".into(),
                ));
            };
            for variant in cli.variants() {
                let label = format!("ready{}", variant.suffix);
                results.push(scenarios::ready::run(cli, bin, &variant, &label).await?);
            }
        }
        Scenario::Watch | Scenario::List => {
            for variant in cli.variants() {
                let label = format!("{}{}", cli.scenario.name(), variant.suffix);
                let endpoint = scenarios::Endpoint::open(cli, &variant).await?;
                let result = match cli.scenario {
                    Scenario::Watch => scenarios::watch::run(cli, &endpoint, &label).await?,
                    _ => scenarios::list::run(cli, &endpoint, &label).await?,
                };
                drop(endpoint);
                results.push(result);
            }
        }
        Scenario::Create | Scenario::Get => {
            let ceiling = if cli.with_ceiling {
                let result = scenarios::ceiling::run(cli).await?;
                results.push(result.clone());
                Some(result)
            } else {
                None
            };
            for variant in cli.variants() {
                let label = format!("{}{}", cli.scenario.name(), variant.suffix);
                let endpoint = scenarios::Endpoint::open(cli, &variant).await?;
                let result = match cli.scenario {
                    Scenario::Create => scenarios::create::run(cli, &endpoint, &label).await?,
                    _ => scenarios::get::run(cli, &endpoint, &label).await?,
                };
                drop(endpoint);
                let rate = |r: &report::ScenarioResult| {
                    r.load.as_ref().map_or(0.0, |l| l.throughput_per_s)
                };
                if let Some(ceiling) = &ceiling {
                    if let Some(value) = ratio(rate(&result), rate(ceiling)) {
                        ratios.push(Ratio {
                            name: format!("{label} / ceiling"),
                            numerator: format!(
                                "{label} {}/s",
                                thousands(rate(&result).round() as u64)
                            ),
                            denominator: format!(
                                "ceiling {}/s",
                                thousands(rate(ceiling).round() as u64)
                            ),
                            value: (value * 1000.0).round() / 1000.0,
                        });
                    }
                }
                results.push(result);
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
