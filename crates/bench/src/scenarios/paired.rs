//! Two server configurations under one workload: a server is started
//! --runs times with each, alternating baseline and measured (so drift of
//! a shared machine falls on both) in the order A B, B A, A B … (so neither
//! always runs right after the other's writes), the same closed-loop load runs against
//! each, and the ratio of the median throughputs is reported. `audit-create`
//! and `secret-create` are pairs; `rbac` is one with its own seeding.

use std::sync::Arc;

use bytes::Bytes;
use hyper::Method;

use super::{ensure_namespace, run_id, setup_failure, Endpoint};
use crate::cli::{Cli, Variant};
use crate::client::Client;
use crate::kubeconfig::Credentials;
use crate::report::{ratio, Ratio, ScenarioResult};
use crate::runner::{self, Workload};
use crate::BenchError;

/// One of the two configurations: its name in labels and the arguments
/// added to the server's.
pub struct Configuration {
    pub name: &'static str,
    pub server_args: Vec<String>,
}

/// What the pair measures: the workload for a run id, and one request
/// made before the load so a refusal fails fast with the server's words.
pub trait PairedLoad {
    fn workload(&self, namespace: &str, run: &str) -> Arc<dyn Workload>;
    /// The collection the workload writes to and a body it accepts.
    fn probe(&self, namespace: &str, run: &str) -> (String, Bytes);
    /// Whom the load comes from: `None` is the kubeconfig's user (the probe
    /// is always sent as that one).
    fn credentials(&self) -> Option<Credentials> {
        None
    }
}

/// Runs `load` against `[baseline, measured]`, --runs rounds.
pub async fn run(
    cli: &Cli,
    scenario: &'static str,
    configurations: [Configuration; 2],
    load: &dyn PairedLoad,
) -> Result<(Vec<ScenarioResult>, Vec<Ratio>), BenchError> {
    let mut results = Vec::new();
    for round in 1..=cli.runs {
        for configuration in round_order(round, &configurations) {
            let variant = Variant {
                suffix: format!(" {}", configuration.name),
                server_args: cli
                    .server_args
                    .iter()
                    .chain(&configuration.server_args)
                    .cloned()
                    .collect(),
            };
            let endpoint = Endpoint::open(cli, &variant).await?;
            let label = format!("{scenario} {} #{round}", configuration.name);
            results.push(measure(cli, &endpoint, scenario, &label, load).await?);
        }
    }
    let ratios = ratios_noted(cli, &results, scenario, &configurations);
    Ok((results, ratios))
}

/// [`median_ratio`] of `results`, printed unless `--quiet`.
pub fn ratios_noted(
    cli: &Cli,
    results: &[ScenarioResult],
    scenario: &str,
    configurations: &[Configuration; 2],
) -> Vec<Ratio> {
    let ratios: Vec<Ratio> = median_ratio(results, scenario, configurations)
        .into_iter()
        .collect();
    for r in &ratios {
        runner::note(
            cli.quiet,
            &format!(
                "  {}: {:.1}% ({} vs {})",
                r.name,
                r.value * 100.0,
                r.numerator,
                r.denominator
            ),
        );
    }
    ratios
}

/// The two of a pair in round `round`'s order: baseline first in odd
/// rounds, measured first in even ones. Always starting with the baseline
/// gave the measured server the disk writeback of the baseline's run.
pub fn round_order<T>(round: usize, pair: &[T; 2]) -> [&T; 2] {
    if round % 2 == 1 {
        [&pair[0], &pair[1]]
    } else {
        [&pair[1], &pair[0]]
    }
}

async fn measure(
    cli: &Cli,
    endpoint: &Endpoint,
    scenario: &str,
    label: &str,
    load: &dyn PairedLoad,
) -> Result<ScenarioResult, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let run = run_id();
    let (path, body) = load.probe(&cli.namespace, &run);
    let sent = body.len();
    let probe = client.request(Method::POST, &path, Some(body)).await?;
    if !probe.status.is_success() {
        return Err(setup_failure(
            &format!("POST {path}"),
            &probe.status,
            &probe.body,
        ));
    }
    let client = match load.credentials() {
        Some(credentials) => {
            let mut config = endpoint.kubeconfig.clone();
            config.credentials = credentials;
            Client::connect(&config, cli.client_options()).await?
        }
        None => client,
    };
    let outcome = runner::run(
        &client,
        load.workload(&cli.namespace, &run),
        &cli.load_options(label, endpoint.pid()),
    )
    .await;
    Ok(endpoint.load_result(
        cli,
        &client,
        scenario,
        label.to_string(),
        &outcome,
        (sent, probe.body.len()),
    ))
}

/// The median throughput of the measured configuration over the
/// baseline's (results labelled `<scenario> <name> #<round>`).
pub fn median_ratio(
    results: &[ScenarioResult],
    scenario: &str,
    [baseline, measured]: &[Configuration; 2],
) -> Option<Ratio> {
    let median = |name: &str| {
        let prefix = format!("{scenario} {name} #");
        let mut rates: Vec<f64> = results
            .iter()
            .filter(|r| r.label.starts_with(&prefix))
            .filter_map(|r| r.load.as_ref().map(|l| l.throughput_per_s))
            .collect();
        rates.sort_by(f64::total_cmp);
        rates.get(rates.len() / 2).copied()
    };
    let (base, with) = (median(baseline.name)?, median(measured.name)?);
    Some(Ratio {
        name: format!(
            "{scenario}: {} / {} (medians)",
            measured.name, baseline.name
        ),
        numerator: format!("{} {with:.0}/s", measured.name),
        denominator: format!("{} {base:.0}/s", baseline.name),
        value: (ratio(with, base)? * 1000.0).round() / 1000.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::LoadResult;

    fn result(label: &str, rate: f64) -> ScenarioResult {
        ScenarioResult {
            label: label.into(),
            load: Some(LoadResult {
                throughput_per_s: rate,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_ratio_is_of_the_medians_of_each_configuration() {
        let configurations = [
            Configuration {
                name: "plain",
                server_args: Vec::new(),
            },
            Configuration {
                name: "audited",
                server_args: Vec::new(),
            },
        ];
        let results = [
            result("x plain #1", 100.0),
            result("x audited #1", 10.0),
            result("x plain #2", 300.0),
            result("x audited #2", 90.0),
            result("x plain #3", 200.0),
            result("x audited #3", 180.0),
        ];
        let r = median_ratio(&results, "x", &configurations).expect("both measured");
        assert_eq!(r.value, 0.45);
        assert_eq!(r.numerator, "audited 90/s");
        assert_eq!(r.denominator, "plain 200/s");
    }
}
