//! OpenAPI documents as kube-apiserver 1.34 serves them: `/openapi/v2`,
//! the `/openapi/v3` index and one `/openapi/v3/<path>` document per group
//! version (and discovery root), plus schema lookups for validation.
//!
//! Everything is built from the vendored definitions
//! (`crates/server/data/openapi-v1.34-definitions.json`, see
//! `scripts/vendor-openapi.py`) and the resource table, lazily on first use,
//! and cached for the life of the process. Hashes and ETags follow kube-openapi
//! `pkg/handler` / `pkg/handler3`: upper-case hex SHA-512 of the JSON body,
//! the ETag being that hash in double quotes.

mod custom_paths;
mod custom_schema;
mod definitions;
mod document;
mod params;
mod paths;
mod resources;
mod served;
mod v2;
pub mod v2_protobuf;
mod v3;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::registry::ResourceDef;
pub(crate) use definitions::{Definitions, V2_REF_PREFIX};
pub use document::Document;
use document::{cached, Cached};
use paths::Routes;
use served::CustomDocs;

/// `info.version` of every document (kube sets the server's git version).
pub const KUBE_VERSION: &str = "v1.34.0";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenApiError {
    /// The vendored definitions file does not parse (a build problem, not a request one).
    #[error("vendored OpenAPI definitions are invalid: {0}")]
    Definitions(String),
    #[error("serializing OpenAPI document failed: {0}")]
    Serialize(String),
}

/// The vendored definitions, parsed once per process on first use.
pub(crate) fn definitions() -> Result<&'static Definitions, OpenApiError> {
    static DEFINITIONS: OnceLock<Result<Definitions, OpenApiError>> = OnceLock::new();
    DEFINITIONS
        .get_or_init(Definitions::load)
        .as_ref()
        .map_err(Clone::clone)
}

/// OpenAPI documents for one resource table. Construction is free; each
/// document is built on first request and cached. The `*_served` methods
/// (`served.rs`) add the custom resources of a registry snapshot.
pub struct OpenApi {
    resources: &'static [ResourceDef],
    routes: OnceLock<Routes>,
    v2: Cached,
    v2_protobuf: Cached,
    v3_index: Cached,
    v3: OnceLock<BTreeMap<String, Cached>>,
    /// The custom resources' part of the documents, for the last registry
    /// snapshot asked about.
    custom: Mutex<Option<Arc<CustomDocs>>>,
}

impl std::fmt::Debug for OpenApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenApi")
            .field("resources", &self.resources.len())
            .finish_non_exhaustive()
    }
}

impl OpenApi {
    /// Documents for `resources` (normally `crate::registry::builtin_resources()`); builds nothing yet.
    pub fn new(resources: &'static [ResourceDef]) -> Self {
        OpenApi {
            resources,
            routes: OnceLock::new(),
            v2: OnceLock::new(),
            v2_protobuf: OnceLock::new(),
            v3_index: OnceLock::new(),
            v3: OnceLock::new(),
            custom: Mutex::new(None),
        }
    }

    fn routes(&self) -> Result<&Routes, OpenApiError> {
        let defs = definitions()?;
        Ok(self
            .routes
            .get_or_init(|| paths::build(self.resources, defs)))
    }

    /// `/openapi/v2`.
    pub fn v2(&self) -> Result<&Document, OpenApiError> {
        cached(&self.v2, || {
            let routes = self.routes()?;
            Document::from_value(&v2::document(routes, definitions()?))
        })
    }

    /// `/openapi/v2` as the gnostic `openapi.v2.Document` protobuf
    /// (`Accept: application/com.github.proto-openapi.spec.v2[@.]v1.0+protobuf`),
    /// converted from the JSON document as kube-openapi does; `json` holds the
    /// protobuf bytes, `etag`/`hash` are the JSON document's (kube reuses them).
    pub fn v2_protobuf(&self) -> Result<&Document, OpenApiError> {
        cached(&self.v2_protobuf, || v2_protobuf::document(self.v2()?))
    }

    /// `/openapi/v3`: the index of every v3 document with its `?hash=`.
    pub fn v3_index(&self) -> Result<&Document, OpenApiError> {
        cached(&self.v3_index, || {
            let keys: Vec<&str> = self.routes()?.keys().map(String::as_str).collect();
            let mut entries = Vec::with_capacity(keys.len());
            for key in keys {
                if let Some(doc) = self.v3_group_version(key)? {
                    entries.push((key, doc.hash.as_str()));
                }
            }
            Document::from_value(&v3::index(entries))
        })
    }

    /// `/openapi/v3/<gv_path>`: `gv_path` is an index key such as `api/v1`,
    /// `apis/apps/v1`, `apis/apps`, `api`, `apis` or `version`; `None` when not served.
    pub fn v3_group_version(&self, gv_path: &str) -> Result<Option<&Document>, OpenApiError> {
        let routes = self.routes()?;
        let slots = self.v3.get_or_init(|| {
            routes
                .keys()
                .map(|key| (key.clone(), OnceLock::new()))
                .collect()
        });
        let (Some(slot), Some(items)) = (slots.get(gv_path), routes.get(gv_path)) else {
            return Ok(None);
        };
        cached(slot, || {
            Document::from_value(&v3::document(gv_path, items, definitions()?))
        })
        .map(Some)
    }

    /// The v2 schema (refs to `#/definitions/...`) of the definition carrying
    /// this group/version/kind, vendored or not served alike.
    pub fn schema_for_kind(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Option<&Value>, OpenApiError> {
        let defs = definitions()?;
        Ok(defs
            .name_for_gvk(group, version, kind)
            .and_then(|name| defs.get(name)))
    }

    /// A definition by OpenAPI name (`io.k8s.api.core.v1.Container`), v2 form.
    pub fn definition(&self, name: &str) -> Result<Option<&Value>, OpenApiError> {
        Ok(definitions()?.get(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{NameRule, SubresourceDef};

    const ALL: &[&str] = &[
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    const STATUS: &[&str] = &["get", "patch", "update"];

    const fn res(
        group: &'static str,
        kind: &'static str,
        plural: &'static str,
        namespaced: bool,
        subresources: &'static [SubresourceDef],
    ) -> ResourceDef {
        ResourceDef {
            group,
            version: "v1",
            kind,
            plural,
            singular: "",
            namespaced,
            verbs: ALL,
            short_names: &[],
            categories: &[],
            subresources,
            storage: plural,
            name_rule: NameRule::Dns1123Subdomain,
            create_on_update: false,
            has_generation: false,
            returns_deleted_object: false,
            custom: false,
        }
    }

    static TABLE: &[ResourceDef] = &[
        res("", "ConfigMap", "configmaps", true, &[]),
        res(
            "",
            "Namespace",
            "namespaces",
            false,
            &[
                SubresourceDef {
                    name: "finalize",
                    group: "",
                    version: "v1",
                    kind: "Namespace",
                    verbs: &["update"],
                },
                SubresourceDef {
                    name: "status",
                    group: "",
                    version: "v1",
                    kind: "Namespace",
                    verbs: STATUS,
                },
            ],
        ),
        ResourceDef {
            returns_deleted_object: true,
            custom: false,
            ..res(
                "",
                "Pod",
                "pods",
                true,
                &[
                    SubresourceDef {
                        name: "binding",
                        group: "",
                        version: "v1",
                        kind: "Binding",
                        verbs: &["create"],
                    },
                    SubresourceDef {
                        name: "exec",
                        group: "",
                        version: "v1",
                        kind: "PodExecOptions",
                        verbs: &["create", "get"],
                    },
                    SubresourceDef {
                        name: "log",
                        group: "",
                        version: "v1",
                        kind: "Pod",
                        verbs: &["get"],
                    },
                    SubresourceDef {
                        name: "proxy",
                        group: "",
                        version: "v1",
                        kind: "PodProxyOptions",
                        verbs: &["create", "delete", "get", "patch", "update"],
                    },
                ],
            )
        },
        res(
            "apps",
            "Deployment",
            "deployments",
            true,
            &[
                SubresourceDef {
                    name: "scale",
                    group: "autoscaling",
                    version: "v1",
                    kind: "Scale",
                    verbs: STATUS,
                },
                SubresourceDef {
                    name: "status",
                    group: "apps",
                    version: "v1",
                    kind: "Deployment",
                    verbs: STATUS,
                },
            ],
        ),
        res(
            "rbac.authorization.k8s.io",
            "ClusterRole",
            "clusterroles",
            false,
            &[],
        ),
    ];

    fn api() -> OpenApi {
        OpenApi::new(TABLE)
    }

    fn parse(doc: &Document) -> Value {
        serde_json::from_slice(&doc.json).expect("document is JSON")
    }

    fn param_names(list: &Value) -> Vec<String> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["name"].as_str().map(str::to_string))
            .collect()
    }

    #[test]
    fn v2_has_patch_with_field_validation() {
        let api = api();
        let doc = parse(api.v2().expect("v2"));
        assert_eq!(doc["swagger"], "2.0");
        assert_eq!(
            doc["info"],
            serde_json::json!({ "title": "Kubernetes", "version": KUBE_VERSION })
        );
        let item = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
        let patch = &item["patch"];
        assert_eq!(patch["operationId"], "patchAppsV1NamespacedDeployment");
        assert_eq!(patch["x-kubernetes-action"], "patch");
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            serde_json::json!({ "group": "apps", "kind": "Deployment", "version": "v1" })
        );
        assert!(param_names(&patch["parameters"]).contains(&"fieldValidation".to_string()));
        assert!(param_names(&patch["parameters"]).contains(&"dryRun".to_string()));
        let refs: Vec<&str> = patch["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["$ref"].as_str())
            .collect();
        assert!(refs.contains(&"#/parameters/force-tOGGb0Yi"));
        assert!(doc["parameters"]["force-tOGGb0Yi"].is_object());
        assert_eq!(patch["consumes"][0], "application/json-patch+json");
        assert_eq!(item["get"]["operationId"], "readAppsV1NamespacedDeployment");
        assert_eq!(item["put"]["x-kubernetes-action"], "put");
        assert_eq!(
            item["delete"]["responses"]["200"]["schema"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status"
        );
        // Path-level parameters are those every operation shares.
        assert_eq!(item["parameters"][0]["name"], "name");
        assert_eq!(
            item["parameters"][1]["$ref"],
            "#/parameters/namespace-vgWSWtn3"
        );

        let list = &doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["get"];
        assert_eq!(list["operationId"], "listCoreV1NamespacedConfigMap");
        assert_eq!(
            list["description"],
            "list or watch objects of kind ConfigMap"
        );
        assert_eq!(
            list["responses"]["200"]["schema"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.ConfigMapList"
        );
        assert_eq!(
            doc["paths"]["/api/v1/configmaps"]["get"]["operationId"],
            "listCoreV1ConfigMapForAllNamespaces"
        );
        assert_eq!(
            doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["delete"]["operationId"],
            "deleteCoreV1CollectionNamespacedConfigMap"
        );
        assert_eq!(
            doc["paths"]["/api/v1/watch/namespaces/{namespace}/configmaps"]["get"]
                ["x-kubernetes-action"],
            "watchlist"
        );
        assert_eq!(
            doc["paths"]["/api/v1/namespaces/{name}/finalize"]["put"]["operationId"],
            "replaceCoreV1NamespaceFinalize"
        );
        assert_eq!(
            doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["delete"]["responses"]
                ["200"]["schema"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.Pod"
        );
        assert_eq!(
            doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/exec"]["post"]["operationId"],
            "connectCoreV1PostNamespacedPodExec"
        );
        assert_eq!(
            doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}"]["head"]
                ["operationId"],
            "connectCoreV1HeadNamespacedPodProxyWithPath"
        );
        assert_eq!(
            doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/binding"]["post"]
                ["description"],
            "create binding of a Pod"
        );
        assert_eq!(
            doc["paths"]["/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}"]["get"]
                ["operationId"],
            "readRbacAuthorizationV1ClusterRole"
        );
        let scale =
            &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["get"];
        assert_eq!(scale["operationId"], "readAppsV1NamespacedDeploymentScale");
        assert_eq!(
            scale["x-kubernetes-group-version-kind"]["group"],
            "autoscaling"
        );
        assert_eq!(
            scale["responses"]["200"]["schema"]["$ref"],
            "#/definitions/io.k8s.api.autoscaling.v1.Scale"
        );

        // Definitions: reachable ones, list kinds included, all refs resolve.
        let defs = doc["definitions"].as_object().expect("definitions");
        assert!(defs.contains_key("io.k8s.api.apps.v1.DeploymentList"));
        assert!(defs.contains_key("io.k8s.api.core.v1.Container"));
        let mut dangling = Vec::new();
        definitions::collect_refs(&doc, &mut |name| {
            if !defs.contains_key(name) && doc["parameters"].get(name).is_none() {
                dangling.push(name.to_string());
            }
        });
        assert!(dangling.is_empty(), "dangling: {dangling:?}");
        assert!(!String::from_utf8_lossy(&api.v2().expect("v2").json).contains("#/$defs"));
    }

    #[test]
    fn v3_apps_doc_is_self_contained_and_satisfies_kubectl() {
        let api = api();
        let doc_ref = api
            .v3_group_version("apis/apps/v1")
            .expect("build")
            .expect("served");
        let doc = parse(doc_ref);
        assert_eq!(doc["openapi"], "3.0.0");
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        let mut dangling = Vec::new();
        definitions::collect_refs(&doc, &mut |name| {
            if !schemas.contains_key(name) {
                dangling.push(name.to_string());
            }
        });
        assert!(dangling.is_empty(), "dangling: {dangling:?}");
        let text = String::from_utf8_lossy(&doc_ref.json);
        assert!(!text.contains("#/definitions/") && !text.contains("#/$defs"));
        assert!(schemas.contains_key("io.k8s.api.autoscaling.v1.Scale"));
        assert!(!schemas.contains_key("io.k8s.api.core.v1.ConfigMap"));

        // kubectl `supportsQueryParamV3`: every PATCH carrying the GVK lists the parameter.
        let gvk = serde_json::json!({ "group": "apps", "kind": "Deployment", "version": "v1" });
        let mut patches = 0;
        for (_, item) in doc["paths"].as_object().expect("paths") {
            let patch = &item["patch"];
            if patch.is_object() && patch["x-kubernetes-group-version-kind"] == gvk {
                patches += 1;
                let names = param_names(&patch["parameters"]);
                assert!(
                    names.contains(&"fieldValidation".to_string())
                        && names.contains(&"dryRun".to_string())
                );
            }
        }
        assert_eq!(patches, 2, "deployment and deployment/status");

        // kubectl explain (v2 templates): GVK from the resource path, then the schema
        // carrying it, then properties through allOf/$ref/items.
        let op_gvk = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]["get"]
            ["x-kubernetes-group-version-kind"];
        assert_eq!(op_gvk, &gvk);
        let deployment = schemas
            .values()
            .find(|s| {
                s["x-kubernetes-group-version-kind"]
                    .as_array()
                    .is_some_and(|l| l.contains(op_gvk))
            })
            .expect("schema with GVK");
        let resolve = |schema: &Value| -> Value {
            let mut current = schema.clone();
            loop {
                if let Some(target) = current["$ref"].as_str() {
                    let name = target.trim_start_matches(v3::V3_REF_PREFIX);
                    current = schemas[name].clone();
                } else if current["properties"].is_null() && current["allOf"][0].is_object() {
                    current = current["allOf"][0].clone();
                } else if current["properties"].is_null() && current["items"].is_object() {
                    current = current["items"].clone();
                } else {
                    return current;
                }
            }
        };
        let mut current = deployment.clone();
        for field in ["spec", "template", "spec", "containers"] {
            let next = resolve(&current)["properties"][field].clone();
            assert!(next.is_object(), "field {field}");
            current = next;
        }
        assert_eq!(current["type"], "array");
        assert_eq!(current["x-kubernetes-patch-merge-key"], "name");
        let container = resolve(&current);
        assert!(container["properties"]["image"].is_object());
        assert_eq!(
            deployment["properties"]["metadata"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        let ios = &schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"];
        assert_eq!(ios["format"], "int-or-string");
        assert!(ios["oneOf"].is_array());
    }

    #[test]
    fn v3_index_lists_docs_with_matching_hashes() {
        let api = api();
        let index = parse(api.v3_index().expect("index"));
        let paths = index["paths"].as_object().expect("paths");
        for key in [
            "api",
            "api/v1",
            "apis",
            "apis/apps",
            "apis/apps/v1",
            "apis/rbac.authorization.k8s.io/v1",
            "version",
            ".well-known/openid-configuration",
        ] {
            let doc = api.v3_group_version(key).expect("build").expect(key);
            assert_eq!(
                paths[key]["serverRelativeURL"],
                format!("/openapi/v3/{key}?hash={}", doc.hash),
                "{key}"
            );
            assert_eq!(doc.etag, format!("\"{}\"", doc.hash));
            assert_eq!(doc.hash.len(), 128);
            assert!(doc
                .hash
                .chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()));
        }
        assert!(api
            .v3_group_version("apis/batch/v1")
            .expect("build")
            .is_none());
        let core = parse(
            api.v3_group_version("api/v1")
                .expect("build")
                .expect("core"),
        );
        assert_eq!(
            core["paths"]["/api/v1/"]["get"]["operationId"],
            "getCoreV1APIResources"
        );
        let group = parse(
            api.v3_group_version("apis/apps")
                .expect("build")
                .expect("group"),
        );
        assert_eq!(
            group["paths"]["/apis/apps/"]["get"]["operationId"],
            "getAppsAPIGroup"
        );
    }

    #[test]
    fn documents_are_stable() {
        let first = api();
        let second = api();
        assert_eq!(first.v2().expect("v2").etag, second.v2().expect("v2").etag);
        assert_eq!(first.v2().expect("v2").etag, first.v2().expect("v2").etag);
        assert_eq!(
            first.v3_index().expect("index"),
            second.v3_index().expect("index")
        );
        let a = first
            .v3_group_version("apis/apps/v1")
            .expect("build")
            .expect("doc");
        let b = second
            .v3_group_version("apis/apps/v1")
            .expect("build")
            .expect("doc");
        assert_eq!(a.etag, b.etag);
        assert_eq!(a.json, b.json);
    }

    #[test]
    fn schema_lookups() {
        let api = api();
        let schema = api
            .schema_for_kind("apps", "v1", "Deployment")
            .expect("defs")
            .expect("Deployment");
        assert_eq!(
            schema["properties"]["spec"]["$ref"],
            "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"
        );
        // Kinds outside the resource table are still available for validation.
        assert!(api
            .schema_for_kind("batch", "v1", "Job")
            .expect("defs")
            .is_some());
        assert!(api
            .schema_for_kind("apps", "v1", "Nope")
            .expect("defs")
            .is_none());
        assert!(api
            .definition("io.k8s.api.core.v1.Container")
            .expect("defs")
            .is_some());
    }

    #[test]
    fn construction_is_lazy() {
        fn shareable<T: Send + Sync>() {}
        shareable::<OpenApi>();
        let api = OpenApi::new(crate::registry::builtin_resources());
        assert!(api.routes.get().is_none() && api.v2.get().is_none());
    }
}
