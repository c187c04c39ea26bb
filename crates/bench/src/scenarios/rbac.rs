//! `rbac`: what authorization costs a request. The same binary is started
//! with `--authorization-mode=AlwaysAllow` and with `RBAC`, --runs rounds
//! alternating the two. Each server holds --roles Roles and as many
//! RoleBindings (each binding a user of its own, in the namespace the
//! requests go to: the worst place for an authorizer that scans), plus one
//! Role and RoleBinding letting user `bench` get and create ConfigMaps
//! there. As `bench` (a bearer token from `--token-auth-file`): C clients
//! GET one ConfigMap, then create ConfigMaps. The medians of each mode and
//! the ratio RBAC / AlwaysAllow are reported.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use hyper::{Method, StatusCode};
use tokio::task::JoinSet;

use super::create::Creates;
use super::{configmap_body, ensure_namespace, run_id, setup_failure, Endpoint, FixedGet};
use crate::cli::{Cli, Variant};
use crate::client::Client;
use crate::kubeconfig::Credentials;
use crate::launch::unique_dir;
use crate::report::{ratio, LoadResult, Ratio, ScenarioResult};
use crate::runner;
use crate::BenchError;

/// The bearer token of user [`USER`] in the token file the servers read.
const TOKEN: &str = "ferrokube-bench-rbac";
/// The user the measured requests come from.
const USER: &str = "bench";
/// The authorization modes compared, the baseline first.
const MODES: [&str; 2] = ["AlwaysAllow", "RBAC"];
/// Setup requests in flight at once.
const SETUP_PARALLELISM: usize = 32;

/// Results of every run, and the ratios of the medians.
pub async fn run(cli: &Cli) -> Result<(Vec<ScenarioResult>, Vec<Ratio>), BenchError> {
    let token_file = write_token_file()?;
    let mut results = Vec::new();
    for round in 1..=cli.runs {
        for mode in MODES {
            let variant = Variant {
                suffix: format!(" {mode}"),
                server_args: cli
                    .server_args
                    .iter()
                    .cloned()
                    .chain([
                        format!("--token-auth-file={}", token_file.display()),
                        format!("--authorization-mode={mode}"),
                    ])
                    .collect(),
            };
            let endpoint = Endpoint::open(cli, &variant).await?;
            let label = format!("rbac {mode} #{round}");
            results.extend(measure(cli, &endpoint, &label).await?);
        }
    }
    let _ = std::fs::remove_dir_all(token_file.parent().unwrap_or(&token_file));
    let ratios = ["get", "create"]
        .into_iter()
        .filter_map(|op| median_ratio(&results, op))
        .collect::<Vec<_>>();
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
    Ok((results, ratios))
}

fn write_token_file() -> Result<PathBuf, BenchError> {
    let dir = unique_dir();
    std::fs::create_dir_all(&dir)
        .map_err(|e| BenchError::Setup(format!("creating {}: {e}", dir.display())))?;
    let path = dir.join("tokens.csv");
    std::fs::write(&path, format!("{TOKEN},{USER},{USER}-uid\n"))
        .map_err(|e| BenchError::Setup(format!("writing {}: {e}", path.display())))?;
    Ok(path)
}

/// Seeds the policy as the admin, then loads the server as `bench`.
async fn measure(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<Vec<ScenarioResult>, BenchError> {
    let admin = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    let ns = &cli.namespace;
    ensure_namespace(&admin, ns).await?;
    seed_policy(&admin, ns, cli.roles).await?;
    let run = run_id();
    let name = format!("bench-get-{run}");
    let collection = format!("/api/v1/namespaces/{ns}/configmaps");
    let body = configmap_body(&name, ns, &run, cli.size);
    let created = admin
        .request(Method::POST, &collection, Some(Bytes::from(body)))
        .await?;
    if created.status != StatusCode::CREATED {
        return Err(setup_failure(
            "creating the ConfigMap to get",
            &created.status,
            &created.body,
        ));
    }
    let mut user_config = endpoint.kubeconfig.clone();
    user_config.credentials = Credentials::Token(TOKEN.into());
    let user = Client::connect(&user_config, cli.client_options()).await?;
    let path = format!("{collection}/{name}");
    let probe = user.request(Method::GET, &path, None).await?;
    if probe.status != StatusCode::OK {
        return Err(setup_failure(
            &format!("GET {path} as {USER}"),
            &probe.status,
            &probe.body,
        ));
    }
    let get_label = format!("{label} get");
    let gets = runner::run(
        &user,
        Arc::new(FixedGet { path }),
        &cli.load_options(&get_label, endpoint.pid()),
    )
    .await;
    let create_label = format!("{label} create");
    let creates = runner::run(
        &user,
        Arc::new(Creates::new(ns, &run, cli.size)),
        &cli.load_options(&create_label, endpoint.pid()),
    )
    .await;
    let result = |label: String, outcome: &runner::LoadOutcome, sent: usize, received: usize| {
        ScenarioResult {
            scenario: "rbac".into(),
            label,
            target: endpoint.target.clone(),
            load: Some(LoadResult::from_outcome(
                outcome,
                cli.concurrency,
                user.protocol(),
                user.pooled_connections(),
                sent,
                received,
                cli.warmup_s(),
            )),
            server_memory: endpoint.memory(),
            ..Default::default()
        }
    };
    Ok(vec![
        result(get_label, &gets, 0, probe.body.len()),
        result(create_label, &creates, cli.size, 0),
    ])
}

/// `roles` Roles and RoleBindings for users other than [`USER`], then the
/// Role and RoleBinding that let [`USER`] get and create ConfigMaps.
async fn seed_policy(admin: &Client, ns: &str, roles: usize) -> Result<(), BenchError> {
    let mut bodies = Vec::with_capacity(2 * roles + 2);
    for i in 0..roles {
        bodies.push((
            "roles",
            role(
                ns,
                &format!("other-{i}"),
                &format!(r#","resourceNames":["other-{i}"]"#),
                "get",
            ),
        ));
        bodies.push((
            "rolebindings",
            binding(ns, &format!("other-{i}"), &format!("user-{i}")),
        ));
    }
    bodies.push(("roles", role(ns, USER, "", r#"get","create"#)));
    bodies.push(("rolebindings", binding(ns, USER, USER)));
    let mut pending = bodies.into_iter();
    let mut in_flight = JoinSet::new();
    loop {
        while in_flight.len() < SETUP_PARALLELISM {
            let Some((resource, body)) = pending.next() else {
                break;
            };
            let admin = admin.clone();
            let path = format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/{resource}");
            in_flight.spawn(async move {
                let reply = admin
                    .request(Method::POST, &path, Some(Bytes::from(body)))
                    .await?;
                match reply.status {
                    StatusCode::CREATED | StatusCode::CONFLICT => Ok(()),
                    status => Err(setup_failure(&format!("POST {path}"), &status, &reply.body)),
                }
            });
        }
        match in_flight.join_next().await {
            None => return Ok(()),
            Some(Ok(result)) => result?,
            Some(Err(e)) => return Err(BenchError::Setup(format!("seeding RBAC objects: {e}"))),
        }
    }
}

/// A Role named `name` allowing `verbs` (JSON string contents, e.g.
/// `get","create`) on ConfigMaps; `extra` is appended to the rule.
fn role(ns: &str, name: &str, extra: &str, verbs: &str) -> String {
    format!(
        r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{{"name":"{name}","namespace":"{ns}"}},"rules":[{{"apiGroups":[""],"resources":["configmaps"],"verbs":["{verbs}"]{extra}}}]}}"#
    )
}

/// A RoleBinding of Role `name` to user `user`.
fn binding(ns: &str, name: &str, user: &str) -> String {
    format!(
        r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{{"name":"{name}","namespace":"{ns}"}},"roleRef":{{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"{name}"}},"subjects":[{{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"{user}"}}]}}"#
    )
}

/// The median throughput of `op` under RBAC over its median under
/// AlwaysAllow.
fn median_ratio(results: &[ScenarioResult], op: &str) -> Option<Ratio> {
    let median = |mode: &str| {
        let mut rates: Vec<f64> = results
            .iter()
            .filter(|r| {
                r.label.starts_with(&format!("rbac {mode} #"))
                    && r.label.ends_with(&format!(" {op}"))
            })
            .filter_map(|r| r.load.as_ref().map(|l| l.throughput_per_s))
            .collect();
        rates.sort_by(f64::total_cmp);
        rates.get(rates.len() / 2).copied()
    };
    let (baseline, rbac) = (median(MODES[0])?, median(MODES[1])?);
    Some(Ratio {
        name: format!("rbac {op}: RBAC / AlwaysAllow (medians)"),
        numerator: format!("RBAC {rbac:.0}/s"),
        denominator: format!("AlwaysAllow {baseline:.0}/s"),
        value: (ratio(rbac, baseline)? * 1000.0).round() / 1000.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_bodies_are_json() {
        for body in [
            role("ns", "other-1", r#","resourceNames":["other-1"]"#, "get"),
            role("ns", USER, "", r#"get","create"#),
            binding("ns", "other-1", "user-1"),
        ] {
            let value: serde_json::Value = serde_json::from_str(&body).expect("valid JSON");
            assert_eq!(value["metadata"]["namespace"], "ns");
        }
        let own: serde_json::Value =
            serde_json::from_str(&role("ns", USER, "", r#"get","create"#)).expect("valid JSON");
        assert_eq!(
            own["rules"][0]["verbs"],
            serde_json::json!(["get", "create"])
        );
    }
}
