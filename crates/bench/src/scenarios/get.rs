//! `get`: C clients GETting one ConfigMap of --size bytes.

use std::sync::Arc;

use bytes::Bytes;
use hyper::{Method, StatusCode};

use super::{configmap_body, ensure_namespace, run_id, Endpoint, FixedGet};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::{LoadResult, ScenarioResult};
use crate::runner::{self, snippet};
use crate::BenchError;

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<ScenarioResult, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let run = run_id();
    let name = format!("bench-get-{run}");
    let collection = format!("/api/v1/namespaces/{}/configmaps", cli.namespace);
    let created = client
        .request(
            Method::POST,
            &collection,
            Some(Bytes::from(configmap_body(
                &name,
                &cli.namespace,
                &run,
                cli.size,
            ))),
        )
        .await?;
    if !created.status.is_success() && created.status != StatusCode::CONFLICT {
        return Err(BenchError::Setup(format!(
            "creating the ConfigMap to get: HTTP {}: {}",
            created.status.as_u16(),
            snippet(&created.body, 400)
        )));
    }
    let path = format!("{collection}/{name}");
    let probe = client.request(Method::GET, &path, None).await?;
    if probe.status != StatusCode::OK {
        return Err(BenchError::Setup(format!(
            "GET {path}: HTTP {}: {}",
            probe.status.as_u16(),
            snippet(&probe.body, 400)
        )));
    }
    let outcome = runner::run(
        &client,
        Arc::new(FixedGet { path }),
        &cli.load_options(label, endpoint.pid()),
    )
    .await;
    Ok(ScenarioResult {
        scenario: "get".into(),
        label: label.to_string(),
        target: endpoint.target.clone(),
        load: Some(LoadResult::from_outcome(
            &outcome,
            cli.concurrency,
            client.protocol(),
            client.pooled_connections(),
            cli.size,
            probe.body.len(),
            cli.warmup_s(),
        )),
        ready: None,
        watch: None,
        list: None,
        server_memory: endpoint.memory(),
        ..Default::default()
    })
}
