//! Validating and mutating webhook configurations
//! (`admissionregistration.k8s.io/v1`) compiled once per stored version into
//! what the dispatchers read: each webhook's endpoint and CA, rules,
//! selectors, policies and timeout, with v1's defaults
//! (`pkg/apis/admissionregistration/v1/defaults.go`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::credentials::{Credentials, WebhookCredentials};
use super::match_conditions::{self, MatchCondition};
use crate::crd::webhook::WebhookEndpoint;
use crate::crd::webhook_client::{resolve_url_with_timeout, Resolved};
use crate::label_selector::{LabelSelectorError, Selector};

/// `failurePolicy` (default `Fail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailurePolicy {
    Fail,
    Ignore,
}

/// `matchPolicy` (default `Equivalent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchPolicy {
    Exact,
    Equivalent,
}

/// `scope` of a rule (default `*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    All,
    Cluster,
    Namespaced,
    /// A value v1 validation refuses (a stored object from elsewhere): never matches.
    Other,
}

/// One `rules` entry (`RuleWithOperations`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub operations: Vec<String>,
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub scope: Scope,
}

/// One webhook of a configuration.
#[derive(Debug, Clone)]
pub struct Webhook {
    pub name: String,
    /// `<configuration>/<index>`: the webhook's identity for reinvocation.
    pub uid: String,
    pub endpoint: Option<WebhookEndpoint>,
    /// What it is called as: its plugin's kubeconfig user for its
    /// `host:port` (`credentials::target_of`).
    pub credentials: Arc<Credentials>,
    /// `clientConfig.caBundle`, base64-decoded (PEM).
    pub ca_bundle: Vec<u8>,
    pub rules: Vec<Rule>,
    pub failure_policy: FailurePolicy,
    pub match_policy: MatchPolicy,
    /// `namespaceSelector`; `Err` when it does not compile (every request it
    /// would match then fails as kube's internal error).
    pub namespace_selector: Result<Selector, LabelSelectorError>,
    pub object_selector: Result<Selector, LabelSelectorError>,
    /// `sideEffects` as given (`None`, `NoneOnDryRun`, `Some`, `Unknown`),
    /// empty when unset.
    pub side_effects: String,
    /// `timeoutSeconds` (default 10 s).
    pub timeout: Duration,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks only).
    pub reinvoke_if_needed: bool,
    /// `matchConditions`, compiled.
    pub match_conditions: Vec<MatchCondition>,
    /// A `clientConfig.url`'s address with this timeout, resolved once
    /// (a `service` is resolved per call, through its Endpoints).
    pub resolved_url: Option<Result<Resolved, String>>,
}

/// The strings of a JSON array (admission policies read their rules with it too).
pub(crate) use crate::object::string_list as strings;

fn text<'a>(value: Option<&'a Value>, field: &str) -> &'a str {
    value
        .and_then(|value| value.get(field))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub use crate::crd::webhook::client_config;

fn selector(webhook: &Value, field: &str) -> Result<Selector, LabelSelectorError> {
    match webhook.get(field) {
        Some(selector) if selector.is_object() => Selector::parse(selector),
        _ => Selector::parse(&Value::Null),
    }
}

/// The webhooks of one configuration object, in its order.
pub fn compile(
    configuration: &Value,
    mutating: bool,
    credentials: &WebhookCredentials,
) -> Vec<Webhook> {
    let config_name = text(configuration.get("metadata"), "name");
    let webhooks = configuration.get("webhooks").and_then(Value::as_array);
    webhooks
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, webhook)| {
            let (endpoint, ca_bundle) = client_config(webhook.get("clientConfig"));
            let timeout = Duration::from_secs(
                webhook
                    .get("timeoutSeconds")
                    .and_then(Value::as_u64)
                    .unwrap_or(10),
            );
            let resolved_url = match &endpoint {
                Some(WebhookEndpoint::Url(url)) => Some(resolve_url_with_timeout(url, timeout)),
                _ => None,
            };
            let rules = webhook
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|rule| Rule {
                    operations: strings(rule.get("operations")),
                    api_groups: strings(rule.get("apiGroups")),
                    api_versions: strings(rule.get("apiVersions")),
                    resources: strings(rule.get("resources")),
                    scope: match rule.get("scope").and_then(Value::as_str) {
                        None | Some("*") => Scope::All,
                        Some("Cluster") => Scope::Cluster,
                        Some("Namespaced") => Scope::Namespaced,
                        Some(_) => Scope::Other,
                    },
                })
                .collect();
            Webhook {
                name: text(Some(webhook), "name").to_string(),
                uid: format!("{config_name}/{index}"),
                credentials: credentials.resolve(
                    &endpoint
                        .as_ref()
                        .map(super::credentials::target_of)
                        .unwrap_or_default(),
                ),
                endpoint,
                ca_bundle,
                rules,
                failure_policy: match webhook.get("failurePolicy").and_then(Value::as_str) {
                    Some("Ignore") => FailurePolicy::Ignore,
                    _ => FailurePolicy::Fail,
                },
                match_policy: match webhook.get("matchPolicy").and_then(Value::as_str) {
                    Some("Exact") => MatchPolicy::Exact,
                    _ => MatchPolicy::Equivalent,
                },
                namespace_selector: selector(webhook, "namespaceSelector"),
                object_selector: selector(webhook, "objectSelector"),
                side_effects: text(Some(webhook), "sideEffects").to_string(),
                timeout,
                reinvoke_if_needed: mutating
                    && webhook.get("reinvocationPolicy").and_then(Value::as_str)
                        == Some("IfNeeded"),
                match_conditions: match_conditions::compile(webhook.get("matchConditions")),
                resolved_url,
            }
        })
        .collect()
}
