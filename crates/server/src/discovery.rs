//! Discovery documents: `/api`, `/apis`, `/apis/GROUP`, `/api/v1`,
//! `/apis/GROUP/VERSION` and aggregated discovery (`apidiscovery.k8s.io`
//! v2 and v2beta1), built once from the resource table.
//! Shapes follow `staging/src/k8s.io/apiserver/pkg/endpoints/discovery`.

use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::registry::{Registry, ResourceDef};

/// `discovery.StorageVersionHash`.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = Sha256::digest(format!("{group}/{version}/{kind}").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

fn group_versions_json(group: &str, versions: &[&str]) -> Value {
    json!(versions
        .iter()
        .map(|version| json!({"groupVersion": group_version(group, version), "version": version}))
        .collect::<Vec<_>>())
}

/// `/api`: `APIVersions`.
pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]
    })
}

fn api_group(registry: &Registry, name: &str) -> Option<Value> {
    let info = registry.group(name)?;
    Some(json!({
        "name": name,
        "versions": group_versions_json(name, &info.versions),
        "preferredVersion": {"groupVersion": group_version(name, info.preferred()), "version": info.preferred()}
    }))
}

/// `/apis`: `APIGroupList` (every group but the core one).
pub fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry
        .groups()
        .iter()
        .filter(|group| !group.name.is_empty())
        .filter_map(|group| api_group(registry, group.name))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/GROUP`: `APIGroup`.
pub fn group(registry: &Registry, name: &str) -> Option<Value> {
    let mut body = api_group(registry, name)?;
    if let Some(map) = body.as_object_mut() {
        map.insert("kind".into(), json!("APIGroup"));
        map.insert("apiVersion".into(), json!("v1"));
    }
    Some(body)
}

fn api_resource(registry: &Registry, resource: &ResourceDef) -> Value {
    let mut entry = json!({
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": resource.verbs,
    });
    if let Some(map) = entry.as_object_mut() {
        if !resource.short_names.is_empty() {
            map.insert("shortNames".into(), json!(resource.short_names));
        }
        if !resource.categories.is_empty() {
            map.insert("categories".into(), json!(resource.categories));
        }
        if !resource.storage.is_empty() {
            map.insert(
                "storageVersionHash".into(),
                json!(storage_version_hash(
                    resource.group,
                    // Custom resources hash their storage version (the
                    // discovery controller's `storageVersionHash`).
                    registry
                        .custom(resource)
                        .map_or(resource.version, |custom| custom.storage_version.as_str()),
                    resource.kind
                )),
            );
        }
    }
    entry
}

/// `/api/v1`, `/apis/GROUP/VERSION`: `APIResourceList`.
pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    if !registry.serves_version(group, version) {
        return None;
    }
    let mut resources = Vec::new();
    for resource in registry.in_group_version(group, version) {
        resources.push(api_resource(registry, resource));
        for sub in resource.subresources {
            let mut entry = json!({
                "name": format!("{}/{}", resource.plural, sub.name),
                "singularName": "",
                "namespaced": resource.namespaced,
                "kind": sub.kind,
                "verbs": sub.verbs,
            });
            if (sub.group, sub.version) != (resource.group, resource.version) {
                if let Some(map) = entry.as_object_mut() {
                    map.insert("group".into(), json!(sub.group));
                    map.insert("version".into(), json!(sub.version));
                }
            }
            resources.push(entry);
        }
    }
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version(group, version),
        "resources": resources
    }))
}

fn discovery_resource(resource: &ResourceDef) -> Value {
    let mut entry = json!({
        "resource": resource.plural,
        "responseKind": {"group": resource.group, "version": resource.version, "kind": resource.kind},
        "scope": if resource.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": resource.singular,
        "verbs": resource.verbs,
    });
    if let Some(map) = entry.as_object_mut() {
        if !resource.short_names.is_empty() {
            map.insert("shortNames".into(), json!(resource.short_names));
        }
        if !resource.categories.is_empty() {
            map.insert("categories".into(), json!(resource.categories));
        }
        if !resource.subresources.is_empty() {
            let subresources: Vec<Value> = resource
                .subresources
                .iter()
                .map(|sub| {
                    json!({
                        "subresource": sub.name,
                        "responseKind": {"group": sub.group, "version": sub.version, "kind": sub.kind},
                        "verbs": sub.verbs,
                    })
                })
                .collect();
            map.insert("subresources".into(), json!(subresources));
        }
    }
    entry
}

fn discovery_group(registry: &Registry, name: &str) -> Option<Value> {
    let info = registry.group(name)?;
    let versions: Vec<Value> = info
        .versions
        .iter()
        .map(|version| {
            let resources: Vec<Value> = registry
                .in_group_version(name, version)
                .map(discovery_resource)
                .collect();
            json!({"version": version, "resources": resources, "freshness": "Current"})
        })
        .collect();
    let metadata = if name.is_empty() {
        json!({"creationTimestamp": null})
    } else {
        json!({"name": name, "creationTimestamp": null})
    };
    Some(json!({"metadata": metadata, "versions": versions}))
}

/// Aggregated discovery for `/api` (`core == true`) or `/apis`:
/// `APIGroupDiscoveryList` in `apidiscovery.k8s.io/<api_version>`.
pub fn aggregated(registry: &Registry, core: bool, api_version: &str) -> Value {
    let items: Vec<Value> = registry
        .groups()
        .iter()
        .filter(|group| group.name.is_empty() == core)
        .filter_map(|group| discovery_group(registry, group.name))
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{api_version}"),
        "metadata": {},
        "items": items
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtin_resources;

    #[test]
    fn storage_version_hash_matches_kube() {
        // kube-apiserver reports this hash for configmaps and deployments.
        assert_eq!(storage_version_hash("", "v1", "ConfigMap"), "qFsyl6wFWjQ=");
        assert_eq!(
            storage_version_hash("apps", "v1", "Deployment"),
            "8aSe+NMegvE="
        );
    }

    #[test]
    fn documents_have_kube_shapes() {
        let registry = Registry::new(builtin_resources());
        let core = resource_list(&registry, "", "v1").expect("core v1");
        assert_eq!(core["groupVersion"], "v1");
        let configmaps = core["resources"]
            .as_array()
            .and_then(|all| all.iter().find(|entry| entry["name"] == "configmaps"))
            .expect("configmaps listed");
        assert_eq!(configmaps["shortNames"], json!(["cm"]));
        let apps = resource_list(&registry, "apps", "v1").expect("apps/v1");
        let scale = apps["resources"]
            .as_array()
            .and_then(|all| {
                all.iter()
                    .find(|entry| entry["name"] == "deployments/scale")
            })
            .expect("scale listed");
        assert_eq!(
            (scale["group"].as_str(), scale["kind"].as_str()),
            (Some("autoscaling"), Some("Scale"))
        );
        assert!(resource_list(&registry, "apps", "v9").is_none());
        let groups = group_list(&registry);
        assert!(groups["groups"]
            .as_array()
            .is_some_and(|all| all.iter().all(|g| g["name"] != "")));
        let aggregated_core = aggregated(&registry, true, "v2");
        assert_eq!(aggregated_core["items"].as_array().map(Vec::len), Some(1));
        assert_eq!(aggregated_core["items"][0]["versions"][0]["version"], "v1");
    }
}
