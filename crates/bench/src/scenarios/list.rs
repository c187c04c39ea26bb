//! `list`: --objects Pods (or ConfigMaps of --size bytes) created in
//! parallel by --concurrency clients, then listed --runs times each way,
//! alternating: (a) one unpaginated LIST, (b) a chunked LIST with
//! `limit=--page-size` following continue tokens to the end, as client-go's
//! pager does (each page requested when the previous one is in). Each is
//! timed from the first request to the last byte of the last page, on the
//! client (the body kept as received, not copied into one buffer): the
//! server reports no time of its own. The chunked total over
//! the unpaginated one is the ratio reported. One unmeasured list of each
//! kind goes first.
//!
//! `--accept` sets the Accept header of both; the answer's Content-Type
//! decides how the continue token is read (JSON, or the Kubernetes protobuf
//! envelope).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::CONTENT_TYPE;
use hyper::{Method, StatusCode};
use serde::de::IgnoredAny;
use serde::Deserialize;

use super::watch::{find, find_byte};
use super::{configmap_body, ensure_namespace, run_id, Endpoint};
use crate::cli::{Cli, ObjectKind};
use crate::client::{Client, Session};
use crate::cpu;
use crate::report::{ListResult, ListSetup, ListTiming, ScenarioResult};
use crate::runner::{self, snippet, LoadOptions, Stop, Workload};
use crate::stats::{round3, MinMedMax};
use crate::BenchError;

/// A Pod as a Deployment would stamp it: two containers with ports, env,
/// resources, a probe and volume mounts, app labels, an annotation. About
/// 1.5 KiB of JSON; the server adds its defaults.
pub fn pod_body(name: &str, namespace: &str, run: &str) -> Vec<u8> {
    format!(
        concat!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"{namespace}","#,
            r#""labels":{{"app.kubernetes.io/name":"bench-web","app.kubernetes.io/instance":"bench-{run}","#,
            r#""app.kubernetes.io/component":"frontend","app.kubernetes.io/managed-by":"ferrokube-bench","#,
            r#""ferrokube-bench/run":"{run}","pod-template-hash":"7d4b9c8f6d"}},"#,
            r#""annotations":{{"kubectl.kubernetes.io/default-container":"web","#,
            r#""prometheus.io/scrape":"true","prometheus.io/port":"9090"}}}},"#,
            r#""spec":{{"containers":[{{"name":"web","image":"registry.k8s.io/nginx-slim:0.27","#,
            r#""ports":[{{"name":"http","containerPort":8080,"protocol":"TCP"}},"#,
            r#"{{"name":"metrics","containerPort":9090,"protocol":"TCP"}}],"#,
            r#""env":[{{"name":"POD_NAME","valueFrom":{{"fieldRef":{{"fieldPath":"metadata.name"}}}}}},"#,
            r#"{{"name":"LOG_LEVEL","value":"info"}}],"#,
            r#""resources":{{"requests":{{"cpu":"100m","memory":"128Mi"}},"limits":{{"cpu":"500m","memory":"256Mi"}}}},"#,
            r#""readinessProbe":{{"httpGet":{{"path":"/healthz","port":8080}},"periodSeconds":10}},"#,
            r#""volumeMounts":[{{"name":"config","mountPath":"/etc/web","readOnly":true}}]}},"#,
            r#"{{"name":"log-shipper","image":"docker.io/fluent/fluent-bit:3.0.7","#,
            r#""args":["--config=/fluent-bit/etc/fluent-bit.conf"],"#,
            r#""resources":{{"requests":{{"cpu":"50m","memory":"64Mi"}},"limits":{{"cpu":"200m","memory":"128Mi"}}}},"#,
            r#""volumeMounts":[{{"name":"varlog","mountPath":"/var/log"}}]}}],"#,
            r#""volumes":[{{"name":"config","configMap":{{"name":"web-config"}}}},"#,
            r#"{{"name":"varlog","emptyDir":{{}}}}],"#,
            r#""terminationGracePeriodSeconds":30,"serviceAccountName":"default","#,
            r#""nodeSelector":{{"kubernetes.io/os":"linux"}}}}}}"#
        ),
        name = name,
        namespace = namespace,
        run = run,
    )
    .into_bytes()
}

pub(crate) struct Creates {
    pub(crate) kind: ObjectKind,
    pub(crate) namespace: String,
    pub(crate) run: String,
    pub(crate) path: String,
    pub(crate) size: usize,
}

impl Creates {
    pub(crate) fn body(&self, seq: u64) -> Vec<u8> {
        let name = format!("bench-{}-{seq}", self.run);
        match self.kind {
            ObjectKind::Pod => pod_body(&name, &self.namespace, &self.run),
            ObjectKind::Configmap => configmap_body(&name, &self.namespace, &self.run, self.size),
        }
    }
}

impl Workload for Creates {
    fn request(&self, _worker: usize, seq: u64) -> (Method, String, Option<Bytes>) {
        (
            Method::POST,
            self.path.clone(),
            Some(Bytes::from(self.body(seq))),
        )
    }
}

/// One response, timed. The body is kept as the DATA frames came, so the
/// time to the last byte includes no copy into one buffer.
pub(crate) struct Fetched {
    /// Request sent to response head in.
    pub(crate) head: Duration,
    pub(crate) chunks: Vec<Bytes>,
    pub(crate) content_type: String,
}

pub(crate) async fn fetch(
    session: &mut Session,
    path: &str,
    accept: &str,
    timeout: Duration,
) -> Result<Fetched, BenchError> {
    let mut chunks = Vec::new();
    let (head, content_type) = fetch_with(session, path, accept, timeout, |data| {
        chunks.push(data);
    })
    .await?;
    Ok(Fetched {
        head,
        chunks,
        content_type,
    })
}

/// One response, timed, its body copied into `body` (cleared first) as the
/// DATA frames come, and the frames dropped: as client-go reads a body into
/// one buffer. With `body` reused, a large list's bytes land in memory that
/// is already the process's; keeping the frames instead made every list
/// fault in tens of MB of fresh pages, which slowed the client enough to
/// stretch the server's measured time. Returns the head time and content type.
pub(crate) async fn fetch_into(
    session: &mut Session,
    path: &str,
    accept: &str,
    timeout: Duration,
    body: &mut Vec<u8>,
) -> Result<(Duration, String), BenchError> {
    body.clear();
    fetch_with(session, path, accept, timeout, |data| {
        body.extend_from_slice(&data);
    })
    .await
}

async fn fetch_with(
    session: &mut Session,
    path: &str,
    accept: &str,
    timeout: Duration,
    mut on_data: impl FnMut(Bytes),
) -> Result<(Duration, String), BenchError> {
    let started = Instant::now();
    let work = async {
        let response = session.open(Method::GET, path, None, accept).await?;
        let head = started.elapsed();
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let mut body = response.into_body();
        let mut error_body = Vec::new();
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame.map_err(crate::client::ClientError::Body)?.into_data() {
                if status == StatusCode::OK {
                    on_data(data);
                } else if error_body.len() < 4096 {
                    error_body.extend_from_slice(&data);
                }
            }
        }
        Ok::<_, BenchError>((status, head, content_type, error_body))
    };
    let (status, head, content_type, error_body) = tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| BenchError::Setup(format!("GET {path}: no answer within {timeout:?}")))??;
    if status != StatusCode::OK {
        return Err(BenchError::Setup(format!(
            "GET {path}: HTTP {}: {}",
            status.as_u16(),
            snippet(&error_body, 400)
        )));
    }
    Ok((head, content_type))
}

/// The chunks as one buffer.
pub(crate) fn concat(chunks: &[Bytes]) -> Vec<u8> {
    let mut all = Vec::with_capacity(chunks.iter().map(Bytes::len).sum());
    for chunk in chunks {
        all.extend_from_slice(chunk);
    }
    all
}

/// How to read a list answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Protobuf,
}

impl Format {
    pub fn of(content_type: &str) -> Result<Format, String> {
        let media = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match media.as_str() {
            "application/json" => Ok(Format::Json),
            "application/vnd.kubernetes.protobuf" => Ok(Format::Protobuf),
            other => Err(format!(
                "cannot read a list answered as {other:?} (JSON and application/vnd.kubernetes.protobuf only)"
            )),
        }
    }
}

#[derive(Deserialize, Default)]
struct JsonListMeta {
    #[serde(rename = "continue", default)]
    continue_token: Option<String>,
}

#[derive(Deserialize)]
struct JsonList {
    #[serde(default)]
    metadata: JsonListMeta,
    #[serde(default)]
    items: Option<Vec<IgnoredAny>>,
}

/// The continue token of a JSON list read from the bytes before `items`,
/// where the metadata sits (ferrokube and kube both write it first);
/// `None` when `start` (the start of the body) does not reach `items` or
/// the metadata is not before it.
pub fn json_head_continue(start: &[u8]) -> Option<Option<String>> {
    let items_at = find(start, b"\"items\":")?;
    let head = &start[..items_at];
    find(head, b"\"metadata\":")?;
    const KEY: &[u8] = b"\"continue\":\"";
    let Some(at) = find(head, KEY) else {
        return Some(None);
    };
    let rest = &head[at + KEY.len()..];
    let end = find_byte(rest, b'"')?;
    if rest[..end].contains(&b'\\') {
        return None;
    }
    let token = std::str::from_utf8(&rest[..end]).ok()?;
    Some((!token.is_empty()).then(|| token.to_string()))
}

/// The continue token of a whole JSON list: from its head, else by
/// parsing it all.
pub fn json_continue(body: &[u8]) -> Result<Option<String>, String> {
    if let Some(token) = json_head_continue(body) {
        return Ok(token);
    }
    let list: JsonList = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    Ok(list.metadata.continue_token.filter(|t| !t.is_empty()))
}

/// Items and continue token of a whole list answer.
pub fn read_list(body: &[u8], format: Format) -> Result<(usize, Option<String>), String> {
    match format {
        Format::Json => {
            let list: JsonList = serde_json::from_slice(body).map_err(|e| e.to_string())?;
            Ok((
                list.items.map_or(0, |items| items.len()),
                list.metadata.continue_token.filter(|t| !t.is_empty()),
            ))
        }
        Format::Protobuf => protobuf_list(body),
    }
}

/// The continue token of a list answer in `format`, as received. JSON:
/// from the first 64 KiB when the metadata is there, else (and for
/// protobuf) from the whole answer.
fn continue_token(chunks: &[Bytes], format: Format) -> Result<Option<String>, String> {
    if format == Format::Json {
        let mut start = Vec::new();
        for chunk in chunks {
            start.extend_from_slice(chunk);
            if start.len() >= 64 << 10 {
                break;
            }
        }
        if let Some(token) = json_head_continue(&start) {
            return Ok(token);
        }
    }
    let all = concat(chunks);
    match format {
        Format::Json => json_continue(&all),
        Format::Protobuf => protobuf_list(&all).map(|(_, token)| token),
    }
}

/// Protobuf wire fields of one message: (number, wire type, varint or LEN
/// payload).
fn fields(mut buf: &[u8]) -> impl Iterator<Item = Result<(u64, u8, u64, &[u8]), String>> {
    fn varint(buf: &mut &[u8]) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = buf.split_first().ok_or("truncated varint")?;
            *buf = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("varint too long".into())
    }
    std::iter::from_fn(move || {
        if buf.is_empty() {
            return None;
        }
        let field = (|| {
            let key = varint(&mut buf)?;
            let (number, wire) = (key >> 3, (key & 7) as u8);
            let take = |buf: &mut &[u8], n: usize| -> Result<(), String> {
                if buf.len() < n {
                    return Err("truncated field".into());
                }
                *buf = &buf[n..];
                Ok(())
            };
            match wire {
                0 => Ok((number, wire, varint(&mut buf)?, &[][..])),
                1 => take(&mut buf, 8).map(|()| (number, wire, 0, &[][..])),
                5 => take(&mut buf, 4).map(|()| (number, wire, 0, &[][..])),
                2 => {
                    let len = usize::try_from(varint(&mut buf)?).map_err(|e| e.to_string())?;
                    if buf.len() < len {
                        return Err("truncated bytes".into());
                    }
                    let (payload, rest) = buf.split_at(len);
                    buf = rest;
                    Ok((number, wire, len as u64, payload))
                }
                other => Err(format!("wire type {other}")),
            }
        })();
        if field.is_err() {
            buf = &[];
        }
        Some(field)
    })
}

/// Items and continue token of a list in the Kubernetes protobuf envelope:
/// `k8s\0`, then `runtime.Unknown` whose field 2 (`raw`) is the `XList`:
/// field 1 `ListMeta` (field 3 `continue`), field 2 repeated items.
pub fn protobuf_list(body: &[u8]) -> Result<(usize, Option<String>), String> {
    let unknown = body
        .strip_prefix(b"k8s\0")
        .ok_or("no k8s protobuf envelope")?;
    let mut raw = None;
    for field in fields(unknown) {
        let (number, wire, _, payload) = field?;
        if number == 2 && wire == 2 {
            raw = Some(payload);
        }
    }
    let raw = raw.ok_or("the envelope has no raw object")?;
    let (mut items, mut token) = (0, None);
    for field in fields(raw) {
        match field? {
            (1, 2, _, meta) => {
                for field in fields(meta) {
                    if let (3, 2, _, value) = field? {
                        let text = std::str::from_utf8(value).map_err(|e| e.to_string())?;
                        token = (!text.is_empty()).then(|| text.to_string());
                    }
                }
            }
            (2, 2, _, _) => items += 1,
            _ => {}
        }
    }
    Ok((items, token))
}

/// `value` percent-encoded for a query string (RFC 3986 unreserved kept).
pub fn query_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// One whole list, all pages.
struct Listed {
    total: Duration,
    heads: Duration,
    /// Each page as its DATA frames.
    pages: Vec<Vec<Bytes>>,
    format: Format,
    content_type: String,
}

async fn list_all(
    session: &mut Session,
    path: &str,
    limit: Option<usize>,
    accept: &str,
    timeout: Duration,
) -> Result<Listed, BenchError> {
    let started = Instant::now();
    let mut heads = Duration::ZERO;
    let mut pages = Vec::new();
    let mut token: Option<String> = None;
    let (format, content_type) = loop {
        let url = match (limit, &token) {
            (None, _) => path.to_string(),
            (Some(limit), None) => format!("{path}?limit={limit}"),
            (Some(limit), Some(token)) => {
                format!("{path}?limit={limit}&continue={}", query_escape(token))
            }
        };
        let fetched = fetch(session, &url, accept, timeout).await?;
        heads += fetched.head;
        let format = Format::of(&fetched.content_type).map_err(BenchError::Setup)?;
        token = if limit.is_some() {
            continue_token(&fetched.chunks, format)
                .map_err(|e| BenchError::Setup(format!("reading page {}: {e}", pages.len() + 1)))?
        } else {
            None
        };
        pages.push(fetched.chunks);
        if token.is_none() {
            break (format, fetched.content_type);
        }
        if pages.len() > 1_000_000 {
            return Err(BenchError::Setup("more than a million pages".into()));
        }
    };
    Ok(Listed {
        total: started.elapsed(),
        heads,
        pages,
        format,
        content_type,
    })
}

/// Items in all pages (outside the timed part).
fn count_items(listed: &Listed) -> Result<usize, BenchError> {
    let mut items = 0;
    for (index, page) in listed.pages.iter().enumerate() {
        let (n, _) = read_list(&concat(page), listed.format)
            .map_err(|e| BenchError::Setup(format!("reading page {}: {e}", index + 1)))?;
        items += n;
    }
    Ok(items)
}

struct Tally {
    limit: Option<usize>,
    pages: usize,
    items: usize,
    bytes: u64,
    totals: Vec<f64>,
    heads: Vec<f64>,
}

impl Tally {
    fn new(limit: Option<usize>) -> Tally {
        Tally {
            limit,
            pages: 0,
            items: 0,
            bytes: 0,
            totals: Vec::new(),
            heads: Vec::new(),
        }
    }

    fn add(&mut self, listed: &Listed, items: usize) {
        self.pages = listed.pages.len();
        self.items = items;
        self.bytes = listed
            .pages
            .iter()
            .flatten()
            .map(|chunk| chunk.len() as u64)
            .sum();
        self.totals.push(round3(listed.total.as_secs_f64() * 1e3));
        self.heads.push(round3(listed.heads.as_secs_f64() * 1e3));
    }

    fn timing(self) -> ListTiming {
        ListTiming {
            limit: self.limit,
            pages: self.pages,
            items: self.items,
            bytes: self.bytes,
            total_ms: MinMedMax::of(&self.totals).unwrap_or_default(),
            headers_ms: MinMedMax::of(&self.heads).unwrap_or_default(),
            samples_ms: self.totals,
        }
    }
}

pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    label: &str,
) -> Result<ScenarioResult, BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let (plural, kind) = match cli.object_kind {
        ObjectKind::Pod => ("pods", "Pod"),
        ObjectKind::Configmap => ("configmaps", "ConfigMap"),
    };
    let path = format!("/api/v1/namespaces/{}/{plural}", cli.namespace);
    let creates = Creates {
        kind: cli.object_kind,
        namespace: cli.namespace.clone(),
        run: run_id(),
        path: path.clone(),
        size: cli.size,
    };
    let object_bytes = creates.body(0).len();
    let timeout = Duration::from_secs_f64(cli.timeout);
    let outcome = runner::run(
        &client,
        Arc::new(creates),
        &LoadOptions {
            concurrency: cli.concurrency,
            stop: Stop::Requests(cli.objects as u64),
            timeout,
            progress: (!cli.quiet).then(|| format!("{label}: creating {kind}s")),
            server_pid: endpoint.pid(),
            rate: 0.0,
        },
    )
    .await;
    if let Some((what, tally)) = outcome.error_kinds.iter().next() {
        return Err(BenchError::Setup(format!(
            "creating {} {kind}s: {} failed, e.g. {what}: {}",
            cli.objects, outcome.errors, tally.sample
        )));
    }
    let created = outcome.latency.count();
    let rss_after_setup_kib = endpoint.memory().map(|m| m.rss_kib);
    let setup_s = outcome.elapsed.as_secs_f64();
    runner::note(
        cli.quiet,
        &format!(
            "{label}: {created} {kind}s created in {setup_s:.1} s; listing {} times each way",
            cli.runs
        ),
    );

    let mut session = client.session(0);
    let accept = cli.accept.as_str();
    // Unmeasured: the first list of each kind, whose items are counted.
    let warm = list_all(&mut session, &path, None, accept, timeout).await?;
    let listed_items = count_items(&warm)?;
    let warm_pages = list_all(&mut session, &path, Some(cli.page_size), accept, timeout).await?;
    let paged_items = count_items(&warm_pages)?;
    if listed_items != paged_items {
        return Err(BenchError::Setup(format!(
            "the unpaginated list has {listed_items} items, the chunked one {paged_items}"
        )));
    }
    if listed_items != cli.objects {
        runner::note(
            cli.quiet,
            &format!(
                "{label}: note: the collection holds {listed_items} items, not {} (objects of earlier runs?)",
                cli.objects
            ),
        );
    }
    drop(warm_pages);
    let mut unpaginated = Tally::new(None);
    let mut chunked = Tally::new(Some(cli.page_size));
    let cpu_before = cpu::sample(endpoint.pid());
    let mut last = None;
    for run in 1..=cli.runs {
        // No parsing in here: the CPU window covers the lists only.
        let whole = list_all(&mut session, &path, None, accept, timeout).await?;
        let pages = list_all(&mut session, &path, Some(cli.page_size), accept, timeout).await?;
        unpaginated.add(&whole, listed_items);
        chunked.add(&pages, paged_items);
        runner::note(
            cli.quiet,
            &format!(
                "{label} {run}/{}: unpaginated {:.1} ms ({} bytes), chunked {:.1} ms ({} pages)",
                cli.runs,
                whole.total.as_secs_f64() * 1e3,
                unpaginated.bytes,
                pages.total.as_secs_f64() * 1e3,
                pages.pages.len()
            ),
        );
        last = Some((whole, pages));
    }
    let cpu_after = cpu::sample(endpoint.pid());
    // The last run's lists hold what the first ones did.
    if let Some((whole, pages)) = &last {
        let (whole_items, paged) = (count_items(whole)?, count_items(pages)?);
        if (whole_items, paged) != (listed_items, paged_items) {
            return Err(BenchError::Setup(format!(
                "the last run listed {whole_items} items unpaginated and {paged} chunked, the first {listed_items}"
            )));
        }
    }
    drop(last);
    let content_type = warm.content_type.clone();
    let unpaginated = unpaginated.timing();
    let chunked = chunked.timing();
    let ratio = if unpaginated.total_ms.median > 0.0 {
        round3(chunked.total_ms.median / unpaginated.total_ms.median)
    } else {
        0.0
    };
    let bytes_per_item = if unpaginated.items > 0 {
        round3(unpaginated.bytes as f64 / unpaginated.items as f64)
    } else {
        0.0
    };
    Ok(ScenarioResult {
        scenario: "list".into(),
        label: label.to_string(),
        target: endpoint.target.clone(),
        load: None,
        ready: None,
        watch: None,
        list: Some(ListResult {
            kind: kind.into(),
            objects: cli.objects,
            object_bytes,
            bytes_per_item,
            accept: cli.accept.clone(),
            content_type,
            runs: cli.runs,
            setup: ListSetup {
                created,
                seconds: round3(setup_s),
                per_s: if setup_s > 0.0 {
                    (created as f64 / setup_s).round()
                } else {
                    0.0
                },
                concurrency: cli.concurrency,
            },
            rss_after_setup_kib,
            unpaginated,
            chunked,
            chunked_to_unpaginated: ratio,
            cpu: match (&cpu_before, &cpu_after) {
                (Some(a), Some(b)) => cpu::usage(a, b),
                _ => None,
            },
        }),
        server_memory: endpoint.memory(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_body_is_a_realistic_pod() {
        let body = pod_body("bench-abc-1", "ns", "abc");
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["kind"], "Pod");
        assert_eq!(v["metadata"]["name"], "bench-abc-1");
        assert_eq!(v["spec"]["containers"].as_array().map(Vec::len), Some(2));
        assert!((1300..=1800).contains(&body.len()), "{} bytes", body.len());
    }

    #[test]
    fn reads_json_continue_tokens() {
        let page = br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"abc.DEF-_","remainingItemCount":3},"items":[{"metadata":{"name":"continue"}}]}"#;
        assert_eq!(json_continue(page), Ok(Some("abc.DEF-_".to_string())));
        assert_eq!(
            read_list(page, Format::Json),
            Ok((1, Some("abc.DEF-_".into())))
        );
        let last = br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"continue":"x"}}]}"#;
        assert_eq!(json_continue(last), Ok(None));
        let empty = br#"{"metadata":{"continue":""},"items":[]}"#;
        assert_eq!(json_continue(empty), Ok(None));
        // Items before metadata: the slow path.
        let odd = br#"{"items":[{}],"metadata":{"continue":"t"}}"#;
        assert_eq!(json_continue(odd), Ok(Some("t".into())));
        assert!(json_continue(b"nope").is_err());
        // From the start of a body cut anywhere after the metadata.
        assert_eq!(
            json_head_continue(&page[..140]),
            Some(Some("abc.DEF-_".to_string()))
        );
        assert_eq!(json_head_continue(&page[..40]), None);
        let chunks: Vec<Bytes> = page.chunks(16).map(Bytes::copy_from_slice).collect();
        assert_eq!(
            continue_token(&chunks, Format::Json),
            Ok(Some("abc.DEF-_".to_string()))
        );
        assert_eq!(concat(&chunks), page.to_vec());
    }

    fn len_field(number: u64, payload: &[u8], out: &mut Vec<u8>) {
        out.push(((number << 3) | 2) as u8);
        let mut n = payload.len();
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
        out.extend_from_slice(payload);
    }

    #[test]
    fn reads_protobuf_lists() {
        let mut meta = Vec::new();
        len_field(2, b"17", &mut meta);
        len_field(3, b"tok", &mut meta);
        let mut list = Vec::new();
        len_field(1, &meta, &mut list);
        for _ in 0..3 {
            len_field(2, &[0u8; 200], &mut list);
        }
        let mut unknown = Vec::new();
        len_field(1, b"\x0a\x02v1\x12\x07PodList", &mut unknown);
        len_field(2, &list, &mut unknown);
        unknown.extend_from_slice(&[0x1a, 0x00, 0x22, 0x00]);
        let body = [&b"k8s\0"[..], &unknown].concat();
        assert_eq!(protobuf_list(&body), Ok((3, Some("tok".into()))));
        assert!(protobuf_list(b"{}").is_err());
        assert!(protobuf_list(&body[..body.len() - 30]).is_err());
        assert_eq!(
            Format::of("application/vnd.kubernetes.protobuf"),
            Ok(Format::Protobuf)
        );
        assert_eq!(
            Format::of("application/json; charset=utf-8"),
            Ok(Format::Json)
        );
        assert!(Format::of("application/cbor").is_err());
    }

    #[test]
    fn escapes_tokens() {
        assert_eq!(query_escape("aZ09-_.~"), "aZ09-_.~");
        assert_eq!(query_escape("a+b/c="), "a%2Bb%2Fc%3D");
    }
}
