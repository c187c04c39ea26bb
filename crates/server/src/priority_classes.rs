//! kube-apiserver's `scheduling/bootstrap-system-priority-classes`
//! post-start hook (`pkg/registry/scheduling/rest/storage_scheduling.go`
//! `AddSystemPriorityClasses`, the classes of `pkg/apis/scheduling`
//! `systemPriorityClasses`): `system-node-critical` and
//! `system-cluster-critical` are created through the loopback client when
//! missing; existing ones are left as they are.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::api::Api;
use crate::controllers::Client;

pub const POST_START_HOOK: &str = "scheduling/bootstrap-system-priority-classes";
const PATH: &str = "/apis/scheduling.k8s.io/v1/priorityclasses";
/// `SystemCriticalPriority`.
const SYSTEM_CRITICAL_PRIORITY: i64 = 2_000_000_000;
/// kube polls every second for 30 seconds before it gives up.
const ATTEMPTS: usize = 30;

/// `SystemPriorityClasses()`, in kube's order.
fn system_priority_classes() -> [Value; 2] {
    let class = |name: &str, value: i64, description: &str| {
        json!({
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "description": description,
        })
    };
    [
        class(
            "system-node-critical",
            SYSTEM_CRITICAL_PRIORITY + 1000,
            "Used for system critical pods that must not be moved from their current node.",
        ),
        class(
            "system-cluster-critical",
            SYSTEM_CRITICAL_PRIORITY,
            "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
        ),
    ]
}

#[derive(Debug, thiserror::Error)]
pub enum PriorityClassError {
    #[error("unable to add default system priority classes: {0}")]
    GaveUp(String),
}

/// One pass: get each class, create it when missing. `Ok(false)` asks for
/// another pass (kube's `return false, nil`).
async fn ensure_once(client: &Client) -> Result<bool, String> {
    for class in system_priority_classes() {
        let name = class["metadata"]["name"].as_str().unwrap_or_default();
        match client.get(&format!("{PATH}/{name}")).await {
            Ok(_) => continue,
            Err(error) if error.is_not_found() => match client.create(PATH, &class).await {
                Ok(_) => tracing::info!(%name, "created PriorityClass"),
                Err(error) if error.is_already_exists() => {}
                Err(error) if error.code == 503 => return Ok(false),
                Err(error) => return Err(error.to_string()),
            },
            Err(error) => {
                tracing::warn!(%name, %error, "unable to get PriorityClass, retrying");
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// The hook: done once both classes exist.
pub async fn ensure_system_priority_classes(api: &Arc<Api>) -> Result<(), PriorityClassError> {
    let client = Client::apiserver(api.clone());
    let mut last = String::from("timed out waiting for the condition");
    for _ in 0..ATTEMPTS {
        match ensure_once(&client).await {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(error) => last = error,
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Err(PriorityClassError::GaveUp(last))
}
