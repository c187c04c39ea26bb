//! `webhook-create`: what a validating admission webhook costs a create, on
//! one server. C clients create ConfigMaps of --size bytes without a
//! webhook and with a no-op validating webhook (this process's HTTPS
//! server on loopback, with a CA of its own in `caBundle`, answering every
//! AdmissionReview with `allowed: true`) registered for ConfigMap creates
//! in the namespace, --runs rounds in ABBA order (`paired::round_order`).
//! The rate ratio of the medians and the p50 the webhook adds (median
//! against median; the issue's goal: at most 1 ms at 32 clients).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use hyper::Method;
use serde_json::json;

use super::ceiling::CeilingServer;
use super::create::Creates;
use super::paired::{median_ratio, round_order, Configuration};
use super::{configmap_body, ensure_namespace, run_id, setup_failure, Endpoint};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::{Ratio, ScenarioResult};
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
fn configuration_body(name: &str, url: &str, ca_pem: &[u8], namespace: &str) -> Bytes {
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

/// Median of the values of the results labelled `<scenario> <name> #…`.
fn median_p50(results: &[ScenarioResult], scenario: &str, name: &str) -> Option<f64> {
    let prefix = format!("{scenario} {name} #");
    let mut values: Vec<f64> = results
        .iter()
        .filter(|r| r.label.starts_with(&prefix))
        .filter_map(|r| r.load.as_ref().map(|l| l.latency.p50_ms))
        .collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    scenario: &str,
) -> Result<(Vec<ScenarioResult>, Vec<Ratio>), BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let run = run_id();
    let bytes = configmap_body("x", &cli.namespace, &run, cli.size).len();
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
    let cleanup =
        format!("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{name}");
    let configurations = [
        Configuration {
            name: "without",
            server_args: Vec::new(),
        },
        Configuration {
            name: "with",
            server_args: Vec::new(),
        },
    ];
    let mut installed = false;
    let mut results = Vec::new();
    for round in 1..=cli.runs {
        for configuration in round_order(round, &configurations) {
            let with_webhook = configuration.name == "with";
            if with_webhook && !installed {
                install(
                    &client,
                    configuration_body(&name, &url, &ca_pem, &cli.namespace),
                    &cli.namespace,
                    &run,
                    &calls,
                )
                .await?;
            }
            if !with_webhook && installed {
                // In force from the response to its write on: gone once deleted.
                let reply = client.request(Method::DELETE, &cleanup, None).await?;
                if !reply.status.is_success() {
                    return Err(setup_failure(
                        "deleting the webhook configuration",
                        &reply.status,
                        &reply.body,
                    ));
                }
            }
            installed = with_webhook;
            let label = format!("{scenario} {} #{round}", configuration.name);
            let before = calls.load(Ordering::Relaxed);
            let outcome = runner::run(
                &client,
                Arc::new(Creates::new(
                    &cli.namespace,
                    &format!("{run}{}{round}", configuration.name),
                    cli.size,
                )),
                &cli.load_options(&label, endpoint.pid()),
            )
            .await;
            let called = calls.load(Ordering::Relaxed) - before;
            let result =
                endpoint.load_result(cli, &client, "webhook-create", label, &outcome, (bytes, 0));
            let created = result.load.as_ref().map_or(0, |load| load.requests);
            // Every create with the webhook called it; none without.
            if (with_webhook && created > called) || (!with_webhook && called > 0) {
                return Err(BenchError::Setup(format!(
                    "{created} creates {} the webhook succeeded but it was called {called} times",
                    configuration.name
                )));
            }
            results.push(result);
        }
    }
    if installed {
        let _ = client.request(Method::DELETE, &cleanup, None).await;
    }
    drop(webhook);
    let ratios: Vec<Ratio> = median_ratio(&results, scenario, &configurations)
        .into_iter()
        .collect();
    let p50 = |name| median_p50(&results, scenario, name).unwrap_or(0.0);
    let (without, with) = (p50("without"), p50("with"));
    for r in &ratios {
        runner::note(
            cli.quiet,
            &format!(
                "  {}: {:.1}% ({} vs {}); median p50 {with:.2} ms vs {without:.2} ms (+{:.2} ms)",
                r.name,
                r.value * 100.0,
                r.numerator,
                r.denominator,
                with - without,
            ),
        );
    }
    Ok((results, ratios))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn the_answer_allows_the_reviewed_request_by_its_uid() {
        let answer = allow(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1"}}"#);
        let answer: Value = serde_json::from_slice(&answer).expect("JSON");
        assert_eq!(answer["response"]["uid"], "u-1");
        assert_eq!(answer["response"]["allowed"], true);
    }

    #[test]
    fn the_configuration_carries_the_ca_and_side_effects_none() {
        let body = configuration_body("n", "https://127.0.0.1:1/validate", b"PEM", "ns");
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
