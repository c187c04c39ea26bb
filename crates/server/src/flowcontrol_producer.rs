//! kube-apiserver's `priority-and-fairness-config-producer` post-start hook
//! (`pkg/registry/flowcontrol/rest/storage_flowcontrol.go` and
//! `pkg/registry/flowcontrol/ensurer`): the bootstrap FlowSchemas and
//! PriorityLevelConfigurations (`flowcontrol/bootstrap.rs`) are created when
//! missing, through the loopback client, then checked again every minute.
//! Mandatory objects always get the bootstrap spec back; a suggested one
//! does when its `apf.kubernetes.io/autoupdate-spec` annotation says `true`
//! (or, without a boolean there, while its generation is still 1), and the
//! annotation is set to whether the spec is kept up to date.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::api::Api;
use crate::controllers::Client;
use crate::flowcontrol::bootstrap::{self, AUTO_UPDATE_ANNOTATION};

pub const POST_START_HOOK: &str = "priority-and-fairness-config-producer";
/// `fieldManager` of the ensurer's writes.
const FIELD_MANAGER: &str = "api-priority-and-fairness-config-producer-v1";
const GROUP_PATH: &str = "/apis/flowcontrol.apiserver.k8s.io/v1";
/// How often the objects are checked again after the first pass.
const RECHECK: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum ProducerError {
    #[error("cannot {verb} {resource} name={name:?}: {message}")]
    Write {
        verb: &'static str,
        resource: &'static str,
        name: String,
        message: String,
    },
    #[error("failed to retrieve {resource} name={name:?}: {message}")]
    Read {
        resource: &'static str,
        name: String,
        message: String,
    },
}

/// `shouldUpdateSpec`.
fn should_update_spec(current: &Value) -> bool {
    match current["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION].as_str() {
        Some("true" | "1" | "t" | "T" | "TRUE" | "True") => true,
        Some("false" | "0" | "f" | "F" | "FALSE" | "False") => false,
        _ => current["metadata"]["generation"].as_i64() == Some(1),
    }
}

/// `ReviseIfNeeded`: the object to write back, if any.
pub fn revise(current: &Value, boot: &Value, mandatory: bool) -> Option<Value> {
    let auto_update = mandatory || should_update_spec(current);
    let annotation = current["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION].as_str();
    let update_annotation = annotation != Some(if auto_update { "true" } else { "false" });
    let spec_changed = auto_update && current["spec"] != boot["spec"];
    if !update_annotation && !spec_changed {
        return None;
    }
    let mut revised = current.clone();
    if spec_changed {
        revised["spec"] = boot["spec"].clone();
    }
    if update_annotation {
        let metadata = &mut revised["metadata"];
        if !metadata["annotations"].is_object() {
            metadata["annotations"] = Value::Object(Default::default());
        }
        metadata["annotations"][AUTO_UPDATE_ANNOTATION] = Value::String(auto_update.to_string());
    }
    Some(revised)
}

/// `ensureConfiguration` for one object.
async fn ensure_one(
    client: &Client,
    resource: &'static str,
    boot: &Value,
    mandatory: bool,
) -> Result<(), ProducerError> {
    let name = boot["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let collection = format!("{GROUP_PATH}/{resource}");
    let path = format!("{collection}/{name}");
    let current = match client.get(&path).await {
        Ok(current) => current,
        Err(error) if error.is_not_found() => {
            return match client
                .create(&format!("{collection}?fieldManager={FIELD_MANAGER}"), boot)
                .await
            {
                Ok(_) => {
                    tracing::debug!(%name, resource, "created APF bootstrap object");
                    Ok(())
                }
                // Another replica created it first: checked on the next pass.
                Err(error) if error.is_already_exists() => Ok(()),
                Err(error) => Err(ProducerError::Write {
                    verb: "create",
                    resource,
                    name,
                    message: error.to_string(),
                }),
            };
        }
        Err(error) => {
            return Err(ProducerError::Read {
                resource,
                name,
                message: error.to_string(),
            })
        }
    };
    let Some(revised) = revise(&current, boot, mandatory) else {
        return Ok(());
    };
    match client
        .update(&format!("{path}?fieldManager={FIELD_MANAGER}"), &revised)
        .await
    {
        Ok(_) => Ok(()),
        // Changed meanwhile: the next pass looks again.
        Err(error) if error.is_conflict() => Ok(()),
        Err(error) => Err(ProducerError::Write {
            verb: "update",
            resource,
            name,
            message: error.to_string(),
        }),
    }
}

/// One pass over every bootstrap object (`ensure`): suggested levels and
/// schemas first, then the mandatory ones, as kube orders them.
pub async fn ensure_once(client: &Client) -> Result<(), ProducerError> {
    const LEVELS: &str = "prioritylevelconfigurations";
    const SCHEMAS: &str = "flowschemas";
    for level in bootstrap::suggested_priority_levels() {
        ensure_one(client, LEVELS, &level, false).await?;
    }
    for schema in bootstrap::suggested_flow_schemas() {
        ensure_one(client, SCHEMAS, &schema, false).await?;
    }
    for level in bootstrap::mandatory_priority_levels() {
        ensure_one(client, LEVELS, &level, true).await?;
    }
    for schema in bootstrap::mandatory_flow_schemas() {
        ensure_one(client, SCHEMAS, &schema, true).await?;
    }
    Ok(())
}

/// The hook: the first pass, retried every second until it succeeds
/// (then the hook is done), then a pass every minute until shutdown.
pub async fn run(api: Arc<Api>) {
    let client = Client::apiserver(api.clone());
    let mut shutdown = api.shutdown_signal();
    loop {
        match ensure_once(&client).await {
            Ok(()) => break,
            Err(error) => {
                tracing::warn!(%error, "APF bootstrap ensurer ran into error, will retry")
            }
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = shutdown.wait_for(|stopping| *stopping) => return,
        }
    }
    api.post_start_hooks.complete(POST_START_HOOK);
    loop {
        tokio::select! {
            () = tokio::time::sleep(RECHECK) => {}
            _ = shutdown.wait_for(|stopping| *stopping) => return,
        }
        if let Err(error) = ensure_once(&client).await {
            tracing::warn!(%error, "APF bootstrap ensurer ran into error, will retry later");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn revise_follows_the_autoupdate_annotation() {
        let boot = bootstrap::suggested_priority_levels().remove(0);
        let mut changed = boot.clone();
        changed["spec"]["limited"]["nominalConcurrencyShares"] = json!(99);
        changed["metadata"]["generation"] = json!(2);
        // Annotated true: the spec goes back.
        let revised = revise(&changed, &boot, false).expect("revised");
        assert_eq!(revised["spec"], boot["spec"]);
        // Annotated false: left alone.
        changed["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION] = json!("false");
        assert!(revise(&changed, &boot, false).is_none());
        // Mandatory: always back, annotation true.
        let revised = revise(&changed, &boot, true).expect("revised");
        assert_eq!(revised["spec"], boot["spec"]);
        assert_eq!(
            revised["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION],
            "true"
        );
        // No annotation, changed by someone (generation 2): annotated false, spec kept.
        changed["metadata"]["annotations"] = json!({});
        let revised = revise(&changed, &boot, false).expect("annotation set");
        assert_eq!(revised["spec"]["limited"]["nominalConcurrencyShares"], 99);
        assert_eq!(
            revised["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION],
            "false"
        );
        // Up to date: nothing to write.
        assert!(revise(&boot, &boot, true).is_none());
    }

    #[tokio::test]
    async fn a_second_pass_writes_nothing() {
        use ferrokube_store::{Backend, LocalBackend, MemoryDisk, Store};
        let backend: Arc<dyn Backend> =
            Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
        let store = Store::open(backend, crate::object::ObjectCodec)
            .await
            .expect("store");
        let key = crate::api::ContinueKey::random().expect("os random source");
        let api = Api::new(store, "127.0.0.1:6443".into(), key);
        let client = Client::apiserver(api.clone());
        ensure_once(&client).await.expect("first pass");
        let path = format!("{GROUP_PATH}/flowschemas");
        let before = client.get(&path).await.expect("list");
        assert_eq!(before["items"].as_array().map(Vec::len), Some(13));
        ensure_once(&client).await.expect("second pass");
        let after = client.get(&path).await.expect("list");
        assert_eq!(
            before["metadata"]["resourceVersion"],
            after["metadata"]["resourceVersion"]
        );
        let levels = client
            .get(&format!("{GROUP_PATH}/prioritylevelconfigurations"))
            .await
            .expect("list");
        assert_eq!(levels["items"].as_array().map(Vec::len), Some(8));
    }
}
