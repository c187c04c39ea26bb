//! kube-apiserver's APF configuration controller (`apf_controller.go`,
//! the `priority-and-fairness-config-consumer`): the FlowSchemas and
//! PriorityLevelConfigurations the store holds become the configuration
//! requests are classified against, re-digested whenever one of them
//! changes (the store's change marks, no polling), and each FlowSchema's
//! `Dangling` condition is written as kube writes it (server-side apply of
//! `status` by `api-priority-and-fairness-config-consumer-v1`).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::api::Api;
use crate::controllers::Client;
use crate::flowcontrol::{bootstrap, Config, FlowControl};

/// etcd keys of the two kinds.
pub const FLOW_SCHEMAS_PREFIX: &str = "/registry/flowschemas/";
pub const PRIORITY_LEVELS_PREFIX: &str = "/registry/prioritylevelconfigurations/";
const FIELD_MANAGER: &str = "api-priority-and-fairness-config-consumer-v1";

fn objects(snapshot: &crate::object::feed::ObjectSnapshot, prefix: &str) -> Vec<Value> {
    snapshot
        .range(prefix, None)
        .filter_map(|(_, entry)| entry.object.value())
        .collect()
}

/// The `Dangling` condition a FlowSchema should carry (`presyncFlowSchemaStatus`):
/// `None` when it carries it already.
pub fn dangling_condition(schema: &Value, dangling: bool) -> Option<Value> {
    let level = schema["spec"]["priorityLevelConfiguration"]["name"]
        .as_str()
        .unwrap_or_default();
    let (status, reason, message) = if dangling {
        (
            "True",
            "NotFound",
            format!("This FlowSchema references the PriorityLevelConfiguration object named {level:?} but there is no such object"),
        )
    } else {
        (
            "False",
            "Found",
            format!("This FlowSchema references the PriorityLevelConfiguration object named {level:?} and it exists"),
        )
    };
    let current = schema["status"]["conditions"]
        .as_array()
        .and_then(|conditions| {
            conditions
                .iter()
                .find(|condition| condition["type"] == "Dangling")
        });
    if let Some(current) = current {
        if current["status"] == status
            && current["reason"] == reason
            && current["message"] == message.as_str()
        {
            return None;
        }
    }
    Some(json!({
        "type": "Dangling",
        "status": status,
        "lastTransitionTime": crate::go::time::now_rfc3339(),
        "reason": reason,
        "message": message,
    }))
}

/// Digests what the store holds now; the FlowSchemas whose status needs writing.
fn digest(
    flow_control: &FlowControl,
    snapshot: &crate::object::feed::ObjectSnapshot,
) -> Vec<(String, Value)> {
    let schemas = objects(snapshot, FLOW_SCHEMAS_PREFIX);
    let levels = objects(snapshot, PRIORITY_LEVELS_PREFIX);
    let config: Arc<Config> = flow_control.configure(&schemas, &levels);
    let level_names: Vec<&str> = levels
        .iter()
        .filter_map(|level| level["metadata"]["name"].as_str())
        .collect();
    schemas
        .iter()
        .filter_map(|schema| {
            let name = schema["metadata"]["name"].as_str()?.to_string();
            let level = schema["spec"]["priorityLevelConfiguration"]["name"]
                .as_str()
                .unwrap_or_default();
            // A mandatory level that is not stored yet is imagined: not dangling.
            let dangling = config.dangling.contains(&name)
                || !(level_names.contains(&level)
                    || level == bootstrap::EXEMPT
                    || level == bootstrap::CATCH_ALL);
            dangling_condition(schema, dangling).map(|condition| (name, condition))
        })
        .collect()
}

async fn write_status(client: &Client, name: &str, condition: Value) {
    let body = json!({
        "apiVersion": bootstrap::API_VERSION,
        "kind": "FlowSchema",
        "metadata": {"name": name},
        "status": {"conditions": [condition]},
    });
    let path = format!("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/{name}/status");
    if let Err(error) = client.apply(&path, FIELD_MANAGER, true, &body).await {
        if !error.is_not_found() {
            tracing::warn!(%name, %error, "writing the FlowSchema's Dangling condition");
        }
    }
}

/// Follows the store until shutdown.
pub async fn run(api: Arc<Api>, flow_control: Arc<FlowControl>) {
    let store = api.store.clone();
    let mut wake = store.subscribe();
    let changes = store.prefix_mark(&[FLOW_SCHEMAS_PREFIX, PRIORITY_LEVELS_PREFIX]);
    let mut shutdown = api.shutdown_signal();
    let client = Client::apiserver(api.clone());
    let mut applied = -1;
    loop {
        if changes.last_change() > applied || applied < 0 {
            let snapshot = store.snapshot();
            applied = snapshot.revision;
            let writes = digest(&flow_control, &snapshot);
            // Status writes change the objects again; the next digest finds
            // their conditions current and writes nothing.
            for (name, condition) in writes {
                write_status(&client, &name, condition).await;
            }
        }
        tokio::select! {
            changed = wake.changed() => if changed.is_err() { return },
            _ = shutdown.wait_for(|stopping| *stopping) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dangling_condition_is_written_once_per_change() {
        let mut schema = json!({"metadata": {"name": "s"}, "spec": {"priorityLevelConfiguration": {"name": "gone"}}});
        let condition = dangling_condition(&schema, true).expect("new condition");
        assert_eq!(condition["status"], "True");
        assert_eq!(condition["reason"], "NotFound");
        assert_eq!(
            condition["message"],
            "This FlowSchema references the PriorityLevelConfiguration object named \"gone\" but there is no such object"
        );
        schema["status"] = json!({"conditions": [condition]});
        assert!(dangling_condition(&schema, true).is_none());
        let found = dangling_condition(&schema, false).expect("changed");
        assert_eq!(found["reason"], "Found");
        assert_eq!(
            found["message"],
            "This FlowSchema references the PriorityLevelConfiguration object named \"gone\" and it exists"
        );
    }
}
