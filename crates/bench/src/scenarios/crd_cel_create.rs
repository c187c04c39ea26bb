//! `crd-cel-create`: what five CRD validation rules cost a create (issue
//! #16's goal: creates with them at least 80% of the same creates without).
//! Two Widget CRDs of the same --crd-fields schema (default 30, plus a
//! `tags` list) are installed on one server, one of them with five
//! `x-kubernetes-validations` rules on `spec`: an integer bound, a string
//! `matches`, a transition rule with `oldSelf`, a list `all()` and a
//! `has()`. C clients create Widgets of the plain CRD, then of the CEL one,
//! --runs rounds alternated (drift of a shared machine falls on both); the
//! ratio is of the median throughputs. Every Widget passes every rule.

use std::sync::Arc;

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde_json::json;

use super::crd::{crd_body, install_with, widget_body};
use super::crd_create::DEFAULT_FIELDS;
use super::paired::{self, Configuration};
use super::{ensure_namespace, run_id, setup_failure, Endpoint};
use crate::cli::Cli;
use crate::client::Client;
use crate::report::{Ratio, ScenarioResult};
use crate::runner::{self, Workload};
use crate::BenchError;

const SCENARIO: &str = "crd-cel-create";

/// The five rules, on `spec` (`field0` is a string, `field1` an integer,
/// `field3` a string, as `crd_body` lays fields out).
pub fn rules() -> serde_json::Value {
    json!([
        {"rule": "self.field1 <= 1000000", "message": "field1 is at most a million"},
        {"rule": "self.field0.matches('^value-[0-9]+$')", "message": "field0 is value-<n>"},
        {"rule": "self.field0 == oldSelf.field0", "message": "field0 is immutable"},
        {"rule": "self.tags.all(tag, tag.size() <= 32)", "message": "tags are short"},
        {"rule": "!has(self.field3) || self.field3.size() > 0", "message": "field3 is not empty"},
    ])
}

/// The Widget CRD of `group` with a `tags` list in `spec`, and the rules
/// when `with_rules`.
pub fn crd(group: &str, fields: usize, with_rules: bool) -> serde_json::Value {
    let mut crd = crd_body(group, fields);
    let spec = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    spec["properties"]["tags"] = json!({
        "type": "array", "maxItems": 16,
        "items": {"type": "string", "maxLength": 64},
    });
    if with_rules {
        spec["x-kubernetes-validations"] = rules();
    }
    crd
}

/// A Widget of [`crd`]'s schema.
pub fn widget(group: &str, name: &str, fields: usize) -> Bytes {
    let mut widget: serde_json::Value =
        serde_json::from_slice(&widget_body(group, name, fields)).unwrap_or_default();
    widget["spec"]["tags"] = json!(["blue", "small", "bench"]);
    Bytes::from(widget.to_string())
}

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
            Some(widget(&self.group, &name, self.fields)),
        )
    }
}

/// A Widget breaking the integer bound must be refused (422): the rules
/// are in force, the load measures them.
async fn refused_by_the_rules(
    client: &Client,
    group: &str,
    fields: usize,
    namespace: &str,
) -> Result<(), BenchError> {
    let mut breaking: serde_json::Value =
        serde_json::from_slice(&widget(group, "breaks-a-rule", fields)).unwrap_or_default();
    breaking["spec"]["field1"] = json!(2_000_000);
    let path = format!("/apis/{group}/v1/namespaces/{namespace}/widgets");
    let reply = client
        .request(Method::POST, &path, Some(Bytes::from(breaking.to_string())))
        .await?;
    if reply.status != StatusCode::UNPROCESSABLE_ENTITY {
        return Err(setup_failure(
            "a Widget breaking a CEL rule was not refused",
            &reply.status,
            &reply.body,
        ));
    }
    Ok(())
}

/// Runs the rounds on `endpoint`; `suffix` names the server variant.
pub async fn run(
    cli: &Cli,
    endpoint: &Endpoint,
    suffix: &str,
) -> Result<(Vec<ScenarioResult>, Vec<Ratio>), BenchError> {
    let client = Client::connect(&endpoint.kubeconfig, cli.client_options()).await?;
    ensure_namespace(&client, &cli.namespace).await?;
    let run = run_id();
    let fields = cli.crd_fields.unwrap_or(DEFAULT_FIELDS);
    let configurations = [
        Configuration {
            name: "plain",
            server_args: Vec::new(),
        },
        Configuration {
            name: "cel",
            server_args: Vec::new(),
        },
    ];
    let mut groups = Vec::new();
    for configuration in &configurations {
        let with_rules = configuration.name == "cel";
        let group = format!("{}{run}.bench.ferrokube.dev", configuration.name);
        let first = widget(&group, "first", fields);
        install_with(
            &client,
            &group,
            &crd(&group, fields, with_rules),
            first,
            &cli.namespace,
        )
        .await?;
        if with_rules {
            refused_by_the_rules(&client, &group, fields, &cli.namespace).await?;
        }
        groups.push(group);
    }
    let bytes = widget(&groups[0], "x", fields).len();
    let scenario = format!("{SCENARIO}{suffix}");
    let mut results = Vec::new();
    for round in 1..=cli.runs {
        for (configuration, group) in configurations.iter().zip(&groups) {
            let label = format!("{scenario} {} #{round}", configuration.name);
            let widgets = Widgets {
                group: group.clone(),
                namespace: cli.namespace.clone(),
                run: format!("{run}{}{round}", configuration.name),
                fields,
            };
            let outcome = runner::run(
                &client,
                Arc::new(widgets),
                &cli.load_options(&label, endpoint.pid()),
            )
            .await;
            results.push(endpoint.load_result(cli, &client, SCENARIO, label, &outcome, (bytes, 0)));
        }
    }
    let ratios = paired::ratios_noted(cli, &results, &scenario, &configurations);
    Ok((results, ratios))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_crds_differ_only_by_the_rules() {
        let mut plain = crd("g.example.com", 10, false);
        let with = crd("g.example.com", 10, true);
        let pointer = "/spec/versions/0/schema/openAPIV3Schema/properties/spec";
        assert_eq!(
            with.pointer(pointer).unwrap()["x-kubernetes-validations"]
                .as_array()
                .unwrap()
                .len(),
            5
        );
        plain.pointer_mut(pointer).unwrap()["x-kubernetes-validations"] = rules();
        assert_eq!(plain, with);
    }

    #[test]
    fn widgets_carry_what_the_rules_read() {
        let body: serde_json::Value =
            serde_json::from_slice(&widget("g.example.com", "w", 10)).unwrap();
        assert_eq!(body["spec"]["field0"], "value-0");
        assert_eq!(body["spec"]["field1"], 1);
        assert_eq!(body["spec"]["tags"].as_array().unwrap().len(), 3);
    }
}
