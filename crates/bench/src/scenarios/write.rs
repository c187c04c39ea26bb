//! The write scenarios besides `create`: `update` (PUT read-modify-write),
//! `patch --type merge|apply` and `delete`. Each client works on objects of
//! its own, so no request conflicts with another's and every latency is
//! that of a successful write.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use hyper::{Method, StatusCode};

use super::{configmap_body, ensure_namespace, run_id, Endpoint};
use crate::cli::{Cli, PatchType, UpdateObject};
use crate::client::{Client, Reply};
use crate::report::{LoadResult, ScenarioResult};
use crate::runner::{self, snippet, LoadOptions, Stop, Workload};
use crate::BenchError;

pub const MERGE_PATCH: &str = "application/merge-patch+json";
pub const APPLY_PATCH: &str = "application/apply-patch+yaml";
/// The field manager of the apply scenarios (apply requires one).
pub const FIELD_MANAGER: &str = "ferrokube-bench";
/// Containers in the apply scenario's Deployment.
pub const DEPLOYMENT_CONTAINERS: usize = 50;

/// `metadata.resourceVersion` out of an object's JSON, without parsing
/// the whole object.
pub fn resource_version(body: &[u8]) -> Option<String> {
    const KEY: &[u8] = b"\"resourceVersion\":\"";
    let at = super::watch::find(body, KEY)? + KEY.len();
    let rest = &body[at..];
    let end = super::watch::find_byte(rest, b'"')?;
    std::str::from_utf8(&rest[..end]).ok().map(str::to_string)
}

/// A ConfigMap of exactly `size` bytes (or its minimum) carrying
/// `resourceVersion` (the precondition of a read-modify-write PUT; none
/// when empty, as an apply configuration has none) and a counter.
pub fn configmap_update_body(
    name: &str,
    namespace: &str,
    run: &str,
    resource_version: &str,
    seq: u64,
    size: usize,
) -> Vec<u8> {
    let rv = if resource_version.is_empty() {
        String::new()
    } else {
        format!(r#","resourceVersion":"{resource_version}""#)
    };
    let head = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"{namespace}"{rv},"labels":{{"app.kubernetes.io/managed-by":"ferrokube-bench","ferrokube-bench/run":"{run}"}}}},"data":{{"counter":"{seq}","payload":""#
    );
    let tail = r#""}}"#;
    let pad = size.saturating_sub(head.len() + tail.len());
    let mut body = Vec::with_capacity(head.len() + pad + tail.len());
    body.extend_from_slice(head.as_bytes());
    body.resize(head.len() + pad, b'x');
    body.extend_from_slice(tail.as_bytes());
    body
}

/// A Deployment with [`DEPLOYMENT_CONTAINERS`] containers, as an apply
/// configuration: the image tag of container `seq % 50` is `seq`, the
/// rest `1`, so each apply changes one field.
pub fn deployment_apply_body(name: &str, namespace: &str, run: &str, seq: u64) -> Vec<u8> {
    deployment_body(name, namespace, run, "", seq)
}

/// [`deployment_apply_body`] carrying `resourceVersion` (none when
/// empty): the same object as a read-modify-write PUT body.
pub fn deployment_body(
    name: &str,
    namespace: &str,
    run: &str,
    resource_version: &str,
    seq: u64,
) -> Vec<u8> {
    let rv = if resource_version.is_empty() {
        String::new()
    } else {
        format!(r#""resourceVersion":"{resource_version}","#)
    };
    let changed = (seq % DEPLOYMENT_CONTAINERS as u64) as usize;
    let containers: Vec<String> = (0..DEPLOYMENT_CONTAINERS)
        .map(|i| {
            let tag = if i == changed { seq } else { 1 };
            format!(
                concat!(
                    r#"{{"name":"c{i}","image":"registry.example/app-{i}:v{tag}","#,
                    r#""ports":[{{"name":"http-{i}","containerPort":{port},"protocol":"TCP"}}],"#,
                    r#""env":[{{"name":"INDEX","value":"{i}"}}],"#,
                    r#""resources":{{"requests":{{"cpu":"10m","memory":"16Mi"}}}}}}"#
                ),
                i = i,
                tag = tag,
                port = 8000 + i
            )
        })
        .collect();
    format!(
        concat!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}","namespace":"{namespace}",{rv}"#,
            r#""labels":{{"app.kubernetes.io/managed-by":"ferrokube-bench","ferrokube-bench/run":"{run}"}}}},"#,
            r#""spec":{{"replicas":1,"selector":{{"matchLabels":{{"app":"{name}"}}}},"#,
            r#""template":{{"metadata":{{"labels":{{"app":"{name}"}}}},"spec":{{"containers":[{containers}]}}}}}}}}"#
        ),
        name = name,
        namespace = namespace,
        rv = rv,
        run = run,
        containers = containers.join(",")
    )
    .into_bytes()
}

/// A status apply configuration for Deployment `name`: what a controller
/// reports after each reconcile.
pub fn deployment_status_body(name: &str, namespace: &str, seq: u64) -> Vec<u8> {
    format!(
        concat!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}","namespace":"{namespace}"}},"#,
            r#""status":{{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"#,
            r#""conditions":[{{"type":"Available","status":"True","reason":"MinimumReplicasAvailable","message":"reconcile {seq}"}}]}}}}"#
        ),
        name = name,
        namespace = namespace,
        seq = seq
    )
    .into_bytes()
}

/// `update`: worker `w` PUTs its own ConfigMap with the resourceVersion of
/// its previous answer, as a controller writing from its informer cache.
struct Updates {
    object: UpdateObject,
    namespace: String,
    run: String,
    size: usize,
    versions: Vec<Mutex<String>>,
}

impl Updates {
    fn name(&self, worker: usize) -> String {
        format!("bench-{}-u{worker}", self.run)
    }
}

impl Workload for Updates {
    fn request(&self, worker: usize, seq: u64) -> (Method, String, Option<Bytes>) {
        let rv = self
            .versions
            .get(worker)
            .and_then(|v| v.lock().ok().map(|v| v.clone()))
            .unwrap_or_default();
        let name = self.name(worker);
        let ns = &self.namespace;
        let (path, body) = match self.object {
            UpdateObject::Configmap => (
                format!("/api/v1/namespaces/{ns}/configmaps/{name}"),
                configmap_update_body(&name, ns, &self.run, &rv, seq, self.size),
            ),
            UpdateObject::Deployment50 => (
                format!("/apis/apps/v1/namespaces/{ns}/deployments/{name}"),
                deployment_body(&name, ns, &self.run, &rv, seq),
            ),
        };
        (Method::PUT, path, Some(Bytes::from(body)))
    }

    fn observe(&self, worker: usize, reply: &Reply) {
        if !reply.status.is_success() {
            return;
        }
        if let (Some(rv), Some(slot)) = (resource_version(&reply.body), self.versions.get(worker)) {
            if let Ok(mut slot) = slot.lock() {
                *slot = rv;
            }
        }
    }
}

/// What the patch workers send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchTarget {
    /// A merge patch of one data key of a ConfigMap.
    MergeConfigmap,
    /// An apply of a whole ConfigMap of --size bytes.
    ApplyConfigmap,
    /// An apply of a 50-container Deployment.
    ApplyDeployment,
    /// An apply of a Deployment's status through `/status`.
    ApplyStatus,
}

impl PatchTarget {
    pub fn label(self) -> &'static str {
        match self {
            PatchTarget::MergeConfigmap => "merge configmap",
            PatchTarget::ApplyConfigmap => "apply configmap",
            PatchTarget::ApplyDeployment => "apply deployment-50",
            PatchTarget::ApplyStatus => "apply deployment status",
        }
    }

    pub fn for_type(patch_type: PatchType) -> &'static [PatchTarget] {
        match patch_type {
            PatchType::Merge => &[PatchTarget::MergeConfigmap],
            PatchType::Apply => &[
                PatchTarget::ApplyConfigmap,
                PatchTarget::ApplyDeployment,
                PatchTarget::ApplyStatus,
            ],
        }
    }
}

struct Patches {
    target: PatchTarget,
    namespace: String,
    run: String,
    size: usize,
}

impl Patches {
    fn name(&self, worker: usize) -> String {
        format!("bench-{}-p{worker}", self.run)
    }

    fn path(&self, worker: usize) -> String {
        let ns = &self.namespace;
        let name = self.name(worker);
        match self.target {
            PatchTarget::MergeConfigmap => format!("/api/v1/namespaces/{ns}/configmaps/{name}"),
            PatchTarget::ApplyConfigmap => format!(
                "/api/v1/namespaces/{ns}/configmaps/{name}?fieldManager={FIELD_MANAGER}&force=true"
            ),
            PatchTarget::ApplyDeployment => format!(
                "/apis/apps/v1/namespaces/{ns}/deployments/{name}?fieldManager={FIELD_MANAGER}&force=true"
            ),
            PatchTarget::ApplyStatus => format!(
                "/apis/apps/v1/namespaces/{ns}/deployments/{name}/status?fieldManager={FIELD_MANAGER}-status&force=true"
            ),
        }
    }

    fn body(&self, worker: usize, seq: u64) -> Vec<u8> {
        let name = self.name(worker);
        match self.target {
            PatchTarget::MergeConfigmap => {
                format!(r#"{{"data":{{"counter":"{seq}"}}}}"#).into_bytes()
            }
            PatchTarget::ApplyConfigmap => {
                configmap_update_body(&name, &self.namespace, &self.run, "", seq, self.size)
            }
            PatchTarget::ApplyDeployment => {
                deployment_apply_body(&name, &self.namespace, &self.run, seq)
            }
            PatchTarget::ApplyStatus => deployment_status_body(&name, &self.namespace, seq),
        }
    }
}

impl Workload for Patches {
    fn request(&self, worker: usize, seq: u64) -> (Method, String, Option<Bytes>) {
        (
            Method::PATCH,
            self.path(worker),
            Some(Bytes::from(self.body(worker, seq))),
        )
    }

    fn content_type(&self) -> &str {
        match self.target {
            PatchTarget::MergeConfigmap => MERGE_PATCH,
            _ => APPLY_PATCH,
        }
    }
}

/// `delete`: worker requests in order over the --objects ConfigMaps
/// created beforehand.
struct Deletes {
    namespace: String,
    run: String,
    /// Bytes of an answer (the deleted object or a Status).
    response_bytes: std::sync::atomic::AtomicUsize,
}

impl Workload for Deletes {
    fn request(&self, _worker: usize, seq: u64) -> (Method, String, Option<Bytes>) {
        (
            Method::DELETE,
            format!(
                "/api/v1/namespaces/{}/configmaps/bench-{}-{seq}",
                self.namespace, self.run
            ),
            None,
        )
    }

    fn observe(&self, _worker: usize, reply: &Reply) {
        if reply.status.is_success() {
            self.response_bytes
                .store(reply.body.len(), std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Creates ConfigMaps `bench-<run>-<seq>` for seq in 0..count.
struct Seed {
    namespace: String,
    run: String,
    size: usize,
}

impl Workload for Seed {
    fn request(&self, _worker: usize, seq: u64) -> (Method, String, Option<Bytes>) {
        let name = format!("bench-{}-{seq}", self.run);
        (
            Method::POST,
            format!("/api/v1/namespaces/{}/configmaps", self.namespace),
            Some(Bytes::from(configmap_body(
                &name,
                &self.namespace,
                &self.run,
                self.size,
            ))),
        )
    }
}

/// What [`seed_configmaps`] creates, and how.
pub struct SeedPlan<'a> {
    pub namespace: &'a str,
    /// Names are `bench-<run>-<seq>`, seq in 0..count.
    pub run: &'a str,
    pub count: u64,
    /// Bytes of each ConfigMap.
    pub size: usize,
    pub concurrency: usize,
    /// Progress line prefix.
    pub progress: Option<String>,
    pub server_pid: Option<u32>,
}

/// Creates the ConfigMaps of `plan`; fails on the first error kind.
pub async fn seed_configmaps(
    client: &Client,
    plan: SeedPlan<'_>,
) -> Result<runner::LoadOutcome, BenchError> {
    let count = plan.count;
    let outcome = runner::run(
        client,
        Arc::new(Seed {
            namespace: plan.namespace.to_string(),
            run: plan.run.to_string(),
            size: plan.size,
        }),
        &LoadOptions {
            concurrency: plan.concurrency,
            stop: Stop::Requests(count),
            timeout: std::time::Duration::from_secs(60),
            progress: plan.progress,
            server_pid: plan.server_pid,
            rate: 0.0,
        },
    )
    .await;
    if let Some((what, tally)) = outcome.error_kinds.iter().next() {
        return Err(BenchError::Setup(format!(
            "creating {count} ConfigMaps: {} failed, e.g. {what}: {}",
            outcome.errors, tally.sample
        )));
    }
    Ok(outcome)
}

/// A load result; `bytes` is (object, response).
fn load_result(
    cli: &Cli,
    endpoint: &Endpoint,
    client: &Client,
    (scenario, label): (&str, &str),
    outcome: &runner::LoadOutcome,
    (object_bytes, response_bytes): (usize, usize),
    warmup_s: f64,
) -> ScenarioResult {
    ScenarioResult {
        scenario: scenario.into(),
        label: label.to_string(),
        target: endpoint.target.clone(),
        load: Some(LoadResult::from_outcome(
            outcome,
            cli.concurrency,
            client.protocol(),
            client.pooled_connections(),
            object_bytes,
            response_bytes,
            warmup_s,
        )),
        server_memory: endpoint.memory(),
        ..Default::default()
    }
}

fn setup_error(what: &str, reply: &Reply) -> BenchError {
    BenchError::Setup(format!(
        "{what}: HTTP {}: {}",
        reply.status.as_u16(),
        snippet(&reply.body, 400)
    ))
}

pub async fn run_update(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<ScenarioResult, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let label = match cli.update_object {
        UpdateObject::Configmap => label.to_string(),
        UpdateObject::Deployment50 => format!("{label} deployment-50"),
    };
    let label = label.as_str();
    let updates = Updates {
        object: cli.update_object,
        namespace: cli.namespace.clone(),
        run: run_id(),
        size: cli.size,
        versions: (0..cli.concurrency)
            .map(|_| Mutex::new(String::new()))
            .collect(),
    };
    let ns = &cli.namespace;
    let collection = match cli.update_object {
        UpdateObject::Configmap => format!("/api/v1/namespaces/{ns}/configmaps"),
        UpdateObject::Deployment50 => format!("/apis/apps/v1/namespaces/{ns}/deployments"),
    };
    let mut response_bytes = 0;
    let mut object_bytes = cli.size;
    for worker in 0..cli.concurrency {
        let name = updates.name(worker);
        let body = match cli.update_object {
            UpdateObject::Configmap => configmap_body(&name, ns, &updates.run, cli.size),
            UpdateObject::Deployment50 => deployment_body(&name, ns, &updates.run, "", 0),
        };
        object_bytes = body.len();
        let reply = client
            .request(Method::POST, &collection, Some(Bytes::from(body)))
            .await?;
        if !reply.status.is_success() {
            return Err(setup_error("creating the objects to update", &reply));
        }
        updates.observe(worker, &reply);
        response_bytes = reply.body.len();
    }
    let outcome = runner::run(
        &client,
        Arc::new(updates),
        &cli.load_options(label, endpoint.pid()),
    )
    .await;
    Ok(load_result(
        cli,
        endpoint,
        &client,
        ("update", label),
        &outcome,
        (object_bytes, response_bytes),
        cli.warmup_s(),
    ))
}

/// One patch run per target of `--type`. A target the server rejects with
/// 415 (a patch type it does not implement) is reported as unsupported.
pub async fn run_patch(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<Vec<ScenarioResult>, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let mut results = Vec::new();
    for &target in PatchTarget::for_type(cli.patch_type) {
        let label = format!("{label} {}", target.label());
        let patches = Patches {
            target,
            namespace: cli.namespace.clone(),
            run: run_id(),
            size: cli.size,
        };
        // Each worker's object exists before the run: created by POST for
        // merge, by the first apply for apply (the status target needs
        // the Deployment first).
        let mut probe = None;
        let mut unsupported = None;
        for worker in 0..cli.concurrency {
            let name = patches.name(worker);
            let (create_path, create_body, create_type) = match target {
                PatchTarget::MergeConfigmap => (
                    format!("/api/v1/namespaces/{}/configmaps", cli.namespace),
                    configmap_body(&name, &cli.namespace, &patches.run, cli.size),
                    crate::client::JSON,
                ),
                PatchTarget::ApplyConfigmap => (
                    patches.path(worker),
                    patches.body(worker, 0),
                    APPLY_PATCH,
                ),
                PatchTarget::ApplyDeployment | PatchTarget::ApplyStatus => (
                    format!(
                        "/apis/apps/v1/namespaces/{}/deployments/{name}?fieldManager={FIELD_MANAGER}&force=true",
                        cli.namespace
                    ),
                    deployment_apply_body(&name, &cli.namespace, &patches.run, 0),
                    APPLY_PATCH,
                ),
            };
            let method = if create_type == APPLY_PATCH {
                Method::PATCH
            } else {
                Method::POST
            };
            let reply = client
                .request_as(
                    method,
                    &create_path,
                    Some(Bytes::from(create_body)),
                    create_type,
                )
                .await?;
            if reply.status == StatusCode::UNSUPPORTED_MEDIA_TYPE {
                unsupported = Some(unsupported_text(&reply));
                break;
            }
            if !reply.status.is_success() {
                return Err(setup_error(&format!("{label}: setup"), &reply));
            }
            // One patch up front: 415 now means the patch type itself.
            let reply = client
                .request_as(
                    Method::PATCH,
                    &patches.path(worker),
                    Some(Bytes::from(patches.body(worker, 1))),
                    patches.content_type(),
                )
                .await?;
            if reply.status == StatusCode::UNSUPPORTED_MEDIA_TYPE {
                unsupported = Some(unsupported_text(&reply));
                break;
            }
            if !reply.status.is_success() {
                return Err(setup_error(&format!("{label}: first patch"), &reply));
            }
            probe = Some(reply.body.len());
        }
        if let Some(why) = unsupported {
            runner::note(cli.quiet, &format!("{label}: not measured: {why}"));
            results.push(ScenarioResult {
                scenario: "patch".into(),
                label,
                target: endpoint.target.clone(),
                unsupported: Some(why),
                ..Default::default()
            });
            continue;
        }
        let object_bytes = patches.body(0, 2).len();
        let outcome = runner::run(
            &client,
            Arc::new(patches),
            &cli.load_options(&label, endpoint.pid()),
        )
        .await;
        results.push(load_result(
            cli,
            endpoint,
            &client,
            ("patch", &label),
            &outcome,
            (object_bytes, probe.unwrap_or(0)),
            cli.warmup_s(),
        ));
    }
    Ok(results)
}

/// How a 415 is reported: the server's own words.
pub fn unsupported_text(reply: &Reply) -> String {
    let message = serde_json::from_slice::<serde_json::Value>(&reply.body)
        .ok()
        .and_then(|v| {
            v.get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| snippet(&reply.body, 200));
    format!(
        "HTTP {} {}: {message}",
        reply.status.as_u16(),
        reply.status.canonical_reason().unwrap_or("")
    )
}

/// `delete`: --objects ConfigMaps created first (not measured), then
/// deleted once each by --concurrency clients; always counted, never
/// timed (a deleted object cannot be deleted again).
pub async fn run_delete(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<ScenarioResult, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let run = run_id();
    let count = cli.objects as u64;
    seed_configmaps(
        &client,
        SeedPlan {
            namespace: &cli.namespace,
            run: &run,
            count,
            size: cli.size,
            concurrency: cli.concurrency,
            progress: (!cli.quiet).then(|| format!("{label}: creating")),
            server_pid: endpoint.pid(),
        },
    )
    .await?;
    let deletes = Arc::new(Deletes {
        namespace: cli.namespace.clone(),
        run,
        response_bytes: Default::default(),
    });
    let mut options = cli.load_options(label, endpoint.pid());
    options.stop = Stop::Requests(count);
    let outcome = runner::run(&client, deletes.clone(), &options).await;
    let response_bytes = deletes
        .response_bytes
        .load(std::sync::atomic::Ordering::Relaxed);
    Ok(load_result(
        cli,
        endpoint,
        &client,
        ("delete", label),
        &outcome,
        (cli.size, response_bytes),
        0.0,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_resource_versions() {
        let body =
            br#"{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"12345","uid":"x"}}"#;
        assert_eq!(resource_version(body), Some("12345".into()));
        assert_eq!(resource_version(b"{}"), None);
        assert_eq!(resource_version(br#"{"resourceVersion":"12"#), None);
    }

    #[test]
    fn update_bodies_carry_the_precondition_and_keep_their_size() {
        for size in [400, 1024, 4096] {
            let body = configmap_update_body("bench-r-u0", "ns", "r", "77", 5, size);
            assert_eq!(body.len(), size, "{}", String::from_utf8_lossy(&body));
            let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
            assert_eq!(v["metadata"]["resourceVersion"], "77");
            assert_eq!(v["metadata"]["name"], "bench-r-u0");
            assert_eq!(v["data"]["counter"], "5");
            assert_eq!(v["metadata"]["labels"]["ferrokube-bench/run"], "r");
        }
    }

    #[test]
    fn deployment_update_bodies_carry_the_precondition() {
        let body = deployment_body("bench-r-u0", "ns", "r", "77", 3);
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["metadata"]["resourceVersion"], "77");
        let containers = v["spec"]["template"]["spec"]["containers"]
            .as_array()
            .expect("containers");
        assert_eq!(containers.len(), DEPLOYMENT_CONTAINERS);
        assert_eq!(containers[3]["image"], "registry.example/app-3:v3");
        let apply: serde_json::Value =
            serde_json::from_slice(&deployment_apply_body("bench-r-u0", "ns", "r", 3))
                .expect("json");
        assert!(apply["metadata"].get("resourceVersion").is_none());
    }

    #[test]
    fn patch_bodies_are_what_each_target_needs() {
        let patches = |target| Patches {
            target,
            namespace: "ns".into(),
            run: "r".into(),
            size: 1024,
        };
        let merge = patches(PatchTarget::MergeConfigmap);
        assert_eq!(merge.content_type(), MERGE_PATCH);
        assert_eq!(merge.body(0, 3), br#"{"data":{"counter":"3"}}"#.to_vec());
        assert_eq!(merge.path(2), "/api/v1/namespaces/ns/configmaps/bench-r-p2");

        let apply = patches(PatchTarget::ApplyConfigmap);
        assert_eq!(apply.content_type(), APPLY_PATCH);
        assert!(apply.path(0).contains("fieldManager=ferrokube-bench"));
        let v: serde_json::Value = serde_json::from_slice(&apply.body(0, 9)).expect("json");
        assert!(v["metadata"].get("resourceVersion").is_none(), "{v}");
        assert_eq!(v["data"]["counter"], "9");

        let deployment = patches(PatchTarget::ApplyDeployment);
        let v: serde_json::Value = serde_json::from_slice(&deployment.body(1, 53)).expect("json");
        let containers = v["spec"]["template"]["spec"]["containers"]
            .as_array()
            .expect("containers");
        assert_eq!(containers.len(), DEPLOYMENT_CONTAINERS);
        assert_eq!(containers[3]["image"], "registry.example/app-3:v53");
        assert_eq!(containers[4]["image"], "registry.example/app-4:v1");

        let status = patches(PatchTarget::ApplyStatus);
        assert!(status.path(0).contains("/deployments/bench-r-p0/status?"));
        let v: serde_json::Value = serde_json::from_slice(&status.body(0, 4)).expect("json");
        assert_eq!(v["status"]["conditions"][0]["message"], "reconcile 4");
        assert_eq!(
            PatchTarget::for_type(PatchType::Apply).len(),
            3,
            "configmap, deployment, status"
        );
    }

    #[test]
    fn deletes_walk_the_seeded_names() {
        let d = Deletes {
            namespace: "ns".into(),
            run: "r".into(),
            response_bytes: Default::default(),
        };
        let (method, path, body) = d.request(3, 17);
        assert_eq!(method, Method::DELETE);
        assert_eq!(path, "/api/v1/namespaces/ns/configmaps/bench-r-17");
        assert!(body.is_none());
        let seed = Seed {
            namespace: "ns".into(),
            run: "r".into(),
            size: 300,
        };
        let (_, _, body) = seed.request(0, 17);
        let v: serde_json::Value = serde_json::from_slice(&body.expect("body")).expect("json");
        assert_eq!(v["metadata"]["name"], "bench-r-17");
    }

    #[test]
    fn unsupported_text_quotes_the_server() {
        let reply = Reply {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            body: Bytes::from_static(
                br#"{"kind":"Status","message":"the body of the request was in an unknown format - accepted media types include: application/json-patch+json","code":415}"#,
            ),
        };
        let text = unsupported_text(&reply);
        assert!(
            text.starts_with("HTTP 415 Unsupported Media Type: the body"),
            "{text}"
        );
    }
}
