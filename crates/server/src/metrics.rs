//! kube-apiserver's request metrics, served on `/metrics` in the Prometheus
//! text format: `apiserver_request_total` and
//! `apiserver_request_duration_seconds`, with kube's labels and buckets
//! (`staging/src/k8s.io/apiserver/pkg/endpoints/metrics/metrics.go`,
//! `MonitorRequest`).
//!
//! A request is timed from the moment its head is read to the moment the
//! last byte of its response body is handed to the connection (or the body
//! is dropped, when the client goes away): for a list sent in pieces that is
//! the time to stream it, as kube's handler measures until its response
//! writer is done. `ferrokube-bench` reads `_sum` and `_count` before and
//! after a run to report the server's own time, from ferrokube or any
//! kube-apiserver.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use http_body::{Body, Frame, SizeHint};

use crate::registry::Registry;
use crate::route::{Endpoint, ResourcePath, Verb};

/// `requestLatencies` buckets in kube 1.34.
const BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// The labels kube reports a resource request under.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestLabels {
    pub verb: &'static str,
    pub dry_run: &'static str,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub scope: &'static str,
}

impl RequestLabels {
    /// The labels of a resource request (`None` for other paths, which kube
    /// reports under their path; ferrokube leaves them out). Only requests
    /// that reach a served resource and subresource are counted, as kube
    /// instruments only its installed routes (behind authentication): label
    /// values come from the registry's finite set, never from what a client
    /// invents.
    pub fn of(
        registry: &Registry,
        endpoint: &Endpoint,
        content_type: Option<&str>,
        dry_run: bool,
    ) -> Option<RequestLabels> {
        let Endpoint::Resource(path) = endpoint else {
            return None;
        };
        let resource = registry.lookup(&path.group, &path.version, &path.resource)?;
        if let Some(subresource) = &path.subresource {
            resource.subresource(subresource)?;
        }
        Some(RequestLabels {
            verb: reported_verb(path, content_type),
            // cleanDryRun: the sorted, deduplicated values; only All exists.
            dry_run: if dry_run { "All" } else { "" },
            group: path.group.clone(),
            version: path.version.clone(),
            resource: path.resource.clone(),
            subresource: path.subresource.clone().unwrap_or_default(),
            scope: scope(path),
        })
    }

    fn write(&self, out: &mut String, code: Option<u16>, le: Option<&str>) {
        // The Go client writes label names in sorted order.
        let _ = write!(
            out,
            "{{{}component=\"apiserver\",dry_run=\"{}\",group=\"{}\"",
            code.map(|code| format!("code=\"{code}\","))
                .unwrap_or_default(),
            self.dry_run,
            escape(&self.group)
        );
        if let Some(le) = le {
            let _ = write!(out, ",le=\"{le}\"");
        }
        let _ = write!(
            out,
            ",resource=\"{}\",scope=\"{}\",subresource=\"{}\",verb=\"{}\",version=\"{}\"}}",
            escape(&self.resource),
            self.scope,
            escape(&self.subresource),
            self.verb,
            escape(&self.version)
        );
    }
}

/// `CleanVerb`: the route's verb in upper case (POST for create, PUT for
/// update), WATCH for watches, APPLY for server-side apply patches.
fn reported_verb(path: &ResourcePath, content_type: Option<&str>) -> &'static str {
    match path.verb {
        Verb::Get => "GET",
        Verb::List => "LIST",
        Verb::Watch => "WATCH",
        Verb::Create => "POST",
        Verb::Update => "PUT",
        Verb::Patch if content_type.is_some_and(is_apply_patch) => "APPLY",
        Verb::Patch => "PATCH",
        Verb::Delete => "DELETE",
        Verb::DeleteCollection => "DELETECOLLECTION",
    }
}

/// kube compares the header with `types.ApplyPatchType` as it is.
fn is_apply_patch(content_type: &str) -> bool {
    content_type == "application/apply-patch+yaml"
}

/// `resource` for a named object, `namespace` for a namespaced collection,
/// `cluster` otherwise (`CleanScope`).
fn scope(path: &ResourcePath) -> &'static str {
    if path.name.is_some() {
        "resource"
    } else if path.namespace.is_some() {
        "namespace"
    } else {
        "cluster"
    }
}

fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[derive(Debug, Default)]
struct Series {
    buckets: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
    codes: BTreeMap<u16, u64>,
}

/// Every series observed since the server started.
#[derive(Debug, Default)]
pub struct RequestMetrics {
    series: Mutex<HashMap<RequestLabels, Series>>,
}

impl RequestMetrics {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn observe(&self, labels: RequestLabels, code: u16, seconds: f64) {
        let Ok(mut series) = self.series.lock() else {
            return;
        };
        let entry = series.entry(labels).or_default();
        for (bucket, bound) in entry.buckets.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
        entry.sum += seconds;
        entry.count += 1;
        *entry.codes.entry(code).or_default() += 1;
    }

    /// The Prometheus text exposition of every series, in a stable order.
    pub fn render(&self) -> String {
        let series = match self.series.lock() {
            Ok(series) => series,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut sorted: Vec<(&RequestLabels, &Series)> = series.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        let mut out = String::new();
        out.push_str(
            "# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.\n\
             # TYPE apiserver_request_duration_seconds histogram\n",
        );
        for (labels, series) in &sorted {
            for (bound, count) in BUCKETS.iter().zip(series.buckets) {
                out.push_str("apiserver_request_duration_seconds_bucket");
                labels.write(&mut out, None, Some(&format_bound(*bound)));
                let _ = writeln!(out, " {count}");
            }
            out.push_str("apiserver_request_duration_seconds_bucket");
            labels.write(&mut out, None, Some("+Inf"));
            let _ = writeln!(out, " {}", series.count);
            out.push_str("apiserver_request_duration_seconds_sum");
            labels.write(&mut out, None, None);
            let _ = writeln!(out, " {}", series.sum);
            out.push_str("apiserver_request_duration_seconds_count");
            labels.write(&mut out, None, None);
            let _ = writeln!(out, " {}", series.count);
        }
        out.push_str(
            "# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.\n\
             # TYPE apiserver_request_total counter\n",
        );
        for (labels, series) in &sorted {
            for (code, count) in &series.codes {
                out.push_str("apiserver_request_total");
                labels.write(&mut out, Some(*code), None);
                let _ = writeln!(out, " {count}");
            }
        }
        out
    }
}

/// Go's `strconv.FormatFloat(bound, 'g', -1, 64)` for these bounds (`1`, `0.005`).
fn format_bound(bound: f64) -> String {
    format!("{bound}")
}

/// A response body that reports its request once the last byte is handed to
/// the connection, or when it is dropped unfinished.
pub struct TimedBody<B> {
    inner: B,
    pending: Option<Observation>,
}

struct Observation {
    metrics: Arc<RequestMetrics>,
    labels: RequestLabels,
    code: u16,
    started: Instant,
}

impl Observation {
    fn record(self) {
        let seconds = self.started.elapsed().as_secs_f64();
        self.metrics.observe(self.labels, self.code, seconds);
    }
}

impl<B> TimedBody<B> {
    pub fn new(
        inner: B,
        metrics: Arc<RequestMetrics>,
        labels: RequestLabels,
        code: u16,
        started: Instant,
    ) -> Self {
        TimedBody {
            inner,
            pending: Some(Observation {
                metrics,
                labels,
                code,
                started,
            }),
        }
    }
}

impl<B> Drop for TimedBody<B> {
    fn drop(&mut self) {
        if let Some(observation) = self.pending.take() {
            observation.record();
        }
    }
}

impl<B: Body + Unpin> Body for TimedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(context);
        let finished = match &polled {
            Poll::Ready(None) => true,
            Poll::Ready(Some(_)) => self.inner.is_end_stream(),
            Poll::Pending => false,
        };
        if finished {
            if let Some(observation) = self.pending.take() {
                observation.record();
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Query;
    use crate::route::{route, Method};
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};

    fn labels(method: Method, path: &str, content_type: Option<&str>) -> Option<RequestLabels> {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let query = Query::parse(query);
        let registry = Registry::new(crate::registry::builtin_resources());
        RequestLabels::of(
            &registry,
            &route(method, path, &query),
            content_type,
            query.get("dryRun").is_some(),
        )
    }

    #[test]
    fn labels_follow_kube() {
        let cases = [
            (
                Method::Get,
                "/api/v1/namespaces/a/pods",
                None,
                "LIST",
                "namespace",
                "",
            ),
            (
                Method::Get,
                "/api/v1/pods?watch=true",
                None,
                "WATCH",
                "cluster",
                "",
            ),
            (
                Method::Get,
                "/api/v1/namespaces/a/pods/p",
                None,
                "GET",
                "resource",
                "",
            ),
            (
                Method::Post,
                "/api/v1/namespaces/a/pods",
                None,
                "POST",
                "namespace",
                "",
            ),
            (
                Method::Put,
                "/api/v1/namespaces/a/pods/p/status",
                None,
                "PUT",
                "resource",
                "status",
            ),
            (
                Method::Patch,
                "/apis/apps/v1/namespaces/a/deployments/d",
                Some("application/apply-patch+yaml"),
                "APPLY",
                "resource",
                "",
            ),
            (
                Method::Patch,
                "/apis/apps/v1/namespaces/a/deployments/d",
                Some("application/merge-patch+json"),
                "PATCH",
                "resource",
                "",
            ),
            (
                Method::Delete,
                "/api/v1/namespaces/a/configmaps",
                None,
                "DELETECOLLECTION",
                "namespace",
                "",
            ),
            (
                Method::Delete,
                "/api/v1/nodes/n",
                None,
                "DELETE",
                "resource",
                "",
            ),
        ];
        for (method, path, content_type, verb, scope, subresource) in cases {
            let got = labels(method, path, content_type).expect(path);
            assert_eq!(
                (got.verb, got.scope, got.subresource.as_str()),
                (verb, scope, subresource),
                "{path}"
            );
        }
        let dry = labels(Method::Post, "/api/v1/namespaces/a/pods?dryRun=All", None).unwrap();
        assert_eq!(dry.dry_run, "All");
        assert!(labels(Method::Get, "/version", None).is_none());
        // Invented resources, groups and subresources make no series.
        assert!(labels(Method::Get, "/apis/made.up/v1/things", None).is_none());
        assert!(labels(Method::Get, "/api/v1/namespaces/a/widgets", None).is_none());
        assert!(labels(Method::Get, "/api/v1/namespaces/a/pods/p/bogus", None).is_none());
        assert!(labels(Method::Get, "/apis/apps/v9/deployments", None).is_none());
        assert!(labels(Method::Get, "/metrics", None).is_none());
    }

    #[test]
    fn renders_buckets_sum_count_and_codes() {
        let metrics = RequestMetrics::new();
        let list = labels(Method::Get, "/apis/apps/v1/namespaces/a/deployments", None).unwrap();
        metrics.observe(list.clone(), 200, 0.03);
        metrics.observe(list.clone(), 200, 0.3);
        metrics.observe(list, 410, 70.0);
        let text = metrics.render();
        let series = "component=\"apiserver\",dry_run=\"\",group=\"apps\",resource=\"deployments\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"}";
        let bucket = |le: &str| {
            format!(
                "apiserver_request_duration_seconds_bucket{{{}",
                series.replacen(",resource=", &format!(",le=\"{le}\",resource="), 1)
            )
        };
        for (line, value) in [
            (bucket("0.025"), "0"),
            (bucket("0.05"), "1"),
            (bucket("60"), "2"),
            (bucket("+Inf"), "3"),
            (
                format!("apiserver_request_duration_seconds_count{{{series}"),
                "3",
            ),
            (
                format!("apiserver_request_total{{code=\"200\",{series}"),
                "2",
            ),
            (
                format!("apiserver_request_total{{code=\"410\",{series}"),
                "1",
            ),
        ] {
            assert!(
                text.lines().any(|l| l == format!("{line} {value}")),
                "{line} {value} in\n{text}"
            );
        }
        let sum: f64 = text
            .lines()
            .find_map(|l| {
                l.strip_prefix(&format!("apiserver_request_duration_seconds_sum{{{series}"))
            })
            .and_then(|v| v.trim().parse().ok())
            .expect("sum");
        assert!((sum - 70.33).abs() < 1e-9);
    }

    #[tokio::test]
    async fn a_body_reports_once_when_sent_or_dropped() {
        let metrics = RequestMetrics::new();
        let list = labels(Method::Get, "/api/v1/namespaces/a/pods", None).unwrap();
        let body = TimedBody::new(
            Full::new(Bytes::from_static(b"abc")),
            metrics.clone(),
            list.clone(),
            200,
            Instant::now(),
        );
        assert!(!metrics.render().contains("apiserver_request_total{"));
        let collected = body.collect().await.unwrap().to_bytes();
        assert_eq!(&collected[..], b"abc");
        let dropped = TimedBody::new(
            Full::new(Bytes::from_static(b"x")),
            metrics.clone(),
            list,
            500,
            Instant::now(),
        );
        drop(dropped);
        let text = metrics.render();
        assert!(
            text.contains("code=\"200\",component=\"apiserver\""),
            "{text}"
        );
        assert!(
            text.contains("code=\"500\",component=\"apiserver\""),
            "{text}"
        );
        assert!(
            text.lines().any(
                |l| l.starts_with("apiserver_request_duration_seconds_count{") && l.ends_with(" 2")
            ),
            "{text}"
        );
    }
}
