//! The `faults` scenario's writers and what they record: every write a
//! writer sends to one of its own ConfigMaps, with its outcome —
//! acknowledged (with the returned resourceVersion), failed for certain
//! (a definitive 4xx), or uncertain (the connection broke or the server
//! answered 5xx: it may or may not have been committed, as for any
//! client of kube-apiserver).
//!
//! Each object has exactly one writer, and every write carries a
//! precondition on the state the writer last saw (create: absent; update:
//! `metadata.resourceVersion`; merge patch: `metadata.resourceVersion` in
//! the patch, which kube's `handlers/patch.go` enforces as optimistic
//! concurrency; delete: `preconditions.resourceVersion`), so a write that
//! was delayed can never land on top of a later one: the history of an
//! object is the writer's order, uncertain writes either landed in place
//! or never. Every write's `data.v` is unique, so what a watcher or a list
//! shows names the write that produced it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde_json::{json, Value};

use crate::client::{Client, ClientError, Reply, Session};

/// `namespace/name` of one ConfigMap.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Update,
    Patch,
    Delete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered 2xx; the resourceVersion of the object returned (none for
    /// a delete, which answers a `Status`).
    Acked(Option<u64>),
    /// May or may not have been committed.
    Uncertain,
    /// Certainly not committed (409, 404, 422, 429 …).
    Failed,
}

/// One write to one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    pub op: Op,
    /// The `data.v` written; none for a delete.
    pub content: Option<String>,
    pub outcome: Outcome,
}

/// An object's state as a GET showed it: (resourceVersion, `data.v`).
pub type Observed = (ObjectKey, u64, String);

/// What one writer did.
#[derive(Debug, Default)]
pub struct WriterLog {
    pub histories: BTreeMap<ObjectKey, Vec<Write>>,
    /// Reads made to learn the state after an uncertain or failed write.
    pub observed: Vec<Observed>,
    /// Outcomes by `HTTP <code>` or client error kind.
    pub tallies: BTreeMap<String, u64>,
    /// The first body or error of each failing outcome.
    pub samples: BTreeMap<String, String>,
    /// Requests that never left (connection refused while the server was
    /// down): not writes at all.
    pub not_sent: u64,
    /// Answers that contradict the request (a 2xx whose object lacks the
    /// content sent).
    pub problems: Vec<String>,
}

/// The label every object of a run carries; watchers select on it.
pub const RUN_LABEL: &str = "ferrokube-bench/faults-run";

/// A ConfigMap of this run with `data.v = content`, with
/// `resourceVersion` when given (an update's precondition).
pub fn configmap(key: &ObjectKey, run: &str, content: &str, rv: Option<u64>) -> Value {
    let mut metadata = json!({
        "name": key.name,
        "namespace": key.namespace,
        "labels": { RUN_LABEL: run },
    });
    if let Some(rv) = rv {
        metadata["resourceVersion"] = json!(rv.to_string());
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"v": content}})
}

/// (resourceVersion, `data.v`) of a ConfigMap body.
pub fn rv_and_content(object: &Value) -> Option<(u64, String)> {
    let rv = object["metadata"]["resourceVersion"]
        .as_str()?
        .parse()
        .ok()?;
    let content = object["data"]["v"].as_str().unwrap_or_default().to_string();
    Some((rv, content))
}

/// A small deterministic generator (splitmix64): runs repeat with `--seed`.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform between `low` and `high`.
    pub fn between(&mut self, low: Duration, high: Duration) -> Duration {
        low + (high.saturating_sub(low)).mul_f64(self.unit())
    }
}

/// What a writer believes about one of its objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Belief {
    Absent,
    Present(u64),
    Unknown,
}

/// Where a request ended.
enum Attempt {
    Answer(Reply),
    /// Refused before anything was sent.
    NotSent(&'static str),
    /// Broke after it may have reached the server.
    Broken(&'static str),
}

/// One writer's settings.
pub struct WriterConfig {
    pub client: Client,
    pub index: usize,
    pub run: String,
    pub keys: Vec<ObjectKey>,
    pub seed: u64,
    pub stop: Arc<AtomicBool>,
    pub timeout: Duration,
}

fn object_path(key: &ObjectKey) -> String {
    format!(
        "/api/v1/namespaces/{}/configmaps/{}",
        key.namespace, key.name
    )
}

async fn send(
    session: &mut Session,
    timeout: Duration,
    method: Method,
    path: &str,
    body: Option<Value>,
    content_type: &str,
) -> Attempt {
    let body = body.map(|b| Bytes::from(b.to_string()));
    match tokio::time::timeout(timeout, session.send_as(method, path, body, content_type)).await {
        Err(_) => Attempt::Broken("timeout"),
        Ok(Ok(reply)) => Attempt::Answer(reply),
        Ok(Err(
            e @ (ClientError::Connect { .. }
            | ClientError::Tls(_)
            | ClientError::Handshake(_)
            | ClientError::Config(_)
            | ClientError::Build(_)),
        )) => Attempt::NotSent(e.kind()),
        Ok(Err(e)) => Attempt::Broken(e.kind()),
    }
}

/// Whether an answer with `status` means the write certainly did not
/// happen: kube answers these before committing anything.
pub fn definitely_not_committed(status: StatusCode) -> bool {
    matches!(
        status.as_u16(),
        400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429
    )
}

/// Writes to the writer's keys until `stop`: creates, updates, merge
/// patches and deletes, each with its precondition.
pub async fn writer(config: WriterConfig) -> WriterLog {
    let mut log = WriterLog::default();
    let mut rng = Rng::new(config.seed);
    let mut session = config.client.session(config.index);
    let mut beliefs: Vec<Belief> = vec![Belief::Absent; config.keys.len()];
    let mut seq = 0u64;
    while !config.stop.load(Ordering::Relaxed) {
        let slot = rng.below(config.keys.len() as u64) as usize;
        let key = &config.keys[slot];
        let path = object_path(key);
        if beliefs[slot] == Belief::Unknown {
            match read_state(&mut session, config.timeout, &path, key, &mut log).await {
                Some(belief) => beliefs[slot] = belief,
                None => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            }
        }
        seq += 1;
        let content = format!("w{}-{seq}", config.index);
        let (op, method, target, body, content_type) = match beliefs[slot] {
            Belief::Absent | Belief::Unknown => (
                Op::Create,
                Method::POST,
                format!("/api/v1/namespaces/{}/configmaps", key.namespace),
                Some(configmap(key, &config.run, &content, None)),
                crate::client::JSON,
            ),
            Belief::Present(rv) => match rng.below(10) {
                0..=3 => (
                    Op::Update,
                    Method::PUT,
                    path.clone(),
                    Some(configmap(key, &config.run, &content, Some(rv))),
                    crate::client::JSON,
                ),
                4..=7 => (
                    Op::Patch,
                    Method::PATCH,
                    path.clone(),
                    Some(
                        json!({"metadata": {"resourceVersion": rv.to_string()}, "data": {"v": content}}),
                    ),
                    "application/merge-patch+json",
                ),
                _ => (
                    Op::Delete,
                    Method::DELETE,
                    path.clone(),
                    Some(json!({"apiVersion": "v1", "kind": "DeleteOptions",
                        "preconditions": {"resourceVersion": rv.to_string()}})),
                    crate::client::JSON,
                ),
            },
        };
        let sent = send(
            &mut session,
            config.timeout,
            method,
            &target,
            body,
            content_type,
        )
        .await;
        let content = (op != Op::Delete).then_some(content);
        let outcome = match sent {
            Attempt::NotSent(kind) => {
                log.not_sent += 1;
                *log.tallies.entry(kind.to_string()).or_default() += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Attempt::Broken(kind) => {
                *log.tallies.entry(kind.to_string()).or_default() += 1;
                Outcome::Uncertain
            }
            Attempt::Answer(reply) => {
                let tally = format!("HTTP {}", reply.status.as_u16());
                if !reply.status.is_success() && !log.samples.contains_key(&tally) {
                    let sample = crate::runner::snippet(&reply.body, 300);
                    log.samples
                        .insert(tally.clone(), format!("{op:?}: {sample}"));
                }
                *log.tallies.entry(tally).or_default() += 1;
                if reply.status.is_success() {
                    let answered = serde_json::from_slice::<Value>(&reply.body)
                        .ok()
                        .and_then(|v| rv_and_content(&v));
                    match (op, answered) {
                        (Op::Delete, _) => Outcome::Acked(None),
                        (_, Some((rv, got))) => {
                            if Some(&got) != content.as_ref() {
                                log.problems.push(format!(
                                    "{key}: a {op:?} of {content:?} answered {} with data.v {got:?}",
                                    reply.status
                                ));
                            }
                            Outcome::Acked(Some(rv))
                        }
                        (_, None) => Outcome::Acked(None),
                    }
                } else if definitely_not_committed(reply.status) {
                    Outcome::Failed
                } else {
                    Outcome::Uncertain
                }
            }
        };
        beliefs[slot] = match outcome {
            Outcome::Acked(Some(rv)) => Belief::Present(rv),
            Outcome::Acked(None) if op == Op::Delete => Belief::Absent,
            _ => Belief::Unknown,
        };
        if outcome == Outcome::Failed || outcome == Outcome::Uncertain {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        log.histories.entry(key.clone()).or_default().push(Write {
            op,
            content,
            outcome,
        });
    }
    // Objects never written still have a (empty) history: absent at the end.
    for key in config.keys {
        log.histories.entry(key).or_default();
    }
    log
}

/// A GET of the object: present (its resourceVersion, recorded as an
/// observation) or absent; none when the server gave no definite answer.
async fn read_state(
    session: &mut Session,
    timeout: Duration,
    path: &str,
    key: &ObjectKey,
    log: &mut WriterLog,
) -> Option<Belief> {
    let Attempt::Answer(reply) = send(
        session,
        timeout,
        Method::GET,
        path,
        None,
        crate::client::JSON,
    )
    .await
    else {
        return None;
    };
    match reply.status {
        StatusCode::NOT_FOUND => Some(Belief::Absent),
        StatusCode::OK => {
            let (rv, content) = serde_json::from_slice::<Value>(&reply.body)
                .ok()
                .and_then(|v| rv_and_content(&v))?;
            log.observed.push((key.clone(), rv, content));
            Some(Belief::Present(rv))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_repeats_with_its_seed() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let first: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        assert_eq!(first, (0..5).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(Rng::new(8).next_u64(), first[0]);
        for _ in 0..1000 {
            assert!(a.below(3) < 3);
            let u = a.unit();
            assert!((0.0..1.0).contains(&u));
            let d = a.between(Duration::from_secs(1), Duration::from_secs(2));
            assert!(d >= Duration::from_secs(1) && d <= Duration::from_secs(2));
        }
    }

    #[test]
    fn bodies_carry_the_run_label_and_precondition() {
        let key = ObjectKey {
            namespace: "ns".into(),
            name: "w0-k1".into(),
        };
        let created = configmap(&key, "abc", "w0-1", None);
        assert_eq!(created["metadata"]["labels"][RUN_LABEL], "abc");
        assert!(created["metadata"].get("resourceVersion").is_none());
        let updated = configmap(&key, "abc", "w0-2", Some(42));
        assert_eq!(updated["metadata"]["resourceVersion"], "42");
        assert_eq!(rv_and_content(&updated), Some((42, "w0-2".to_string())));
        assert_eq!(key.to_string(), "ns/w0-k1");
    }

    #[test]
    fn which_answers_mean_nothing_was_committed() {
        assert!(definitely_not_committed(StatusCode::CONFLICT));
        assert!(definitely_not_committed(StatusCode::TOO_MANY_REQUESTS));
        assert!(!definitely_not_committed(StatusCode::INTERNAL_SERVER_ERROR));
        assert!(!definitely_not_committed(StatusCode::GATEWAY_TIMEOUT));
        assert!(!definitely_not_committed(StatusCode::SERVICE_UNAVAILABLE));
    }
}
