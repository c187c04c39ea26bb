//! `list-formats`: --objects Pods (or ConfigMaps) listed --runs times in
//! one piece as JSON, Kubernetes protobuf and CBOR: time to the full body
//! (on this side: the server's time plus the transfer), time to the response
//! head, and bytes, each next to JSON's. Each measured body is read into one
//! buffer reused across the runs, as client-go reads a body into one buffer. The server's own time comes from
//! kube's `apiserver_request_duration_seconds` on `/metrics` (the mean of the
//! measured LISTs: the change of `_sum` over the change of `_count`), which
//! ferrokube and kube-apiserver both serve; without it the column says `-`.
//! A format the server does not offer (406, or an answer in another media
//! type) is reported as unsupported.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::header::CONTENT_TYPE;
use hyper::{Method, StatusCode};
use serde::Serialize;

use super::list::{fetch_into, read_list, Creates, Format};
use super::{ensure_namespace, run_id, Endpoint};
use crate::cli::{Cli, ObjectKind};
use crate::client::{Client, Session};
use crate::report::ScenarioResult;
use crate::runner::{self, snippet, LoadOptions, Stop};
use crate::stats::{round3, MinMedMax};
use crate::BenchError;

pub const JSON: &str = "application/json";
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
pub const CBOR: &str = "application/cbor";
pub const MEDIA_TYPES: [&str; 3] = [JSON, PROTOBUF, CBOR];

/// One media type's lists.
#[derive(Debug, Clone, Serialize)]
pub struct FormatTiming {
    pub accept: String,
    /// What the server answered with.
    pub content_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<String>,
    /// Items counted in the answer (JSON and protobuf; CBOR is not read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<usize>,
    pub bytes: u64,
    /// Request to the last byte, ms.
    pub total_ms: MinMedMax,
    /// Request to the response head, ms.
    pub head_ms: MinMedMax,
    /// The server's mean time per measured LIST from its `/metrics`, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_ms: Option<f64>,
    pub samples_ms: Vec<f64>,
    /// Median total / JSON's median total.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_to_json: Option<f64>,
    /// Bytes / JSON's bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_to_json: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FormatsResult {
    pub kind: String,
    pub objects: usize,
    pub runs: usize,
    pub formats: Vec<FormatTiming>,
}

/// Whether `content_type` is the media type `accept` asked for.
pub fn same_media(accept: &str, content_type: &str) -> bool {
    let media = |s: &str| {
        s.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    media(accept) == media(content_type)
}

/// Fills in the ratios to the JSON entry.
pub fn relate_to_json(formats: &mut [FormatTiming]) {
    let Some(json) = formats
        .iter()
        .find(|f| f.accept == JSON && f.unsupported.is_none())
        .map(|f| (f.total_ms.median, f.bytes))
    else {
        return;
    };
    for f in formats.iter_mut().filter(|f| f.unsupported.is_none()) {
        f.time_to_json = crate::report::ratio(f.total_ms.median, json.0).map(round3);
        f.bytes_to_json = crate::report::ratio(f.bytes as f64, json.1 as f64).map(round3);
    }
}

/// Status and Content-Type of one list, its body read and dropped.
/// `apiserver_request_duration_seconds` `_sum` and `_count` of namespaced
/// LISTs of `resource` in the core group, from the server's `/metrics`;
/// `None` when the server does not serve them.
async fn server_list_seconds(session: &mut Session, resource: &str) -> Option<(f64, f64)> {
    let (status, _, body) = probe(session, "/metrics", "text/plain").await.ok()?;
    if status != StatusCode::OK {
        return None;
    }
    list_seconds(&String::from_utf8_lossy(&body), resource)
}

/// The LIST series of [`server_list_seconds`] in a Prometheus text exposition,
/// summed over the labels it does not fix (version, dry_run, component).
fn list_seconds(text: &str, resource: &str) -> Option<(f64, f64)> {
    let wanted = [
        ("verb", "LIST"),
        ("group", ""),
        ("resource", resource),
        ("subresource", ""),
        ("scope", "namespace"),
    ];
    let mut found = (None::<f64>, None::<f64>);
    for line in text.lines() {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Some((name, labels)) = series.split_once('{') else {
            continue;
        };
        let slot = match name {
            "apiserver_request_duration_seconds_sum" => &mut found.0,
            "apiserver_request_duration_seconds_count" => &mut found.1,
            _ => continue,
        };
        let labels = labels.trim_end_matches('}');
        let matches = wanted.iter().all(|(key, expected)| {
            labels
                .split(',')
                .any(|pair| pair == format!("{key}=\"{expected}\""))
        });
        if let (true, Ok(value)) = (matches, value.parse::<f64>()) {
            *slot = Some(slot.unwrap_or(0.0) + value);
        }
    }
    Some((found.0?, found.1?))
}

async fn probe(
    session: &mut Session,
    path: &str,
    accept: &str,
) -> Result<(StatusCode, String, Vec<u8>), BenchError> {
    let response = session.open(Method::GET, path, None, accept).await?;
    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(crate::client::ClientError::Body)?
        .to_bytes();
    Ok((status, content_type, body.to_vec()))
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
    let timeout = Duration::from_secs_f64(cli.timeout);
    let outcome = runner::run(
        &client,
        Arc::new(Creates {
            kind: cli.object_kind,
            namespace: cli.namespace.clone(),
            run: run_id(),
            path: path.clone(),
            size: cli.size,
        }),
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
    let mut session = client.session(0);
    let mut formats = Vec::new();
    for accept in MEDIA_TYPES {
        let (status, content_type, body) = probe(&mut session, &path, accept).await?;
        let unsupported = if status == StatusCode::NOT_ACCEPTABLE
            || status == StatusCode::UNSUPPORTED_MEDIA_TYPE
        {
            Some(super::write::unsupported_text(&crate::client::Reply {
                status,
                body: body.clone().into(),
            }))
        } else if status != StatusCode::OK {
            return Err(BenchError::Setup(format!(
                "GET {path} as {accept}: HTTP {}: {}",
                status.as_u16(),
                snippet(&body, 300)
            )));
        } else if !same_media(accept, &content_type) {
            Some(format!("answered as {content_type:?}"))
        } else {
            None
        };
        if let Some(why) = unsupported {
            runner::note(cli.quiet, &format!("{label}: {accept}: not offered: {why}"));
            formats.push(FormatTiming {
                accept: accept.into(),
                content_type,
                unsupported: Some(why),
                items: None,
                bytes: 0,
                total_ms: MinMedMax::default(),
                head_ms: MinMedMax::default(),
                server_ms: None,
                samples_ms: Vec::new(),
                time_to_json: None,
                bytes_to_json: None,
            });
            continue;
        }
        let items = Format::of(&content_type)
            .ok()
            .and_then(|format| read_list(&body, format).ok())
            .map(|(n, _)| n);
        let mut totals = Vec::with_capacity(cli.runs);
        let mut heads = Vec::with_capacity(cli.runs);
        let mut bytes = body.len() as u64;
        // One buffer for every measured body, as big as the probe's.
        let mut received = Vec::with_capacity(body.len());
        let before = server_list_seconds(&mut session, plural).await;
        for _ in 0..cli.runs {
            let started = std::time::Instant::now();
            let (head, _) = fetch_into(&mut session, &path, accept, timeout, &mut received).await?;
            totals.push(round3(started.elapsed().as_secs_f64() * 1e3));
            heads.push(round3(head.as_secs_f64() * 1e3));
            bytes = received.len() as u64;
        }
        let after = server_list_seconds(&mut session, plural).await;
        let server_ms = before.zip(after).and_then(|((sum0, n0), (sum1, n1))| {
            (n1 > n0).then(|| round3((sum1 - sum0) / (n1 - n0) * 1e3))
        });
        let total_ms = MinMedMax::of(&totals).unwrap_or_default();
        runner::note(
            cli.quiet,
            &format!(
                "{label}: {accept}: median {:.1} ms, {bytes} bytes",
                total_ms.median
            ),
        );
        formats.push(FormatTiming {
            accept: accept.into(),
            content_type,
            unsupported: None,
            items,
            bytes,
            total_ms,
            head_ms: MinMedMax::of(&heads).unwrap_or_default(),
            server_ms,
            samples_ms: totals,
            time_to_json: None,
            bytes_to_json: None,
        });
    }
    relate_to_json(&mut formats);
    Ok(ScenarioResult {
        scenario: "list-formats".into(),
        label: label.to_string(),
        target: endpoint.target.clone(),
        formats: Some(FormatsResult {
            kind: kind.into(),
            objects: cli.objects,
            runs: cli.runs,
            formats,
        }),
        server_memory: endpoint.memory(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(accept: &str, median: f64, bytes: u64, unsupported: bool) -> FormatTiming {
        FormatTiming {
            accept: accept.into(),
            content_type: accept.into(),
            unsupported: unsupported.then(|| "HTTP 406".into()),
            items: None,
            bytes,
            total_ms: MinMedMax {
                min: median,
                median,
                max: median,
            },
            head_ms: MinMedMax::default(),
            server_ms: None,
            samples_ms: vec![median],
            time_to_json: None,
            bytes_to_json: None,
        }
    }

    #[test]
    fn ratios_are_to_json() {
        let mut formats = vec![
            timing(JSON, 40.0, 1000, false),
            timing(PROTOBUF, 10.0, 400, false),
            timing(CBOR, 0.0, 0, true),
        ];
        relate_to_json(&mut formats);
        assert_eq!(formats[0].time_to_json, Some(1.0));
        assert_eq!(formats[1].time_to_json, Some(0.25));
        assert_eq!(formats[1].bytes_to_json, Some(0.4));
        assert_eq!(formats[2].time_to_json, None);
        // Without a JSON answer there is nothing to relate to.
        let mut alone = vec![timing(PROTOBUF, 10.0, 400, false)];
        relate_to_json(&mut alone);
        assert_eq!(alone[0].time_to_json, None);
    }

    #[test]
    fn list_seconds_reads_kube_s_series() {
        let text = r#"# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",le="0.05",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 3
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 0.25
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 5
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 9
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="GET",version="v1"} 7
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} 4
"#;
        assert_eq!(list_seconds(text, "pods"), Some((0.25, 5.0)));
        assert_eq!(list_seconds(text, "configmaps"), None);
        assert_eq!(list_seconds("", "pods"), None);
    }

    #[test]
    fn media_types_compare_without_parameters() {
        assert!(same_media(JSON, "application/json; charset=utf-8"));
        assert!(same_media(CBOR, "Application/CBOR"));
        assert!(!same_media(CBOR, "application/json"));
    }
}
