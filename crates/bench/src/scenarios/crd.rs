//! `crd`: how long a CustomResourceDefinition takes to become usable.
//! --runs times: a CRD with a 30-field schema is created (a group of its
//! own each time), then a custom resource is POSTed every 2 ms until one is
//! created; the time from the CRD's POST to that 201 is the sample (what
//! an operator's test waits for after installing its CRDs). Each CRD is
//! deleted afterwards.

use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde::Serialize;
use serde_json::json;

use super::{ensure_namespace, run_id, setup_failure as setup, Endpoint};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::ScenarioResult;
use crate::runner;
use crate::BenchError;

/// How long one CRD may take before the run gives up.
const GIVE_UP: Duration = Duration::from_secs(60);
/// Fields in the CRD's `spec` schema.
const SCHEMA_FIELDS: usize = 30;

#[derive(Debug, Clone, Serialize, Default)]
pub struct CrdResult {
    pub runs: usize,
    /// CRD POSTed → first custom resource created, milliseconds, sorted.
    pub established_ms: Vec<f64>,
}

impl CrdResult {
    /// The `q` quantile (nearest rank) of the samples.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.established_ms.is_empty() {
            return 0.0;
        }
        let rank = ((q * self.established_ms.len() as f64).ceil() as usize)
            .clamp(1, self.established_ms.len());
        self.established_ms[rank - 1]
    }
}

/// A Widget CRD in `group` whose `spec` has `fields` fields: strings,
/// integers with a minimum, booleans; every fifth one has a default.
pub fn crd_body(group: &str, fields: usize) -> serde_json::Value {
    let properties: serde_json::Map<String, serde_json::Value> = (0..fields)
        .map(|index| {
            let mut schema = match index % 3 {
                0 => json!({"type": "string", "maxLength": 64}),
                1 => json!({"type": "integer", "minimum": 0}),
                _ => json!({"type": "boolean"}),
            };
            if index % 5 == 4 {
                schema["default"] = field_value(index);
            }
            (format!("field{index}"), schema)
        })
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": properties},
                }}},
            }],
        },
    })
}

fn field_value(index: usize) -> serde_json::Value {
    match index % 3 {
        0 => json!(format!("value-{index}")),
        1 => json!(index),
        _ => json!(index.is_multiple_of(2)),
    }
}

/// A Widget of [`crd_body`]'s schema with every field set except those
/// with a default (the server fills them in).
pub fn widget_body(group: &str, name: &str, fields: usize) -> Bytes {
    let spec: serde_json::Map<String, serde_json::Value> = (0..fields)
        .filter(|index| index % 5 != 4)
        .map(|index| (format!("field{index}"), field_value(index)))
        .collect();
    Bytes::from(
        json!({
            "apiVersion": format!("{group}/v1"),
            "kind": "Widget",
            "metadata": {"name": name},
            "spec": spec,
        })
        .to_string(),
    )
}

/// Creates the CRD and waits until a first Widget (`first`) is created.
pub async fn install(
    client: &Client,
    group: &str,
    fields: usize,
    namespace: &str,
) -> Result<(), BenchError> {
    let widget = widget_body(group, "first", fields);
    install_with(client, group, &crd_body(group, fields), widget, namespace).await
}

/// Creates the Widget CRD `crd` of `group` and waits until `widget` (a
/// Widget named `first`) is created.
pub async fn install_with(
    client: &Client,
    group: &str,
    crd: &serde_json::Value,
    widget: Bytes,
    namespace: &str,
) -> Result<(), BenchError> {
    let body = Bytes::from(crd.to_string());
    let started = Instant::now();
    let created = client
        .request(
            Method::POST,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            Some(body),
        )
        .await?;
    if !created.status.is_success() {
        return Err(setup("creating a CRD", &created.status, &created.body));
    }
    let collection = format!("/apis/{group}/v1/namespaces/{namespace}/widgets");
    loop {
        let reply = client
            .request(Method::POST, &collection, Some(widget.clone()))
            .await?;
        if reply.status.is_success() {
            return Ok(());
        }
        if reply.status != StatusCode::NOT_FOUND {
            return Err(setup(
                "creating the first custom resource",
                &reply.status,
                &reply.body,
            ));
        }
        if started.elapsed() > GIVE_UP {
            return Err(BenchError::Setup(format!(
                "{group}: no custom resource could be created within {GIVE_UP:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<ScenarioResult, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let run = run_id();
    let mut samples = Vec::with_capacity(cli.runs);
    for index in 0..cli.runs {
        let group = format!("r{index}-{run}.bench.ferrokube.dev");
        let started = Instant::now();
        install(&client, &group, SCHEMA_FIELDS, &cli.namespace).await?;
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        let path =
            format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}");
        let deleted = client.request(Method::DELETE, &path, None).await?;
        if !deleted.status.is_success() {
            return Err(setup("deleting a CRD", &deleted.status, &deleted.body));
        }
    }
    samples.sort_by(f64::total_cmp);
    let result = CrdResult {
        runs: cli.runs,
        established_ms: samples,
    };
    runner::note(
        cli.quiet,
        &format!(
            "  CRD created → custom resource created: p50 {:.1} ms, p99 {:.1} ms",
            result.quantile(0.5),
            result.quantile(0.99)
        ),
    );
    Ok(ScenarioResult {
        scenario: "crd".into(),
        label: label.to_string(),
        target: endpoint.target.clone(),
        server_memory: endpoint.memory(),
        crd: Some(result),
        ..Default::default()
    })
}

/// The human-readable report lines.
pub fn human(out: &mut String, r: &ScenarioResult, c: &CrdResult) {
    use std::fmt::Write as _;
    let _ = writeln!(out, "\n{} ({} CRDs; {})", r.label, c.runs, r.target.server);
    let _ = writeln!(
        out,
        "  CRD created → first custom resource created: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        c.quantile(0.5),
        c.quantile(0.99),
        c.quantile(1.0)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let result = CrdResult {
            runs: 4,
            established_ms: vec![1.0, 2.0, 3.0, 10.0],
        };
        assert_eq!(result.quantile(0.5), 2.0);
        assert_eq!(result.quantile(0.99), 10.0);
        assert_eq!(result.quantile(1.0), 10.0);
        assert_eq!(CrdResult::default().quantile(0.5), 0.0);
    }
}
