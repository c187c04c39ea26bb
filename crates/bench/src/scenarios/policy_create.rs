//! `policy-create`: what a ValidatingAdmissionPolicy costs a create, in one
//! run. C clients create ConfigMaps of --size bytes for --requests /
//! --duration; then a policy with three validations (a label present, the
//! payload's size bounded, the name's prefix) and a Deny binding are
//! installed for ConfigMaps of the namespace, and the same creates run as
//! long again (every one passes the policy). Two results and their rate
//! ratio (the goal: at least 80%).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde_json::json;

use super::create::Creates;
use super::{configmap_body, ensure_namespace, run_id, Endpoint};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::ScenarioResult;
use crate::runner::{self, snippet};
use crate::BenchError;

/// How long the policy may take to be in force.
const GIVE_UP: Duration = Duration::from_secs(30);

fn setup(what: &str, status: StatusCode, body: &[u8]) -> BenchError {
    BenchError::Setup(format!(
        "{what}: HTTP {}: {}",
        status.as_u16(),
        snippet(body, 400)
    ))
}

/// The policy (three validations) and its binding for `namespace`.
fn policy_bodies(name: &str, namespace: &str) -> (Bytes, Bytes) {
    let policy = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"],
            }]},
            "validations": [
                {"expression": "has(object.metadata.labels) && 'ferrokube-bench/run' in object.metadata.labels",
                 "message": "bench objects carry their run label"},
                {"expression": "!has(object.data) || !('payload' in object.data) || size(object.data.payload) <= 1048576",
                 "message": "payload too large"},
                {"expression": "object.metadata.name.startsWith('bench-')",
                 "messageExpression": "'unexpected name ' + object.metadata.name"},
            ],
        },
    });
    let binding = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}},
        },
    });
    (
        Bytes::from(policy.to_string()),
        Bytes::from(binding.to_string()),
    )
}

/// Installs the policy and waits until it refuses a ConfigMap it should.
async fn install(
    client: &Client,
    name: &str,
    namespace: &str,
    run: &str,
) -> Result<(), BenchError> {
    let (policy, binding) = policy_bodies(name, namespace);
    let base = "/apis/admissionregistration.k8s.io/v1";
    for (what, path, body) in [
        (
            "creating the policy",
            format!("{base}/validatingadmissionpolicies"),
            policy,
        ),
        (
            "creating the binding",
            format!("{base}/validatingadmissionpolicybindings"),
            binding,
        ),
    ] {
        let reply = client.request(Method::POST, &path, Some(body)).await?;
        if !reply.status.is_success() {
            return Err(setup(what, reply.status, &reply.body));
        }
    }
    let started = Instant::now();
    let path = format!("/api/v1/namespaces/{namespace}/configmaps?dryRun=All");
    let refused = Bytes::from(configmap_body("not-bench", namespace, run, 64));
    loop {
        let reply = client
            .request(Method::POST, &path, Some(refused.clone()))
            .await?;
        if reply.status == StatusCode::UNPROCESSABLE_ENTITY {
            return Ok(());
        }
        if started.elapsed() > GIVE_UP {
            return Err(BenchError::Setup(format!(
                "the policy {name} was not in force within {GIVE_UP:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<Vec<ScenarioResult>, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let run = run_id();
    let bytes = configmap_body("x", &cli.namespace, &run, cli.size).len();
    let baseline_label = format!("{label} without a policy");
    let baseline = runner::run(
        &client,
        Arc::new(Creates::new(&cli.namespace, &run, cli.size)),
        &cli.load_options(&baseline_label, endpoint.pid()),
    )
    .await;
    let policy_name = format!("bench-{run}");
    install(&client, &policy_name, &cli.namespace, &run).await?;
    let policy_label = format!("{label} with a 3-rule policy");
    let checked = runner::run(
        &client,
        Arc::new(Creates::new(&cli.namespace, &format!("{run}p"), cli.size)),
        &cli.load_options(&policy_label, endpoint.pid()),
    )
    .await;
    let result = |label: String, outcome: &runner::LoadOutcome| {
        endpoint.load_result(cli, &client, "policy-create", label, outcome, (bytes, 0))
    };
    let results = vec![
        result(baseline_label, &baseline),
        result(policy_label, &checked),
    ];
    let rate = |r: &ScenarioResult| r.load.as_ref().map_or(0.0, |l| l.throughput_per_s);
    let (plain, with_policy) = (rate(&results[0]), rate(&results[1]));
    if plain > 0.0 {
        runner::note(
            cli.quiet,
            &format!(
                "  creates with the policy: {with_policy:.0}/s = {:.0}% of creates without it ({plain:.0}/s)",
                with_policy / plain * 100.0
            ),
        );
    }
    Ok(results)
}
