//! `--audit-webhook-config-file`: a kubeconfig naming the webhook
//! (`apiserver/pkg/util/webhook` `LoadKubeconfig`, through client-go's
//! `clientcmd`): the current context's cluster gives the `server` URL and
//! the CA that verifies its certificate (`certificate-authority-data` or
//! the `certificate-authority` file, relative to the kubeconfig's folder).

use std::path::Path;

use base64::Engine as _;
use serde_json::Value;

use crate::crd::webhook_client::{self, Resolved};

use super::AuditError;

/// Where the events go and what its certificate is checked against.
#[derive(Debug, Clone)]
pub struct WebhookTarget {
    pub resolved: Resolved,
    pub ca_bundle: Vec<u8>,
}

/// The rest client's timeout (`webhook.go` `defaultRequestTimeout`), sent
/// as `?timeout=30s` too.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Reads the kubeconfig at `path`.
pub fn load(path: &Path) -> Result<WebhookTarget, AuditError> {
    let failed =
        |why: String| AuditError::Webhook(format!("invalid kubeconfig {}: {why}", path.display()));
    let bytes = std::fs::read(path).map_err(|error| failed(error.to_string()))?;
    let config =
        crate::yaml::yaml_to_json(&bytes).map_err(|error| failed(error.message().to_string()))?;
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    target(&config, base).map_err(failed)
}

/// The entry of `list` (`clusters`, `contexts`) called `name`.
fn named<'a>(config: &'a Value, list: &str, field: &str, name: &str) -> Option<&'a Value> {
    config
        .get(list)?
        .as_array()?
        .iter()
        .find(|entry| entry.get("name").and_then(Value::as_str) == Some(name))?
        .get(field)
}

/// The cluster of `current-context`, else of the only context, else the
/// only cluster.
fn cluster(config: &Value) -> Result<&Value, String> {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or("").to_string();
    let mut context_name = text(config.get("current-context"));
    if context_name.is_empty() {
        if let Some([only]) = config
            .get("contexts")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            context_name = text(only.get("name"));
        }
    }
    let cluster_name = if context_name.is_empty() {
        match config
            .get("clusters")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([only]) => text(only.get("name")),
            _ => return Err("no current context and not exactly one cluster".into()),
        }
    } else {
        let context = named(config, "contexts", "context", &context_name).ok_or_else(|| {
            format!("context was not found for specified context: {context_name}")
        })?;
        text(context.get("cluster"))
    };
    named(config, "clusters", "cluster", &cluster_name)
        .ok_or_else(|| format!("cluster {cluster_name:?} not found"))
}

fn target(config: &Value, base: &Path) -> Result<WebhookTarget, String> {
    let cluster = cluster(config)?;
    let server = cluster
        .get("server")
        .and_then(Value::as_str)
        .filter(|server| !server.is_empty())
        .ok_or("no server found for cluster")?;
    let ca_bundle = match (
        cluster
            .get("certificate-authority-data")
            .and_then(Value::as_str),
        cluster.get("certificate-authority").and_then(Value::as_str),
    ) {
        (Some(data), _) => base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|error| format!("certificate-authority-data: {error}"))?,
        (None, Some(file)) => std::fs::read(base.join(file))
            .map_err(|error| format!("certificate-authority {file}: {error}"))?,
        (None, None) => Vec::new(),
    };
    let resolved = webhook_client::resolve_url_with_timeout(server, REQUEST_TIMEOUT)?;
    Ok(WebhookTarget {
        resolved,
        ca_bundle,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_current_contexts_cluster_is_the_webhook() {
        let config = json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [
                {"name": "other", "cluster": {"server": "https://10.0.0.1/"}},
                {"name": "hook", "cluster": {"server": "https://127.0.0.1:9443/audit",
                    "certificate-authority-data": "Q0E="}},
            ],
            "contexts": [{"name": "webhook", "context": {"cluster": "hook", "user": "api"}}],
            "current-context": "webhook",
        });
        let found = target(&config, Path::new(".")).unwrap();
        assert_eq!(found.ca_bundle, b"CA");
        assert_eq!(found.resolved.host, "127.0.0.1");
        assert_eq!(found.resolved.port, 9443);
        assert_eq!(found.resolved.path_and_query, "/audit?timeout=30s");

        let only_cluster =
            json!({"clusters": [{"name": "c", "cluster": {"server": "https://h:1"}}]});
        assert_eq!(
            target(&only_cluster, Path::new("."))
                .unwrap()
                .resolved
                .server_name,
            "h"
        );
        let missing = json!({"current-context": "x", "contexts": [], "clusters": []});
        assert_eq!(
            target(&missing, Path::new(".")).unwrap_err(),
            "context was not found for specified context: x"
        );
        let plain = json!({"clusters": [{"name": "c", "cluster": {"server": "http://h:1"}}]});
        assert!(target(&plain, Path::new(".")).is_err());
    }
}
