//! `create`: C clients POSTing ConfigMaps of --size bytes into one
//! namespace, each with a name of its own.

use std::sync::Arc;

use bytes::Bytes;
use hyper::Method;

use super::{configmap_body, ensure_namespace, run_id, Endpoint};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::{LoadResult, ScenarioResult};
use crate::runner::{self, snippet, Workload};
use crate::BenchError;

/// C clients creating ConfigMaps of `size` bytes, each with a name of its own.
pub(crate) struct Creates {
    namespace: String,
    run: String,
    path: String,
    size: usize,
}

impl Creates {
    pub(crate) fn new(namespace: &str, run: &str, size: usize) -> Self {
        Creates {
            namespace: namespace.to_string(),
            run: run.to_string(),
            path: format!("/api/v1/namespaces/{namespace}/configmaps"),
            size,
        }
    }

    fn body(&self, name: &str) -> Bytes {
        Bytes::from(configmap_body(name, &self.namespace, &self.run, self.size))
    }
}

impl Workload for Creates {
    fn request(&self, worker: usize, seq: u64) -> (Method, String, Option<Bytes>) {
        let name = format!("bench-{}-{worker}-{seq}", self.run);
        (Method::POST, self.path.clone(), Some(self.body(&name)))
    }
}

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<ScenarioResult, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let creates = Creates::new(&cli.namespace, &run_id(), cli.size);
    // One create up front: fails fast with the server's own words, and
    // gives the response size.
    let probe = client
        .request(
            Method::POST,
            &creates.path,
            Some(creates.body(&format!("bench-{}-probe", creates.run))),
        )
        .await?;
    if !probe.status.is_success() {
        return Err(BenchError::Setup(format!(
            "creating a ConfigMap: HTTP {}: {}",
            probe.status.as_u16(),
            snippet(&probe.body, 400)
        )));
    }
    let outcome = runner::run(
        &client,
        Arc::new(creates),
        &cli.load_options(label, endpoint.pid()),
    )
    .await;
    Ok(ScenarioResult {
        scenario: "create".into(),
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
