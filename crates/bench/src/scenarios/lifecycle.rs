//! `lifecycle`: what the built-in controllers cost. Two measurements, each
//! with --objects objects created by --concurrency clients first:
//! - a namespace holding them is deleted: time from the DELETE to the
//!   namespace being gone (the namespace controller empties it, then
//!   finalizes it);
//! - one owner ConfigMap with that many dependents (ownerReferences) is
//!   deleted: time from the DELETE to the last dependent being gone (the
//!   garbage collector).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde::Serialize;

use super::{ensure_namespace, run_id, setup_failure as setup, Endpoint};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::ScenarioResult;
use crate::runner;
use crate::BenchError;

/// How long either deletion may take before the run gives up.
const GIVE_UP: Duration = Duration::from_secs(1800);

#[derive(Debug, Clone, Serialize, Default)]
pub struct LifecycleResult {
    pub objects: usize,
    /// Creating the namespace's objects, seconds.
    pub namespace_fill_s: f64,
    /// DELETE of the namespace until GET answers 404, seconds.
    pub namespace_gone_s: f64,
    /// Creating the owner's dependents, seconds.
    pub dependents_fill_s: f64,
    /// DELETE of the owner until no dependent is left, seconds.
    pub dependents_gone_s: f64,
}

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<ScenarioResult, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    let run = run_id();
    let mut result = LifecycleResult {
        objects: cli.objects,
        ..Default::default()
    };

    // A namespace full of ConfigMaps, deleted.
    let namespace = format!("bench-lifecycle-{run}");
    ensure_namespace(&client, &namespace).await?;
    let started = Instant::now();
    fill(&client, cli, &namespace, &run, None).await?;
    result.namespace_fill_s = started.elapsed().as_secs_f64();
    runner::note(
        cli.quiet,
        &format!(
            "  {} objects in namespace {namespace}; deleting it",
            cli.objects
        ),
    );
    let started = Instant::now();
    let path = format!("/api/v1/namespaces/{namespace}");
    expect_success(&client, Method::DELETE, &path, "deleting the namespace").await?;
    wait_until(|| async {
        let reply = client.request(Method::GET, &path, None).await?;
        Ok(reply.status == StatusCode::NOT_FOUND)
    })
    .await?;
    result.namespace_gone_s = started.elapsed().as_secs_f64();

    // One owner, many dependents, the owner deleted.
    ensure_namespace(&client, &cli.namespace).await?;
    let owner_name = format!("bench-owner-{run}");
    let collection = format!("/api/v1/namespaces/{}/configmaps", cli.namespace);
    let body =
        format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{owner_name}"}}}}"#);
    let created = client
        .request(Method::POST, &collection, Some(Bytes::from(body)))
        .await?;
    if !created.status.is_success() {
        return Err(setup("creating the owner", &created.status, &created.body));
    }
    let owner: serde_json::Value = serde_json::from_slice(&created.body)
        .map_err(|error| BenchError::Setup(format!("the owner's JSON: {error}")))?;
    let uid = owner["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let started = Instant::now();
    fill(
        &client,
        cli,
        &cli.namespace,
        &run,
        Some((&owner_name, &uid)),
    )
    .await?;
    result.dependents_fill_s = started.elapsed().as_secs_f64();
    runner::note(
        cli.quiet,
        &format!("  {} dependents of {owner_name}; deleting it", cli.objects),
    );
    let started = Instant::now();
    expect_success(
        &client,
        Method::DELETE,
        &format!("{collection}/{owner_name}"),
        "deleting the owner",
    )
    .await?;
    let remaining = format!("{collection}?labelSelector=ferrokube-bench%2Frun%3D{run}&limit=1");
    wait_until(|| async {
        let reply = client.request(Method::GET, &remaining, None).await?;
        let list: serde_json::Value = serde_json::from_slice(&reply.body).unwrap_or_default();
        Ok(reply.status == StatusCode::OK
            && list["items"]
                .as_array()
                .is_some_and(|items| items.is_empty()))
    })
    .await?;
    result.dependents_gone_s = started.elapsed().as_secs_f64();
    runner::note(
        cli.quiet,
        &format!(
            "  namespace gone after {:.2} s, dependents gone after {:.2} s",
            result.namespace_gone_s, result.dependents_gone_s
        ),
    );
    Ok(ScenarioResult {
        scenario: "lifecycle".into(),
        label: label.to_string(),
        target: endpoint.target.clone(),
        server_memory: endpoint.memory(),
        lifecycle: Some(result),
        ..Default::default()
    })
}

async fn expect_success(
    client: &Client,
    method: Method,
    path: &str,
    what: &str,
) -> Result<(), BenchError> {
    let reply = client.request(method, path, None).await?;
    if !reply.status.is_success() {
        return Err(setup(what, &reply.status, &reply.body));
    }
    Ok(())
}

/// --objects ConfigMaps in `namespace`, labelled with the run, created by
/// --concurrency clients; dependents of `owner` when given.
async fn fill(
    client: &Client,
    cli: &Cli,
    namespace: &str,
    run: &str,
    owner: Option<(&str, &str)>,
) -> Result<(), BenchError> {
    let next = Arc::new(AtomicUsize::new(0));
    let owner_refs = owner
        .map(|(name, uid)| {
            format!(
                r#","ownerReferences":[{{"apiVersion":"v1","kind":"ConfigMap","name":"{name}","uid":"{uid}"}}]"#
            )
        })
        .unwrap_or_default();
    let collection = format!("/api/v1/namespaces/{namespace}/configmaps");
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..cli.concurrency.max(1) {
        let (client, next, owner_refs, collection) = (
            client.clone(),
            next.clone(),
            owner_refs.clone(),
            collection.clone(),
        );
        let (total, run) = (cli.objects, run.to_string());
        workers.spawn(async move {
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= total {
                    return Ok::<(), BenchError>(());
                }
                let body = format!(
                    r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"lc-{run}-{index}","labels":{{"ferrokube-bench/run":"{run}"}}{owner_refs}}},"data":{{"k":"v"}}}}"#
                );
                let reply = client
                    .request(Method::POST, &collection, Some(Bytes::from(body)))
                    .await?;
                if !reply.status.is_success() {
                    return Err(setup("creating an object", &reply.status, &reply.body));
                }
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done.map_err(|error| BenchError::Setup(error.to_string()))??;
    }
    Ok(())
}

async fn wait_until<F, Fut>(mut done: F) -> Result<(), BenchError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool, BenchError>>,
{
    let deadline = Instant::now() + GIVE_UP;
    while !done().await? {
        if Instant::now() > deadline {
            return Err(BenchError::Setup("gave up waiting for the deletion".into()));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// The human-readable report lines.
pub fn human(out: &mut String, r: &ScenarioResult, l: &LifecycleResult) {
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "\n{} ({} objects; {})",
        r.label, l.objects, r.target.server
    );
    let _ = writeln!(
        out,
        "  namespace deleted → gone: {:.2} s (filled in {:.2} s)",
        l.namespace_gone_s, l.namespace_fill_s
    );
    let _ = writeln!(
        out,
        "  owner deleted → last dependent gone: {:.2} s (filled in {:.2} s)",
        l.dependents_gone_s, l.dependents_fill_s
    );
}
