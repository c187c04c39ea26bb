//! `webhook-create`: what a validating admission webhook costs a create, in
//! one run. C clients create ConfigMaps of --size bytes; then a no-op
//! validating webhook (this process's HTTPS server on loopback, with a CA
//! of its own in `caBundle`, answering every AdmissionReview with
//! `allowed: true`) is registered for ConfigMap creates in the namespace,
//! and the same creates run as long again. Two results, their rate ratio
//! and the p50 they add (the issue's goal: at most 1 ms at 32 clients).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use hyper::Method;
use serde_json::{json, Value};

use super::ceiling::CeilingServer;
use super::create::Creates;
use super::{configmap_body, ensure_namespace, run_id, setup_failure, Endpoint};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::{ratio, Ratio, ScenarioResult};
use crate::runner;
use crate::BenchError;

/// How long the webhook may take to be called.
const GIVE_UP: Duration = Duration::from_secs(30);

/// The part of an AdmissionReview a no-op webhook reads. As
/// controller-runtime's `admission.Request` keeps `object` and `oldObject`
/// as raw bytes (`runtime.RawExtension`) that a webhook ignoring them never
/// decodes, the other fields are skipped, not built into a tree.
#[derive(serde::Deserialize)]
struct Review {
    request: ReviewRequest,
}

#[derive(serde::Deserialize)]
struct ReviewRequest {
    uid: String,
}

/// The AdmissionReview answer allowing `review`'s request.
pub fn allow(review: &[u8]) -> Bytes {
    let uid = serde_json::from_slice::<Review>(review)
        .map(|review| review.request.uid)
        .unwrap_or_default();
    Bytes::from(
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": uid, "allowed": true},
        })
        .to_string(),
    )
}

/// A ValidatingWebhookConfiguration calling `url` for ConfigMap creates in
/// `namespace`.
fn configuration(name: &str, url: &str, ca_pem: &[u8], namespace: &str) -> Bytes {
    Bytes::from(
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [{
                "name": "noop.bench.ferrokube.dev",
                "clientConfig": {
                    "url": url,
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(ca_pem),
                },
                "rules": [{
                    "operations": ["CREATE"],
                    "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                }],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "failurePolicy": "Fail",
                "timeoutSeconds": 10,
            }],
        })
        .to_string(),
    )
}

/// Registers the webhook and waits until a dry-run create reaches it.
async fn install(
    client: &Client,
    body: Bytes,
    namespace: &str,
    run: &str,
    calls: &AtomicU64,
) -> Result<(), BenchError> {
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    let reply = client.request(Method::POST, path, Some(body)).await?;
    if !reply.status.is_success() {
        return Err(setup_failure(
            "creating the webhook configuration",
            &reply.status,
            &reply.body,
        ));
    }
    let started = Instant::now();
    let probe_path = format!("/api/v1/namespaces/{namespace}/configmaps?dryRun=All");
    let probe = Bytes::from(configmap_body(
        &format!("bench-{run}-w"),
        namespace,
        run,
        64,
    ));
    while calls.load(Ordering::Relaxed) == 0 {
        let reply = client
            .request(Method::POST, &probe_path, Some(probe.clone()))
            .await?;
        if !reply.status.is_success() {
            return Err(setup_failure(
                "a dry-run create through the webhook",
                &reply.status,
                &reply.body,
            ));
        }
        if started.elapsed() > GIVE_UP {
            return Err(BenchError::Setup(format!(
                "the webhook was not called within {GIVE_UP:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<(Vec<ScenarioResult>, Vec<Ratio>), BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let run = run_id();
    let bytes = configmap_body("x", &cli.namespace, &run, cli.size).len();
    let baseline_label = format!("{label} without a webhook");
    let baseline = runner::run(
        &client,
        Arc::new(Creates::new(&cli.namespace, &run, cli.size)),
        &cli.load_options(&baseline_label, endpoint.pid()),
    )
    .await;

    let calls = Arc::new(AtomicU64::new(0));
    let counted = calls.clone();
    let webhook = CeilingServer::start_with(
        Arc::new(move |review: &[u8]| {
            counted.fetch_add(1, Ordering::Relaxed);
            allow(review)
        }),
        1,
    )?;
    let ca_pem = webhook.kubeconfig.ca_pem.clone().unwrap_or_default();
    let url = format!("https://{}/validate", webhook.address);
    let name = format!("bench-{run}");
    install(
        &client,
        configuration(&name, &url, &ca_pem, &cli.namespace),
        &cli.namespace,
        &run,
        &calls,
    )
    .await?;
    let webhook_label = format!("{label} with a no-op webhook");
    let before = calls.load(Ordering::Relaxed);
    let checked = runner::run(
        &client,
        Arc::new(Creates::new(&cli.namespace, &format!("{run}w"), cli.size)),
        &cli.load_options(&webhook_label, endpoint.pid()),
    )
    .await;
    let called = calls.load(Ordering::Relaxed) - before;
    let cleanup =
        format!("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{name}");
    let _ = client.request(Method::DELETE, &cleanup, None).await;
    drop(webhook);

    let result = |label: String, outcome: &runner::LoadOutcome| {
        endpoint.load_result(cli, &client, "webhook-create", label, outcome, (bytes, 0))
    };
    let plain = result(baseline_label, &baseline);
    let hooked = result(webhook_label, &checked);
    let load = |r: &ScenarioResult| r.load.clone().unwrap_or_default();
    let (a, b) = (load(&plain), load(&hooked));
    if b.requests > called {
        return Err(BenchError::Setup(format!(
            "{} creates succeeded but the webhook was called {called} times",
            b.requests
        )));
    }
    runner::note(
        cli.quiet,
        &format!(
            "  creates with the webhook: {:.0}/s = {:.0}% of {:.0}/s; p50 {:.2} ms vs {:.2} ms (+{:.2} ms); the webhook was called {called} times",
            b.throughput_per_s,
            ratio(b.throughput_per_s, a.throughput_per_s).unwrap_or(0.0) * 100.0,
            a.throughput_per_s,
            b.latency.p50_ms,
            a.latency.p50_ms,
            b.latency.p50_ms - a.latency.p50_ms,
        ),
    );
    let ratios = ratio(b.throughput_per_s, a.throughput_per_s)
        .map(|value| Ratio {
            name: "webhook-create: with / without the webhook".into(),
            numerator: format!("with {:.0}/s", b.throughput_per_s),
            denominator: format!("without {:.0}/s", a.throughput_per_s),
            value: (value * 1000.0).round() / 1000.0,
        })
        .into_iter()
        .collect();
    Ok((vec![plain, hooked], ratios))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_allows_the_reviewed_request_by_its_uid() {
        let answer = allow(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1"}}"#);
        let answer: Value = serde_json::from_slice(&answer).expect("JSON");
        assert_eq!(answer["response"]["uid"], "u-1");
        assert_eq!(answer["response"]["allowed"], true);
    }

    #[test]
    fn the_configuration_carries_the_ca_and_side_effects_none() {
        let body = configuration("n", "https://127.0.0.1:1/validate", b"PEM", "ns");
        let value: Value = serde_json::from_slice(&body).expect("JSON");
        let webhook = &value["webhooks"][0];
        assert_eq!(webhook["clientConfig"]["caBundle"], "UEVN");
        assert_eq!(webhook["sideEffects"], "None");
        assert_eq!(
            webhook["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"],
            "ns"
        );
    }
}
