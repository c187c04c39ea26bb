//! `--audit-webhook-config-file`: a kubeconfig naming the webhook
//! (`apiserver/pkg/util/webhook` `LoadKubeconfig`, through client-go's
//! `clientcmd`): the current context's cluster gives the `server` URL and
//! the CA that verifies its certificate (`certificate-authority-data` or
//! the `certificate-authority` file, relative to the kubeconfig's folder),
//! the context's user the client certificate and key it presents
//! (`client-certificate(-data)`, `client-key(-data)`).

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
    /// The client certificate chain and key (PEM), when the user has them.
    pub client_identity: Option<ClientIdentity>,
}

/// A client certificate chain and its key, PEM.
pub type ClientIdentity = (Vec<u8>, Vec<u8>);

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
pub(crate) fn named<'a>(
    config: &'a Value,
    list: &str,
    field: &str,
    name: &str,
) -> Option<&'a Value> {
    config
        .get(list)?
        .as_array()?
        .iter()
        .find(|entry| entry.get("name").and_then(Value::as_str) == Some(name))?
        .get(field)
}

/// The name of `current-context`, else of the only context ("" if none).
pub(crate) fn context_name(config: &Value) -> String {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or("").to_string();
    let name = text(config.get("current-context"));
    if !name.is_empty() {
        return name;
    }
    match config
        .get("contexts")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([only]) => text(only.get("name")),
        _ => String::new(),
    }
}

/// A PEM value of `user` or `cluster`: `<field>-data` (base64) or the file
/// `<field>` (relative to the kubeconfig's folder).
pub(crate) fn pem(entry: &Value, field: &str, base: &Path) -> Result<Option<Vec<u8>>, String> {
    if let Some(data) = entry.get(format!("{field}-data")).and_then(Value::as_str) {
        return base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map(Some)
            .map_err(|error| format!("{field}-data: {error}"));
    }
    match entry.get(field).and_then(Value::as_str) {
        Some(file) => std::fs::read(base.join(file))
            .map(Some)
            .map_err(|error| format!("{field} {file}: {error}")),
        None => Ok(None),
    }
}

/// The client certificate and key of the context's user.
fn client_identity(config: &Value, base: &Path) -> Result<Option<ClientIdentity>, String> {
    let context = context_name(config);
    let Some(user_name) = named(config, "contexts", "context", &context)
        .and_then(|context| context.get("user"))
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    let Some(user) = named(config, "users", "user", user_name) else {
        return Ok(None);
    };
    match (
        pem(user, "client-certificate", base)?,
        pem(user, "client-key", base)?,
    ) {
        (Some(cert), Some(key)) => Ok(Some((cert, key))),
        (None, None) => Ok(None),
        _ => Err("client-certificate and client-key go together".into()),
    }
}

/// The cluster of `current-context`, else of the only context, else the
/// only cluster.
fn cluster(config: &Value) -> Result<&Value, String> {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or("").to_string();
    let context_name = context_name(config);
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
    let ca_bundle = pem(cluster, "certificate-authority", base)?.unwrap_or_default();
    let resolved = webhook_client::resolve_url_with_timeout(server, REQUEST_TIMEOUT)?;
    Ok(WebhookTarget {
        resolved,
        ca_bundle,
        client_identity: client_identity(config, base)?,
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
            "users": [{"name": "api", "user": {"client-certificate-data": "Q0VSVA==",
                "client-key-data": "S0VZ"}}],
            "current-context": "webhook",
        });
        let found = target(&config, Path::new(".")).unwrap();
        assert_eq!(found.ca_bundle, b"CA");
        assert_eq!(
            found.client_identity,
            Some((b"CERT".to_vec(), b"KEY".to_vec()))
        );
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
