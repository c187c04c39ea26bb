//! `policy-create`: what a ValidatingAdmissionPolicy costs a create, on one
//! server. A policy with three validations (a label present, the payload's
//! size bounded, the name's prefix) is installed for ConfigMaps; C clients
//! create ConfigMaps of --size bytes for --requests / --duration without a
//! binding ("plain") and with a Deny binding for the namespace ("policy"),
//! --runs rounds in ABBA order (`paired::round_order`: drift of a shared
//! machine falls on both). Every ConfigMap passes the policy. The ratio is
//! of the median throughputs (the goal: at least 80%).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde_json::json;

use super::create::Creates;
use super::paired::{self, round_order, Configuration};
use super::{configmap_body, ensure_namespace, run_id, Endpoint};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::{Ratio, ScenarioResult};
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

const BASE: &str = "/apis/admissionregistration.k8s.io/v1";

/// Creates the policy (not yet bound: it checks nothing).
async fn create_policy(client: &Client, policy: Bytes) -> Result<(), BenchError> {
    let path = format!("{BASE}/validatingadmissionpolicies");
    let reply = client.request(Method::POST, &path, Some(policy)).await?;
    if !reply.status.is_success() {
        return Err(setup("creating the policy", reply.status, &reply.body));
    }
    Ok(())
}

/// Binds (`binding` given) or unbinds the policy, then waits until a
/// ConfigMap the policy refuses is refused (bound) or accepted (unbound).
async fn bind(
    client: &Client,
    name: &str,
    binding: Option<Bytes>,
    namespace: &str,
    run: &str,
) -> Result<(), BenchError> {
    let bound = binding.is_some();
    let reply = match binding {
        Some(binding) => {
            let path = format!("{BASE}/validatingadmissionpolicybindings");
            client.request(Method::POST, &path, Some(binding)).await?
        }
        None => {
            let path = format!("{BASE}/validatingadmissionpolicybindings/{name}");
            client.request(Method::DELETE, &path, None).await?
        }
    };
    if !reply.status.is_success() {
        let what = if bound {
            "creating the binding"
        } else {
            "deleting the binding"
        };
        return Err(setup(what, reply.status, &reply.body));
    }
    let started = Instant::now();
    let path = format!("/api/v1/namespaces/{namespace}/configmaps?dryRun=All");
    let refused = Bytes::from(configmap_body("not-bench", namespace, run, 64));
    loop {
        let reply = client
            .request(Method::POST, &path, Some(refused.clone()))
            .await?;
        let in_force = reply.status == StatusCode::UNPROCESSABLE_ENTITY;
        if in_force == bound && (in_force || reply.status.is_success()) {
            return Ok(());
        }
        if started.elapsed() > GIVE_UP {
            let state = if bound { "in force" } else { "lifted" };
            return Err(BenchError::Setup(format!(
                "the policy {name} was not {state} within {GIVE_UP:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
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
    let policy_name = format!("bench-{run}");
    let (policy, binding) = policy_bodies(&policy_name, &cli.namespace);
    create_policy(&client, policy).await?;
    let configurations = [
        Configuration {
            name: "plain",
            server_args: Vec::new(),
        },
        Configuration {
            name: "policy",
            server_args: Vec::new(),
        },
    ];
    let mut bound = false;
    let mut results = Vec::new();
    for round in 1..=cli.runs {
        for configuration in round_order(round, &configurations) {
            let with_policy = configuration.name == "policy";
            if with_policy != bound {
                let binding = with_policy.then(|| binding.clone());
                bind(&client, &policy_name, binding, &cli.namespace, &run).await?;
                bound = with_policy;
            }
            let label = format!("{scenario} {} #{round}", configuration.name);
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
            results.push(endpoint.load_result(
                cli,
                &client,
                "policy-create",
                label,
                &outcome,
                (bytes, 0),
            ));
        }
    }
    let ratios = paired::ratios_noted(cli, &results, scenario, &configurations);
    Ok((results, ratios))
}
