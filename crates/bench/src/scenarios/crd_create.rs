//! `crd-create`: what a custom resource costs against a built-in kind in
//! the same run. A Widget CRD with a --crd-fields schema (default 30:
//! strings with a maxLength, integers with a minimum, booleans, every
//! fifth field defaulted) is installed; then C clients create ConfigMaps of
//! --size bytes for --requests/--duration, then Widgets (every field set
//! except the defaulted ones: validation, pruning, defaulting and
//! managedFields all run) for as long. Two results and their rate ratio.

use std::sync::Arc;

use bytes::Bytes;
use hyper::Method;

use super::crd::{install, widget_body};
use super::create::Creates;
use super::{configmap_body, ensure_namespace, run_id, Endpoint};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::ScenarioResult;
use crate::runner::{self, Workload};
use crate::BenchError;

/// Fields of the Widget schema unless --crd-fields says otherwise.
pub const DEFAULT_FIELDS: usize = 30;

struct Widgets {
    group: String,
    namespace: String,
    run: String,
    fields: usize,
}

impl Workload for Widgets {
    fn request(&self, worker: usize, seq: u64) -> (Method, String, Option<Bytes>) {
        let name = format!("bench-{}-{worker}-{seq}", self.run);
        (
            Method::POST,
            format!(
                "/apis/{}/v1/namespaces/{}/widgets",
                self.group, self.namespace
            ),
            Some(widget_body(&self.group, &name, self.fields)),
        )
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
    let fields = cli.crd_fields.unwrap_or(DEFAULT_FIELDS);
    let group = format!("c{run}.bench.ferrokube.dev");
    install(&client, &group, fields, &cli.namespace).await?;
    let configmaps = Creates::new(&cli.namespace, &run, cli.size);
    let configmap_bytes = configmap_body("x", &cli.namespace, &run, cli.size).len();
    let baseline_label = format!("{label} configmaps");
    let baseline = runner::run(
        &client,
        Arc::new(configmaps),
        &cli.load_options(&baseline_label, endpoint.pid()),
    )
    .await;
    let widgets = Widgets {
        group: group.clone(),
        namespace: cli.namespace.clone(),
        run: format!("{run}w"),
        fields,
    };
    let widget_bytes = widget_body(&group, "x", fields).len();
    let widget_label = format!("{label} widgets ({fields} fields)");
    let custom = runner::run(
        &client,
        Arc::new(widgets),
        &cli.load_options(&widget_label, endpoint.pid()),
    )
    .await;
    let result = |label: String, outcome: &runner::LoadOutcome, bytes: usize| {
        endpoint.load_result(cli, &client, "crd-create", label, outcome, (bytes, 0))
    };
    let results = vec![
        result(baseline_label, &baseline, configmap_bytes),
        result(widget_label, &custom, widget_bytes),
    ];
    let rate = |r: &ScenarioResult| r.load.as_ref().map_or(0.0, |l| l.throughput_per_s);
    let (configmap_rate, widget_rate) = (rate(&results[0]), rate(&results[1]));
    if configmap_rate > 0.0 {
        runner::note(
            cli.quiet,
            &format!(
                "  custom resource creates: {widget_rate:.0}/s = {:.0}% of ConfigMap creates ({configmap_rate:.0}/s)",
                widget_rate / configmap_rate * 100.0
            ),
        );
    }
    Ok(results)
}
