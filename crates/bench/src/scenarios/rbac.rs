//! `rbac`: what authorization costs a request. The same binary is started
//! with `--authorization-mode=AlwaysAllow` and with `RBAC`, --runs rounds
//! alternating the two. Each server holds --roles Roles and as many
//! RoleBindings (each binding a user of its own, in the namespace the
//! requests go to: the worst place for an authorizer that scans), plus one
//! Role and RoleBinding letting user `bench` get and create ConfigMaps
//! there. As `bench` (a bearer token from `--token-auth-file`): C clients
//! GET one ConfigMap, then create ConfigMaps. The medians of each mode and
//! the ratio RBAC / AlwaysAllow are reported.
//!
//! With `--service-account` the same is measured again on each server as
//! ServiceAccount [`SERVICE_ACCOUNT`] of the namespace, authenticated by a
//! TokenRequest token (`serviceaccounts/{name}/token`: a JWT verified on
//! every request, with its ServiceAccount looked up) and granted by a
//! RoleBinding of the same Role to the ServiceAccount subject (`sa-get`,
//! `sa-create`). Besides their RBAC / AlwaysAllow ratios, the ratio of the
//! ServiceAccount's rates to the token-file user's under RBAC is reported:
//! both come from the same server, so it is what a service-account caller
//! pays over a static-token one.

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
/// The ServiceAccount measured with `--service-account`.
const SERVICE_ACCOUNT: &str = "bench-sa";
/// The lifetime asked for the ServiceAccount's token: longer than any run.
const TOKEN_SECONDS: u64 = 3600;
/// The authorization modes compared, the baseline first.
const MODES: [&str; 2] = ["AlwaysAllow", "RBAC"];
/// Setup requests in flight at once.
const SETUP_PARALLELISM: usize = 32;

/// Results of every run, and the ratios of the medians.
pub async fn run(cli: &Cli) -> Result<(Vec<ScenarioResult>, Vec<Ratio>), BenchError> {
    let token_file = write_token_file()?;
    let mut results = Vec::new();
    for round in 1..=cli.runs {
        for mode in super::paired::round_order(round, &MODES) {
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
    let ops: &[&str] = if cli.service_account {
        &["get", "create", "sa-get", "sa-create"]
    } else {
        &["get", "create"]
    };
    let mut ratios = ops
        .iter()
        .filter_map(|op| median_ratio(&results, op))
        .collect::<Vec<_>>();
    if cli.service_account {
        ratios.extend(
            [("sa-get", "get"), ("sa-create", "create")]
                .into_iter()
                .filter_map(|(sa, user)| identity_ratio(&results, sa, user)),
        );
    }
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
        Arc::new(FixedGet { path: path.clone() }),
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
    let mut measured = vec![
        result(get_label, &gets, 0, probe.body.len()),
        result(create_label, &creates, cli.size, 0),
    ];
    if cli.service_account {
        let account = service_account_client(cli, endpoint, &admin, ns).await?;
        let probe = account.request(Method::GET, &path, None).await?;
        if probe.status != StatusCode::OK {
            return Err(setup_failure(
                &format!("GET {path} as ServiceAccount {ns}/{SERVICE_ACCOUNT}"),
                &probe.status,
                &probe.body,
            ));
        }
        let sa_get_label = format!("{label} sa-get");
        let sa_gets = runner::run(
            &account,
            Arc::new(FixedGet { path }),
            &cli.load_options(&sa_get_label, endpoint.pid()),
        )
        .await;
        let sa_create_label = format!("{label} sa-create");
        let sa_creates = runner::run(
            &account,
            Arc::new(Creates::new(ns, &format!("{run}-sa"), cli.size)),
            &cli.load_options(&sa_create_label, endpoint.pid()),
        )
        .await;
        measured.push(result(sa_get_label, &sa_gets, 0, probe.body.len()));
        measured.push(result(sa_create_label, &sa_creates, cli.size, 0));
    }
    Ok(measured)
}

/// Creates ServiceAccount [`SERVICE_ACCOUNT`] and a RoleBinding of the
/// [`USER`] Role to it, asks its `token` subresource for a token and returns
/// a client that sends only that token.
async fn service_account_client(
    cli: &Cli,
    endpoint: &Endpoint,
    admin: &Client,
    ns: &str,
) -> Result<Client, BenchError> {
    let accounts = format!("/api/v1/namespaces/{ns}/serviceaccounts");
    let setup = [
        (accounts.clone(), service_account(ns)),
        (
            format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings"),
            service_account_binding(ns),
        ),
    ];
    for (path, body) in setup {
        let reply = admin
            .request(Method::POST, &path, Some(Bytes::from(body)))
            .await?;
        if !matches!(reply.status, StatusCode::CREATED | StatusCode::CONFLICT) {
            return Err(setup_failure(
                &format!("POST {path}"),
                &reply.status,
                &reply.body,
            ));
        }
    }
    let token_path = format!("{accounts}/{SERVICE_ACCOUNT}/token");
    let reply = admin
        .request(
            Method::POST,
            &token_path,
            Some(Bytes::from(token_request_body())),
        )
        .await?;
    if reply.status != StatusCode::CREATED {
        return Err(setup_failure(
            &format!("POST {token_path}"),
            &reply.status,
            &reply.body,
        ));
    }
    let token = issued_token(&reply.body).ok_or_else(|| {
        BenchError::Setup(format!(
            "POST {token_path}: no status.token in {}",
            String::from_utf8_lossy(&reply.body)
        ))
    })?;
    let mut config = endpoint.kubeconfig.clone();
    config.credentials = Credentials::Token(token);
    Ok(Client::connect(&config, cli.client_options()).await?)
}

/// ServiceAccount [`SERVICE_ACCOUNT`] in `ns`.
fn service_account(ns: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ServiceAccount","metadata":{{"name":"{SERVICE_ACCOUNT}","namespace":"{ns}"}}}}"#
    )
}

/// A RoleBinding of the [`USER`] Role to ServiceAccount [`SERVICE_ACCOUNT`].
fn service_account_binding(ns: &str) -> String {
    format!(
        r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{{"name":"{SERVICE_ACCOUNT}","namespace":"{ns}"}},"roleRef":{{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"{USER}"}},"subjects":[{{"kind":"ServiceAccount","name":"{SERVICE_ACCOUNT}","namespace":"{ns}"}}]}}"#
    )
}

/// A TokenRequest for the server's own audiences, [`TOKEN_SECONDS`] long.
fn token_request_body() -> String {
    format!(
        r#"{{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{{"expirationSeconds":{TOKEN_SECONDS}}}}}"#
    )
}

/// `status.token` of a TokenRequest answer.
fn issued_token(body: &[u8]) -> Option<String> {
    let answer: serde_json::Value = serde_json::from_slice(body).ok()?;
    answer["status"]["token"]
        .as_str()
        .filter(|token| !token.is_empty())
        .map(str::to_string)
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

/// The median throughput of `op` (a label's last word) under `mode`.
fn median(results: &[ScenarioResult], mode: &str, op: &str) -> Option<f64> {
    let mut rates: Vec<f64> = results
        .iter()
        .filter(|r| {
            r.label.starts_with(&format!("rbac {mode} #")) && r.label.ends_with(&format!(" {op}"))
        })
        .filter_map(|r| r.load.as_ref().map(|l| l.throughput_per_s))
        .collect();
    rates.sort_by(f64::total_cmp);
    rates.get(rates.len() / 2).copied()
}

/// Under RBAC, the median throughput of the ServiceAccount's `sa_op` over
/// the token-file user's `user_op`.
fn identity_ratio(results: &[ScenarioResult], sa_op: &str, user_op: &str) -> Option<Ratio> {
    let mode = MODES[1];
    let (user, account) = (
        median(results, mode, user_op)?,
        median(results, mode, sa_op)?,
    );
    Some(Ratio {
        name: format!(
            "rbac {sa_op}: ServiceAccount token / token-file user under {mode} (medians)"
        ),
        numerator: format!("ServiceAccount {account:.0}/s"),
        denominator: format!("user {user:.0}/s"),
        value: (ratio(account, user)? * 1000.0).round() / 1000.0,
    })
}

/// The median throughput of `op` under RBAC over its median under
/// AlwaysAllow.
fn median_ratio(results: &[ScenarioResult], op: &str) -> Option<Ratio> {
    let (baseline, rbac) = (
        median(results, MODES[0], op)?,
        median(results, MODES[1], op)?,
    );
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
            service_account("ns"),
            service_account_binding("ns"),
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

    #[test]
    fn the_service_account_is_bound_to_the_users_role() {
        let binding: serde_json::Value =
            serde_json::from_str(&service_account_binding("ns")).expect("valid JSON");
        assert_eq!(binding["roleRef"]["name"], USER);
        assert_eq!(
            binding["subjects"][0],
            serde_json::json!({"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": "ns"})
        );
        let request: serde_json::Value =
            serde_json::from_str(&token_request_body()).expect("valid JSON");
        assert_eq!(request["spec"]["expirationSeconds"], TOKEN_SECONDS);
    }

    #[test]
    fn the_token_is_read_from_the_status() {
        assert_eq!(
            issued_token(br#"{"status":{"token":"abc","expirationTimestamp":"x"}}"#).as_deref(),
            Some("abc")
        );
        assert_eq!(issued_token(br#"{"status":{"token":""}}"#), None);
        assert_eq!(issued_token(b"not json"), None);
    }

    fn measured(label: &str, rate: f64) -> ScenarioResult {
        ScenarioResult {
            label: label.into(),
            load: Some(LoadResult {
                concurrency: 1,
                protocol: "h2".into(),
                connections: 1,
                object_bytes: 0,
                response_bytes: 0,
                duration_s: 1.0,
                warmup_s: 0.0,
                requests: rate as u64,
                errors: 0,
                throughput_per_s: rate,
                latency: crate::stats::LatencySummary::default(),
                errors_by_kind: Default::default(),
                cpu: None,
                distribution: Vec::new(),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn ratios_pair_the_medians_of_the_same_operation() {
        let results = vec![
            measured("rbac AlwaysAllow #1 get", 1000.0),
            measured("rbac RBAC #1 get", 900.0),
            measured("rbac AlwaysAllow #1 sa-get", 800.0),
            measured("rbac RBAC #1 sa-get", 720.0),
        ];
        let user = median_ratio(&results, "get").expect("a ratio");
        assert_eq!(user.value, 0.9);
        let account = median_ratio(&results, "sa-get").expect("a ratio");
        assert_eq!(account.value, 0.9);
        let identity = identity_ratio(&results, "sa-get", "get").expect("a ratio");
        assert_eq!(identity.value, 0.8);
    }
}
