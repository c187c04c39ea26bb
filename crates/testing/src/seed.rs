//! Seeding a server from YAML manifests, as `kubectl apply --server-side` does.

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::Scope;

use crate::error::{Error, Result};
use crate::TestServer;

/// The documents of a YAML stream: split on `---` separator lines, as
/// kubectl's YAML reader does; empty documents are skipped.
fn documents(yaml: &str) -> Vec<String> {
    let mut documents = vec![String::new()];
    for line in yaml.lines() {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed.starts_with("--- ") || trimmed.starts_with("---\t") {
            documents.push(String::new());
            continue;
        }
        if let Some(current) = documents.last_mut() {
            current.push_str(line);
            current.push('\n');
        }
    }
    documents
}

impl TestServer {
    /// Server-side apply every object of a (multi-document) YAML manifest,
    /// in order, with field manager `ferrokube-testing`; namespaced objects
    /// without a namespace go to `default`. Returns the applied objects.
    pub async fn apply_yaml(&self, yaml: &str) -> Result<Vec<DynamicObject>> {
        let params = PatchParams::apply(crate::FIELD_MANAGER).force();
        let mut applied = Vec::new();
        for (index, document) in documents(yaml).iter().enumerate() {
            let yaml_error = |message: String| Error::Yaml { index, message };
            let value = ferrokube::yaml::yaml_to_json(document.as_bytes())
                .map_err(|error| yaml_error(error.to_string()))?;
            if value.is_null() {
                continue;
            }
            let object: DynamicObject =
                serde_json::from_value(value).map_err(|error| yaml_error(error.to_string()))?;
            let types = object
                .types
                .clone()
                .ok_or_else(|| yaml_error("apiVersion and kind are required".into()))?;
            let gvk = GroupVersionKind::try_from(&types)
                .map_err(|error| yaml_error(error.to_string()))?;
            let name = object
                .metadata
                .name
                .clone()
                .ok_or_else(|| yaml_error("metadata.name is required".into()))?;
            let (resource, capabilities) =
                kube::discovery::pinned_kind(&self.client(), &gvk).await?;
            let api: Api<DynamicObject> = match capabilities.scope {
                Scope::Namespaced => {
                    let namespace = object.metadata.namespace.as_deref().unwrap_or("default");
                    Api::namespaced_with(self.client(), namespace, &resource)
                }
                Scope::Cluster => Api::all_with(self.client(), &resource),
            };
            applied.push(api.patch(&name, &params, &Patch::Apply(&object)).await?);
        }
        Ok(applied)
    }
}

#[cfg(test)]
mod tests {
    use super::documents;

    #[test]
    fn splits_on_separator_lines_only() {
        let yaml = "---\na: 1\n---\nb: '---'\n--- # comment\nc: 3\n";
        let documents = documents(yaml);
        assert_eq!(documents, vec!["", "a: 1\n", "b: '---'\n", "c: 3\n"]);
    }
}
